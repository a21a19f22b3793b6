"""Sessions (rule set ``session:``): validation, dealer succession, bankrolls, stop_when_broke, the runner
(whole sessions per chunk, same bytes whatever the jobs), replay of a session hand, and analysis.sessions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from cli_helpers import cli_run

from analysis import sessions as asess
from analysis.load import open_run
from analysis.stats import wilson_interval
from simulator.hands.sessions import DICE_KEY, dice, first_win, layout, multi_ron_feeder, next_dealers, run_sessions
from simulator.kernel import state as S
from simulator.kernel.tiles import counts_from_str
from simulator.logs.records import to_columns
from simulator.logs.schema import SESSION_FIELDS, TABLES
from simulator.replay import ReplayError, record_logged_hand
from simulator.rules import RulesError, load_rules
from simulator.run import runner

K = 6  # hands per session in these tests
SEED = 11


def rules(*overrides: str, hands: int = K):
    return load_rules("chengdu", [f"session.hands={hands}", *overrides])


def play(*overrides: str, sessions: int = 4, first: int = 0, duplicate: bool = False) -> dict:
    unit = K * (4 if duplicate else 1)
    ids = np.arange(first * unit, (first + sessions) * unit, dtype=np.int64)
    r = rules(*overrides)
    return to_columns(run_sessions(r, ids, SEED, duplicate=duplicate))


# ---------------------------------------------------------------------------------------------------------
# Rule set keys


def test_session_keys_and_defaults():
    r = rules("session.dealer=feeder_keeps_on_draw", "session.money=coins", "session.bankroll=50",
              "session.stop_when_broke=true")
    s = r.session
    assert (s.hands, s.dealer, s.money, s.bankroll, s.stop_when_broke) == (K, "feeder_keeps_on_draw", "coins", 50.0,
                                                                          True)
    d = rules().session
    assert (d.dealer, d.money, d.bankroll, d.stop_when_broke) == ("rotate", "points", None, False)


def test_no_session_block_leaves_rules_and_digest_as_before():
    plain = load_rules("chengdu")
    assert plain.session is None and "session" not in plain.resolved()
    assert load_rules("chengdu", ["session=null"]).digest() == plain.digest()
    assert rules().digest() != plain.digest()


@pytest.mark.parametrize("overrides, message", [
    (["session.hands=0"], "session.hands"),
    ([f"session.hands={10**4}"], "session.hands"),
    (["session.dealer=winner"], "session.dealer"),
    (["session.money=euros"], "session.money"),
    (["session.bankroll=0"], "session.bankroll"),
    (["session.stop_when_broke=true"], "stop_when_broke needs a bankroll"),
    (["session.colour=red"], "session.colour: unknown key"),
])
def test_bad_session_keys_are_one_line_errors(overrides, message):
    with pytest.raises(RulesError) as exc:
        load_rules("chengdu", ["session.hands=4", *overrides])
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_bad_session_key_on_the_cli_is_one_line(tmp_path: Path, capsys):
    code, out, err = cli_run(["simulate", "chengdu", "--hands", "8", "--out", str(tmp_path / "x"),
                              "--set", "session.hands=4", "--set", "session.dealer=nobody"], capsys)
    assert code != 0 and err.startswith("error: ") and err.count("\n") == 1 and "session.dealer" in err
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------------------------------------
# Dealer succession on constructed outcomes


def _wins(rows):
    """Win records ``(hand row, order, winner, payer)`` → ``(w, w_hand)``."""
    w = np.zeros((len(rows), S.W_N), np.int64)
    for i, (_, order, winner, payer) in enumerate(rows):
        w[i, S.W_ORDER], w[i, S.W_WINNER], w[i, S.W_PAYER] = order, winner, payer
    return w, np.array([r[0] for r in rows], np.int64)


def test_dealer_rules_on_constructed_outcomes():
    # hand 0: seat 2 self-draws first; hand 1: seat 3's discard wins for seats 1 and 0 (一炮多响; in turn order
    # after seat 3 comes seat 0), then seat 2 wins later; hand 2: nobody wins; hand 3: seat 0 wins on seat 1's
    # discard, then seat 3 self-draws.
    w, w_hand = _wins([(0, 1, 2, -1), (1, 1, 1, 3), (1, 1, 0, 3), (1, 2, 2, -1), (3, 1, 0, 1), (3, 2, 3, -1)])
    winner, feeder, count = first_win(w, w_hand, 4)
    assert winner.tolist() == [2, 0, -1, 0] and feeder.tolist() == [-1, 3, -1, 1] and count.tolist() == [1, 2, 0, 1]
    dealers = np.array([1, 2, 3, 0])
    die = np.array([3, 3, 1, 2])
    expect = {
        "rotate": [2, 3, 0, 1],
        "first_winner": [2, 0, 3, 0],           # nobody won: the dealer stays
        "feeder_on_multi_ron": [2, 3, 3, 0],    # seed 000: after 一炮多响 the discarder deals
        "feeder_keeps_on_draw": [2, 3, 3, 1],   # seed 001: the feeder deals, a self-draw's winner, 流局 stays
        "dice": [3, 3, 1, 2],
    }
    multi = multi_ron_feeder(w, w_hand, 4)
    for rule, want in expect.items():
        assert next_dealers(rule, dealers, winner, feeder, count, die, multi).tolist() == want, rule


@pytest.mark.parametrize("rule", ["rotate", "first_winner", "feeder_on_multi_ron", "feeder_keeps_on_draw", "dice"])
def test_played_sessions_chain_the_dealer(rule):
    out = play(f"session.dealer={rule}")
    h, wins = pl.DataFrame(out["hands"]), pl.DataFrame(out["wins"])
    assert h["hand_in_session"].to_list() == list(range(K)) * 4
    dealers = h["dealer"].to_numpy().astype(np.int64)
    w = np.zeros((wins.height, S.W_N), np.int64)
    w[:, S.W_ORDER], w[:, S.W_WINNER], w[:, S.W_PAYER] = wins["win_order"], wins["winner"], wins["payer"]
    w[:, S.W_KIND] = np.where((wins["kind"] == "self_draw").to_numpy(), S.WK_SELF_DRAW, S.WK_DISCARD)
    row = {hid: i for i, hid in enumerate(h["hand_id"].to_list())}
    w_hand = np.array([row[x] for x in wins["hand_id"]], np.int64)
    winner, feeder, count = first_win(w, w_hand, h.height)
    die = dice(SEED, h["deal_id"].to_numpy())
    nxt = next_dealers(rule, dealers, winner, feeder, np.asarray(count), np.roll(die, -1),
                       multi_ron_feeder(w, w_hand, h.height))
    k = h["hand_in_session"].to_numpy()
    assert (dealers[1:][k[1:] > 0] == nxt[:-1][k[1:] > 0]).all()
    assert (dealers[k == 0] == die[k == 0]).all()  # a session's first dealer: the die


def test_dice_are_the_seeded_stream_and_roughly_uniform():
    ids = np.arange(4000)
    d = dice(5, ids[:3])
    want = [int(np.random.SeedSequence(5, spawn_key=(i, DICE_KEY)).generate_state(1, np.uint64)[0]) % 4
            for i in range(3)]
    assert d.tolist() == want
    counts = np.bincount(dice(5, ids), minlength=4)
    assert (np.abs(counts - 1000) < 4 * np.sqrt(750)).all()


def test_layout_of_plain_and_duplicate_sessions():
    sid, k = layout(np.arange(12), 4, False)
    assert sid.tolist() == [0] * 4 + [1] * 4 + [2] * 4 and k.tolist() == [0, 1, 2, 3] * 3
    sid, k = layout(np.arange(16), 2, True)  # deals 0,1 in four seatings = sessions 0-3; deals 2,3 = 4-7
    assert sid.tolist() == [0, 1, 2, 3] * 2 + [4, 5, 6, 7] * 2 and k.tolist() == [0] * 4 + [1] * 4 + [0] * 4 + [1] * 4
    with pytest.raises(ValueError, match="whole sessions"):
        run_sessions(rules(), np.arange(K + 1), 0)


# ---------------------------------------------------------------------------------------------------------
# Money


def test_zero_sum_per_hand_and_per_session_and_bankroll_is_running_total():
    out = play("session.dealer=first_winner", "session.bankroll=100")
    p = pl.DataFrame(out["players"])
    assert p.group_by("hand_id").agg(pl.col("score_total").sum())["score_total"].abs().max() == 0
    per = p.sort("hand_id").group_by("session_id", "seat", maintain_order=True).agg(
        pl.col("score_total").cum_sum().alias("cum"), pl.col("bankroll"))
    for row in per.iter_rows(named=True):
        assert [100 + c for c in row["cum"]] == row["bankroll"]
    last = p.filter(pl.col("hand_in_session") == K - 1)
    assert last.group_by("session_id").agg(pl.col("bankroll").sum())["bankroll"].to_list() == [400.0] * 4


def test_coins_pay_the_rake_every_hand():
    out = play("session.money=coins", "economy.room_factor=10", "economy.rake=3", "scoring.base=2")
    p = pl.DataFrame(out["players"]).sort("hand_id", "seat")
    step = p.group_by("session_id", "seat", maintain_order=True).agg(pl.col("bankroll").diff().drop_nulls(),
                                                                     pl.col("score_total").slice(1))
    for row in step.iter_rows(named=True):
        assert row["bankroll"] == [20.0 * s - 3 for s in row["score_total"]]
    last = p.filter(pl.col("hand_in_session") == K - 1).group_by("session_id").agg(pl.col("bankroll").sum())
    assert last["bankroll"].to_list() == [-4 * 3 * K] * 4  # the house took 4 players × rake × K hands


def test_stop_when_broke_ends_the_session_after_the_ruining_hand():
    out = play("session.bankroll=3", "session.stop_when_broke=true", sessions=8)
    p = pl.DataFrame(out["players"])
    per = p.group_by("session_id").agg(pl.col("hand_in_session").max().alias("last"),
                                       pl.len().alias("rows"),
                                       pl.col("bankroll").filter(pl.col("hand_in_session") < pl.col(
                                           "hand_in_session").max()).min().alias("low_before"),
                                       pl.col("bankroll").filter(pl.col("hand_in_session") == pl.col(
                                           "hand_in_session").max()).min().alias("low_last"))
    stopped = per.filter(pl.col("last") < K - 1)
    assert stopped.height > 0  # a bankroll of 3 base units does not last 6 hands in every session
    assert (stopped["low_last"] <= 0).all() and (stopped["low_before"].fill_null(1) > 0).all()
    assert (per["rows"] == 4 * (per["last"] + 1)).all()  # hands are played in order, none skipped
    full = per.filter(pl.col("last") == K - 1)
    assert (full["low_before"].fill_null(1) > 0).all()


def test_common_random_numbers_the_same_walls_under_every_dealer_rule():
    a = pl.DataFrame(play("session.dealer=rotate")["players"])
    b = pl.DataFrame(play("session.dealer=first_winner")["players"])
    # whoever deals, the four hands together hold the same 53 tiles of the same wall
    def tiles(df):
        return {hid: sum(counts_from_str(x).astype(int) for x in g["dealt"]).tolist()
                for (hid,), g in df.group_by("hand_id")}
    assert tiles(a) == tiles(b) and len(tiles(a)) == 4 * K
    assert (a["dealt"] != b["dealt"]).any()  # ... but dealt to other seats when the dealer differs


def test_duplicate_sessions_rotate_the_seating_for_a_whole_session():
    out = play("session.dealer=first_winner", sessions=1, duplicate=True)
    h, p = pl.DataFrame(out["hands"]), pl.DataFrame(out["players"])
    assert sorted(set(h["session_id"].to_list())) == [0, 1, 2, 3]
    assert (h["rotation"] == h["session_id"] % 4).all()
    assert h.group_by("session_id").agg(pl.col("deal_id").sort())["deal_id"].to_list() == [list(range(K))] * 4
    first = h.filter(pl.col("hand_in_session") == 0)
    assert first["dealer"].n_unique() == 1  # one die for the first deal, whatever the seating
    assert p.group_by("hand_id").agg(pl.col("score_total").sum())["score_total"].abs().max() == 0


# ---------------------------------------------------------------------------------------------------------
# Runner, logs, replay


def _simulate(out: Path, overrides: list[str], *, hands: int = 4 * K, jobs: int = 1, chunk: int | None = 2 * K,
              variants=None):
    vs = variants or [runner.Variant.load("chengdu", overrides)]
    spec = runner.RunSpec(hands=hands, seed=SEED, jobs=jobs, chunk_size=chunk, progress=False)
    return runner.run_variants(out, vs, spec)


def _bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.parquet"))}


BROKE = [f"session.hands={K}", "session.dealer=feeder_on_multi_ron", "session.bankroll=4",
         "session.stop_when_broke=true"]


def test_runner_same_bytes_whatever_the_jobs_and_chunking(tmp_path: Path, capsys):
    _simulate(tmp_path / "a", BROKE, jobs=1)
    _simulate(tmp_path / "b", BROKE, jobs=1, chunk=K)
    a = pl.read_parquet(tmp_path / "a/players/variant=chengdu/*.parquet")
    b = pl.read_parquet(tmp_path / "b/players/variant=chengdu/*.parquet")
    assert a.equals(b) and a.height < 4 * 4 * K  # some session stopped early
    _simulate(tmp_path / "c", BROKE, jobs=2)
    assert _bytes(tmp_path / "a") == _bytes(tmp_path / "c")
    code, out, _ = cli_run(["verify", str(tmp_path / "a")], capsys)  # fewer hands rows than hand ids: still ok
    assert code == 0 and "complete" in out
    assert open_run(tmp_path / "a").hand_counts()["n_hands"].item() == a.height // 4


def test_simulate_summary_counts_hands_played_not_hand_ids(tmp_path: Path, capsys):
    sets = [x for o in BROKE for x in ("--set", o)]
    code, out, _ = cli_run(["simulate", "chengdu", "--hands", str(4 * K), "--seed", str(SEED), "--jobs", "1",
                            "--chunk-size", str(2 * K), "--quiet", *sets, "--out", str(tmp_path)], capsys)
    played = pl.read_parquet(tmp_path / "hands/variant=chengdu/*.parquet").height
    assert code == 0 and played < 4 * K  # some session stopped early
    assert f"chengdu: {played} hands in 4 sessions (of {4 * K} hand ids: sessions stopped early)" in out
    assert f"({played} played now;" in out and f"simulated {played} hands in" in out


def test_logs_gain_session_columns_only_with_sessions(tmp_path: Path):
    _simulate(tmp_path / "s", [f"session.hands={K}"])
    _simulate(tmp_path / "p", [], chunk=12)
    for table, fields in SESSION_FIELDS.items():
        with_s = pq.read_schema(next((tmp_path / f"s/{table}/variant=chengdu").glob("*.parquet")))
        plain = pq.read_schema(next((tmp_path / f"p/{table}/variant=chengdu").glob("*.parquet")))
        assert plain.names == TABLES[table].names
        assert with_s.names == TABLES[table].names + [f for f, _ in fields]
    hands = pl.read_parquet(tmp_path / "p/hands/variant=chengdu/*.parquet")
    assert (hands["dealer"] == hands["deal_id"] % 4).all()  # without sessions: the fixed rotation, as before


def test_runner_refuses_partial_sessions(tmp_path: Path):
    with pytest.raises(runner.RunError, match="multiple of 6"):
        _simulate(tmp_path / "a", [f"session.hands={K}"], hands=4 * K + 1)
    with pytest.raises(runner.RunError, match="whole sessions"):
        _simulate(tmp_path / "b", [f"session.hands={K}"], chunk=K + 1)
    assert not (tmp_path / "a").exists()


def test_replay_of_a_session_hand_uses_the_logged_dealer(tmp_path: Path):
    _simulate(tmp_path, BROKE)
    hands = pl.read_parquet(tmp_path / "hands/variant=chengdu/*.parquet")
    hid = hands.filter(pl.col("dealer") != pl.col("deal_id") % 4)["hand_id"][0]
    log = record_logged_hand(tmp_path, None, int(hid))  # verified against the logged rows
    assert log.hand["dealer"] == hands.filter(pl.col("hand_id") == hid)["dealer"].item()
    missing = sorted(set(range(4 * K)) - set(hands["hand_id"].to_list()))
    assert missing  # a session stopped early (a player broke), so some hand ids were never played
    with pytest.raises(ReplayError, match="not played"):
        record_logged_hand(tmp_path, None, missing[0])


# ---------------------------------------------------------------------------------------------------------
# analysis.sessions


def test_session_analysis(tmp_path: Path):
    base = [f"session.hands={K}", "session.bankroll=6"]
    vs = [runner.Variant.load("chengdu", [*base, "session.dealer=rotate"], "rotate"),
          runner.Variant.load("chengdu", [*base, "session.dealer=first_winner", "seats=[value, greedy, greedy, "
                                                                                  "greedy]"], "first_winner")]
    _simulate(tmp_path, [], variants=vs, hands=8 * K, chunk=4 * K)
    run = open_run(tmp_path)
    sp = asess.session_players(run).collect()
    assert sp.group_by("variant", "session_id").agg(pl.col("points").sum())["points"].abs().max() == 0
    assert (sp["dealt"].sum() == 2 * 8 * K) and (sp["n_hands"] == K).all()
    ruin = asess.ruin_table(run, "seat")
    row = ruin.filter((pl.col("variant") == "rotate") & (pl.col("seat") == "any")).row(0, named=True)
    k = sp.filter(pl.col("variant") == "rotate").group_by("session_id").agg(pl.col("ruined").any())["ruined"].sum()
    lo, hi = wilson_interval(k, 8)
    assert (row["k"], row["n_units"]) == (k, 8) and np.isclose(row["p_lo"], lo) and np.isclose(row["p_hi"], hi)
    assert asess.ruin_table(run, "seat", bankroll=6).equals(ruin)  # the sessions' own bankroll
    assert asess.ruin_table(run, "seat", bankroll=10**6)["k"].sum() == 0
    deeper = asess.ruin_table(run, "seat", bankroll=3)
    assert (deeper["k"].to_numpy() >= ruin["k"].to_numpy()).all()  # a smaller bankroll is ruined at least as often
    with pytest.raises(ValueError, match="positive"):
        asess.ruin_table(run, "seat", bankroll=0)
    eff = asess.dealer_rule_effect(run, "first_winner", "rotate", "seat")
    dealt = eff.filter(pl.col("quantity") == "dealt")
    assert dealt.height == 4 and np.isclose(dealt["diff"].sum(), 0)  # every session has K dealers either way
    assert (eff["n_units"] == 8).all()
    assert asess.house_take(run)["mean"].to_list() == [0.0, 0.0]


def test_recorded_sessions_replay_hand_by_hand_with_their_dealers():
    from simulator.hands import run_batch

    r = rules("session.dealer=first_winner")
    raw = run_sessions(r, np.arange(2 * K), SEED, record=True)
    for i, hid in enumerate(raw.hand_ids.tolist()):
        one = run_batch(r, np.array([hid]), SEED, record=True, dealers=raw.h[i:i + 1, S.H_DEALER])
        assert np.array_equal(raw.events[raw.events[:, 0] == i][:, 1:], one.events[:, 1:])
        assert np.array_equal(raw.p[4 * i:4 * i + 4], one.p)


def test_a_bankroll_change_alone_does_not_count_as_different_play(tmp_path: Path):
    from analysis.diagnostics import differing_hands

    base = [f"session.hands={K}", "session.dealer=first_winner"]
    vs = [runner.Variant.load("chengdu", [*base, "session.bankroll=10"], "b10"),
          runner.Variant.load("chengdu", [*base, "session.bankroll=50"], "b50")]
    _simulate(tmp_path, [], variants=vs, hands=2 * K)
    run = open_run(tmp_path)
    assert differing_hands(run, "b50", "b10") == (0, 2 * K)
    assert asess.ruin_table(run, "seat")["bankroll"].unique().sort().to_list() == [10.0, 50.0]


def test_resume_extends_a_session_run_to_the_same_bytes(tmp_path: Path):
    _simulate(tmp_path / "full", BROKE)
    _simulate(tmp_path / "part", BROKE, hands=2 * K)
    spec = runner.RunSpec(hands=4 * K, seed=SEED, jobs=1, resume=True, progress=False)
    runner.run_variants(tmp_path / "part", [runner.Variant.load("chengdu", BROKE)], spec)
    assert _bytes(tmp_path / "part") == _bytes(tmp_path / "full")


def test_a_study_mixing_plain_and_session_arms_reads_and_reports(tmp_path: Path):
    from analysis.report import sessions_section

    vs = [runner.Variant.load("chengdu", None, "plain"),
          runner.Variant.load("chengdu", [f"session.hands={K}", "session.bankroll=10"], "sess")]
    _simulate(tmp_path, [], variants=vs, hands=2 * K)
    run = open_run(tmp_path)
    p = run.players().collect()
    assert p.filter(pl.col("variant") == "plain")["bankroll"].null_count() == 4 * 2 * K
    assert p.filter(pl.col("variant") == "sess")["bankroll"].null_count() == 0
    assert asess.session_variants(run) == ["sess"]
    titles = [caption for _, caption, _ in sessions_section(run, "plain").items]
    assert any("P(ruin)" in t for t in titles) and not any("paired" in t for t in titles)


def _next_dealer_from_the_log(rule: str, dealer: int, wins: list[dict]) -> int:
    """docs/rules.md "Who deals", read off one hand's wins rows alone (no engine helper): a win event is the rows
    sharing a ``win_order``; several rows = 一炮多响, whose first winner is the first after the discarder."""
    if not wins:
        return dealer  # 流局: the dealer stays
    events: dict[int, list[dict]] = {}
    for w in wins:
        events.setdefault(w["win_order"], []).append(w)
    first = events[min(events)]
    first_winner = min(first, key=lambda w: (w["winner"] - w["payer"]) % 4 if w["payer"] >= 0 else 0)["winner"]
    if rule == "first_winner":
        return first_winner
    if rule == "feeder_on_multi_ron":
        multi = [events[o] for o in sorted(events) if len(events[o]) >= 2]
        return multi[0][0]["payer"] if multi else first_winner
    assert rule == "feeder_keeps_on_draw"
    return first[0]["winner"] if first[0]["kind"] == "self_draw" else first[0]["payer"]


@pytest.mark.parametrize("rule", ["first_winner", "feeder_on_multi_ron", "feeder_keeps_on_draw"])
def test_xueliu_sessions_pass_the_deal_as_the_rules_say(rule):
    """血流 (every player plays on after winning: many win events a hand, later 一炮多响 too): each next dealer
    derived from the previous hand's logged wins by docs/rules.md's table, not by simulator.hands.sessions."""
    out = play(f"session.dealer={rule}", "mode=xueliu", sessions=20)
    h, wins = pl.DataFrame(out["hands"]), pl.DataFrame(out["wins"])
    by_hand: dict[int, list[dict]] = {}
    for w in wins.iter_rows(named=True):
        by_hand.setdefault(w["hand_id"], []).append(w)
    rows = h.select("hand_id", "hand_in_session", "dealer").to_dicts()
    later_multi = 0
    for prev, nxt in zip(rows[:-1], rows[1:], strict=True):
        if nxt["hand_in_session"] == 0:
            continue
        hw = by_hand.get(prev["hand_id"], [])
        orders = [w["win_order"] for w in hw]
        later_multi += any(orders.count(o) >= 2 for o in set(orders) if o > 1)
        assert nxt["dealer"] == _next_dealer_from_the_log(rule, prev["dealer"], hw), (prev, hw)
    assert max(len(v) for v in by_hand.values()) >= 3  # 血流: hands with several wins
    if rule == "feeder_on_multi_ron":
        assert later_multi > 0  # a 一炮多响 after the first win decided some deal
