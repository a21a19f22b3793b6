"""Compiled result arrays → the columns of the ``hands``, ``players`` and ``wins`` tables (simulator.logs.schema).

Runs once per batch after the compiled engine, with no Python work per row. The text columns (tile notation,
melds) are written by compiled functions straight into the buffers of an Arrow string array (UTF-8 data +
int32 offsets); the ``context`` strings are formatted once per distinct context value. Categorical columns are
:class:`Coded`: the engine's integer codes plus their names.

Two forms of the same columns: ``to_columns(raw)`` (what ``play_hands`` returns) has numpy object arrays of
``str`` (None = not applicable) for text and categorical columns; ``to_columns(raw, encoded=True)`` (what the
runner writes) keeps ``pa.StringArray`` text columns and :class:`Coded` categoricals, so the runner builds
dictionary arrays from the codes without ever making a Python string per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from simulator.kernel import state as S
from simulator.kernel.evaluate import (
    CTX_AFTER_KONG,
    CTX_DANCE,
    CTX_DEALER,
    CTX_FIRST_DRAW,
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_SING,
)
from simulator.kernel.notation import MELD_BYTES, MELD_LEN, SUIT_BYTES, melds_utf8, notation_utf8
from simulator.kernel.state import BatchResult
from simulator.logs import schema
from simulator.rules.columns import slot_of

CONTEXT_NAMES = ((CTX_AFTER_KONG, "after_kong"), (CTX_KONG_DISCARD, "after_own_kong_discard"),
                 (CTX_LAST_TILE, "last_tile"), (CTX_FIRST_DRAW, "first_draw"), (CTX_DEALER, "dealer"),
                 (CTX_SING, "sing"), (CTX_DANCE, "dance"))
def _string_array(data: np.ndarray, offsets: np.ndarray) -> pa.StringArray:
    """Arrow string array over compiled output (no nulls)."""
    return pa.StringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))


def notation_array(counts: np.ndarray) -> pa.StringArray:
    """Tile notation of count rows ``uint8[m, 27]`` as an Arrow string array."""
    return _string_array(*notation_utf8(np.ascontiguousarray(counts, dtype=np.uint8), SUIT_BYTES))


def notation(counts: np.ndarray) -> np.ndarray:
    """Tile notation strings of count rows ``uint8[m, 27]`` (object array)."""
    return notation_array(counts).to_numpy(zero_copy_only=False)


@dataclass(frozen=True)
class Coded:
    """A categorical column as the engine's integer codes: ``names[codes[i]]``, code −1 = None (not applicable)."""

    codes: np.ndarray
    names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.codes)

    def strings(self) -> np.ndarray:
        """Object array of the names (None for −1)."""
        return _lookup(self.names, self.codes)


def _lookup(names, idx: np.ndarray) -> np.ndarray:
    """Categorical strings by index; −1 → None."""
    table = np.array([None, *names], dtype=object)
    return table[np.asarray(idx, dtype=np.int64) + 1]


def context_string(ctx: int) -> str:
    return ",".join(name for bit, name in CONTEXT_NAMES if ctx & bit)


_CTX_MASK = 0
for _bit, _ in CONTEXT_NAMES:
    _CTX_MASK |= _bit
_CTX_STRINGS = pa.array([context_string(c) for c in range(_CTX_MASK + 1)], pa.string())  # every combination


def _contexts(ctx: np.ndarray) -> pa.StringArray:
    """``context`` strings: a take from the strings of every combination of the context bits."""
    return _CTX_STRINGS.take(pa.array(np.asarray(ctx, dtype=np.int64) & _CTX_MASK))


def _typed(table: str, cols: dict) -> dict:
    """``cols`` in schema order, each numeric or bool column cast to its schema dtype (the one declaration of the
    log columns, :mod:`simulator.logs.schema`); ``ValueError`` when the names are not the schema's."""
    declared = schema.columns(table, "session_id" in cols)
    if set(cols) != {c.name for c in declared}:
        names = {c.name for c in declared}
        raise ValueError(f"{table}: columns {sorted(set(cols) ^ names)} differ from simulator.logs.schema")
    out = {}
    for c in declared:
        dtype = schema.numpy_dtype(c.type)
        out[c.name] = cols[c.name] if dtype is None else np.asarray(cols[c.name]).astype(dtype, copy=False)
    return out


