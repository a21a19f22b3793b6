"""The expert's read of the lone opponent's hand at the last tiles (issue 54 item 3): with one opponent in and the
wall nearly empty, the unseen tiles are that opponent's concealed tiles and the wall's, so its possible hands and
their waits are known exactly (simulator/bots/expert_read.py)."""

from __future__ import annotations

import numpy as np
from test_expert import FACE_UP, TABLE, bot_row, engine_state, fresh_table_state

from simulator.bots.common import legal_discard_mask
from simulator.bots.expert import REASON_SHIFT, expert_discard
from simulator.bots.expert_read import read_deal_in
from simulator.bots.view import SeatView
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_CKONG, HandTiles
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import load_rules

CHENGDU = load_rules("chengdu").to_arrays()
MINE = "123m456m9m234s678s5s"  # seat 0 (void 饼), 14 tiles: ready (on 5s) only if it throws 9m
THEIRS = "55m78m"  # seat 3 (void 饼): 55m 78m and pungs of 2m 1s 9s, waiting on 6m and 9m
THEIR_PUNGS = "2m1s9s"
VOID = 1  # both seats drop 饼


def _table(tiles_left: int, unseen_extra: str = "", won=(1, 2), mk3=None):
    """Seats 1 and 2 have won (``won``); seat 3 shows ``THEIR_PUNGS`` and holds ``THEIRS``; every other tile is
    seen but ``unseen_extra`` (the wall's). Returns seat 0's view and its hand's counts."""
    _, ps, mt_all, nm_all = fresh_table_state(tiles_left)
    for q in won:
        ps[q, S.PS_WON] = 1
    ps[0, S.PS_VOID] = ps[3, S.PS_VOID] = VOID
    mine, theirs = counts_from_str(MINE), counts_from_str(THEIRS)
    mt_all[3, :3] = parse_tiles(THEIR_PUNGS)
    nm_all[3] = 3
    mk_all = FACE_UP.copy() if mk3 is None else mk3
    visible = (4 - mine.astype(np.int64) - theirs).astype(np.int8)  # their pungs are seen: in `visible` too
    for k in parse_tiles(unseen_extra) if unseen_extra else []:
        visible[k] -= 1
    return SeatView(TABLE, CHENGDU, ps, mk_all, mt_all, nm_all, visible, 0, tiles_left), mine


def _read(view, mine):
    out = np.full(27, -1.0)
    return read_deal_in(view, mine, out), out


def _kinds(s: str) -> set[int]:
    return set(parse_tiles(s))


def test_at_the_last_discard_the_unseen_tiles_are_the_lone_opponents_hand_and_its_waits_are_known():
    ok, out = _read(*_table(0))
    assert ok
    assert {k for k in range(27) if out[k] > 0} == _kinds("6m9m")
    assert out[parse_tiles("9m")[0]] >= 1.0  # a win's points, not a share of one


def test_with_a_tile_left_each_hand_the_wall_leaves_it_is_weighted_by_the_copies_left_there():
    """Unseen 55m 6m 7m 8m with one tile in the wall: the opponent holds 55m78m (waits 6m 9m) when the wall keeps
    6m, 5678m (5m 8m) when it keeps one of the two 5m, 5568m (7m) for 7m, 5567m (5m 8m) for 8m — five ways in all:
    every kind one of them waits on is priced, nothing else, and 9m at a fifth of what it costs when the
    opponent surely holds 55m78m."""
    ok, out = _read(*_table(1, "6m"))
    assert ok
    assert {k for k in range(27) if out[k] > 0} == _kinds("5m6m7m8m9m")
    nine = parse_tiles("9m")[0]
    assert np.isclose(out[nine], _read(*_table(0))[1][nine] / 5)


def test_no_read_with_two_opponents_in_a_fuller_wall_or_a_face_down_kong():
    assert not _read(*_table(0, won=(1,)))[0]
    assert not _read(*_table(5, "6m7m8m9m9p"))[0]
    mk = FACE_UP.copy()
    mk[3, 0] = MELD_CKONG  # its kind is face down: the pool no longer spells out its hand
    assert not _read(*_table(0, mk3=mk))[0]


def test_the_expert_does_not_throw_the_lone_opponents_wait_at_the_last_discard():
    """Throwing 9m keeps the hand ready (查大叫 at the exhaustive draw) and 9m looks safe by the table's signals
    (three copies seen), but the unseen tiles say the lone opponent holds 55m78m: without the read the expert threw
    9m into it (mutation: ``read`` always False); with it, a tile no hand the opponent can hold wins on."""
    view, mine = _table(0)
    no = np.zeros(4, np.int8)
    code = expert_discard(view, HandTiles(mine, no.copy(), no.copy(), 0, VOID), engine_state(), bot_row(), VOID,
                          legal_discard_mask(mine, VOID, True))
    k = code & ((1 << REASON_SHIFT) - 1)
    assert mine[k] > 0 and k not in _kinds("6m9m")
