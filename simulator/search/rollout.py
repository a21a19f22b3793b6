"""The search player's rollouts on the compiled engine (issue 54): the hand copied at the start of the step, its
hidden tiles re-dealt from public information (:func:`simulator.search.sample.redeal`), the step replayed with the
searching seat's answers so far and one candidate action, then played to its end by the compiled rollout policy at
every seat; the seat's final score is the candidate's value in that sample.

The rollout runs the engine's step path (:func:`simulator.engine.play` with a snapshot): the searching seat stays
external in the step, answering its own answers of the step and the candidate as it is asked; a decision of it
later in the same step is answered by its compiled policy (:func:`policy_answer`, the state shown at the decision,
as the compiled seat would see it), and from its next step on it is an ordinary compiled seat.

A decision on another seat's tile (a claim, or a win on a discard or a robbed 加杠; ``job[J_GIVER]`` that seat)
replays the giver's step too: the giver's draw (or, in a step without one, its hand) holds the tile
(:func:`~simulator.search.sample.redeal`'s pin), and the giver is external in its step, answering only what the
table saw it do (:func:`giver_answer`: no self-drawn win, the 加杠 or discard of the tile, its 唱歌/跳舞 or none).
Every other seat's answer to the same tile is hidden: in the rollouts it is its rollout bot's, on its re-dealt hand.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from simulator.bots import (
    REASON_SHIFT,
    bot_claim,
    bot_declares,
    bot_discard,
    bot_self_kong,
    bot_takes_win,
    bot_void,
    planning_void,
)
from simulator.engine import copy_state, play
from simulator.engine.common import DECL_BOTH, DECL_DANCE
from simulator.kernel.rng import derive
from simulator.kernel.shape import is_complete
from simulator.kernel.state import (
    A_DANCE,
    A_DECLARE,
    A_KONG,
    A_PASS,
    A_PUNG,
    A_TILE0,
    A_VOID0,
    A_WIN,
    ANS_COUNT,
    ANS_N0,
    ANS_USED,
    D_CLAIM,
    D_DECLARE,
    D_DISCARD,
    D_SELF_KONG,
    D_TAKE_WIN,
    D_VOID,
    DP_FAN,
    DP_FROM,
    DP_KIND,
    DP_LEGAL,
    DP_SEAT,
    DP_STATUS,
    DP_TILE,
    G_HEAD,
    G_TAIL,
    IO_EXT,
    PC_DREW,
    PC_PAUSED,
    PC_STEPS,
    PS_EVOID,
    PS_VOID,
    PS_WAITS,
    ST_ILLEGAL,
    Game,
    HandState,
)
from simulator.rules.keys import SLOT
from simulator.search.sample import redeal

P_DECLARE_READY = SLOT["declare_ready"]
P_FORCED_WIN = SLOT["forced_win_last_tiles"]

# job: int64[J_ANS0 + answers + candidates]; J_GIVER −1 for a decision of the seat's own step, else the seat whose
# tile it is, J_TILE that tile, J_ROB 1 when it is a 加杠 (robbing the kong), J_DECL the giver's answer to 唱歌/跳舞
J_SEAT, J_ROLLS, J_SEED, J_NPRIOR, J_NCAND, J_GIVER, J_TILE, J_ROB, J_DECL = range(9)
J_ANS0 = 9
FAILED = -1.0e18  # a sample that could not be dealt (its row is left out)


class Rollout(NamedTuple):
    """The rollouts' own records: ``game`` (the rules, every seat's compiled policy in ``bots``, an ``io`` of its
    own), the rollout state ``st`` and its step snapshot ``snap``, the policies' parameter rows ``bpar``, and
    ``dealt``: the sample's re-deal, which every candidate starts from."""

    game: Game
    st: HandState
    snap: HandState
    bpar: np.ndarray
    dealt: HandState


