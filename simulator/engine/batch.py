"""A batch's hands: each seated from its bot specs and written into the preallocated outputs
(:class:`~simulator.kernel.state.BatchOut`) by the batch path of :func:`simulator.engine.play`
(:mod:`~simulator.engine.loop`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots import (
    simple_lineup,
)
from simulator.kernel import state
from simulator.kernel.shape import MELD_CKONG
from simulator.kernel.state import (
    G_DEALER,
    G_EXCHANGE,
    G_EXHAUSTIVE,
    G_NKONGS,
    G_NWINS,
    G_NWON,
    G_TURNS,
    H_DEALER,
    H_EV_OVERFLOW,
    H_EXCHANGE,
    H_EXHAUSTIVE,
    H_NKONGS,
    H_NWINNERS,
    H_NWINS,
    H_TILES_LEFT,
    H_TURNS,
    N_KINDS,
    N_SEATS,
    PL_BOT,
    PL_CAPPED,
    PL_CLAIMS,
    PL_DECLARED,
    PL_DECLINED,
    PL_FAN,
    PL_FLAGS,
    PL_GEN,
    PL_HAND_TYPE,
    PL_HUAZHU,
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
    PS_NKONGS,
    PS_NWINS,
    PS_START_SH,
    PS_VOID,
    PS_WIN_IDX,
    PS_WIN_KIND,
    PS_WIN_ORDER,
    PS_WIN_TURN,
    W_CAPPED,
    W_FAN,
    W_FLAGS,
    W_GEN,
    W_HAND_TYPE,
    tiles_left,
)


@njit(cache=True, _nrt=False)
def seat_hand(bots, bpar, bot_ids, bot_par, rotation: int) -> None:
    """Seat a hand of a batch (:class:`~simulator.kernel.state.Batch`): seat ``s`` is played by bot spec ``(s +
    rotation) % 4``, whose id goes to ``bots`` (``game.bots``) and whose parameter row to ``bpar`` (none for a simple
    line-up)."""
    for s in range(N_SEATS):
        b = (s + rotation) % N_SEATS
        bots[s] = bot_ids[b]
        seat_params(bot_par, bpar, s, b)


@njit(cache=True, _nrt=False)
def end_hand(st, out, record: bool, i: int, nw: int, ne: int):
    """Write finished hand ``i`` into ``out`` (:func:`write_outputs`; its win records from row ``nw``, with
    ``record`` its events from row ``ne``); returns the next free ``(win row, event row)``, counting rows that did
    not fit (the caller then regrows the buffers and replays the batch)."""
    g, events, ev_out = st.g, st.events, out.events
    nw = write_outputs(i, nw, st, out)
    if record:
        for j in range(g[state.G_NEV]):
            if ne < ev_out.shape[0]:
                ev_out[ne, 0] = i
                for c in range(state.EV_W):  # not a slice copy (a compiled shape check)
                    ev_out[ne, 1 + c] = events[j, c]
            ne += 1
    return nw, ne


@njit(cache=True, _nrt=False)
def seat_params(bot_par, bpar, s, b) -> None:
    """Copy spec ``b``'s parameter row to seat ``s`` (nothing to copy for a simple line-up: ``bot_par`` None)."""
    if bot_par is None:
        return
    for c in range(bpar.shape[1]):  # not a slice copy (a compiled shape check)
        bpar[s, c] = bot_par[b, c]


def lineup_params(bot_ids: np.ndarray, bot_par: np.ndarray):
    """``(bot_par, bpar)`` for :func:`simulator.engine.play` (:class:`~simulator.kernel.state.Batch`): ``(None, (None,)
    * 4)`` when every seat is ``random`` or ``greedy`` (the engine is then compiled and run without the parameterised
    bots, see simulator.bots), else the int64 parameter rows and a per-hand buffer for them."""
    if simple_lineup(bot_ids):
        return None, (None,) * N_SEATS
    bot_par = np.ascontiguousarray(bot_par, dtype=np.int64)
    return bot_par, np.empty_like(bot_par)


@njit(cache=True, _nrt=False)
def write_outputs(i: int, nw: int, st, out) -> int:
    """Write the finished hand as row ``i`` of the batch outputs ``out`` (:class:`~simulator.kernel.state.BatchOut`);
    its win records go from row ``nw`` on. Returns the next free win row (counting rows that did not fit in
    ``out.w``)."""
    g, wins, wconc, wmk, wmt, dealt = st.g, st.wins, st.wconc, st.wmk, st.wmt, st.dealt
    dealt_out, w_out, w_hand, wconc_out, wmk_out, wmt_out = out.dealt, out.w, out.w_hand, out.wconc, out.wmk, out.wmt
    write_hand(i, g, out.h)
    for s in range(N_SEATS):
        write_player(4 * i + s, s, st, out.p)
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


@njit(cache=True, _nrt=False)
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


@njit(cache=True, inline="always")
def claims(mk, n_melds: int) -> int:
    """Discards a seat claimed, from its melds ``mk[:n_melds]``: each pung or exposed kong (直杠, or 加杠 on a claimed
    pung) is one claimed discard, a concealed kong none."""
    n = 0
    for m in range(n_melds):
        n += mk[m] != MELD_CKONG
    return n


@njit(cache=True, _nrt=False)
def write_player(row, s, st, p_out) -> None:
    ps, score, wins = st.ps, st.score, st.wins
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
    p_out[row, PL_CLAIMS] = claims(st.mk[s], st.nm[s])
    p_out[row, PL_HUAZHU] = ps[s, state.PS_HUAZHU]
    p_out[row, PL_READY] = ps[s, state.PS_READY]
    p_out[row, PL_DECLINED] = ps[s, PS_DECLINED]
    p_out[row, PL_DECLARED] = ps[s, PS_DECLARED]
    for c in range(state.N_COMP):
        p_out[row, PL_SCORE + c] = score[s, c]
