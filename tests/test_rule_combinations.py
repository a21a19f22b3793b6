"""Rules that were built separately, played together: 血流 with 唱歌/跳舞, and sessions with 血流.

Each rule has its own tests; these check that their locks, settlements and logs compose: every hand passes the
event audit (tiles conserved with set-aside winning tiles, a declared or winning hand changes only by its draw),
money is zero-sum per hand and per session, and declared winners who play on keep their declaration.
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import logs, per_hand, play

from simulator.hands import sessions
from simulator.replay import audit
from simulator.rules import load_rules

SEED = 23


@pytest.fixture(scope="module")
def dancing_xueliu():
    rules = load_rules("xueliu", {"declare_ready": "dance", "seats": ["value", "value", "greedy", "expert"]})
    return rules, play(rules, 300, SEED, record=True)[1]


def test_declared_winners_play_on_locked_and_every_hand_audits(dancing_xueliu):
    rules, cols = dancing_xueliu
    p = cols["players"]
    assert (per_hand(p["score_total"]).sum(axis=1) == 0).all()
    assert p["declared"].any()
    declared_winners = 0
    for log in logs(rules, cols, SEED):
        audit(log)  # raises on any locked hand that changes, or on lost tiles
        wins_by_seat = np.bincount([w["winner"] for w in log.wins], minlength=4)
        declared_winners += sum(1 for s in range(4) if log.players[s]["declared"] and wins_by_seat[s] >= 2)
    assert declared_winners > 0  # the combination happened: declared hands won more than once


def test_sessions_of_xueliu_hands_are_zero_sum_per_session():
    rules = load_rules("xueliu", {"session": {"hands": 4, "dealer": "first_winner", "bankroll": 60}})
    raw = sessions.run_sessions(rules, np.arange(80, dtype=np.int64), SEED)
    bank = raw.bankroll.reshape(-1, 4)
    last = raw.hand_in_session == 3
    assert last.sum() == 20
    assert np.allclose(bank[last].sum(axis=1), 4 * 60)  # what one loses the others win, over the session
    assert raw.h.shape[0] == 80
