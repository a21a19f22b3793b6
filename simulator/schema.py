"""The Parquet log schema (documented for users in ``docs/logs.md``): one source of truth for writers and tests.

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

import pyarrow as pa

from simulator.rules import FLAGS

PARTITION = "variant"  # the hive partition key of the table directories: a column readers take from the path
CAT = pa.dictionary(pa.int8(), pa.string())
CAT16 = pa.dictionary(pa.int16(), pa.string())

HANDS = pa.schema([
    ("hand_id", pa.int64()),       # global hand index: seeds, dealer and pairing across variants
    ("deal_id", pa.int64()),       # wall index (= hand_id unless the study plays duplicate)
    ("rotation", pa.int8()),       # bot seating rotation of a duplicate deal (0 otherwise)
    ("dealer", pa.int8()),
    ("exchange", CAT),             # 换三张 direction used: none/clockwise/counterclockwise/opposite
    ("n_winners", pa.int8()),      # players who won (血流: at least once)
    ("n_wins", pa.int16()),        # wins (rows of the wins table); > n_winners only under mode: xueliu
    ("exhaustive_draw", pa.bool_()),  # 流局: wall empty with two or more players still in
    ("tiles_left", pa.int8()),
    ("n_kongs", pa.int8()),
    ("turns", pa.int16()),         # discards made in the hand
])

_FLAG_FIELDS = [(f, pa.bool_()) for f in FLAGS]

PLAYERS = pa.schema([
    ("hand_id", pa.int64()),
    ("deal_id", pa.int64()),
    ("seat", pa.int8()),
    ("bot", CAT),
    ("dealt", pa.string()),        # tiles dealt, before any exchange, RULES.md notation
    ("start_shanten", pa.int8()),  # 缺一门 shanten after the exchange (dealer: of 14 tiles)
    ("void_suit", CAT),            # m/p/s, null under void_suit: none
    ("won", pa.bool_()),
    ("win_order", pa.int8()),      # 1 = first win event of the hand (一炮多响 partners share it), null = no win
    ("win_kind", CAT),             # discard/self_draw/rob_kong, null = no win
    ("win_turn", pa.int16()),      # discards made before the win, null = no win
    ("hand_type", CAT16),          # null = no win
    *_FLAG_FIELDS,                 # pattern flags of the win (all false = no win)
    ("gen", pa.int8()),            # 根 as scored (after long_uses_gen), null = no win
    ("fan", pa.int8()),            # fan after extras, before the cap, null = no win
    ("capped_fan", pa.int8()),     # null = no win
    ("n_kongs", pa.int8()),        # kongs this player made (all kinds)
    ("huazhu", pa.bool_()),        # 花猪 at an exhaustive draw
    ("ready", pa.bool_()),         # ready (听牌) at the end of the hand, players who did not win only
    ("declined_wins", pa.int8()),  # wins this player's bot could have taken and declined
    ("declared", pa.bool_()),      # declared ready (唱歌/跳舞, declare_ready) during the hand
    ("score_win", pa.int32()),
    ("score_kong", pa.int32()),
    ("score_transfer", pa.int32()),
    ("score_huazhu", pa.int32()),
    ("score_chadajiao", pa.int32()),
    ("score_refund", pa.int32()),
    ("score_total", pa.int32()),
])

WINS = pa.schema([
    ("hand_id", pa.int64()),
    ("deal_id", pa.int64()),
    ("win_order", pa.int8()),
    ("winner", pa.int8()),
    ("payer", pa.int8()),          # the single paying seat; -1 = every player still in pays (self-draw)
    ("n_payers", pa.int8()),
    ("kind", CAT),                 # discard/self_draw/rob_kong
    ("tile", CAT),                 # winning tile, e.g. 5p
    ("hand", pa.string()),         # concealed tiles including the winning tile
    ("melds", pa.string()),        # e.g. pung:5p,kong:7s,ckong:3m ("" = none)
    ("context", pa.string()),      # situational context as score flags, e.g. after_kong,last_tile
    ("hand_type", CAT16),
    *_FLAG_FIELDS,
    ("gen", pa.int8()),
    ("fan", pa.int8()),
    ("capped_fan", pa.int8()),
    ("points", pa.int32()),        # paid by each payer, base units (self-draw bonus included)
    ("received", pa.int32()),      # total the winner received for this win, base units
    ("turn", pa.int16()),
])

TABLES = {"hands": HANDS, "players": PLAYERS, "wins": WINS}
# Columns appended when the rule set has a ``session:`` block (absent otherwise: logs without sessions are
# unchanged). ``bankroll``: the player's balance after the hand, in the session's money (docs/logs.md).
SESSION_FIELDS = {
    "hands": [("session_id", pa.int64()), ("hand_in_session", pa.int16())],
    "players": [("session_id", pa.int64()), ("hand_in_session", pa.int16()), ("bankroll", pa.float64())],
    "wins": [],
}
SESSION_TABLES = {name: pa.schema([*schema, *SESSION_FIELDS[name]]) for name, schema in TABLES.items()}


def tables(sessions: bool) -> dict[str, pa.Schema]:
    """The three tables' schemas of a run with or without sessions."""
    return SESSION_TABLES if sessions else TABLES
# Integer columns that are null when the player did not win: the engine's −1 there is written as null.
NULL_IF_NO_WIN = {"hands": (), "players": ("win_order", "win_turn", "gen", "fan", "capped_fan"), "wins": ()}
SCORE_COMPONENTS = ("score_win", "score_kong", "score_transfer", "score_huazhu", "score_chadajiao",
                    "score_refund")
