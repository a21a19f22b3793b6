"""The expert's late game (issue 34 items 3-6 and 8): declining a discard win with few opponents left, waits
that sit in winners' laid-down hands, no pung of a tile whose win it has just declined, kongs that break a ready
hand late, and discard reasons that say what the decision was."""

from __future__ import annotations

import numpy as np
from test_expert import FACE_UP, TABLE, bot_row, engine_state, fresh_table_state, seat_rows

from simulator.bots.common import legal_discard_mask
from simulator.bots.expert import (
    FOLD_MIN,
    R_FOLD,
    R_READY,
    R_SAFER,
    REASON_SHIFT,
    discard_reason,
    expert_claim,
    expert_discard,
    expert_self_kong,
    expert_takes_win,
)
from simulator.bots.expert_kongs import kong_value, not_ready_cost
from simulator.bots.view import SeatView
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_KONG, MELD_PUNG, HandTiles
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import load_rules

CHENGDU = load_rules("chengdu").to_arrays()
NO = np.zeros(4, np.int8)


def _takes(hand: str, tile: str, tiles_left: int, won=(), conc_all=None, **kw) -> bool:
    """The expert's decision on a discard win on ``tile`` (capped 0 fan) for seat 0 holding ``hand``, with the
    seats in ``won`` out (their laid-down hands in ``conc_all``, if given)."""
    _, ps, mt_all, nm_all = fresh_table_state(tiles_left)
    for q in won:
        ps[q, S.PS_WON] = 1
    ca = seat_rows(counts_from_str(hand)) if conc_all is None else conc_all
    if conc_all is not None:
        ca[0] = counts_from_str(hand)
    return expert_takes_win(_view(ps, tiles_left, mt_all, nm_all), HandTiles(ca[0], NO.copy(), NO.copy(), 0, 2),
                            engine_state(ca), bot_row(**kw), 2, parse_tiles(tile)[0], 0, False)


def _view(ps, tiles_left, mt_all=None, nm_all=None, visible=None):
    """Seat 0's view of the table (by default nothing set down, nothing seen)."""
    mt_all = np.zeros((4, 4), np.int8) if mt_all is None else mt_all
    nm_all = np.zeros(4, np.int64) if nm_all is None else nm_all
    visible = np.zeros(27, np.int8) if visible is None else visible
    return SeatView(TABLE, CHENGDU, ps, FACE_UP, mt_all, nm_all, visible, 0, tiles_left)


def test_with_one_opponent_left_the_expert_takes_a_plain_discard_win_it_would_decline_with_three():
    """Declining a 1-point discard win to wait for a 2-point self-draw: worth it early with three opponents in
    (three payers, a long hand), not with one opponent left, whose win ends the hand (the old model declined it
    at every wall length, also with one opponent left, and lost 0.7 base units per such decline)."""
    hand, tile = "123m456m789m3345p", "2p"
    assert not _takes(hand, tile, 40)
    for left in (6, 10, 14, 20, 28, 40):
        assert _takes(hand, tile, left, won=(1, 2))


def test_declining_is_worth_less_the_fewer_opponents_are_in():
    """The smallest ambition at which the same win is declined rises as opponents leave."""
    def threshold(won):
        lo, hi = 0.0, 20.0
        for _ in range(25):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _takes("123m456m789m3345p", "2p", 20, won, ambition=mid) else (lo, mid)
        return hi
    assert threshold(()) < threshold((1,)) < threshold((1, 2))


def test_waits_held_by_a_winner_are_not_worth_declining_for():
    """Seat 0 waits on 3p (plain) and 6p; the same decision with a winner showing every other 6p and 3p takes
    the win it would decline if that winner's tiles were elsewhere."""
    hand, tile = "123m456m789m4566p", "3p"
    hidden = seat_rows(counts_from_str(hand))
    hidden[1] = counts_from_str("111222m333m55s")
    shown = seat_rows(counts_from_str(hand))
    shown[1] = counts_from_str("333p66p678m99s55s")
    assert not _takes(hand, tile, 30, won=(1,), conc_all=hidden, ambition=3)
    assert _takes(hand, tile, 30, won=(1,), conc_all=shown, ambition=3)


