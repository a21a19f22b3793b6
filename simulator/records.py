"""Compiled result arrays → the columns of the ``hands``, ``players`` and ``wins`` tables (simulator.schema).

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
from numba import njit

from simulator import schema
from simulator import state as S
from simulator.evaluate import (
    CTX_AFTER_KONG,
    CTX_DANCE,
    CTX_DEALER,
    CTX_FIRST_DRAW,
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_SING,
)
from simulator.rules import BOT_LABELS, EXCHANGES, FLAGS, HAND_TYPES
from simulator.schema import SCORE_COMPONENTS
from simulator.state import BatchResult
from simulator.tiles import N_KINDS, SUITS, tile_str
from simulator.vocab import MELD_NAMES, WIN_KINDS

CONTEXT_NAMES = ((CTX_AFTER_KONG, "after_kong"), (CTX_KONG_DISCARD, "after_own_kong_discard"),
                 (CTX_LAST_TILE, "last_tile"), (CTX_FIRST_DRAW, "first_draw"), (CTX_DEALER, "dealer"),
                 (CTX_SING, "sing"), (CTX_DANCE, "dance"))
TILE_NAMES = tuple(tile_str(k) for k in range(N_KINDS))
_SUIT_BYTES = np.frombuffer(SUITS.encode(), np.uint8).copy()
_MELD_BYTES = np.zeros((4, 6), np.uint8)
for _i, _name in enumerate(MELD_NAMES):
    _MELD_BYTES[_i, :len(_name)] = np.frombuffer(_name.encode(), np.uint8)
_MELD_LEN = np.array([len(x) for x in MELD_NAMES], np.int64)


@njit(cache=True, _nrt=True)
def _notation_utf8(counts, suits):
    """ASCII notation (``123m55p``) of each row of ``counts: uint8[m, 27]``: ``(data, offsets)`` of a string array.

    Branch-free for counts up to 4: a rank's digit is written four times and the position advances by its count
    (the buffer has 4 bytes of slack); the suit letter is always written and kept only if the suit has tiles.
    """
    m = counts.shape[0]
    total = 0
    for i in range(m):
        for k in range(counts.shape[1]):
            total += counts[i, k]
    data = np.empty(total + 3 * m + 4, np.uint8)
    offsets = np.empty(m + 1, np.int32)
    pos = 0
    for i in range(m):
        offsets[i] = pos
        for s in range(3):
            start = pos
            for r in range(9):
                c = counts[i, 9 * s + r]
                d = np.uint8(49 + r)  # '1' + r
                if c <= 4:
                    data[pos] = d
                    data[pos + 1] = d
                    data[pos + 2] = d
                    data[pos + 3] = d
                    pos += c
                else:
                    for _ in range(c):
                        data[pos] = d
                        pos += 1
            data[pos] = suits[s]
            pos += pos > start
    offsets[m] = pos
    return data[:pos], offsets


@njit(cache=True, _nrt=True)
def _melds_utf8(mk, mt, nmelds, suits, names, name_len):
    """``pung:5p,kong:7s,ckong:3m`` for each row (melds in the order they were made): ``(data, offsets)``."""
    m = mk.shape[0]
    data = np.empty(9 * mk.shape[1] * m, np.uint8)  # "ckong:3m," at most per meld
    offsets = np.empty(m + 1, np.int32)
    pos = 0
    for i in range(m):
        offsets[i] = pos
        for j in range(nmelds[i]):
            if j > 0:
                data[pos] = 44  # ','
                pos += 1
            kind = mk[i, j]
            for c in range(name_len[kind]):
                data[pos] = names[kind, c]
                pos += 1
            data[pos] = 58  # ':'
            data[pos + 1] = 49 + mt[i, j] % 9
            data[pos + 2] = suits[mt[i, j] // 9]
            pos += 3
    offsets[m] = pos
    return data[:pos], offsets


def _string_array(data: np.ndarray, offsets: np.ndarray) -> pa.StringArray:
    """Arrow string array over compiled output (no nulls)."""
    return pa.StringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))


def notation_array(counts: np.ndarray) -> pa.StringArray:
    """Tile notation of count rows ``uint8[m, 27]`` as an Arrow string array."""
    return _string_array(*_notation_utf8(np.ascontiguousarray(counts, dtype=np.uint8), _SUIT_BYTES))


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


def _flag_columns(flags: np.ndarray) -> dict[str, np.ndarray]:
    """One bool column per pattern flag bit (each a contiguous row of one vectorised unpacking)."""
    bits = (np.asarray(flags, dtype=np.int64)[None, :] >> _FLAG_SHIFTS[:, None]) & 1
    return dict(zip(FLAGS, bits.astype(bool), strict=True))


_FLAG_SHIFTS = np.arange(len(FLAGS), dtype=np.int64)


def _typed(table: str, cols: dict) -> dict:
    """``cols`` in schema order, each numeric or bool column cast to its schema dtype (the one declaration of the
    log columns, :mod:`simulator.schema`); ``ValueError`` when the names are not the schema's."""
    declared = schema.columns(table, "session_id" in cols)
    if set(cols) != {c.name for c in declared}:
        names = {c.name for c in declared}
        raise ValueError(f"{table}: columns {sorted(set(cols) ^ names)} differ from simulator.schema")
    out = {}
    for c in declared:
        dtype = schema.numpy_dtype(c.type)
        out[c.name] = cols[c.name] if dtype is None else np.asarray(cols[c.name]).astype(dtype, copy=False)
    return out


