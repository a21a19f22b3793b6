"""benchmarks/declines.py, which measures issue 34's "declines with one opponent left": what it reads off the event
log must be what the hand paid, and its count of opponents in must follow the wins."""

from __future__ import annotations

import sys
from pathlib import Path

from simulator.kernel import state as S
from simulator.kernel.scoring import points_of
from simulator.rules import load_rules

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import declines  # noqa: E402  (a benchmark script, importable from its folder)
from table_states import recorded_hands  # noqa: E402

sys.path.remove(str(BENCH))


def test_the_payments_read_from_the_events_are_the_scores():
    """Summed from a seat's EV_PAY events, a hand's payments are its logged score (settlement included)."""
    rules = load_rules("chengdu", ["seats=[expert, greedy, greedy, greedy]"])
    n = 0
    for _hid, _dealt, events, players in recorded_hands(rules, 60, 3):
        for seat in range(S.N_SEATS):
            paid = sum((ev[3] if ev[4] == seat else 0) - (ev[3] if ev[1] == seat else 0)
                       for ev in events if ev[0] == S.EV_PAY)
            assert paid == players["score_total"][seat]
            n += 1
    assert n == 240


def test_a_decline_is_counted_with_the_opponents_still_in_and_what_followed():
    params = load_rules("chengdu").to_arrays()
    fan = 2
    events = [
        (S.EV_WIN, 1, 5, 0, S.WK_SELF_DRAW, 0),          # seat 1 is out
        (S.EV_PAY, 2, 0, 4, 1, 0),                        # before the decline: not counted
        (S.EV_DECLINE, 0, 7, fan, S.WK_DISCARD, 0),
        (S.EV_PAY, 2, 0, 8, 0, 0),                        # seat 0 receives 8
        (S.EV_PAY, 0, 0, 3, 3, 0),                        # and pays 3
        (S.EV_DECLINE, 2, 7, fan, S.WK_DISCARD, 0),       # another seat's decline: not seat 0's
    ]
    assert declines.earned(events, params, 0) == [(2, 5 - float(points_of(fan, params)))]
    assert declines.earned(events, params, 2) == [(2, 0.0 - float(points_of(fan, params)))]
    assert declines.earned(events, params, 3) == []
