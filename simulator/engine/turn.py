"""A turn: the draw, the own turn (self-draw win, kongs), the discard and the claims on it."""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots import (
    REASON_SHIFT,
    bot_claim,
    bot_discard,
    bot_self_kong,
    planning_void,
)
from simulator.bots.common import legal_discard_mask, self_kong_options
from simulator.engine.common import (
    GO_DISCARD,
    HAND_OVER,
    HOW_DEALER_FIRST,
    HOW_DREW,
    HOW_TAIL,
    KONG_DRAW,
    LAST_WIN_ONLY,
    MODE_XUELIU,
    NEXT_DRAW,
    PUNG_DISCARD,
    forced_win,
    hand_over,
    keeps_waits,
    locked,
    refresh_waits,
)
from simulator.engine.declare import declare_discard_mask, locked_kong_options, offer_declare
from simulator.engine.wins import claim_wins, locked_kongs, settle_ron, settle_self_draw, takes_win
from simulator.kernel import state
from simulator.kernel.evaluate import (
    CTX_AFTER_KONG,
    CTX_DEALER,
    CTX_FIRST_DRAW,
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_ROB_KONG,
    CTX_SELF_DRAW,
    evaluate_win,
)
from simulator.kernel.settlement import (
    KK_ADDED,
    KK_CONCEALED,
    KK_DIRECT,
    declared_ctx,
    kong_payment,
)
from simulator.kernel.shape import MELD_CKONG, MELD_KONG, MELD_PUNG, hand_tiles, is_complete
from simulator.kernel.state import (
    A_KONG,
    A_PASS,
    A_PUNG,
    A_TILE0,
    D_CLAIM,
    D_DISCARD,
    D_SELF_KONG,
    DP_STATUS,
    EV_DECLINE,
    EV_DISCARD,
    EV_DRAW,
    EV_PUNG,
    EV_ROBBED,
    G_CHAIN,
    G_DEALER,
    G_HEAD,
    G_INTERRUPTED,
    G_NKONGS,
    G_TAIL,
    G_TURNS,
    IO_EXT,
    N_KINDS,
    N_SEATS,
    PS_CLEARED,
    PS_DECLARED,
    PS_DECLINED,
    PS_DISCARDED,
    PS_DRAWN,
    PS_EVOID,
    PS_LOCK_FAN,
    PS_LOCK_MASK,
    PS_LOCKED,
    PS_NDRAWS,
    PS_NKONGS,
    PS_NWINS,
    PS_SAFE,
    PS_VOID,
    PS_WAITS,
    PS_WON,
    WK_SELF_DRAW,
    ask,
    log_event,
    next_in,
    strict_void,
    tiles_left,
)
from simulator.rules.keys import SLOT

P_DECLARE_READY = SLOT["declare_ready"]
P_LAST_DISCARD_CLAIMS = SLOT["last_discard_claims"]
P_MODE = SLOT["mode"]
P_ROB_KONG = SLOT["rob_kong"]


@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def draw_tile(st, p, from_tail) -> int:
    """Draw from the head (or the tail for a kong replacement); the draw ends ``p``'s pass lock."""
    g, ps, conc, wall = st.g, st.ps, st.conc, st.wall
    if from_tail:
        g[G_TAIL] -= 1
        t = np.int64(wall[g[G_TAIL]])
    else:
        t = np.int64(wall[g[G_HEAD]])
        g[G_HEAD] += 1
        g[G_CHAIN] = g[G_NKONGS]  # a new turn: no kongs made in it yet
    conc[p, t] += 1
    ps[p, PS_DRAWN] = t
    ps[p, PS_NDRAWS] += 1
    ps[p, PS_LOCKED] = 0
    ps[p, PS_LOCK_MASK] = 0
    ps[p, PS_LOCK_FAN] = 0
    ps[p, PS_SAFE] = 0
    log_event(st, EV_DRAW, p, t, 0, 1 if from_tail else 0, 0)
    return t


