"""The compiled hand engine: one hand from seeds, dealer, rules and bots to result arrays; batches of hands.

The whole hand loop is ``@njit(cache=True)`` over one :class:`~simulator.kernel.state.HandState` (named arrays, see
:mod:`simulator.kernel.state`); there is no Python object per tile or per turn. Compiled functions take the hand's
:class:`~simulator.kernel.state.Game` (suit table, rule parameters, bot ids, step interface), its state ``st``, the
seats' bot parameter rows ``bpar`` (kept apart: ``None`` for a simple line-up, which numba prunes) and a few scalars.

Flow of a hand (docs/spec.md §2; conventions where it is silent are in docs/rules.md, "Engine conventions"):
shuffle (wall stream) → deal (dealer 14, others 13) → 换三张 → 定缺 → dealer's first turn (天胡, 暗杠, discard)
→ [draw → self-draw win? → kong? → discard → claims: win > kong/pung] … until three have won (``xuezhan``), the
first win event (``single``) or the wall is empty (exhaustive draw → 退税, 查花猪, 查大叫). Under ``xueliu`` (血流成河)
a winner sets its winning tile aside and plays on with its hand locked (:func:`locked`) until the wall is empty.

Modules, each importing only those before it: :mod:`~simulator.engine.common` (rule indices, cached waits, small
predicates) < :mod:`~simulator.engine.setup` (deal, 换三张, 定缺), :mod:`~simulator.engine.wins` (who wins on a
tile, recording and paying wins), :mod:`~simulator.engine.declare` (唱歌/跳舞) < :mod:`~simulator.engine.turn`
(draw, own turn, discard, claims) < :mod:`~simulator.engine.batch` (a batch's hands seated from their bot specs and
written into preallocated outputs) < :mod:`~simulator.engine.loop` (:func:`play`, the one compiled entry: a batch
of hands, or one hand pausable at external seats; the state's allocation) < :mod:`~simulator.engine.buffers` (the
Python side: seeds, output buffers). This package re-exports the names other modules and tests use. Playing hands
from Python (:func:`simulator.hands.run_batch`, :func:`simulator.hands.play_hands`) sits above it, the compile plan
(:mod:`simulator.hands.precompile`) and the step path (:mod:`simulator.hands.game`).
"""

from simulator.engine.batch import end_hand, lineup_params, seat_hand, seat_params, write_outputs, write_player
from simulator.engine.buffers import (
    EVENTS_PER_HAND,
    batch_out,
    deal_seeds,
    empty_raw,
    grow_wins,
    split_ids,
    trim_raw,
    win_rows_per_hand,
)
from simulator.engine.common import (
    HOW_DEALER_FIRST,
    HOW_DREW,
    HOW_TAIL,
    MAX_STEPS,
    keeps_waits,
    locked,
    refresh_waits,
)
from simulator.engine.declare import locked_kong_options, offer_declare
from simulator.engine.loop import (
    SNAPSHOT_FIELDS,
    alloc,
    alloc_io,
    copy_state,
    finish,
    play,
    start_hand,
    win_slots,
)
from simulator.engine.setup import declare_voids, exchange_three
from simulator.engine.turn import discard_turn, kong_turn, own_turn, self_draw_ctx
from simulator.engine.wins import locked_kongs, play_on, record_win, settle_ron, settle_self_draw, takes_win

__all__ = [
    "EVENTS_PER_HAND", "HOW_DEALER_FIRST", "HOW_DREW", "HOW_TAIL", "MAX_STEPS", "SNAPSHOT_FIELDS", "alloc",
    "alloc_io", "batch_out", "copy_state", "deal_seeds", "declare_voids", "discard_turn", "empty_raw", "end_hand",
    "exchange_three", "finish", "grow_wins", "keeps_waits", "kong_turn", "lineup_params", "locked",
    "locked_kong_options", "locked_kongs", "offer_declare", "own_turn", "play", "play_on", "record_win",
    "refresh_waits", "seat_hand", "seat_params", "self_draw_ctx", "settle_ron", "settle_self_draw", "split_ids",
    "start_hand", "takes_win", "trim_raw", "win_rows_per_hand", "win_slots", "write_outputs", "write_player"
]
