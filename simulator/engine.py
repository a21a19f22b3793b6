"""The compiled hand engine: one hand from seeds, dealer, params and bots to result arrays; batches of hands.

The whole hand loop is ``@njit(cache=True)`` over the plain arrays of :mod:`simulator.state`; there is no
Python object per tile or per turn. :func:`play_hands` is the Python boundary: it derives the per-deal seeds
(``SeedSequence(seed, spawn_key=(deal_id,)).generate_state(2, uint64)`` → wall seed, bot seed), runs the
compiled batch over preallocated output arrays and hands them to :mod:`simulator.records` for the log columns.

Flow of a hand (RULES.md §2; conventions where it is silent are in docs/rules.md, "Engine conventions"):
shuffle (wall stream) → deal (dealer 14, others 13) → 换三张 → 定缺 → dealer's first turn (天胡, 暗杠, discard)
→ [draw → self-draw win? → kong? → discard → claims: win > kong/pung] … until three have won (``xuezhan``), the
first win event (``single``) or the wall is empty (exhaustive draw → 退税, 查花猪, 查大叫). Under ``xueliu`` (血流成河)
a winner sets its winning tile aside and plays on with its hand locked (:func:`locked`) until the wall is empty.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator import numba_cache, records, state
from simulator.bots import (
    REASON_SHIFT,
    bot_claim,
    bot_declares,
    bot_discard,
    bot_exchange,
    bot_self_kong,
    bot_takes_win,
    bot_void,
    planning_void,
    simple_lineup,
)
from simulator.bots.common import legal_discard_mask, self_kong_options
from simulator.evaluate import (
    CTX_AFTER_KONG,
    CTX_DANCE,
    CTX_DEALER,
    CTX_FIRST_DRAW,
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_ROB_KONG,
    CTX_SELF_DRAW,
    CTX_SING,
    MELD_CKONG,
    MELD_KONG,
    MELD_PUNG,
    evaluate_win,
    held4_mask,
    is_complete,
    shanten,
    wait_mask,
)
from simulator.rng import derive, randbelow, seed_words, shuffle_int8, spawn_states
from simulator.rules import (
    BLOOM_PAYERS,
    DEAL_INS,
    DECLARES,
    EXCHANGES,
    LAST_DISCARD_CLAIMS,
    MODES,
    P_AFTER_KONG_DEAL_IN,
    P_DECLARE_READY,
    P_EXCHANGE_THREE,
    P_FORCED_WIN_LAST_TILES,
    P_KONG_BLOOM_PAYER,
    P_LAST_DISCARD_CLAIMS,
    P_MODE,
    P_MULTIPLE_RON,
    P_PASS_RON_LOCK,
    P_ROB_KONG,
    PASS_LOCKS,
    RuleSet,
)
from simulator.settlement import (
    KK_ADDED,
    KK_CONCEALED,
    KK_DIRECT,
    kong_payment,
    mark_ready,
    return_kong,
    settle_exhaustive,
    transfer_kong,
)
from simulator.state import (
    A_DECLARE,
    A_KONG,
    A_PASS,
    A_PUNG,
    A_TILE0,
    A_VOID0,
    A_WIN,
    ANS_COUNT,
    ANS_USED,
    C_WIN,
    D_CLAIM,
    D_DECLARE,
    D_DISCARD,
    D_EXCHANGE,
    D_SELF_KONG,
    D_TAKE_WIN,
    D_VOID,
    DP_STATUS,
    EV_DEAL,
    EV_DECLARE,
    EV_DECLINE,
    EV_DISCARD,
    EV_DRAW,
    EV_END,
    EV_EXCHANGE,
    EV_LOCKED,
    EV_PUNG,
    EV_ROBBED,
    EV_VOID,
    EV_WIN,
    G_CHAIN,
    G_DEALER,
    G_ENDED,
    G_EXCHANGE,
    G_EXHAUSTIVE,
    G_HEAD,
    G_INTERRUPTED,
    G_NKONGS,
    G_NWINS,
    G_NWON,
    G_TAIL,
    G_TURNS,
    G_WIN_EVENTS,
    H_DEALER,
    H_EV_OVERFLOW,
    H_EXCHANGE,
    H_EXHAUSTIVE,
    H_N,
    H_NKONGS,
    H_NWINNERS,
    H_NWINS,
    H_TILES_LEFT,
    H_TURNS,
    IO_EXT,
    KL_FEEDER,
    KL_KIND,
    KL_MAKER,
    KL_STATUS,
    KS_LIVE,
    KS_REFUNDED,
    N_KINDS,
    N_SEATS,
    PC_CUR,
    PC_DEALER_FIRST,
    PC_DREW,
    PC_FROM_TAIL,
    PC_OUTCOME,
    PC_PAUSED,
    PC_STAGE,
    PC_STEPS,
    PL_BOT,
    PL_CAPPED,
    PL_DECLARED,
    PL_DECLINED,
    PL_FAN,
    PL_FLAGS,
    PL_GEN,
    PL_HAND_TYPE,
    PL_HUAZHU,
    PL_N,
    PL_NKONGS,
    PL_READY,
    PL_SCORE,
    PL_SEAT,
    PL_START_SH,
    PL_VOID,
    PL_WIN_KIND,
    PL_WIN_ORDER,
    PL_WIN_TURN,
    PL_WON,
    PS_BOT,
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
    PS_SHOWN,
    PS_START_SH,
    PS_VOID,
    PS_WAITS,
    PS_WIN_IDX,
    PS_WIN_KIND,
    PS_WIN_ORDER,
    PS_WIN_TURN,
    PS_WON,
    STAGE_DONE,
    STAGE_SETUP,
    STAGE_TURNS,
    VOID_DECLARED,
    VOID_NONE,
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
    next_in,
    pay,
    tiles_left,
    void_rule,
)

numba_cache.drop_stale_caches()

EX_RANDOM = EXCHANGES.index("random")
EX_CLOCKWISE = EXCHANGES.index("clockwise")
EX_COUNTER = EXCHANGES.index("counterclockwise")
MODE_SINGLE = MODES.index("single")
MODE_XUELIU = MODES.index("xueliu")
XUELIU_ROWS_PER_HAND = 16  # win rows per hand the batch outputs start with under xueliu (regrown when short)
LOCK_OFF, LOCK_SAME, LOCK_ALL = (PASS_LOCKS.index(x) for x in ("off", "same_tile", "all_tiles"))
DEAL_IN_KEEP, DEAL_IN_REFUND, DEAL_IN_TRANSFER = (DEAL_INS.index(x) for x in DEAL_INS)
BLOOM_FEEDER = BLOOM_PAYERS.index("feeder")
LAST_WIN_ONLY = LAST_DISCARD_CLAIMS.index("win_only")
DECL_SING, DECL_DANCE = DECLARES.index("sing"), DECLARES.index("dance")
EVENTS_PER_HAND = 320  # initial event-buffer rows per hand when recording (a typical hand logs ~150)
MAX_STEPS = 2000  # turn-loop guard; a hand needs at most ~150 steps, so hitting it means an engine bug
# What a step of the turn loop leads to
GO_DISCARD, NEXT_DRAW, KONG_DRAW, PUNG_DISCARD, HAND_OVER = range(5)


# ---------------------------------------------------------------------------------------------------------
# Setup: shuffle, deal, 换三张, 定缺

@njit(cache=True)
def reset(wall, conc, mk, mt, nm, g, ps, score, kl, wins, wconc, wmk, wmt, visible) -> None:
    for k in range(state.N_TILES):
        wall[k] = k // 4
    # loops, not slice fills (x[:, :] = 0): each of those lowers numba's general slice assignment
    for p in range(N_SEATS):
        for k in range(N_KINDS):
            conc[p, k] = 0
        for j in range(4):
            mk[p, j] = 0
            mt[p, j] = 0
        nm[p] = 0
        for c in range(ps.shape[1]):
            ps[p, c] = 0
        for c in range(score.shape[1]):
            score[p, c] = 0
    for c in range(g.shape[0]):
        g[c] = 0
    for i in range(kl.shape[0]):
        for c in range(kl.shape[1]):
            kl[i, c] = 0
    for i in range(wins.shape[0]):
        for c in range(wins.shape[1]):
            wins[i, c] = 0
        for k in range(N_KINDS):
            wconc[i, k] = 0
        for j in range(4):
            wmk[i, j] = 0
            wmt[i, j] = 0
    for k in range(N_KINDS):
        visible[k] = 0


@njit(cache=True)
def deal(wall, conc, g, events, dealer) -> None:
    """Seat dealer+i takes wall[13i : 13i+13]; the dealer also takes wall[52]. 55 tiles remain."""
    for i in range(N_SEATS):
        seat = (dealer + i) % N_SEATS
        for j in range(state.HAND):
            conc[seat, wall[state.HAND * i + j]] += 1
    conc[dealer, wall[4 * state.HAND]] += 1
    g[G_HEAD] = 4 * state.HAND + 1
    g[G_TAIL] = state.N_TILES
    for s in range(N_SEATS):
        log_event(events, g, EV_DEAL, s, -1, 0, 14 if s == dealer else 13, 0)


@njit(cache=True)
def exchange_three(params, rngs, bots, io, conc, g, events) -> None:
    """换三张: every seat passes three tiles of one suit, all at the same time. In seat terms (seats are
    numbered in turn order, which runs counter-clockwise): counterclockwise → seat+1, clockwise → seat−1,
    opposite → seat+2. ``random`` draws the direction from the wall stream, so it depends on the deal only."""
    d = params[P_EXCHANGE_THREE]
    if d == EX_RANDOM:
        d = 1 + randbelow(rngs[0:1], 3)
    g[G_EXCHANGE] = d
    if d == 0:
        return
    off = 3 if d == EX_CLOCKWISE else (1 if d == EX_COUNTER else 2)
    give = np.zeros((N_SEATS, 3), np.int64)
    for s in range(N_SEATS):
        if io[IO_EXT + s]:
            if not ask_exchange(io, s, conc[s], give[s]):
                return
        else:
            bot_exchange(bots[s], rngs[1 + s:2 + s], conc[s], give[s])
    for s in range(N_SEATS):
        to = (s + off) % N_SEATS
        for i in range(3):
            t = give[s, i]
            conc[s, t] -= 1
            conc[to, t] += 1
            log_event(events, g, EV_EXCHANGE, s, t, 0, to, 0)


@njit(cache=True)
def ask_exchange(io, s, conc, out) -> bool:
    """An external seat's three 换三张 tiles, one pick at a time (all of one suit that has at least three tiles);
    False when paused or illegal."""
    for i in range(3):
        legal = 0
        for k in range(N_KINDS):
            left = np.int64(conc[k])
            for j in range(i):
                if out[j] == k:
                    left -= 1
            suit_n = 0
            for r in range(9):
                suit_n += conc[9 * (k // 9) + r]
            if left > 0 and suit_n >= 3 and (i == 0 or k // 9 == out[0] // 9):
                legal |= 1 << (A_TILE0 + k)
        a = ask(io, s, D_EXCHANGE, legal, -1, -1, 0)
        if a < 0:
            return False
        out[i] = a - A_TILE0
    return True


@njit(cache=True)
def declare_voids(table, params, rngs, bots, bpar, io, conc, mk, mt, nm, g, ps, events) -> None:
    """定缺 (not under ``void_suit: none``), then the start shanten of every seat."""
    for s in range(N_SEATS):
        if void_rule(params) == VOID_NONE:
            ps[s, PS_VOID] = -1
        else:
            if io[IO_EXT + s]:
                a = ask(io, s, D_VOID, 7 << A_VOID0, -1, -1, 0)
                if a < 0:
                    return
                ps[s, PS_VOID] = a - A_VOID0
            else:
                ps[s, PS_VOID] = bot_void(bots[s], bpar[s], rngs[1 + s:2 + s], table, params, conc[s], mk[s], mt[s],
                                          nm[s])
            log_event(events, g, EV_VOID, s, -1, 0, ps[s, PS_VOID], 0)
        ps[s, PS_EVOID] = ps[s, PS_VOID]
        ps[s, PS_START_SH] = shanten(table, conc[s], mk[s], mt[s], nm[s], ps[s, PS_EVOID])
        if s != g[G_DEALER]:  # a dealt ready hand can win on the dealer's first discard
            refresh_waits(table, ps, conc, mk, mt, nm, s)


# ---------------------------------------------------------------------------------------------------------
# Wins

@njit(cache=True)
def record_win(g, ps, conc, mk, mt, nm, wins, wconc, wmk, wmt, events, w, tile, kind, payer, n_payers, ctx,
               res, take_tile) -> int:
    """Write win record for seat ``w`` (``conc[w]`` must already hold the winning tile) and take it out of
    play. ``take_tile`` False for a 一炮多响 partner: the physical tile went to the first winner, so it is
    removed again from this winner's live hand after the record is written."""
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
    g[G_INTERRUPTED] = 1
    log_event(events, g, EV_WIN, w, tile, pts, kind, i)
    return i