def _claim(conc, tile, locked: bool) -> int:
    _, ps, _, _ = fresh_table_state(30)
    if locked:
        ps[0, S.PS_LOCKED] = 1
        ps[0, S.PS_LOCK_MASK] = 1 << tile
    return expert_claim(_view(ps, 30), HandTiles(conc, NO.copy(), NO.copy(), 0, 2), engine_state(), bot_row(), 2,
                        tile, True, False)


def test_no_pung_of_a_tile_whose_discard_win_was_just_declined():
    """Hands the expert would pung a tile from leave it when it has just declined a win on that tile (its pass
    lock holds the tile): the decline kept the wait, the pung gives it up."""
    rng = np.random.default_rng(5)
    found = 0
    for _ in range(400):
        tiles = rng.permutation(np.repeat(np.arange(18), 4))[:13]  # 万 and 筒 only (索 is the void)
        conc = np.bincount(tiles, minlength=27).astype(np.uint8)
        pairs = np.nonzero(conc == 2)[0]
        if len(pairs) == 0:
            continue
        t = int(pairs[0])
        if _claim(conc.copy(), t, False) == 1:
            found += 1
            assert _claim(conc.copy(), t, True) == 0
    assert found >= 10


def _kong(tiles_left: int) -> int:
    """Seat 0 holds a 直杠 of 9m and 2222m4m789p55p1p after its draw: ready (3m) after discarding 1p; a 暗杠 of
    2m leaves 4m 789p 55p 1p, not ready."""
    _, ps, _, _ = fresh_table_state(tiles_left)
    mk, mt = NO.copy(), NO.copy()
    mk[0], mt[0] = MELD_KONG, parse_tiles("9m")[0]
    visible = np.zeros(27, np.int8)
    visible[mt[0]] = 4
    return expert_self_kong(_view(ps, tiles_left, visible=visible), HandTiles(counts_from_str("22224m789p55p1p"), mk,
                            mt, 1, 2), engine_state(), bot_row(), 2, 1 << parse_tiles("2m")[0])


def test_no_kong_that_breaks_a_ready_hand_with_the_wall_nearly_empty():
    """With two tiles left the kong would most likely end the hand not ready: its income and the kong income
    held are refunded (退税) and it pays 查大叫. (A flat 0.8 on the new kong's income took it.)"""
    assert _kong(2) == -1


def test_kong_income_is_worth_less_late_when_the_kong_breaks_a_ready_hand_and_more_is_held():
    _, ps, _, _ = fresh_table_state(40)
    conc = counts_from_str("4m789p55p1p")
    mk, mt = NO.copy(), NO.copy()
    mk[0], mk[1] = MELD_KONG, MELD_KONG

    def value(left, held):
        ps[:, S.PS_NDRAWS] = (55 - left) // 4
        return kong_value(_view(ps, left), HandTiles(conc, mk, mt, 2, 2), 80.0, held, 6.0)
    assert value(2, 0.0) < value(40, 0.0)
    assert value(2, 4.0) < value(2, 0.0)
    ready = counts_from_str("34m789p55p")
    assert kong_value(_view(ps, 2), HandTiles(ready, mk, mt, 2, 2), 80.0, 4.0, 6.0) > value(2, 4.0)


def _concealed_kong(hand: str, tiles_left: int) -> bool:
    """Whether seat 0, with three opponents in, makes the 暗杠 of 2m from the 14 tiles ``hand`` (no kong held)."""
    _, ps, _, _ = fresh_table_state(tiles_left)
    k = parse_tiles("2m")[0]
    return expert_self_kong(_view(ps, tiles_left), HandTiles(counts_from_str(hand), NO.copy(), NO.copy(), 0, 2),
                            engine_state(), bot_row(), 2, 1 << k) == k


