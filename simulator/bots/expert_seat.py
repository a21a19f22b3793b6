"""The ``expert``'s decisions at the table (:data:`simulator.rules.bot_table.DECISIONS`): the seat's view and planned
hand built once per decision, the seat's own concealed kongs and the hands 血战 winners laid down counted as seen around
its discard, claim and kong choices, which :mod:`simulator.bots.expert` makes (inlined into their dispatcher:
each library links and re-optimises the expert's hand values, so one fewer per decision saves compile time).
换三张 as greedy (its value-based pass measured worse against greedy: docs/bots.md, "What was tried, by part of the
rules"); 唱歌/跳舞 by :func:`simulator.bots.declare.declare_by_value`.
"""

from __future__ import annotations

from numba import njit

from simulator.bots.declare import seat_declares as seat_declares
from simulator.bots.expert import expert_claim, expert_discard, expert_self_kong, expert_takes_win, expert_void
from simulator.bots.seat import laid_down, own_ckongs, view_of
from simulator.kernel.shape import hand_tiles
from simulator.kernel.state import PS_EVOID


@njit(cache=True, inline="always")
def seat_void(game, st, bpar, seat):
    return expert_void(game.table, game.params, st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], bpar)


# (discard, claim, kong: the view and planned hand built by the dispatcher, simulator.bots.PREPARED_ARGS; for the
# discard with the seat's own concealed kongs already counted in ``visible``)
@njit(cache=True, inline="always")
def seat_discard(view, hand, st, bpar, void, legal):
    seat, visible = view.seat, st.visible
    laid_down(visible, st, 1)
    t = expert_discard(view, hand, legal, st.sh_buf, bpar, st.rngs[1 + seat:2 + seat])
    laid_down(visible, st, -1)
    return t


@njit(cache=True, inline="always")
def seat_claim(view, hand, st, bpar, void, tile, can_pung, can_kong):
    seat = view.seat
    mk, mt, nm, visible = st.mk[seat], st.mt[seat], st.nm[seat], st.visible
    own_ckongs(visible, mk, mt, nm, 1)
    laid_down(visible, st, 1)
    c = expert_claim(view, hand, tile, can_pung, can_kong, bpar)
    laid_down(visible, st, -1)
    own_ckongs(visible, mk, mt, nm, -1)
    return c


@njit(cache=True, inline="always")
def seat_self_kong(view, hand, st, bpar, void, opts):
    seat = view.seat
    mk, mt, nm, visible = st.mk[seat], st.mt[seat], st.nm[seat], st.visible
    own_ckongs(visible, mk, mt, nm, 1)
    laid_down(visible, st, 1)
    k = expert_self_kong(view, hand, opts, bpar)
    laid_down(visible, st, -1)
    own_ckongs(visible, mk, mt, nm, -1)
    return k


@njit(cache=True, inline="always")
def seat_takes_win(game, st, bpar, seat, tile, capped_fan, self_draw):
    ps, mk, mt, nm = st.ps, st.mk, st.mt, st.nm
    hand = hand_tiles(st.conc[seat], mk[seat], mt[seat], nm[seat], ps[seat, PS_EVOID])
    return expert_takes_win(view_of(game, st, seat), st.conc, hand, tile, capped_fan, self_draw, bpar)
