"""The independent unit: under duplicate seating the wall (``deal_id``), not the hand.

A synthetic duplicate run in which the four seatings of each wall are byte-identical (as for an all-greedy
baseline, where rotating identical bots changes nothing) holds exactly one wall's worth of information per four
hands. Every table must count walls and give the SE of the per-wall values, not a 2× too small SE from treating
the 24 hands as independent.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import polars as pl
import pytest
from analysis_synth import player, write_run

from analysis import compare, ev, fans, risk, shape
from analysis.load import open_run
from analysis.power import units_for_power
from analysis.report import build_sections, present
from analysis.stats import cluster_bootstrap_risk, cluster_means

WALLS = 6
# seat 0's score per wall (the other seats pay / receive so each hand is zero-sum)
SEAT0 = [6, -2, 12, -6, 0, 2]


def _hands(shift: int = 0) -> list[dict]:
    hands = []
    for w, s in enumerate(SEAT0):
        for rot in range(4):
            s0 = s + (shift if w == 2 else 0)  # the variant differs on wall 2 only
            won = s0 > 0
            hands.append({"hand_id": 4 * w + rot, "deal_id": w, "rotation": rot, "exhaustive_draw": not won,
                          "players": [player(0, score_win=s0, won=won, win_order=1 if won else -1,
                                             win_kind="self_draw" if won else None, win_turn=10 if won else -1,
                                             hand_type="pinghu" if won else None, fan=0 if won else -1,
                                             capped_fan=0 if won else -1, payer=-1, n_payers=3),
                                      player(1, score_win=-s0), player(2), player(3)]})
    return hands


@pytest.fixture(scope="module")
def dup(tmp_path_factory):
    root = tmp_path_factory.mktemp("dup") / "run"
    study = {"name": "dup", "baseline": "base", "variants": ["base", "alt"], "duplicate": True}
    return open_run(write_run(root, {"base": _hands(), "alt": _hands(4)}, study=study))


def test_run_knows_its_unit(dup):
    assert (dup.duplicate, dup.cluster, dup.unit) == (True, "deal_id", "wall")


def test_means_are_clustered_by_wall(dup):
    r = ev.expected_value(dup, "seat", components=False).filter(pl.col("variant") == "base", pl.col("seat") == 0)
    r = r.row(0, named=True)
    x = np.array(SEAT0, dtype=float)
    assert (r["n_units"], r["n_hands"], r["n_obs"]) == (WALLS, 4 * WALLS, 4 * WALLS)
    assert r["mean"] == pytest.approx(x.mean())
    assert r["se"] == pytest.approx(x.std(ddof=1) / math.sqrt(WALLS))  # sd of the 6 walls / √6
    # what clustering by hand would claim: more than 2× too precise for these byte-identical rotations
    naive = cluster_means(dup.players("base").filter(pl.col("seat") == 0), ["seat"], ["score_total"])
    assert r["se"] / naive["se"][0] == pytest.approx(math.sqrt(23 * 6 / 30))


def test_paired_shares_and_risk_count_walls(dup):
    cmp = compare.paired_comparison(dup, "alt", by="seat")
    s0 = cmp.filter(pl.col("seat") == 0).row(0, named=True)
    # one wall differs (all four of its hands): one differing unit, not four
    assert (s0["n_units"], s0["n_hands"], s0["n_differ"], s0["unit"]) == (WALLS, 4 * WALLS, 1, "wall")
    assert s0["diff"] == pytest.approx(4 / WALLS) and s0["interval"] == "few differing"
    # hands needed for detect 0.1 count walls × 4 hands: a wall sums m = 4 observations of seat 0 (wall sums
    # 0, 0, 16, 0, 0, 0: se = sd/√6/m), π = 1/6, m₁ = m·d/π = 2.4, m₂ = (se²·n·m² + (m·d)²)·n/k, ρ = m₁/√m₂
    sums = np.array([0, 0, 16, 0, 0, 0], dtype=float)
    se = sums.std(ddof=1) / math.sqrt(WALLS) / 4
    assert s0["se_paired"] == pytest.approx(se)
    m2 = (se * se * WALLS * 16 + 0.4 ** 2) * WALLS
    assert s0["hands_paired"] == 4 * units_for_power(1 / WALLS, 2.4 / math.sqrt(m2))
    # unpaired, per arm: 4 × ⌈(z-sum·σ_u/d)²⌉, σ_u² = the variances of the two arms' wall means
    base, alt = np.array(SEAT0, dtype=float), np.array(SEAT0, dtype=float) + 4 * (np.arange(WALLS) == 2)
    zsum = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.80)
    var_u = base.var(ddof=1) + alt.var(ddof=1)
    assert s0["hands_unpaired"] == 4 * math.ceil(zsum ** 2 * var_u / 0.1 ** 2)
    shp = shape.game_shape(dup).filter(pl.col("variant") == "base", pl.col("metric") == "exhaustive_draw (流局)")
    assert (shp["n"][0], shp["n_units"][0]) == (4 * WALLS, WALLS)
    ht = fans.hand_type_frequencies(dup).filter(pl.col("variant") == "base", pl.col("hand_type") == "pinghu")
    assert (ht["n_units"][0], ht["n_hands"][0], ht["k_hands"][0]) == (WALLS, 4 * WALLS, 12)
    rk = risk.risk_table(dup, "seat", n_boot=100, seed=1).filter(pl.col("seat") == 0)
    assert set(rk["n_units"]) == {WALLS} and set(rk["n_hands"]) == {4 * WALLS}
    # the bootstrap resamples walls (a wall's four identical hands together): the same call on deal ids
    seat0 = dup.players("base").filter(pl.col("seat") == 0).collect()
    by_wall = cluster_bootstrap_risk(seat0["score_total"].to_numpy().astype(float), seat0["deal_id"].to_numpy(),
                                     probs=risk.PROBS, thresholds=risk.HAND_THRESHOLDS, n_boot=100,
                                     seed=np.random.SeedSequence([1, 0]))
    mean = rk.filter(pl.col("statistic") == "mean").row(0, named=True)
    assert (mean["ci_lo"], mean["ci_hi"]) == pytest.approx(by_wall["mean"][1:])


def test_report_says_walls(dup):
    sections = build_sections(dup, "base", n_boot=0, session_hands=2)
    summary = next(s for s in sections if s.title == "Summary")
    assert "Independent unit: the wall" in "".join(obj for kind, _, obj in summary.items if kind == "text")
    evsec = next(s for s in sections if s.title == "Expected value")
    table = next(obj for kind, cap, obj in evsec.items if kind == "table" and cap.startswith("By seat"))
    shown = present(table, dup)
    assert "walls" in shown.columns and "hands" in shown.columns and "n_units" not in shown.columns


def test_report_seats_show_bot_parameters_that_differ_from_defaults(tmp_path):
    from analysis.report import header_table
    from simulator.run import runner

    seats = ("seats=[{bot: expert, temperature: 0.5, defence: 1.5}, value, "
             "{bot: 'simulator.agents:RandomBot', params: {seed: 3}}, greedy]")
    spec = runner.RunSpec(hands=8, seed=1, jobs=1, progress=False)
    runner.run_variants(tmp_path, [runner.Variant.load("chengdu", None, "plain"),
                                   runner.Variant.load("chengdu", [seats], "tuned")], spec)
    run = open_run(tmp_path)
    tuned = ["expert (defence 1.5, temperature 0.5)", "value", "simulator.agents:RandomBot (seed=3)", "greedy"]
    assert run.seat_labels("plain") == ["greedy"] * 4 and run.seat_labels("tuned") == tuned
    assert header_table(run, "plain")["seats"].to_list() == [", ".join(["greedy"] * 4), ", ".join(tuned)]
