"""A recorded hand: the engine's event log of one hand with its rows of the three tables (:class:`HandLog`),
played with the event log on (:func:`record_hand`) or cut from a recorded batch (:func:`split_logs`); and the
errors of replaying one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simulator.errors import UserError
from simulator.rules import RuleSet


class ReplayError(UserError):
    """A replay that cannot be produced (bad seed, hand id, run directory), or a logged hand that does not
    replay to its logged result."""


class EventLogError(AssertionError):
    """The event log describes something impossible: an engine bug."""


@dataclass
class HandLog:
    """One recorded hand: its rows of the three tables, its events ``(type, seat, tile, amount, a, b)`` and the
    notes its Python bots kept of their decisions (the search player's rollouts: ``simulator.search.NOTE_FIELDS``;
    a note's first two fields are the count of events before the decision and the seat)."""

    rules: RuleSet
    hand_id: int
    seed: int
    hand: dict
    players: list[dict]
    wins: list[dict]
    events: list[tuple[int, int, int, int, int, int]]
    notes: list[tuple] = field(default_factory=list)


def _rows(cols: dict, mask: np.ndarray) -> list[dict]:
    idx = np.flatnonzero(mask)
    return [{k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in cols.items()} for i in idx]


def split_logs(rules: RuleSet, seed: int, out: dict) -> list[HandLog]:
    """The per-hand logs of a recorded :func:`simulator.hands.play_hands` result."""
    ev = out["events"]
    fields = ("type", "seat", "tile", "amount", "a", "b")
    logs = []
    for row, hid in enumerate(out["hands"]["hand_id"].tolist()):
        sel = ev["hand_row"] == row
        events = list(zip(*(ev[f][sel].tolist() for f in fields), strict=True))
        logs.append(HandLog(rules, hid, seed, _rows(out["hands"], out["hands"]["hand_id"] == hid)[0],
                            _rows(out["players"], out["players"]["hand_id"] == hid),
                            _rows(out["wins"], out["wins"]["hand_id"] == hid), events))
    return logs


def record_hand(rules: RuleSet, hand_id: int, seed: int, *, duplicate: bool = False,
                dealer: int | None = None) -> HandLog:
    """Play hand ``hand_id`` of ``seed`` with the event log on; ``dealer``: the dealer seat when it does not
    follow from the hand id (a hand of a session, whose dealer came from the previous hand: read from its log)."""
    from simulator.hands import run_batch
    from simulator.hands.ask import build as build_bot
    from simulator.logs.records import event_columns, to_columns

    if seed < 0:
        raise ReplayError(f"--seed must be a non-negative integer, got {seed}")
    if hand_id < 0:
        raise ReplayError(f"--hand must be a non-negative integer, got {hand_id}")
    dealers = None if dealer is None else np.array([dealer], np.int64)
    from simulator.hands.warmup import announce

    announce(rules)
    agents = {i: build_bot(rules.seats[i], i) for i in rules.python_seats()}
    raw = run_batch(rules, np.array([hand_id], np.int64), seed, duplicate=duplicate, record=True, dealers=dealers,
                    agents=agents)
    out = to_columns(raw)  # hands.play_hands, with the dealer given
    out["events"] = event_columns(raw)
    log = split_logs(rules, seed, out)[0]
    log.notes = sorted(n for a in agents.values() for n in getattr(a, "replay_notes", ()))
    return log
