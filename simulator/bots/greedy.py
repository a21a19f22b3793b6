"""``greedy`` (the default bot): 定缺 the cheapest suit to drop; discard to minimise 缺一门 shanten, ties broken
by acceptance (unseen tiles that would improve the hand); pung/kong when that does not worsen shanten; always
wins. ``value`` and ``defensive`` fall back on these functions whenever their own concern does not apply."""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import (
    BIG,
    NO_TILE,
    connectivity,
    discard_shantens,
    pick_among,
    plan_void,
    shanten_after_claim,
    shanten_after_self_kong,
    suit_count,
)
from simulator.bots.seat import own_ckongs
from simulator.kernel.shape import hand_tiles, shanten
from simulator.kernel.state import N_KINDS


@njit(cache=True, _nrt=False)
def greedy_discard(table, hand, legal, visible, sh_buf) -> int:
    """Discard minimising 缺一门 shanten, ties broken by :func:`pick_among` (``hand``: a
    :class:`~simulator.kernel.shape.HandTiles`)."""
    conc, mk, mt, nm, void = hand
    best = discard_shantens(table, conc, mk, mt, nm, void, legal, sh_buf)
    cand = np.int64(0)  # not the literal 0: numba would compile pick_among once more for it
    for k in range(N_KINDS):
        if sh_buf[k] == best:
            cand |= 1 << k
    return pick_among(table, hand, cand, best, visible)


@njit(cache=True, _nrt=False)
def greedy_claim(table, hand, tile, can_pung, can_kong) -> int:
    """0 = pass, 1 = pung, 2 = exposed kong: claim when it does not worsen shanten (kong preferred)."""
    conc, mk, mt, nm, void = hand
    sh = shanten(table, conc, mk, mt, nm, void)
    if can_kong and shanten_after_claim(table, conc, mk, mt, nm, void, tile, np.bool_(True)) <= sh:
        return 2
    if can_pung and shanten_after_claim(table, conc, mk, mt, nm, void, tile, np.bool_(False)) <= sh:
        return 1
    return 0


@njit(cache=True, _nrt=False)
def greedy_self_kong(table, hand, opts) -> int:
    """The first kong among ``opts`` that does not worsen shanten, or ``NO_TILE``."""
    conc, mk, mt, nm, void = hand
    if opts == 0:
        return NO_TILE
    sh = shanten(table, conc, mk, mt, nm, void)
    for k in range(N_KINDS):
        if (opts >> k) & 1 and shanten_after_self_kong(table, conc, mk, mt, nm, void, k) <= sh:
            return k
    return NO_TILE


@njit(cache=True, _nrt=False)
def greedy_exchange(conc, out) -> None:
    """换三张: three tiles of the suit with the fewest tiles (at least three), the least connected first.
    Ties between suits go to the one whose tiles are less connected in total."""
    best_s = -1
    best_n = BIG
    best_c = BIG
    for s in range(3):
        n = suit_count(conc, s)
        if n < 3:
            continue
        c = 0
        for r in range(9):
            k = 9 * s + r
            if conc[k] > 0:
                c += conc[k] * connectivity(conc, k)
        if n < best_n or (n == best_n and c < best_c):
            best_s, best_n, best_c = s, n, c
    for i in range(3):
        pick = -1
        pick_c = BIG
        for r in range(9):
            k = 9 * best_s + r
            if conc[k] > 0:
                c = connectivity(conc, k)
                if c < pick_c:
                    pick, pick_c = k, c
        out[i] = pick
        conc[pick] -= 1
    for i in range(3):
        conc[out[i]] += 1


# ---- its decisions at the table (simulator.rules.bot_table.DECISIONS; the dispatchers of simulator.bots call them) ---
@njit(cache=True, inline="always")
def seat_exchange(game, st, seat, out) -> None:
    greedy_exchange(st.conc[seat], out)


@njit(cache=True, inline="always")
def seat_void(game, st, bpar, seat):
    return plan_void(game.table, st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat])


@njit(cache=True, inline="always")
def seat_discard(game, st, bpar, seat, void, legal):
    conc, mk, mt, nm, visible = st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], st.visible
    own_ckongs(visible, mk, mt, nm, 1)
    t = greedy_discard(game.table, hand_tiles(conc, mk, mt, nm, void), legal, visible, st.sh_buf)
    own_ckongs(visible, mk, mt, nm, -1)
    return t


@njit(cache=True, inline="always")
def seat_claim(game, st, bpar, seat, void, tile, can_pung, can_kong):
    return greedy_claim(game.table, hand_tiles(st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], void), tile,
                        can_pung, can_kong)


@njit(cache=True, inline="always")
def seat_self_kong(game, st, bpar, seat, void, opts):
    return greedy_self_kong(game.table, hand_tiles(st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], void), opts)


@njit(cache=True, inline="always")
def seat_takes_win(game, st, bpar, seat, tile, capped_fan, self_draw):
    return True  # always wins


@njit(cache=True, inline="always")
def seat_declares(game, st, bpar, seat, void, waits):
    return 0  # never declares 唱歌/跳舞 (a baseline)
