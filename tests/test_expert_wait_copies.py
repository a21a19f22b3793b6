"""The copies of a wait left that the expert's decline counts (``expert_value.wait_copies``): exact from public
information — every discard, the one on offer included, exposed melds, its own 暗杠, winners' laid-down hands —
and blind to the kind of another seat's 暗杠."""

from __future__ import annotations

import numpy as np
from test_expert import TABLE, fresh_table_state, seat_rows
from test_observation import KONG_TILES, table_with_concealed_kong

from simulator.bots.expert_value import wait_copies
from simulator.bots.view import SeatView
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_CKONG, MELD_PUNG
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import load_rules

CHENGDU = load_rules("chengdu").to_arrays()
P3, P6 = parse_tiles("3p6p")


def _view(ps, mk, mt, nm, visible, seat=0):
    return SeatView(TABLE, CHENGDU, ps, mk, mt, nm, visible, np.int64(seat), np.int64(30))


def _empty(visible=None):
    _, ps, _, nm = fresh_table_state(30)
    mk = np.zeros((4, 4), np.int8)
    mt = np.zeros((4, 4), np.int8)
    return ps, mk, mt, nm, np.zeros(27, np.int8) if visible is None else visible


def test_every_discarded_copy_and_the_tile_on_offer_count_as_gone():
    """Two 6p discarded and one held: one left (the old count, one copy per discarded kind, said two); the 3p on
    offer is in ``visible`` already: three left of it."""
    ps, mk, mt, nm, visible = _empty()
    visible[P6] = 2
    visible[P3] = 1  # the discard on offer
    ca = seat_rows(counts_from_str("123m456m789m4556p"))
    assert wait_copies(_view(ps, mk, mt, nm, visible), ca, P3, P6) == 1.0
    assert wait_copies(_view(ps, mk, mt, nm, visible), ca, P3, P3) == 3.0


def _with_pung(kind):
    """A table where seat 1 shows a pung of ``kind`` (its three copies face up in ``visible``)."""
    ps, mk, mt, nm, visible = _empty()
    mk[1, 0], mt[1, 0], nm[1] = MELD_PUNG, kind, 1
    visible[kind] = 3
    return ps, mk, mt, nm, visible


def test_a_punged_discard_counts_once():
    """A 6p discarded and punged: three in the meld (the discard among them), one left."""
    ps, mk, mt, nm, visible = _with_pung(P6)
    ca = seat_rows(counts_from_str("123m456m789m3345p"))
    assert wait_copies(_view(ps, mk, mt, nm, visible), ca, P3, P6) == 1.0


def test_a_robbed_added_kong_leaves_none_of_its_kind():
    """The 加杠 on offer completes a face-up pung: its fourth copy is not in ``visible`` yet, and none is left."""
    ps, mk, mt, nm, visible = _with_pung(P3)
    ca = seat_rows(counts_from_str("123m456m789m4566p"))
    assert wait_copies(_view(ps, mk, mt, nm, visible), ca, P3, P3) == 0.0


def test_its_own_concealed_kong_and_winners_hands_count_hidden_hands_do_not():
    ps, mk, mt, nm, visible = _empty()
    mk[0, 0], mt[0, 0], nm[0] = MELD_CKONG, P6, 1  # its own 暗杠: face down, known to itself
    ca = seat_rows(counts_from_str("123m456m4566p"))
    ca[0, P6] = 0
    assert wait_copies(_view(ps, mk, mt, nm, visible), ca, P3, P6) == 0.0
    ca = seat_rows(counts_from_str("123m456m789m4566p"))
    ca[1] = counts_from_str("333p66p678m99s55s")
    assert wait_copies(_view(ps, mk, mt, nm, visible), ca, P3, P3) == 4.0  # seat 1 still plays: hidden
    ps[1, S.PS_WON] = 1
    assert wait_copies(_view(ps, mk, mt, nm, visible), ca, P3, P3) == 1.0


def test_another_seats_concealed_kong_is_not_read():
    """The count does not depend on the kind of seat 1's 暗杠 (face down: only its own are known)."""
    own = np.zeros((4, 27), np.uint8)
    own[0] = counts_from_str("1234567m22s")  # none of KONG_TILES
    got = set()
    for x in KONG_TILES:
        mk, mt, nm, ps = table_with_concealed_kong(x)
        view = _view(ps, mk, mt, nm, np.zeros(27, np.int8))
        got.add((wait_copies(view, own, x, x), wait_copies(view, own, KONG_TILES[0], KONG_TILES[0])))
    assert got == {(4.0, 4.0)}
