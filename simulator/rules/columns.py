"""The log column table, numba-free: per column of the ``hands``, ``players`` and ``wins`` logs its name, Arrow type,
description, source in the engine's output, null rule and dictionary (:data:`COLUMNS`), declared once. The
engine's output slots follow it (:func:`row_slots`: ``simulator.kernel.state`` numbers its ``H_*``, ``PL_*`` and
``W_*`` constants from it, so a column is this table's row and the one compiled line that fills its slot,
``simulator.engine.batch``); ``simulator.logs.schema`` derives the Arrow schemas from it, ``simulator.logs.records``
reads each column from its declared source, ``simulator.logs.encode`` writes it with its null rule and fixed
dictionary, ``analysis.load`` builds its polars schemas from it, and a test checks docs/logs.md's column tables
against it. Compiled code embeds the slot numbers, so editing this module recompiles the engine (like the rule key
table, ``simulator.rules.keys``).

A column's ``source`` says where ``records.to_columns`` reads it (no other place maps slots to columns):

- ``"PL_FAN"``: a slot of the table's integer rows, by the name of its constant in ``simulator.kernel.state``
  (``H_*`` of ``BatchResult.h`` for ``hands``, ``PL_*`` of ``.p`` for ``players``, ``W_*`` of ``.w`` for ``wins``);
  a new name is a new slot (numbered here, filled by the engine);
- ``"PL_SCORE+2"``: a slot plus an offset (the score components); ``"PL_FLAGS@3"``: bit 3 of a slot (the flags);
- ``"context:W_CTX"``, ``"melds:W_NMELDS"``: a slot turned into text by one of ``records``' readers;
- ``"=hand_id"``: a value that is no slot of the rows (ids, the dealt and winning tiles as text, the session
  columns, ``score_total``), computed by ``records.DERIVED[name]``.
"""

from __future__ import annotations

from typing import NamedTuple

import pyarrow as pa

from simulator.rules.bot_table import BOT_LABELS, PYTHON_BOT
from simulator.rules.keys import choices
from simulator.rules.vocab import FLAGS, HAND_TYPES
from simulator.vocab import WIN_KINDS

# The log format: the version of what a Parquet file's bytes mean — its columns, their types and the
# dictionaries of the categorical columns (simulator.logs.encode.VOCABULARIES). The `bot` dictionary is append-only: the
# labels of format 1 (the five bots, then `python`), then the bots added since, by their stable ids, as far as the
# file uses them, then the run's Python bots by name (simulator.rules.bot_table.file_labels): a new bot changes no file
# that does not seat it, and format-1 readers read it (categoricals are read as strings). Recorded in every
# manifest and file (`log_format`); `--resume` refuses to add chunks of another format to
# a variant. Bump it with any change of a column, a type or a dictionary (tests/test_survive.py pins the schema
# and dictionaries of each format: it fails until the bump). Format 2: the players' `claims` column.
LOG_FORMAT = 2
CAT = pa.dictionary(pa.int8(), pa.string())
CAT16 = pa.dictionary(pa.int16(), pa.string())

# Null rules (``Column.null``): how a column's "not applicable" is written. Never a sentinel number in a file.
NEVER = ""            # always a value
NO_WIN = "no_win"     # an integer the engine writes as −1 for a player who did not win: null in the file
NO_CODE = "no_code"   # a categorical whose engine code −1 means "not applicable": null in the file

# The suits and tiles as the logs write them (simulator.kernel.tiles' notation; not imported: analysis reads this module
# and must not load the tile code; tests/test_log_columns.py checks they agree).
SUITS = "mps"
TILE_NAMES = tuple(f"{r}{s}" for s in SUITS for r in range(1, 10))


class Column(NamedTuple):
    """One log column: its name, Arrow type, a one-line description (docs/logs.md says more; a test checks that its
    column tables list exactly these names and types), where the engine's output holds it (``source``, see the
    module docstring), its null rule (``NEVER``, ``NO_WIN``, ``NO_CODE``) and, for a categorical, the fixed
    dictionary every file carries (``dictionary``) and, where they differ from it, the names of the engine's codes
    (``codes``: ``exchange`` codes index the rule's choices, ``random`` included, which is never a direction
    used)."""

    name: str
    type: pa.DataType
    doc: str
    source: str = ""
    null: str = NEVER
    dictionary: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()

    @property
    def code_names(self) -> tuple[str, ...]:
        """The names of the engine's integer codes of a categorical column."""
        return self.codes or self.dictionary


def _cat(name: str, doc: str, source: str, dictionary: tuple[str, ...], *, null: str = NEVER,
         wide: bool = False, codes: tuple[str, ...] = ()) -> Column:
    return Column(name, CAT16 if wide else CAT, doc, source, null, dictionary, codes)


