"""The hand loop (:func:`play`): a batch of hands from their seeds to their ends, or one hand pausable at external
seats (the step path), and the hand state it plays on (:class:`~simulator.kernel.state.HandState`, allocated by
:func:`alloc`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots import (
    planning_void,
)
from simulator.engine.batch import end_hand, seat_hand
from simulator.engine.common import (
    GO_DISCARD,
    HAND_OVER,
    HOW_DEALER_FIRST,
    HOW_DREW,
    HOW_TAIL,
    KONG_DRAW,
    MAX_STEPS,
    MODE_XUELIU,
    PUNG_DISCARD,
)
from simulator.engine.setup import deal, declare_voids, exchange_three, reset
from simulator.engine.turn import discard_turn, draw_tile, own_turn
from simulator.kernel import state
from simulator.kernel.rng import derive, shuffle_int8
from simulator.kernel.settlement import (
    mark_ready,
    settle_deal,
    settle_exhaustive,
)
from simulator.kernel.state import (
    ANS_COUNT,
    ANS_USED,
    DP_STATUS,
    EV_END,
    G_DEALER,
    G_ENDED,
    G_EXHAUSTIVE,
    IO_EXT,
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
    PS_BOT,
    PS_NWINS,
    PS_VOID,
    STAGE_DONE,
    STAGE_SETUP,
    STAGE_TURNS,
    HandState,
    borrowed,
    log_event,
    tiles_left,
)
from simulator.rules.keys import SLOT

P_MODE = SLOT["mode"]


@njit(cache=True, _nrt=False)
def start_hand(game, st, wall_seed, bot_seed, dealer: int) -> None:
    """Reset the state, seed the streams (``st.rngs``: wall, then one per seat), shuffle and deal; ``st.dealt``
    receives the deal before 换三张. ``game.bots`` are the bot ids logged per seat."""
    bots, rngs, pc, wall, conc, g, ps, dealt = game.bots, st.rngs, st.pc, st.wall, st.conc, st.g, st.ps, st.dealt
    reset(st)
    rngs[0] = wall_seed
    for s in range(N_SEATS):
        rngs[1 + s] = derive(bot_seed, s)
        ps[s, PS_BOT] = bots[s]
    shuffle_int8(wall, rngs[0:1])
    g[G_DEALER] = dealer
    deal(st, dealer)
    for s in range(N_SEATS):  # a loop, not dealt[:, :] = conc: that compiles a shape check (~1 s cold)
        for k in range(N_KINDS):
            dealt[s, k] = conc[s, k]
    settle_deal(game.params, st, dealer)
    for c in range(pc.shape[0]):  # not pc[:] = 0 (numba's general slice assignment)
        pc[c] = 0
    pc[PC_STAGE] = STAGE_SETUP


@njit(cache=True, _nrt=False)
def save_snapshot(live, snap) -> None:
    """Copy the live state into ``snap`` (a step that may pause starts here); nothing when ``snap`` is ``None``:
    numba prunes the copy, so the batch path, which never pauses, compiles none of it."""
    if snap is None:
        return
    copy_state(live, snap)


@njit(cache=True, _nrt=False)
def restore_snapshot(snap, live) -> None:
    """Roll the live state back to ``snap`` (the start of the paused step); nothing when ``snap`` is ``None``."""
    if snap is None:
        return
    copy_state(snap, live)


@njit(cache=True, _nrt=True)  # an array assignment may copy through a temporary
def copy_state(source, target) -> None:
    """Copy the fields of :data:`SNAPSHOT_FIELDS` from one :class:`~simulator.kernel.state.HandState` to another: the
    snapshot a paused step rolls back to. The wall never changes after the deal, events past g[G_NEV] are simply
    overwritten by the replay, ``pc`` is the caller's and the rest is scratch."""
    target.conc[...] = source.conc
    target.mk[...] = source.mk
    target.mt[...] = source.mt
    target.nm[...] = source.nm
    target.g[...] = source.g
    target.ps[...] = source.ps
    target.score[...] = source.score
    target.kl[...] = source.kl
    target.wins[...] = source.wins
    target.wconc[...] = source.wconc
    target.wmk[...] = source.wmk
    target.wmt[...] = source.wmt
    target.visible[...] = source.visible
    target.rngs[...] = source.rngs


