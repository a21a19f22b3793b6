"""The search player's samples of the hidden tiles (issue 54): a re-deal of everything the searching seat cannot see,
drawn from what it can.

:class:`Public` is built from the seat's :class:`~simulator.hands.observation.Observation` alone
(``simulator.search.public_of``): the copies of each kind it has not seen (own hand, every discard with its claim,
the face-up melds, 血战 winners' laid-down hands, its own concealed kongs), how many concealed tiles each other seat
holds, a suit a seat is known to hold none of (under a binding 定缺 its void suit: it must discard that suit
first) and the tile pinned in this step: the seat's own draw (it saw it) or, deciding on another seat's discard or
加杠, that tile in the giver's draw (in a step without a draw, in its hand): its other concealed tiles are re-dealt
like any hidden hand.
Each other seat's tiles are drawn by its profile (weights from its discards, a measured chance of being ready, the
kinds it let pass: :mod:`simulator.search.deal`), also read from the observation alone.
:func:`redeal` overwrites, in a copy of the hand's state at the start of the step, every hidden part: the other
seats' concealed tiles, the kinds of their concealed kongs, the wall still to draw, their cached waits, pass locks,
declines and random streams. Nothing of the state's own hidden parts survives it: two states with the same public
part give byte-identical re-deals for a seed (tests/test_search.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from simulator.kernel.rng import derive, randbelow
from simulator.kernel.shape import MELD_CKONG, shanten, wait_mask
from simulator.kernel.state import (
    G_HEAD,
    G_TAIL,
    N_KINDS,
    N_SEATS,
    N_TILES,
    PS_DECLINED,
    PS_DRAWN,
    PS_EVOID,
    PS_LOCK_FAN,
    PS_LOCK_MASK,
    PS_LOCKED,
    PS_READY,
    PS_START_SH,
    PS_WAITS,
    stack_empty,
)
from simulator.search.deal import deal_seat


class Public(NamedTuple):
    """The searching seat's public knowledge of the hidden tiles (all ``int64``): ``pool[27]`` the copies of each
    kind it has not seen; ``sizes[4]`` the concealed tiles of each other seat to re-deal (−1: its own seat, or a
    血战 winner whose hand is laid down); ``clean[4]`` a suit the seat holds none of, or −1; ``pin[3]`` the wall
    position, tile and seat of the draw pinned in this step (its own draw, or the tile another seat gives up), or
    position −1 with a tile and seat: that seat's hand at the step's start holds the tile besides its ``sizes``
    re-dealt ones (a step without a draw), or −1 −1 −1; the profile each other seat is dealt by
    (:mod:`simulator.search.deal`): ``weight[4, 27]`` (``float64``) per kind, ``ready[4]`` (``float64``) the
    chance it is ready, ``passed[4]`` a mask of the kinds it let pass (not its waits when ready)."""

    pool: np.ndarray
    sizes: np.ndarray
    clean: np.ndarray
    pin: np.ndarray
    weight: np.ndarray
    ready: np.ndarray
    passed: np.ndarray


@njit(cache=True, _nrt=False)
def hidden_count(st, seat: int, pub) -> int:
    """Tiles the state hides from ``seat`` at the start of the step: the other seats' concealed tiles to re-deal,
    4 per concealed kong of another seat (a 血战 winner's too: face down), the wall still to draw (the pinned draw
    counted as seen). Equal to ``pub.pool.sum()`` whenever ``pub`` describes ``st``."""
    n = st.g[G_TAIL] - st.g[G_HEAD] - (1 if pub.pin[0] >= 0 else 0)
    for q in range(N_SEATS):
        if q == seat:
            continue
        n += max(pub.sizes[q], 0)
        for i in range(st.nm[q]):
            if st.mk[q, i] == MELD_CKONG:
                n += 4
    return n


@njit(cache=True, _nrt=False)
def redeal(table, st, seat: int, pub, seed) -> bool:
    """Re-deal the hidden part of ``st`` (a copy of the hand at the start of the searching seat's step; ``table``
    the suit table) from ``pub`` with the stream of ``seed`` (``uint64``): each other seat's concealed kongs (a
    kind still unseen four times, not of its clean suit), its ``pub.sizes`` concealed tiles (none of its clean
    suit; drawn by its profile, :func:`simulator.search.deal.deal_seat`), then the rest shuffled into the wall
    from ``g[G_HEAD]`` to ``g[G_TAIL]`` (the pinned draw in its place, or the pinned tile added to its seat's
    hand); the other seats' waits are recomputed,
    their pass locks, declines, last draws and streams reset (hidden too). False when ``pub``
    cannot be dealt (then ``st`` is left part-dealt: discard it)."""
    rng = stack_empty(1, np.uint64)
    rng[0] = seed
    pool = stack_empty(N_KINDS, np.int64)
    for k in range(N_KINDS):
        pool[k] = pub.pool[k]
    for q in range(N_SEATS):
        if q == seat:
            continue
        for i in range(st.nm[q]):  # a 血战 winner's concealed kongs too: face down
            if st.mk[q, i] != MELD_CKONG:
                continue
            n = 0
            for k in range(N_KINDS):
                if pool[k] == 4 and k // 9 != pub.clean[q]:
                    n += 1
            if n == 0:
                return False
            r = randbelow(rng, n)
            for k in range(N_KINDS):
                if pool[k] == 4 and k // 9 != pub.clean[q]:
                    if r == 0:
                        pool[k] = 0
                        st.mt[q, i] = k
                        break
                    r -= 1
    for q in range(N_SEATS):
        if pub.sizes[q] >= 0 and not deal_seat(table, st, q, pool, pub, rng):
            return False
    tiles = stack_empty(N_TILES, np.int64)
    m = 0
    for k in range(N_KINDS):
        for _ in range(pool[k]):
            tiles[m] = k
            m += 1
    head, tail, pin_at = st.g[G_HEAD], st.g[G_TAIL], pub.pin[0]
    if tail - head - (1 if pin_at >= 0 else 0) != m:
        return False
    shuffle_prefix(tiles, m, rng)
    pos = 0
    for w in range(head, tail):
        if w == pin_at:
            st.wall[w] = pub.pin[1]
        else:
            st.wall[w] = tiles[pos]
            pos += 1
    reset_hidden(table, st, seat, pub, seed)
    if pin_at < 0 and pub.pin[1] >= 0:
        st.conc[pub.pin[2], pub.pin[1]] += 1
    return True


@njit(cache=True, _nrt=False)
def shuffle_prefix(a, n: int, rng) -> None:
    """Fisher–Yates shuffle of ``a[:n]`` in place."""
    for i in range(n - 1, 0, -1):
        j = randbelow(rng, i + 1)
        t = a[i]
        a[i] = a[j]
        a[j] = t


@njit(cache=True, _nrt=False)
def reset_hidden(table, st, seat: int, pub, seed) -> None:
    """The other re-dealt seats' hidden per-seat state: no pass lock or decline (the seat cannot know of them), no
    last draw, start shanten 0, fresh random streams of ``seed``; their waits recomputed from the re-deal. The deal
    before 换三张 (``dealt``) of every other seat is cleared (unused by the rest of the hand)."""
    ps = st.ps
    st.rngs[0] = derive(seed, 2 * N_SEATS)
    for q in range(N_SEATS):
        if q == seat:
            continue
        for k in range(N_KINDS):
            st.dealt[q, k] = 0
        if pub.sizes[q] < 0:
            continue
        ps[q, PS_LOCKED] = 0
        ps[q, PS_LOCK_MASK] = 0
        ps[q, PS_LOCK_FAN] = 0
        ps[q, PS_DECLINED] = 0
        ps[q, PS_DRAWN] = -1
        ps[q, PS_READY] = 0
        ps[q, PS_START_SH] = 0
        st.rngs[1 + q] = derive(seed, N_SEATS + q)
        conc, mk, mt, nm, ev = st.conc[q], st.mk[q], st.mt[q], st.nm[q], ps[q, PS_EVOID]
        ps[q, PS_WAITS] = 0
        if shanten(table, conc, mk, mt, nm, ev) == 0:
            ps[q, PS_WAITS] = wait_mask(table, conc, mk, mt, nm, ev)
