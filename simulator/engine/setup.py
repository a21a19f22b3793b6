"""Setup of a hand: reset, shuffle and deal, 换三张 and 定缺."""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots import (
    bot_exchange,
    bot_void,
)
from simulator.engine.common import EX_CLOCKWISE, EX_COUNTER, EX_RANDOM, refresh_waits
from simulator.kernel import state
from simulator.kernel.rng import randbelow
from simulator.kernel.shape import shanten
from simulator.kernel.state import (
    A_TILE0,
    A_VOID0,
    D_EXCHANGE,
    D_VOID,
    EV_DEAL,
    EV_EXCHANGE,
    EV_VOID,
    G_DEALER,
    G_EXCHANGE,
    G_HEAD,
    G_TAIL,
    IO_EXT,
    N_KINDS,
    N_SEATS,
    PS_EVOID,
    PS_START_SH,
    PS_VOID,
    VOID_NONE,
    ask,
    log_event,
    void_rule,
)
from simulator.rules.keys import SLOT

P_EXCHANGE_THREE = SLOT["exchange_three"]


@njit(cache=True, _nrt=False)
def reset(st) -> None:
    wall, conc, mk, mt, nm, g, ps, score = st.wall, st.conc, st.mk, st.mt, st.nm, st.g, st.ps, st.score
    kl, wins, wconc, wmk, wmt, visible = st.kl, st.wins, st.wconc, st.wmk, st.wmt, st.visible
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


@njit(cache=True, _nrt=False)
def deal(st, dealer) -> None:
    """Seat dealer+i takes wall[13i : 13i+13]; the dealer also takes wall[52]. 55 tiles remain."""
    wall, conc, g = st.wall, st.conc, st.g
    for i in range(N_SEATS):
        seat = (dealer + i) % N_SEATS
        for j in range(state.HAND):
            conc[seat, wall[state.HAND * i + j]] += 1
    conc[dealer, wall[4 * state.HAND]] += 1
    g[G_HEAD] = 4 * state.HAND + 1
    g[G_TAIL] = state.N_TILES
    for s in range(N_SEATS):
        log_event(st, EV_DEAL, s, -1, 0, 14 if s == dealer else 13, 0)


@njit(cache=True, _nrt=True)
def exchange_three(game, st) -> None:
    """换三张: every seat passes three tiles of one suit, all at the same time. In seat terms (seats are
    numbered in turn order, which runs counter-clockwise): counterclockwise → seat+1, clockwise → seat−1,
    opposite → seat+2. ``random`` draws the direction from the wall stream, so it depends on the deal only."""
    params, io = game.params, game.io
    rngs, conc, g = st.rngs, st.conc, st.g
    d = params[P_EXCHANGE_THREE]
    if d == EX_RANDOM:
        d = 1 + randbelow(rngs[0:1], np.int64(3))
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
            bot_exchange(game, st, s, give[s])
    for s in range(N_SEATS):
        to = (s + off) % N_SEATS
        for i in range(3):
            t = give[s, i]
            conc[s, t] -= 1
            conc[to, t] += 1
            log_event(st, EV_EXCHANGE, s, t, 0, to, 0)


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def declare_voids(game, st, bpar) -> None:
    """定缺 (not under ``void_suit: none``), then the start shanten of every seat."""
    table, params, io = game.table, game.params, game.io
    conc, mk, mt, nm, g, ps = st.conc, st.mk, st.mt, st.nm, st.g, st.ps
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
                ps[s, PS_VOID] = bot_void(game, st, bpar[s], s)
            log_event(st, EV_VOID, s, -1, 0, ps[s, PS_VOID], 0)
        ps[s, PS_EVOID] = ps[s, PS_VOID]
        ps[s, PS_START_SH] = shanten(table, conc[s], mk[s], mt[s], nm[s], ps[s, PS_EVOID])
        if s != g[G_DEALER]:  # a dealt ready hand can win on the dealer's first discard
            refresh_waits(table, st, s)
