"""``defensive``: greedy until danger, then it avoids discarding tiles likely to complete an opponent.

Defence starts once any player has won, or once the wall holds at most ``defend_wall`` tiles while an
opponent still in shows a meld. The danger of a tile is summed over the opponents still in, each weighted by
1 + its melds set down. Against one opponent a tile is safe (0) when
- it is of that opponent's dead suit (its declared void; under ``void_suit: none`` the suit missing from two
  suits of face-up melds it has set down: a 暗杠 is face down, its suit unknown), or
- someone discarded that kind since the opponent's last draw and it did not win on it (现物-like);
1 for a kind the opponent once discarded itself (no furiten here, but bots rarely wait on what they let go);
else 3 for ranks 3–7, 2 for ranks 2 and 8, 1 for terminals, minus 1 when the opponent has discarded the
tile three ranks away in the same suit (筋-like), never below 1.
While the bot is close (best shanten ≤ 1) it keeps its best shanten and picks the safest of those discards;
further away it folds: the safest legal tile, then the lower shanten.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import BIG, NO_TILE, connectivity, discard_shantens, face_up, pick_among
from simulator.bots.declare import seat_declares as seat_declares  # declares 唱歌/跳舞 by the value of its waits
from simulator.bots.greedy import greedy_claim, greedy_discard, greedy_self_kong
from simulator.kernel.state import (
    G_NWON,
    N_KINDS,
    N_SEATS,
    PS_DISCARDED,
    PS_SAFE,
    PS_VOID,
    PS_WON,
    VOID_NONE,
    void_rule,
)
from simulator.rules.bot_table import slot

DEFEND_WALL = slot("defensive", "defend_wall")  # its parameter's slot in the seat's row (simulator.rules.bot_table)

FOLD_SHANTEN = 1  # defending, a bot further than this from ready (after the discard) folds


@njit(cache=True, _nrt=False)
def dead_suit(params, ps, mk, mt, nm, q) -> int:
    """The suit opponent q can be seen not to win with (from its face-up melds), or −1."""
    if void_rule(params) != VOID_NONE:
        return ps[q, PS_VOID]
    used = 0
    for i in range(nm[q]):
        t = face_up(mk, mt, q, i)
        if t >= 0:
            used |= 1 << (t // 9)
    if used == 3:
        return 2
    if used == 5:
        return 1
    if used == 6:
        return 0
    return -1


@njit(cache=True, _nrt=False)
def tile_danger(params, ps, mk, mt, nm, seat, k) -> int:
    """Summed danger of discarding kind k (see the module docstring)."""
    r = k % 9
    base = 3 if 2 <= r <= 6 else (2 if r == 1 or r == 7 else 1)
    total = 0
    for q in range(N_SEATS):
        if q == seat or ps[q, PS_WON]:
            continue
        if k // 9 == dead_suit(params, ps, mk, mt, nm, q) or (ps[q, PS_SAFE] >> k) & 1:
            continue
        d = base
        if (ps[q, PS_DISCARDED] >> k) & 1:  # it let this kind go once: unlikely (not impossible) to wait on it
            d = 1
        suji = ((r >= 3 and (ps[q, PS_DISCARDED] >> (k - 3)) & 1) or
                (r <= 5 and (ps[q, PS_DISCARDED] >> (k + 3)) & 1))
        if suji and d > 1:
            d -= 1
        total += d * (1 + nm[q])
    return total


@njit(cache=True, _nrt=False)
def defending(n_won, ps, nm, seat, tiles_left, defend_wall) -> bool:
    if n_won > 0:
        return True
    if tiles_left > defend_wall:
        return False
    for q in range(N_SEATS):  # noqa: SIM110 (numba compiles no generator expressions)
        if q != seat and not ps[q, PS_WON] and nm[q] > 0:
            return True
    return False


@njit(cache=True, _nrt=False)
def defensive_discard(view, hand, legal, sh_buf, n_won, defend_wall) -> int:
    """The defensive discard among ``legal`` of ``hand`` (:class:`~simulator.kernel.shape.HandTiles`) seen from ``view``
    (:class:`~simulator.bots.view.SeatView`); ``n_won``: the players who have won so far (public)."""
    table, params, ps, seat, visible = view.table, view.params, view.ps, view.seat, view.visible
    mk_all, mt_all, nm_all = view.mk_all, view.mt_all, view.nm_all
    conc, mk, mt, nm, void = hand
    if not defending(n_won, ps, nm_all, seat, view.tiles_left, defend_wall):
        return greedy_discard(table, hand, legal, visible, sh_buf)
    best_sh = discard_shantens(table, conc, mk, mt, nm, void, legal, sh_buf)
    if best_sh <= FOLD_SHANTEN:  # close to winning: keep the best shanten, take the safest such discard
        least = BIG
        cand = np.int64(0)  # not the literal 0 (a second compiled copy of pick_among)
        for k in range(N_KINDS):
            if sh_buf[k] == best_sh:
                d = tile_danger(params, ps, mk_all, mt_all, nm_all, seat, k)
                if d < least:
                    least = d
                    cand = np.int64(0)
                if d == least:
                    cand |= 1 << k
        return pick_among(table, hand, cand, best_sh, visible)
    best = NO_TILE
    bd = bs = bc = BIG
    for k in range(N_KINDS):
        if (legal >> k) & 1:
            d = tile_danger(params, ps, mk_all, mt_all, nm_all, seat, k)
            c = connectivity(conc, k)
            if (d, sh_buf[k], c) < (bd, bs, bc):
                best, bd, bs, bc = k, d, sh_buf[k], c
    return best


# ---- its decisions at the table (simulator.rules.bot_table.DECISIONS; 换三张, 定缺 and wins as greedy) ---------------
# (discard, claim, kong: the view and planned hand built by the dispatcher, simulator.bots.PREPARED_ARGS)
@njit(cache=True, inline="always")
def seat_discard(view, hand, st, bpar, void, legal):
    return defensive_discard(view, hand, legal, st.sh_buf, st.g[G_NWON], bpar[DEFEND_WALL])


@njit(cache=True, inline="always")
def seat_claim(view, hand, st, bpar, void, tile, can_pung, can_kong):  # claims as greedy, with its planned hand
    return greedy_claim(view.table, hand, tile, can_pung, can_kong)


@njit(cache=True, inline="always")
def seat_self_kong(view, hand, st, bpar, void, opts):  # kongs as greedy, with its planned hand
    return greedy_self_kong(view.table, hand, opts)
