"""Compiled result arrays → the columns of the ``hands``, ``players`` and ``wins`` tables (simulator.schema).

Runs once per batch after the compiled engine. Strings are built without a Python loop per tile: the tile
notation of every hand is written as ASCII bytes by a compiled function and viewed as fixed-width byte strings;
categorical columns are lookups into small object arrays; the ``context`` strings are formatted once per
distinct context value.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator import state as S
from simulator.evaluate import CTX_AFTER_KONG, CTX_DEALER, CTX_FIRST_DRAW, CTX_KONG_DISCARD, CTX_LAST_TILE
from simulator.rules import BOTS, EXCHANGES, FLAGS, HAND_TYPES
from simulator.tiles import N_KINDS, SUITS, tile_str

HAND_WIDTH = 18    # 14 digits + 3 suit letters, NUL padded
MELDS_WIDTH = 40   # four of "ckong:3m," at most
MELD_NAMES = ("", "pung", "kong", "ckong")  # evaluate.MELD_PUNG/KONG/CKONG
CONTEXT_NAMES = ((CTX_AFTER_KONG, "after_kong"), (CTX_KONG_DISCARD, "after_own_kong_discard"),
                 (CTX_LAST_TILE, "last_tile"), (CTX_FIRST_DRAW, "first_draw"), (CTX_DEALER, "dealer"))
_SUIT_BYTES = np.frombuffer(SUITS.encode(), np.uint8).copy()
_MELD_BYTES = np.zeros((4, 6), np.uint8)
for _i, _name in enumerate(MELD_NAMES):
    _MELD_BYTES[_i, :len(_name)] = np.frombuffer(_name.encode(), np.uint8)
_MELD_LEN = np.array([len(x) for x in MELD_NAMES], np.int64)


@njit(cache=True)
def _notation_bytes(counts, width, suits):
    """ASCII notation (``123m55p``) of each row of ``counts: uint8[m, 27]``, NUL padded to ``width``."""
    out = np.zeros((counts.shape[0], width), np.uint8)
    for i in range(counts.shape[0]):
        pos = 0
        for s in range(3):
            start = pos
            for r in range(9):
                for _ in range(counts[i, 9 * s + r]):
                    out[i, pos] = 49 + r  # '1' + r
                    pos += 1
            if pos > start:
                out[i, pos] = suits[s]
                pos += 1
    return out


@njit(cache=True)
def _melds_bytes(mk, mt, nmelds, width, suits, names, name_len):
    """``pung:5p,kong:7s,ckong:3m`` for each row (melds in the order they were made)."""
    out = np.zeros((mk.shape[0], width), np.uint8)
    for i in range(mk.shape[0]):
        pos = 0
        for j in range(nmelds[i]):
            if j > 0:
                out[i, pos] = 44  # ','
                pos += 1
            kind = mk[i, j]
            for c in range(name_len[kind]):
                out[i, pos] = names[kind, c]
                pos += 1
            out[i, pos] = 58  # ':'
            out[i, pos + 1] = 49 + mt[i, j] % 9
            out[i, pos + 2] = suits[mt[i, j] // 9]
            pos += 3
    return out


def _strings(byte_rows: np.ndarray) -> np.ndarray:
    """Object array of ``str`` from NUL-padded ASCII rows."""
    width = byte_rows.shape[1]
    fixed = np.ascontiguousarray(byte_rows).view(f"S{width}").ravel()
    return fixed.astype(f"U{width}").astype(object)


def notation(counts: np.ndarray) -> np.ndarray:
    """Tile notation strings of count rows ``uint8[m, 27]`` (object array)."""
    return _strings(_notation_bytes(np.ascontiguousarray(counts, dtype=np.uint8), HAND_WIDTH, _SUIT_BYTES))


def _lookup(names, idx: np.ndarray) -> np.ndarray:
    """Categorical strings by index; −1 → None."""
    table = np.array([None, *names], dtype=object)
    return table[np.asarray(idx, dtype=np.int64) + 1]


def context_string(ctx: int) -> str:
    return ",".join(name for bit, name in CONTEXT_NAMES if ctx & bit)


def _contexts(ctx: np.ndarray) -> np.ndarray:
    """``context`` strings, formatted once per distinct context value."""
    uniq, inv = np.unique(ctx, return_inverse=True)
    names = np.empty(len(uniq), dtype=object)
    names[:] = [context_string(int(c)) for c in uniq]
    return names[inv.ravel()]


def _flag_columns(flags: np.ndarray) -> dict[str, np.ndarray]:
    return {name: ((flags >> bit) & 1).astype(bool) for bit, name in enumerate(FLAGS)}


def to_columns(raw: dict) -> dict[str, dict[str, np.ndarray]]:
    """The three tables' columns (schema names without ``variant``) from :func:`engine.run_batch` output."""
    hand_ids, deal_ids, rot = raw["hand_ids"], raw["deal_ids"], raw["rotations"]
    h, p, w = raw["h"], raw["p"], raw["w"]
    hands = {
        "hand_id": hand_ids, "deal_id": deal_ids, "rotation": rot.astype(np.int8),
        "dealer": h[:, S.H_DEALER].astype(np.int8),
        "exchange": _lookup(EXCHANGES, h[:, S.H_EXCHANGE]),
        "n_winners": h[:, S.H_NWINNERS].astype(np.int8),
        "exhaustive_draw": h[:, S.H_EXHAUSTIVE].astype(bool),
        "tiles_left": h[:, S.H_TILES_LEFT].astype(np.int8),
        "n_kongs": h[:, S.H_NKONGS].astype(np.int8),
        "turns": h[:, S.H_TURNS].astype(np.int16),
    }
    won = p[:, S.PL_WON].astype(bool)
    scores = p[:, S.PL_SCORE:S.PL_SCORE + S.N_COMP]
    players = {
        "hand_id": np.repeat(hand_ids, 4), "deal_id": np.repeat(deal_ids, 4),
        "seat": p[:, S.PL_SEAT].astype(np.int8),
        "bot": _lookup(BOTS, p[:, S.PL_BOT]),
        "dealt": notation(raw["dealt"]),
        "start_shanten": p[:, S.PL_START_SH].astype(np.int8),
        "void_suit": _lookup(tuple(SUITS), p[:, S.PL_VOID]),
        "won": won,
        "win_order": p[:, S.PL_WIN_ORDER].astype(np.int8),
        "win_kind": _lookup(S.WIN_KINDS, p[:, S.PL_WIN_KIND]),
        "win_turn": p[:, S.PL_WIN_TURN].astype(np.int16),
        "hand_type": _lookup(HAND_TYPES, p[:, S.PL_HAND_TYPE]),
        **_flag_columns(p[:, S.PL_FLAGS]),
        "gen": p[:, S.PL_GEN].astype(np.int8),
        "fan": p[:, S.PL_FAN].astype(np.int8),
        "capped_fan": p[:, S.PL_CAPPED].astype(np.int8),
        "n_kongs": p[:, S.PL_NKONGS].astype(np.int8),
        "huazhu": p[:, S.PL_HUAZHU].astype(bool),
        "ready": p[:, S.PL_READY].astype(bool),
        "declined_wins": p[:, S.PL_DECLINED].astype(np.int8),
        **{name: scores[:, c].astype(np.int32) for c, name in enumerate(
            ("score_win", "score_kong", "score_transfer", "score_huazhu", "score_chadajiao", "score_refund"))},
        "score_total": scores.sum(axis=1).astype(np.int32),
    }
    wh = raw["w_hand"]
    wins = {
        "hand_id": hand_ids[wh], "deal_id": deal_ids[wh],
        "win_order": w[:, S.W_ORDER].astype(np.int8),
        "winner": w[:, S.W_WINNER].astype(np.int8),
        "payer": w[:, S.W_PAYER].astype(np.int8),
        "n_payers": w[:, S.W_NPAYERS].astype(np.int8),
        "kind": _lookup(S.WIN_KINDS, w[:, S.W_KIND]),
        "tile": _lookup(tuple(tile_str(k) for k in range(N_KINDS)), w[:, S.W_TILE]),
        "hand": notation(raw["wconc"]),
        "melds": _strings(_melds_bytes(raw["wmk"], raw["wmt"], w[:, S.W_NMELDS], MELDS_WIDTH, _SUIT_BYTES,
                                       _MELD_BYTES, _MELD_LEN)),
        "context": _contexts(w[:, S.W_CTX]),
        "hand_type": _lookup(HAND_TYPES, w[:, S.W_HAND_TYPE]),
        **_flag_columns(w[:, S.W_FLAGS]),
        "gen": w[:, S.W_GEN].astype(np.int8),
        "fan": w[:, S.W_FAN].astype(np.int8),
        "capped_fan": w[:, S.W_CAPPED].astype(np.int8),
        "points": w[:, S.W_POINTS].astype(np.int32),
        "received": w[:, S.W_RECEIVED].astype(np.int32),
        "turn": w[:, S.W_TURN].astype(np.int16),
    }
    return {"hands": hands, "players": players, "wins": wins}


EVENT_FIELDS = ("type", "seat", "tile", "amount", "a", "b")


def event_columns(raw: dict) -> dict[str, np.ndarray]:
    """The recorded event log as columns: ``hand_row`` (row of the hand in the batch) + ``EVENT_FIELDS``."""
    ev = raw["events"]
    out = {"hand_row": ev[:, 0].astype(np.int64)}
    for i, name in enumerate(EVENT_FIELDS):
        out[name] = ev[:, 1 + i].astype(np.int64)
    return out
