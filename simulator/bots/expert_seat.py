"""The ``expert``'s decisions at the table (:data:`simulator.rules.bot_table.DECISIONS`): its discard, claim, kong and
win decisions are :mod:`simulator.bots.expert`'s own functions, which take the prepared arguments
(:data:`simulator.bots.PREPARED_ARGS`: the seat's view and planned hand built once by the dispatcher), so that the
dispatcher inlines them one level deep (a wrapper inlined around an inlined decision cost ~0.3-0.5 s of cold compile
per dispatcher: docs/internals.md, "Cold compile against the commit before the bot table"). The seat's own concealed
kongs and the hands 血战 winners laid down are counted as seen around its discard, claim and kong choices by the
dispatcher (the table's ``sees``). 换三张 as greedy (its value-based pass measured worse against greedy: docs/bots.md,
"What was tried, by part of the rules"); 唱歌/跳舞 by :func:`simulator.bots.declare.declare_by_value`.
"""

from __future__ import annotations

from numba import njit

from simulator.bots.declare import seat_declares as seat_declares
from simulator.bots.expert import expert_claim as seat_claim
from simulator.bots.expert import expert_discard as seat_discard
from simulator.bots.expert import expert_self_kong as seat_self_kong
from simulator.bots.expert import expert_takes_win as seat_takes_win
from simulator.bots.expert import expert_void

__all__ = ["seat_claim", "seat_declares", "seat_discard", "seat_self_kong", "seat_takes_win", "seat_void"]


@njit(cache=True, inline="always")
def seat_void(game, st, bpar, seat):
    return expert_void(game.table, game.params, st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], bpar)
