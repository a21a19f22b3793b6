"""Heuristics shared by the bots: legal discards, shanten per discard, acceptance, claims, kongs, void choice.

Every function is compiled and works on one seat's plain arrays (``conc: uint8[27]``, ``mk, mt: int8[4]``,
``nm``), or on them as one :class:`~simulator.kernel.shape.HandTiles` (``hand``: :func:`acceptance`,
:func:`pick_among`); hands are modified in place only temporarily and always restored. Shanten and completeness come
from :mod:`simulator.kernel.evaluate` (never re-implemented here); ``void`` below is the suit a bot plans to drop: the
declared void, or under ``void_suit: none`` the suit it currently finds cheapest to drop (``plan_void``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.kernel.shape import (
    MELD_CKONG,
    MELD_KONG,
    MELD_PUNG,
    meld_suits,
    seven_pairs_distance,
    shanten,
    two_suit_distance,
)
from simulator.kernel.state import N_KINDS
from simulator.kernel.tables import GAIN_COL

NO_TILE = -1
BIG = 1 << 30
POW5 = np.array([5**r for r in range(9)], np.int64)  # a suit key's weight per rank (Σ count·5^rank)


@njit(cache=True, _nrt=False)
def suit_count(conc, s) -> int:
    n = 0
    for r in range(9):
        n += conc[9 * s + r]
    return n


@njit(cache=True, inline="always")
def face_up(mk_all, mt_all, q, i) -> int:
    """The tile of seat q's meld i as the table sees it: −1 for a concealed kong (face down: neither its kind nor
    its suit is public; only that q has one)."""
    if mk_all[q, i] == MELD_CKONG:
        return -1
    return np.int64(mt_all[q, i])


@njit(cache=True, _nrt=False)
def plan_void(table, conc, mk, mt, nm) -> int:
    """The suit whose dropping leaves the lowest 缺一门 shanten; ties go to the suit with fewer tiles, then the
    lower suit. Used to declare 定缺 and, under ``void_suit: none``, as the suit a bot clears first."""
    best = -1
    best_sh = BIG
    best_n = BIG
    for s in range(3):
        sh = shanten(table, conc, mk, mt, nm, s)
        n = suit_count(conc, s)
        if sh < best_sh or (sh == best_sh and n < best_n):
            best, best_sh, best_n = s, sh, n
    return best


@njit(cache=True, _nrt=False)
def legal_discard_mask(conc, void, strict) -> int:
    """Kinds this seat may discard: under strict 定缺 only void tiles while any is held, else any held kind."""
    held = 0
    vmask = 0
    for k in range(N_KINDS):
        if conc[k] > 0:
            held |= 1 << k
            if void >= 0 and k // 9 == void:
                vmask |= 1 << k
    if strict and vmask != 0:
        return vmask
    return held


@njit(cache=True, _nrt=False)
def unseen(conc, visible, k) -> int:
    """Copies of kind k this seat has not seen (not in its hand, not discarded, not in a meld)."""
    u = 4 - np.int64(conc[k]) - np.int64(visible[k])
    return u if u > 0 else 0


@njit(cache=True, _nrt=False)
def draw_candidates(conc, void) -> int:
    """Kinds whose draw could lower the shanten of this hand or of any hand one discard away: kept-suit kinds
    held or within two ranks of a held tile (an isolated new tile never helps, except as a pair of a held one)."""
    held = 0
    full = 0
    for k in range(N_KINDS):
        if conc[k] > 0:
            held |= 1 << k
            if conc[k] >= 4:
                full |= 1 << k
    mask = 0
    for s in range(3):  # per suit: the held ranks widened by two ranks each way, within the suit
        if s == void:
            continue
        h = (held >> (9 * s)) & 0x1FF
        mask |= ((h | (h << 1) | (h << 2) | (h >> 1) | (h >> 2)) & 0x1FF) << (9 * s)
    return mask & ~full


@njit(cache=True, _nrt=False)
def usable_void(mt, nm, void) -> bool:
    """A void suit the fast paths below can price by the two kept suits' keys: one is planned and holds no meld
    (otherwise :func:`~simulator.kernel.shape.shanten` decides over the suits itself)."""
    return void >= 0 and not (meld_suits(mt, nm) >> void) & 1


@njit(cache=True, _nrt=False)
def kept_suits(void):
    """The two suits kept beside ``void``, lower first."""
    return (1 if void == 0 else 0), (1 if void == 2 else 2)


@njit(cache=True, _nrt=False)
def kept_summary(conc, void, nm):
    """``(ka, kb, pairs, odd)`` of the two suits kept beside ``void`` (lower suit first): their table keys
    (Σ count·5^rank) and, with nothing set down (``nm`` 0), their pairs and odd-count kinds for seven pairs."""
    sa, sb = kept_suits(void)
    ka = kb = 0
    pairs = odd = 0
    for r in range(8, -1, -1):
        ca = np.int64(conc[9 * sa + r])
        cb = np.int64(conc[9 * sb + r])
        ka = ka * 5 + ca
        kb = kb * 5 + cb
        if nm == 0:
            pairs += (ca >> 1) + (cb >> 1)
            odd += (ca & 1) + (cb & 1)
    return ka, kb, pairs, odd


@njit(cache=True, _nrt=False)
def kept_shanten(table, ka, kb, nm, pairs, odd) -> int:
    """Shanten from the two kept suits' keys (and, with ``nm`` 0, their pairs and odd kinds for seven pairs)."""
    dist = two_suit_distance(table, ka, kb, 4 - nm)
    if nm == 0:
        sp = seven_pairs_distance(pairs, odd)
        if sp < dist:
            dist = sp
    return dist - 1