@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def do_discard(table, st, p, t, why) -> None:
    g, ps, conc, visible = st.g, st.ps, st.conc, st.visible
    conc[p, t] -= 1
    visible[t] += 1
    g[G_TURNS] += 1
    ps[p, PS_DISCARDED] |= 1 << t
    for q in range(N_SEATS):
        if q != p:
            ps[q, PS_SAFE] |= 1 << t
            if ps[q, PS_NWINS] > 0:  # 血流: unless it wins on it now, q's locked hand does not wait on t
                ps[q, PS_CLEARED] |= 1 << t
    log_event(st, EV_DISCARD, p, t, 0, why, 0)
    refresh_waits(table, st, p)


@njit(cache=True, inline="always")
def self_draw_ctx(st, p, how) -> int:
    """The win context of ``p``'s self-draw: ``how`` says how its turn began (``HOW_*`` bits)."""
    g, ps, dealer = st.g, st.ps, st.g[G_DEALER]
    drew, from_tail, dealer_first = how & HOW_DREW, how & HOW_TAIL, how & HOW_DEALER_FIRST
    ctx = CTX_SELF_DRAW
    if from_tail:
        ctx |= CTX_AFTER_KONG
    if tiles_left(g) == 0:
        ctx |= CTX_LAST_TILE
    if dealer_first:
        ctx |= CTX_FIRST_DRAW | CTX_DEALER
    elif drew and not from_tail and p != dealer and ps[p, PS_NDRAWS] == 1 and not g[G_INTERRUPTED]:
        ctx |= CTX_FIRST_DRAW  # 地胡: first draw, nobody has claimed, konged or won yet
    return ctx


@njit(cache=True, _nrt=False)
def first_held(conc, p, prefer) -> int:
    """The dealer's 天胡 has no drawn tile: report its 14th dealt tile if still held, else its lowest kind."""
    if conc[p, prefer] > 0:
        return prefer
    for k in range(N_KINDS):
        if conc[p, k] > 0:
            return k
    return -1


@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def own_kong(game, st, bpar, cur, drawn, pv):
    """Offer ``cur`` a 暗杠/加杠 (every kong needs a replacement tile left in the wall). Returns ``(outcome,
    next seat)``: the kong itself, on the few turns that have one to offer, is a call (:func:`kong_turn`)."""
    g, ps, conc, mk, mt, nm = st.g, st.ps, st.conc, st.mk, st.mt, st.nm
    if tiles_left(g) == 0:
        return GO_DISCARD, cur
    opts = self_kong_options(conc[cur], mk[cur], mt[cur], nm[cur], ps[cur, PS_VOID], strict_void(game.params))
    if opts == 0:
        return GO_DISCARD, cur
    return kong_turn(game, st, bpar, cur, drawn, pv, opts)


@njit(cache=True, _nrt=False)
def kong_turn(game, st, bpar, cur: int, drawn: int, pv: int, opts: int):
    """The kong options ``opts`` (a kind mask, not empty) offered to ``cur``: narrowed for a locked or declared
    hand, asked or decided by its bot, made. A 加杠 may be robbed (抢杠胡) before it pays anything. Returns
    ``(outcome, next seat)``."""
    table, params, io = game.table, game.params, game.io
    g, ps, conc, mk, mt, nm, visible, winners = st.g, st.ps, st.conc, st.mk, st.mt, st.nm, st.visible, st.winners
    if ps[cur, PS_DECLARED] != 0:
        opts = locked_kong_options(table, st, cur, drawn, opts)
    elif locked(params, ps, cur):
        opts = locked_kongs(table, st, cur, drawn, opts)
    if io[IO_EXT + cur]:
        k = -1
        if opts:
            a = ask(io, cur, D_SELF_KONG, opts | (1 << A_PASS), -1, -1, 0)
            if a < 0:
                return HAND_OVER, cur
            k = -1 if a == A_PASS else a - A_TILE0
    else:
        k = bot_self_kong(game, st, bpar[cur], cur, pv, opts)
    if k < 0:
        return GO_DISCARD, cur
    g[G_INTERRUPTED] = 1
    if conc[cur, k] == 4:
        conc[cur, k] = 0
        mk[cur, nm[cur]] = MELD_CKONG
        mt[cur, nm[cur]] = k
        nm[cur] += 1  # a concealed kong is face down: its tiles do not become visible
        kong_payment(params, st, cur, KK_CONCEALED, k, -1, True)
    else:
        if params[P_ROB_KONG]:
            rob = np.int64(CTX_ROB_KONG)  # not a literal: evaluate_win is compiled once, for int64 contexts
            n = claim_wins(game, st, bpar, cur, k, rob)
            if io[DP_STATUS]:
                return HAND_OVER, cur
            if n > 0:
                conc[cur, k] -= 1
                visible[k] += 1
                log_event(st, EV_ROBBED, cur, k, 0, 0, 0)
                refresh_waits(table, st, cur)
                settle_ron(game, st, cur, k, rob, n)
                return after_win(params, g, ps, winners[n - 1])
        conc[cur, k] -= 1
        for i in range(nm[cur]):
            if mt[cur, i] == k:
                mk[cur, i] = MELD_KONG
        visible[k] += 1
        kong_payment(params, st, cur, KK_ADDED, k, -1, drawn == k)
    ps[cur, PS_NKONGS] += 1
    return KONG_DRAW, cur


