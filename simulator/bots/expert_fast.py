"""Incremental acceptance for the expert: the same count as :func:`simulator.bots.common.acceptance`, faster.

The expert counts acceptance for every candidate discard, about a hundred shanten evaluations per turn. With a
declared (or planned) void suit, drawing a kind changes one kept suit's table key by 5^rank and one kind's
pair/odd count, so each draw is priced from the two kept keys without recomputing the whole hand.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import acceptance, unseen
from simulator.evaluate import _meld_suits, _two_suit_distance, seven_pairs_distance


@njit(cache=True)
def suit_key(conc, s) -> int:
    """Table key of suit ``s``: Σ count[rank] · 5^rank."""
    key = 0
    for r in range(8, -1, -1):
        key = key * 5 + np.int64(conc[9 * s + r])
    return key


@njit(cache=True)
def fast_acceptance(table, conc, mk, mt, nm, void, sh, visible, draws) -> int:
    """Unseen tiles among the kinds ``draws`` that lower the shanten ``sh`` of this 13-tile-shaped hand
    (identical to :func:`~simulator.bots.common.acceptance`; falls back on it without a usable void suit)."""
    if void < 0 or (_meld_suits(mt, nm) >> void) & 1:
        return acceptance(table, conc, mk, mt, nm, void, sh, visible, draws)
    sa = 1 if void == 0 else 0
    sb = 1 if void == 2 else 2
    ka = suit_key(conc, sa)
    kb = suit_key(conc, sb)
    need = 4 - nm
    pairs = singles = 0
    if nm == 0:
        for r in range(9):
            for s in (sa, sb):
                c = np.int64(conc[9 * s + r])
                pairs += c >> 1
                singles += c & 1
    acc = 0
    step = 1
    for r in range(9):
        for s in (sa, sb):
            k = 9 * s + r
            if not (draws >> k) & 1 or conc[k] >= 4:
                continue
            u = unseen(conc, visible, k)
            if u == 0:
                continue
            if s == sa:
                dist = _two_suit_distance(table, ka + step, kb, need)
            else:
                dist = _two_suit_distance(table, ka, kb + step, need)
            if nm == 0:
                c = np.int64(conc[k])
                odd = c & 1
                sp = seven_pairs_distance(pairs + odd, singles + 1 - 2 * odd)
                if sp < dist:
                    dist = sp
            if dist - 1 < sh:
                acc += u
        step *= 5
    return acc