@njit(cache=True, inline="always")
def hand_over(params, g) -> bool:
    """After a win event: ``single`` ends at the first; ``xuezhan`` when three have won; ``xueliu`` never (the
    wall ends it)."""
    mode = params[P_MODE]
    return mode == MODE_SINGLE or (mode != MODE_XUELIU and g[G_NWON] >= N_SEATS - 1)


@njit(cache=True, inline="always")
def locked(params, ps, p) -> bool:
    """血流: a seat that has won plays on with its hand locked (docs/rules.md): it may win again, make a kong
    that keeps its waits (of the tile it drew, or a discard with three in hand), and otherwise discards the tile
    it drew; it never pungs. So every bot plays a winner's hand correctly without knowing the mode."""
    return params[P_MODE] == MODE_XUELIU and ps[p, PS_NWINS] > 0


@njit(cache=True)
def play_on(table, ps, conc, mk, mt, nm, w, tile, physical) -> None:
    """血流: winner ``w`` stays in play. The winning tile is set aside (``physical``: ``w`` holds the physical
    tile; a 一炮多响 partner's copy was already taken back by :func:`record_win`), which leaves the ready hand it
    had before the win; its waits are cached again (a 天胡 or 杠上花 hand had none cached)."""
    if physical:
        conc[w, tile] -= 1
    ps[w, PS_WON] = 0  # PS_WON means "out of play" to the loop and the bots; PS_NWINS counts the wins
    refresh_waits(table, ps, conc, mk, mt, nm, w)


@njit(cache=True)
def keeps_waits(table, ps, conc, mk, mt, nm, p, k, n, kind) -> bool:
    """Would ``p`` keep exactly its cached waits after setting ``n`` tiles of kind ``k`` down as a kong of
    ``kind`` (the tiles of a 暗杠 including the one drawn, or three in hand for a 直杠)? Restores the hand."""
    conc[p, k] -= n
    mk[p, nm[p]] = kind
    mt[p, nm[p]] = k
    nm[p] += 1
    w = wait_mask(table, conc[p], mk[p], mt[p], nm[p], ps[p, PS_EVOID])
    nm[p] -= 1
    mk[p, nm[p]] = 0
    mt[p, nm[p]] = 0
    conc[p, k] += n
    return w == ps[p, PS_WAITS]


