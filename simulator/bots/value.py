"""``value``: greedy, but it steers toward 清一色 / 七对 / 对对胡 when such a shape is close, and declines cheap
discard wins early in the hand — so that 过水不胡 (``pass_ron_lock``) and 最后N张必胡 have something to act on.

- Target: among 清一色 (either kept suit, every meld in it), 七对 (nothing set down) and 对对胡, the one with the
  smallest distance (shanten of that shape), if that distance is at most ``steer_shanten`` and at most one more
  than the hand's plain shanten (it never gives up a ready hand for a two-away shape). Ties prefer 清一色,
  then 七对, then 对对胡 (their fan order in the default table).
- Discard: minimise the target distance, then the plain shanten, then prefer a dead tile, then the least
  connected tile. Claims: 对对胡 pungs/kongs when the distance does not grow; 清一色 claims only its suit;
  七对 never claims or kongs. No target: exactly greedy.
- Wins: always on self-draw; declines a discard (or robbed-kong) win worth fewer than ``decline_below`` capped
  fan while more than ``decline_wall`` tiles remain in the wall.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import BIG, NO_TILE, connectivity, suit_count
from simulator.bots.declare import seat_declares as seat_declares  # declares 唱歌/跳舞 by the value of its waits
from simulator.bots.greedy import greedy_claim, greedy_discard, greedy_self_kong
from simulator.kernel.shape import MELD_KONG, MELD_PUNG, seven_pairs_distance, shanten
from simulator.kernel.state import N_KINDS, tiles_left
from simulator.rules.bot_table import slot

# its parameters' slots in the seat's row (simulator.rules.bot_table)
DECLINE_BELOW, DECLINE_WALL, STEER = (slot("value", p) for p in ("decline_below", "decline_wall", "steer_shanten"))

T_NONE, T_QYS, T_QIDUI, T_DDH = 0, 1, 2, 3


@njit(cache=True, _nrt=False)
def qys_dist(table, conc, mt, nm, suit) -> int:
    """Shanten toward 清一色 in ``suit`` (standard form): tiles missing for the melds + pair in that suit − 1;
    ``BIG`` if a meld is set down in another suit."""
    for i in range(nm):
        if mt[i] // 9 != suit:
            return BIG
    key = 0
    for r in range(8, -1, -1):
        key = key * 5 + np.int64(conc[9 * suit + r])
    return np.int64(table[key, 4 - nm + 5]) - 1


@njit(cache=True, _nrt=True)
def ddh_dist(conc, nm, void) -> int:
    """Shanten toward 对对胡: the largest kept-suit counts make the missing triplets, the next one the pair."""
    need = 4 - nm
    top = np.zeros(5, np.int64)
    for k in range(N_KINDS):
        if k // 9 == void:
            continue
        c = np.int64(conc[k])
        if c > top[need]:  # insertion into the descending top need+1
            i = need
            while i > 0 and top[i - 1] < c:
                top[i] = top[i - 1]
                i -= 1
            top[i] = c
    cost = 2 - min(top[need], 2)
    for i in range(need):
        cost += 3 - min(top[i], 3)
    return cost - 1


@njit(cache=True, _nrt=False)
def qidui_dist(conc, nm, void) -> int:
    """Shanten toward 七对 over the kept suits (``BIG`` once anything is set down)."""
    if nm > 0:
        return BIG
    pairs = 0
    singles = 0
    for k in range(N_KINDS):
        if k // 9 != void:
            pairs += conc[k] >> 1
            singles += conc[k] & 1
    return seven_pairs_distance(pairs, singles) - 1


@njit(cache=True, _nrt=False)
def target_dist(table, conc, mt, nm, void, target, suit) -> int:
    if target == T_QYS:
        return qys_dist(table, conc, mt, nm, suit)
    if target == T_QIDUI:
        return qidui_dist(conc, nm, void)
    return ddh_dist(conc, nm, void)


@njit(cache=True, _nrt=False)
def choose_target(table, conc, mk, mt, nm, void, steer):
    """(target, suit, distance) of the shape to steer toward, or (T_NONE, −1, BIG)."""
    sh = shanten(table, conc, mk, mt, nm, void)
    limit = min(steer, sh + 1)
    best_t, best_s, best_d = T_NONE, -1, BIG
    for s in range(3):
        if s == void or suit_count(conc, s) == 0:
            continue
        d = qys_dist(table, conc, mt, nm, s)
        if d <= limit and d < best_d:
            best_t, best_s, best_d = T_QYS, s, d
    d = qidui_dist(conc, nm, void)
    if d <= limit and d < best_d:
        best_t, best_s, best_d = T_QIDUI, -1, d
    d = ddh_dist(conc, nm, void)
    if d <= limit and d < best_d:
        best_t, best_s, best_d = T_DDH, -1, d
    return best_t, best_s, best_d


@njit(cache=True, _nrt=False)
def value_discard(table, hand, legal, visible, sh_buf, steer) -> int:
    conc, mk, mt, nm, void = hand
    target, suit, _ = choose_target(table, conc, mk, mt, nm, void, steer)
    if target == T_NONE:
        return greedy_discard(table, hand, legal, visible, sh_buf)
    best = NO_TILE
    bd = bs = bdead = bc = BIG
    for k in range(N_KINDS):
        if not (legal >> k) & 1:
            continue
        conc[k] -= 1
        d = target_dist(table, conc, mt, nm, void, target, suit)
        s = shanten(table, conc, mk, mt, nm, void)
        conc[k] += 1
        dead = 0 if k // 9 == void else 1
        c = connectivity(conc, k)
        if (d, s, dead, c) < (bd, bs, bdead, bc):
            best, bd, bs, bdead, bc = k, d, s, dead, c
    return best


@njit(cache=True, _nrt=False)
def _dist_after_claim(table, hand, tile, kong, target, suit) -> int:
    conc, mk, mt, nm, void = hand
    take = 3 if kong else 2
    conc[tile] -= take
    mk[nm] = MELD_KONG if kong else MELD_PUNG
    mt[nm] = tile
    d = target_dist(table, conc, mt, nm + 1, void, target, suit)
    conc[tile] += take
    return d


@njit(cache=True, _nrt=False)
def value_claim(table, hand, tile, can_pung, can_kong, steer) -> int:
    conc, mk, mt, nm, void = hand
    target, suit, d0 = choose_target(table, conc, mk, mt, nm, void, steer)
    if target == T_NONE:
        return greedy_claim(table, hand, tile, can_pung, can_kong)
    if target == T_QIDUI or (target == T_QYS and tile // 9 != suit):
        return 0
    if can_kong and _dist_after_claim(table, hand, tile, np.bool_(True), target, suit) <= d0:
        return 2
    if can_pung and _dist_after_claim(table, hand, tile, np.bool_(False), target, suit) <= d0:
        return 1
    return 0


@njit(cache=True, _nrt=False)
def value_self_kong(table, hand, opts, steer) -> int:
    conc, mk, mt, nm, void = hand
    target, _, _ = choose_target(table, conc, mk, mt, nm, void, steer)
    if target == T_QIDUI:  # four of a kind is two pairs of 七对 (and 龙七对): keep it
        return NO_TILE
    return greedy_self_kong(table, hand, opts)


@njit(cache=True, _nrt=False)
def value_takes_win(capped_fan, self_draw, tiles_left, decline_below, decline_wall) -> bool:
    if self_draw:
        return True
    return not (capped_fan < decline_below and tiles_left > decline_wall)


# ---- its decisions at the table (simulator.rules.bot_table.DECISIONS; 换三张 and 定缺 as greedy) ---------------------
# (discard, claim, kong: the view and planned hand built by the dispatcher, simulator.bots.PREPARED_ARGS)
@njit(cache=True, inline="always")
def seat_discard(view, hand, st, bpar, void, legal):
    return value_discard(view.table, hand, legal, st.visible, st.sh_buf, bpar[STEER])


@njit(cache=True, inline="always")
def seat_claim(view, hand, st, bpar, void, tile, can_pung, can_kong):
    return value_claim(view.table, hand, tile, can_pung, can_kong, bpar[STEER])


@njit(cache=True, inline="always")
def seat_self_kong(view, hand, st, bpar, void, opts):
    return value_self_kong(view.table, hand, opts, bpar[STEER])


@njit(cache=True, inline="always")  # (the prepared arguments too: the view and the hand under its declared void)
def seat_takes_win(view, hand, st, bpar, void, tile, capped_fan, self_draw):
    return value_takes_win(capped_fan, self_draw, tiles_left(st.g), bpar[DECLINE_BELOW], bpar[DECLINE_WALL])
