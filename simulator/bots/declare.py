"""唱歌/跳舞 (``declare_ready``): whether a ready bot declares, by the value of its waits.

A declared hand is locked (it only draws and discards the drawn tile), wins with the extra fan of
``scoring.extras.sing`` / ``dance``, and — when it dances — cannot be fed by players who have not declared.
The bot compares its expected income per round with and without declaring, over its live waits (unseen
copies: not in its hand, not discarded, not in an exposed meld), each wait scored exactly by ``evaluate_win``:

- not declaring: ``n·S0 + n·D0`` — a self-draw paid by each of the ``n`` opponents still in, and a discard win
  from any of their ``n`` discards per round (each as likely as one own draw: a discard is one unseen tile);
- 唱歌: ``n·S1 + n·D1`` (the same chances, each win worth the extra fan);
- 跳舞: ``n·S1 + m·D1``, ``m`` = opponents still in who have declared (the others will not discard a shown wait).

Under ``declare_ready: both`` it weighs both declarations (each with its own extra fan) and picks the better.
It declares when the declared income, discounted by ``FLEX_COST`` for the flexibility it gives up (it can no
longer improve its wait, change shape or fold), is larger. A hand with no live wait never declares (locking a dead
wait only loses). ``S``/``D`` are averages over the waits weighted by their unseen copies, so a capped hand (the
extra fan adds nothing) never declares.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.seat import own_ckongs, view_of
from simulator.kernel.evaluate import CTX_DANCE, CTX_SELF_DRAW, CTX_SING, evaluate_win
from simulator.kernel.shape import hand_tiles
from simulator.kernel.state import N_KINDS, N_SEATS, PS_DECLARED, PS_WON
from simulator.rules.keys import SLOT, code

P_DECLARE_READY = SLOT["declare_ready"]

FLEX_COST = 0.2  # share of the declared income given up for the locked hand's lost flexibility
DECL_SING, DECL_DANCE, DECL_BOTH = (code("declare_ready", x) for x in ("sing", "dance", "both"))


@njit(cache=True, _nrt=False)
def declare_by_value(view, hand, waits) -> int:
    """``view``: the seat's :class:`~simulator.bots.view.SeatView` (``visible``: kinds seen face up); ``hand``: its
    13-tile-shaped hand after its discard (:class:`~simulator.kernel.shape.HandTiles`); ``waits``: its wait mask.
    Returns what to declare: 0 nothing, ``DECL_SING`` (1) or ``DECL_DANCE`` (2), among those ``declare_ready``
    allows."""
    table, params, ps, seat, visible = view.table, view.params, view.ps, view.seat, view.visible
    conc = hand.conc
    rule = params[P_DECLARE_READY]
    sing = rule in (DECL_SING, DECL_BOTH)
    dance = rule in (DECL_DANCE, DECL_BOTH)
    sb = np.int64(CTX_SING)
    db = np.int64(CTX_DANCE)
    s0 = s1 = d0 = d1 = 0.0  # without declaring, and 唱歌 (self-draw / discard income)
    s2 = d2 = 0.0  # 跳舞
    live = 0
    for k in range(N_KINDS):
        if not (waits >> k) & 1:
            continue
        u = 4 - np.int64(conc[k]) - np.int64(visible[k])
        if u <= 0:
            continue
        conc[k] += 1
        s0 += u * evaluate_win(table, hand, k, np.int64(CTX_SELF_DRAW), params)[5]
        if sing:
            s1 += u * evaluate_win(table, hand, k, np.int64(CTX_SELF_DRAW) | sb, params)[5]
        if dance:
            s2 += u * evaluate_win(table, hand, k, np.int64(CTX_SELF_DRAW) | db, params)[5]
        d0 += u * evaluate_win(table, hand, k, np.int64(0), params)[5]
        if sing:
            d1 += u * evaluate_win(table, hand, k, sb, params)[5]
        if dance:
            d2 += u * evaluate_win(table, hand, k, db, params)[5]
        conc[k] -= 1
        live += u
    if live == 0:
        return 0
    n = 0
    m = 0
    for q in range(N_SEATS):
        if q != seat and not ps[q, PS_WON]:
            n += 1
            if ps[q, PS_DECLARED]:
                m += 1
    keep = n * (s0 + d0)
    best = 0
    top = keep  # a declaration must beat it, and under both the other declaration
    if sing:
        v = (n * s1 + n * d1) * (1.0 - FLEX_COST)
        if v > top:
            best, top = DECL_SING, v
    if dance:
        v = (n * s2 + m * d2) * (1.0 - FLEX_COST)
        if v > top:
            best = DECL_DANCE
    return best


@njit(cache=True, inline="always")
def seat_declares(game, st, bpar, seat, void, waits):
    """The seat's declaration by :func:`declare_by_value` (the ``seat_declares`` of ``value``, ``defensive`` and
    ``expert``), with its own concealed kongs counted as seen."""
    visible, conc, mk, mt, nm = st.visible, st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat]
    own_ckongs(visible, mk, mt, nm, 1)
    kind = declare_by_value(view_of(game, st, seat), hand_tiles(conc, mk, mt, nm, void), waits)
    own_ckongs(visible, mk, mt, nm, -1)
    return kind
