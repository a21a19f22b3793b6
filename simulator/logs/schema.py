"""The Parquet log schema (documented for users in ``docs/logs.md``): the Arrow schemas of the three tables,
derived from the one column table ``simulator.rules.columns`` (re-exported here: :data:`COLUMNS`, :class:`Column`,
the null rules, :data:`LOG_FORMAT` …), which also numbers the engine's output slots. Analysis' polars schemas
(``analysis.load``) and the file encoding (``simulator.logs.encode``) read them from here.

Three tables per variant: ``hands`` (one row per hand), ``players`` (one row per player per hand) and ``wins``
(one row per win). The files do not store the variant: it is the hive partition of their path
(``RUN/<table>/variant=<name>/``, :data:`PARTITION`), which every Parquet reader turns into a ``variant`` column.
Money columns are integers in **base units** (multiply by ``scoring.base`` from the
manifest for score units). "Not applicable" is null in every column (``fan`` of a player who did not win,
``void_suit`` under ``void_suit: none``), never a sentinel number, so a naive mean is a mean over wins. Two
integers are negative by meaning: ``start_shanten`` −1 (a complete hand) and ``payer`` −1 (every player still
in pays).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from simulator.rules.columns import (  # noqa: F401  (the column table, re-exported: readers name it schema.*)
    CAT,
    CAT16,
    COLUMNS,
    FLAGS,
    LOG_FORMAT,
    NEVER,
    NO_CODE,
    NO_WIN,
    SCORE_COMPONENTS,
    SESSION_COLUMNS,
    SUITS,
    TILE_NAMES,
    Column,
    columns,
)

PARTITION = "variant"  # the hive partition key of the table directories: a column readers take from the path


def type_name(t: pa.DataType) -> str:
    """How docs/logs.md writes an Arrow type: ``int8``, ``string``, ``dictionary<int8,string>``."""
    if pa.types.is_dictionary(t):
        return f"dictionary<{t.index_type},{t.value_type}>"
    return {"double": "float64", "float": "float32"}.get(str(t), str(t))


def numpy_dtype(t: pa.DataType) -> np.dtype | None:
    """The numpy dtype of a numeric or bool column (what ``simulator.logs.records`` builds), None for text and
    categoricals."""
    return None if pa.types.is_dictionary(t) or pa.types.is_string(t) else np.dtype(t.to_pandas_dtype())


HANDS, PLAYERS, WINS = (pa.schema([(c.name, c.type) for c in COLUMNS[t]]) for t in ("hands", "players", "wins"))
TABLES = {"hands": HANDS, "players": PLAYERS, "wins": WINS}
SESSION_FIELDS = {t: [(c.name, c.type) for c in cols] for t, cols in SESSION_COLUMNS.items()}
SESSION_TABLES = {name: pa.schema([*schema, *SESSION_FIELDS[name]]) for name, schema in TABLES.items()}


def tables(sessions: bool) -> dict[str, pa.Schema]:
    """The three tables' schemas of a run with or without sessions."""
    return SESSION_TABLES if sessions else TABLES


# Integer columns that are null when the player did not win: the engine's −1 there is written as null.
NULL_IF_NO_WIN = {t: tuple(c.name for c in cols if c.null == NO_WIN) for t, cols in COLUMNS.items()}
# The fixed dictionary of each categorical column, by name (a name means the same values in every table).
DICTIONARIES: dict[str, tuple[str, ...]] = {c.name: c.dictionary for cols in COLUMNS.values() for c in cols
                                            if c.dictionary}
