"""Compiled hand shape: completeness, 缺一门 shanten, waits and four-of-a-kind masks of a hand (docs/spec.md §3, §5).

Plain arrays only (see docs/internals.md): ``conc: uint8[27]`` concealed counts, ``meld_kind/meld_tile: int8[4]``
with ``n_melds`` used, ``void`` the declared void suit or −1; :class:`HandTiles` holds the five as one record for
the callers above (the win evaluation, the bots). Every function that looks up the per-suit distance
table of :mod:`simulator.kernel.tables` takes it as its first argument (``table = suit_table()``), so numba never
freezes the 19.5 MB array into compiled code.

A suit's tiles are summarised by their suit key (``Σ count[r]·5^r``) and tile count; the table then answers
"how many tiles are missing for m melds + p pairs" in one lookup, so no function here recurses or allocates. The
value of a win (patterns, fan, points) is :mod:`simulator.kernel.evaluate`.

``is_complete``, ``shanten`` and ``wait_mask`` take ``meld_kind`` without reading it, on purpose: every hand
function takes the five members of :class:`HandTiles` in the same order (callers unpack one record), and a kong
counts as three tiles toward the 14 here, so whether a meld is a pung or a kong cannot change a shape — only which
suit it is in (``meld_tile``) and how many there are. ``held_copies``/``held4_mask`` do read it (a kong holds four).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

# Meld kinds of meld_kind[i] (a kong counts as three tiles towards the 14).
MELD_NONE = 0
MELD_PUNG = 1
MELD_KONG = 2   # exposed: 直杠 or 加杠
MELD_CKONG = 3  # concealed: 暗杠

SHANTEN_NEVER = 99  # shanten of a hand that can never win (melds in three suits, or in the void suit)

_SEVEN_PAIRS = 7


class HandTiles(NamedTuple):
    """One seat's own hand as one record (the bots and the win evaluation take it as ``hand``):

    - ``conc: uint8[27]`` concealed counts per kind (a row of ``HandState.conc``),
    - ``mk: int8[4]`` meld kinds (``MELD_*``) and ``mt: int8[4]`` meld tiles (rows of ``HandState.mk``/``mt``),
    - ``nm: int64`` melds in use,
    - ``void: int64`` the suit treated as dead (declared void or a bot's planning void), −1 none.

    Build it in compiled code only through :func:`hand_tiles`, so that numba sees one tuple type (a member of
    another dtype would compile a second copy of every function taking it); Python callers may build the class
    with arrays of these dtypes and ints. The arrays are the seat's own, not copies: a function may change them
    in place (always restoring them) and every ``HandTiles`` of them sees the change."""

    conc: np.ndarray
    mk: np.ndarray
    mt: np.ndarray
    nm: np.int64
    void: np.int64


@njit(cache=True, inline="always")
def hand_tiles(conc, mk, mt, nm, void):
    """The one constructor of :class:`HandTiles` in compiled code (``nm`` and ``void`` as int64)."""
    return HandTiles(conc, mk, mt, np.int64(nm), np.int64(void))


@njit(cache=True, _nrt=False)
def suit_keys(conc):
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


@njit(cache=True, _nrt=False)
def meld_suits(meld_tile, n_melds):
    """Bit set of the suits that hold a meld set down."""
    s = 0
    for i in range(n_melds):
        s |= 1 << (np.int64(meld_tile[i]) // 9)
    return s


@njit(cache=True, _nrt=False)
def legal_suits(used, void):
    """At most two suits, none of them the declared void suit."""
    if used == 7:
        return False
    return not (void >= 0 and (used >> void) & 1)


@njit(cache=True, _nrt=False)
def _suit_ok(table, key, n):
    """This suit's tiles are exactly melds (+ at most one pair); returns 0 = no, 1 = melds only, 2 = with pair."""
    r = n % 3
    if r == 1 or n > 14:
        return 0
    m = n // 3
    if r == 2:
        return 2 if table[key, m + 5] == 0 else 0
    return 1 if table[key, m] == 0 else 0


@njit(cache=True, _nrt=False)
def standard_complete(table, k0, k1, k2, n0, n1, n2):
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


@njit(cache=True, _nrt=False)
def is_seven_pairs(conc, n_melds):
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


@njit(cache=True, _nrt=False)
def is_complete(table, conc, meld_kind, meld_tile, n_melds, void):
    """True when ``conc`` plus the melds set down is a legal winning hand (standard or seven pairs, ≤ 2 suits
    counting melds, no tile of ``void``). ``meld_kind`` is not read (see the module docstring)."""
    k0, k1, k2, n0, n1, n2 = suit_keys(conc)
    if n0 + n1 + n2 != 14 - 3 * n_melds:
        return False
    used = meld_suits(meld_tile, n_melds) | _conc_suits(n0, n1, n2)
    if not legal_suits(used, void):
        return False
    if standard_complete(table, k0, k1, k2, n0, n1, n2):
        return True
    return is_seven_pairs(conc, n_melds)


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def seven_pairs_distance(pairs, singles):
    """Tiles to add for seven pairs from ``pairs`` pairs and ``singles`` odd kinds of the kept suits."""
    missing = _SEVEN_PAIRS - pairs
    if missing <= 0:
        return 0
    if singles >= missing:
        return missing
    return singles + 2 * (missing - singles)  # the rest need a fresh pair each


@njit(cache=True, _nrt=False)
def shanten(table, conc, meld_kind, meld_tile, n_melds, void):
    """缺一门 shanten of a hand with 3k+1 or 3k+2 concealed tiles (k = 4 − n_melds); −1 = complete.

    Min over the droppable suits (``void`` if declared, else any suit without a meld set down; its tiles are
    dead) of the tiles missing for the standard form (or seven pairs when nothing is set down), minus one.
    Returns ``SHANTEN_NEVER`` when no suit can be dropped. ``meld_kind`` is not read (see the module docstring).
    """
    k0, k1, k2, n0, n1, n2 = suit_keys(conc)
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


@njit(cache=True, _nrt=False)
def held_copies(conc, meld_kind, meld_tile, n_melds, k):
    """Copies of kind k held: concealed plus those in a pung (3) or kong (4) set down."""
    h = np.int64(conc[k])
    for i in range(n_melds):
        if meld_tile[i] == k:
            h += 3 if meld_kind[i] == MELD_PUNG else 4
    return h


@njit(cache=True, _nrt=False)
def held4_mask(conc, meld_kind, meld_tile, n_melds):
    """Bit k set when all four copies of kind k are held (concealed + pung/kong set down)."""
    mask = 0
    for k in range(27):
        if held_copies(conc, meld_kind, meld_tile, n_melds, k) >= 4:
            mask |= 1 << k
    return mask


@njit(cache=True, _nrt=False)
def _conc_suits(n0, n1, n2):
    """Bit set of the suits with concealed tiles."""
    return (1 if n0 > 0 else 0) | (2 if n1 > 0 else 0) | (4 if n2 > 0 else 0)


@njit(cache=True, _nrt=False)
def _near(conc, k):
    """Kind k or a kind of its suit at most two ranks away is held."""
    r = k % 9
    for rr in range(max(r - 2, 0), min(r + 3, 9)):  # noqa: SIM110 (numba compiles no generator expressions)
        if conc[k - r + rr] > 0:
            return True
    return False


@njit(cache=True, _nrt=False)
def wait_mask(table, conc, meld_kind, meld_tile, n_melds, void):
    """Bit k set when one more tile of kind k completes the 13-tile-shaped hand (``conc[k] == 4`` never set);
    ``meld_kind`` is not read (see the module docstring)."""
    k0, k1, k2, n0, n1, n2 = suit_keys(conc)
    if n0 + n1 + n2 != 13 - 3 * n_melds:
        return 0
    used = meld_suits(meld_tile, n_melds) | _conc_suits(n0, n1, n2)
    mask = 0
    # standard_complete with the tile added to suit s: the other two suits are unchanged, so their verdicts are
    # looked up once; only the receiving suit's new key is looked up per kind
    ok0 = _suit_ok(table, k0, n0)
    ok1 = _suit_ok(table, k1, n1)
    ok2 = _suit_ok(table, k2, n2)
    for s in range(3):
        if not legal_suits(used | (1 << s), void):
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
    if n_melds == 0 and legal_suits(used, void):
        odd = 0
        odd_kind = 0
        for k in range(27):
            if conc[k] & 1:
                odd += 1
                odd_kind = k
        if odd == 1:
            mask |= 1 << odd_kind
    return mask