@njit(cache=True, _nrt=False)
def policy_answer(game, st, bpar, seat: int) -> int:
    """The compiled policy's answer (``game.bots[seat]``) to the decision point ``game.io`` shows, with ``st`` as
    at that decision; −1 for a 换三张 pick (not asked of a search)."""
    io, params, table = game.io, game.params, game.table
    kind, legal, tile = io[DP_KIND], io[DP_LEGAL], io[DP_TILE]
    conc, mk, mt, nm = st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat]
    pv = planning_void(params, st.ps[seat, PS_VOID], table, conc, mk, mt, nm)
    row = bpar[seat]
    if kind == D_DISCARD:
        return A_TILE0 + (bot_discard(game, st, row, seat, pv, legal) & ((1 << REASON_SHIFT) - 1))
    if kind == D_SELF_KONG:
        k = bot_self_kong(game, st, row, seat, pv, legal & ~(1 << A_PASS))
        return A_PASS if k < 0 else A_TILE0 + k
    if kind == D_TAKE_WIN:
        take = bot_takes_win(game, st, row, seat, tile, io[DP_FAN], np.bool_(io[DP_FROM] < 0))
        return A_WIN if take else A_PASS
    if kind == D_CLAIM:
        c = bot_claim(game, st, row, seat, pv, tile, np.bool_((legal >> A_PUNG) & 1), np.bool_((legal >> A_KONG) & 1))
        return A_PASS if c == 0 else (A_PUNG if c == 1 else A_KONG)
    if kind == D_DECLARE:
        d = bot_declares(game, st, row, seat, st.ps[seat, PS_EVOID], st.ps[seat, PS_WAITS])
        if d == 0:
            return A_PASS
        return A_DANCE if d == DECL_DANCE and params[P_DECLARE_READY] == DECL_BOTH else A_DECLARE
    if kind == D_VOID:
        return A_VOID0 + bot_void(game, st, row, seat)
    return -1


@njit(cache=True, _nrt=False)
def giver_answer(io, job) -> int:
    """The giver's answer in its replayed step (a decision on its tile): what the table saw, or −1 (illegal: the
    sample is left out) for a decision it could not have had."""
    kind = io[DP_KIND]
    if kind == D_TAKE_WIN:
        return A_PASS  # it gave the tile up: it did not win on its own draw
    if kind == D_SELF_KONG:
        return A_TILE0 + job[J_TILE] if job[J_ROB] else A_PASS
    if kind == D_DISCARD:
        return A_TILE0 + job[J_TILE]
    if kind == D_DECLARE:
        return job[J_DECL]
    return -1


@njit(cache=True, _nrt=True)
def play_out(ro, seat: int, job, cand: int) -> bool:
    """Play the rollout state to its end (False: an illegal answer — a bug, or a giver's re-dealt hand that could
    not have given its tile up); in the step it starts in the searching seat answers its answers of the step so
    far, then ``cand``, then by its compiled policy, and the giver (``job[J_GIVER]``) by :func:`giver_answer`; both
    play as compiled seats from the next step."""
    io = ro.game.io
    giver, n_prior = job[J_GIVER], job[J_NPRIOR]
    given = n_prior + 1 if giver < 0 else 0  # own answers queued (a decision of its own step: all, by start)
    steps = ro.st.pc[PC_STEPS]
    while True:
        done = play(ro.game, ro.st, ro.bpar, ro.snap, None)[0]
        if done:
            return True
        if io[DP_STATUS] == ST_ILLEGAL:
            return False
        if ro.st.pc[PC_STEPS] != steps:  # a later step: no answer of the searching seat or the giver is queued
            io[IO_EXT + seat] = 0
            if giver >= 0:
                io[IO_EXT + giver] = 0
            continue
        n = io[ANS_COUNT]
        if io[DP_SEAT] != seat:
            a = giver_answer(io, job)
        elif given <= n_prior:
            a = job[J_ANS0 + given] if given < n_prior else cand
            given += 1
        else:
            a = policy_answer(ro.game, ro.st, ro.bpar, seat)
        io[ANS_N0 + n] = a
        io[ANS_COUNT] = n + 1


