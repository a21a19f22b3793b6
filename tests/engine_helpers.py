"""Shared helpers for the engine, rule and bot tests: running batches, comparing variants, reading events."""

from __future__ import annotations

import numpy as np

from simulator import records
from simulator import state as S
from simulator.hands import run_batch
from simulator.replay import split_logs
from simulator.rules import CONFIG_DIR, RuleSet, load_rules

CONFIGS = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))


def rules_of(base: str = "chengdu", **overrides) -> RuleSet:
    """A rule set with nested overrides, e.g. ``rules_of(kongs={"added_kong": {"each": 0}})``."""
    return load_rules(base, overrides or None)


def play(rules: RuleSet, n: int, seed: int = 1, *, record: bool = False, start: int = 0):
    """``(raw arrays, columns)`` of hands ``start..start+n-1``; with ``record`` columns has ``"events"``."""
    raw = run_batch(rules, np.arange(start, start + n, dtype=np.int64), seed, record=record)
    cols = records.to_columns(raw)
    if record:
        cols["events"] = records.event_columns(raw)
    return raw, cols


def differing(a: dict, b: dict) -> dict[str, set[str]]:
    """Per table, the columns whose values differ between two results of the same hands."""
    out = {}
    for table in ("hands", "players", "wins"):
        ta, tb = a[table], b[table]
        if len(ta["hand_id"]) != len(tb["hand_id"]):
            out[table] = {"<rows>"}
            continue
        out[table] = {c for c in ta if not np.array_equal(ta[c], tb[c])}
    return out


def per_hand(values: np.ndarray) -> np.ndarray:
    """Player-row values reshaped to ``[hands, 4]``."""
    return np.asarray(values).reshape(-1, 4)


def events_of(cols: dict, row: int) -> list[tuple[int, ...]]:
    ev = cols["events"]
    sel = ev["hand_row"] == row
    return list(zip(*(ev[f][sel].tolist() for f in records.EVENT_FIELDS), strict=True))


def logs(rules: RuleSet, cols: dict, seed: int = 1):
    return split_logs(rules, seed, cols)


def tiles_left_at_events(events: list[tuple[int, ...]]) -> list[int]:
    """Tiles left in the wall when each event happened (55 minus the draws so far)."""
    left = 55
    out = []
    for ev in events:
        if ev[0] == S.EV_DRAW:
            left -= 1
        out.append(left)
    return out
