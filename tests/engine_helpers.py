"""Shared helpers for the engine, rule and bot tests: running batches, comparing variants, reading events."""

from __future__ import annotations

import numpy as np

from simulator import engine
from simulator.hands import run_batch
from simulator.kernel import state as S
from simulator.kernel.tables import suit_table
from simulator.logs import records
from simulator.replay import split_logs
from simulator.rules import CONFIG_DIR, RuleSet, load_rules

CONFIGS = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))

RULE_HANDS = 3000  # hands per variant in the rule-key tests (tests/test_engine_rules*.py)
# 花猪 needs players who do not clear a third suit: random seats under void_suit: none
HUAZHU_SEATS = ["greedy", "random", "greedy", "random"]
DECLINERS = [{"bot": "value", "decline_below": 3, "decline_wall": 0}] * 4  # decline every cheap discard win


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


def rule_logs(n: int = RULE_HANDS, record: bool = False, **over) -> dict:
    """The log columns of ``n`` hands (seed 1) under chengdu with the rule overrides ``over``."""
    return play(rules_of(**over), n, record=record)[1]


def finished_hands(rules: RuleSet, n: int, seed: int):
    """The state record (:class:`simulator.kernel.state.HandState`, one reused per hand) at the end of each of hands
    ``0..n-1`` of ``seed``, played by the compiled bots through the step API (which runs the batch's compiled hand
    loop: calling engine internals from Python here would compile extra copies of them into the disk cache)."""
    from simulator.hands.compiled_rules import CompiledTable
    from simulator.hands.game import Hand

    hand = Hand(CompiledTable.of(rules), external=[], record=False)
    ids = np.arange(n, dtype=np.int64)
    walls, bseeds = engine.deal_seeds(seed, ids)
    for i in ids:
        hand.deal(int(walls[i]), int(bseeds[i]), int(i % 4))
        assert hand.advance() is None  # no external seat: the hand plays to its end
        yield hand.st


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


_ROW_STARTS: list = []  # [(hand_row array, start offset of each row)] of the last event table read


def _row_slice(hand_row: np.ndarray, row: int) -> slice | np.ndarray:
    """Where row ``row``'s events sit: a slice (the offsets of every row computed once per event table, since
    event tables are in hand-row order), or a mask for an unsorted table."""
    if not _ROW_STARTS or _ROW_STARTS[0][0] is not hand_row:
        rows = np.asarray(hand_row)
        starts = (np.searchsorted(rows, np.arange(int(rows.max(initial=-1)) + 2))
                  if np.all(rows[1:] >= rows[:-1]) else None)
        _ROW_STARTS[:] = [(hand_row, starts)]
    starts = _ROW_STARTS[0][1]
    if starts is None:
        return np.asarray(hand_row) == row
    return slice(starts[row], starts[row + 1]) if row + 1 < len(starts) else slice(0, 0)


def events_of(cols: dict, row: int) -> list[tuple[int, ...]]:
    """The events of hand row ``row``, each a tuple in ``records.EVENT_FIELDS`` order."""
    ev = cols["events"]
    sel = _row_slice(ev["hand_row"], row)
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


def decision(bot: int, params: np.ndarray, *, conc, g, ps, mk, mt, nm, visible, tiles_left: int, seat: int = 0):
    """``(game, st)`` of a built table for one bot decision of ``seat`` (the bots' dispatchers take these): every
    seat played by ``bot``, ``conc`` the seat's own concealed counts (the others' are empty), ``mk, mt, nm`` all
    seats' melds, ``g, ps`` the hand-wide and per-seat scalars, ``tiles_left`` tiles still in the wall."""
    st = engine.alloc(False)
    st.conc[seat] = conc
    st.mk[:], st.mt[:], st.nm[:] = mk, mt, nm
    st.g[:], st.ps[:], st.visible[:] = g, ps, visible
    st.g[S.G_HEAD], st.g[S.G_TAIL] = 0, tiles_left
    st.rngs[:] = 1
    game = S.Game(suit_table(), params, np.full(S.N_SEATS, bot, np.int64), engine.alloc_io())
    return game, st
