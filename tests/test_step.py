"""The step path: the compiled engine paused at Python-played seats is the batch path, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from simulator import agents, engine, hands
from simulator.hands import game
from simulator.hands.compiled_rules import CompiledTable
from simulator.kernel import state
from simulator.logs import records
from simulator.rules import load_rules

MIXES = [
    ("chengdu", ["greedy", "greedy", "value", "greedy"], {0: agents.GreedyBot(), 2: agents.ValueBot()}),
    ("chengdu", ["greedy"] * 4, {b: agents.GreedyBot() for b in range(4)}),
    ("exchange_three", ["value", "greedy", "random", "greedy"], {0: agents.ValueBot(), 3: agents.GreedyBot()}),
    ("huazhu_8x", ["greedy", "random", "value", "value"], {0: agents.GreedyBot(), 3: agents.ValueBot()}),
    ("forced_last_four", ["greedy", "value", "greedy", "defensive"], {1: agents.ValueBot()}),
    ("xueliu", ["greedy", "value", "defensive", "expert"], {0: agents.GreedyBot(), 1: agents.ValueBot()}),
]


def _same(a, b) -> None:
    for key, arr in a.arrays().items():
        assert np.array_equal(np.asarray(arr), np.asarray(getattr(b, key))), key


@pytest.mark.parametrize("config,seats,wrapped", MIXES)
def test_python_wrappers_of_compiled_bots_give_the_same_log_byte_for_byte(config, seats, wrapped):
    rules = load_rules(config, {"seats": seats})
    ids = np.arange(48)
    batch = hands.run_batch(rules, ids, 11, duplicate=True, record=True)
    step = game.play_hands(rules, ids, 11, wrapped, duplicate=True, record=True)
    _same(batch, step)
    cols_a, cols_b = records.to_columns(batch, encoded=True), records.to_columns(step, encoded=True)
    for table in cols_a:
        for name, col in cols_a[table].items():
            other = cols_b[table][name]
            if isinstance(col, records.Coded):
                assert np.array_equal(col.codes, other.codes) and col.names == other.names, name
            elif hasattr(col, "equals"):
                assert col.equals(other), name
            else:
                assert np.array_equal(col, other), name


def test_no_external_seat_plays_the_whole_hand_without_pausing():
    rules = load_rules("chengdu", {"seats": ["greedy"] * 4})
    hand = game.Hand(CompiledTable.of(rules), ())
    wall, bots = engine.deal_seeds(3, np.arange(1))
    hand.deal(wall[0], bots[0], 0)
    assert hand.advance() is None and hand.over


def test_decision_points_name_seat_kind_and_legal_actions():
    rules = load_rules("chengdu", {"seats": ["greedy"] * 4})
    hand = game.Hand(CompiledTable.of(rules), (1,))
    wall, bots = engine.deal_seeds(5, np.arange(1))
    hand.deal(wall[0], bots[0], 0)
    kinds = []
    while (d := hand.advance()) is not None:
        assert d.seat == 1 and d.legal and d.kind in state.DECISIONS
        obs = agents.observe(hand, d)
        if d.kind == "discard":
            held = {k for k in range(27) if obs.hand[k] > 0}
            assert set(obs.legal_actions) <= held
            assert obs.hand.sum() % 3 == 2  # the seat holds its drawn tile when it discards
        kinds.append(d.kind)
        hand.apply(d.legal_actions[0])
    assert kinds[0] == "void" and "discard" in kinds


def test_an_illegal_action_is_a_clear_error_and_changes_nothing():
    rules = load_rules("chengdu", {"seats": ["greedy"] * 4})
    hand = game.Hand(CompiledTable.of(rules), (2,), record=True)
    wall, bots = engine.deal_seeds(9, np.arange(1))
    hand.deal(wall[0], bots[0], 1, label="77")
    while (d := hand.advance()).kind != "discard":
        hand.apply(d.legal_actions[0])
    before = [a.copy() for a in hand.st]
    bad = next(a for a in range(27) if not (d.legal >> a) & 1)
    hand.apply(bad)
    with pytest.raises(game.IllegalActionError, match=rf"hand 77: seat 2 answered discard with illegal action {bad}"):
        hand.advance()
    again = hand.advance()  # the same decision again, the state untouched
    assert again == d
    for x, y in zip(before, hand.st, strict=True):
        assert np.array_equal(x, y)
    hand.apply(d.legal_actions[0])
    while (d := hand.advance()) is not None:
        hand.apply(d.legal_actions[0])
    assert hand.over


def test_observation_hides_other_seats_concealed_kongs_and_is_read_only():
    rules = load_rules("chengdu", {"seats": ["greedy"] * 4})
    seen_hidden = False
    for seed in range(40):
        hand = game.Hand(CompiledTable.of(rules), (0,), record=True)
        wall, bots = engine.deal_seeds(seed, np.arange(1))
        hand.deal(wall[0], bots[0], 0)
        while (d := hand.advance()) is not None:
            obs = agents.observe(hand, d)
            with pytest.raises(ValueError, match="read-only"):
                obs.hand[0] = 1
            for q, melds in enumerate(obs.melds):
                for i, (kind, tile) in enumerate(melds):
                    if kind == "concealed_kong" and q != 0:
                        assert tile == -1
                        kind_in_kong = int(hand.st.mt[q][i])  # the engine's meld tiles (not public)
                        assert obs.visible[kind_in_kong] == 0  # all four copies are face down in the kong
                        seen_hidden = True
            hand.apply(agents.GreedyBot().act(obs))
        if seen_hidden:
            break
    assert seen_hidden


def test_observations_see_the_discards_also_when_the_batch_records_no_events():
    seen = []

    class Watcher(agents.GreedyBot):
        def discard(self, obs):
            seen.append((obs.tiles_left, len(obs.discards), obs.hand.sum()))
            return super().discard(obs)

    rules = load_rules("chengdu", {"seats": ["greedy"] * 4})
    game.play_hands(rules, np.arange(4), 2, {1: Watcher()}, record=False)
    late = [n for left, n, _ in seen if left < 30]
    assert late and min(late) > 0
    assert all(held % 3 == 2 for _, _, held in seen)
