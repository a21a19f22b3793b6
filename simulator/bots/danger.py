"""The expert's deal-in risk, from public information only (discards, face-up melds and the number of melds,
declared voids, draws made; another seat's 暗杠 counts as a meld and a kong, its kind and suit are not read).

For each opponent q still in, once per decision:
- ``P(ready)`` = min(0.85, 0.04 · draws q has made + 0.12 · melds it has set down);
- the expected loss if q wins on our discard: the points of a plain hand under the active rules, raised to
  清一色 when every face-up meld q set down is in one suit (two or more of them), plus one 根 per kong q made.
Per tile kind k, q's weight on k (how likely a ready q waits on it) is 0 for q's dead suit (declared void, or
under ``void_suit: none`` the suit missing from two suits of face-up melds) and for kinds discarded since q's last draw
that q let pass (现物); else by rank — 3 (ranks 3–7), 2 (2, 8), 1 (terminals) — lowered to 1 for kinds q once
discarded and by one for the tile three ranks from one q discarded (筋), raised by half in q's 清一色 suit.
``risk(k) = Σ_q P(ready_q) · WAIT_PER_WEIGHT · weight_q(k) · loss_q`` in base units.

Under 血流 a winner plays on with its locked hand (``PS_NWINS`` > 0, still in): P(ready) 1; a kind it has won on
(``PS_WON_KINDS``) is a certain wait, ``LOCKED_HIT`` · loss_q; a kind discarded since its first win that it let pass
(``PS_CLEARED``) never is (measured against three greedy under ``xueliu``: +0.033 / +0.037 / +0.034 ± 0.0065 base
units per player-hand, deal-ins −0.058 per player-hand; docs/bots.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import face_up
from simulator.bots.defensive import dead_suit
from simulator.kernel.scoring import F_PINGHU, F_QINGYISE, score_flags
from simulator.kernel.state import (
    N_KINDS,
    N_SEATS,
    PS_CLEARED,
    PS_DISCARDED,
    PS_NDRAWS,
    PS_NKONGS,
    PS_NWINS,
    PS_SAFE,
    PS_WON,
    PS_WON_KINDS,
    stack_empty,
)

# A ready hand waits on ~1.7 of 18 kept kinds (0.045 per weight unit, mid tiles ~0.13 each) — but priced that
# way folding gave up more value than it saved against greedy (a third of it, i.e. defence 0.1 instead of
# 0.3, measured +0.014 ± 0.005 base units per player-hand, paired): the rank weights tell tiles apart poorly.
WAIT_PER_WEIGHT = 0.015
# A kind a 血流 winner certainly waits on: P(hit) 1 in the units of WAIT_PER_WEIGHT · weight (0.5 measured the
# same, +0.034 ± 0.006 on each of three seeds; 0.25 +0.028; 1 / 0.3, the full loss after `defence`, +0.008: it
# folds too much; docs/bots.md).
LOCKED_HIT = 1.0


@njit(cache=True, _nrt=False)
def meld_suit(mk, mt, nm, q) -> int:
    """The one suit of all of q's face-up melds when it has two or more (a 清一色 signal), else −1 (a concealed
    kong is face down: it neither counts nor breaks the signal)."""
    s = -1
    n = 0
    for i in range(nm[q]):
        t = face_up(mk, mt, q, i)
        if t < 0:
            continue
        if n > 0 and t // 9 != s:
            return -1
        s = t // 9
        n += 1
    return s if n >= 2 else -1


@njit(cache=True, _nrt=False)
def opponent_threats(view, threats) -> int:
    """Fill the arrays of ``threats`` = ``(p_ready, loss, dead, qsuit)``: per opponent of ``view.seat`` (a
    :class:`~simulator.bots.view.SeatView`) P(ready), loss (base units), ``dead`` suit and ``qsuit`` (清一色 signal
    suit); returns the number of opponents still in. Seats that have won (and ``seat``) get ``p_ready`` 0."""
    params, ps, mk, mt, nm, seat = view.params, view.ps, view.mk_all, view.mt_all, view.nm_all, view.seat
    p_ready, loss, dead, qsuit = threats
    n_in = 0
    for q in range(N_SEATS):
        p_ready[q] = 0.0
        if q == seat or ps[q, PS_WON]:
            continue
        n_in += 1
        p = 0.04 * ps[q, PS_NDRAWS] + 0.12 * nm[q]
        p_ready[q] = 1.0 if ps[q, PS_NWINS] > 0 else min(p, 0.85)  # a 血流 winner's locked hand is ready
        qsuit[q] = meld_suit(mk, mt, nm, q)
        flags = F_PINGHU | (F_QINGYISE if qsuit[q] >= 0 else 0)
        loss[q] = score_flags(flags, np.bool_(False), ps[q, PS_NKONGS], np.bool_(False), params)[4]
        dead[q] = dead_suit(params, ps, mk, mt, nm, q)
    return n_in


@njit(cache=True, _nrt=False)
def tile_risk(ps, p_ready, loss, dead, qsuit, k) -> float:
    """Expected loss (base units) of discarding kind k now."""
    r = k % 9
    s = k // 9
    base = 3.0 if 2 <= r <= 6 else (2.0 if r == 1 or r == 7 else 1.0)
    total = 0.0
    for q in range(N_SEATS):
        if p_ready[q] == 0.0 or s == dead[q]:
            continue
        if ps[q, PS_NWINS] > 0 and (ps[q, PS_WON_KINDS] >> k) & 1:  # 血流: a locked hand waits on what it won on
            total += LOCKED_HIT * loss[q]
            continue
        if ((ps[q, PS_SAFE] | ps[q, PS_CLEARED]) >> k) & 1:  # let pass (a locked hand: ever since its first win)
            continue
        w = base
        disc = ps[q, PS_DISCARDED]
        if (disc >> k) & 1:
            w = 1.0
        elif (r >= 3 and (disc >> (k - 3)) & 1) or (r <= 5 and (disc >> (k + 3)) & 1):
            w -= 1.0
        if qsuit[q] >= 0:
            w = w * 1.5 if s == qsuit[q] else w * 0.5
        total += p_ready[q] * WAIT_PER_WEIGHT * w * loss[q]
    return total


@njit(cache=True, inline="always")  # inlined by numba: the arrays live on the caller's stack (state.stack_empty)
def threat_arrays():
    """``(p_ready, loss, dead, qsuit)`` for :func:`opponent_threats` to fill: zeros and −1s of ``N_SEATS`` each,
    scratch on the calling function's stack."""
    p_ready, loss = stack_empty(N_SEATS, np.float64), stack_empty(N_SEATS, np.float64)
    dead, qsuit = stack_empty(N_SEATS, np.int64), stack_empty(N_SEATS, np.int64)
    p_ready[:] = 0.0
    loss[:] = 0.0
    dead[:] = -1
    qsuit[:] = -1
    return p_ready, loss, dead, qsuit


@njit(cache=True, _nrt=False)
def mean_risk(view, void) -> float:
    """The mean :func:`tile_risk` (base units, at ``WAIT_PER_WEIGHT``) over the kinds outside ``void`` (the suits
    the seat keeps): the danger of a discard whose kind is not chosen, such as the unwanted draw a waiting hand
    throws. Public information only, as :func:`opponent_threats`."""
    ps = view.ps
    p_ready, loss, dead, qsuit = threats = threat_arrays()
    if opponent_threats(view, threats) == 0:
        return 0.0
    tot = 0.0
    n = 0
    for k in range(N_KINDS):
        if k // 9 != void:
            tot += tile_risk(ps, p_ready, loss, dead, qsuit, k)
            n += 1
    return tot / max(n, 1)

