"""Hands played step by step: the compiled engine paused at the decisions of seats played from Python.

This is the same compiled hand loop as the batch path (:func:`simulator.engine.play`, its step path); seats marked
external are asked through the step interface of :mod:`simulator.kernel.state` instead of a compiled bot. :class:`Hand`
is one hand (``advance`` → decision point, ``apply`` → action); :func:`play_hands` plays a batch with some seats played
by Python agents (:mod:`simulator.agents`) and returns the same raw arrays as :func:`simulator.hands.run_batch`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from simulator import engine, numba_cache
from simulator.errors import IllegalActionError, UserError  # noqa: F401 - IllegalActionError: re-exported
from simulator.hands import precompile
from simulator.hands.compiled_rules import CompiledTable, DealPlan
from simulator.kernel import state
from simulator.kernel.state import (
    ANS_COUNT,
    ANS_MAX,
    ANS_N0,
    DECISIONS,
    DP_ACTION,
    DP_FAN,
    DP_FROM,
    DP_KIND,
    DP_LEGAL,
    DP_SEAT,
    DP_STATUS,
    DP_TILE,
    N_ACTIONS,
    ST_ILLEGAL,
    BatchResult,
)
from simulator.rules import BOT_LABELS, PYTHON_BOT, RuleSet
from simulator.rules.bot_table import file_labels

LOG = logging.getLogger("xuezhan.compile")  # as simulator.hands.warmup: the one-time compile notice


@dataclass(frozen=True)
class Decision:
    """A decision point: ``seat`` (0–3) must decide ``kind`` (one of ``state.DECISIONS``) among the actions of
    ``legal`` (a bit mask over ``state.N_ACTIONS``). ``tile`` is the tile on offer (a discard to claim or win on,
    a robbed kong, one's own winning tile; −1 otherwise), ``from_seat`` who gave it (−1: one's own) and ``fan`` the
    capped fan of the win on offer (``take_win`` only)."""

    seat: int
    kind: str
    legal: int
    tile: int
    from_seat: int
    fan: int

    @property
    def legal_actions(self) -> tuple[int, ...]:
        return tuple(a for a in range(N_ACTIONS) if (self.legal >> a) & 1)


def action_mask(legal: int) -> np.ndarray:
    """``int8[N_ACTIONS]``: 1 where the action is legal."""
    return ((legal >> np.arange(N_ACTIONS, dtype=np.int64)) & 1).astype(np.int8)


class Hand:
    """One hand of a rule set: ``deal`` it, then ``advance()`` to the next decision of an external seat (None when
    the hand is over) and ``apply(action)`` to answer it. Seats not listed in ``external`` are played inline by
    their compiled bots: ``table.bot_ids``/``table.bot_par`` per seat in seating order (``bot_ids`` replaces the ids:
    the step path logs Python bots under their own), each hand's seating set in ``game.bots`` and ``bpar``."""

    def __init__(self, table: CompiledTable, external, *, bot_ids: np.ndarray | None = None, record: bool = True):
        plan = precompile.step_plan()
        if not plan[0].signatures and not numba_cache.is_cached(*plan):  # an RL environment's or a replay's first
            LOG.warning("compiling the engine's step path (one time, cached; a minute or more on a cold cache) …")
        precompile.pin_signatures(unless_cached=plan)
        self.rules = table.rules
        self.game = table.game(table.bot_ids if bot_ids is None else bot_ids)
        self.bpar = np.array(table.bot_par, dtype=np.int64)
        slots = table.win_slots
        self.st = engine.alloc(record, slots)  # the live state (simulator.kernel.state.HandState), read by field name
        self.snap = engine.alloc(False, slots)  # the start of the current step (engine.copy_state)
        self.set_external(external)
        self.pending: Decision | None = None
        self.answers: list[tuple[int, str, int]] = []  # (seat, decision, action) queued in the current step
        self.hand_label = ""

    def set_external(self, external) -> None:
        io = self.game.io
        io[state.IO_EXT:state.IO_EXT + state.N_SEATS] = 0
        for s in external:
            io[state.IO_EXT + s] = 1

    def deal(self, wall_seed: int, bot_seed: int, dealer: int, label: str = "") -> None:
        """Start a hand from its two seeds (see :func:`engine.deal_seeds`); ``label`` names it in errors."""
        engine.start_hand(self.game, self.st, np.uint64(wall_seed), np.uint64(bot_seed), np.int64(dealer))
        self.game.io[ANS_COUNT] = 0
        self.answers = []
        self.pending = None
        self.hand_label = label

    def advance(self) -> Decision | None:
        """Run compiled play until an external seat must decide (returned) or the hand is over (None)."""
        if self.pending is not None:
            return self.pending
        done = engine.play(self.game, self.st, self.bpar, self.snap, None)[0]
        if done:
            return None
        dp = self.game.io
        if dp[ANS_COUNT] == 0:
            self.answers = []  # a new step: the answers of the last one were used
        d = Decision(int(dp[DP_SEAT]), DECISIONS[dp[DP_KIND]], int(dp[DP_LEGAL]), int(dp[DP_TILE]),
                     int(dp[DP_FROM]), int(dp[DP_FAN]))
        if dp[DP_STATUS] == ST_ILLEGAL:
            bad = int(dp[DP_ACTION])
            dp[ANS_COUNT] -= 1  # drop the bad answer: the state is as before it
            self.answers.pop()
            raise IllegalActionError(
                f"hand {self.hand_label or '?'}: seat {d.seat} answered {d.kind} with illegal action {bad};"
                f" legal: {list(d.legal_actions)}")
        self.pending = d
        return d

    def apply(self, action: int) -> None:
        """Answer the pending decision; checked against the legal set when play resumes (``advance``)."""
        if self.pending is None:
            raise RuntimeError("no decision is pending (call advance() first)")
        io = self.game.io
        n = int(io[ANS_COUNT])
        if n >= ANS_MAX:
            raise RuntimeError("too many answers within one step (a bug)")
        io[ANS_N0 + n] = int(action)
        io[ANS_COUNT] = n + 1
        self.answers.append((self.pending.seat, self.pending.kind, int(action)))
        self.pending = None

    def picked(self, seat: int) -> tuple[int, ...]:
        """The 换三张 tiles ``seat`` has picked so far (an exchange is three decisions, one tile each)."""
        return tuple(a for s, k, a in self.answers if s == seat and k == "exchange")

    @property
    def over(self) -> bool:
        return self.st.pc[state.PC_STAGE] == state.STAGE_DONE


