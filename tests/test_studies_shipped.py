"""Every arm of a shipped study plays a different game from its baseline (issue 8).

Two rule sets can differ in YAML and still play the same game: ``huazhu_penalty: cap`` is 16 under a 4-fan cap,
a cap above the largest reachable fan is no cap, a bot parameter that the seated bot does not read changes
nothing. So the comparison is on what the engine and the analysis actually read: the rule vector
(:meth:`RuleSet.to_arrays`) with those values resolved, the bots with the parameters they use, and the
analysis-time economy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator import rules as R
from simulator.kernel.settlement import huazhu_penalty
from simulator.run.study import STUDY_DIR, load_study, study_variants


def effective(rules: R.RuleSet, duplicate: bool) -> tuple:
    """What the game depends on, with equivalent spellings made equal."""
    p = rules.to_arrays()
    p[R.SLOT["settlement.huazhu_penalty"]] = huazhu_penalty(p)
    max_fan, _ = R.log_bounds(rules)
    cap, no_cap = R.SLOT["scoring.cap"], R.code("scoring.cap", None)
    if p[cap] != no_cap and p[cap] >= max_fan:
        p[cap] = no_cap  # a cap no hand can reach
    seats = []
    for spec in rules.seats:
        seats.append((spec.bot, tuple(spec.to_row().tolist())))  # its own bot's parameters (simulator.rules.bot_table)
    if duplicate:  # every seat plays every deal: only the multiset of bots matters
        seats.sort()
    return tuple(p.tolist()), tuple(seats), rules.economy.room_factor, rules.economy.rake, rules.session


@pytest.mark.parametrize("path", sorted(STUDY_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_arm_differs_from_its_baseline(path: Path):
    study, _ = load_study(path)
    variants = study_variants(study, path)
    by_pop: dict = {}  # with populations, each arm against the baseline of its own population
    for v in variants:
        by_pop.setdefault(v.source.get("population"), []).append(v)
    for base, *arms in by_pop.values():
        assert arms
        want = effective(base.rules, study.duplicate)
        for arm in arms:
            assert effective(arm.rules, study.duplicate) != want, f"{path.name}: {arm.name} plays the baseline's game"


def test_the_comparison_sees_through_equivalent_spellings():
    """The check above would catch the old huazhu study: `cap` under a 4-fan cap is the 16× baseline."""
    sixteen = R.load_rules("huazhu_16x")
    cap = R.load_rules("huazhu_cap")
    assert sixteen.settlement.huazhu_penalty != cap.settlement.huazhu_penalty
    assert effective(sixteen, False) == effective(cap, False)
    assert effective(R.load_rules("chengdu", {"scoring.cap": 30}), False) == effective(
        R.load_rules("chengdu", {"scoring.cap": None}), False)
    assert effective(R.load_rules("chengdu", {"seats": [{"bot": "greedy", "decline_below": 5}] * 4}), False) == \
        effective(R.load_rules("chengdu"), False)
    assert effective(R.load_rules("chengdu", {"settlement.huazhu_penalty": 8}), False) != \
        effective(R.load_rules("chengdu"), False)