SNAPSHOT_FIELDS = ("conc", "mk", "mt", "nm", "g", "ps", "score", "kl", "wins", "wconc", "wmk", "wmt", "visible", "rngs")


def _play(game, st, bpar, snap, batch):
    """Play hands on the state ``st``; returns ``(done, win rows, event rows)``.

    - **Batch path** (``batch`` a :class:`~simulator.kernel.state.Batch`, ``snap`` None): every hand of ``batch.deals``,
      each seated (:func:`~simulator.engine.batch.seat_hand`), dealt (:func:`start_hand`), played to its end and
      written into ``batch.out`` (:func:`~simulator.engine.batch.end_hand`); returns ``(True, win rows, event
      rows)`` written (possibly more than ``batch.out`` holds: 血流 hands have many wins; the caller then retries
      with larger buffers). Nothing pauses and nothing is copied.
    - **Step path** (``batch`` None): the hand ``st`` holds, from where ``pc`` says until it ends (``done``) or an
      external seat (``io[IO_EXT + s] = 1``) must decide (not ``done``; ``io`` holds the decision point, the state
      shows its moment, and the next call first rolls back to ``snap``, the start of the step, and replays it with
      the queued answers: see simulator.kernel.state). The row counts are 0.

    One compiled function for both, and the batch's loop over hands in the same function as the hand's loop over
    turns: numba re-optimises every compiled callee inside each caller, so a batch calling a separately compiled
    hand loop cost a second pass over the whole linked engine on a cold start (~5 s of CPU, docs/internals.md).
    numba prunes the branches on ``batch is None`` per copy. The caller owns ``game``, ``st``, ``bpar`` and
    ``snap``: they are played on borrowed views (:func:`~simulator.kernel.state.borrowed`)."""
    game, st, bpar, snap = borrowed(game), borrowed(st), borrowed(bpar), borrowed(snap)  # the caller owns them
    table, params, io = game.table, game.params, game.io
    pc, g, ps, conc, mk, mt, nm = st.pc, st.g, st.ps, st.conc, st.mk, st.mt, st.nm
    n = np.int64(1)
    if batch is not None:  # borrowed too: live through the hand loop, the batch's arrays would be counted at its exits
        bot_ids, bot_par, deals, record, out = batch
        bot_ids, bot_par, deals, out = borrowed(bot_ids), borrowed(bot_par), borrowed(deals), borrowed(out)
        n = deals.wall_seeds.shape[0]
    nw = np.int64(0)  # not a literal 0: end_hand would be compiled once more for it
    ne = np.int64(0)
    stepping = False
    for s in range(N_SEATS):
        if io[IO_EXT + s]:
            stepping = True
    for i in range(n):
        if batch is not None:
            seat_hand(game.bots, bpar, bot_ids, bot_par, deals.rotations[i])
            start_hand(game, st, deals.wall_seeds[i], deals.bot_seeds[i], deals.dealers[i])
        io[DP_STATUS] = 0
        io[ANS_USED] = 0
        if pc[PC_PAUSED]:
            restore_snapshot(snap, st)
            pc[PC_PAUSED] = 0
        if pc[PC_STAGE] == STAGE_SETUP:
            if stepping:
                save_snapshot(st, snap)
            exchange_three(game, st)
            if not io[DP_STATUS]:
                declare_voids(game, st, bpar)
            if io[DP_STATUS]:
                pc[PC_PAUSED] = 1
                return False, nw, ne
            io[ANS_COUNT] = 0
            pc[PC_STAGE] = STAGE_TURNS
            pc[PC_CUR] = g[G_DEALER]
            pc[PC_OUTCOME] = GO_DISCARD  # the dealer's first turn: no draw, then its own turn as after a draw
            pc[PC_DREW] = 0
            pc[PC_FROM_TAIL] = 0
            pc[PC_DEALER_FIRST] = 1
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
                save_snapshot(st, snap)
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
                drawn = draw_tile(st, cur, from_tail)
            pv = planning_void(params, ps[cur, PS_VOID], table, conc[cur], mk[cur], mt[cur], nm[cur])
            if outcome != PUNG_DISCARD:
                how = (HOW_DREW if drew else 0) | (HOW_TAIL if from_tail else 0) | \
                    (HOW_DEALER_FIRST if dealer_first else 0)
                outcome, nxt = own_turn(game, st, bpar, cur, drawn, np.int64(how), pv)
            if outcome in (GO_DISCARD, PUNG_DISCARD) and not io[DP_STATUS]:
                outcome, nxt = discard_turn(game, st, bpar, cur, drawn, pv)
            if io[DP_STATUS]:
                pc[PC_PAUSED] = 1
                pc[PC_STEPS] -= 1
                return False, nw, ne
            io[ANS_COUNT] = 0
            io[ANS_USED] = 0
            if outcome == HAND_OVER:
                break
            cur = nxt
            drew = outcome != PUNG_DISCARD
            from_tail = outcome == KONG_DRAW
            dealer_first = np.bool_(False)
        finish(table, params, st)
        pc[PC_STAGE] = STAGE_DONE
        if batch is not None:
            nw, ne = end_hand(st, out, record, i, nw, ne)
    return True, nw, ne


