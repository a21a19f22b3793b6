"""Play hands from Python: the compiled batch, or the step path when a seat is a Python bot.

:func:`run_batch` returns the raw arrays of a batch (what :mod:`simulator.logs.records` turns into log columns);
:func:`play_hands` returns the log columns directly. Above the engine and its compile plan
(:mod:`simulator.hands.precompile`) and the step path (:mod:`simulator.hands.game`), which it dispatches to.
"""

from __future__ import annotations

import numpy as np

from simulator.engine import (
    EVENTS_PER_HAND,
    alloc,
    batch_out,
    grow_wins,
    play,
    trim_raw,
)
from simulator.hands import game, precompile
from simulator.hands.compiled_rules import CompiledTable, DealPlan
from simulator.kernel import state
from simulator.kernel.state import H_EV_OVERFLOW, Batch, BatchResult
from simulator.logs import records
from simulator.rules import RuleSet


def run_batch(rules: RuleSet, hand_ids, seed: int, *, duplicate: bool = False, record: bool = False,
              dealers=None, agents: dict | None = None) -> BatchResult:
    """Run the compiled batch and return its raw arrays (before any string formatting). Seats played by Python
    bots go through the step path (:func:`simulator.hands.game.play_hands`: the same compiled loop, paused at them).
    ``dealers``: int64[n], the dealer seat of each hand (sessions chain it, simulator.hands.sessions); default
    deal_id % 4. ``agents``: the Python bots of the seats that name one (``{spec index: agent}``, default: built
    from the rules; a caller that reads them afterwards, such as the replay, passes its own)."""
    if rules.python_seats():
        from simulator.hands.ask import build as build_bot

        if agents is None:
            agents = {i: build_bot(rules.seats[i], i) for i in rules.python_seats()}
        return game.play_hands(rules, hand_ids, seed, agents, duplicate=duplicate, record=record, dealers=dealers)

    table = CompiledTable.of(rules)
    bot_par, bpar = table.lineup()
    precompile.pin_signatures(unless_cached=precompile.batch_plan(bot_par is None)[0])
    plan = DealPlan.of(seed, hand_ids, duplicate=duplicate, dealers=dealers)
    raw = plan.empty_raw(table.rows_per_hand)
    cap = EVENTS_PER_HAND * len(plan.hand_ids) if record else 1
    deals = plan.deals()
    played = table.game()
    while True:
        events = np.zeros((cap, 1 + state.EV_W), np.int32)
        batch = Batch(table.bot_ids, bot_par, deals, record, batch_out(raw, events))
        _, nw, ne = play(played, alloc(record, table.win_slots), bpar, None, batch)
        if ne <= cap and nw <= raw.w.shape[0]:
            break
        cap = max(cap, ne)  # rare: replay with buffers that fit (the hands are deterministic)
        grow_wins(raw, nw)
    if record and raw.h[:, H_EV_OVERFLOW].any():
        raise RuntimeError(f"a hand logged more than {state.E_MAX} events; raise state.E_MAX")
    trim_raw(raw, nw)
    raw.events = events[:ne] if record else events[:0]
    return raw


def play_hands(rules: RuleSet, hand_ids, seed: int, *, duplicate: bool = False,
               record: bool = False) -> dict[str, dict[str, np.ndarray]]:
    """Play hands and return the columns of the ``hands``, ``players`` and ``wins`` tables (schema names,
    without ``variant``). ``hand_ids``: int64[n]; dealer = deal_id % 4. With ``record`` the result also has
    ``"events"``: ``{"hand_row": int64[m], "type", "seat", "tile", "amount", "a", "b"}`` (see
    simulator.kernel.state)."""
    raw = run_batch(rules, hand_ids, seed, duplicate=duplicate, record=record)
    out = records.to_columns(raw)
    if record:
        out["events"] = records.event_columns(raw)
    return out
