"""Wins: who wins on a tile, recording and paying a win, the pass lock, 血流 winners playing on."""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots import (
    bot_takes_win,
)
from simulator.engine.common import (
    BLOOM_FEEDER,
    DEAL_IN_REFUND,
    DEAL_IN_TRANSFER,
    LOCK_ALL,
    LOCK_OFF,
    LOCK_SAME,
    MODE_XUELIU,
    forced_win,
    keeps_waits,
    refresh_waits,
)
from simulator.kernel.evaluate import CTX_AFTER_KONG, CTX_KONG_DISCARD, CTX_ROB_KONG, evaluate_win
from simulator.kernel.settlement import (
    KK_DIRECT,
    declared_ctx,
    return_kong,
    transfer_kong,
)
from simulator.kernel.shape import MELD_CKONG, hand_tiles
from simulator.kernel.state import (
    A_PASS,
    A_WIN,
    C_WIN,
    D_TAKE_WIN,
    EV_DECLINE,
    EV_LOCKED,
    EV_WIN,
    G_CHAIN,
    G_INTERRUPTED,
    G_NKONGS,
    G_NWINS,
    G_NWON,
    G_TURNS,
    G_WIN_EVENTS,
    IO_EXT,
    KL_FEEDER,
    KL_KIND,
    KL_MAKER,
    KL_STATUS,
    KS_LIVE,
    KS_REFUNDED,
    N_KINDS,
    N_SEATS,
    PS_CLEARED,
    PS_DECLINED,
    PS_EVOID,
    PS_LOCK_FAN,
    PS_LOCK_MASK,
    PS_LOCKED,
    PS_NWINS,
    PS_WAITS,
    PS_WIN_IDX,
    PS_WIN_KIND,
    PS_WIN_ORDER,
    PS_WIN_TURN,
    PS_WON,
    PS_WON_KINDS,
    W_CAPPED,
    W_CTX,
    W_FAN,
    W_FLAGS,
    W_GEN,
    W_HAND_TYPE,
    W_KIND,
    W_NMELDS,
    W_NPAYERS,
    W_ORDER,
    W_PAYER,
    W_POINTS,
    W_RECEIVED,
    W_TILE,
    W_TURN,
    W_WINNER,
    WK_DISCARD,
    WK_ROB_KONG,
    WK_SELF_DRAW,
    ask,
    log_event,
    pay,
)
from simulator.rules.keys import SLOT

P_AFTER_KONG_DEAL_IN = SLOT["kongs.after_kong_deal_in"]
P_KONG_BLOOM_PAYER = SLOT["kong_bloom_payer"]
P_MODE = SLOT["mode"]
P_MULTIPLE_RON = SLOT["multiple_ron"]
P_PASS_RON_LOCK = SLOT["pass_ron_lock"]


@njit(cache=True, inline="always")
def win_of(w, tile, kind, payer, n_payers, ctx):
    """The win :func:`record_win` records, as one tuple of int64 (``state.WIN_AT``): winner, tile, kind (``WK_*``),
    payer (−1 none), number of payers, context bits."""
    return (np.int64(w), np.int64(tile), np.int64(kind), np.int64(payer), np.int64(n_payers), np.int64(ctx))


@njit(cache=True, _nrt=False)
def record_win(st, win, res, take_tile: bool) -> int:
    """Write the win record of ``win`` (:func:`win_of`: ``(w, tile, kind, payer, n_payers, ctx)``; ``conc[w]`` must
    already hold the winning tile) scored ``res`` (``evaluate_win``'s tuple), and take it out of play.
    ``take_tile`` False for a 一炮多响 partner: the physical tile went to the first winner, so it is removed again
    from this winner's live hand after the record is written."""
    w, tile, kind, payer, n_payers, ctx = win
    g, ps, conc, mk, mt, nm = st.g, st.ps, st.conc, st.mk, st.mt, st.nm
    wins, wconc, wmk, wmt = st.wins, st.wconc, st.wmk, st.wmt
    i = g[G_NWINS]
    g[G_NWINS] = i + 1
    fan, capped, flags, gen, ht, pts = res
    wins[i, W_ORDER] = g[G_WIN_EVENTS]
    wins[i, W_WINNER] = w
    wins[i, W_PAYER] = payer
    wins[i, W_NPAYERS] = n_payers
    wins[i, W_KIND] = kind
    wins[i, W_TILE] = tile
    wins[i, W_CTX] = ctx
    wins[i, W_HAND_TYPE] = ht
    wins[i, W_FLAGS] = flags
    wins[i, W_GEN] = gen
    wins[i, W_FAN] = fan
    wins[i, W_CAPPED] = capped
    wins[i, W_POINTS] = pts
    wins[i, W_RECEIVED] = pts * n_payers
    wins[i, W_TURN] = g[G_TURNS]
    wins[i, W_NMELDS] = nm[w]
    for k in range(N_KINDS):  # loops, not slice copies: each shaped copy adds a compiled shape check
        wconc[i, k] = conc[w, k]
    for j in range(4):  # slots past nm may hold a bot's scratch meld (it tries claims in place): not copied
        wmk[i, j] = mk[w, j] if j < nm[w] else 0
        wmt[i, j] = mt[w, j] if j < nm[w] else 0
    if not take_tile:
        conc[w, tile] -= 1
    ps[w, PS_WON] = 1
    if ps[w, PS_NWINS] == 0:  # the players table describes a seat's first win (血流: the others are wins rows)
        ps[w, PS_WIN_ORDER] = g[G_WIN_EVENTS]
        ps[w, PS_WIN_TURN] = g[G_TURNS]
        ps[w, PS_WIN_KIND] = kind
        ps[w, PS_WIN_IDX] = i
        g[G_NWON] += 1
    ps[w, PS_NWINS] += 1
    ps[w, PS_WON_KINDS] |= np.int64(1) << tile
    ps[w, PS_CLEARED] &= ~(np.int64(1) << tile)  # set by the discard it wins on (do_discard)
    g[G_INTERRUPTED] = 1
    log_event(st, EV_WIN, w, tile, pts, kind, i)
    return i