@njit(cache=True, inline="always")  # per-turn step: inlined, no call overhead
def after_win(params, g, ps, last_winner):
    """The hand ends, or play resumes with the next player still in after the last winner."""
    if hand_over(params, g):
        return HAND_OVER, last_winner
    return NEXT_DRAW, next_in(ps, last_winner)


@njit(cache=True, inline="always")  # once per turn: inlined (as a call: greedy×4 1.7× slower, internals.md)
def own_turn(game, st, bpar, cur, drawn, how, pv):
    """The start of ``cur``'s turn after a draw (or the dealer's first turn; ``how``: ``HOW_*`` bits): self-draw
    win, else a kong. Returns ``(outcome, next seat)``."""
    table, params = game.table, game.params
    g, ps, conc, mk, mt, nm = st.g, st.ps, st.conc, st.mk, st.mt, st.nm
    ev = ps[cur, PS_EVOID]
    win_tile = drawn if drawn >= 0 else first_held(conc, cur, st.wall[4 * state.HAND])
    ctx = self_draw_ctx(st, cur, how) | declared_ctx(ps, cur)
    # is_complete first: evaluate_win does the pattern work even for hands that are not complete
    if is_complete(table, conc[cur], mk[cur], mt[cur], nm[cur], ev):
        res = evaluate_win(table, hand_tiles(conc[cur], mk[cur], mt[cur], nm[cur], ev), win_tile, ctx, params)
        take = 1 if forced_win(params, g) else takes_win(game, st, bpar, cur, res[1], np.bool_(True), win_tile,
                                                          np.int64(-1))
        if take < 0:
            return HAND_OVER, cur
        if take:
            settle_self_draw(game, st, cur, win_tile, ctx, res)
            if params[P_MODE] == MODE_XUELIU:
                st.visible[win_tile] += 1  # set aside face up
            return after_win(params, g, ps, cur)
        ps[cur, PS_DECLINED] += 1
        log_event(st, EV_DECLINE, cur, win_tile, res[1], WK_SELF_DRAW, 0)
    return own_kong(game, st, bpar, cur, drawn, pv)


