"""The Parquet log schema (documented for users in ``docs/logs.md``): the one declaration of every column — name,
Arrow type, description (:data:`COLUMNS`) — from which the Arrow schemas, the engine's column dtypes
(``simulator.records``), analysis' polars schemas (``analysis.load``) are derived, and against which a test checks
the column tables of docs/logs.md.

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

from typing import NamedTuple

import numpy as np
import pyarrow as pa

from simulator.rules import FLAGS

# The log format: the version of what a Parquet file's bytes mean — its columns, their types and the
# dictionaries of the categorical columns (simulator.encode.VOCABULARIES, the `bot` labels in the order of the
# bots). Recorded in every manifest and file (`log_format`); `--resume` refuses to add chunks of another format to
# a variant. Bump it with any change of a column, a type or a dictionary (tests/test_survive.py pins the schema
# and dictionaries of each format: it fails until the bump).
LOG_FORMAT = 1
PARTITION = "variant"  # the hive partition key of the table directories: a column readers take from the path
CAT = pa.dictionary(pa.int8(), pa.string())
CAT16 = pa.dictionary(pa.int16(), pa.string())


class Column(NamedTuple):
    """One log column: its name, Arrow type and a one-line description (docs/logs.md says more; a test checks
    that its column tables list exactly these names and types)."""

    name: str
    type: pa.DataType
    doc: str


def _flags(what: str) -> list[Column]:
    return [Column(f, pa.bool_(), f"pattern flag of the {what} (RULES.md §3; all false = no win)") for f in FLAGS]


_NO_WIN = "; null = no win"
SCORE_COMPONENTS = ("score_win", "score_kong", "score_transfer", "score_huazhu", "score_chadajiao",
                    "score_refund")
_SCORE_DOCS = ("money from wins: received as winner, paid as discarder/payer",
               "kong payments received and paid (as made, before transfers/refunds)",
               "呼叫转移: kong income passed to a 杠上炮 winner (or received as that winner)",
               "查花猪 penalties paid/received", "查大叫 payments paid/received",
               "退税 and 杠上炮 refunds of kong income")

COLUMNS: dict[str, list[Column]] = {
    "hands": [
        Column("hand_id", pa.int64(), "global hand index: seeds, dealer, pairing across variants"),
        Column("deal_id", pa.int64(), "wall index (= hand_id, or hand_id // 4 under duplicate)"),
        Column("rotation", pa.int8(), "bot seating rotation of a duplicate deal, 0 otherwise"),
        Column("dealer", pa.int8(), "dealer seat"),
        Column("exchange", CAT, "换三张 direction used: none/clockwise/counterclockwise/opposite"),
        Column("n_winners", pa.int8(), "players who won in this hand (血流: each counted once)"),
        Column("n_wins", pa.int16(), "wins in this hand = its rows in wins (> n_winners only under mode: xueliu)"),
        Column("exhaustive_draw", pa.bool_(), "流局: the wall ran out with two or more players still in"),
        Column("tiles_left", pa.int8(), "tiles left in the wall when the hand ended"),
        Column("n_kongs", pa.int8(), "kongs made in the hand (all kinds)"),
        Column("turns", pa.int16(), "discards made in the hand"),
    ],
    "players": [
        Column("hand_id", pa.int64(), "as in hands"),
        Column("deal_id", pa.int64(), "as in hands"),
        Column("seat", pa.int8(), "0-3 in turn order"),
        Column("bot", CAT, "bot in this seat (a Python bot by the name its seat gives)"),
        Column("dealt", pa.string(), "tiles dealt, before any exchange, RULES.md notation"),
        Column("start_shanten", pa.int8(), "缺一门 shanten after the exchange (dealer: of 14 tiles); -1 = complete"),
        Column("void_suit", CAT, "declared void suit m/p/s; null under void_suit: none"),
        Column("won", pa.bool_(), "this player won (血流: at least once; the win columns describe its first)"),
        Column("win_order", pa.int8(), "1 = first win event of the hand (一炮多响 partners share it)" + _NO_WIN),
        Column("win_kind", CAT, "discard/self_draw/rob_kong" + _NO_WIN),
        Column("win_turn", pa.int16(), "discards made before the win" + _NO_WIN),
        Column("hand_type", CAT16, "report label of the win (RULES.md §3)" + _NO_WIN),
        *_flags("win"),
        Column("gen", pa.int8(), "根 as scored (after long_uses_gen)" + _NO_WIN),
        Column("fan", pa.int8(), "fan after extras, before the cap" + _NO_WIN),
        Column("capped_fan", pa.int8(), "fan after the cap" + _NO_WIN),
        Column("n_kongs", pa.int8(), "kongs this player made (all kinds)"),
        Column("huazhu", pa.bool_(), "花猪 at an exhaustive draw"),
        Column("ready", pa.bool_(), "ready (听牌) at the end of the hand; players who did not win only"),
        Column("declined_wins", pa.int8(), "wins this player's bot could have taken and declined"),
        Column("declared", pa.bool_(), "declared ready (唱歌/跳舞, declare_ready) during the hand"),
        *(Column(name, pa.int32(), doc + " (base units)") for name, doc in zip(SCORE_COMPONENTS, _SCORE_DOCS,
                                                                              strict=True)),
        Column("score_total", pa.int32(), "the sum of the six components; 0 over the four players of a hand"),
    ],
    "wins": [
        Column("hand_id", pa.int64(), "as in hands"),
        Column("deal_id", pa.int64(), "as in hands"),
        Column("win_order", pa.int8(), "win event number in the hand (一炮多响 partners share it)"),
        Column("winner", pa.int8(), "winning seat"),
        Column("payer", pa.int8(), "the single paying seat; -1 = every player still in pays (self-draw)"),
        Column("n_payers", pa.int8(), "payer shares: received = points × n_payers"),
        Column("kind", CAT, "discard/self_draw/rob_kong"),
        Column("tile", CAT, "winning tile, e.g. 5p"),
        Column("hand", pa.string(), "concealed tiles including the winning tile"),
        Column("melds", pa.string(), "melds set down, e.g. pung:5p,kong:7s,ckong:3m (\"\" = none)"),
        Column("context", pa.string(), "situational context as score flags, e.g. after_kong,last_tile"),
        Column("hand_type", CAT16, "report label"),
        *_flags("win"),
        Column("gen", pa.int8(), "as in players"),
        Column("fan", pa.int8(), "as in players"),
        Column("capped_fan", pa.int8(), "as in players"),
        Column("points", pa.int32(), "paid by each payer, base units (self-draw bonus included)"),
        Column("received", pa.int32(), "total the winner received for this win, base units"),
        Column("turn", pa.int16(), "discards made before the win"),
    ],
}
# Columns appended when the rule set has a ``session:`` block (absent otherwise: logs without sessions are
# unchanged).
SESSION_COLUMNS: dict[str, list[Column]] = {
    "hands": [Column("session_id", pa.int64(), "the session (hand_id // K; under duplicate 4·(deal_id // K) + "
                     "rotation)"),
              Column("hand_in_session", pa.int16(), "0 … K−1 (deal_id % K)")],
    "players": [Column("session_id", pa.int64(), "as in hands"),
                Column("hand_in_session", pa.int16(), "as in hands"),
                Column("bankroll", pa.float64(), "the player's balance after this hand, in the session's money")],
    "wins": [],
}


def columns(table: str, sessions: bool = False) -> list[Column]:
    """The columns of a table, in file order (with the session columns when ``sessions``)."""
    return COLUMNS[table] + (SESSION_COLUMNS[table] if sessions else [])


def type_name(t: pa.DataType) -> str:
    """How docs/logs.md writes an Arrow type: ``int8``, ``string``, ``dictionary<int8,string>``."""
    if pa.types.is_dictionary(t):
        return f"dictionary<{t.index_type},{t.value_type}>"
    return {"double": "float64", "float": "float32"}.get(str(t), str(t))


def numpy_dtype(t: pa.DataType) -> np.dtype | None:
    """The numpy dtype of a numeric or bool column (what ``simulator.records`` builds), None for text and
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
NULL_IF_NO_WIN = {"hands": (), "players": ("win_order", "win_turn", "gen", "fan", "capped_fan"), "wins": ()}