@njit(cache=True)
def locked_kongs(table, ps, conc, mk, mt, nm, p, drawn, opts) -> int:
    """The own-turn kongs a locked 血流 winner may make: only of the tile it just drew (a 加杠, or a 暗杠 that
    keeps its waits), so the rest of its hand never changes."""
    if drawn < 0 or not (opts >> drawn) & 1:
        return 0
    if conc[p, drawn] == 4 and not keeps_waits(table, ps, conc, mk, mt, nm, p, drawn, 4, MELD_CKONG):
        return 0
    return np.int64(1) << drawn


@njit(cache=True, inline="always")
def forced_win(params, g) -> bool:
    """最后N张必胡: with at most N tiles in the wall a player who can win must."""
    n = params[P_FORCED_WIN_LAST_TILES]
    return n > 0 and tiles_left(g) <= n


@njit(cache=True, inline="always")
def declared_ctx(ps, q) -> int:
    """The 唱歌/跳舞 context bit of seat ``q``'s win (0 when it has not declared)."""
    d = ps[q, PS_DECLARED]
    if d == DECL_SING:
        return np.int64(CTX_SING)
    if d == DECL_DANCE:
        return np.int64(CTX_DANCE)
    return np.int64(0)


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


@njit(cache=True)  # a call, not inlined: runs only when a seat has a legal win (a few times a hand); inlined at its
# three sites it cost ~0.5-1 s of cold compile (own_turn with its callees: 10.5 -> 9-10 s CPU) for no measurable speed
def takes_win(bots, bpar, io, q, capped, self_draw, left, tile, frm, table, params, ps, conc, mk, mt, nm) -> int:
    """Seat ``q`` takes a legal win (1), declines it (0), or −1: an external seat's answer is pending.
    ``conc, mk, mt, nm``: all seats' arrays (the expert prices the waits it would keep by declining)."""
    if io[IO_EXT + q]:
        a = ask(io, q, D_TAKE_WIN, (1 << A_WIN) | (1 << A_PASS), tile, frm, capped)
        if a < 0:
            return -1
        return 1 if a == A_WIN else 0
    return 1 if bot_takes_win(bots[q], bpar[q], capped, self_draw, left, table, params, ps, conc, mk, mt, nm, q,
                              tile) else 0


@njit(cache=True, inline="always")  # every discard: inlined into the loop (no call)
def claim_wins(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, events, src, tile, ctx, out) -> int:
    """Who wins on ``tile`` given up by ``src`` (a discard, or a robbed added kong): the seats in turn order
    after ``src`` that are still in, wait on it, are not pass-locked and take the win; only the first of them
    unless ``multiple_ron``. Declines set the decliner's lock. Returns the count; winners go to ``out``."""
    n = 0
    for i in range(1, N_SEATS):
        q = (src + i) % N_SEATS
        if ps[q, PS_WON] or not (ps[q, PS_WAITS] >> tile) & 1:
            continue
        conc[q, tile] += 1
        res = evaluate_win(table, conc[q], mk[q], mt[q], nm[q], ps[q, PS_EVOID], tile, ctx | declared_ctx(ps, q),
                           params)
        conc[q, tile] -= 1
        if res[0] < 0:
            continue
        capped = res[1]
        if lock_blocks(params, ps, q, tile, capped):
            log_event(events, g, EV_LOCKED, q, tile, capped, 0, 0)
            continue
        # np.bool_: a literal False would compile takes_win once more (own_turn passes True)
        take = 1 if forced_win(params, g) else takes_win(bots, bpar, io, q, capped, np.bool_(False), tiles_left(g),
                                                          tile, src, table, params, ps, conc, mk, mt, nm)
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
            log_event(events, g, EV_DECLINE, q, tile, capped, kind, 0)
    return n


@njit(cache=True)
def settle_ron(table, params, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, events, src, tile,
               ctx, winners, n) -> None:
    """Pay and record the wins on ``src``'s tile (discard or robbed kong; ``src`` pays each winner), then apply
    ``after_kong_deal_in`` if this was a 杠上炮: ``refund`` returns, ``transfer`` moves, the income of the last kong
    ``src`` made this turn (the kong whose replacement draw preceded the discard; seed 000: 这一个杠)."""
    kind = WK_ROB_KONG if ctx & CTX_ROB_KONG else WK_DISCARD
    g[G_WIN_EVENTS] += 1
    for j in range(n):
        w = winners[j]
        wctx = ctx | declared_ctx(ps, w)
        conc[w, tile] += 1
        res = evaluate_win(table, conc[w], mk[w], mt[w], nm[w], ps[w, PS_EVOID], tile, wctx, params)
        record_win(g, ps, conc, mk, mt, nm, wins, wconc, wmk, wmt, events, w, tile, kind, src, 1, wctx, res,
                   j == 0)
        if params[P_MODE] == MODE_XUELIU:
            play_on(table, ps, conc, mk, mt, nm, w, tile, j == 0)
        pay(score, events, g, src, w, res[5], C_WIN)
    if ctx & CTX_KONG_DISCARD:
        mode = params[P_AFTER_KONG_DEAL_IN]
        last = g[G_NKONGS] - 1  # the kong whose replacement draw preceded this discard
        for i in range(g[G_CHAIN], g[G_NKONGS]):
            if kl[i, KL_MAKER] != src or kl[i, KL_STATUS] != KS_LIVE:
                continue
            if mode == DEAL_IN_REFUND and i == last:
                return_kong(g, score, kl, events, i, KS_REFUNDED)
            elif mode == DEAL_IN_TRANSFER and i == last:
                transfer_kong(g, score, kl, events, i, winners, n)


@njit(cache=True)
def settle_self_draw(table, params, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, events, w, tile,
                     ctx, res) -> None:
    """自摸: every player still in pays ``points``; a 杠上花 on the replacement of a 直杠 is paid entirely by
    the feeder under ``kong_bloom_payer: feeder`` (the same total: points × players still in)."""
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
    record_win(g, ps, conc, mk, mt, nm, wins, wconc, wmk, wmt, events, w, tile, WK_SELF_DRAW, feeder, payers,
               ctx, res, True)
    if params[P_MODE] == MODE_XUELIU:
        play_on(table, ps, conc, mk, mt, nm, w, tile, True)
    if feeder >= 0:
        pay(score, events, g, feeder, w, pts * payers, C_WIN)
    else:
        for q in range(N_SEATS):
            if q != w and not ps[q, PS_WON]:
                pay(score, events, g, q, w, pts, C_WIN)


# ---------------------------------------------------------------------------------------------------------
# Turn actions

@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def draw_tile(g, ps, conc, wall, events, p, from_tail) -> int:
    """Draw from the head (or the tail for a kong replacement); the draw ends ``p``'s pass lock."""
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
    log_event(events, g, EV_DRAW, p, t, 0, 1 if from_tail else 0, 0)
    return t


@njit(cache=True, inline="always")  # every discard: inlined into the loop (no call)
def refresh_waits(table, ps, conc, mk, mt, nm, p) -> None:
    """Cache ``p``'s waits after its discard, so a ron check on a later discard is a bit test."""
    ev = ps[p, PS_EVOID]
    if shanten(table, conc[p], mk[p], mt[p], nm[p], ev) == 0:
        ps[p, PS_WAITS] = wait_mask(table, conc[p], mk[p], mt[p], nm[p], ev)
    else:
        ps[p, PS_WAITS] = 0


@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def do_discard(table, g, ps, conc, mk, mt, nm, visible, events, p, t, why) -> None:
    conc[p, t] -= 1
    visible[t] += 1
    g[G_TURNS] += 1
    ps[p, PS_DISCARDED] |= 1 << t
    for q in range(N_SEATS):
        if q != p:
            ps[q, PS_SAFE] |= 1 << t
    log_event(events, g, EV_DISCARD, p, t, 0, why, 0)
    refresh_waits(table, ps, conc, mk, mt, nm, p)