@njit(cache=True, _nrt=False)
def moved_shanten(table, conc, nm, void, summary, k, d) -> int:
    """Shanten (as :func:`~simulator.kernel.shape.shanten` with the usable void ``void``) of the hand summarised by
    ``summary`` (:func:`kept_summary` of ``conc``) after ``d`` (+1 or −1) copies of kind ``k`` are added: only
    k's suit key and k's pair/odd count change, so nothing is recounted. A void-suit tile is dead: no change."""
    ka, kb, pairs, odd = summary
    s = k // 9
    if s != void:
        step = POW5[k % 9]
        if s == kept_suits(void)[0]:  # the lower kept suit (kept_summary's ka)
            ka += d * step
        else:
            kb += d * step
        c = np.int64(conc[k])
        pairs += ((c + d) >> 1) - (c >> 1)
        odd += ((c + d) & 1) - (c & 1)
    return kept_shanten(table, ka, kb, nm, pairs, odd)


@njit(cache=True, _nrt=False)
def acceptance(table, hand, sh, visible, draws) -> int:
    """Unseen tiles among the kinds ``draws`` that lower the shanten ``sh`` of this 13-tile-shaped hand
    (a :class:`~simulator.kernel.shape.HandTiles`).

    With a usable void (:func:`usable_void`) a draw changes one kept suit's key by 5^rank and one kind's pair/odd
    count, so it is priced from the two keys (:func:`kept_acceptance`) without recounting the hand; otherwise by
    a full :func:`~simulator.kernel.shape.shanten` per draw."""
    conc, _, mt, nm, void = hand
    if not usable_void(mt, nm, void):
        return _acceptance_by_shanten(table, hand, sh, visible, draws)
    return kept_acceptance(table, visible, hand, sh, draws, kept_summary(conc, void, nm))


@njit(cache=True, inline="always")
def column_gains(table, key, r, need) -> int:
    """Bit mask of the suit-table columns (m + 5·p, m ≤ ``need``) whose distance drops when one copy of rank ``r``
    is added to the suit of key ``key`` (which holds fewer than four): the gain bytes of the key's own row
    (:mod:`simulator.kernel.tables`)."""
    g = np.int64(table[key, GAIN_COL + 2 * r]) | np.int64(table[key, GAIN_COL + 2 * r + 1]) << 8
    cols = (1 << (need + 1)) - 1
    return g & (cols | cols << 5)