def test_a_late_kong_that_breaks_the_only_ready_shape_is_declined_an_early_or_harmless_one_taken():
    """2222m4m789p55p123p1p is ready on 3m after discarding 1p; its 暗杠 of 2m (6 from three opponents) leaves
    4m 789p 55p 123p 1p, a step from ready. Late, it most likely ends not ready: its income and any held are
    refunded (退税) and it pays 查大叫 to each ready opponent (~1.6 each), so it is declined with 12 tiles or fewer
    left (the refund alone took it at every wall length); early there is time to get ready again, and a kong that
    keeps the hand ready (2222m345m789p55p13p: 13p waits on 2p after it) costs nothing at the end."""
    breaking = "2222m4m789p55p123p1p"
    for left in (2, 4, 8, 12):
        assert not _concealed_kong(breaking, left)
    for left in (30, 40):
        assert _concealed_kong(breaking, left)
    for left in (2, 8, 40):
        assert _concealed_kong("2222m345m789p55p13p", left)


def test_the_chadajiao_of_a_broken_ready_hand_is_charged_only_where_an_exhaustive_draw_can_follow_wins():
    """Under 血战 a ready hand that a claim or kong breaks risks paying 查大叫 at the exhaustive draw; under mode
    ``single`` the first win ends the hand, so that risk is left out (only the refund of held kong income stays)."""
    held, n_in = 3.0, 3
    chengdu = load_rules("chengdu").to_arrays()
    single = load_rules("single").to_arrays()
    assert not_ready_cost(chengdu, held, n_in, True) > not_ready_cost(chengdu, held, n_in, False) == held
    assert not_ready_cost(single, held, n_in, True) == not_ready_cost(single, held, n_in, False)


def test_the_reason_is_folding_only_when_value_is_given_up():
    """A safer tile of the same value is a tie broken by safety, not folding (10% of the expert's discards were
    labelled folding where 1% gave up a step)."""
    args = (CHENGDU, 2, (3, 3, 5), 1, 0)  # params, void, (k, best_safe, best_val), sh_after, shaped
    assert discard_reason(*args, 0.0, False) == R_SAFER
    assert discard_reason(*args, FOLD_MIN / 2, False) == R_SAFER
    assert discard_reason(*args, FOLD_MIN, False) == R_FOLD
    assert discard_reason(*args, 0.0, True) == R_FOLD  # a step further from ready, even at no value (a lost hand)
    assert discard_reason(CHENGDU, 2, (3, 3, 3), 0, 0, 0.0, False) == R_READY


def _last_discard(tiles_left: int) -> int:
    """Seat 0 (void 万) holds 444p 2223s 3s 5s 88s beside a pung of 6s, 3s and 8s seen once each: throwing 3s waits on
    4s (four copies unseen, a plain 2-point hand), throwing 5s on 3s/8s (two copies, 对对胡: 4 points)."""
    _, ps, mt_all, nm_all = fresh_table_state(tiles_left)
    conc = counts_from_str("444p2223s3s5s88s")
    mk, mt = np.zeros(4, np.int8), np.zeros(4, np.int8)
    mk[0], mt[0] = MELD_PUNG, parse_tiles("6s")[0]
    mt_all[0, 0], nm_all[0] = mt[0], 1
    visible = np.zeros(27, np.int8)
    visible[mt[0]] += 3
    for k in parse_tiles("3s8s"):
        visible[k] += 1
    code = expert_discard(_view(ps, tiles_left, mt_all, nm_all, visible), HandTiles(conc, mk, mt, 1, 0),
                          engine_state(), bot_row(), 0, legal_discard_mask(conc, 0, True))
    return code & ((1 << REASON_SHIFT) - 1)


def test_at_the_last_own_draw_a_ready_hand_keeps_the_wait_whose_chadajiao_is_largest():
    """With one own draw left a ready hand rarely wins, and at the exhaustive draw 查大叫 pays it its best wait's
    points from each opponent not ready: the expert keeps the 对对胡 shanpon (4 points) over the wider plain
    kanchan (2). Earlier it keeps the wider wait, which wins more often (the ready bonus at a 1-fan hand's points,
    as it was at every wall length before: mutation ``CDJ_TOP_DRAWS = 0`` throws 5s at the last draw too)."""
    for left in (1, 3):
        assert _last_discard(left) == parse_tiles("5s")[0]
    assert _last_discard(9) == parse_tiles("3s")[0]