@njit(cache=True, _nrt=False)
def play_on(table, st, w: int, tile: int, physical: bool) -> None:
    """血流: winner ``w`` stays in play. The winning tile is set aside (``physical``: ``w`` holds the physical
    tile; a 一炮多响 partner's copy was already taken back by :func:`record_win`), which leaves the ready hand it
    had before the win; its waits are cached again (a 天胡 or 杠上花 hand had none cached)."""
    if physical:
        st.conc[w, tile] -= 1
    st.ps[w, PS_WON] = 0  # PS_WON means "out of play" to the loop and the bots; PS_NWINS counts the wins
    refresh_waits(table, st, w)


@njit(cache=True, _nrt=False)
def locked_kongs(table, st, p: int, drawn: int, opts: int) -> int:
    """The own-turn kongs a locked 血流 winner may make: only of the tile it just drew (a 加杠, or a 暗杠 that
    keeps its waits), so the rest of its hand never changes."""
    if drawn < 0 or not (opts >> drawn) & 1:
        return 0
    if st.conc[p, drawn] == 4 and not keeps_waits(table, st, p, drawn, 4, MELD_CKONG):
        return 0
    return np.int64(1) << drawn


@njit(cache=True, inline="always")
def lock_blocks(params, ps, q, tile, capped) -> bool:
    """过水不胡: does seat q's pass lock (set by a declined discard win, cleared by its next draw) forbid this
    win on another player's tile?"""
    mode = params[P_PASS_RON_LOCK]
    if mode == LOCK_OFF or not ps[q, PS_LOCKED]:
        return False
    if mode == LOCK_SAME:
        return (ps[q, PS_LOCK_MASK] >> tile) & 1 == 1
    if mode == LOCK_ALL:
        return True
    return capped <= ps[q, PS_LOCK_FAN]


# a call, not inlined: runs only when a seat has a legal win (a few times a hand); inlined at its three sites it
# cost ~0.5-1 s of cold compile (own_turn with its callees: 10.5 -> 9-10 s CPU) for no measurable speed
@njit(cache=True, _nrt=False)
def takes_win(game, st, bpar, q: int, capped: int, self_draw: bool, tile: int, frm: int) -> int:
    """Seat ``q`` takes a legal win (1), declines it (0), or −1: an external seat's answer is pending. The bot
    sees all seats' arrays (the expert prices the waits it would keep by declining)."""
    io = game.io
    if io[IO_EXT + q]:
        a = ask(io, q, D_TAKE_WIN, (1 << A_WIN) | (1 << A_PASS), tile, frm, capped)
        if a < 0:
            return -1
        return 1 if a == A_WIN else 0
    return 1 if bot_takes_win(game, st, bpar[q], q, tile, capped, self_draw) else 0


