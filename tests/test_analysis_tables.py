"""analysis tables on the four-hand synthetic run of tests/analysis_synth.py, against hand-computed numbers.

Scores per seat (base units) in variant ``base`` (花猪 16): seat 0: 6, -16, -48, 2; seat 1: 0, 8, 16, 16;
seat 2: 0, 6, 16, 0; seat 3: -6, 2, 16, -18. ``alt`` (花猪 8) differs only in hand 2: seat 0 -24, others +8.
Seats 0-1 are greedy, 2-3 value. Wins (7 per variant): hand 0 pinghu (self-draw) + duiduihu; hand 1 qingyise,
qidui (self-draw), pinghu; hand 3 qingdui (5 fan capped at 4) + pinghu (rob kong).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from analysis_synth import Z, example_run, row

from analysis import ev, fans, risk, shape
from analysis.load import RunDirError, open_run
from analysis.stats import wilson_interval
from simulator.rules import FLAGS, HAND_TYPES


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return example_run(tmp_path_factory.mktemp("synth") / "run")


def eff_wilson(p: float, se: float, n_obs: int, units: int) -> tuple[float, float]:
    """The effective-n Wilson interval of analysis.stats.share_interval_exprs, recomputed in plain Python:
    design effect se² / (p(1−p)/n · G/(G−1)), n_eff = n / deff capped at n; n_eff = G when p is 0 or 1."""
    if p in (0, 1) or se == 0:
        n_eff = units if p in (0, 1) else n_obs
    else:
        n_eff = min(n_obs, n_obs * p * (1 - p) / n_obs * units / (units - 1) / se**2)
    lo, hi = wilson_interval(p * n_eff, n_eff)
    return float(lo), float(hi)


# -- load ------------------------------------------------------------------------------------------------------

def test_open_run(run_dir):
    run = open_run(run_dir)
    assert run.variants == ("base", "alt")  # study order, not alphabetical
    assert run.baseline == "base"
    assert run.base("alt") == 1 and run.economy("alt") == {"room_factor": 2.0, "rake": 1.0}
    assert run.hand_counts().rows() == [("base", 4), ("alt", 4)]
    players = run.players().collect()
    assert players.height == 32 and players.schema["variant"] == pl.String and players.schema["bot"] == pl.String
    assert run.wins("alt").collect().height == 7


def test_bad_run_dirs(tmp_path):
    with pytest.raises(RunDirError, match="not found"):
        open_run(tmp_path / "missing")
    with pytest.raises(RunDirError, match="not a run directory"):
        open_run(tmp_path)
    (tmp_path / "_variants" / "variant=x").mkdir(parents=True)
    (tmp_path / "_variants" / "variant=x" / "_manifest.json").write_text("{not json")
    with pytest.raises(RunDirError, match="not valid JSON"):
        open_run(tmp_path)


def test_unknown_variant(run_dir):
    with pytest.raises(RunDirError, match="no variant 'nope'.*base, alt"):
        open_run(run_dir).players("nope")


# -- fans ------------------------------------------------------------------------------------------------------

def test_hand_type_frequencies(run_dir):
    df = fans.hand_type_frequencies(run_dir)
    assert df.height == 2 * len(HAND_TYPES)
    base = df.filter(pl.col("variant") == "base")
    assert base["hand_type"].to_list() == list(HAND_TYPES)
    assert base["k_wins"].sum() == 7 and (base["n_wins"] == 7).all() and (base["n_hands"] == 4).all()
    r = row(base, hand_type="pinghu")
    assert (r["k_wins"], r["k_hands"]) == (3, 3)  # hands 0, 1, 3
    assert r["p_win"] == pytest.approx(3 / 7) and r["p_hand"] == 0.75
    # p_win is clustered by hand: the hands with wins are 0, 1, 3 with m = 2, 3, 2 wins and k = 1, 1, 1 pinghu;
    # k − p·m = 1/7, −2/7, 1/7: se² = 3/2 · (6/49) / 7² = 9/2401, se = 3/49
    assert r["p_win_se"] == pytest.approx(3 / 49)
    # design effect (9/2401) / (p(1−p)/7 · 3/2) < 1: n_eff is capped at the 7 wins, so Wilson(3, 7) — never
    # more information than independent wins
    assert (r["p_win_lo"], r["p_win_hi"]) == pytest.approx(tuple(map(float, wilson_interval(3, 7))))
    # p_hand stays Wilson: one observation per hand
    assert (r["p_hand_lo"], r["p_hand_hi"]) == pytest.approx(tuple(map(float, wilson_interval(3, 4))))
    # qingdui: k = 0, 0, 1 in m = 2, 3, 2: k − p·m = −2/7, −3/7, 5/7: se² = 3/2 · 38/49 / 49 = 57/2401;
    # Wilson at the effective n: inside [0, 1], no negative bound
    q = row(base, hand_type="qingdui")
    assert q["k_wins"] == 1 and q["p_win_se"] == pytest.approx(math.sqrt(57) / 49)
    assert (q["p_win_lo"], q["p_win_hi"]) == pytest.approx(eff_wilson(1 / 7, math.sqrt(57) / 49, 7, 3))
    assert 0 < q["p_win_lo"] < 1 / 7
    # never won: SE 0; the interval is Wilson for "0 of the 3 hands with a win" (the design effect is unknown),
    # never [0, 0]
    t = row(base, hand_type="tianhu")
    assert (t["k_wins"], t["p_win"], t["p_win_se"], t["p_win_lo"]) == (0, 0, 0, 0)
    assert t["p_win_hi"] == pytest.approx(Z**2 / (3 + Z**2))
    assert t["p_hand_hi"] == pytest.approx(Z**2 / (4 + Z**2))


def test_flag_frequencies(run_dir):
    base = fans.flag_frequencies(run_dir).filter(pl.col("variant") == "base")
    assert base["flag"].to_list() == list(FLAGS)
    counts = dict(zip(base["flag"], base["k_wins"], strict=True))
    assert counts["pinghu"] == 7  # every win
    assert (counts["duiduihu"], counts["qingyise"], counts["qidui"], counts["zimo"], counts["qiangganghu"]) == \
        (2, 2, 1, 2, 1)
    assert counts["menqing"] == 2 and counts["tianhu"] == 0
    assert row(base, flag="duiduihu")["k_hands"] == 2  # hands 0 and 3
    # every win is pinghu: k = n, SE 0: Wilson for "all 3 hands with a win", upper bound 1
    pinghu = row(base, flag="pinghu")
    assert (pinghu["p_win"], pinghu["p_win_se"], pinghu["p_win_hi"]) == (1, 0, 1)
    assert pinghu["p_win_lo"] == pytest.approx(3 / (3 + Z**2))
    # duiduihu: k = 1, 0, 1 in m = 2, 3, 2 (p = 2/7): k − p·m = 3/7, −6/7, 3/7: se² = 3/2 · 54/49 / 49 = 81/2401
    assert row(base, flag="duiduihu")["p_win_se"] == pytest.approx(9 / 49)


def test_fan_distribution_and_summary(run_dir):
    dist = fans.fan_distribution(run_dir).filter(pl.col("variant") == "base")
    fan = dict(zip(*dist.filter(pl.col("measure") == "fan").select("value", "k"), strict=True))
    capped = dict(zip(*dist.filter(pl.col("measure") == "capped_fan").select("value", "k"), strict=True))
    gen = dict(zip(*dist.filter(pl.col("measure") == "gen").select("value", "k"), strict=True))
    assert fan == {0: 2, 1: 2, 2: 1, 3: 1, 4: 0, 5: 1}
    assert capped == {0: 2, 1: 2, 2: 1, 3: 1, 4: 1, 5: 0}
    assert gen == {0: 5, 1: 1, 2: 1, 3: 0, 4: 0, 5: 0}
    for measure in ("fan", "capped_fan", "gen"):
        assert dist.filter(pl.col("measure") == measure)["p"].sum() == pytest.approx(1.0)
    # clustered by hand: fan 0 in hands 0, 1 (k = 1, 1, 0 of m = 2, 3, 2; p = 2/7): k − p·m = 3/7, 1/7, −4/7,
    # se² = 3/2 · 26/49 / 49 = 39/2401
    f0 = row(dist, measure="fan", value=0)
    assert f0["se"] == pytest.approx(math.sqrt(39) / 49)
    assert (f0["p_lo"], f0["p_hi"]) == pytest.approx(eff_wilson(2 / 7, math.sqrt(39) / 49, 7, 3))
    f4 = row(dist, measure="fan", value=4)
    assert (f4["k"], f4["se"], f4["p_lo"]) == (0, 0, 0) and f4["p_hi"] == pytest.approx(Z**2 / (3 + Z**2))
    summ = fans.fan_summary(run_dir).filter(pl.col("variant") == "base")
    assert row(summ, quantity="fan")["mean"] == pytest.approx(12 / 7)
    assert row(summ, quantity="capped_fan")["mean"] == pytest.approx(11 / 7)
    wph = row(summ, quantity="wins_per_hand")
    # winners 2, 3, 0, 2: mean 1.75, sample variance 4.75/3
    assert wph["mean"] == 1.75 and wph["se"] == pytest.approx(math.sqrt(4.75 / 3 / 4))


# -- expected value ----------------------------------------------------------------------------------------------

def test_ev_by_seat(run_dir):
    df = ev.expected_value(run_dir, "seat", components=False)
    r = row(df, variant="base", seat=0)
    assert (r["n_hands"], r["n_obs"], r["mean"]) == (4, 4, -14)
    assert r["se"] == pytest.approx(math.sqrt(1816 / 3 / 4))
    assert (r["ci_lo"], r["ci_hi"]) == pytest.approx((-14 - Z * r["se"], -14 + Z * r["se"]))
    assert row(df, variant="alt", seat=0)["mean"] == -8
    assert [row(df, variant="base", seat=s)["mean"] for s in range(4)] == [-14, 10, 5.5, -1.5]


def test_ev_by_bot_clustered_with_components(run_dir):
    df = ev.expected_value(run_dir, "bot").filter(pl.col("variant") == "base")
    g = row(df, bot="greedy", component="score_total")
    assert (g["n_hands"], g["n_obs"], g["mean"]) == (4, 8, -2)
    assert g["se"] == pytest.approx(math.sqrt(173 / 6))
    assert row(df, bot="value", component="score_total")["mean"] == 2
    assert row(df, bot="greedy", component="score_huazhu")["mean"] == -4  # (-48 + 16) / 8
    assert row(df, bot="greedy", component="score_win")["mean"] == 2.5  # (6 + 0 - 14 + 10 + 2 + 16) / 8
    for bot in ("greedy", "value"):
        parts = df.filter((pl.col("bot") == bot) & (pl.col("component") != "score_total"))["mean"].sum()
        assert parts == pytest.approx(row(df, bot=bot, component="score_total")["mean"])


def test_ev_bad_grouping(run_dir):
    with pytest.raises(ValueError, match="group by"):
        ev.expected_value(run_dir, "table")


# -- risk ------------------------------------------------------------------------------------------------------

def test_risk_table_points(run_dir):
    df = risk.risk_table(run_dir, "seat", alpha=0.75, thresholds=(0, 10, 16), n_boot=50)
    seat0 = df.filter((pl.col("variant") == "base") & (pl.col("seat") == 0))
    s0 = {r["statistic"]: r for r in seat0.iter_rows(named=True)}
    # seat 0 scores sorted -48, -16, 2, 6
    assert s0["mean"]["estimate"] == -14
    assert s0["sd"]["estimate"] == pytest.approx(math.sqrt(1816 / 3))
    assert s0["q(0.5)"]["estimate"] == -16 and s0["q(0.75)"]["estimate"] == 2 and s0["q(0.01)"]["estimate"] == -48
    assert s0["P(loss>0)"]["estimate"] == 0.5 and s0["P(loss>16)"]["estimate"] == 0.25
    assert s0["CVaR75 loss"]["estimate"] == 48  # worst 25% = one of four hands
    assert all(r["n_hands"] == 4 and r["n_obs"] == 4 for r in s0.values())
    assert all(r["ci_lo"] <= r["ci_hi"] for r in s0.values())


def test_risk_by_bot_pools_seats(run_dir):
    df = risk.risk_table(run_dir, "bot", alpha=0.75, n_boot=20).filter(pl.col("variant") == "base")
    v = {r["statistic"]: r["estimate"] for r in df.filter(pl.col("bot") == "value").iter_rows(named=True)}
    # value: -18, -6, 0, 0, 2, 6, 16, 16 -> CVaR75 = (18 + 6)/2, q(.25) = x_(2) = -6
    assert v["mean"] == 2 and v["CVaR75 loss"] == 12 and v["q(0.25)"] == -6
    assert v["P(loss>8)"] == 0.125
    assert set(df.filter(pl.col("bot") == "value")["n_obs"]) == {8}


def test_session_risk_table(run_dir):
    df = risk.session_risk_table(run_dir, "seat", hands=3, n_sessions=4000, n_boot=10, boot_sessions=500)
    r = row(df, variant="base", seat=1, statistic="mean")
    assert r["estimate"] == pytest.approx(3 * 10) and r["session_hands"] == 3  # exact: K · mean
    worst = row(df, variant="base", seat=0, statistic="q(0.01)")["estimate"]
    assert worst == -144  # three 花猪 hands in a row: 3 × -48 (probability 1/64)


def test_risk_without_bootstrap_has_null_intervals(run_dir):
    for df in (risk.risk_table(run_dir, "seat", n_boot=0),
               risk.session_risk_table(run_dir, "seat", hands=3, n_sessions=500, n_boot=0)):
        assert df["ci_lo"].null_count() == df["ci_hi"].null_count() == df.height
        assert df["estimate"].null_count() == 0


def test_session_draws_a_hand_then_a_seat(tmp_path):
    """Bot a holds one seat in hand 0 (score 10) and three in hand 1 (−2 each). An evening of one a-player draws a
    hand (1/2 each), then its seat: one hand is 10 or −2 with probability 1/2 — not 10 with probability 1/4, as a
    uniform draw of the four logged a-player-hands would have it."""
    from analysis_synth import player, write_run

    hands = [{"hand_id": 0, "exhaustive_draw": True,
              "players": [player(0, "a", score_win=10), *(player(s, "b", score_win=-10 / 3) for s in (1, 2, 3))]},
             {"hand_id": 1, "exhaustive_draw": True,
              "players": [*(player(s, "a", score_win=-2) for s in (0, 1, 2)), player(3, "b", score_win=6)]}]
    run_dir = write_run(tmp_path / "run", {"v": hands})
    df = risk.session_risk_table(run_dir, "bot", hands=2, n_sessions=20_000, n_boot=0).filter(pl.col("bot") == "a")
    get = {r["statistic"]: r["estimate"] for r in df.iter_rows(named=True)}
    # one draw: μ = (10 − 2)/2 = 4, σ² = (100 + 4)/2 − 16 = 36; two hands: mean 8, sd 6·√2 (uniform player-hand
    # draw: mean 2·1 = 2)
    assert get["mean"] == 8 and get["sd"] == pytest.approx(6 * math.sqrt(2))
    # totals 20, 8, −4 with probabilities 1/4, 1/2, 1/4 (uniform player-hand draw: P(total < 0) = 9/16)
    assert get["P(loss>0)"] == pytest.approx(0.25, abs=0.02) and get["q(0.5)"] == 8
    assert set(df["n_hands"]) == {2} and set(df["n_obs"]) == {4}
    # the per-hand table pools player-hands: mean (10 − 6)/4 = 1, so here session mean ≠ 2 × per-hand mean
    hand = risk.risk_table(run_dir, "bot", n_boot=0).filter(pl.col("bot") == "a", pl.col("statistic") == "mean")
    assert hand["estimate"].item() == 1


@pytest.mark.parametrize("study", ["skill", "sessions"])
def test_session_risk_without_bootstrap_read_in_pieces_is_the_whole_samples(study, monkeypatch):
    """Without a bootstrap the session table reads the run in pieces (per hand: its size and sums; then the drawn
    scores): the same numbers, to the bit, as :func:`analysis.stats.session_risk` on every player-hand at once —
    walls and sessions as units, groups of one and of several seats a hand, the dealer's position joined."""
    from analysis_golden import RUNS

    from analysis.stats import session_risk

    run = open_run(RUNS / study)
    monkeypatch.setenv("XUEZHAN_PIECE_HANDS", "80")
    for by in (["bot"], ["position"], ["seat", "bot"]):
        got = risk.session_risk_table(run, by, hands=10, n_sessions=3000, n_boot=0, seed=3)
        rows = []
        for i, (key, values, hands, units) in enumerate(risk._groups(run, by)):
            stats = session_risk(values, hands, hands=10, probs=risk.PROBS, thresholds=risk.SESSION_THRESHOLDS,
                                 n_sessions=3000, n_boot=0, seed=np.random.SeedSequence([3, i]), units=units)
            counts = (np.unique(units).size, np.unique(hands).size, values.size)
            rows += [(*key.values(), risk._label(k, risk.LEVEL), *v, *counts) for k, v in stats.items()]
        want = risk._table(rows, by)
        assert got.drop("id", "session_hands").equals(want), by