def _flags(what: str, slot: str) -> list[Column]:
    return [Column(f, pa.bool_(), f"pattern flag of the {what} (docs/spec.md §3; all false = no win)", f"{slot}@{i}")
            for i, f in enumerate(FLAGS)]


def _ids() -> list[Column]:
    """``hand_id`` and ``deal_id`` of a players or wins row: its hand's."""
    return [Column(name, pa.int64(), "as in hands", f"={name}") for name in ("hand_id", "deal_id")]


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
        Column("hand_id", pa.int64(), "global hand index: seeds, dealer, pairing across variants", "=hand_id"),
        Column("deal_id", pa.int64(), "wall index (= hand_id, or hand_id // 4 under duplicate)", "=deal_id"),
        Column("rotation", pa.int8(), "bot seating rotation of a duplicate deal, 0 otherwise", "=rotation"),
        Column("dealer", pa.int8(), "dealer seat", "H_DEALER"),
        _cat("exchange", "换三张 direction used: none/clockwise/counterclockwise/opposite", "H_EXCHANGE",
             tuple(e for e in choices("exchange_three") if e != "random"),
             codes=choices("exchange_three")),
        Column("n_winners", pa.int8(), "players who won in this hand (血流: each counted once)", "H_NWINNERS"),
        Column("n_wins", pa.int16(), "wins in this hand = its rows in wins (> n_winners only under mode: xueliu)",
               "H_NWINS"),
        Column("exhaustive_draw", pa.bool_(), "流局: the wall ran out with two or more players still in",
               "H_EXHAUSTIVE"),
        Column("tiles_left", pa.int8(), "tiles left in the wall when the hand ended", "H_TILES_LEFT"),
        Column("n_kongs", pa.int8(), "kongs made in the hand (all kinds)", "H_NKONGS"),
        Column("turns", pa.int16(), "discards made in the hand", "H_TURNS"),
    ],
    "players": [
        *_ids(),
        Column("seat", pa.int8(), "0-3 in turn order", "PL_SEAT"),
        _cat("bot", "bot in this seat (a Python bot by the name its seat gives)", "PL_BOT", BOT_LABELS[:PYTHON_BOT + 1],
             codes=BOT_LABELS),
        Column("dealt", pa.string(), "tiles dealt, before any exchange, docs/spec.md notation", "=dealt"),
        Column("start_shanten", pa.int8(), "缺一门 shanten after the exchange (dealer: of 14 tiles); -1 = complete",
               "PL_START_SH"),
        _cat("void_suit", "declared void suit m/p/s; null under void_suit: none", "PL_VOID", tuple(SUITS),
             null=NO_CODE),
        Column("won", pa.bool_(), "this player won (血流: at least once; the win columns describe its first)",
               "PL_WON"),
        Column("win_order", pa.int8(), "1 = first win event of the hand (一炮多响 partners share it)" + _NO_WIN,
               "PL_WIN_ORDER", NO_WIN),
        _cat("win_kind", "discard/self_draw/rob_kong" + _NO_WIN, "PL_WIN_KIND", WIN_KINDS, null=NO_CODE),
        Column("win_turn", pa.int16(), "discards made before the win" + _NO_WIN, "PL_WIN_TURN", NO_WIN),
        _cat("hand_type", "report label of the win (docs/spec.md §3)" + _NO_WIN, "PL_HAND_TYPE", HAND_TYPES,
             null=NO_CODE, wide=True),
        *_flags("win", "PL_FLAGS"),
        Column("gen", pa.int8(), "根 as scored (after long_uses_gen)" + _NO_WIN, "PL_GEN", NO_WIN),
        Column("fan", pa.int8(), "fan after extras, before the cap" + _NO_WIN, "PL_FAN", NO_WIN),
        Column("capped_fan", pa.int8(), "fan after the cap" + _NO_WIN, "PL_CAPPED", NO_WIN),
        Column("n_kongs", pa.int8(), "kongs this player made (all kinds)", "PL_NKONGS"),
        Column("claims", pa.int8(), "discards this player claimed: pungs and exposed kongs (a 加杠 counts once, as "
               "its pung); 0 = 门清, concealed kongs only", "PL_CLAIMS"),
        Column("huazhu", pa.bool_(), "花猪 at an exhaustive draw", "PL_HUAZHU"),
        Column("ready", pa.bool_(), "ready (听牌) at the end of the hand; players who did not win only", "PL_READY"),
        Column("declined_wins", pa.int8(), "wins this player's bot could have taken and declined", "PL_DECLINED"),
        Column("declared", pa.bool_(), "declared ready (唱歌/跳舞, declare_ready) during the hand", "PL_DECLARED"),
        *(Column(name, pa.int32(), doc + " (base units)", f"PL_SCORE+{c}")
          for c, (name, doc) in enumerate(zip(SCORE_COMPONENTS, _SCORE_DOCS, strict=True))),
        Column("score_total", pa.int32(), "the sum of the six components; 0 over the four players of a hand",
               "=score_total"),
    ],
    "wins": [
        *_ids(),
        Column("win_order", pa.int8(), "win event number in the hand (一炮多响 partners share it)", "W_ORDER"),
        Column("winner", pa.int8(), "winning seat", "W_WINNER"),
        Column("payer", pa.int8(), "the single paying seat; -1 = every player still in pays (self-draw)", "W_PAYER"),
        Column("n_payers", pa.int8(), "payer shares: received = points × n_payers", "W_NPAYERS"),
        _cat("kind", "discard/self_draw/rob_kong", "W_KIND", WIN_KINDS),
        _cat("tile", "winning tile, e.g. 5p", "W_TILE", TILE_NAMES),
        Column("hand", pa.string(), "concealed tiles including the winning tile", "=hand"),
        Column("melds", pa.string(), "melds set down, e.g. pung:5p,kong:7s,ckong:3m (\"\" = none)",
               "melds:W_NMELDS"),
        Column("context", pa.string(), "situational context as score flags, e.g. after_kong,last_tile",
               "context:W_CTX"),
        _cat("hand_type", "report label", "W_HAND_TYPE", HAND_TYPES, wide=True),
        *_flags("win", "W_FLAGS"),
        Column("gen", pa.int8(), "as in players", "W_GEN"),
        Column("fan", pa.int8(), "as in players", "W_FAN"),
        Column("capped_fan", pa.int8(), "as in players", "W_CAPPED"),
        Column("points", pa.int32(), "paid by each payer, base units (self-draw bonus included)", "W_POINTS"),
        Column("received", pa.int32(), "total the winner received for this win, base units", "W_RECEIVED"),
        Column("turn", pa.int16(), "discards made before the win", "W_TURN"),
    ],
}
# Columns appended when the rule set has a ``session:`` block (absent otherwise: logs without sessions are
# unchanged).
SESSION_COLUMNS: dict[str, list[Column]] = {
    "hands": [Column("session_id", pa.int64(), "the session (hand_id // K; under duplicate 4·(deal_id // K) + "
                     "rotation)", "=session_id"),
              Column("hand_in_session", pa.int16(), "0 … K−1 (deal_id % K)", "=hand_in_session")],
    "players": [Column("session_id", pa.int64(), "as in hands", "=session_id"),
                Column("hand_in_session", pa.int16(), "as in hands", "=hand_in_session"),
                Column("bankroll", pa.float64(), "the player's balance after this hand, in the session's money",
                       "=bankroll")],
    "wins": [],
}


