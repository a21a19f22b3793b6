"""The search player's rollouts on the compiled engine (issue 54): the hand copied at the start of the searching
seat's step, its hidden tiles re-dealt from public information (:func:`simulator.search.sample.redeal`), the step
replayed with the seat's answers so far and one candidate action, then played to its end by the compiled rollout
policy at every seat; the seat's final score is the candidate's value in that sample.

The rollout runs the engine's step path (:func:`simulator.engine.play` with a snapshot): the searching seat stays
external while its queued answers last; a decision of it later in the same step is answered by its compiled
policy (:func:`policy_answer`, the state shown at the decision, as the compiled seat would see it), and from its
next step on it is an ordinary compiled seat.
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
    DP_STATUS,
    DP_TILE,
    IO_EXT,
    PC_PAUSED,
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

# job: int64[J_CAND0 + answers + candidates]
J_SEAT, J_ROLLS, J_SEED, J_NPRIOR, J_NCAND = range(5)
J_ANS0 = 5
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


@njit(cache=True, _nrt=True)
def play_out(ro, seat: int) -> bool:
    """Play the rollout state to its end (False: an illegal answer, a bug); the searching seat answers by its
    compiled policy once its queued answers are used, and plays as a compiled seat from its next step."""
    io = ro.game.io
    while True:
        done = play(ro.game, ro.st, ro.bpar, ro.snap, None)[0]
        if done:
            return True
        if io[DP_STATUS] == ST_ILLEGAL:
            return False
        if io[ANS_COUNT] == 0:  # a new step: no answer of this seat is queued in it any more
            io[IO_EXT + seat] = 0
            continue
        n = io[ANS_COUNT]
        io[ANS_N0 + n] = policy_answer(ro.game, ro.st, ro.bpar, seat)
        io[ANS_COUNT] = n + 1


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
    ``pc`` (not paused: the step is replayed from its start), the seat external with its answers of the step so far
    and ``cand`` queued."""
    st, io = ro.st, ro.game.io
    load(st, src, wall, pc)
    st.pc[PC_PAUSED] = 0
    for c in range(io.shape[0]):
        io[c] = 0
    io[IO_EXT + job[J_SEAT]] = 1
    n = job[J_NPRIOR]
    for i in range(n):
        io[ANS_N0 + i] = job[J_ANS0 + i]
    io[ANS_N0 + n] = cand
    io[ANS_COUNT] = n + 1
    io[ANS_USED] = 0


@njit(cache=True, _nrt=True)
def search_values(ro, src, wall, pc, pub, job, out) -> None:
    """``out[i, c]``: the searching seat's final score (base units) in sample ``i`` when it answers candidate ``c``
    (``job``: the seat, rollouts, seed, its answers of the step so far, the candidates; layout ``J_*``). Every
    candidate of a sample sees the same re-deal and the same random streams (common random numbers); a sample that
    cannot be dealt from ``pub`` is ``FAILED`` in every column."""
    seat, n_roll, n_prior, n_cand = job[J_SEAT], job[J_ROLLS], job[J_NPRIOR], job[J_NCAND]
    seed = np.uint64(job[J_SEED])
    dealt = ro.dealt
    for i in range(n_roll):
        load(dealt, src, wall, pc)
        ok = redeal(ro.game.table, dealt, seat, pub, derive(seed, i))
        for c in range(n_cand):
            if ok:
                start(ro, dealt, dealt.wall, pc, job, job[J_ANS0 + n_prior + c])
                ok = play_out(ro, seat)
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


