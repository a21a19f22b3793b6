"""唱歌/跳舞 (``declare_ready``): the offer to declare after a discard and what a declared hand may do."""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots import (
    bot_declares,
)
from simulator.engine.common import DECL_BOTH, DECL_DANCE, DECL_SING, keeps_waits
from simulator.kernel.shape import MELD_CKONG, held4_mask
from simulator.kernel.state import (
    A_DANCE,
    A_DECLARE,
    A_PASS,
    D_DECLARE,
    EV_DECLARE,
    IO_EXT,
    N_SEATS,
    PS_DECLARED,
    PS_DRAWN,
    PS_EVOID,
    PS_SHOWN,
    PS_WAITS,
    PS_WON,
    ask,
    log_event,
    tiles_left,
)
from simulator.rules.keys import SLOT

P_DECLARE_READY = SLOT["declare_ready"]


@njit(cache=True, _nrt=False)
def declare_discard_mask(ps, cur, legal) -> int:
    """The discards ``cur`` may make under ``declare_ready``: a declared hand only the tile it drew; under 跳舞 a
    player who has not declared none of the waits shown by a dancer still in, unless that leaves no legal
    discard (then every legal one: docs/spec.md §2.10, "unless it is their only legal discard")."""
    if ps[cur, PS_DECLARED]:
        return np.int64(1) << ps[cur, PS_DRAWN]
    shown = np.int64(0)
    for q in range(N_SEATS):
        if q != cur and not ps[q, PS_WON]:
            shown |= ps[q, PS_SHOWN]
    left = legal & ~shown
    return left if left else legal


@njit(cache=True, _nrt=False)
def offer_declare(game, st, bpar, cur: int) -> int:
    """After its discard a ready player (a wait on a kind it does not hold four of, docs/spec.md §5) who has not
    declared may declare: 唱歌 (announce) or 跳舞 (also show the waits), as ``declare_ready`` says (``both``: either,
    its choice), while tiles remain to draw. Returns 1 declared, 0 not, −1 an external seat's answer is pending."""
    params, io = game.params, game.io
    g, ps, conc, mk, mt, nm = st.g, st.ps, st.conc, st.mk, st.mt, st.nm
    if tiles_left(g) == 0:
        return 0
    waits = ps[cur, PS_WAITS]
    if waits & ~held4_mask(conc[cur], mk[cur], mt[cur], nm[cur]) == 0:
        return 0
    rule = params[P_DECLARE_READY]
    if io[IO_EXT + cur]:
        legal = (1 << A_DECLARE) | (1 << A_PASS) | ((1 << A_DANCE) if rule == DECL_BOTH else 0)
        a = ask(io, cur, D_DECLARE, legal, -1, -1, 0)
        if a < 0:
            return -1
        kind = 0 if a == A_PASS else (DECL_DANCE if a == A_DANCE else (DECL_SING if rule == DECL_BOTH else rule))
    else:
        kind = bot_declares(game, st, bpar[cur], cur, ps[cur, PS_EVOID], waits)
    if kind == 0:
        return 0
    ps[cur, PS_DECLARED] = kind
    if kind == DECL_DANCE:
        ps[cur, PS_SHOWN] = waits
    log_event(st, EV_DECLARE, cur, -1, waits, kind, 0)
    return 1


@njit(cache=True, _nrt=False)
def locked_kong_options(table, st, cur: int, drawn: int, opts: int) -> int:
    """The kongs a declared hand may make: a concealed kong of the tile it just drew (all four in hand) whose
    waits are the ones it declared with; 0 otherwise (no 加杠, no other kind)."""
    if drawn < 0 or not (opts >> drawn) & 1 or st.conc[cur, drawn] != 4:
        return np.int64(0)
    return np.int64(1) << drawn if keeps_waits(table, st, cur, drawn, 4, MELD_CKONG) else np.int64(0)
