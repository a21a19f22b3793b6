"""Compiled evaluation of a win (docs/spec.md §4, §5, §8): its patterns, 根 and the split that scores most, and the best
查大叫 points of a ready hand; the hand-shape functions it builds on (completeness, shanten, waits) are
:mod:`simulator.kernel.shape`, re-exported here.

The hand as one :class:`~simulator.kernel.shape.HandTiles` record (plain arrays as in :mod:`simulator.kernel.shape`),
plus ``params: int64[N_PARAMS]`` from ``RuleSet.to_arrays()`` and the win context ``ctx`` (``CTX_*`` bits). Nothing here
allocates except :func:`max_ready_points`, which runs once per player at an exhaustive draw.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.kernel.scoring import (
    F_DAIYAOJIU,
    F_DANCE,
    F_DIHU,
    F_DUIDUIHU,
    F_GANGSHANGHUA,
    F_GANGSHANGPAO,
    F_HAIDILAOYUE,
    F_HAIDIPAO,
    F_JIANGDUI,
    F_JINGOU,
    F_LONGQIDUI,
    F_MENQING,
    F_PINGHU,
    F_QIANGGANGHU,
    F_QIDUI,
    F_QINGYISE,
    F_SHIBALUOHAN,
    F_SING,
    F_TIANHU,
    F_ZHONGZHANG,
    F_ZIMO,
    score_flags,
)
from simulator.kernel.shape import (
    MELD_KONG,
    MELD_PUNG,
    hand_tiles,
    held4_mask,
    held_copies,
    is_seven_pairs,
    legal_suits,
    standard_complete,
    suit_keys,
    wait_mask,
)

# Win context bits (docs/spec.md §8). Neither CTX_SELF_DRAW nor CTX_ROB_KONG means a win on a discard.
CTX_SELF_DRAW = 1
CTX_ROB_KONG = 2
CTX_AFTER_KONG = 4      # self-draw on a kong replacement tile (杠上花)
CTX_KONG_DISCARD = 8    # the discard was made right after the discarder's own kong (杠上炮)
CTX_LAST_TILE = 16      # 海底: self-draw of the last wall tile, or the discard after it
CTX_FIRST_DRAW = 32     # 天胡 / 地胡 (self-draw, no melds)
CTX_DEALER = 64
CTX_SING = 128         # the winner had declared ready (唱歌, declare_ready: sing)
CTX_DANCE = 256        # the winner had declared ready and shown its waits (跳舞)

@njit(cache=True, _nrt=False)
def _all_triplets(conc):
    """Concealed tiles are triplets plus exactly one pair (counts in {0, 2, 3}, one 2)."""
    pairs = 0
    for k in range(27):
        c = conc[k]
        if c == 2:
            pairs += 1
        elif c == 1 or c == 4:
            return False
    return pairs == 1


@njit(cache=True, _nrt=False)
def _yaojiu_rest(rest):
    """Terminal tiles left after the runs: a triplet (0 pairs), a pair (1), nothing (0), else impossible."""
    if rest == 0 or rest == 3:
        return 0
    if rest == 2:
        return 1
    return -1


@njit(cache=True, _nrt=False)
def _yaojiu_suit(conc, base):
    """One suit's concealed tiles split into groups that all hold a 1 or a 9; returns pairs used, or −1."""
    for r in range(3, 6):
        if conc[base + r] != 0:
            return -1
    low_runs = conc[base + 1]    # every 2 is in a 123 run
    high_runs = conc[base + 7]   # every 8 is in a 789 run
    if conc[base + 2] != low_runs or conc[base + 6] != high_runs:
        return -1
    lo = _yaojiu_rest(np.int64(conc[base]) - np.int64(low_runs))
    hi = _yaojiu_rest(np.int64(conc[base + 8]) - np.int64(high_runs))
    if lo < 0 or hi < 0:
        return -1
    return lo + hi


@njit(cache=True, _nrt=False)
def _daiyaojiu(conc, meld_tile, n_melds):
    """A standard split where every meld and the pair hold a 1 or a 9."""
    for i in range(n_melds):
        r = meld_tile[i] % 9
        if r != 0 and r != 8:
            return False
    pairs = 0
    for s in range(3):
        p = _yaojiu_suit(conc, 9 * s)
        if p < 0:
            return False
        pairs += p
    return pairs == 1


