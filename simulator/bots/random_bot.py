"""``random``: a uniformly random legal discard; wins whenever it may; never claims or kongs.

Its 换三张 suit is random among the suits holding at least three tiles (three random tiles of it) and its
定缺 suit is uniform. It is the floor against which the other bots are measured, so it does no 花猪 avoidance
beyond what the strict discard rule forces.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import suit_count
from simulator.kernel.rng import randbelow
from simulator.kernel.state import N_KINDS


@njit(cache=True, _nrt=False)
def random_exchange(conc, rng, out) -> None:
    """Three random tiles of a random suit holding at least three."""
    ok = 0
    for s in range(3):
        if suit_count(conc, s) >= 3:
            ok += 1
    pick = randbelow(rng, ok)
    suit = -1
    for s in range(3):
        if suit_count(conc, s) >= 3:
            if pick == 0:
                suit = s
                break
            pick -= 1
    for i in range(3):
        n = suit_count(conc, suit)
        j = randbelow(rng, n)
        for r in range(9):
            k = 9 * suit + r
            if j < conc[k]:
                out[i] = k
                conc[k] -= 1
                break
            j -= conc[k]
    for i in range(3):
        conc[out[i]] += 1


@njit(cache=True, _nrt=False)
def random_void(rng) -> int:
    return randbelow(rng, np.int64(3))  # np.int64: no extra compiled copy for a literal


@njit(cache=True, _nrt=False)
def random_discard(conc, legal, rng) -> int:
    """A uniformly random tile (not kind) among the legal kinds."""
    n = 0
    for k in range(N_KINDS):
        if (legal >> k) & 1:
            n += conc[k]
    j = randbelow(rng, n)
    for k in range(N_KINDS):
        if (legal >> k) & 1:
            if j < conc[k]:
                return k
            j -= conc[k]
    return -1


# ---- its decisions at the table (simulator.rules.bot_table.DECISIONS; wins and declares as greedy: always, never) ----
@njit(cache=True, inline="always")
def seat_exchange(game, st, seat, out) -> None:
    random_exchange(st.conc[seat], st.rngs[1 + seat:2 + seat], out)


@njit(cache=True, inline="always")
def seat_void(game, st, bpar, seat):
    return random_void(st.rngs[1 + seat:2 + seat])


@njit(cache=True, inline="always")
def seat_discard(game, st, bpar, seat, void, legal):
    return random_discard(st.conc[seat], legal, st.rngs[1 + seat:2 + seat])


@njit(cache=True, inline="always")
def seat_claim(game, st, bpar, seat, void, tile, can_pung, can_kong):
    return 0  # never claims


@njit(cache=True, inline="always")
def seat_self_kong(game, st, bpar, seat, void, opts):
    return -1  # never kongs
