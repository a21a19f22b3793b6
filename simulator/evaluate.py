"""Compiled hand evaluation: completeness, 缺一门 shanten, waits, and the scoring of a win (RULES.md §3–§5).

Plain arrays only (see docs/internals.md): ``conc: uint8[27]`` concealed counts, ``meld_kind/meld_tile: int8[4]``
with ``n_melds`` used, ``void`` the declared void suit or −1, ``params: int64[N_PARAMS]`` from
``RuleSet.to_arrays()``. Every function takes the per-suit distance table of :mod:`simulator.tables` as its
first argument (``table = suit_table()``), so numba never freezes the 19.5 MB array into compiled code.

A suit's tiles are summarised by their suit key (``Σ count[r]·5^r``) and tile count; the table then answers
"how many tiles are missing for m melds + p pairs" in one lookup, so no function here recurses or allocates
(except :func:`max_ready_points`, which runs once per player at an exhaustive draw).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.scoring import (
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

# Win context bits (RULES.md §8). Neither CTX_SELF_DRAW nor CTX_ROB_KONG means a win on a discard.
CTX_SELF_DRAW = 1
CTX_ROB_KONG = 2
CTX_AFTER_KONG = 4      # self-draw on a kong replacement tile (杠上花)
CTX_KONG_DISCARD = 8    # the discard was made right after the discarder's own kong (杠上炮)
CTX_LAST_TILE = 16      # 海底: self-draw of the last wall tile, or the discard after it
CTX_FIRST_DRAW = 32     # 天胡 / 地胡 (self-draw, no melds)
CTX_DEALER = 64
CTX_SING = 128         # the winner had declared ready (唱歌, declare_ready: sing)
CTX_DANCE = 256        # the winner had declared ready and shown its waits (跳舞)

# Meld kinds of meld_kind[i] (a kong counts as three tiles towards the 14).
MELD_NONE = 0
MELD_PUNG = 1
MELD_KONG = 2   # exposed: 直杠 or 加杠
MELD_CKONG = 3  # concealed: 暗杠

SHANTEN_NEVER = 99  # shanten of a hand that can never win (melds in three suits, or in the void suit)

_SEVEN_PAIRS = 7


@njit(cache=True)
def _suit_keys(conc):
    """Suit keys and tile counts of the three suits: (k0, k1, k2, n0, n1, n2)."""
    k0 = k1 = k2 = 0
    n0 = n1 = n2 = 0
    for r in range(8, -1, -1):  # Horner from rank 9 down: key = Σ c[r]·5^r
        c0 = np.int64(conc[r])
        c1 = np.int64(conc[9 + r])
        c2 = np.int64(conc[18 + r])
        k0 = k0 * 5 + c0
        k1 = k1 * 5 + c1
        k2 = k2 * 5 + c2
        n0 += c0
        n1 += c1
        n2 += c2
    return k0, k1, k2, n0, n1, n2


@njit(cache=True)
def meld_suits(meld_tile, n_melds):
    """Bit set of the suits that hold a meld set down."""
    s = 0
    for i in range(n_melds):
        s |= 1 << (np.int64(meld_tile[i]) // 9)
    return s


@njit(cache=True)
def _legal_suits(used, void):
    """At most two suits, none of them the declared void suit."""
    if used == 7:
        return False
    return not (void >= 0 and (used >> void) & 1)


@njit(cache=True)
def _suit_ok(table, key, n):
    """This suit's tiles are exactly melds (+ at most one pair); returns 0 = no, 1 = melds only, 2 = with pair."""
    r = n % 3
    if r == 1 or n > 14:
        return 0
    m = n // 3
    if r == 2:
        return 2 if table[key, m + 5] == 0 else 0
    return 1 if table[key, m] == 0 else 0


@njit(cache=True)
def _standard_complete(table, k0, k1, k2, n0, n1, n2):
    """Exactly melds + one pair over the three suits' concealed tiles."""
    a = _suit_ok(table, k0, n0)
    if a == 0:
        return False
    b = _suit_ok(table, k1, n1)
    if b == 0:
        return False
    c = _suit_ok(table, k2, n2)
    if c == 0:
        return False
    return (a + b + c) == 4  # one suit with the pair (2), two without (1 each)