@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def claim_meld(game, st, bpar, cur, t):
    """Pung or exposed kong of ``cur``'s discard ``t`` (at most one other seat can hold two or more of it).
    Returns ``(outcome, next seat)``: the claimer discards next (pung) or draws a replacement (kong). Under
    ``last_discard_claims: win_only`` the final discard (wall empty) can only be won, never punged."""
    table, params, io = game.table, game.params, game.io
    g, ps, conc, mk, mt, nm, visible = st.g, st.ps, st.conc, st.mk, st.mt, st.nm, st.visible
    strict = strict_void(params)
    if tiles_left(g) == 0 and params[P_LAST_DISCARD_CLAIMS] == LAST_WIN_ONLY:
        return NEXT_DRAW, next_in(ps, cur)
    for i in range(1, N_SEATS):
        q = (cur + i) % N_SEATS
        if ps[q, PS_WON] or conc[q, t] < 2 or (strict and t // 9 == ps[q, PS_VOID]) or ps[q, PS_DECLARED]:
            continue  # a declared hand is locked: it claims nothing but wins
        can_kong = conc[q, t] == 3 and tiles_left(g) > 0
        can_pung = not locked(params, ps, q)  # 血流: a winner's locked hand only kongs, keeping its waits
        if not can_pung:
            can_kong = can_kong and keeps_waits(table, st, q, t, 3, MELD_KONG)
            if not can_kong:
                continue
        qv = planning_void(params, ps[q, PS_VOID], table, conc[q], mk[q], mt[q], nm[q])
        if io[IO_EXT + q]:
            legal = (1 << A_PASS) | ((1 << A_PUNG) if can_pung else 0) | ((1 << A_KONG) if can_kong else 0)
            a = ask(io, q, D_CLAIM, legal, t, cur, 0)
            if a < 0:
                return HAND_OVER, cur
            c = 0 if a == A_PASS else (1 if a == A_PUNG else 2)
        else:
            c = bot_claim(game, st, bpar[q], q, qv, t, np.bool_(can_pung), can_kong)
        if c == 0:
            break
        g[G_INTERRUPTED] = 1
        take = 3 if c == 2 else 2
        conc[q, t] -= take
        mk[q, nm[q]] = MELD_KONG if c == 2 else MELD_PUNG
        mt[q, nm[q]] = t
        nm[q] += 1
        visible[t] += take
        if can_pung:  # a locked 血流 winner's kong kept its waits (checked above): its cache stays right
            ps[q, PS_WAITS] = 0
        g[G_CHAIN] = g[G_NKONGS]  # the claimer's turn starts here
        if c == 2:
            kong_payment(params, st, q, KK_DIRECT, t, cur, True)
            ps[q, PS_NKONGS] += 1
            return KONG_DRAW, q
        log_event(st, EV_PUNG, q, t, 0, cur, 0)
        return PUNG_DISCARD, q
    return NEXT_DRAW, next_in(ps, cur)


@njit(cache=True, inline="always")  # once per turn: inlined (as a call: greedy×4 1.7× slower, internals.md)
def discard_turn(game, st, bpar, cur, drawn, pv):
    """``cur`` discards (a locked 血流 winner: the tile it drew, ``drawn``); others may win on it (first), else
    pung or kong it. Returns ``(outcome, next seat)``."""
    table, params, io = game.table, game.params, game.io
    g, ps, conc, winners = st.g, st.ps, st.conc, st.winners
    legal = legal_discard_mask(conc[cur], ps[cur, PS_VOID], strict_void(params))
    if params[P_DECLARE_READY]:
        legal = declare_discard_mask(ps, cur, legal)
    why = 0  # the bot's reason code (expert), logged with the discard for replay
    if ps[cur, PS_DECLARED]:
        t = ps[cur, PS_DRAWN]  # a declared hand discards the tile it drew: nothing to decide
    elif drawn >= 0 and locked(params, ps, cur):
        t = drawn  # no decision: the only play that keeps a locked 血流 winner's hand
    elif io[IO_EXT + cur]:
        t = ask(io, cur, D_DISCARD, legal, -1, -1, 0)
        if t < 0:
            return HAND_OVER, cur
    else:
        t = bot_discard(game, st, bpar[cur], cur, pv, legal)
        why, t = t >> REASON_SHIFT, t & ((1 << REASON_SHIFT) - 1)
    do_discard(table, st, cur, t, why)
    if params[P_DECLARE_READY] and not ps[cur, PS_DECLARED] and offer_declare(game, st, bpar, cur) < 0:
        return HAND_OVER, cur
    ctx = 0
    if g[G_NKONGS] > g[G_CHAIN]:
        ctx |= CTX_KONG_DISCARD
    if tiles_left(g) == 0:
        ctx |= CTX_LAST_TILE
    n = claim_wins(game, st, bpar, cur, t, ctx)
    if io[DP_STATUS]:
        return HAND_OVER, cur
    if n > 0:  # the tile won on stays counted in visible: a tile seen face up stays seen (docs/rules.md)
        settle_ron(game, st, cur, t, ctx, n)
        return after_win(params, g, ps, winners[n - 1])
    return claim_meld(game, st, bpar, cur, t)
