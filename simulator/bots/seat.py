"""What every bot's ``seat_*`` decisions share: the deciding seat's view of the table and its own hand, built from
the engine's records (``game``, ``st``), and the bookkeeping around a decision (its own concealed kongs, the hands
血战 winners laid down). A bot module's decisions take ``(game, st, bpar, seat, …the decision's scalars)``
(:data:`simulator.rules.bot_table.DECISIONS`; :mod:`simulator.bots` dispatches to them) and are inlined into their
dispatcher (``inline="always"``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import plan_void
from simulator.bots.dance import dance_void
from simulator.bots.view import seat_view
from simulator.kernel.shape import MELD_CKONG, hand_tiles
from simulator.kernel.state import N_KINDS, N_SEATS, PS_WON, VOID_NONE, held_face_up, tiles_left, void_rule


@njit(cache=True, _nrt=False)
def own_ckongs(visible, mk, mt, nm, sign) -> None:
    """Add (``sign`` 1) or remove (−1) the deciding seat's own concealed kongs to/from ``visible``."""
    for i in range(nm):
        if mk[i] == MELD_CKONG:
            visible[mt[i]] += 4 * sign


@njit(cache=True, inline="always")
def planning_void(params, declared, table, conc, mk, mt, nm) -> int:
    """The suit a bot treats as dead: its declared void, or under ``void_suit: none`` the suit whose dropping
    leaves the lowest shanten right now (re-chosen every turn, so a bot can switch while it has not cleared
    one). Keeping all three suits open instead (shanten over every droppable suit) until late in the wall gave
    the same results at half the speed."""
    if void_rule(params) != VOID_NONE:
        return declared
    return plan_void(table, conc, mk, mt, nm)


@njit(cache=True, inline="always")
def laid_down(visible, st, sign) -> None:
    """Add (``sign`` 1) or remove (−1) the hands 血战 winners laid down (推倒: public) to/from ``visible``, for the
    expert's counts of unseen tiles; a discard or robbed-kong win's tile is already there (seen face up), and only
    its first winner holds it (:func:`simulator.kernel.state.held_face_up`)."""
    ps, conc, nm = st.ps, st.conc, st.nm
    for q in range(N_SEATS):
        if ps[q, PS_WON]:
            for k in range(N_KINDS):
                visible[k] += sign * np.int64(conc[q, k])
            t = held_face_up(conc[q], nm[q], ps[q])
            if t >= 0:
                visible[t] -= sign


@njit(cache=True, inline="always")
def view_of(game, st, seat):
    """What seat ``seat`` sees of the table (:class:`~simulator.bots.view.SeatView`), once per decision."""
    return seat_view(game.table, game.params, st.ps, (st.mk, st.mt, st.nm), st.visible, seat, tiles_left(st.g))


@njit(cache=True, inline="always")
def planned_hand(view, st, seat, void):
    """The seat's own hand (:class:`~simulator.kernel.shape.HandTiles`) with the suit it plans to drop: ``void``,
    re-planned away from a dancer's shown waits (:func:`simulator.bots.dance.dance_void`)."""
    conc, mk, mt, nm = st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat]
    return hand_tiles(conc, mk, mt, nm, dance_void(view, hand_tiles(conc, mk, mt, nm, void)))

