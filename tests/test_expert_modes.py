"""The expert's end rates by mode (issue 34 follow-up): P(the hand ends without the seat) per own draw under
``single`` (the first win ends the hand) against 血战's, and the decisions they drive — the decline's wait and
the not-ready risk of claims and kongs (whose 查大叫 part stays off under ``single``: tests/test_expert_late.py)."""

from __future__ import annotations

import numpy as np
from test_expert import FACE_UP, TABLE, bot_row, engine_state, fresh_table_state, seat_rows

from simulator.bots.expert import expert_takes_win
from simulator.bots.expert_kongs import end_risk
from simulator.bots.expert_pwin import (
    END_RATE,
    MAX_D,
    PWIN,
    PWIN_COLUMNS,
    SINGLE_COL,
    XUELIU_COL,
    end_rate,
    p_win,
    pwin_col,
)
from simulator.bots.view import SeatView
from simulator.kernel.shape import HandTiles
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import SLOT, code, load_rules

CHENGDU, SINGLE, XUELIU = (load_rules(c).to_arrays() for c in ("chengdu", "single", "xueliu"))
NO = np.zeros(4, np.int8)


def test_end_rates_by_mode_single_ends_at_the_first_win():
    """血战 and 血流 read 血战's tuned rates; ``single``, where any opponent's win ends the hand, its measured
    0.11 per own draw with all three opponents in (血战's 0.06 there stands for payers leaving, not the end). The
    decisions that ask when the hand ends read the same rate as the hand values' P(win) column."""
    for params in (CHENGDU, SINGLE, XUELIU):
        for n_in in (0, 1, 2, 3):
            assert end_rate(params, n_in) == PWIN_COLUMNS[pwin_col(params, n_in)].end
    assert [int(p[SLOT["mode"]]) for p in (CHENGDU, SINGLE, XUELIU)] == [code("mode", m) for m in ("xuezhan", "single",
                                                                                                "xueliu")]
    for n_in in (1, 2, 3):
        assert end_rate(CHENGDU, n_in) == END_RATE[n_in]
    assert end_rate(XUELIU, 3) == END_RATE[3]  # under 血流 a seat decides with all three opponents in
    assert end_rate(SINGLE, 3) > 1.5 * END_RATE[3]
    assert end_risk(SINGLE, 0.0, 3, 4) < end_risk(CHENGDU, 0.0, 3, 4)


def _takes(params, ambition: float) -> bool:
    """Whether seat 0 takes a discard win on 2p (123m456m789m 3345p, a 1-point win now, waiting on 2p/5p) with
    three opponents in and 30 tiles left, at this ``ambition``."""
    hand, tile, left = "123m456m789m3345p", "2p", 30
    _, ps, mt_all, nm_all = fresh_table_state(left)
    view = SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, np.zeros(27, np.int8), 0, left)
    ca = seat_rows(counts_from_str(hand))
    return expert_takes_win(view, HandTiles(ca[0], NO.copy(), NO.copy(), 0, 2), engine_state(ca),
                            bot_row(ambition=ambition), 2, parse_tiles(tile)[0], 0, False)


def _wait_threshold(params) -> float:
    """The smallest ``ambition`` at which :func:`_takes` declines (bisection; the decision is monotone)."""
    lo, hi = 0.0, 20.0
    for _ in range(25):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _takes(params, mid) else (lo, mid)
    return hi


def test_a_decline_under_single_is_worth_less_since_any_opponent_win_ends_the_hand():
    """Same hand, same scoring: under ``single`` the wait competes with the first win of any opponent, so it
    takes a bigger hand (a higher ``ambition``) to decline (with 血战's rate both modes declined alike)."""
    assert _wait_threshold(SINGLE) > 1.05 * _wait_threshold(CHENGDU)



def test_p_win_under_single_reads_its_own_column():
    """The hand values' P(win) table has a column for mode ``single`` (three opponents in, its end rate): a slow
    hand is worth less there, a ready one with few draws left about the same, and 血战/血流 read the columns by
    opponents in as before."""
    for n_in in (0, 1, 2, 3):
        assert pwin_col(CHENGDU, n_in) == n_in
    assert pwin_col(SINGLE, 3) == SINGLE_COL and pwin_col(SINGLE, 0) == 0
    assert PWIN.shape[-1] == len(PWIN_COLUMNS)
    for d in range(1, MAX_D - 1):
        assert p_win(d, 6.0, 60.0, 12, SINGLE_COL) < 0.9 * p_win(d, 6.0, 60.0, 12, 3)
    assert 0.9 * p_win(0, 6.0, 60.0, 1, 3) < p_win(0, 6.0, 60.0, 1, SINGLE_COL) < p_win(0, 6.0, 60.0, 1, 3)


def test_under_xueliu_a_ready_hand_is_worth_its_expected_wins():
    """Under 血流 a winner plays on with its hand ready, so its column counts expected wins, not P(win): a ready
    hand with many draws left expects more than one win, more the more draws are left, and is worth more than
    under 血战 wherever a win is likely; a hand far from ready expects little more than its P(win)."""
    assert pwin_col(XUELIU, 3) == XUELIU_COL and pwin_col(XUELIU, 0) == 0
    assert p_win(0, 8.0, 50.0, 20, XUELIU_COL) > 2.0 > 1.0 > p_win(0, 8.0, 50.0, 20, 3)
    assert p_win(0, 8.0, 50.0, 20, XUELIU_COL) > p_win(0, 8.0, 50.0, 10, XUELIU_COL) > p_win(0, 8.0, 50.0, 10, 3)
    assert p_win(3, 6.0, 60.0, 12, 3) <= p_win(3, 6.0, 60.0, 12, XUELIU_COL) < 2.0 * p_win(3, 6.0, 60.0, 12, 3)
    assert end_rate(XUELIU, 3) == END_RATE[3]