def python_bot_name(rules: RuleSet, seat: int, agent) -> str:
    """The name a Python bot is logged under (the ``players.bot`` column): the seat's ``bot`` as the rule set
    gives it (``package.module:Class`` or a ``xuezhan.bots`` entry-point name), else the agent's class path."""
    spec = rules.seats[seat].bot
    if spec not in BOT_LABELS:
        return spec
    return f"{type(agent).__module__}:{type(agent).__qualname__}"


def _label_python_bots(raw: BatchResult, rules: RuleSet, agents: dict, log_ids: np.ndarray,
                       rotations: np.ndarray) -> None:
    """Give each Python bot logged as ``python`` its own name: the ``bot`` codes of its rows follow the labels of
    the line-up's compiled bots (``base``: ``bot_table.file_labels``, at least up to ``python``), so they become
    ``len(base) + j`` and ``raw.bot_labels`` = ``base`` + the names (in seat order, each once): two different
    Python bots are never pooled, and a bot added to the table moves no code of a line-up without it. Nothing
    changes when no seat is logged as ``python``."""
    names = {b: python_bot_name(rules, b, a) for b, a in agents.items() if log_ids[b] == PYTHON_BOT}
    if not names:
        return
    labels = tuple(dict.fromkeys(names[b] for b in sorted(names)))
    base = file_labels(int(i) for i in log_ids if i != PYTHON_BOT)
    code = np.full(state.N_SEATS, -1, np.int64)
    for b, name in names.items():
        code[b] = len(base) + labels.index(name)
    p = raw.p
    rot = np.repeat(np.asarray(rotations, np.int64), state.N_SEATS)[:p.shape[0]]
    b_of_row = (p[:, state.PL_SEAT].astype(np.int64) + rot) % state.N_SEATS
    mine = (p[:, state.PL_BOT] == PYTHON_BOT) & (code[b_of_row] >= 0)
    p[mine, state.PL_BOT] = code[b_of_row[mine]]
    raw.bot_labels = (*base, *labels)