def columns(table: str, sessions: bool = False) -> list[Column]:
    """The columns of a table, in file order (with the session columns when ``sessions``)."""
    return COLUMNS[table] + (SESSION_COLUMNS[table] if sessions else [])



ROWS = {"hands": "H_", "players": "PL_", "wins": "W_"}  # the prefix of each table's slot constants


def slot_of(source: str) -> tuple[str, int, int]:
    """``(slot constant, offset, bit)`` of a slot source (``PL_FAN``, ``PL_SCORE+2``, ``PL_FLAGS@3``,
    ``melds:W_NMELDS``; bit −1 = the whole value)."""
    slot, _, bit = source.rpartition(":")[2].partition("@")
    slot, _, offset = slot.partition("+")
    return slot, int(offset or 0), int(bit) if bit else -1


def row_layout(table: str) -> tuple[dict[str, int], int]:
    """The slots of ``table``'s integer rows and the row's width, numbered in column order: each slot a column
    reads, at the first column that reads it, spanning the offsets read (``PL_SCORE+0`` … ``+5``: six slots). What
    ``simulator.kernel.state`` defines its ``H_*``/``PL_*``/``W_*`` constants and ``H_N``/``PL_N``/``W_N`` from
    (the engine may add slots of its own after these)."""
    slots: dict[str, int] = {}
    width = 0
    for c in COLUMNS[table]:
        if c.source.startswith("="):
            continue
        slot, offset, _ = slot_of(c.source)
        if not slot.startswith(ROWS[table]):
            raise ValueError(f"{table}.{c.name}: source {c.source!r} is not a {ROWS[table]}* slot")
        base = slots.setdefault(slot, width)
        width = max(width, base + offset + 1)
    return slots, width
