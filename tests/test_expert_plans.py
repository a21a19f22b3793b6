"""The expert's two-plan valuation under ``void_suit: none`` on a built position (issue 53 item 4).

Without a declared void the expert plans to drop the suit whose dropping leaves the lowest shanten, and while that
suit is not cleared it values each discard under the better of that plan and the next one (``second_void``). The
position is symmetric: two complete runs and a pair of 万, and the same 2-4-6 in 饼 and in 索 — both plans are the
same distance from ready, the planner keeps one by its tie-break. Then every tile that completes the two kanchan of
one suit (3 and 5) is seen face up: keeping that suit can never finish those shapes, so the right plan is to drop
it, whichever suit the planner picked. The expert must discard from the dead suit in both mirror images.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_expert import engine_state

from simulator.bots.common import legal_discard_mask, plan_void
from simulator.bots.expert import REASON_SHIFT, expert_discard
from simulator.bots.view import SeatView
from simulator.kernel import state as S
from simulator.kernel.shape import HandTiles, shanten
from simulator.kernel.tables import suit_table
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import load_rules

TABLE = suit_table()
PARAMS = load_rules("chengdu", {"void_suit": "none"}).to_arrays()
ROW = load_rules("chengdu", {"seats": [{"bot": "expert"}, "greedy", "greedy", "greedy"]}).bot_arrays()[1][0]
HAND = "12345699m246p246s"
NO = np.zeros(4, np.int8)


def expert_discards(seen: str) -> tuple[int, int]:
    """``(the suit of the expert's discard, the suit it plans to drop)`` holding HAND with ``seen`` face up, on
    a table where nobody has won or set anything down, 40 tiles left."""
    conc = counts_from_str(HAND).astype(np.uint8)
    visible = np.zeros(27, np.int8)
    for k in parse_tiles(seen):
        visible[k] += 1
    ps = np.zeros((4, S.PS_N), np.int64)
    ps[:, S.PS_VOID] = -1
    ps[:, S.PS_NDRAWS] = 3
    void = plan_void(TABLE, conc, NO, NO.copy(), 0)  # what the engine passes under void_suit: none
    view = SeatView(TABLE, PARAMS, ps, np.ones((4, 4), np.int8), np.zeros((4, 4), np.int8), np.zeros(4, np.int64),
                    visible, 0, 40)
    code = expert_discard(view, HandTiles(conc, NO.copy(), NO.copy(), 0, void), engine_state(), ROW, void,
                          legal_discard_mask(conc, void, False))
    return (code & ((1 << REASON_SHIFT) - 1)) // 9, void


def test_the_position_is_symmetric():
    conc = counts_from_str(HAND).astype(np.uint8)
    assert [shanten(TABLE, conc, NO, NO.copy(), 0, s) for s in (1, 2)] == [2, 2]


@pytest.mark.parametrize("dead", [1, 2])
def test_the_expert_drops_the_suit_whose_shapes_cannot_finish(dead):
    """饼 (1) or 索 (2) dead: its 3s and 5s all seen. One of the two is not the suit the planner picked, so only
    the second plan's values find the right discard there."""
    suit = "mps"[dead]
    got, planned = expert_discards(f"3333{suit}5555{suit}")
    assert got == dead, (got, planned)


def test_one_mirror_image_needs_the_second_plan():
    """The planner reads no seen tiles: it plans to drop 饼 in both images, so with 索 dead only the second plan
    finds the right discard (a single-plan expert throws a planned-dead 饼)."""
    assert {expert_discards("3333p5555p")[1], expert_discards("3333s5555s")[1]} == {1}