def play_hands(rules: RuleSet, hand_ids, seed: int, agents: dict, *, duplicate: bool = False,
               record: bool = False, dealers=None) -> BatchResult:
    """Play hands with the seat specs listed in ``agents`` (``{spec index: agent}``, spec index = position in
    ``rules.seats``) played by Python agents and the others by their compiled bots. Returns the raw arrays of
    :func:`hands.run_batch` (same layout, same seeds: with agents that choose as the compiled bots do, the same
    bytes). Agents follow :class:`simulator.agents.Agent`. ``dealers``: int64[n] dealer seats, default
    deal_id % 4."""
    from simulator.hands.ask import ask
    from simulator.hands.observation import observe

    plan = DealPlan.of(seed, hand_ids, duplicate=duplicate, dealers=dealers)
    hand_ids, rotations = plan.hand_ids, plan.rotations
    table = CompiledTable.of(rules)
    bot_par = table.bot_par
    log_ids = table.bot_ids.copy()
    for b, agent in agents.items():
        # the class's own label only: a subclass of GreedyBot plays differently and is logged by its own name
        log_ids[b] = type(agent).__dict__.get("log_bot_id", PYTHON_BOT)
    hand = Hand(table, (), bot_ids=log_ids, record=True)  # always: observations list the discards from it
    raw = plan.empty_raw(table.rows_per_hand)
    ev_rows = []
    nw = 0
    st = hand.st
    seat_agent: list = [None] * state.N_SEATS
    for i in range(len(hand_ids)):
        rot = int(rotations[i])
        for s in range(state.N_SEATS):
            b = (s + rot) % state.N_SEATS
            hand.game.bots[s] = log_ids[b]
            hand.bpar[s] = bot_par[b]
            seat_agent[s] = agents.get(b)
        hand.set_external(s for s in range(state.N_SEATS) if seat_agent[s] is not None)
        hand.deal(plan.wall_seeds[i], plan.bot_seeds[i], plan.dealers[i], label=str(hand_ids[i]))
        for s in range(state.N_SEATS):
            new_hand = getattr(seat_agent[s], "new_hand", None)
            if new_hand is not None:  # the seat's own stream seed: a bot's randomness depends on the hand only
                new_hand(int(st.rngs[1 + s]))
            bind_hand = getattr(seat_agent[s], "bind_hand", None)
            if bind_hand is not None:  # the search bot (simulator.search): the live hand, copied for its rollouts
                bind_hand(hand)
        while (d := hand.advance()) is not None:
            hand.apply(ask(seat_agent[d.seat], observe(hand, d), hand.hand_label))
        need = nw + int(st.g[state.G_NWINS])
        if need > raw.w.shape[0]:  # 血流: more wins than the buffers hold so far
            engine.grow_wins(raw, max(need, 2 * raw.w.shape[0]))
        nw = engine.write_outputs(i, nw, st, engine.batch_out(raw))
        if record:
            ev = st.events[:st.g[state.G_NEV]]
            ev_rows.append(np.column_stack([np.full(ev.shape[0], i, np.int32), ev]))
    engine.trim_raw(raw, nw)
    _label_python_bots(raw, rules, agents, log_ids, rotations)
    if record and raw.h[:, state.H_EV_OVERFLOW].any():
        raise RuntimeError(f"a hand logged more than {state.E_MAX} events; raise state.E_MAX")
    raw.events = (np.concatenate(ev_rows) if ev_rows else np.zeros((0, 1 + state.EV_W), np.int32))
    return raw
