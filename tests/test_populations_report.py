"""Issue 49: the report of a study with populations keeps what a study without them shows — the dose–response of
an ordered sweep (one line-up at a time), the checks before the summary — and says whether *who wins* depends on
the line-up (the interaction test of a bot kind's change across two mixed populations, in the screen's family).
Synthetic runs in the real log schema (``analysis_synth``): every number follows from the rows written here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from analysis_synth import _base_hands, player, write_run

from analysis import cells, family, sweep
from analysis.load import open_run
from analysis.populations import screen
from analysis.report import build_sections
from analysis.screen import arm_lines
from simulator.logs.manifest import CHECKSUM, canonical_checksum

SEATS = ["expert", "greedy", "expert", "greedy"]


def _study(arms: list[str], pops: dict[str, list[str]]) -> dict:
    """study.json of a run with populations: every arm in every population, cells ``<arm>.<population>``."""
    study = {"name": "pops", "baseline": f"{arms[0]}.{next(iter(pops))}", "populations": pops, "hands": 4,
             "seed": 7, "duplicate": False,
             "variants": [{"name": f"{a}.{p}", "arm": a, "population": p} for p in pops for a in arms]}
    return {**study, CHECKSUM: canonical_checksum(study)}


def test_a_sweep_with_populations_keeps_its_dose_response_one_line_up_at_a_time(tmp_path):
    """花猪 16× (baseline) / 8× / 32× in two line-ups: each population's arms against its own baseline arm. The
    cells of the other line-up differ from the baseline only in their seats, which once hid the sweep."""
    pops = {"pa": ["greedy", "greedy", "value", "value"], "pb": ["value", "value", "greedy", "greedy"]}
    pens = {"h16": 16, "h8": 8, "h32": 32}
    root = write_run(tmp_path / "run", {f"{a}.{p}": _base_hands(pens[a]) for p in pops for a in pens},
                     overrides={f"{a}.{p}": {"void_suit": "none", "settlement": {"huazhu_penalty": pen},
                                             "seats": pops[p]} for p in pops for a, pen in pens.items()},
                     study=_study(list(pens), pops))
    run = open_run(root)
    assert sweep.sweep_rule(run, "h16.pa") == "settlement.huazhu_penalty"
    fams = {(a, b): family.paired_family(run, b, a) for a, b in cells.comparisons(run, "h16.pa")}
    dose = sweep.dose_tables(run, "h16.pa", "settlement.huazhu_penalty",
                             {b: f["metrics"] for (a, b), f in fams.items()})
    assert dose["population"].unique(maintain_order=True).to_list() == ["pa", "pb"]
    for p in pops:
        sub = dose.filter(pl.col("population") == p).sort("order")
        assert sub.unique("value", maintain_order=True)["value"].to_list() == ["8", "16", "32"]
        assert sub.filter(pl.col("baseline"))["diff"].to_list() == [0.0] * sub["metric"].n_unique()
    # the same metrics in both line-ups, so the figure's series compare like with like
    assert set(dose.filter(pl.col("population") == "pa")["metric"]) == set(dose.filter(pl.col("population") == "pb")
                                                                           ["metric"])
    sections = build_sections(run, "h16.pa", n_boot=0, session_hands=2)
    titles = [s.title for s in sections]
    assert "Dose–response: settlement.huazhu_penalty" in titles
    dose_sec = sections[titles.index("Dose–response: settlement.huazhu_penalty")]
    assert "in each population" in dose_sec.text


def _kind_run(root: Path, pb_shift: float, hands: int = 400) -> Path:
    """Arms ``base`` and ``alt`` (花猪 8×) in two mixed line-ups of experts and greedy bots, on the same hands. The
    baseline deals each seat a zero-sum score (the luck of the deal, common to every cell); ``alt`` moves
    ``s`` base units from each greedy seat to the expert beside it, ``s`` drawn per hand with mean 0.6 in ``pa``
    and ``pb_shift`` in ``pb`` (noise of its own in each line-up)."""
    rng = np.random.default_rng(11)
    deal = rng.integers(-8, 9, size=(hands, 2))
    shift = {"pa": (rng.random(hands) < 0.6).astype(int), "pb": (rng.random(hands) < pb_shift).astype(int)}

    def hand(i: int, s: int) -> dict:
        a, b = int(deal[i, 0]), int(deal[i, 1])
        scores = (a + s, -a - s, b + s, -b - s)
        return {"hand_id": i, "exhaustive_draw": True,
                "players": [player(q, SEATS[q], score_win=scores[q]) for q in range(4)]}

    variants, overrides = {}, {}
    for p in ("pa", "pb"):
        for arm in ("base", "alt"):
            variants[f"{arm}.{p}"] = [hand(i, int(shift[p][i]) if arm == "alt" else 0) for i in range(hands)]
            overrides[f"{arm}.{p}"] = {"void_suit": "none", "seats": SEATS,
                                       "settlement": {"huazhu_penalty": 8 if arm == "alt" else 16}}
    return write_run(root, variants, overrides=overrides,
                     study=_study(["base", "alt"], {"pa": SEATS, "pb": SEATS}))


def _screen(root: Path):
    run = open_run(root)
    fams = {(a, b): family.paired_family(run, b, a) for a, b in cells.comparisons(run, "base.pa")}
    return run, screen(run, "base.pa", fams)


def _kinds(scr) -> dict[str, float]:
    rows = scr.interaction.filter(pl.col("kind").is_not_null())
    return dict(zip(rows["kind"].to_list(), rows["p_holm"].to_list(), strict=True))


def test_who_wins_depending_on_the_line_up_is_tested_across_two_mixed_populations(tmp_path):
    """The experts gain 0.6 per hand from the greedy bots in one line-up and 0.1 in the other: the kinds'
    interaction tests (in the screen's Holm family) say so, and the first screen's line names it."""
    run, scr = _screen(_kind_run(tmp_path / "differ", pb_shift=0.1))
    p = _kinds(scr)
    assert set(p) == {"expert", "greedy"} and max(p.values()) < 0.001
    assert scr.tests == int(scr.kinds.height + scr.headline["p_value"].is_not_null().sum()
                            + scr.interaction["p_value"].is_not_null().sum()
                            + scr.dealer["p_value"].is_not_null().sum())
    line = next(x for x in arm_lines(scr, "alt", "", {}) if "who wins across" in x)
    assert "expert differs" in line and "greedy differs" in line
    same = _kinds(_screen(_kind_run(tmp_path / "same", pb_shift=0.6))[1])
    assert set(same) == {"expert", "greedy"} and min(same.values()) > 0.05  # the same change: no evidence


def test_with_populations_the_checks_come_before_the_summary(tmp_path):
    """No 花猪 in these hands: the 花猪 arm did not act (a finding), which the report puts first, as without
    populations."""
    run = open_run(_kind_run(tmp_path / "run", pb_shift=0.6, hands=40))
    titles = [s.title for s in build_sections(run, "base.pa", n_boot=0, session_hands=2)]
    assert titles[0].startswith("Check first") and titles[1] == "Summary"