# The engine's one compiled entry: the batch path and the step path are its two copies (see _play). Its turns are
# inlined into it (engine.turn); the hand loop is not a function of its own: a batch calling it as one (a call,
# since numba's inliner deep-copies the callee's IR block by block, each block with the whole variable scope: 12.7
# of 28 s of compile, measured 2026-12-04) re-optimised the whole linked engine twice on a cold start.
play = njit(cache=True, _nrt=True)(_play)


@njit(cache=True, _nrt=False)
def finish(table, params, st) -> None:
    """End of hand (logged first, so that settlement events follow it): readiness of the players still in, and
    the exhaustive-draw settlement."""
    g, ps = st.g, st.ps
    g[G_ENDED] = 1
    log_event(st, EV_END, -1, -1, tiles_left(g), g[G_EXHAUSTIVE], 0)
    for p in range(N_SEATS):
        if ps[p, PS_NWINS] == 0:
            mark_ready(table, st, p)
    if g[G_EXHAUSTIVE]:
        settle_exhaustive(table, params, st)


@njit(cache=True, _nrt=False)
def win_slots(params) -> int:
    """Win records one hand can need: 3, or ``MAX_WINS_XUELIU`` under ``mode: xueliu``."""
    return state.MAX_WINS_XUELIU if params[P_MODE] == MODE_XUELIU else state.MAX_WINS


@njit(cache=True, _nrt=True)
def alloc(record: bool, n_wins: int=state.MAX_WINS):
    """A hand's :class:`~simulator.kernel.state.HandState` (shapes in :mod:`simulator.kernel.state`), with ``n_wins``
    win records (:func:`win_slots`; the default suits every mode but ``xueliu``) and an event log of ``E_MAX`` rows
    when ``record`` (else one row: not recording). A snapshot for :func:`copy_state` is one more of these."""
    e = state.E_MAX if record else 1
    return HandState(np.zeros(state.N_TILES, np.int8), np.zeros((N_SEATS, N_KINDS), np.uint8),
                     np.zeros((N_SEATS, 4), np.int8), np.zeros((N_SEATS, 4), np.int8), np.zeros(N_SEATS, np.int64),
                     np.zeros(state.G_N, np.int64), np.zeros((N_SEATS, state.PS_N), np.int64),
                     np.zeros((N_SEATS, state.N_COMP), np.int64), np.zeros((state.K_MAX, state.KL_N), np.int64),
                     np.zeros((n_wins, state.W_N), np.int64), np.zeros((n_wins, N_KINDS), np.uint8),
                     np.zeros((n_wins, 4), np.int8), np.zeros((n_wins, 4), np.int8),
                     np.zeros(N_KINDS, np.int8), np.zeros((e, state.EV_W), np.int32),
                     np.zeros(1 + N_SEATS, np.uint64), np.zeros(state.PC_N, np.int64),
                     np.zeros((N_SEATS, N_KINDS), np.uint8), np.zeros(N_SEATS, np.int64), np.zeros(N_KINDS, np.int64))


@njit(cache=True, _nrt=True)
def alloc_io():
    """``int64[IO_N]``: the step interface (simulator.kernel.state), no seat external."""
    return np.zeros(state.IO_N, np.int64)