@njit(cache=True)
def _seven_pairs(conc, n_melds):
    """Fourteen concealed tiles, every count even (a four-of-a-kind is two pairs)."""
    if n_melds != 0:
        return False
    total = 0
    for k in range(27):
        c = conc[k]
        if c & 1:
            return False
        total += c
    return total == 14


@njit(cache=True)
def is_complete(table, conc, meld_kind, meld_tile, n_melds, void):
    """True when ``conc`` plus the melds set down is a legal winning hand (standard or seven pairs, ≤ 2 suits
    counting melds, no tile of ``void``)."""
    k0, k1, k2, n0, n1, n2 = _suit_keys(conc)
    if n0 + n1 + n2 != 14 - 3 * n_melds:
        return False
    used = meld_suits(meld_tile, n_melds) | _conc_suits(n0, n1, n2)
    if not _legal_suits(used, void):
        return False
    if _standard_complete(table, k0, k1, k2, n0, n1, n2):
        return True
    return _seven_pairs(conc, n_melds)


@njit(cache=True)
def two_suit_distance(table, ka, kb, need):
    """Fewest tiles to add to two suits so that together they hold ``need`` melds and one pair."""
    best = 255
    for m in range(need + 1):
        d = np.int64(table[ka, m + 5]) + np.int64(table[kb, need - m])
        if d < best:
            best = d
        d = np.int64(table[ka, m]) + np.int64(table[kb, need - m + 5])
        if d < best:
            best = d
    return best


@njit(cache=True)
def seven_pairs_distance(pairs, singles):
    """Tiles to add for seven pairs from ``pairs`` pairs and ``singles`` odd kinds of the kept suits."""
    missing = _SEVEN_PAIRS - pairs
    if missing <= 0:
        return 0
    if singles >= missing:
        return missing
    return singles + 2 * (missing - singles)  # the rest need a fresh pair each


@njit(cache=True)
def shanten(table, conc, meld_kind, meld_tile, n_melds, void):
    """缺一门 shanten of a hand with 3k+1 or 3k+2 concealed tiles (k = 4 − n_melds); −1 = complete.

    Min over the droppable suits (``void`` if declared, else any suit without a meld set down; its tiles are
    dead) of the tiles missing for the standard form (or seven pairs when nothing is set down), minus one.
    Returns ``SHANTEN_NEVER`` when no suit can be dropped.
    """
    k0, k1, k2, n0, n1, n2 = _suit_keys(conc)
    in_melds = meld_suits(meld_tile, n_melds)
    need = 4 - n_melds
    p0 = p1 = p2 = 0
    s0 = s1 = s2 = 0
    if n_melds == 0:  # per-suit pair / odd-kind counts for seven pairs
        for r in range(9):
            c = conc[r]
            p0 += c >> 1
            s0 += c & 1
            c = conc[9 + r]
            p1 += c >> 1
            s1 += c & 1
            c = conc[18 + r]
            p2 += c >> 1
            s2 += c & 1
    best = SHANTEN_NEVER + 1
    for d in range(3):
        if (void >= 0 and d != void) or (in_melds >> d) & 1:
            continue
        if d == 0:
            dist = two_suit_distance(table, k1, k2, need)
            sp = seven_pairs_distance(p1 + p2, s1 + s2)
        elif d == 1:
            dist = two_suit_distance(table, k0, k2, need)
            sp = seven_pairs_distance(p0 + p2, s0 + s2)
        else:
            dist = two_suit_distance(table, k0, k1, need)
            sp = seven_pairs_distance(p0 + p1, s0 + s1)
        if n_melds == 0 and sp < dist:
            dist = sp
        if dist < best:
            best = dist
    return best - 1


@njit(cache=True)
def _held(conc, meld_kind, meld_tile, n_melds, k):
    """Copies of kind k held: concealed plus those in a pung (3) or kong (4) set down."""
    h = np.int64(conc[k])
    for i in range(n_melds):
        if meld_tile[i] == k:
            h += 3 if meld_kind[i] == MELD_PUNG else 4
    return h


@njit(cache=True)
def held4_mask(conc, meld_kind, meld_tile, n_melds):
    """Bit k set when all four copies of kind k are held (concealed + pung/kong set down)."""
    mask = 0
    for k in range(27):
        if _held(conc, meld_kind, meld_tile, n_melds, k) >= 4:
            mask |= 1 << k
    return mask


