"""Encoding: engine columns → Arrow tables with the exact schema of :mod:`simulator.logs.schema` → Parquet bytes.

Deterministic by construction: fixed writer options, fixed dictionaries for the categorical columns, nothing
time-dependent; so a file's bytes depend only on its rows. Categorical columns are encoded straight from the
engine's integer codes (:class:`simulator.logs.records.Coded`), text columns arrive as Arrow string arrays: no Python
string per row. Used by :mod:`simulator.run.runner` (in the workers) and by tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from simulator.logs import layout
from simulator.logs.schema import DICTIONARIES, NO_WIN
from simulator.logs.schema import columns as declared_columns
from simulator.logs.schema import tables as tables_schema
from simulator.rules.bot_table import BOT_LABELS, file_labels

# Fixed writer options: the bytes of a file must not depend on library defaults changing under us.
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd", "compression_level": 3, "version": "2.6", "data_page_version": "1.0",
    "use_dictionary": True, "write_statistics": True, "row_group_size": 1 << 20,
}
# Fixed dictionaries of the categorical columns (declared in simulator.logs.schema's column table): every file carries
# the same dictionary in the same order, so files concatenate without re-encoding, and a value outside it is an
# engine bug caught at write time.
VOCABULARIES: dict[str, tuple[str, ...]] = DICTIONARIES


def _vocab_array(vocab: Sequence[str]) -> pa.Array:
    key = tuple(vocab)
    arr = _VOCAB_ARRAYS.get(key)
    if arr is None:
        arr = _VOCAB_ARRAYS[key] = pa.array(key, pa.string())
    return arr


_VOCAB_ARRAYS: dict[tuple[str, ...], pa.Array] = {}
_REMAPS: dict[tuple[tuple[str, ...], tuple[str, ...]], np.ndarray] = {}


def _remap(names: tuple[str, ...], vocab: Sequence[str]) -> np.ndarray:
    """Code → index in ``vocab``, shifted by one (entry 0 is code −1): −1 = null ("" too), −2 = not in ``vocab``."""
    key = (names, tuple(vocab))
    table = _REMAPS.get(key)
    if table is None:
        where = {v: i for i, v in enumerate(vocab)}
        table = np.array([-1, *(-1 if n == "" else where.get(n, -2) for n in names)], np.int64)
        _REMAPS[key] = table
    return table


def _coded(col: Any, fld: pa.Field, vocab: Sequence[str]) -> pa.Array:
    """Dictionary array straight from engine codes (no strings): the codes are mapped onto ``vocab``."""
    codes = np.asarray(col.codes)
    table = _remap(tuple(col.names), vocab)
    if len(codes) and (codes.min() < -1 or codes.max() >= len(col.names)):
        bad = codes[(codes < -1) | (codes >= len(col.names))][0]
        raise ValueError(f"column {fld.name!r}: code {int(bad)} is outside 0..{len(col.names) - 1}")
    idx = table[codes + 1]
    nulls = idx < 0
    if nulls.any():
        if (idx == -2).any():
            bad = col.names[int(codes[idx == -2][0])]
            raise ValueError(f"column {fld.name!r}: value {bad!r} is not one of {list(vocab)}")
        indices = pa.array(idx.astype(fld.type.index_type.to_pandas_dtype()), mask=nulls)
    else:
        indices = pa.array(idx.astype(fld.type.index_type.to_pandas_dtype()))
    return pa.DictionaryArray.from_arrays(indices, _vocab_array(vocab))


def _categorical(values: Any, fld: pa.Field, vocab: Sequence[str]) -> pa.Array:
    """Dictionary-encode against a fixed vocabulary: engine codes (:class:`records.Coded`) directly, strings by
    lookup; None and "" are null (not applicable)."""
    if hasattr(values, "codes"):  # records.Coded (not imported here: records pulls in numba)
        return _coded(values, fld, vocab)
    strings = pa.array(np.asarray(values, dtype=object), type=pa.string())
    strings = pc.if_else(pc.equal(strings, ""), pa.scalar(None, pa.string()), strings)
    indices = pc.index_in(strings, value_set=_vocab_array(vocab))
    if indices.null_count != strings.null_count:
        bad = pc.filter(strings, pc.and_(pc.is_null(indices), pc.is_valid(strings)))[0].as_py()
        raise ValueError(f"column {fld.name!r}: value {bad!r} is not one of {list(vocab)}")
    index_type = fld.type.index_type
    return pa.DictionaryArray.from_arrays(indices.cast(index_type), _vocab_array(vocab))


def _bot_labels(values: Any) -> tuple[str, ...]:
    """The ``bot`` dictionary of a file (append-only, :func:`simulator.rules.bot_table.file_labels`): the labels up to
    the last bot id its rows hold, then the run's Python bots by name (``values.names`` after the compiled labels they
    start with: game.py)."""
    if hasattr(values, "codes"):
        names = tuple(values.names)
        k = next(i for i in range(min(len(names), len(BOT_LABELS)), -1, -1) if names[:i] == BOT_LABELS[:i])
        codes = np.unique(np.asarray(values.codes))
        return file_labels(codes[codes < k].tolist(), names[k:])
    return file_labels(BOT_LABELS.index(v) for v in set(np.asarray(values, dtype=object).tolist()) if v in BOT_LABELS)


def _column(values: Any, fld: pa.Field, null_if_negative: bool = False) -> pa.Array:
    if pa.types.is_dictionary(fld.type):
        vocab = _bot_labels(values) if fld.name == "bot" else VOCABULARIES[fld.name]
        return _categorical(values, fld, vocab)
    if pa.types.is_string(fld.type):
        if isinstance(values, pa.Array) and values.type == pa.string():
            return values
        return pa.array(np.asarray(values, dtype=object), type=pa.string())
    values = np.asarray(values)
    # The engine's −1 "no win" becomes null in the logs (a naive mean must not average in −1s).
    mask = values < 0 if null_if_negative else None
    # A safe cast raises on overflow instead of wrapping, so a too-narrow schema dtype cannot corrupt data.
    return pa.array(values, mask=mask).cast(fld.type, safe=True)


def encode_tables(columns: dict[str, dict[str, Any]], meta: dict[str, Any] | None = None) -> dict[str, pa.Table]:
    """Arrow tables with the exact schema of :data:`simulator.logs.schema.TABLES` (plus ``SESSION_FIELDS`` when the
    columns have them: rule sets with sessions) from ``play_hands`` output or from
    ``records.to_columns(raw, encoded=True)`` (categorical codes and Arrow text columns, no strings per row).
    ``meta``: the keyword arguments of :func:`simulator.logs.layout.file_metadata` but ``table`` (variant, digest,
    seed, duplicate, version, log_format), written as each table's key-value metadata."""
    tables = {}
    for table, schema in schema_of(columns).items():
        cols = columns[table]
        expected = [f.name for f in schema]
        if set(cols) != set(expected):
            missing, extra = sorted(set(expected) - set(cols)), sorted(set(cols) - set(expected))
            raise ValueError(f"engine output for {table!r} does not match the schema: missing {missing}, "
                             f"unexpected {extra}")
        nullable = {c.name for c in declared_columns(table, "session_id" in columns["hands"]) if c.null == NO_WIN}
        arrays = [_column(cols.get(f.name), f, f.name in nullable) for f in schema]
        if meta is not None:
            schema = schema.with_metadata(layout.file_metadata(table, **meta))
        tables[table] = pa.Table.from_arrays(arrays, schema=schema)
    return tables


def schema_of(columns: dict[str, dict[str, Any]]) -> dict[str, pa.Schema]:
    """The schemas the columns are written with: with the session columns when the run has sessions."""
    return tables_schema("session_id" in columns["hands"])


def parquet_bytes(table: pa.Table) -> bytes:
    """The Parquet file of ``table`` with the fixed writer options (deterministic bytes)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue().to_pybytes()


def check_chunk(tables: dict[str, pa.Table], hand_ids: np.ndarray, may_stop: bool = False) -> None:
    """Cheap contract checks on engine output: one hands row per hand id in order (with ``may_stop``, sessions
    that stopped when a player was broke: a subset of them, in order), four players per hand."""
    got = tables["hands"].column("hand_id").to_numpy()
    ok = np.array_equal(got, hand_ids) if not may_stop else (
        np.isin(got, hand_ids).all() and bool(np.all(np.diff(got) > 0)))
    if not ok:
        raise ValueError(f"engine returned hand ids {got[:3]}... for chunk {hand_ids[0]}-{hand_ids[-1]}")
    if tables["players"].num_rows != 4 * len(got):
        raise ValueError(f"engine returned {tables['players'].num_rows} player rows for {len(got)} hands")
