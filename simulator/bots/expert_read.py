"""The expert's exact read of the lone opponent's hand at the last tiles (issue 54, item 3).

With one opponent still in and the wall nearly empty, the tiles the deciding seat cannot see are that opponent's
concealed tiles and the few left in the wall, nothing else (winners' hands are laid down, the seat's own 暗杠 are
its own). So every hand the opponent can hold is the unseen pool less ``tiles_left`` of its tiles, each as likely
as the ways of choosing the wall: :func:`read_deal_in` prices each discard by what the opponent's win on it would
cost, averaged over those hands, instead of the table's danger signals (:mod:`simulator.bots.danger`). The search
player (``simulator/search``) found the expert's costliest end-game departures here: with 0–2 tiles left and one
opponent in, discards into a wait the unseen tiles spell out (docs/bots.md, "The expert, version by version").
Public information only: the unseen counts (``visible`` with the laid-down hands and the seat's own 暗杠), the
opponent's face-up melds and declared void; an opponent holding a 暗杠 (its kind face down) is not read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import face_up
from simulator.kernel.evaluate import evaluate_win
from simulator.kernel.shape import hand_tiles, wait_mask
from simulator.kernel.state import N_KINDS, N_SEATS, PS_VOID, PS_WON, VOID_DECLARED, stack_empty, void_rule

READ_LEFT = 4  # read the lone opponent's hand with at most this many tiles left in the wall
PICKS = READ_LEFT + 1  # the wall's tiles chosen (and a spare slot)
READ_POOL = 10  # and, with more than 2 left, at most this many tiles unseen (its hands: at most C(13, 3) or C(13, 4))


@njit(cache=True, _nrt=False)
def lone_opponent(ps, seat) -> int:
    """The one opponent of ``seat`` still in, else −1 (none, or two or more)."""
    q = -1
    for s in range(N_SEATS):
        if s != seat and not ps[s, PS_WON]:
            if q >= 0:
                return -1
            q = s
    return q


@njit(cache=True, _nrt=False)
def read_deal_in(view, conc, out) -> bool:
    """``out[k]`` = the expected points the seat of ``view`` (a :class:`~simulator.bots.view.SeatView`, holding
    ``conc``) pays if it discards ``k`` and the lone opponent wins on it, over every concealed hand the unseen tiles
    leave that opponent (all of them but ``tiles_left``, each hand weighted by the ways of leaving those in the
    wall). False (``out`` unset) unless one opponent is in, at most :data:`READ_LEFT` tiles are left, voids are
    declared and the unseen tiles are exactly its concealed tiles and the wall (no 暗杠 of unknown kind)."""
    table, params, ps, tiles_left = view.table, view.params, view.ps, view.tiles_left
    if tiles_left > READ_LEFT or void_rule(params) != VOID_DECLARED:
        return False
    q = lone_opponent(ps, view.seat)
    if q < 0:
        return False
    nm = view.nm_all[q]
    mk = stack_empty(4, np.int8)
    mt = stack_empty(4, np.int8)
    for i in range(nm):
        t = face_up(view.mk_all, view.mt_all, q, i)
        if t < 0:
            return False
        mk[i] = view.mk_all[q, i]
        mt[i] = t
    pool = stack_empty(N_KINDS, np.int8)
    total = 0
    for k in range(N_KINDS):
        u = 4 - np.int64(conc[k]) - np.int64(view.visible[k])
        pool[k] = u if u > 0 else 0
        total += pool[k]
    if total != 13 - 3 * nm + tiles_left:
        return False
    if tiles_left > 2 and total > READ_POOL:
        return False
    void = np.int64(ps[q, PS_VOID])
    kinds = stack_empty(N_KINDS, np.int64)  # the kinds unseen, for the wall's choices
    n_kinds = 0
    for k in range(N_KINDS):
        if pool[k] > 0:
            kinds[n_kinds] = k
            n_kinds += 1
    out[:] = 0.0
    w_sum = 0.0
    pick = stack_empty(PICKS, np.int64)  # the wall's tiles: indices into `kinds`, non-decreasing
    pick[:] = 0
    held = stack_empty(N_KINDS, np.uint8)  # the opponent's concealed tiles, as the engine types them (uint8)
    while True:
        w = 1.0
        for i in range(tiles_left):  # the ways of leaving these copies in the wall: C(copies, m) per kind
            k = kinds[pick[i]]
            w *= pool[k]
            pool[k] -= 1
        if w > 0.0:
            for i in range(1, tiles_left):
                if pick[i] == pick[i - 1]:
                    w /= 1.0 + count_before(pick, i)
            w_sum += w
            for k in range(N_KINDS):  # a uint8 copy: an int8 hand would compile evaluate_win a second time
                held[k] = pool[k]
            add_waits(table, params, hand_tiles(held, mk, mt, nm, void), w, out)
        for i in range(tiles_left):
            pool[kinds[pick[i]]] += 1
        i = tiles_left - 1
        while i >= 0 and pick[i] == n_kinds - 1:
            i -= 1
        if i < 0:
            break
        pick[i] += 1
        for j in range(i + 1, tiles_left):
            pick[j] = pick[i]
    if w_sum > 0.0:
        for k in range(N_KINDS):
            out[k] /= w_sum
    return True


@njit(cache=True, _nrt=False)
def count_before(pick, i) -> int:
    """How many of ``pick[:i]`` equal ``pick[i]`` (non-decreasing: the run just before ``i``)."""
    n = 0
    j = i - 1
    while j >= 0 and pick[j] == pick[i]:
        n += 1
        j -= 1
    return n


@njit(cache=True, _nrt=False)
def add_waits(table, params, hand, w, out) -> None:
    """``out[k] += w`` × the points of ``hand``'s discard win on each kind ``k`` it waits on."""
    conc, mk, mt, nm, void = hand
    waits = wait_mask(table, conc, mk, mt, nm, void)
    for k in range(N_KINDS):
        if (waits >> k) & 1:
            conc[k] += 1
            res = evaluate_win(table, hand, k, np.int64(0), params)
            conc[k] -= 1
            if res[5] > 0:
                out[k] += w * res[5]