def test_score_distribution(run_dir):
    df = risk.score_distribution(run_dir, "seat")
    sub = df.filter((pl.col("variant") == "base") & (pl.col("seat") == 0))
    assert sub["score_total"].to_list() == [-48, -16, 2, 6]
    assert sub["p"].to_list() == [0.25] * 4 and set(sub["n_obs"]) == {4}
    # one observation per hand: se = sqrt(p(1-p)/(n-1))
    assert sub["se"][0] == pytest.approx(math.sqrt(0.25 * 0.75 / 3))


# -- game shape ------------------------------------------------------------------------------------------------

def test_game_shape(run_dir):
    df = shape.game_shape(run_dir).filter(pl.col("variant") == "base")
    get = {r["metric"]: r for r in df.iter_rows(named=True)}
    assert (get["exhaustive_draw (流局)"]["estimate"], get["exhaustive_draw (流局)"]["n"]) == (0.75, 4)
    assert [get[f"winners={k}"]["estimate"] for k in range(4)] == [0.25, 0, 0.5, 0.25]
    assert get["winners per hand"]["estimate"] == 1.75
    assert get["huazhu (花猪) any"]["estimate"] == 0.25
    assert get["chadajiao (查大叫) any"]["estimate"] == 0.5  # hands 0 and 3
    assert get["kongs per hand"]["estimate"] == 0.5
    assert (get["self-draw share"]["estimate"], get["self-draw share"]["n"]) == (2 / 7, 7)
    assert get["rob-kong share"]["estimate"] == pytest.approx(1 / 7)
    assert get["cap binds"]["estimate"] == pytest.approx(1 / 7) and get["cap binds (any win)"]["estimate"] == 0.25
    assert get["wins ≥ 2 fan"]["estimate"] == pytest.approx(3 / 7)  # qidui 2, qingyise 3, qingdui 5 (before the cap)
    # per-win shares are clustered by hand (hands 0, 1, 3 with m = 2, 3, 2 wins), not Wilson on 7 wins:
    # self-draws k = 1, 1, 0 -> se² = 39/2401 (as fan 0); rob-kong and cap binds k = 0, 0, 1 -> se² = 57/2401
    sd = get["self-draw share"]
    assert sd["se"] == pytest.approx(math.sqrt(39) / 49) and sd["se"] != pytest.approx(math.sqrt(2 / 7 * 5 / 7 / 7))
    assert (sd["ci_lo"], sd["ci_hi"]) == pytest.approx(eff_wilson(2 / 7, sd["se"], 7, 3))
    for m in ("rob-kong share", "cap binds"):
        assert get[m]["se"] == pytest.approx(math.sqrt(57) / 49)
        assert (get[m]["ci_lo"], get[m]["ci_hi"]) == pytest.approx(eff_wilson(1 / 7, math.sqrt(57) / 49, 7, 3))
    # every share's interval lies inside [0, 1]
    shares = df.filter(pl.col("metric").str.contains("share|rate|any|winners=|declined a|流局|cap binds"))
    assert shares.height == 15 and ((shares["ci_lo"] >= 0) & (shares["ci_hi"] <= 1)).all()
    # a hand share keeps Wilson (one observation per hand)
    assert (get["cap binds (any win)"]["ci_lo"], get["cap binds (any win)"]["ci_hi"]) == \
        pytest.approx(tuple(map(float, wilson_interval(1, 4))))
    assert get["win turn"]["estimate"] == 20  # (10 + 20 + 5 + 15 + 30 + 25 + 35) / 7
    # deal-ins: hand 0 seat 2; hand 1 seat 0 (twice, counted once); hand 3 seats 3 and 2 -> 4 of 16,
    # per-hand counts 1, 1, 0, 2: se² = 4/3 · Σ(c − 1)² / 16² = 4/3 · 2/256
    dealin = get["deal-in rate"]
    assert (dealin["estimate"], dealin["n"]) == (0.25, 16)
    assert dealin["se"] == pytest.approx(math.sqrt(4 / 3 * 2 / 256))
    assert get["declined a win"]["estimate"] == 1 / 16
    assert get["huazhu (花猪) rate"]["estimate"] == 1 / 16
    assert df.select(pl.col("se").is_not_null().all()).item()