@njit(cache=True, _nrt=False)
def _tile_facts(conc, meld_kind, meld_tile, n_melds):
    """(gen, all ranks 2/5/8, no 1/9, suits used bit set) over the concealed tiles and the melds."""
    gen = 0
    jiang = True
    simple = True
    used = 0
    for k in range(27):
        h = held_copies(conc, meld_kind, meld_tile, n_melds, k)
        if h == 0:
            continue
        used |= 1 << (k // 9)
        r = k % 9
        if h >= 4:
            gen += 1
        if r != 1 and r != 4 and r != 7:
            jiang = False
        if r == 0 or r == 8:
            simple = False
    return gen, jiang, simple, used


@njit(cache=True, _nrt=False)
def _context_flags(ctx, meld_kind, n_melds):
    """Flags that depend on how the hand was won and what was claimed, not on the split."""
    self_draw = (ctx & CTX_SELF_DRAW) != 0
    rob = (ctx & CTX_ROB_KONG) != 0
    discard = not self_draw and not rob
    f = 0
    if self_draw:
        f |= F_ZIMO
        if ctx & CTX_AFTER_KONG:
            f |= F_GANGSHANGHUA
        if ctx & CTX_LAST_TILE:
            f |= F_HAIDILAOYUE
        if ctx & CTX_FIRST_DRAW:
            f |= F_TIANHU if ctx & CTX_DEALER else F_DIHU
    if discard:
        if ctx & CTX_KONG_DISCARD:
            f |= F_GANGSHANGPAO
        if ctx & CTX_LAST_TILE:
            f |= F_HAIDIPAO
    if rob:
        f |= F_QIANGGANGHU
    claimed = False
    for i in range(n_melds):
        if meld_kind[i] == MELD_PUNG or meld_kind[i] == MELD_KONG:
            claimed = True
    if not claimed:
        f |= F_MENQING
    if ctx & CTX_SING:
        f |= F_SING
    if ctx & CTX_DANCE:
        f |= F_DANCE
    return f


@njit(cache=True, _nrt=False)
def _triplet_flags(meld_kind, n_melds, jiang):
    """Flags of an all-triplets split: duiduihu, + jiangdui (all 2/5/8), jingou, shibaluohan."""
    f = F_PINGHU | F_DUIDUIHU
    if jiang:
        f |= F_JIANGDUI
    if n_melds == 4:  # all four melds set down: the pair was a single wait
        f |= F_JINGOU
        kongs = 0
        for i in range(4):
            if meld_kind[i] != MELD_PUNG:
                kongs += 1
        if kongs == 4:
            f |= F_SHIBALUOHAN
    return f


@njit(cache=True, _nrt=False)
def _better(a_fan, a_pts, a_type, b_fan, b_pts, b_type):
    """Is score a preferable to b: more fan, then more points, then the earlier hand type."""
    if a_fan != b_fan:
        return a_fan > b_fan
    if a_pts != b_pts:
        return a_pts > b_pts
    return a_type < b_type


@njit(cache=True, _nrt=False)
def _win_shapes(table, conc, meld_kind, meld_tile, n_melds, void, win_tile):
    """The context-free analysis of a win: ``(ok, common, jiang, gen, tri, yao, plain, sevens)`` — ``common``
    the flags every split shares (清一色, 中张; no context flags), the rest the candidate splits as flag sets
    (0 = none). ``ok`` False when ``conc`` (which includes ``win_tile``) is not a legal winning hand."""
    k0, k1, k2, n0, n1, n2 = suit_keys(conc)
    if win_tile < 0 or win_tile >= 27 or conc[win_tile] == 0 or n0 + n1 + n2 != 14 - 3 * n_melds:
        return False, 0, False, 0, 0, 0, 0, 0
    gen, jiang, simple, used = _tile_facts(conc, meld_kind, meld_tile, n_melds)
    if not legal_suits(used, void):
        return False, 0, False, 0, 0, 0, 0, 0
    standard = standard_complete(table, k0, k1, k2, n0, n1, n2)
    pairs7 = is_seven_pairs(conc, n_melds)
    if not standard and not pairs7:
        return False, 0, False, 0, 0, 0, 0, 0
    common = 0
    if used == 1 or used == 2 or used == 4:
        common |= F_QINGYISE
    if simple:
        common |= F_ZHONGZHANG
    # Candidate splits as flag sets (0 = none; every split has F_PINGHU). All-triplets and 带幺九 are different
    # splits of the same tiles (111222333m = three triplets or three 123m runs) and both may exist; a plain split
    # only matters when neither does, since more flags never score less.
    tri = yao = plain = sevens = 0
    if standard:
        if _all_triplets(conc):
            tri = _triplet_flags(meld_kind, n_melds, jiang)
        if _daiyaojiu(conc, meld_tile, n_melds):
            yao = F_PINGHU | F_DAIYAOJIU
        if tri == 0 and yao == 0:
            plain = F_PINGHU
    if pairs7:
        sevens = F_PINGHU | F_QIDUI
        for k in range(27):
            if conc[k] == 4:
                sevens |= F_LONGQIDUI
    return True, common, jiang, gen, tri, yao, plain, sevens


@njit(cache=True, _nrt=False)
def _best_split(common, shapes, self_draw, params):
    """The split that scores most (:func:`_better`) as ``evaluate_win``'s 6-tuple; ``shapes`` = ``(jiang, gen,
    tri, yao, plain, sevens)`` as :func:`_win_shapes` returns them."""
    jiang, gen, tri, yao, plain, sevens = shapes
    best = (np.int64(-1), np.int64(0), np.int64(0), np.int64(0), np.int64(-1), np.int64(0))
    for shape in (tri, yao, plain, sevens):
        if shape == 0:
            continue
        flags = common | shape
        fan, capped, g, ht, pts = score_flags(flags, jiang, gen, self_draw, params)
        if best[0] < 0 or _better(fan, pts, ht, best[0], best[5], best[4]):
            best = (fan, capped, flags, g, ht, pts)
    return best


@njit(cache=True, _nrt=False)
def evaluate_win(table, hand, win_tile, ctx, params):
    """Score a win: ``(fan, capped_fan, flags, gen, hand_type, points)``, all int64.

    ``hand``: the winner's :class:`~simulator.kernel.shape.HandTiles`, whose ``conc`` includes ``win_tile``. ``fan`` is
    after extras (and the self-draw add_fan), before the cap; ``gen``
    after long_uses_gen; ``points`` = what each payer pays in base units, add_base bonus included. The split
    that scores most is used. Not a winning hand: ``fan = −1``, ``hand_type = −1``, the rest 0.
    """
    conc, meld_kind, meld_tile, n_melds, void = hand
    ok, common, jiang, gen, tri, yao, plain, sevens = _win_shapes(table, conc, meld_kind, meld_tile, n_melds, void,
                                                                  win_tile)
    if not ok:
        return (np.int64(-1), np.int64(0), np.int64(0), np.int64(0), np.int64(-1), np.int64(0))
    common |= _context_flags(ctx, meld_kind, n_melds)
    return _best_split(common, (jiang, gen, tri, yao, plain, sevens), (ctx & CTX_SELF_DRAW) != 0, params)


@njit(cache=True, _nrt=False)
def win_points_both(table, hand, win_tile, params):
    """``(points as a discard win, points as a self-draw)`` of a win with no other context: exactly
    ``evaluate_win(…, 0, params)[5]`` and ``evaluate_win(…, CTX_SELF_DRAW, params)[5]``, analysing the
    tiles once (the bots price every wait both ways). ``(0, 0)`` when not a winning hand."""
    conc, meld_kind, meld_tile, n_melds, void = hand
    ok, common, jiang, gen, tri, yao, plain, sevens = _win_shapes(table, conc, meld_kind, meld_tile, n_melds, void,
                                                                  win_tile)
    if not ok:
        return np.int64(0), np.int64(0)
    common |= _context_flags(np.int64(0), meld_kind, n_melds)
    shapes = (jiang, gen, tri, yao, plain, sevens)
    ron = _best_split(common, shapes, np.bool_(False), params)[5]  # np.bool_: no literal copy
    sd = _best_split(common | F_ZIMO, shapes, np.bool_(True), params)[5]
    return ron, sd


@njit(cache=True, _nrt=True)
def max_ready_points(table, hand, ctx, params):
    """查大叫: best points (base units) over the waits of a 13-tile hand, as a discard win with no situational
    context but ``ctx`` (int64: the hand's ``CTX_SING``/``CTX_DANCE`` when it declared, else 0), capped; 0 when
    not ready. Waits on a kind already held four times do not count."""
    conc, meld_kind, meld_tile, n_melds, void = hand
    waits = wait_mask(table, conc, meld_kind, meld_tile, n_melds, void)
    waits &= ~held4_mask(conc, meld_kind, meld_tile, n_melds)
    if waits == 0:
        return 0
    trial = conc.copy()
    won = hand_tiles(trial, meld_kind, meld_tile, n_melds, void)
    best = 0
    for k in range(27):
        if (waits >> k) & 1:
            trial[k] += 1
            res = evaluate_win(table, won, k, ctx, params)
            trial[k] -= 1
            if res[5] > best:
                best = res[5]
    return best