@njit(cache=True, inline="always")
def self_draw_ctx(g, ps, p, dealer, drew, from_tail, dealer_first) -> int:
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


@njit(cache=True)
def first_held(conc, p, prefer) -> int:
    """The dealer's 天胡 has no drawn tile: report its 14th dealt tile if still held, else its lowest kind."""
    if conc[p, prefer] > 0:
        return prefer
    for k in range(N_KINDS):
        if conc[p, k] > 0:
            return k
    return -1


# ---------------------------------------------------------------------------------------------------------
# 唱歌/跳舞 (declare_ready)

@njit(cache=True)
def declare_discard_mask(ps, cur, legal) -> int:
    """The discards ``cur`` may make under ``declare_ready``: a declared hand only the tile it drew; under 跳舞 a
    player who has not declared none of the waits shown by a dancer still in, unless that leaves no legal
    discard (then every legal one: RULES.md §2.10, "unless it is their only legal discard")."""
    if ps[cur, PS_DECLARED]:
        return np.int64(1) << ps[cur, PS_DRAWN]
    shown = np.int64(0)
    for q in range(N_SEATS):
        if q != cur and not ps[q, PS_WON]:
            shown |= ps[q, PS_SHOWN]
    left = legal & ~shown
    return left if left else legal


@njit(cache=True)
def offer_declare(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, visible, events, cur) -> int:
    """After its discard a ready player (a wait on a kind it does not hold four of, RULES.md §5) who has not
    declared may declare: 唱歌 (announce) or 跳舞 (also show the waits), as ``declare_ready`` says, while tiles
    remain to draw. Returns 1 declared, 0 not, −1 an external seat's answer is pending."""
    if tiles_left(g) == 0:
        return 0
    waits = ps[cur, PS_WAITS]
    if waits & ~held4_mask(conc[cur], mk[cur], mt[cur], nm[cur]) == 0:
        return 0
    if io[IO_EXT + cur]:
        a = ask(io, cur, D_DECLARE, (1 << A_DECLARE) | (1 << A_PASS), -1, -1, 0)
        if a < 0:
            return -1
        yes = a == A_DECLARE
    else:
        yes = bot_declares(bots[cur], bpar[cur], table, params, g, ps, cur, conc[cur], mk[cur], mt[cur], nm[cur],
                           ps[cur, PS_EVOID], waits, visible, tiles_left(g))
    if not yes:
        return 0
    kind = params[P_DECLARE_READY]
    ps[cur, PS_DECLARED] = kind
    if kind == DECL_DANCE:
        ps[cur, PS_SHOWN] = waits
    log_event(events, g, EV_DECLARE, cur, -1, waits, kind, 0)
    return 1


@njit(cache=True)
def locked_kong_options(table, ps, conc, mk, mt, nm, cur, drawn, opts) -> int:
    """The kongs a declared hand may make: a concealed kong of the tile it just drew (all four in hand) whose
    waits are the ones it declared with; 0 otherwise (no 加杠, no other kind)."""
    if drawn < 0 or not (opts >> drawn) & 1 or conc[cur, drawn] != 4:
        return np.int64(0)
    return np.int64(1) << drawn if keeps_waits(table, ps, conc, mk, mt, nm, cur, drawn, 4, MELD_CKONG) else np.int64(0)


# ---------------------------------------------------------------------------------------------------------
# The hand loop

@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def own_kong(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, visible, events,
             winners, cur, drawn, pv, strict):
    """Offer ``cur`` a 暗杠/加杠 (every kong needs a replacement tile left in the wall). A 加杠 may be robbed
    (抢杠胡) before it pays anything. Returns ``(outcome, next seat)``."""
    if tiles_left(g) == 0:
        return GO_DISCARD, cur
    opts = self_kong_options(conc[cur], mk[cur], mt[cur], nm[cur], ps[cur, PS_VOID], strict)
    if opts and ps[cur, PS_DECLARED] != 0:
        opts = locked_kong_options(table, ps, conc, mk, mt, nm, cur, drawn, opts)
    elif opts and locked(params, ps, cur):
        opts = locked_kongs(table, ps, conc, mk, mt, nm, cur, drawn, opts)
    if io[IO_EXT + cur]:
        k = -1
        if opts:
            a = ask(io, cur, D_SELF_KONG, opts | (1 << A_PASS), -1, -1, 0)
            if a < 0:
                return HAND_OVER, cur
            k = -1 if a == A_PASS else a - A_TILE0
    else:
        k = bot_self_kong(bots[cur], bpar[cur], table, conc[cur], mk[cur], mt[cur], nm[cur], pv, opts, params,
                          ps, cur, visible, tiles_left(g))
    if k < 0:
        return GO_DISCARD, cur
    g[G_INTERRUPTED] = 1
    if conc[cur, k] == 4:
        conc[cur, k] = 0
        mk[cur, nm[cur]] = MELD_CKONG
        mt[cur, nm[cur]] = k
        nm[cur] += 1  # a concealed kong is face down: its tiles do not become visible
        kong_payment(params, g, ps, score, kl, events, cur, KK_CONCEALED, k, -1, True)
    else:
        if params[P_ROB_KONG]:
            rob = np.int64(CTX_ROB_KONG)  # not a literal: evaluate_win is compiled once, for int64 contexts
            n = claim_wins(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, events, cur, k, rob, winners)
            if io[DP_STATUS]:
                return HAND_OVER, cur
            if n > 0:
                conc[cur, k] -= 1
                visible[k] += 1
                log_event(events, g, EV_ROBBED, cur, k, 0, 0, 0)
                refresh_waits(table, ps, conc, mk, mt, nm, cur)
                settle_ron(table, params, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, events, cur,
                           k, rob, winners, n)
                return after_win(params, g, ps, winners[n - 1])
        conc[cur, k] -= 1
        for i in range(nm[cur]):
            if mt[cur, i] == k:
                mk[cur, i] = MELD_KONG
        visible[k] += 1
        kong_payment(params, g, ps, score, kl, events, cur, KK_ADDED, k, -1, drawn == k)
    ps[cur, PS_NKONGS] += 1
    return KONG_DRAW, cur


@njit(cache=True, inline="always")  # per-turn step: inlined, no call overhead
def after_win(params, g, ps, last_winner):
    """The hand ends, or play resumes with the next player still in after the last winner."""
    if hand_over(params, g):
        return HAND_OVER, last_winner
    return NEXT_DRAW, next_in(ps, last_winner)


@njit(cache=True)  # once per turn: a call (compiled on its own, in parallel on a cold start)
def own_turn(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, visible, events,
             wall, winners, cur, dealer, drawn, drew, from_tail, dealer_first, pv, strict):
    """The start of ``cur``'s turn after a draw (or the dealer's first turn): self-draw win, else a kong.
    Returns ``(outcome, next seat)``."""
    ev = ps[cur, PS_EVOID]
    win_tile = drawn if drawn >= 0 else first_held(conc, cur, wall[4 * state.HAND])
    ctx = self_draw_ctx(g, ps, cur, dealer, drew, from_tail, dealer_first) | declared_ctx(ps, cur)
    # is_complete first: evaluate_win does the pattern work even for hands that are not complete
    if is_complete(table, conc[cur], mk[cur], mt[cur], nm[cur], ev):
        res = evaluate_win(table, conc[cur], mk[cur], mt[cur], nm[cur], ev, win_tile, ctx, params)
        take = 1 if forced_win(params, g) else takes_win(bots, bpar, io, cur, res[1], np.bool_(True), tiles_left(g),
                                                          win_tile, np.int64(-1), table, params, ps, conc, mk, mt, nm)
        if take < 0:
            return HAND_OVER, cur
        if take:
            settle_self_draw(table, params, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, events,
                             cur, win_tile, ctx, res)
            if params[P_MODE] == MODE_XUELIU:
                visible[win_tile] += 1  # set aside face up
            return after_win(params, g, ps, cur)
        ps[cur, PS_DECLINED] += 1
        log_event(events, g, EV_DECLINE, cur, win_tile, res[1], WK_SELF_DRAW, 0)
    return own_kong(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, visible,
                    events, winners, cur, drawn, pv, strict)