def to_columns(raw: BatchResult, *, encoded: bool = False) -> dict[str, dict]:
    """The three tables' columns (the names and, for numbers and flags, the numpy dtypes of
    :data:`simulator.schema.COLUMNS`, in its order) from :func:`hands.run_batch` output.

    Text and categorical columns are object arrays of ``str`` (None = not applicable); with ``encoded``, text
    columns are ``pa.StringArray`` and categorical ones :class:`Coded` (for :func:`simulator.encode.encode_tables`).
    """
    hand_ids, deal_ids, rot = raw.hand_ids, raw.deal_ids, raw.rotations
    h, p, w = raw.h, raw.p, raw.w
    hands = {
        "hand_id": hand_ids, "deal_id": deal_ids, "rotation": rot,
        "dealer": h[:, S.H_DEALER],
        "exchange": Coded(h[:, S.H_EXCHANGE], EXCHANGES),
        "n_winners": h[:, S.H_NWINNERS],
        "n_wins": h[:, S.H_NWINS],
        "exhaustive_draw": h[:, S.H_EXHAUSTIVE],
        "tiles_left": h[:, S.H_TILES_LEFT],
        "n_kongs": h[:, S.H_NKONGS],
        "turns": h[:, S.H_TURNS],
    }
    won = p[:, S.PL_WON].astype(bool)
    scores = p[:, S.PL_SCORE:S.PL_SCORE + S.N_COMP]
    players = {
        "hand_id": np.repeat(hand_ids, 4), "deal_id": np.repeat(deal_ids, 4),
        "seat": p[:, S.PL_SEAT],
        "bot": Coded(p[:, S.PL_BOT], raw.bot_labels or BOT_LABELS),  # + the run's Python bots' names
        "dealt": notation_array(raw.dealt),
        "start_shanten": p[:, S.PL_START_SH],
        "void_suit": Coded(p[:, S.PL_VOID], tuple(SUITS)),
        "won": won,
        "win_order": p[:, S.PL_WIN_ORDER],
        "win_kind": Coded(p[:, S.PL_WIN_KIND], WIN_KINDS),
        "win_turn": p[:, S.PL_WIN_TURN],
        "hand_type": Coded(p[:, S.PL_HAND_TYPE], HAND_TYPES),
        **_flag_columns(p[:, S.PL_FLAGS]),
        "gen": p[:, S.PL_GEN],
        "fan": p[:, S.PL_FAN],
        "capped_fan": p[:, S.PL_CAPPED],
        "n_kongs": p[:, S.PL_NKONGS],
        "huazhu": p[:, S.PL_HUAZHU],
        "ready": p[:, S.PL_READY],
        "declined_wins": p[:, S.PL_DECLINED],
        "declared": p[:, S.PL_DECLARED],
        **{name: scores[:, c] for c, name in enumerate(SCORE_COMPONENTS)},
        "score_total": scores.sum(axis=1),
    }
    wh = raw.w_hand
    wins = {
        "hand_id": hand_ids[wh], "deal_id": deal_ids[wh],
        "win_order": w[:, S.W_ORDER],
        "winner": w[:, S.W_WINNER],
        "payer": w[:, S.W_PAYER],
        "n_payers": w[:, S.W_NPAYERS],
        "kind": Coded(w[:, S.W_KIND], WIN_KINDS),
        "tile": Coded(w[:, S.W_TILE], TILE_NAMES),
        "hand": notation_array(raw.wconc),
        "melds": _string_array(*_melds_utf8(raw.wmk, raw.wmt, w[:, S.W_NMELDS], _SUIT_BYTES, _MELD_BYTES,
                                               _MELD_LEN)),
        "context": _contexts(w[:, S.W_CTX]),
        "hand_type": Coded(w[:, S.W_HAND_TYPE], HAND_TYPES),
        **_flag_columns(w[:, S.W_FLAGS]),
        "gen": w[:, S.W_GEN],
        "fan": w[:, S.W_FAN],
        "capped_fan": w[:, S.W_CAPPED],
        "points": w[:, S.W_POINTS],
        "received": w[:, S.W_RECEIVED],
        "turn": w[:, S.W_TURN],
    }
    if raw.session_id is not None:  # simulator.sessions: the columns of schema.SESSION_FIELDS
        sid, k = raw.session_id, raw.hand_in_session
        hands.update(session_id=sid, hand_in_session=k)
        players.update(session_id=np.repeat(sid, 4), hand_in_session=np.repeat(k, 4),
                       bankroll=raw.bankroll)
    out = {t: _typed(t, cols) for t, cols in (("hands", hands), ("players", players), ("wins", wins))}
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
