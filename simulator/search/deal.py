"""One seat's concealed tiles in the search player's re-deal (issue 54), drawn with weights read from the table.

A uniform re-deal hands an opponent tiles its play argues against and a hand that is almost never ready, so a
discard the opponents really wait on looks safe in the rollouts. :func:`deal_seat` draws instead from the seat's
public profile (:class:`simulator.search.sample.Public`): each unseen copy of kind k with weight ``weight[q, k]``
(low for kinds q discarded and their neighbours: a tile q held in a pair or a run it would have kept), and with
probability ``ready[q]`` a ready hand, otherwise one a tile from ready (late in a hand nearly every seat not ready
is: ``benchmarks/search_profile.py``) — its groups drawn as pungs and runs of unseen tiles (a group's weight the
product of its tiles'), the last tiles until the whole is ready on waits q has not let pass (``passed[q]``: a kind
another seat discarded after q's last discard, which q would have won on), or a tile from ready. A profile too
tight to meet in a few tries is dealt as a hand not ready drawn tile by tile (every unseen tile still dealt once).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.kernel.rng import next_u64
from simulator.kernel.shape import shanten, wait_mask
from simulator.kernel.state import N_KINDS, PS_EVOID, stack_empty

GROUP_TRIES = 6  # fresh groups for a hand ready or a tile from it
TAIL_TRIES = 12  # last tiles per set of groups
PLAIN_TRIES = 8  # hands drawn tile by tile, when the groups fail, until one is not ready


@njit(cache=True, _nrt=False)
def uniform(rng) -> float:
    """A float in [0, 1) from the stream ``rng``."""
    return float(next_u64(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, _nrt=False)
def draw_tile(pool, w, bar: int, rng) -> int:
    """Take one unseen copy outside suit ``bar`` (−1: none barred), kind k with weight ``pool[k] · w[k]``; −1
    when none is left."""
    tot = 0.0
    for k in range(N_KINDS):
        if pool[k] > 0 and k // 9 != bar:
            tot += pool[k] * w[k]
    if tot <= 0.0:
        return -1
    x = uniform(rng) * tot
    last = -1
    for k in range(N_KINDS):
        if pool[k] > 0 and k // 9 != bar:
            last = k
            x -= pool[k] * w[k]
            if x < 0.0:
                break
    pool[last] -= 1
    return last


@njit(cache=True, _nrt=False)
def _group_weight(pool, w, k: int, run: bool) -> float:
    if run:
        return pool[k] * pool[k + 1] * pool[k + 2] * w[k] * w[k + 1] * w[k + 2] if k % 9 <= 6 else 0.0
    c = pool[k]
    return c * (c - 1) * (c - 2) / 6.0 * w[k] ** 3


@njit(cache=True, _nrt=False)
def draw_group(pool, w, bar: int, conc, rng) -> bool:
    """Take one pung or run of unseen tiles outside suit ``bar`` into ``conc`` (weight: the ways to pick its
    copies times its tiles' weights); False when none is left."""
    tot = 0.0
    for k in range(N_KINDS):
        if k // 9 != bar:
            tot += _group_weight(pool, w, k, False) + _group_weight(pool, w, k, True)
    if tot <= 0.0:
        return False
    x = uniform(rng) * tot
    for k in range(N_KINDS):
        if k // 9 == bar:
            continue
        for run in (False, True):
            x -= _group_weight(pool, w, k, run)
            if x < 0.0:
                for j in range(3):
                    t = k + j if run else k
                    pool[t] -= 1
                    conc[t] += 1
                return True
    return False


@njit(cache=True, _nrt=False)
def _restore(pool, saved, conc, held) -> None:
    for k in range(N_KINDS):
        pool[k] = saved[k]
        conc[k] = held[k]


@njit(cache=True, _nrt=False)
def _draw_into(pool, w, bar: int, conc, n: int, rng) -> bool:
    for _ in range(n):
        t = draw_tile(pool, w, bar, rng)
        if t < 0:
            return False
        conc[t] += 1
    return True


@njit(cache=True, _nrt=False)
def _fits(table, st, q: int, target: int, passed) -> bool:
    """Seat q's hand is ``target`` tiles from ready (0: ready on waits it has not let pass, ``passed``)."""
    conc, mk, mt, nm, ev = st.conc[q], st.mk[q], st.mt[q], st.nm[q], st.ps[q, PS_EVOID]
    if shanten(table, conc, mk, mt, nm, ev) != target:
        return False
    if target:
        return True
    waits = wait_mask(table, conc, mk, mt, nm, ev)
    return waits != 0 and (waits & passed) == 0


@njit(cache=True, _nrt=False)
def deal_seat(table, st, q: int, pool, pub, rng) -> bool:
    """Deal seat q's ``pub.sizes[q]`` concealed tiles into ``st.conc[q]`` from the unseen counts ``pool`` (taken
    out of it) by q's profile in ``pub``; False when too few unseen tiles outside its clean suit are left."""
    n, w, clean, conc = pub.sizes[q], pub.weight[q], pub.clean[q], st.conc[q]
    ev = st.ps[q, PS_EVOID]
    bar = clean if clean >= 0 else ev  # a ready hand holds none of its void suit
    saved, held = stack_empty(N_KINDS, np.int64), stack_empty(N_KINDS, np.int64)
    after, mid = stack_empty(N_KINDS, np.int64), stack_empty(N_KINDS, np.int64)
    for k in range(N_KINDS):
        saved[k] = pool[k]
        held[k] = 0
    target = 0 if uniform(rng) < pub.ready[q] else 1
    groups = (n - 1) // 3 - (1 if n >= 4 else 0)  # the last tiles: four (pair and part, or group and single)
    for _ in range(GROUP_TRIES):
        _restore(pool, saved, conc, held)
        ok = True
        for _ in range(groups):
            ok = ok and draw_group(pool, w, bar, conc, rng)
        if not ok:
            continue
        for k in range(N_KINDS):
            after[k] = pool[k]
            mid[k] = conc[k]
        for _ in range(TAIL_TRIES):
            _restore(pool, after, conc, mid)
            if _draw_into(pool, w, bar, conc, n - 3 * groups, rng) and _fits(table, st, q, target, pub.passed[q]):
                return True
    for _ in range(PLAIN_TRIES):
        _restore(pool, saved, conc, held)
        if not _draw_into(pool, w, clean, conc, n, rng):
            return False
        if shanten(table, conc, st.mk[q], st.mt[q], st.nm[q], ev) != 0:
            return True
    return True