@njit(cache=True, inline="always")
def turn_acceptance(table, visible, hand, sh, draws, k, summary) -> int:
    """:func:`acceptance` of ``hand`` — the 14 tiles of the turn less one copy of ``k`` — at its shanten ``sh``,
    for a usable void (:func:`usable_void`), from ``summary``, the 14 tiles' :func:`kept_summary` (computed once
    per turn): the discard moves its suit's key and its kind's pair/odd count (as :func:`moved_shanten`)."""
    ka, kb, pairs, odd = summary
    if k // 9 != hand.void:
        if k // 9 == kept_suits(hand.void)[0]:
            ka -= POW5[k % 9]
        else:
            kb -= POW5[k % 9]
        c = np.int64(hand.conc[k])  # after the discard
        pairs += (c >> 1) - ((c + 1) >> 1)
        odd += (c & 1) - ((c + 1) & 1)
    return kept_acceptance(table, visible, hand, sh, draws, (ka, kb, pairs, odd))


@njit(cache=True, _nrt=False)
def kept_acceptance(table, visible, hand, sh, draws, summary) -> int:
    """:func:`acceptance` of ``hand`` at its shanten ``sh`` for a usable void (:func:`usable_void`), from its
    :func:`kept_summary` ``summary``: a draw lowers the shanten only if it lowers a column of its suit's key that
    a best split of the melds between the two kept suits uses (:func:`column_gains`; one tile lowers a column by
    at most one), or completes a pair of seven pairs."""
    conc, nm, void = hand.conc, hand.nm, hand.void
    sa, sb = kept_suits(void)
    ka, kb, pairs, odd = summary
    need = 4 - nm
    # the best splits of the melds between the two suits (min over m of the two ways to place the pair), and the
    # columns of each suit they use
    dist = 1 << 30
    ta = tb = 0
    for m in range(need + 1):
        for p in range(2):
            ca = m + 5 * (1 - p)
            cb = need - m + 5 * p
            d = np.int64(table[ka, ca]) + np.int64(table[kb, cb])
            if d < dist:
                dist, ta, tb = d, 1 << ca, 1 << cb
            elif d == dist:
                ta |= 1 << ca
                tb |= 1 << cb
    by_dist = dist == sh + 1  # else seven pairs alone gives the shanten: only it can drop
    acc = 0
    for i in range(2):
        s, key, used = (sa, ka, ta) if i == 0 else (sb, kb, tb)
        for r in range(9):
            j = 9 * s + r
            if not (draws >> j) & 1 or conc[j] >= 4:
                continue
            u = unseen(conc, visible, j)
            if u == 0:
                continue
            if nm == 0:
                c = np.int64(conc[j]) & 1  # an odd count becomes a pair
                if seven_pairs_distance(pairs + c, odd + 1 - 2 * c) <= sh:
                    acc += u
                    continue
            if by_dist and column_gains(table, key, r, need) & used:
                acc += u
    return acc


@njit(cache=True, _nrt=False)
def _acceptance_by_shanten(table, hand, sh, visible, draws) -> int:
    conc, mk, mt, nm, void = hand
    acc = 0
    for k in range(N_KINDS):
        if not (draws >> k) & 1 or conc[k] >= 4:
            continue
        u = unseen(conc, visible, k)
        if u == 0:
            continue
        conc[k] += 1
        s2 = shanten(table, conc, mk, mt, nm, void)
        conc[k] -= 1
        if s2 < sh:
            acc += u
    return acc


@njit(cache=True, _nrt=False)
def connectivity(conc, k) -> int:
    """How well tile k fits its neighbours (copies, adjacent and one-gap tiles): low = isolated."""
    s = k // 9
    r = k % 9
    score = 4 * (np.int64(conc[k]) - 1)
    for d in (-2, -1, 1, 2):
        rr = r + d
        if 0 <= rr < 9:
            score += (3 - abs(d)) * np.int64(conc[9 * s + rr])
    return score


