"""The answer kernels of ``benchmarks/versus_commit.py``: source templates, one per engine interface.

Each is the text of a small module (``PKG`` replaced by a version's package name) whose compiled ``answer`` calls
that version's bot dispatchers exactly as that version's engine calls them for an inline seat, on the live state of
a paused step. ``KERNEL_STRUCT``: the engine of the state record (``game``, ``st``: 2026-12-03 and later);
``KERNEL_ARRAYS``: the single-module engine before it, whose calls take the state's arrays one by one.
"""

# The answer kernels. Each calls one version's bot dispatchers exactly as that version's engine calls them for an
# inline seat (engine/turn.py, engine/wins.py, engine/setup.py, engine/declare.py; in the old single-module
# engine, engine.py), on the live state of a paused step (the state as at the decision). PKG is the package.
KERNEL_STRUCT = '''
import numpy as np
from numba import njit
from PKG.bots import (REASON_SHIFT, bot_claim, bot_declares, bot_discard, bot_exchange, bot_self_kong,
                      bot_takes_win, bot_void, planning_void)
from PKG.state import (A_KONG, A_PASS, A_PUNG, A_TILE0, A_VOID0, A_WIN, D_CLAIM, D_DECLARE, D_DISCARD,
                       D_EXCHANGE, D_SELF_KONG, D_TAKE_WIN, D_VOID, PS_EVOID, PS_VOID, PS_WAITS)

TILE_BITS = (1 << 27) - 1
REASON_MASK = (1 << REASON_SHIFT) - 1


@njit(cache=True)
def answer(game, st, bpar, seat, kind, legal, tile, frm, fan, rng, out3):
    params, table = game.params, game.table
    conc, mk, mt, nm, ps = st.conc, st.mk, st.mt, st.nm, st.ps
    saved = st.rngs[1 + seat]
    st.rngs[1 + seat] = rng[seat]
    a = np.int64(-1)
    if kind == D_EXCHANGE:
        bot_exchange(game, st, seat, out3)
        a = A_TILE0 + out3[0]
    elif kind == D_VOID:
        a = A_VOID0 + bot_void(game, st, bpar[seat], seat)
    elif kind == D_DISCARD:
        pv = planning_void(params, ps[seat, PS_VOID], table, conc[seat], mk[seat], mt[seat], nm[seat])
        t = bot_discard(game, st, bpar[seat], seat, pv, legal)
        a = A_TILE0 + (t & REASON_MASK)
    elif kind == D_CLAIM:
        qv = planning_void(params, ps[seat, PS_VOID], table, conc[seat], mk[seat], mt[seat], nm[seat])
        can_pung = (legal >> A_PUNG) & 1 == 1
        can_kong = (legal >> A_KONG) & 1 == 1
        c = bot_claim(game, st, bpar[seat], seat, qv, tile, np.bool_(can_pung), can_kong)
        a = A_PASS if c == 0 else (A_PUNG if c == 1 else A_KONG)
    elif kind == D_SELF_KONG:
        pv = planning_void(params, ps[seat, PS_VOID], table, conc[seat], mk[seat], mt[seat], nm[seat])
        k = bot_self_kong(game, st, bpar[seat], seat, pv, legal & TILE_BITS)
        a = A_PASS if k < 0 else A_TILE0 + k
    elif kind == D_TAKE_WIN:
        yes = bot_takes_win(game, st, bpar[seat], seat, tile, fan, np.bool_(frm < 0))
        a = A_WIN if yes else A_PASS
    elif kind == D_DECLARE:  # the kind declared (0 none): the caller maps it to an action
        a = np.int64(bot_declares(game, st, bpar[seat], seat, ps[seat, PS_EVOID], ps[seat, PS_WAITS]))
    rng[seat] = st.rngs[1 + seat]
    st.rngs[1 + seat] = saved
    return a
'''

KERNEL_ARRAYS = '''
import numpy as np
from numba import njit
from PKG.bots import (REASON_SHIFT, bot_claim, bot_declares, bot_discard, bot_exchange, bot_self_kong,
                      bot_takes_win, bot_void, planning_void)
from PKG.state import (A_KONG, A_PASS, A_PUNG, A_TILE0, A_VOID0, A_WIN, D_CLAIM, D_DECLARE, D_DISCARD,
                       D_EXCHANGE, D_SELF_KONG, D_TAKE_WIN, D_VOID, PS_EVOID, PS_VOID, PS_WAITS, tiles_left)

TILE_BITS = (1 << 27) - 1
REASON_MASK = (1 << REASON_SHIFT) - 1


@njit(cache=True)
def answer(table, params, bots, bpar, rngs, conc, mk, mt, nm, g, ps, visible, sh_buf, seat, kind, legal, tile,
           frm, fan, rng, out3):
    saved = rngs[1 + seat]
    rngs[1 + seat] = rng[seat]
    r = rngs[1 + seat:2 + seat]
    left = tiles_left(g)
    a = np.int64(-1)
    if kind == D_EXCHANGE:
        bot_exchange(bots[seat], r, conc[seat], out3)
        a = A_TILE0 + out3[0]
    elif kind == D_VOID:
        a = A_VOID0 + bot_void(bots[seat], bpar[seat], r, table, params, conc[seat], mk[seat], mt[seat], nm[seat])
    elif kind == D_DISCARD:
        pv = planning_void(params, ps[seat, PS_VOID], table, conc[seat], mk[seat], mt[seat], nm[seat])
        t = bot_discard(bots[seat], bpar[seat], r, table, params, g, ps, mt, nm, seat, conc[seat], mk[seat],
                        mt[seat], nm[seat], pv, legal, visible, sh_buf, left)
        a = A_TILE0 + (t & REASON_MASK)
    elif kind == D_CLAIM:
        qv = planning_void(params, ps[seat, PS_VOID], table, conc[seat], mk[seat], mt[seat], nm[seat])
        can_pung = (legal >> A_PUNG) & 1 == 1
        can_kong = (legal >> A_KONG) & 1 == 1
        c = bot_claim(bots[seat], bpar[seat], table, conc[seat], mk[seat], mt[seat], nm[seat], qv, tile,
                      np.bool_(can_pung), can_kong, params, ps, seat, visible, left)
        a = A_PASS if c == 0 else (A_PUNG if c == 1 else A_KONG)
    elif kind == D_SELF_KONG:
        pv = planning_void(params, ps[seat, PS_VOID], table, conc[seat], mk[seat], mt[seat], nm[seat])
        k = bot_self_kong(bots[seat], bpar[seat], table, conc[seat], mk[seat], mt[seat], nm[seat], pv,
                          legal & TILE_BITS, params, ps, seat, visible, left)
        a = A_PASS if k < 0 else A_TILE0 + k
    elif kind == D_TAKE_WIN:
        yes = bot_takes_win(bots[seat], bpar[seat], fan, np.bool_(frm < 0), left, table, params, ps, conc, mk, mt,
                            nm, seat, tile)
        a = A_WIN if yes else A_PASS
    elif kind == D_DECLARE:  # 1 declares, 0 not
        yes = bot_declares(bots[seat], bpar[seat], table, params, g, ps, seat, conc[seat], mk[seat], mt[seat],
                           nm[seat], ps[seat, PS_EVOID], ps[seat, PS_WAITS], visible, left)
        a = np.int64(1 if yes else 0)
    rng[seat] = rngs[1 + seat]
    rngs[1 + seat] = saved
    return a
'''
