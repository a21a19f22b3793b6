"""The compiled evaluator against independent slow references written here (recursive splits, enumerated
targets), plus the properties of docs/spec.md §3 (缺一门 shanten, waits, at most two suits)."""

from __future__ import annotations

import itertools
import random
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from simulator.kernel import evaluate as E
from simulator.kernel import shape as H
from simulator.kernel import tables
from simulator.kernel.tiles import counts_from_str, format_counts, parse_tiles
from simulator.rules import FLAG_BIT, HAND_TYPES, load_rules

TABLE = tables.suit_table()
NO_MELDS = (np.zeros(4, dtype=np.int8), np.zeros(4, dtype=np.int8))
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                         HealthCheck.too_slow])


def melds_arrays(melds: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    kind = np.zeros(4, dtype=np.int8)
    tile = np.zeros(4, dtype=np.int8)
    for i, (k, t) in enumerate(melds):
        kind[i], tile[i] = k, t
    return kind, tile


# ---- independent references -----------------------------------------------------------------------------

def ref_standard(counts: list[int], melds_left: int, pair_left: int) -> bool:
    """Exact split of ``counts`` into melds + pairs by recursion on the lowest tile (slow, obviously right)."""
    k = next((i for i, c in enumerate(counts) if c), None)
    if k is None:
        return melds_left == 0 and pair_left == 0
    c = list(counts)
    if c[k] >= 3 and melds_left:
        c[k] -= 3
        if ref_standard(c, melds_left - 1, pair_left):
            return True
        c[k] += 3
    if k % 9 <= 6 and c[k + 1] and c[k + 2] and melds_left:
        c[k] -= 1
        c[k + 1] -= 1
        c[k + 2] -= 1
        if ref_standard(c, melds_left - 1, pair_left):
            return True
        c[k] += 1
        c[k + 1] += 1
        c[k + 2] += 1
    if c[k] >= 2 and pair_left:
        c[k] -= 2
        if ref_standard(c, melds_left, pair_left - 1):
            return True
    return False


def ref_complete(conc, melds: list[tuple[int, int]], void: int = -1) -> bool:
    counts = [int(x) for x in conc]
    suits = {k // 9 for k, c in enumerate(counts) if c} | {t // 9 for _, t in melds}
    if len(suits) > 2 or void in suits or sum(counts) != 14 - 3 * len(melds):
        return False
    if ref_standard(counts, 4 - len(melds), 1):
        return True
    return not melds and all(c % 2 == 0 for c in counts)


@cache
def _targets(m: int, p: int) -> np.ndarray:
    """Every count vector of one suit made of m melds + p pairs, each rank ≤ 4: ``int64[n, 9]``."""
    groups = [np.eye(9, dtype=np.int64)[r] * 3 for r in range(9)]
    groups += [np.eye(9, dtype=np.int64)[r:r + 3].sum(0) for r in range(7)]
    pairs = [np.eye(9, dtype=np.int64)[r] * 2 for r in range(9)] if p else [np.zeros(9, dtype=np.int64)]
    rows = [sum(combo, np.zeros(9, dtype=np.int64)) + pr
            for combo in itertools.combinations_with_replacement(groups, m) for pr in pairs]
    arr = np.unique(np.array(rows), axis=0)
    return arr[(arr <= 4).all(1)]


@cache
def ref_suit_distance(counts: tuple[int, ...], m: int, p: int) -> int:
    """Fewest tiles to add to one suit for m melds + p pairs, by brute force over all targets."""
    return int(np.maximum(_targets(m, p) - np.array(counts), 0).sum(1).min())


def ref_seven_pairs_distance(counts: list[int]) -> int:
    """Knapsack over kinds: j pairs from a kind (j ≤ 2) costs max(0, 2j − count); exactly seven pairs."""
    inf = 10**9
    best = [0] + [inf] * 7
    for c in counts:
        new = [inf] * 8
        for have in range(8):
            if best[have] == inf:
                continue
            for j in range(3):
                if have + j <= 7:
                    new[have + j] = min(new[have + j], best[have] + max(0, 2 * j - c))
        best = new
    return best[7]


def ref_shanten(conc, melds: list[tuple[int, int]], void: int = -1) -> int:
    counts = [int(x) for x in conc]
    meld_suits = {t // 9 for _, t in melds}
    need = 4 - len(melds)
    best = None
    for drop in range(3):
        if (void >= 0 and drop != void) or drop in meld_suits:
            continue
        a, b = (s for s in range(3) if s != drop)
        ca, cb = tuple(counts[9 * a:9 * a + 9]), tuple(counts[9 * b:9 * b + 9])
        d = min(ref_suit_distance(ca, m, p) + ref_suit_distance(cb, need - m, 1 - p)
                for m in range(need + 1) for p in (0, 1))
        if not melds:
            d = min(d, ref_seven_pairs_distance(list(ca) + list(cb)))
        best = d if best is None else min(best, d)
    return best - 1


def ref_waits(conc, melds: list[tuple[int, int]], void: int = -1) -> int:
    mask = 0
    for k in range(27):
        if conc[k] < 4:
            h = conc.copy()
            h[k] += 1
            if ref_complete(h, melds, void):
                mask |= 1 << k
    return mask


# ---- hand generators --------------------------------------------------------------------------------------

@st.composite
def complete_hands(draw, allow_melds: bool = True):
    """(conc uint8[27], melds [(kind, tile)]) of a random complete hand within one or two suits."""
    suits = draw(st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True))
    kinds = st.sampled_from([9 * s + r for s in suits for r in range(9)])
    held = np.zeros(27, dtype=np.int64)
    conc = np.zeros(27, dtype=np.int64)
    melds: list[tuple[int, int]] = []
    if draw(st.integers(0, 7)) == 0:  # seven pairs
        for k in draw(st.lists(kinds, min_size=7, max_size=7)):
            conc[k] += 2
    else:
        n_melds = draw(st.integers(0, 4)) if allow_melds else 0
        for _ in range(n_melds):
            kind = draw(st.sampled_from([H.MELD_PUNG, H.MELD_KONG, H.MELD_CKONG]))
            t = draw(kinds)
            melds.append((kind, t))
            held[t] += 3 if kind == H.MELD_PUNG else 4
        for _ in range(4 - n_melds):
            k = draw(kinds)
            if draw(st.booleans()) and k % 9 <= 6:
                conc[k:k + 3] += 1
            else:
                conc[k] += 3
        conc[draw(kinds)] += 2
    assume((conc + held).max() <= 4)
    return conc.astype(np.uint8), melds


@st.composite
def near_hands(draw, size: int):
    """A concealed hand of ``size`` (13 or 14) tiles, no melds: a complete hand with a few tiles swapped for
    random ones, or a plain random deal."""
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        conc, _ = draw(complete_hands(allow_melds=False))
        tiles = [k for k in range(27) for _ in range(int(conc[k]))]
        rnd.shuffle(tiles)
        tiles = tiles[:size - draw(st.integers(0, 3))]
    else:
        tiles = []
    pool = [k for k in range(27) for _ in range(4 - tiles.count(k))]
    rnd.shuffle(pool)
    tiles += pool[:size - len(tiles)]
    return np.bincount(tiles, minlength=27).astype(np.uint8)


# ---- tables -------------------------------------------------------------------------------------------------

def test_table_shape_and_known_entries():
    assert TABLE.shape == (5**9, tables.ROW) and TABLE.dtype == np.uint8
    assert TABLE.flags.c_contiguous and TABLE.ctypes.data % 64 == 0  # whole rows in one cache line
    assert list(TABLE[0, :10]) == [0, 3, 6, 9, 12, 2, 5, 8, 11, 14]  # empty suit: 3 per meld, 2 for the pair
    nine_gates = tables.suit_key([3, 1, 1, 1, 1, 1, 1, 1, 3])
    assert TABLE[nine_gates, 4 + 5] == 1 and TABLE[nine_gates, 4] == 0


def test_table_matches_brute_force_on_random_keys():
    rng = np.random.default_rng(7)
    for _ in range(300):
        counts = rng.integers(0, 5, size=9) * (rng.random(9) < 0.45)
        key = tables.suit_key(counts)
        for m in range(5):
            for p in (0, 1):
                assert TABLE[key, m + 5 * p] == ref_suit_distance(tuple(int(c) for c in counts), m, p), counts


def test_table_gains_are_the_columns_one_more_tile_lowers():
    rng = np.random.default_rng(11)
    keys = rng.integers(0, 5**9, size=20_000)
    for r in range(9):
        lo, hi = TABLE[keys, tables.GAIN_COL + 2 * r], TABLE[keys, tables.GAIN_COL + 2 * r + 1]
        g = lo.astype(np.int64) | hi.astype(np.int64) << 8
        room = keys // 5**r % 5 < 4
        lower = TABLE[np.where(room, keys + 5**r, keys), :10] < TABLE[keys, :10]
        want = (lower * (1 << np.arange(10))).sum(axis=1) * room
        assert np.array_equal(g, want), r
    assert not TABLE[:, tables.GAIN_COL + 18:].any()  # padding


def test_table_cache_roundtrip(tmp_path, monkeypatch):
    monkeypatch.setenv("XUEZHAN_CACHE", str(tmp_path))
    path = tables.table_path()
    assert path.parent == tmp_path
    stale = tmp_path / "suit_table_v1.npy"  # an older version's table, without the gains
    stale.write_bytes(b"old")
    tables._save(TABLE, path)
    assert not list(tmp_path.glob("*.tmp"))  # written under a temp name, then renamed
    assert not stale.exists()  # deleted when the new version is written
    assert np.array_equal(tables._load(path), TABLE)
    path.write_bytes(b"truncated")
    assert tables._load(path) is None  # a broken cache is rebuilt, not trusted


# ---- completeness and shanten examples ----------------------------------------------------------------

@pytest.mark.parametrize(("hand", "complete"), [
    ("123m456m789m123p55p", True),
    ("11223344556677m", True),          # seven pairs and a standard split
    ("11112233445566m", True),           # seven pairs with a four-of-a-kind
    ("123m456m789m123p5p5s", False),     # three suits
    ("1133557799m1122p", True),
    ("1133557799m112p5s", False),
    ("11122233344455m", True),
    ("11122233344456m", True),           # 11 123 234 234 456
    ("11122233344457m", False),
])
def test_is_complete_examples(hand, complete):
    conc = counts_from_str(hand)
    assert H.is_complete(TABLE, conc, *NO_MELDS, 0, -1) is complete is ref_complete(conc, [])
    assert (H.shanten(TABLE, conc, *NO_MELDS, 0, -1) == -1) is complete


def test_void_suit_and_dead_tiles():
    conc = counts_from_str("123m456m789m123p5s")  # four melds + a tile of the dropped suit
    assert H.shanten(TABLE, conc, *NO_MELDS, 0, -1) == 1
    win = counts_from_str("123m456m789m123p55p")
    assert H.is_complete(TABLE, win, *NO_MELDS, 0, 1) is False  # p declared void
    assert H.is_complete(TABLE, win, *NO_MELDS, 0, 2) is True
    assert H.shanten(TABLE, win, *NO_MELDS, 0, 0) > 0  # m void: all the 万 are dead


def test_meld_suit_cannot_be_dropped():
    melds = [(H.MELD_PUNG, 18)]  # pung of 1s set down: the 条 stay
    conc = counts_from_str("123m456m789m55p")
    mk, mt = melds_arrays(melds)
    assert H.is_complete(TABLE, conc, mk, mt, 1, -1) is False
    assert H.shanten(TABLE, conc, mk, mt, 1, -1) == ref_shanten(conc, melds) > -1
    every = melds_arrays([(H.MELD_PUNG, 0), (H.MELD_PUNG, 9), (H.MELD_PUNG, 18)])  # melds in three suits
    assert H.shanten(TABLE, counts_from_str("5m55p6p"), *every, 3, -1) == H.SHANTEN_NEVER
    void_meld = melds_arrays([(H.MELD_PUNG, 0)])  # a meld in the declared void suit can never win either
    assert H.shanten(TABLE, counts_from_str("123p456p789p5p"), *void_meld, 1, 0) == H.SHANTEN_NEVER


def test_held4_and_waits_with_pung():
    melds = [(H.MELD_PUNG, 4)]  # pung of 5m, and a 5m in hand: all four held
    conc = counts_from_str("5m123p456p789p")
    mk, mt = melds_arrays(melds)
    waits = H.wait_mask(TABLE, conc, mk, mt, 1, -1)
    assert waits == 1 << 4  # the shape waits on 5m ...
    assert H.held4_mask(conc, mk, mt, 1) == 1 << 4  # ... which is all held: not ready
    params = load_rules("chengdu").to_arrays()
    assert E.max_ready_points(TABLE, H.HandTiles(conc, mk, mt, 1, -1), 0, params) == 0


# ---- properties ---------------------------------------------------------------------------------------------

@PROPS
@given(complete_hands(), st.randoms(use_true_random=False))
def test_complete_under_any_tile_order(hand, rnd):
    conc, melds = hand
    tiles = [f"{k % 9 + 1}{'mps'[k // 9]}" for k in range(27) for _ in range(int(conc[k]))]
    rnd.shuffle(tiles)
    permuted = np.bincount(parse_tiles("".join(tiles)), minlength=27).astype(np.uint8)
    mk, mt = melds_arrays(melds)
    assert H.is_complete(TABLE, permuted, mk, mt, len(melds), -1)
    assert ref_complete(permuted, melds)


@PROPS
@given(complete_hands())
def test_removing_a_tile_leaves_a_ready_hand_waiting_on_it(hand):
    conc, melds = hand
    mk, mt = melds_arrays(melds)
    assert H.shanten(TABLE, conc, mk, mt, len(melds), -1) == -1
    for k in np.flatnonzero(conc):
        h = conc.copy()
        h[k] -= 1
        assert H.shanten(TABLE, h, mk, mt, len(melds), -1) == 0
        waits = H.wait_mask(TABLE, h, mk, mt, len(melds), -1)
        assert (waits >> int(k)) & 1, format_counts(h)
        assert waits == ref_waits(h, melds)


@PROPS
@given(complete_hands())
def test_every_win_scores_with_at_most_two_suits(hand):
    conc, melds = hand
    mk, mt = melds_arrays(melds)
    params = load_rules("qq_sichuan").to_arrays()
    win = int(np.flatnonzero(conc)[0])
    fan, capped, flags, gen, ht, pts = E.evaluate_win(TABLE, H.HandTiles(conc, mk, mt, len(melds), -1), win, 0,
                                                      params)
    assert fan >= 1 and ht >= 0 and pts >= 1 and (flags >> FLAG_BIT["pinghu"]) & 1
    suits = {k // 9 for k in np.flatnonzero(conc)} | {t // 9 for _, t in melds}
    assert len(suits) <= 2
    assert ((flags >> FLAG_BIT["qingyise"]) & 1) == (len(suits) == 1)
    assert 0 <= ht < len(HAND_TYPES)


@PROPS
@given(near_hands(14))
def test_evaluate_win_agrees_with_completeness(conc):
    params = load_rules("chengdu").to_arrays()
    win = int(np.flatnonzero(conc)[0])
    res = E.evaluate_win(TABLE, H.HandTiles(conc, *NO_MELDS, 0, -1), win, 0, params)
    complete = ref_complete(conc, [])
    assert (res[0] >= 0) == complete == H.is_complete(TABLE, conc, *NO_MELDS, 0, -1)
    suits = {k // 9 for k in np.flatnonzero(conc)}
    assert res[0] < 0 or len(suits) <= 2


@PROPS
@given(near_hands(14))
def test_shanten_minus_one_exactly_when_complete_and_steps_by_one(conc):
    s14 = H.shanten(TABLE, conc, *NO_MELDS, 0, -1)
    assert (s14 == -1) == ref_complete(conc, [])
    after_discard = []
    for k in np.flatnonzero(conc):
        h = conc.copy()
        h[k] -= 1
        s13 = H.shanten(TABLE, h, *NO_MELDS, 0, -1)
        assert s13 in (s14, s14 + 1)  # a discard never helps, and costs at most one step
        after_discard.append(s13)
        for d in range(27):  # and a draw helps by at most one step
            if h[d] < 4:
                h[d] += 1
                assert H.shanten(TABLE, h, *NO_MELDS, 0, -1) in (s13 - 1, s13)
                h[d] -= 1
    assert min(after_discard) == max(s14, 0)  # the best discard keeps the shanten (ready if complete)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.one_of(near_hands(13), near_hands(14)), st.integers(-1, 2))
def test_shanten_matches_brute_force(conc, void):
    assert H.shanten(TABLE, conc, *NO_MELDS, 0, void) == ref_shanten(conc, [], void)


@PROPS
@given(complete_hands(), st.integers(0, 30))
def test_shanten_and_waits_with_melds_match_brute_force(hand, drop):
    conc, melds = hand
    tiles = np.flatnonzero(conc)
    h = conc.copy()
    h[tiles[drop % len(tiles)]] -= 1
    mk, mt = melds_arrays(melds)
    assert H.shanten(TABLE, h, mk, mt, len(melds), -1) == ref_shanten(h, melds) == 0
    assert H.wait_mask(TABLE, h, mk, mt, len(melds), -1) == ref_waits(h, melds)


@PROPS
@given(near_hands(13))
def test_waits_match_brute_force_and_shanten(conc):
    waits = H.wait_mask(TABLE, conc, *NO_MELDS, 0, -1)
    assert waits == ref_waits(conc, [])
    assert (waits != 0) == (H.shanten(TABLE, conc, *NO_MELDS, 0, -1) == 0)
    for void in range(3):
        assert H.wait_mask(TABLE, conc, *NO_MELDS, 0, void) == ref_waits(conc, [], void)


def test_max_ready_points_picks_the_best_wait():
    params = load_rules("chengdu").to_arrays()  # additive, cap 4, 2^fan
    conc = counts_from_str("1112345678999m")  # nine gates: waits on every 万, some make 清一色 + more
    best = 0
    for k in range(9):
        h = conc.copy()
        h[k] += 1
        best = max(best, E.evaluate_win(TABLE, H.HandTiles(h, *NO_MELDS, 0, -1), k, 0, params)[5])
    got = E.max_ready_points(TABLE, H.HandTiles(conc, *NO_MELDS, 0, -1), 0, params)
    assert got == best == 8  # 清一色 (2) + 根 on 1m or 9m (1) = 3 fan
    assert E.max_ready_points(TABLE, H.HandTiles(counts_from_str("111234567899m5p"), *NO_MELDS, 0, -1), 0,
                              params) == 0
