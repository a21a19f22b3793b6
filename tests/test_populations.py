"""Issue 49: players, not seats — populations as a study dimension, who wins by kind of player, and whether the
verdict depends on who plays (the variant × population interaction, in the first screen's Holm family)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis import cells
from analysis.load import open_run
from analysis.populations import interaction_test, robustness
from analysis.summary import SYMMETRY
from simulator.errors import UserError
from simulator.run.study import (
    DEFAULT_POPULATIONS,
    StudyError,
    load_study,
    population_choice,
    study_variants,
    with_populations,
)
from xuezhan import run_study

# ---------------------------------------------------------------------------------------------------------
# The interaction test's size and power (synthetic per-unit changes: the test is a function of them only)


def _aa_draws(rng: np.random.Generator, n: int, pops: int) -> np.ndarray:
    """Per-unit changes of ``pops`` populations under H0 (same rules, the same bots, the same walls): the rule acts
    on a wall for every population alike (mostly: their random streams differ), with a deal effect shared by every
    population and play noise of its own, heavy-tailed and mostly zero like paired score differences. The shared
    part is what a test treating the populations as independent gets wrong (its size falls to about 0.5%)."""
    shared = rng.standard_t(4, size=(n, 1))
    acts = (rng.random((n, 1)) < 0.15) & (rng.random((n, pops)) < 0.8)
    return np.where(acts, shared + 0.7 * rng.standard_t(5, size=(n, pops)) + 0.05, 0.0)


@pytest.mark.parametrize("pops", [2, 4])
def test_interaction_test_keeps_its_size_on_aa_populations(pops):
    """False-positive rate at α = 0.05 within three Monte Carlo SEs of 5% (2,000 A/A replicates)."""
    rng = np.random.default_rng(49 + pops)
    reps = 2000
    p = np.array([interaction_test(_aa_draws(rng, 600, pops))[2] for _ in range(reps)])
    rate, mc_se = float((p < 0.05).mean()), np.sqrt(0.05 * 0.95 / reps)
    assert abs(rate - 0.05) < 3 * mc_se, (rate, mc_se)


def test_interaction_test_finds_a_population_that_cannot_react():
    """One population's change is zero on every unit (greedy under a cap), the other's is not."""
    rng = np.random.default_rng(7)
    d = _aa_draws(rng, 600, 2)
    d[:, 0] = 0.0
    d[:, 1] += 2.0 * (d[:, 1] != 0)
    t2, k, p = interaction_test(d)
    assert k == 1 and p < 1e-4
    assert interaction_test(np.zeros((50, 3))) is None  # nothing differs between populations: no test


def test_interaction_test_equals_the_paired_t_test_for_two_populations():
    rng = np.random.default_rng(3)
    d = rng.normal(size=(200, 2))
    c = d[:, 1] - d[:, 0]
    t = c.mean() / (c.std(ddof=1) / np.sqrt(len(c)))
    t2, k, p = interaction_test(d)
    assert t2 == pytest.approx(t * t) and k == 1
    from analysis.rare import t_sf2
    assert p == pytest.approx(t_sf2(t, len(c) - 1))


def _rows(pops: dict[str, tuple[float, float, int]]) -> pl.DataFrame:
    return pl.DataFrame([{"population": p, "diff": d, "p_holm": ph, "n_differ": k} for p, (d, ph, k) in pops.items()])


def test_robustness_lines_say_holds_reverses_only_and_cannot_react():
    assert robustness(_rows({"a": (0.1, 0.001, 50), "b": (0.2, 0.01, 40)}), {"p_holm": 0.4}, 2).startswith(
        "holds in 2 of 2 populations (up")
    assert robustness(_rows({"a": (0.1, 0.001, 50), "b": (-0.2, 0.01, 40), "c": (0.1, 0.02, 9)}), {"p_holm": 0.001},
                      3).startswith("depends on who plays: up with a, c, reverses with b")
    assert robustness(_rows({"strong": (0.1, 0.001, 50), "casual": (0.01, 0.6, 40)}), {"p_holm": 0.01},
                      2).startswith("depends on who plays: only significant with strong")
    line = robustness(_rows({"strong": (0.1, 0.001, 50), "greedy": (0.0, None, 0)}), {"p_holm": 0.001}, 2)
    assert line.startswith("depends on who plays: significant with strong; with greedy nothing differs")


# ---------------------------------------------------------------------------------------------------------
# The study file


def _study(**extra) -> dict:
    return {"name": "pop", "baseline": {"name": "cap4", "rules": "chengdu"},
            "variants": [{"name": "cap1", "rules": "chengdu", "set": {"scoring.cap": 1}}], "hands": 40, **extra}


def test_populations_cross_every_arm_and_are_recorded_as_cells():
    study, where = load_study(_study(populations={"greedy": ["greedy"] * 4, "mixed": ["greedy", "value"] * 2}))
    names = [v.name for v in study_variants(study, where)]
    assert names == ["cap4.greedy", "cap1.greedy", "cap4.mixed", "cap1.mixed"]
    default, _ = load_study(_study(populations="default"))
    assert [v.name for v in study_variants(default, where)][::2] == [f"cap4.{p}" for p in DEFAULT_POPULATIONS]


@pytest.mark.parametrize("bad, words", [
    ({"seats": ["greedy"] * 4, "populations": {"a": ["greedy"] * 4}}, "seats or populations, not both"),
    ({"populations": {}}, "at least one population"),
    ({"populations": {"9x": ["greedy"] * 4}}, "populations"),
    ({"populations": {"a": ["greedy"] * 3}}, "seats"),
])
def test_bad_populations_are_one_clear_line(bad, words):
    with pytest.raises(UserError) as err:
        study, where = load_study(_study(**bad))
        study_variants(study, where)
    assert words in str(err.value) and "\n" not in str(err.value).strip()


def test_populations_are_selected_or_replaced_from_the_api_and_the_cli():
    study, where = load_study(_study(seats=["greedy"] * 4))
    picked = with_populations(study, "strong, greedy", where)
    assert list(picked.populations) == ["strong", "greedy"] and picked.seats is None
    assert with_populations(study, {"pros": ["expert", "expert", "value", "value"]}, where).populations == {
        "pros": ["expert", "expert", "value", "value"]}
    with pytest.raises(StudyError, match="no population 'nobody'"):
        with_populations(study, ["nobody"], where)
    choice = population_choice(_study(populations={"a": ["greedy"] * 4}), None, ["b=[value, value, greedy, greedy]"])
    assert choice == {"a": None, "b": ["value", "value", "greedy", "greedy"]}
    with pytest.raises(StudyError, match="expected NAME=SEATS"):
        population_choice(_study(), "strong", ["b=notalist"])


def test_an_unknown_headline_metric_is_refused_before_simulating(tmp_path):
    with pytest.raises(UserError, match="headline: no hand metric 'score'"):
        run_study(_study(headline=["score"]), out_dir=tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------------------------------------
# End to end: a cap one population reacts to and another cannot


@pytest.fixture(scope="module")
def capdep(tmp_path_factory) -> Path:
    """cap 1 against cap 4: experts stop chasing big hands and stop declining wins for bigger ones, greedy bots
    play exactly as before (only payments change)."""
    out = tmp_path_factory.mktemp("pop") / "run"
    study = _study(populations={"greedy": ["greedy"] * 4, "mixed": ["expert", "greedy", "expert", "greedy"],
                                "strong": ["expert"] * 4}, headline=["declined wins", "wins ≥ 2 fan"], hands=800,
                   seed=5)
    run_study(study, out_dir=out, jobs=1, progress=False)
    return out


def test_cells_pair_each_arm_with_the_baseline_of_its_population(capdep):
    run = open_run(capdep)
    record = json.loads((capdep / "study.json").read_text())
    assert record["populations"]["strong"] == ["expert"] * 4 and record["baseline"] == "cap4.greedy"
    assert cells.comparisons(run, run.baseline) == [("cap4.greedy", "cap1.greedy"), ("cap4.mixed", "cap1.mixed"),
                                                   ("cap4.strong", "cap1.strong")]


def test_a_population_that_cannot_react_is_reported_as_depending_on_who_plays(capdep):
    text = (capdep / "report.md").read_text(encoding="utf-8")
    first = "\n".join(text.splitlines()[:40])
    declines = next(line for line in first.splitlines() if line.strip().startswith("• declined wins"))
    assert "depends on who plays: significant with mixed, strong; with greedy nothing differs" in declines
    assert "Does it depend on who plays?" in first and "Who wins, by kind of player" in text
    assert "| cap1 | mixed | expert |" in text and "| cap1 | mixed | greedy |" in text  # kinds, mixed only
    assert "| cap1 | greedy | greedy |" not in text and "| cap1 | strong | expert |" not in text
    assert "In greedy, strong every seat plays the same bot" in first
    assert "Position advantage" in text


def test_identical_seats_say_zero_by_symmetry_and_show_no_seat_table(tmp_path):
    study = _study(seats=["greedy"] * 4, hands=200)
    run_study(study, out_dir=tmp_path / "run", jobs=1, progress=False)
    text = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    summary = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert SYMMETRY.format(bots="greedy").replace("\n", " ") in summary.replace("  \n", " ")
    assert "Who wins" not in summary and "| seat 0 |" not in summary
    assert "Position advantage" in summary