@njit(cache=True, _nrt=False)
def discard_shantens(table, conc, mk, mt, nm, void, legal, out) -> int:
    """``out[k]`` = shanten after discarding k (``BIG`` when k is not a legal discard); returns the minimum.

    A tile of the planned void suit is dead, so discarding it never changes shanten: all of them share the
    value of the first one. With a usable void (:func:`usable_void`) each discard is priced by
    :func:`moved_shanten`, otherwise by a full :func:`~simulator.kernel.shape.shanten`."""
    fast = usable_void(mt, nm, void)
    summary = kept_summary(conc, void, nm) if fast else (0, 0, 0, 0)
    best = BIG
    dead_sh = BIG
    for k in range(N_KINDS):
        if not (legal >> k) & 1:
            out[k] = BIG
            continue
        if k // 9 == void and dead_sh != BIG:
            out[k] = dead_sh
            continue
        if fast:
            sh = moved_shanten(table, conc, nm, void, summary, k, -1)
        else:
            conc[k] -= 1
            sh = shanten(table, conc, mk, mt, nm, void)
            conc[k] += 1
        out[k] = sh
        if k // 9 == void:
            dead_sh = sh
        if sh < best:
            best = sh
    return best


@njit(cache=True, _nrt=False)
def pick_among(table, hand, cand, sh, visible) -> int:
    """Best of the candidate discards ``cand`` (a kind mask) of ``hand`` that all leave shanten ``sh``: a dead
    (void-suit) tile first, the least connected one; otherwise the one leaving the most acceptance, ties to the
    least connected tile."""
    conc, void = hand.conc, hand.void
    best = NO_TILE
    best_c = BIG
    for k in range(N_KINDS):
        if (cand >> k) & 1 and k // 9 == void:
            c = connectivity(conc, k)
            if c < best_c:
                best, best_c = k, c
    if best != NO_TILE:
        return best
    if cand & (cand - 1) == 0:  # a single candidate
        for k in range(N_KINDS):
            if (cand >> k) & 1:
                return k
    best_acc = -1
    draws = draw_candidates(conc, void)  # of the 14 tiles: a superset for every 13-tile hand below
    fast = usable_void(hand.mt, hand.nm, void)
    summary = kept_summary(conc, void, hand.nm) if fast else (0, 0, 0, 0)
    for k in range(N_KINDS):
        if not (cand >> k) & 1:
            continue
        conc[k] -= 1
        if fast:
            acc = turn_acceptance(table, visible, hand, sh, draws, k, summary)
        else:
            acc = acceptance(table, hand, sh, visible, draws)
        conc[k] += 1
        c = connectivity(conc, k)
        if acc > best_acc or (acc == best_acc and c < best_c):
            best, best_acc, best_c = k, acc, c
    return best


@njit(cache=True, _nrt=False)
def shanten_after_claim(table, conc, mk, mt, nm, void, tile, kong) -> int:
    """Shanten after punging (``kong`` False) or exposed-konging ``tile`` from a discard. The trial meld is
    written into slot ``nm``, beyond the ``nm`` melds in use, so nothing needs restoring there."""
    take = 3 if kong else 2
    conc[tile] -= take
    mk[nm] = MELD_KONG if kong else MELD_PUNG
    mt[nm] = tile
    sh = shanten(table, conc, mk, mt, nm + 1, void)
    conc[tile] += take
    return sh


@njit(cache=True, _nrt=False)
def self_kong_options(conc, mk, mt, nm, void, strict) -> int:
    """Bit mask of kinds this seat may kong on its own turn: four concealed (暗杠) or a pung plus the fourth
    in hand (加杠); under strict 定缺 never a void-suit kind."""
    opts = 0
    for k in range(N_KINDS):
        if conc[k] == 4 and not (strict and k // 9 == void):
            opts |= 1 << k
    for i in range(nm):
        k = np.int64(mt[i])
        if mk[i] == MELD_PUNG and conc[k] >= 1 and not (strict and k // 9 == void):
            opts |= 1 << k
    return opts


@njit(cache=True, _nrt=False)
def shanten_after_self_kong(table, conc, mk, mt, nm, void, k) -> int:
    """Shanten after konging k on one's own turn (before the replacement draw)."""
    if conc[k] == 4:
        conc[k] = 0
        mk[nm] = MELD_CKONG
        mt[nm] = k
        sh = shanten(table, conc, mk, mt, nm + 1, void)
        conc[k] = 4
        return sh
    for i in range(nm):  # added kong: the pung becomes a kong
        if mt[i] == k and mk[i] == MELD_PUNG:
            conc[k] -= 1
            mk[i] = MELD_KONG
            sh = shanten(table, conc, mk, mt, nm, void)
            mk[i] = MELD_PUNG
            conc[k] += 1
            return sh
    return BIG