@njit(cache=True, inline="always")  # every discard: inlined into the loop (no call)
def claim_wins(game, st, bpar, src, tile, ctx) -> int:
    """Who wins on ``tile`` given up by ``src`` (a discard, or a robbed added kong): the seats in turn order
    after ``src`` that are still in, wait on it, are not pass-locked and take the win; only the first of them
    unless ``multiple_ron``. Declines set the decliner's lock. Returns the count; winners go to ``st.winners``."""
    table, params = game.table, game.params
    g, ps, conc, mk, mt, nm, out = st.g, st.ps, st.conc, st.mk, st.mt, st.nm, st.winners
    n = 0
    for i in range(1, N_SEATS):
        q = (src + i) % N_SEATS
        if ps[q, PS_WON] or not (ps[q, PS_WAITS] >> tile) & 1:
            continue
        conc[q, tile] += 1
        res = evaluate_win(table, hand_tiles(conc[q], mk[q], mt[q], nm[q], ps[q, PS_EVOID]), tile,
                           ctx | declared_ctx(ps, q), params)
        conc[q, tile] -= 1
        if res[0] < 0:
            continue
        capped = res[1]
        if lock_blocks(params, ps, q, tile, capped):
            log_event(st, EV_LOCKED, q, tile, capped, 0, 0)
            continue
        # np.bool_: a literal False would compile takes_win once more (own_turn passes True)
        take = 1 if forced_win(params, g) else takes_win(game, st, bpar, q, capped, np.bool_(False), tile, src)
        if take < 0:
            return 0  # paused: the caller sees io[DP_STATUS] and rolls the step back
        if take:
            out[n] = q
            n += 1
            if not params[P_MULTIPLE_RON]:
                break
        else:
            ps[q, PS_DECLINED] += 1
            ps[q, PS_LOCKED] = 1
            ps[q, PS_LOCK_MASK] |= 1 << tile
            if capped > ps[q, PS_LOCK_FAN]:
                ps[q, PS_LOCK_FAN] = capped
            kind = WK_ROB_KONG if ctx & CTX_ROB_KONG else WK_DISCARD
            log_event(st, EV_DECLINE, q, tile, capped, kind, 0)
    return n


@njit(cache=True, _nrt=False)
def settle_ron(game, st, src: int, tile: int, ctx: int, n: int) -> None:
    """Pay and record the wins on ``src``'s tile (discard or robbed kong; ``src`` pays each of the ``n`` winners
    of ``st.winners``), then apply ``after_kong_deal_in`` if this was a 杠上炮: ``refund`` returns, ``transfer``
    moves, the income of the last kong ``src`` made this turn (the kong whose replacement draw preceded the discard;
    seed 000: 这一个杠)."""
    table, params = game.table, game.params
    g, ps, conc, mk, mt, nm, kl, winners = st.g, st.ps, st.conc, st.mk, st.mt, st.nm, st.kl, st.winners
    kind = WK_ROB_KONG if ctx & CTX_ROB_KONG else WK_DISCARD
    g[G_WIN_EVENTS] += 1
    for j in range(n):
        w = winners[j]
        wctx = ctx | declared_ctx(ps, w)
        conc[w, tile] += 1
        res = evaluate_win(table, hand_tiles(conc[w], mk[w], mt[w], nm[w], ps[w, PS_EVOID]), tile, wctx, params)
        record_win(st, win_of(w, tile, kind, src, 1, wctx), res, j == 0)
        if params[P_MODE] == MODE_XUELIU:
            play_on(table, st, w, tile, j == 0)
        pay(st, src, w, res[5], C_WIN)
    if ctx & CTX_KONG_DISCARD:
        mode = params[P_AFTER_KONG_DEAL_IN]
        last = g[G_NKONGS] - 1  # the kong whose replacement draw preceded this discard
        for i in range(g[G_CHAIN], g[G_NKONGS]):
            if kl[i, KL_MAKER] != src or kl[i, KL_STATUS] != KS_LIVE:
                continue
            if mode == DEAL_IN_REFUND and i == last:
                return_kong(st, i, KS_REFUNDED)
            elif mode == DEAL_IN_TRANSFER and i == last:
                transfer_kong(st, i, n)


@njit(cache=True, _nrt=False)
def settle_self_draw(game, st, w: int, tile: int, ctx: int, res) -> None:
    """自摸: every player still in pays ``points``; a 杠上花 on the replacement of a 直杠 is paid entirely by
    the feeder under ``kong_bloom_payer: feeder`` (the same total: points × players still in)."""
    params, g, ps, kl = game.params, st.g, st.ps, st.kl
    payers = 0
    for q in range(N_SEATS):
        if q != w and not ps[q, PS_WON]:
            payers += 1
    pts = res[5]
    feeder = -1
    if ctx & CTX_AFTER_KONG and params[P_KONG_BLOOM_PAYER] == BLOOM_FEEDER:
        last = g[G_NKONGS] - 1
        if last >= 0 and kl[last, KL_KIND] == KK_DIRECT and kl[last, KL_MAKER] == w:
            feeder = kl[last, KL_FEEDER]
    g[G_WIN_EVENTS] += 1
    record_win(st, win_of(w, tile, WK_SELF_DRAW, feeder, payers, ctx), res, True)
    if params[P_MODE] == MODE_XUELIU:
        play_on(game.table, st, w, tile, True)
    if feeder >= 0:
        pay(st, feeder, w, pts * payers, C_WIN)
    else:
        for q in range(N_SEATS):
            if q != w and not ps[q, PS_WON]:
                pay(st, q, w, pts, C_WIN)