def test_decline_effect(run_dir):
    df = shape.decline_effect(run_dir).filter((pl.col("variant") == "base") & (pl.col("bot") == "greedy"))
    yes = row(df.filter(pl.col("declined") == True), quantity="capped_fan")  # noqa: E712
    no = row(df.filter(pl.col("declined") == False), quantity="capped_fan")  # noqa: E712
    assert (yes["mean"], yes["n_obs"]) == (4, 1)
    assert (no["mean"], no["n_obs"]) == (1, 4)  # greedy non-decliners' wins: 0, 1, 2, 1
    diff = row(df.filter(pl.col("declined").is_null()), quantity="capped_fan")
    assert diff["mean"] == 3 and diff["n_obs"] == 5
    won = row(df.filter(pl.col("declined") == False), quantity="won")  # noqa: E712
    assert won["mean"] == pytest.approx(4 / 7)
    # diff SE, hand-clustered: the one decliner (hand 3, won) is its group's mean, so A_h = 0; the other seven
    # greedy player-hands (won 1,1 | 0,1 | 0,0 | 1) have e = y − 4/7 summing per hand to B = 6/7, −1/7, −8/7, 3/7:
    # se² = 4/3 · Σ (B_h/7)² = 4/3 · 110/2401 (√(se₁² + se₀²) would be null: the decliners span one hand)
    d_won = row(df.filter(pl.col("declined").is_null()), quantity="won")
    assert (d_won["mean"], d_won["n_units"], d_won["n_obs"]) == (pytest.approx(3 / 7), 4, 8)
    assert d_won["se"] == pytest.approx(math.sqrt(4 / 3 * 110 / 2401))
    # score: non-decliners 6, 0 | −16, 8 | −48, 16 | 2 (mean −32/7): B = 106/7, 8/7, −160/7, 46/7
    d_score = row(df.filter(pl.col("declined").is_null()), quantity="score_total")
    assert d_score["mean"] == pytest.approx(16 + 32 / 7)
    assert d_score["se"] == pytest.approx(math.sqrt(4 / 3 * (106**2 + 8**2 + 160**2 + 46**2)) / 49)
    assert (d_score["ci_lo"], d_score["ci_hi"]) == pytest.approx((d_score["mean"] - Z * d_score["se"],
                                                                  d_score["mean"] + Z * d_score["se"]))