def _per_row(table: str, raw: BatchResult, per_hand: np.ndarray) -> np.ndarray:
    """A per-hand value on each row of ``table`` (players: four rows per hand; wins: the row's hand)."""
    if table == "players":
        return np.repeat(per_hand, 4)
    return per_hand[raw.w_hand] if table == "wins" else per_hand


def _melds(raw: BatchResult, n_melds: np.ndarray) -> pa.StringArray:
    return _string_array(*melds_utf8(raw.wmk, raw.wmt, n_melds, SUIT_BYTES, MELD_BYTES, MELD_LEN))


# The values of the log that are no slot of the engine's rows (schema sources ``=name``), by table.
DERIVED = {
    "hand_id": lambda raw, t: _per_row(t, raw, raw.hand_ids),
    "deal_id": lambda raw, t: _per_row(t, raw, raw.deal_ids),
    "rotation": lambda raw, t: raw.rotations,
    "dealt": lambda raw, t: notation_array(raw.dealt),
    "hand": lambda raw, t: notation_array(raw.wconc),
    "score_total": lambda raw, t: raw.p[:, S.PL_SCORE:S.PL_SCORE + S.N_COMP].sum(axis=1),
    "session_id": lambda raw, t: _per_row(t, raw, raw.session_id),
    "hand_in_session": lambda raw, t: _per_row(t, raw, raw.hand_in_session),
    "bankroll": lambda raw, t: raw.bankroll,
}
# Readers that turn a slot into text (schema sources ``reader:SLOT``).
READERS = {"context": lambda raw, values: _contexts(values), "melds": _melds}
ROWS = {"hands": "h", "players": "p", "wins": "w"}  # the integer rows of each table in BatchResult


def column_values(raw: BatchResult, table: str, col: schema.Column):
    """One column of ``table`` read from the batch output where :data:`simulator.logs.schema.COLUMNS` says it is:
    a numpy array, an Arrow string array (text) or :class:`Coded` (categoricals)."""
    if col.source.startswith("="):
        return DERIVED[col.source[1:]](raw, table)
    slot, offset, bit = slot_of(col.source)
    values = getattr(raw, ROWS[table])[:, getattr(S, slot) + offset]
    reader = col.source.rpartition(":")[0]
    if reader:
        return READERS[reader](raw, values)
    if bit >= 0:
        return ((values >> bit) & 1).astype(bool)
    if col.dictionary:
        names = (raw.bot_labels or col.code_names) if col.name == "bot" else col.code_names  # + Python bots' names
        return Coded(values, names)
    return values


def to_columns(raw: BatchResult, *, encoded: bool = False) -> dict[str, dict]:
    """The three tables' columns (the names and, for numbers and flags, the numpy dtypes of
    :data:`simulator.logs.schema.COLUMNS`, in its order, each read from the source that table declares) from
    :func:`hands.run_batch` output, with the session columns when sessions were played.

    Text and categorical columns are object arrays of ``str`` (None = not applicable); with ``encoded``, text
    columns are ``pa.StringArray`` and categorical ones :class:`Coded` (for
    :func:`simulator.logs.encode.encode_tables`).
    """
    sessions = raw.session_id is not None
    out = {t: _typed(t, {c.name: column_values(raw, t, c) for c in schema.columns(t, sessions)})
           for t in ("hands", "players", "wins")}
    if not encoded:
        for cols in out.values():
            for name, col in cols.items():
                if isinstance(col, Coded):
                    cols[name] = col.strings()
                elif isinstance(col, pa.Array):
                    cols[name] = col.to_numpy(zero_copy_only=False)
    return out


EVENT_FIELDS = ("type", "seat", "tile", "amount", "a", "b")


def event_columns(raw: BatchResult) -> dict[str, np.ndarray]:
    """The recorded event log as columns: ``hand_row`` (row of the hand in the batch) + ``EVENT_FIELDS``."""
    ev = raw.events
    out = {"hand_row": ev[:, 0].astype(np.int64)}
    for i, name in enumerate(EVENT_FIELDS):
        out[name] = ev[:, 1 + i].astype(np.int64)
    return out
