"""The expert's deal-in risk, from public information only (discards, melds, declared voids, draws made).

``P(opponent q wins on kind k)`` is a logistic model of public features (:func:`deal_in_features`: q's draws,
melds and their suits, q's discards in k's suit and around k, 现物 — k discarded by q or let pass by q since its
last draw (过水) —, k's rank, the copies of k not yet seen, tiles left), fitted on simulated hands where the
engine knows every player's true waits (``benchmarks/fit_danger.py``; coefficients in :data:`COEF`, how they
were fitted in docs/rules.md, "Bots"). A suit q can be seen not to win with (declared void, or under
``void_suit: none`` the suit missing from two suits of melds) is safe against q.

The expected loss if q wins on our discard: the points of a plain hand under the active rules, raised to 清一色
when every meld q set down is in one suit (two or more melds), plus one 根 per kong q made.
``risk(k) = Σ_q P(q wins on k) · loss_q`` in base units.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.defensive import dead_suit
from simulator.scoring import F_PINGHU, F_QINGYISE, score_flags
from simulator.state import N_SEATS, PS_DISCARDED, PS_NDRAWS, PS_NKONGS, PS_SAFE, PS_WON

N_FEAT = 21
FEATURES = ("bias", "draws", "draws²", "melds", "tiles_left", "terminal", "rank_2_8", "passed", "own_discard",
            "suji", "unseen", "unseen_0", "suit_discards", "flush_suit", "flush_other", "melds_in_suit",
            "near_discards", "kongs", "draws≤2", "draws≤4", "draws≤6")
# Fitted by benchmarks/fit_danger.py (see its docstring for the command line); log-odds per feature unit.
# (seed 11, 1,500 hands each of greedy×4 and expert/greedy alternating, default rules: 2.4 M samples, held-out
# log-loss 0.100 against 0.123 for a constant; calibrated within ~20% above P = 0.01, overstated below).
COEF = np.array([-4.1694, 0.5238, 0.3398, 0.4801, -0.3646, -0.2727, -0.1348, -0.2581, -1.0360, -0.0029, 0.5104,
                 -0.2320, 0.5053, 0.0171, 0.1346, -0.1430, 0.3862, -0.1491, -0.6510, -0.6417, -0.4458])


@njit(cache=True)
def meld_suit(mt, nm, q) -> int:
    """The one suit of all of q's melds when it has two or more (a 清一色 signal), else −1."""
    if nm[q] < 2:
        return -1
    s = np.int64(mt[q, 0]) // 9
    for i in range(1, nm[q]):
        if np.int64(mt[q, i]) // 9 != s:
            return -1
    return s


@njit(cache=True)
def deal_in_features(ps, mt, nm, q, k, unseen, tiles_left, out) -> None:
    """Fill ``out`` (float64[N_FEAT], :data:`FEATURES` order) for "opponent q wins on kind k": public facts
    only. ``unseen``: copies of k the deciding player has not seen (4 − its own − visible), 0..4."""
    r = k % 9
    s = k // 9
    nd = ps[q, PS_NDRAWS] / 10.0
    disc = ps[q, PS_DISCARDED]
    out[0] = 1.0
    out[1] = nd
    out[2] = nd * nd
    out[3] = nm[q]
    out[4] = tiles_left / 55.0
    out[5] = 1.0 if r == 0 or r == 8 else 0.0
    out[6] = 1.0 if r == 1 or r == 7 else 0.0
    out[7] = 1.0 if (ps[q, PS_SAFE] >> k) & 1 else 0.0
    own = (disc >> k) & 1
    out[8] = 1.0 if own else 0.0
    suji = (r >= 3 and (disc >> (k - 3)) & 1) or (r <= 5 and (disc >> (k + 3)) & 1)
    out[9] = 1.0 if suji and not own else 0.0
    out[10] = unseen / 4.0
    out[11] = 1.0 if unseen <= 0 else 0.0
    n_s = 0
    for j in range(9):
        n_s += (disc >> (9 * s + j)) & 1
    out[12] = n_s / 9.0
    qs = meld_suit(mt, nm, q)
    out[13] = 1.0 if qs == s else 0.0
    out[14] = 1.0 if qs >= 0 and qs != s else 0.0
    m_s = 0
    for i in range(nm[q]):
        if np.int64(mt[q, i]) // 9 == s:
            m_s += 1
    out[15] = m_s
    near = 0
    for d in (-2, -1, 1, 2):
        if 0 <= r + d <= 8:
            near += (disc >> (k + d)) & 1
    out[16] = near / 4.0
    out[17] = ps[q, PS_NKONGS]
    # early in the hand few opponents are ready at all: steps the smooth draw terms cannot follow
    out[18] = 1.0 if ps[q, PS_NDRAWS] <= 2 else 0.0
    out[19] = 1.0 if ps[q, PS_NDRAWS] <= 4 else 0.0
    out[20] = 1.0 if ps[q, PS_NDRAWS] <= 6 else 0.0


@njit(cache=True)
def p_deal_in(ps, mt, nm, q, k, unseen, tiles_left, feat) -> float:
    """P(opponent q wins on kind k), from :data:`COEF` (``feat``: scratch float64[N_FEAT])."""
    deal_in_features(ps, mt, nm, q, k, unseen, tiles_left, feat)
    z = 0.0
    for i in range(N_FEAT):
        z += COEF[i] * feat[i]
    return 1.0 / (1.0 + np.exp(-z))


@njit(cache=True)
def opponent_threats(params, ps, mt, nm, seat, live, loss, dead) -> int:
    """Fill per-opponent ``live`` (1 for an opponent still in), ``loss`` (base units) and ``dead`` suit;
    returns the number of opponents still in."""
    n_in = 0
    for q in range(N_SEATS):
        live[q] = 0
        if q == seat or ps[q, PS_WON]:
            continue
        n_in += 1
        live[q] = 1
        flags = F_PINGHU | (F_QINGYISE if meld_suit(mt, nm, q) >= 0 else 0)
        loss[q] = score_flags(flags, 0, ps[q, PS_NKONGS], False, params)[4]
        dead[q] = dead_suit(params, ps, mt, nm, q)
    return n_in


@njit(cache=True)
def tile_risk(ps, mt, nm, live, loss, dead, k, unseen, tiles_left, feat) -> float:
    """Expected loss (base units) of discarding kind k now."""
    total = 0.0
    for q in range(N_SEATS):
        if live[q] == 0 or k // 9 == dead[q]:
            continue
        total += p_deal_in(ps, mt, nm, q, k, unseen, tiles_left, feat) * loss[q]
    return total