@njit(cache=True, inline="always")  # once per turn: inlined into the loop (no call)
def claim_meld(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, score, kl, visible, events, cur, t, strict):
    """Pung or exposed kong of ``cur``'s discard ``t`` (at most one other seat can hold two or more of it).
    Returns ``(outcome, next seat)``: the claimer discards next (pung) or draws a replacement (kong). Under
    ``last_discard_claims: win_only`` the final discard (wall empty) can only be won, never punged."""
    if tiles_left(g) == 0 and params[P_LAST_DISCARD_CLAIMS] == LAST_WIN_ONLY:
        return NEXT_DRAW, next_in(ps, cur)
    for i in range(1, N_SEATS):
        q = (cur + i) % N_SEATS
        if ps[q, PS_WON] or conc[q, t] < 2 or (strict and t // 9 == ps[q, PS_VOID]) or ps[q, PS_DECLARED]:
            continue  # a declared hand is locked: it claims nothing but wins
        can_kong = conc[q, t] == 3 and tiles_left(g) > 0
        can_pung = not locked(params, ps, q)  # 血流: a winner's locked hand only kongs, keeping its waits
        if not can_pung:
            can_kong = can_kong and keeps_waits(table, ps, conc, mk, mt, nm, q, t, 3, MELD_KONG)
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
            c = bot_claim(bots[q], bpar[q], table, conc[q], mk[q], mt[q], nm[q], qv, t, np.bool_(can_pung), can_kong,
                          params, ps, q, visible, tiles_left(g))
        if c == 0:
            break
        g[G_INTERRUPTED] = 1
        take = 3 if c == 2 else 2
        conc[q, t] -= take
        mk[q, nm[q]] = MELD_KONG if c == 2 else MELD_PUNG
        mt[q, nm[q]] = t
        nm[q] += 1
        visible[t] += take
        ps[q, PS_WAITS] = 0
        g[G_CHAIN] = g[G_NKONGS]  # the claimer's turn starts here
        if c == 2:
            kong_payment(params, g, ps, score, kl, events, q, KK_DIRECT, t, cur, True)
            ps[q, PS_NKONGS] += 1
            return KONG_DRAW, q
        log_event(events, g, EV_PUNG, q, t, 0, cur, 0)
        return PUNG_DISCARD, q
    return NEXT_DRAW, next_in(ps, cur)


@njit(cache=True)  # once per turn: a call (compiled on its own, in parallel on a cold start)
def discard_turn(table, params, bots, bpar, io, rngs, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt,
                 visible, events, winners, sh_buf, cur, drawn, pv, strict):
    """``cur`` discards (a locked 血流 winner: the tile it drew, ``drawn``); others may win on it (first), else
    pung or kong it. Returns ``(outcome, next seat)``."""
    legal = legal_discard_mask(conc[cur], ps[cur, PS_VOID], strict)
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
        t = bot_discard(bots[cur], bpar[cur], rngs[1 + cur:2 + cur], table, params, g, ps, mt, nm, cur, conc[cur],
                        mk[cur], mt[cur], nm[cur], pv, legal, visible, sh_buf, tiles_left(g))
        why, t = t >> REASON_SHIFT, t & ((1 << REASON_SHIFT) - 1)
    do_discard(table, g, ps, conc, mk, mt, nm, visible, events, cur, t, why)
    if (params[P_DECLARE_READY] and not ps[cur, PS_DECLARED]
            and offer_declare(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, visible, events, cur) < 0):
        return HAND_OVER, cur
    ctx = 0
    if g[G_NKONGS] > g[G_CHAIN]:
        ctx |= CTX_KONG_DISCARD
    if tiles_left(g) == 0:
        ctx |= CTX_LAST_TILE
    n = claim_wins(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, events, cur, t, ctx, winners)
    if io[DP_STATUS]:
        return HAND_OVER, cur
    if n > 0:
        if params[P_MODE] != MODE_XUELIU:  # 血流 sets it aside face up: still seen
            visible[t] -= 1  # the tile left the discards for the winner's hand
        settle_ron(table, params, g, ps, conc, mk, mt, nm, score, kl, wins, wconc, wmk, wmt, events, cur, t, ctx,
                   winners, n)
        return after_win(params, g, ps, winners[n - 1])
    return claim_meld(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, score, kl, visible, events, cur, t,
                      strict)


@njit(cache=True)
def start_hand(params, bots, wall_seed, bot_seed, dealer, rngs, pc, wall, conc, mk, mt, nm, g, ps, score, kl, wins,
               wconc, wmk, wmt, visible, events, dealt) -> None:
    """Reset the state arrays, seed the streams (``rngs: uint64[5]``: wall, then one per seat), shuffle and deal;
    ``dealt: uint8[4, 27]`` receives the deal before 换三张. ``bots: int64[4]`` are the bot ids logged per seat."""
    reset(wall, conc, mk, mt, nm, g, ps, score, kl, wins, wconc, wmk, wmt, visible)
    rngs[0] = wall_seed
    for s in range(N_SEATS):
        rngs[1 + s] = derive(bot_seed, s)
        ps[s, PS_BOT] = bots[s]
    shuffle_int8(wall, rngs[0:1])
    g[G_DEALER] = dealer
    deal(wall, conc, g, events, dealer)
    for s in range(N_SEATS):  # a loop, not dealt[:, :] = conc: that compiles a shape check (~1 s cold)
        for k in range(N_KINDS):
            dealt[s, k] = conc[s, k]
    for c in range(pc.shape[0]):  # not pc[:] = 0 (numba's general slice assignment)
        pc[c] = 0
    pc[PC_STAGE] = STAGE_SETUP


@njit(cache=True)
def save_snapshot(live, snap) -> None:
    """Copy the live state into ``snap`` (a step that may pause starts here); nothing when ``snap`` is ``None``:
    numba prunes the copy, so the batch path, which never pauses, compiles none of it."""
    if snap is None:
        return
    copy_state(live, snap)


@njit(cache=True)
def restore_snapshot(snap, live) -> None:
    """Roll the live state back to ``snap`` (the start of the paused step); nothing when ``snap`` is ``None``."""
    if snap is None:
        return
    copy_state(snap, live)


@njit(cache=True)
def copy_state(src, dst) -> None:
    """Copy the mutable state arrays (conc, mk, mt, nm, g, ps, score, kl, wins, wconc, wmk, wmt, visible, rngs):
    the snapshot a paused step rolls back to. The wall never changes after the deal; events past g[G_NEV] are
    simply overwritten by the replay."""
    dst[0][...] = src[0]
    dst[1][...] = src[1]
    dst[2][...] = src[2]
    dst[3][...] = src[3]
    dst[4][...] = src[4]
    dst[5][...] = src[5]
    dst[6][...] = src[6]
    dst[7][...] = src[7]
    dst[8][...] = src[8]
    dst[9][...] = src[9]
    dst[10][...] = src[10]
    dst[11][...] = src[11]
    dst[12][...] = src[12]
    dst[13][...] = src[13]


def _run_hand(table, params, bots, bpar, io, pc, rngs, wall, conc, mk, mt, nm, g, ps, score, kl, wins,
              wconc, wmk, wmt, visible, events, snap) -> bool:
    """Play the hand from where ``pc`` says until it ends (True) or an external seat (``io[IO_EXT + s] = 1``)
    must decide (False; ``io`` holds the decision point, the state shows its moment, and the next call first
    rolls back to ``snap``, the start of the step, and replays it with the queued answers: see simulator.state).
    With no external seat this runs the whole hand without ever copying the state: the batch path, which passes
    ``snap=None`` (it never pauses)."""
    stepping = False
    for s in range(N_SEATS):
        if io[IO_EXT + s]:
            stepping = True
    live = (conc, mk, mt, nm, g, ps, score, kl, wins, wconc, wmk, wmt, visible, rngs)
    io[DP_STATUS] = 0
    io[ANS_USED] = 0
    if pc[PC_PAUSED]:
        restore_snapshot(snap, live)
        pc[PC_PAUSED] = 0
    if pc[PC_STAGE] == STAGE_SETUP:
        if stepping:
            save_snapshot(live, snap)
        exchange_three(params, rngs, bots, io, conc, g, events)
        if not io[DP_STATUS]:
            declare_voids(table, params, rngs, bots, bpar, io, conc, mk, mt, nm, g, ps, events)
        if io[DP_STATUS]:
            pc[PC_PAUSED] = 1
            return False
        io[ANS_COUNT] = 0
        pc[PC_STAGE] = STAGE_TURNS
        pc[PC_CUR] = g[G_DEALER]
        pc[PC_OUTCOME] = GO_DISCARD  # the dealer's first turn: no draw, then its own turn as after a draw
        pc[PC_DREW] = 0
        pc[PC_FROM_TAIL] = 0
        pc[PC_DEALER_FIRST] = 1
    dealer = g[G_DEALER]
    strict = void_rule(params) == VOID_DECLARED
    winners = np.zeros(N_SEATS, np.int64)
    sh_buf = np.zeros(N_KINDS, np.int64)

    cur = pc[PC_CUR]
    outcome = pc[PC_OUTCOME]
    # np.bool_/np.int64, not literals: numba would also compile the callees for the first iteration's constants
    drew = np.bool_(pc[PC_DREW] != 0)
    from_tail = np.bool_(pc[PC_FROM_TAIL] != 0)
    dealer_first = np.bool_(pc[PC_DEALER_FIRST] != 0)
    while True:
        pc[PC_STEPS] += 1
        if pc[PC_STEPS] > MAX_STEPS:
            raise RuntimeError("engine: the turn loop did not end (a bug)")
        if stepping:
            save_snapshot(live, snap)
            pc[PC_CUR] = cur
            pc[PC_OUTCOME] = outcome
            pc[PC_DREW] = drew
            pc[PC_FROM_TAIL] = from_tail
            pc[PC_DEALER_FIRST] = dealer_first
        drawn = np.int64(-1)
        if drew:
            if tiles_left(g) == 0:
                g[G_EXHAUSTIVE] = 1
                break
            drawn = draw_tile(g, ps, conc, wall, events, cur, from_tail)
        pv = planning_void(params, ps[cur, PS_VOID], table, conc[cur], mk[cur], mt[cur], nm[cur])
        if outcome != PUNG_DISCARD:
            outcome, nxt = own_turn(table, params, bots, bpar, io, g, ps, conc, mk, mt, nm, score, kl, wins,
                                    wconc, wmk, wmt, visible, events, wall, winners, cur, dealer, drawn, drew,
                                    from_tail, dealer_first, pv, strict)
        if outcome in (GO_DISCARD, PUNG_DISCARD) and not io[DP_STATUS]:
            outcome, nxt = discard_turn(table, params, bots, bpar, io, rngs, g, ps, conc, mk, mt, nm, score,
                                        kl, wins, wconc, wmk, wmt, visible, events, winners, sh_buf, cur, drawn, pv,
                                        strict)
        if io[DP_STATUS]:
            pc[PC_PAUSED] = 1
            pc[PC_STEPS] -= 1
            return False
        io[ANS_COUNT] = 0
        io[ANS_USED] = 0
        if outcome == HAND_OVER:
            break
        cur = nxt
        drew = outcome != PUNG_DISCARD
        from_tail = outcome == KONG_DRAW
        dealer_first = np.bool_(False)
    finish(table, params, g, ps, conc, mk, mt, nm, score, kl, events)
    pc[PC_STAGE] = STAGE_DONE
    return True


# Two compiled forms of one loop: ``run_hand`` for the step path (simulator.game: Python seats pause it), and
# ``run_hand_inline`` for the batch, inlined into :func:`play_batch`. numba re-optimises and re-generates the machine
# code of every callee inside each compiled caller, so a separate ``run_hand`` under the batch would cost a second
# whole-engine code generation on a cold start; inlined, the batch compiles the loop once.
run_hand = njit(cache=True)(_run_hand)
run_hand_inline = njit(cache=True, inline="always")(_run_hand)


@njit(cache=True)
def play_hand(table, params, bots, bpar, io, pc, rngs, wall_seed, bot_seed, dealer, wall, conc, mk, mt, nm,
              g, ps, score, kl, wins, wconc, wmk, wmt, visible, events, dealt, snap) -> None:
    """Play one whole hand of compiled seats (no external seat in ``io``) into the state arrays: the batch path."""
    start_hand(params, bots, wall_seed, bot_seed, dealer, rngs, pc, wall, conc, mk, mt, nm, g, ps, score, kl, wins,
               wconc, wmk, wmt, visible, events, dealt)
    run_hand(table, params, bots, bpar, io, pc, rngs, wall, conc, mk, mt, nm, g, ps, score, kl, wins,
             wconc, wmk, wmt, visible, events, snap)


@njit(cache=True)
def finish(table, params, g, ps, conc, mk, mt, nm, score, kl, events) -> None:
    """End of hand (logged first, so that settlement events follow it): readiness of the players still in, and
    the exhaustive-draw settlement."""
    g[G_ENDED] = 1
    log_event(events, g, EV_END, -1, -1, tiles_left(g), g[G_EXHAUSTIVE], 0)
    for p in range(N_SEATS):
        if ps[p, PS_NWINS] == 0:
            mark_ready(table, ps, conc, mk, mt, nm, p)
    if g[G_EXHAUSTIVE]:
        settle_exhaustive(table, params, g, ps, conc, mk, mt, nm, score, kl, events)


# ---------------------------------------------------------------------------------------------------------
# Batches

@njit(cache=True)
def play_batch(table, params, bot_ids, bot_par, bpar, wall_seeds, bot_seeds, dealers, rotations, record, h_out,
               p_out, dealt_out, w_out, w_hand, wconc_out, wmk_out, wmt_out, ev_out):
    """Play ``len(wall_seeds)`` hands into preallocated outputs; returns ``(win rows, event rows)`` written.

    Seat s of hand i is played by bot spec ``(s + rotations[i]) % 4``; ``bot_par`` holds the specs' parameter
    rows and ``bpar`` is the per-hand buffer of the seats' rows (``int64[4, N_BOT_PARAMS]``), or both are ``None``
    for a line-up without parameterised bots (see :func:`lineup_params`). Outputs: ``h_out int64[n, H_N]``,
    ``p_out int64[4n, PL_N]``, ``dealt_out uint8[4n, 27]``, ``w_out int64[rows, W_N]`` with ``w_hand`` (row of
    the hand) and the winning hands ``wconc_out/wmk_out/wmt_out``; with ``record`` the events go to ``ev_out``
    (``int32[cap, 1 + EV_W]``, column 0 = row of the hand) — the win or event row count returned may exceed
    ``rows`` or ``cap`` (血流 hands have many wins), in which case the caller retries with larger buffers."""
    nwin = win_slots(params)
    (wall, conc, mk, mt, nm, g, ps, score, kl, wins, wconc, wmk, wmt, visible, events) = alloc(record, nwin)
    rngs, io, pc = alloc_step()
    bots = np.empty(N_SEATS, np.int64)
    dealt = np.empty((N_SEATS, N_KINDS), np.uint8)
    nw = np.int64(0)  # not a literal 0: write_outputs would be compiled once more for it
    ne = 0
    for i in range(wall_seeds.shape[0]):
        for s in range(N_SEATS):
            b = (s + rotations[i]) % N_SEATS
            bots[s] = bot_ids[b]
            seat_params(bot_par, bpar, s, b)
        start_hand(params, bots, wall_seeds[i], bot_seeds[i], dealers[i], rngs, pc, wall, conc, mk, mt, nm, g, ps,
                   score, kl, wins, wconc, wmk, wmt, visible, events, dealt)
        run_hand_inline(table, params, bots, bpar, io, pc, rngs, wall, conc, mk, mt, nm, g, ps, score, kl, wins,
                        wconc, wmk, wmt, visible, events, None)
        nw = write_outputs(i, nw, g, ps, score, wins, wconc, wmk, wmt, dealt, h_out, p_out, dealt_out, w_out, w_hand,
                           wconc_out, wmk_out, wmt_out)
        if record:
            for j in range(g[state.G_NEV]):
                if ne < ev_out.shape[0]:
                    ev_out[ne, 0] = i
                    for c in range(state.EV_W):  # not a slice copy (a compiled shape check)
                        ev_out[ne, 1 + c] = events[j, c]
                ne += 1
    return nw, ne


@njit(cache=True)
def seat_params(bot_par, bpar, s, b) -> None:
    """Copy spec ``b``'s parameter row to seat ``s`` (nothing to copy for a simple line-up: ``bot_par`` None)."""
    if bot_par is None:
        return
    for c in range(bpar.shape[1]):  # not a slice copy (a compiled shape check)
        bpar[s, c] = bot_par[b, c]


def lineup_params(bot_ids: np.ndarray, bot_par: np.ndarray):
    """``(bot_par, bpar)`` for :func:`play_batch`: ``(None, (None,) * 4)`` when every seat is ``random`` or
    ``greedy`` (the engine is then compiled and run without the parameterised bots, see simulator.bots), else the
    int64 parameter rows and a per-hand buffer for them."""
    if simple_lineup(bot_ids):
        return None, (None,) * N_SEATS
    bot_par = np.ascontiguousarray(bot_par, dtype=np.int64)
    return bot_par, np.empty_like(bot_par)


@njit(cache=True)
def win_slots(params) -> int:
    """Win records one hand can need: 3, or ``MAX_WINS_XUELIU`` under ``mode: xueliu``."""
    return state.MAX_WINS_XUELIU if params[P_MODE] == MODE_XUELIU else state.MAX_WINS


@njit(cache=True)
def alloc(record, n_wins=state.MAX_WINS):
    """A hand's state arrays (see :mod:`simulator.state`), with ``n_wins`` win records (:func:`win_slots`; the
    default suits every mode but ``xueliu``)."""
    e = state.E_MAX if record else 1
    return (np.zeros(state.N_TILES, np.int8), np.zeros((N_SEATS, N_KINDS), np.uint8),
            np.zeros((N_SEATS, 4), np.int8), np.zeros((N_SEATS, 4), np.int8), np.zeros(N_SEATS, np.int64),
            np.zeros(state.G_N, np.int64), np.zeros((N_SEATS, state.PS_N), np.int64),
            np.zeros((N_SEATS, state.N_COMP), np.int64), np.zeros((state.K_MAX, state.KL_N), np.int64),
            np.zeros((n_wins, state.W_N), np.int64), np.zeros((n_wins, N_KINDS), np.uint8),
            np.zeros((n_wins, 4), np.int8), np.zeros((n_wins, 4), np.int8),
            np.zeros(N_KINDS, np.int8), np.zeros((e, state.EV_W), np.int32))


@njit(cache=True)
def alloc_step():
    """``(rngs uint64[5], io int64[IO_N], pc int64[PC_N])``: the streams and the step interface (simulator.state)."""
    return np.zeros(1 + N_SEATS, np.uint64), np.zeros(state.IO_N, np.int64), np.zeros(state.PC_N, np.int64)


@njit(cache=True)
def alloc_snapshot(n_wins=state.MAX_WINS):
    """Arrays for :func:`copy_state`'s snapshot, shaped like the live state it copies."""
    return (np.zeros((N_SEATS, N_KINDS), np.uint8), np.zeros((N_SEATS, 4), np.int8), np.zeros((N_SEATS, 4), np.int8),
            np.zeros(N_SEATS, np.int64), np.zeros(state.G_N, np.int64), np.zeros((N_SEATS, state.PS_N), np.int64),
            np.zeros((N_SEATS, state.N_COMP), np.int64), np.zeros((state.K_MAX, state.KL_N), np.int64),
            np.zeros((n_wins, state.W_N), np.int64), np.zeros((n_wins, N_KINDS), np.uint8),
            np.zeros((n_wins, 4), np.int8), np.zeros((n_wins, 4), np.int8),
            np.zeros(N_KINDS, np.int8), np.zeros(1 + N_SEATS, np.uint64))


@njit(cache=True)
def write_outputs(i, nw, g, ps, score, wins, wconc, wmk, wmt, dealt, h_out, p_out, dealt_out, w_out, w_hand,
                  wconc_out, wmk_out, wmt_out) -> int:
    """Write the finished hand as row ``i`` of the batch outputs (see :func:`play_batch`); its win records go
    from row ``nw`` on. Returns the next free win row (counting rows that did not fit in ``w_out``)."""
    write_hand(i, g, h_out)
    for s in range(N_SEATS):
        write_player(4 * i + s, s, g, ps, score, wins, p_out)
        for k in range(N_KINDS):  # loops, not slice copies: each shaped copy adds a compiled shape check
            dealt_out[4 * i + s, k] = dealt[s, k]
    for j in range(g[G_NWINS]):
        if nw >= w_out.shape[0]:  # the caller regrows the buffers and replays the batch
            nw += 1
            continue
        for c in range(state.W_N):
            w_out[nw, c] = wins[j, c]
        w_hand[nw] = i
        for k in range(N_KINDS):
            wconc_out[nw, k] = wconc[j, k]
        for m in range(4):
            wmk_out[nw, m] = wmk[j, m]
            wmt_out[nw, m] = wmt[j, m]
        nw += 1
    return nw


@njit(cache=True)
def write_hand(i, g, h_out) -> None:
    h_out[i, H_DEALER] = g[G_DEALER]
    h_out[i, H_EXCHANGE] = g[G_EXCHANGE]
    h_out[i, H_NWINNERS] = g[G_NWON]
    h_out[i, H_EXHAUSTIVE] = g[G_EXHAUSTIVE]
    h_out[i, H_TILES_LEFT] = tiles_left(g)
    h_out[i, H_NKONGS] = g[G_NKONGS]
    h_out[i, H_TURNS] = g[G_TURNS]
    h_out[i, H_NWINS] = g[G_NWINS]
    h_out[i, H_EV_OVERFLOW] = g[state.G_EV_OVERFLOW]


@njit(cache=True)
def write_player(row, s, g, ps, score, wins, p_out) -> None:
    won = 1 if ps[s, PS_NWINS] > 0 else 0
    w = ps[s, PS_WIN_IDX]
    p_out[row, PL_SEAT] = s
    p_out[row, PL_BOT] = ps[s, PS_BOT]
    p_out[row, PL_START_SH] = ps[s, PS_START_SH]
    p_out[row, PL_VOID] = ps[s, PS_VOID]
    p_out[row, PL_WON] = won
    p_out[row, PL_WIN_ORDER] = ps[s, PS_WIN_ORDER] if won else -1
    p_out[row, PL_WIN_KIND] = ps[s, PS_WIN_KIND] if won else -1
    p_out[row, PL_WIN_TURN] = ps[s, PS_WIN_TURN] if won else -1
    p_out[row, PL_HAND_TYPE] = wins[w, W_HAND_TYPE] if won else -1
    p_out[row, PL_FLAGS] = wins[w, W_FLAGS] if won else 0
    p_out[row, PL_GEN] = wins[w, W_GEN] if won else -1
    p_out[row, PL_FAN] = wins[w, W_FAN] if won else -1
    p_out[row, PL_CAPPED] = wins[w, W_CAPPED] if won else -1
    p_out[row, PL_NKONGS] = ps[s, PS_NKONGS]
    p_out[row, PL_HUAZHU] = ps[s, state.PS_HUAZHU]
    p_out[row, PL_READY] = ps[s, state.PS_READY]
    p_out[row, PL_DECLINED] = ps[s, PS_DECLINED]
    p_out[row, PL_DECLARED] = ps[s, PS_DECLARED]
    for c in range(state.N_COMP):
        p_out[row, PL_SCORE + c] = score[s, c]


# ---------------------------------------------------------------------------------------------------------
# Python boundary

def deal_seeds(seed: int, deal_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(wall seeds, bot seeds)``, ``uint64[n]`` each: ``SeedSequence(seed, spawn_key=(deal_id,))
    .generate_state(2, uint64)`` for every deal, computed by the compiled copy in :mod:`simulator.rng`."""
    ids = np.ascontiguousarray(deal_ids, dtype=np.int64)
    if ids.size and ids.min() < 0:
        raise ValueError("hand ids must be non-negative")
    wall, bots = np.empty(ids.shape[0], np.uint64), np.empty(ids.shape[0], np.uint64)
    spawn_states(seed_words(seed), ids, wall, bots)
    return wall, bots


def split_ids(hand_ids: np.ndarray, duplicate: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(deal_id, rotation)`` of each hand id: hand_id = 4·deal_id + rotation under ``duplicate``."""
    if duplicate:
        return hand_ids // 4, hand_ids % 4
    return hand_ids.copy(), np.zeros_like(hand_ids)


def win_rows_per_hand(rules: RuleSet) -> int:
    """Win rows per hand the batch outputs start with: the maximum (3), or under ``xueliu`` a generous typical
    count (the buffers grow when a batch needs more, see :func:`grow_wins`)."""
    return XUELIU_ROWS_PER_HAND if rules.mode == "xueliu" else state.MAX_WINS


def empty_raw(hand_ids: np.ndarray, deal_ids: np.ndarray, rotations: np.ndarray,
              rows_per_hand: int = state.MAX_WINS) -> dict:
    """The output arrays of a batch of ``len(hand_ids)`` hands, with ``rows_per_hand`` win rows per hand (see
    :func:`trim_raw`, :func:`grow_wins`)."""
    n = hand_ids.shape[0]
    raw = {
        "hand_ids": hand_ids, "deal_ids": deal_ids, "rotations": rotations,
        "h": np.zeros((n, H_N), np.int64), "p": np.zeros((4 * n, PL_N), np.int64),
        "dealt": np.zeros((4 * n, N_KINDS), np.uint8),
    }
    grow_wins(raw, rows_per_hand * n)
    return raw


def grow_wins(raw: dict, rows: int) -> None:
    """Give the win arrays of ``raw`` at least ``rows`` rows, keeping the rows already written."""
    old = raw.get("w")
    if old is not None and old.shape[0] >= rows:
        return
    new = {"w": np.zeros((rows, state.W_N), np.int64), "w_hand": np.zeros(rows, np.int64),
           "wconc": np.zeros((rows, N_KINDS), np.uint8), "wmk": np.zeros((rows, 4), np.int8),
           "wmt": np.zeros((rows, 4), np.int8)}
    for key, arr in new.items():
        if old is not None:
            arr[:raw[key].shape[0]] = raw[key]
        raw[key] = arr


def trim_raw(raw: dict, nw: int) -> None:
    """Cut the win arrays of :func:`empty_raw` to the ``nw`` rows written."""
    for key in ("w", "w_hand", "wconc", "wmk", "wmt"):
        raw[key] = raw[key][:nw]


def run_batch(rules: RuleSet, hand_ids, seed: int, *, duplicate: bool = False, record: bool = False,
              dealers=None) -> dict:
    """Run the compiled batch and return its raw arrays (before any string formatting). Seats played by Python
    bots go through the step path (:func:`simulator.game.play_hands`: the same compiled loop, paused at them).
    ``dealers``: int64[n], the dealer seat of each hand (sessions chain it, simulator.sessions); default
    deal_id % 4."""
    from simulator.tables import suit_table

    if rules.python_seats():
        from simulator import game

        agents = {i: rules.seats[i].build() for i in rules.python_seats()}
        return game.play_hands(rules, hand_ids, seed, agents, duplicate=duplicate, record=record, dealers=dealers)

    from simulator import precompile  # the compile plan of this module's functions (it imports them)

    bot_ids, bot_par = rules.bot_arrays()
    bot_par, bpar = lineup_params(bot_ids, bot_par)
    precompile.pin_signatures(unless_cached=(play_batch, bot_par is None))
    hand_ids = np.ascontiguousarray(hand_ids, dtype=np.int64)
    n = hand_ids.shape[0]
    deal_ids, rotations = split_ids(hand_ids, duplicate)
    wall_seeds, bot_seeds = deal_seeds(seed, deal_ids)
    dealers = deal_ids % 4 if dealers is None else np.ascontiguousarray(dealers, dtype=np.int64)
    raw = empty_raw(hand_ids, deal_ids, rotations, win_rows_per_hand(rules))
    cap = EVENTS_PER_HAND * n if record else 1
    while True:
        events = np.zeros((cap, 1 + state.EV_W), np.int32)
        nw, ne = play_batch(suit_table(), rules.to_arrays(), bot_ids, bot_par, bpar, wall_seeds,
                            bot_seeds, dealers, rotations, record, raw["h"], raw["p"], raw["dealt"], raw["w"],
                            raw["w_hand"], raw["wconc"], raw["wmk"], raw["wmt"], events)
        if ne <= cap and nw <= raw["w"].shape[0]:
            break
        cap = max(cap, ne)  # rare: replay with buffers that fit (the hands are deterministic)
        grow_wins(raw, nw)
    if record and raw["h"][:, H_EV_OVERFLOW].any():
        raise RuntimeError(f"a hand logged more than {state.E_MAX} events; raise state.E_MAX")
    trim_raw(raw, nw)
    raw["events"] = events[:ne] if record else events[:0]
    return raw


def play_hands(rules: RuleSet, hand_ids, seed: int, *, duplicate: bool = False,
               record: bool = False) -> dict[str, dict[str, np.ndarray]]:
    """Play hands and return the columns of the ``hands``, ``players`` and ``wins`` tables (schema names,
    without ``variant``). ``hand_ids``: int64[n]; dealer = deal_id % 4. With ``record`` the result also has
    ``"events"``: ``{"hand_row": int64[m], "type", "seat", "tile", "amount", "a", "b"}`` (see simulator.state)."""
    from simulator.warmup import announce

    announce(rules)  # a cold cache compiles here: say so (a minute or more), as simulate does
    raw = run_batch(rules, hand_ids, seed, duplicate=duplicate, record=record)
    out = records.to_columns(raw)
    if record:
        out["events"] = records.event_columns(raw)
    return out