@njit(cache=True, _nrt=False)
def must_win(game, st, pc, job) -> bool:
    """The re-dealt giver would have had to win with its tile (最后N张必胡) rather than give it up: such a sample
    contradicts what the table saw (it is left out)."""
    n, giver, t = game.params[P_FORCED_WIN], job[J_GIVER], job[J_TILE]
    drew = pc[PC_DREW] != 0
    if giver < 0 or n <= 0 or st.g[G_TAIL] - st.g[G_HEAD] - (1 if drew else 0) > n:
        return False
    conc = st.conc[giver]
    if drew:
        conc[t] += 1
    done = is_complete(game.table, conc, st.mk[giver], st.mt[giver], st.nm[giver], st.ps[giver, PS_EVOID])
    if drew:
        conc[t] -= 1
    return done


@njit(cache=True, _nrt=False)
def load(st, src, wall, pc) -> None:
    """``st`` = the state ``src`` with the wall ``wall`` and the play counters ``pc``."""
    copy_state(src, st)
    for w in range(wall.shape[0]):
        st.wall[w] = wall[w]
    for c in range(pc.shape[0]):
        st.pc[c] = pc[c]


@njit(cache=True, _nrt=True)
def start(ro, src, wall, pc, job, cand: int) -> None:
    """The rollout state at the start of the step: the snapshot ``src`` of the live hand, its ``wall`` and its
    ``pc`` (not paused: the step is replayed from its start), the seat external — in its own step with its answers
    of the step so far and ``cand`` queued; on another seat's tile that seat external too, nothing queued (the two
    answer as they are asked: :func:`play_out`)."""
    st, io = ro.st, ro.game.io
    load(st, src, wall, pc)
    st.pc[PC_PAUSED] = 0
    for c in range(io.shape[0]):
        io[c] = 0
    io[IO_EXT + job[J_SEAT]] = 1
    if job[J_GIVER] >= 0:
        io[IO_EXT + job[J_GIVER]] = 1
        return
    n = job[J_NPRIOR]
    for i in range(n):
        io[ANS_N0 + i] = job[J_ANS0 + i]
    io[ANS_N0 + n] = cand
    io[ANS_COUNT] = n + 1
    io[ANS_USED] = 0


@njit(cache=True, _nrt=True)
def search_values(ro, src, wall, pc, pub, job, out) -> None:
    """``out[i, c]``: the searching seat's final score (base units) in sample ``i`` when it answers candidate ``c``
    (``job``: the seat, rollouts, seed, its answers of the step so far, the giver of the tile it decides on, the
    candidates; layout ``J_*``). Every
    candidate of a sample sees the same re-deal and the same random streams (common random numbers); a sample that
    cannot be dealt from ``pub`` is ``FAILED`` in every column."""
    seat, n_roll, n_prior, n_cand = job[J_SEAT], job[J_ROLLS], job[J_NPRIOR], job[J_NCAND]
    seed = np.uint64(job[J_SEED])
    dealt = ro.dealt
    for i in range(n_roll):
        load(dealt, src, wall, pc)
        ok = redeal(ro.game.table, dealt, seat, pub, derive(seed, i)) and not must_win(ro.game, dealt, pc, job)
        for c in range(n_cand):
            if ok:
                cand = job[J_ANS0 + n_prior + c]
                start(ro, dealt, dealt.wall, pc, job, cand)
                ok = play_out(ro, seat, job, cand)
            if not ok:
                for c2 in range(n_cand):
                    out[i, c2] = FAILED
                break
            tot = 0
            for comp in range(ro.st.score.shape[1]):
                tot += ro.st.score[seat, comp]
            out[i, c] = tot


@njit(cache=True, _nrt=True)
def answer_at(ro, src, wall, pc, seat: int) -> int:
    """The compiled policy's answer for ``seat`` at the live decision: ``src`` the live state at the decision (not
    its snapshot), ``ro.game.io`` a copy of the live decision point."""
    load(ro.st, src, wall, pc)
    return policy_answer(ro.game, ro.st, ro.bpar, seat)