@njit(cache=True)
def _conc_suits(n0, n1, n2):
    """Bit set of the suits with concealed tiles."""
    return (1 if n0 > 0 else 0) | (2 if n1 > 0 else 0) | (4 if n2 > 0 else 0)


@njit(cache=True)
def _near(conc, k):
    """Kind k or a kind of its suit at most two ranks away is held."""
    r = k % 9
    for rr in range(max(r - 2, 0), min(r + 3, 9)):  # noqa: SIM110 (numba compiles no generator expressions)
        if conc[k - r + rr] > 0:
            return True
    return False


@njit(cache=True)
def wait_mask(table, conc, meld_kind, meld_tile, n_melds, void):
    """Bit k set when one more tile of kind k completes the 13-tile-shaped hand (``conc[k] == 4`` never set)."""
    k0, k1, k2, n0, n1, n2 = _suit_keys(conc)
    if n0 + n1 + n2 != 13 - 3 * n_melds:
        return 0
    used = meld_suits(meld_tile, n_melds) | _conc_suits(n0, n1, n2)
    mask = 0
    # _standard_complete with the tile added to suit s: the other two suits are unchanged, so their verdicts are
    # looked up once; only the receiving suit's new key is looked up per kind
    ok0 = _suit_ok(table, k0, n0)
    ok1 = _suit_ok(table, k1, n1)
    ok2 = _suit_ok(table, k2, n2)
    for s in range(3):
        if not _legal_suits(used | (1 << s), void):
            continue
        if s == 0:
            key, n, others = k0, n0, ok1 * ok2
            rest = ok1 + ok2
        elif s == 1:
            key, n, others = k1, n1, ok0 * ok2
            rest = ok0 + ok2
        else:
            key, n, others = k2, n2, ok0 * ok1
            rest = ok0 + ok1
        if others == 0 or (n + 1) % 3 == 1:
            continue
        step = 1
        for r in range(9):
            k = 9 * s + r
            # a tile completes only a pung or pair of its kind or a run with a held tile at most two ranks away
            if conc[k] < 4 and _near(conc, k):
                ok = _suit_ok(table, key + step, n + 1)
                if ok != 0 and rest + ok == 4:
                    mask |= 1 << k
            step *= 5
    # seven pairs: six pairs (a four-of-a-kind is two) and one odd kind, which is the wait
    if n_melds == 0 and _legal_suits(used, void):
        odd = 0
        odd_kind = 0
        for k in range(27):
            if conc[k] & 1:
                odd += 1
                odd_kind = k
        if odd == 1:
            mask |= 1 << odd_kind
    return mask


@njit(cache=True)
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


@njit(cache=True)
def _yaojiu_rest(rest):
    """Terminal tiles left after the runs: a triplet (0 pairs), a pair (1), nothing (0), else impossible."""
    if rest == 0 or rest == 3:
        return 0
    if rest == 2:
        return 1
    return -1


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _tile_facts(conc, meld_kind, meld_tile, n_melds):
    """(gen, all ranks 2/5/8, no 1/9, suits used bit set) over the concealed tiles and the melds."""
    gen = 0
    jiang = True
    simple = True
    used = 0
    for k in range(27):
        h = _held(conc, meld_kind, meld_tile, n_melds, k)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _better(a_fan, a_pts, a_type, b_fan, b_pts, b_type):
    """Is score a preferable to b: more fan, then more points, then the earlier hand type."""
    if a_fan != b_fan:
        return a_fan > b_fan
    if a_pts != b_pts:
        return a_pts > b_pts
    return a_type < b_type


@njit(cache=True)
def _win_shapes(table, conc, meld_kind, meld_tile, n_melds, void, win_tile):
    """The context-free analysis of a win: ``(ok, common, jiang, gen, tri, yao, plain, sevens)`` — ``common``
    the flags every split shares (清一色, 中张; no context flags), the rest the candidate splits as flag sets
    (0 = none). ``ok`` False when ``conc`` (which includes ``win_tile``) is not a legal winning hand."""
    k0, k1, k2, n0, n1, n2 = _suit_keys(conc)
    if win_tile < 0 or win_tile >= 27 or conc[win_tile] == 0 or n0 + n1 + n2 != 14 - 3 * n_melds:
        return False, 0, False, 0, 0, 0, 0, 0
    gen, jiang, simple, used = _tile_facts(conc, meld_kind, meld_tile, n_melds)
    if not _legal_suits(used, void):
        return False, 0, False, 0, 0, 0, 0, 0
    standard = _standard_complete(table, k0, k1, k2, n0, n1, n2)
    pairs7 = _seven_pairs(conc, n_melds)
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


