"""The search player's weighted deal of one seat (issue 54): a seat meant ready is dealt a ready hand that does not
wait on a kind it let pass, a seat meant not ready is a tile from ready, a kind of weight 0 is not dealt, and every
dealt tile comes out of the unseen counts."""

from __future__ import annotations

import numpy as np

from simulator import engine
from simulator.kernel import state
from simulator.kernel.shape import MELD_PUNG, shanten, wait_mask
from simulator.kernel.tables import suit_table
from simulator.search.deal import deal_seat
from simulator.search.sample import Public

Q = 1  # the seat dealt
VOID = 2  # its declared void (suit s)


def _deal(ready: float, weight=None, passed: int = 0, n: int = 13, seeds=range(60)):
    table = suit_table()
    pool0 = np.full(27, 3, np.int64)  # three unseen copies of every kind
    melds = (13 - n) // 3  # pungs of 9m, 9p, 8m, 8p set down
    kinds = (8, 17, 7, 16)[:melds]
    pool0[list(kinds)] = 1
    w = np.ones((4, 27)) if weight is None else weight
    pub = Public(pool0, np.array([-1, n, -1, -1]), np.array([-1, VOID, -1, -1]), np.array([-1, -1, -1]), w,
                 np.array([0.0, ready, 0.0, 0.0]), np.array([0, passed, 0, 0], np.int64))
    out = []
    for seed in seeds:
        st = engine.alloc(False, 3)
        st.ps[Q, state.PS_EVOID] = VOID
        st.nm[Q] = melds
        for i, k in enumerate(kinds):
            st.mk[Q, i], st.mt[Q, i] = MELD_PUNG, k
        pool = pool0.copy()
        rng = np.array([seed * 7919 + 1], np.uint64)
        assert deal_seat(table, st, Q, pool, pub, rng)
        conc = st.conc[Q].astype(np.int64)
        assert conc.sum() == n and np.array_equal(pool + conc, pool0)  # taken out of the unseen counts, once
        assert conc[9 * VOID:].sum() == 0  # none of its clean suit
        args = (table, st.conc[Q], st.mk[Q], st.mt[Q], st.nm[Q], VOID)
        out.append((conc, shanten(*args), wait_mask(*args)))
    return out


def test_a_seat_meant_ready_is_dealt_a_ready_hand_off_the_kinds_it_let_pass():
    passed = (1 << 4) | (1 << 13)  # 5m and 5p went by
    for n in (13, 7, 4, 1):
        hands = _deal(1.0, passed=passed, n=n)
        ready = [waits for _, sh, waits in hands if sh == 0]
        assert len(ready) >= 0.9 * len(hands), n
        assert all(waits & passed == 0 for waits in ready)


def test_a_seat_meant_not_ready_is_a_tile_from_ready():
    """Late in a hand nearly every seat not ready is one tile from it (benchmarks/search_profile.py): the re-deal
    gives it such a hand, not a random one (which would pay 查叫 in almost every rollout)."""
    for n in (13, 7, 4):
        shantens = [sh for _, sh, _ in _deal(0.0, n=n)]
        assert all(sh > 0 for sh in shantens), n
        assert np.mean([sh == 1 for sh in shantens]) >= 0.9, n


def test_weights_steer_the_deal():
    w = np.ones((4, 27))
    w[Q, 0:9] = 0.0  # no m tile: only p tiles left outside the void suit
    hands = _deal(0.5, weight=w)
    assert all(conc[0:9].sum() == 0 for conc, _, _ in hands)
    w = np.ones((4, 27))
    w[Q, 4] = 0.1  # 5m unlikely
    held = np.mean([conc[4] for conc, _, _ in _deal(0.0, weight=w, seeds=range(200))])
    even = np.mean([conc[4] for conc, _, _ in _deal(0.0, seeds=range(200))])
    assert held < 0.4 * even
