"""``closed``: greedy that keeps its hand concealed (门清). It claims no discard — no pung, no exposed kong — while
``open_wall`` or more tiles remain in the wall (the default 0: never), then claims as greedy; everything else
(换三张, 定缺, discards, its own kongs, wins) is greedy's. Seated against greedy it measures what claiming is worth
under a rule set, e.g. with ``scoring.extras.menqing`` paying for a concealed hand (docs/bots.md).

Declared by its row of :mod:`simulator.rules.bot_table` (id 6, base ``greedy``, one parameter) and this module: the
bot made the way a new bot is added (docs/internals.md, "Files to touch").
"""

from __future__ import annotations

from numba import njit

from simulator.bots.greedy import greedy_claim
from simulator.kernel.shape import hand_tiles
from simulator.rules.bot_table import slot

OPEN_WALL = slot("closed", "open_wall")  # its parameter's slot in the seat's row


@njit(cache=True, inline="always")
def seat_claim(view, hand, st, bpar, void, tile, can_pung, can_kong):  # a parameterised bot's claim: the view and
    # planned hand come from the dispatcher (simulator.bots.PREPARED_ARGS); it claims as greedy, with its own hand
    if view.tiles_left >= bpar[OPEN_WALL]:
        return 0
    seat = view.seat
    return greedy_claim(view.table, hand_tiles(st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], void), tile,
                        can_pung, can_kong)