def test_decline_effect_shares_hands(tmp_path):
    """Bot x holds seats 0 and 1; decliners and non-decliners sit in the same hands, so the difference's SE must
    keep their covariance: cluster-robust SE of the coefficient of an OLS of the score on `declined`."""
    from analysis_synth import player, write_run

    # (seat 0 score, declined?), (seat 1 score, declined?) per hand
    spec = [((4, True), (2, False)), ((-2, False), (6, True)), ((0, False), (-4, False)), ((-1, True), (4, False))]
    hands = [{"hand_id": h, "exhaustive_draw": True,
              "players": [player(s, "x", score_win=v, declined_wins=int(d)) for s, (v, d) in enumerate(pair)]
              + [player(2, "y"), player(3, "y")]} for h, pair in enumerate(spec)]
    df = shape.decline_effect(write_run(tmp_path / "run", {"v": hands}), "bot")
    d = row(df.filter(pl.col("declined").is_null()), bot="x", quantity="score_total")
    # declined 4, 6, −1 (mean 3, N₁ = 3); not 2, −2, 0, −4, 4 (mean 0, N₀ = 5): diff 3.
    # A_h = 1, 3, 0, −4; B_h = 2, −2, −4, 4; u_h = A_h/3 − B_h/5 = −1/15, 21/15, 12/15, −32/15;
    # se² = 4/3 · Σu² = 4/3 · 1610/225
    assert (d["mean"], d["n_units"], d["n_obs"]) == (3, 4, 8)
    assert d["se"] == pytest.approx(math.sqrt(4 / 3 * 1610 / 225))
    # the same number from the OLS sandwich with numpy: y = a + b·D, clustered by hand, G/(G−1) factor
    y = np.array([4, 2, -2, 6, 0, -4, -1, 4], dtype=float)
    D = np.array([1, 0, 0, 1, 0, 0, 1, 0], dtype=float)
    h = np.repeat(np.arange(4), 2)
    X = np.column_stack([np.ones(8), D])
    bread = np.linalg.inv(X.T @ X)
    beta = bread @ X.T @ y
    e = y - X @ beta
    meat = sum(np.outer(X[h == g].T @ e[h == g], X[h == g].T @ e[h == g]) for g in range(4))
    V = 4 / 3 * bread @ meat @ bread
    assert beta[1] == pytest.approx(3) and d["se"] == pytest.approx(math.sqrt(V[1, 1]))
    # what the independent-groups formula gave: se₁² = 13/3 (one per hand), se₀² = 4/3 · 40/25 — too small here
    yes = row(df.filter(pl.col("declined") == True), bot="x", quantity="score_total")  # noqa: E712
    no = row(df.filter(pl.col("declined") == False), bot="x", quantity="score_total")  # noqa: E712
    assert (yes["se"] ** 2, no["se"] ** 2) == pytest.approx((13 / 3, 4 / 3 * 40 / 25))
    assert math.hypot(yes["se"], no["se"]) < d["se"] - 0.5