@njit(cache=True)
def _best_split(common, jiang, gen, tri, yao, plain, sevens, self_draw, params):
    """The split that scores most (:func:`_better`) as ``evaluate_win``'s 6-tuple."""
    best = (np.int64(-1), np.int64(0), np.int64(0), np.int64(0), np.int64(-1), np.int64(0))
    for shape in (tri, yao, plain, sevens):
        if shape == 0:
            continue
        flags = common | shape
        fan, capped, g, ht, pts = score_flags(flags, jiang, gen, self_draw, params)
        if best[0] < 0 or _better(fan, pts, ht, best[0], best[5], best[4]):
            best = (fan, capped, flags, g, ht, pts)
    return best


@njit(cache=True)
def evaluate_win(table, conc, meld_kind, meld_tile, n_melds, void, win_tile, ctx, params):
    """Score a win: ``(fan, capped_fan, flags, gen, hand_type, points)``, all int64.

    ``conc`` includes ``win_tile``. ``fan`` is after extras (and the self-draw add_fan), before the cap; ``gen``
    after long_uses_gen; ``points`` = what each payer pays in base units, add_base bonus included. The split
    that scores most is used. Not a winning hand: ``fan = −1``, ``hand_type = −1``, the rest 0.
    """
    ok, common, jiang, gen, tri, yao, plain, sevens = _win_shapes(table, conc, meld_kind, meld_tile, n_melds, void,
                                                                  win_tile)
    if not ok:
        return (np.int64(-1), np.int64(0), np.int64(0), np.int64(0), np.int64(-1), np.int64(0))
    common |= _context_flags(ctx, meld_kind, n_melds)
    return _best_split(common, jiang, gen, tri, yao, plain, sevens, (ctx & CTX_SELF_DRAW) != 0, params)


@njit(cache=True)
def win_points_both(table, conc, meld_kind, meld_tile, n_melds, void, win_tile, params):
    """``(points as a discard win, points as a self-draw)`` of a win with no other context: exactly
    ``evaluate_win(…, 0, params)[5]`` and ``evaluate_win(…, CTX_SELF_DRAW, params)[5]``, analysing the
    tiles once (the bots price every wait both ways). ``(0, 0)`` when not a winning hand."""
    ok, common, jiang, gen, tri, yao, plain, sevens = _win_shapes(table, conc, meld_kind, meld_tile, n_melds, void,
                                                                  win_tile)
    if not ok:
        return np.int64(0), np.int64(0)
    common |= _context_flags(np.int64(0), meld_kind, n_melds)
    ron = _best_split(common, jiang, gen, tri, yao, plain, sevens, False, params)[5]
    sd = _best_split(common | F_ZIMO, jiang, gen, tri, yao, plain, sevens, True, params)[5]
    return ron, sd


@njit(cache=True)
def max_ready_points(table, conc, meld_kind, meld_tile, n_melds, void, ctx, params):
    """查大叫: best points (base units) over the waits of a 13-tile hand, as a discard win with no situational
    context but ``ctx`` (int64: the hand's ``CTX_SING``/``CTX_DANCE`` when it declared, else 0), capped; 0 when
    not ready. Waits on a kind already held four times do not count."""
    waits = wait_mask(table, conc, meld_kind, meld_tile, n_melds, void)
    waits &= ~held4_mask(conc, meld_kind, meld_tile, n_melds)
    if waits == 0:
        return 0
    hand = conc.copy()
    best = 0
    for k in range(27):
        if (waits >> k) & 1:
            hand[k] += 1
            res = evaluate_win(table, hand, meld_kind, meld_tile, n_melds, void, k, ctx, params)
            hand[k] -= 1
            if res[5] > best:
                best = res[5]
    return best
