"""``settlement.money_scale`` (issue 50): money in finer integer units, so the dealer's compensation can be a
fraction of a base unit. Every payment of the rules is scaled, the compensation is paid as written, play is the
same tile for tile (the bots, the expert included, value money in base units), and everything the analysis,
sessions and designs read is back in base units."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis.load import MONEY_COLUMNS, open_run
from simulator.hands import play_hands
from simulator.hands.sessions import money
from simulator.rules import RulesError, load_rules, log_bounds

SCALE, COMP = "settlement.money_scale", "settlement.dealer_compensation"
EXPERTS = "seats=[expert, expert, expert, expert]"
PLAY = ("won", "win_order", "win_turn", "hand_type", "fan", "capped_fan", "n_kongs", "huazhu", "declined_wins")


@pytest.fixture(scope="module")
def three_ways():
    """40 hands of four experts: at scale 1, at scale 100, and at scale 100 with a compensation of 9 units."""
    ids = np.arange(40, dtype=np.int64)
    plain = play_hands(load_rules("chengdu", [EXPERTS]), ids, 3)
    scaled = play_hands(load_rules("chengdu", [EXPERTS, f"{SCALE}=100"]), ids, 3)
    comp = play_hands(load_rules("chengdu", [EXPERTS, f"{SCALE}=100", f"{COMP}=9"]), ids, 3)
    return ids, plain, scaled, comp


def test_every_payment_is_scaled_and_play_is_the_same(three_ways):
    ids, plain, scaled, comp = three_ways
    for col in MONEY_COLUMNS:
        assert np.array_equal(np.asarray(scaled["players"][col], np.int64),
                              100 * np.asarray(plain["players"][col], np.int64)), col
    assert np.abs(np.asarray(plain["players"]["score_total"])).sum() > 0  # money moved at all
    for col in PLAY:
        assert np.array_equal(scaled["players"][col], plain["players"][col]), col
        assert np.array_equal(comp["players"][col], plain["players"][col]), col  # the expert ignores a sunk payment
    assert np.array_equal(scaled["wins"]["points"], plain["wins"]["points"])  # the wins table stays in base units


def test_the_compensation_is_paid_in_money_units(three_ways):
    ids, plain, scaled, comp = three_ways
    dealer = (np.repeat(ids, 4) % 4) == np.tile(np.arange(4), len(ids))
    moved = np.asarray(comp["players"]["score_transfer"], np.int64) - scaled["players"]["score_transfer"]
    assert (moved[dealer] == -27).all() and (moved[~dealer] == 9).all()  # 0.09 base units to each other player
    assert (np.asarray(comp["players"]["score_total"]).reshape(-1, 4).sum(axis=1) == 0).all()


def test_at_the_default_nothing_is_recorded_and_the_bound_scales():
    base = load_rules("chengdu")
    assert "money_scale" not in base.resolved()["settlement"]
    assert load_rules("chengdu", [f"{SCALE}=1"]).digest() == base.digest()
    assert log_bounds(load_rules("chengdu", [f"{SCALE}=1000"]))[1] == 1000 * log_bounds(base)[1]
    for bad in ("0", "1001", "1.5"):
        with pytest.raises(RulesError, match="settlement.money_scale"):
            load_rules("chengdu", [f"{SCALE}={bad}"])
    with pytest.raises(RulesError, match="money_scale"):  # the int32 logs: an uncapped 血流 at 1000 units
        load_rules("chengdu", ["mode=xueliu", "scoring.cap=null", f"{SCALE}=1000"])


def test_sessions_count_base_units():
    rules = load_rules("chengdu", [f"{SCALE}=1000", "session={hands: 4}"])
    assert money(rules, np.array([[1500, -500, -1000, 0]])).tolist() == [[1.5, -0.5, -1.0, 0.0]]


def test_the_analysis_reads_money_units_back_in_base_units(tmp_path):
    from xuezhan import run_study

    study = {"name": "scale", "baseline": {"name": "whole", "rules": "chengdu"},
             "variants": [{"name": "fine", "rules": "chengdu", "set": {SCALE: 1000, COMP: 87}}], "hands": 80, "seed": 4}
    run_study(study, out_dir=tmp_path / "run", jobs=1, progress=False)
    run = open_run(tmp_path / "run")
    p = run.players().collect()
    assert all(p.schema[c] == pl.Float64 for c in MONEY_COLUMNS)
    dealer = run.hands().select("variant", "hand_id", "dealer").collect()
    p = p.join(dealer, on=["variant", "hand_id"]).with_columns((pl.col("seat") == pl.col("dealer")).alias("is_d"))
    wide = p.pivot(on="variant", index=["hand_id", "seat", "is_d"], values="score_total")
    gap = (wide["fine"] - wide["whole"]).to_numpy()
    assert np.allclose(gap[wide["is_d"].to_numpy()], -0.261) and np.allclose(gap[~wide["is_d"].to_numpy()], 0.087)
    text = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "−0.261" in text or "-0.261" in text  # the dealer's edge moves by 3 × 0.087 base units


def test_tune_scores_in_base_units():
    from simulator.run.tune import seat0_per_wall

    seats = ["seats=[value, greedy, greedy, greedy]"]
    whole = seat0_per_wall(load_rules("chengdu", seats), 0, 30, 1)
    fine = seat0_per_wall(load_rules("chengdu_milli", seats), 0, 30, 1)
    assert np.abs(whole).sum() > 0 and np.array_equal(fine, whole)


def test_the_environment_rewards_base_units():
    """Greedy play by the agents: the same hands, the same rewards in base units at money_scale 1000."""
    from simulator.agents import GreedyBot
    from simulator.agents.env import XuezhanEnv

    bot = GreedyBot()
    totals = {}
    for config in ("chengdu", "chengdu_milli"):
        e = XuezhanEnv(config, seats=(None, "value", None, "greedy"))
        got = []
        for hand_id in range(4):
            e.reset(seed=21, options={"hand_id": hand_id})
            for agent in e.agent_iter():
                obs, reward, term, trunc, _ = e.last()
                got.append(reward)
                e.step(None if term or trunc else bot.act(e.observation_object(agent)))
        totals[config] = got
    assert any(totals["chengdu"]) and totals["chengdu_milli"] == pytest.approx(totals["chengdu"])


def test_the_replay_shows_base_units():
    """The replay's payments and settlement read as the analysis does: the same text at scale 100 as at scale 1
    (play is the same), and a compensation of 9 units shows as 0.09."""
    from simulator.replay import lines, record_hand

    def text(*over):
        return "\n".join(lines(record_hand(load_rules("chengdu", list(over)), 5, 3), lang="en"))

    plain = text()
    assert "seat 0 → seat" in plain or "seat 1 → seat" in plain  # payments are shown at all
    assert text(f"{SCALE}=100") == plain
    assert "0.09 (kong transfer)" in text(f"{SCALE}=100", f"{COMP}=9")
