"""One deal plan and one compiled table (issue 48 item 4): ``compiled_rules.DealPlan`` decides every hand's ids,
seeds, dealer and seating rotation for the batch, the step path, sessions and the environments;
``CompiledTable.of`` builds a rule set's arrays once per process, not once per batch."""

from __future__ import annotations

import numpy as np

from simulator.engine import deal_seeds
from simulator.hands import compiled_rules
from simulator.hands.compiled_rules import CompiledTable, DealPlan
from simulator.rules import RuleSet, load_rules


def test_the_plan_is_the_documented_deal():
    plan = DealPlan.of(7, np.arange(8), duplicate=True)
    assert np.array_equal(plan.deal_ids, np.arange(8) // 4) and np.array_equal(plan.rotations, np.arange(8) % 4)
    wall, bots = deal_seeds(7, plan.deal_ids)
    assert np.array_equal(plan.wall_seeds, wall) and np.array_equal(plan.bot_seeds, bots)
    assert np.array_equal(plan.dealers, plan.deal_ids % 4)
    chained = DealPlan.of(7, np.arange(3), dealers=[2, 2, 0])
    assert np.array_equal(chained.dealers, [2, 2, 0]) and np.array_equal(chained.rotations, [0, 0, 0])


def test_a_rule_set_is_compiled_once_per_process(monkeypatch):
    from simulator.hands import run_batch

    monkeypatch.setattr(compiled_rules, "_BUILT", compiled_rules.OrderedDict())
    calls = []
    real = RuleSet.to_arrays
    monkeypatch.setattr(RuleSet, "to_arrays", lambda self: calls.append(1) or real(self))
    rules = load_rules("chengdu")
    for start in (0, 5, 10):  # three chunks of one variant
        run_batch(load_rules("chengdu"), np.arange(start, start + 5), 3)
    mine, again = CompiledTable.of(rules), CompiledTable.of(load_rules("chengdu"))
    assert len(calls) == 1 and mine.params is again.params and mine.bot_par is again.bot_par  # built once
    assert mine.rules is rules  # each caller keeps its own rule set object (what its observations carry)
    other = CompiledTable.of(load_rules("chengdu", ["scoring.cap=3"]))
    assert len(calls) == 2 and other.params is not mine.params


def test_the_step_path_and_the_environment_deal_as_the_batch():
    from simulator.agents.env import XuezhanEnv
    from simulator.hands import run_batch

    raw = run_batch(load_rules("chengdu"), np.arange(3), 4, record=True)
    env = XuezhanEnv("chengdu", seats=(None, "greedy", "greedy", "greedy"), seed=4)
    for h in range(3):
        env.reset(options={"hand_id": h})
        assert np.array_equal(env.hand.st.dealt, raw.dealt[4 * h:4 * h + 4])


def test_the_win_rows_follow_the_one_decision_of_the_win_capacity():
    """The batch's starting win rows come from the compiled ``win_slots`` (the one place the mode decides how many
    wins a hand can record), not from the mode's name a second time."""
    from simulator import engine
    from simulator.kernel import state

    for config, slots in (("chengdu", state.MAX_WINS), ("xueliu", state.MAX_WINS_XUELIU)):
        table = CompiledTable.of(load_rules(config))
        assert table.win_slots == slots
        assert table.rows_per_hand == min(slots, engine.buffers.XUELIU_ROWS_PER_HAND)
