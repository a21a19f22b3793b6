"""The engine's Python-side buffers: per-deal seeds, hand ids → deals and rotations, and the batch output arrays
(:class:`BatchResult`, grown and trimmed here; :func:`batch_out` views them as the compiled
:class:`~simulator.kernel.state.BatchOut`)."""

from __future__ import annotations

import numpy as np

from simulator.kernel import state
from simulator.kernel.rng import seed_words, spawn_states
from simulator.kernel.state import (
    H_N,
    N_KINDS,
    PL_N,
    BatchOut,
    BatchResult,
)

XUELIU_ROWS_PER_HAND = 16  # at most this many win rows per hand the batch outputs start with (regrown when short)
EVENTS_PER_HAND = 320  # initial event-buffer rows per hand when recording (a typical hand logs ~150)


def deal_seeds(seed: int, deal_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(wall seeds, bot seeds)``, ``uint64[n]`` each: ``SeedSequence(seed, spawn_key=(deal_id,))
    .generate_state(2, uint64)`` for every deal, computed by the compiled copy in :mod:`simulator.kernel.rng`."""
    ids = np.ascontiguousarray(deal_ids, dtype=np.int64)
    if ids.size and ids.min() < 0:
        raise ValueError("hand ids must be non-negative")
    wall, bots = np.empty(ids.shape[0], np.uint64), np.empty(ids.shape[0], np.uint64)
    spawn_states(seed_words(seed), ids, wall, bots)
    return wall, bots


def split_ids(hand_ids: np.ndarray, duplicate: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(deal_id, rotation)`` of each hand id: hand_id = 4·deal_id + rotation under ``duplicate``."""
    if duplicate:
        return hand_ids // 4, hand_ids % 4
    return hand_ids.copy(), np.zeros_like(hand_ids)


def win_rows_per_hand(win_slots: int) -> int:
    """Win rows per hand the batch outputs start with, from the win records one hand can need
    (:func:`simulator.engine.loop.win_slots`, the one place the mode decides it): all of them (3), or where a hand
    can need many (血流) a generous typical count; the buffers grow when a batch needs more (:func:`grow_wins`)."""
    return min(win_slots, XUELIU_ROWS_PER_HAND)


def _win_arrays(rows: int) -> dict:
    """The BatchResult fields with one row per win, ``rows`` rows each."""
    return {"w": np.zeros((rows, state.W_N), np.int64), "w_hand": np.zeros(rows, np.int64),
            "wconc": np.zeros((rows, N_KINDS), np.uint8), "wmk": np.zeros((rows, 4), np.int8),
            "wmt": np.zeros((rows, 4), np.int8)}


WIN_FIELDS = tuple(_win_arrays(0))


def empty_raw(hand_ids: np.ndarray, deal_ids: np.ndarray, rotations: np.ndarray,
              rows_per_hand: int = state.MAX_WINS) -> BatchResult:
    """The output arrays of a batch of ``len(hand_ids)`` hands, with ``rows_per_hand`` win rows per hand and no
    events (see :func:`trim_raw`, :func:`grow_wins`)."""
    n = hand_ids.shape[0]
    return BatchResult(hand_ids, deal_ids, rotations, np.zeros((n, H_N), np.int64), np.zeros((4 * n, PL_N), np.int64),
                       np.zeros((4 * n, N_KINDS), np.uint8), **_win_arrays(rows_per_hand * n),
                       events=np.zeros((0, 1 + state.EV_W), np.int32))


def grow_wins(raw: BatchResult, rows: int) -> None:
    """Give the win arrays of ``raw`` at least ``rows`` rows, keeping the rows already written."""
    if raw.w.shape[0] >= rows:
        return
    for key, arr in _win_arrays(rows).items():
        old = getattr(raw, key)
        arr[:old.shape[0]] = old
        setattr(raw, key, arr)


def batch_out(raw: BatchResult, events: np.ndarray | None = None) -> BatchOut:
    """The output arrays of :func:`empty_raw` (and an event buffer: by default a one-row one, no events) as the
    :class:`~simulator.kernel.state.BatchOut` the compiled code writes into."""
    if events is None:
        events = np.zeros((1, 1 + state.EV_W), np.int32)
    return BatchOut(**{name: getattr(raw, name) for name in BatchOut._fields if name != "events"}, events=events)


def trim_raw(raw: BatchResult, nw: int) -> None:
    """Cut the win arrays of :func:`empty_raw` to the ``nw`` rows written."""
    for key in WIN_FIELDS:
        setattr(raw, key, getattr(raw, key)[:nw])
