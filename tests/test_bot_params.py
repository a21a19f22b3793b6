"""The seat parameters ``steer_shanten`` (value) and ``defend_wall`` (defensive) change the decision they claim
to (simulator/rules/__init__.py BotSpec): built positions, the discard asked of the engine's own dispatcher
(``bots.bot_discard``) with the parameter row the rule set gives the seat. Each test fails if the parameter is
ignored (held at any one value). ``tempo`` (expert) is tested with the expert's other win decisions in
tests/test_expert.py."""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import decision

from simulator.bots import BOT_DEFENSIVE, BOT_GREEDY, BOT_VALUE, bot_discard
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_PUNG
from simulator.kernel.tables import suit_table
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import load_rules

TABLE = suit_table()
PARAMS = load_rules("chengdu").to_arrays()
VOID = 2  # seat 0 has declared 索 void and holds none


def seat_row(**spec) -> np.ndarray:
    """Seat 0's parameter row as the rule set builds it (``seats: [{bot: ..., <param>: ...}, ...]``)."""
    return load_rules("chengdu", {"seats": [spec, "greedy", "greedy", "greedy"]}).bot_arrays()[1][0]


def table(safe: str = "", opponent_pung: str = ""):
    """(g, ps, mk, mt, nm) of a table where nobody has won: ``safe`` a kind every opponent passed on since its
    last draw (现物), ``opponent_pung`` a pung seat 1 has set down."""
    g = np.zeros(S.G_N, np.int64)
    ps = np.zeros((4, S.PS_N), np.int64)
    ps[:, S.PS_VOID] = -1
    ps[0, S.PS_VOID] = VOID
    if safe:
        ps[1:, S.PS_SAFE] = 1 << parse_tiles(safe)[0]
    mk, mt, nm = np.zeros((4, 4), np.int8), np.zeros((4, 4), np.int8), np.zeros(4, np.int64)
    if opponent_pung:
        mk[1, 0], mt[1, 0], nm[1] = MELD_PUNG, parse_tiles(opponent_pung)[0], 1
    return g, ps, mk, mt, nm


def discard(bot: int, row: np.ndarray, hand: str, tiles_left: int = 40, **table_kw) -> int:
    """Seat 0's discard from ``hand`` (14 tiles, nothing set down), every held kind legal."""
    conc = counts_from_str(hand)
    g, ps, mk, mt, nm = table(**table_kw)
    legal = sum(1 << k for k in range(27) if conc[k])
    game, st = decision(bot, PARAMS, conc=conc, g=g, ps=ps, mk=mk, mt=mt, nm=nm, visible=np.zeros(27, np.int8),
                        tiles_left=tiles_left)
    return int(bot_discard(game, st, row, 0, VOID, legal))


def pairs_after(hand: str, k: int) -> int:
    c = counts_from_str(hand).astype(int)
    c[k] -= 1
    return int((c >= 2).sum())


# ---- steer_shanten -------------------------------------------------------------------------------------------

# 七对 two pairs away (4 pairs and a triplet; plain shanten 2): greedy breaks the 88m pair
QIDUI_HAND = "1134557889m2699p"
# 清一色 in 饼 two away (plain shanten 1): greedy lets 9p go, keeping the 246m
QYS_HAND = "246m13334556679p"


def test_steer_shanten_sets_how_far_a_big_shape_may_be_to_steer_toward(no_numba_cache_writes):
    """Both shapes are 2 shanten away: at ``steer_shanten: 1`` the value bot discards as greedy does; at 2 it
    steers — it keeps every pair toward 七对, and lets a 万 tile go toward 饼 清一色 instead of a 饼."""
    greedy = seat_row(bot="greedy")
    for hand in (QIDUI_HAND, QYS_HAND):
        assert discard(BOT_VALUE, seat_row(bot="value", steer_shanten=1), hand) == discard(BOT_GREEDY, greedy, hand)
    g, v = (discard(BOT_GREEDY, greedy, QIDUI_HAND), discard(BOT_VALUE, seat_row(bot="value", steer_shanten=2),
                                                              QIDUI_HAND))
    assert pairs_after(QIDUI_HAND, v) > pairs_after(QIDUI_HAND, g)
    g, v = (discard(BOT_GREEDY, greedy, QYS_HAND), discard(BOT_VALUE, seat_row(bot="value", steer_shanten=2),
                                                            QYS_HAND))
    assert g // 9 == 1 and v // 9 == 0  # greedy lets a 饼 go, the steering bot a 万


# ---- defend_wall -----------------------------------------------------------------------------------------------

FAR_HAND = "1224679m2356899p"  # three or more from ready: a defending bot folds


@pytest.mark.parametrize("tiles_left", [20, 12])
def test_defend_wall_is_the_wall_length_at_which_the_defensive_bot_starts_to_defend(tiles_left,
                                                                                     no_numba_cache_writes):
    """Seat 1 shows a pung and every opponent passed on 2p (safe); nobody has won. With the wall longer than
    ``defend_wall`` the defensive bot discards as greedy does (9m); at or below it, it folds to the safe 2p."""
    safe = parse_tiles("2p")[0]
    kw = {"safe": "2p", "opponent_pung": "9s"}
    greedy = discard(BOT_GREEDY, seat_row(bot="greedy"), FAR_HAND, tiles_left, **kw)
    assert greedy != safe
    for wall in (0, 10, 15, 19, 20, 30):
        got = discard(BOT_DEFENSIVE, seat_row(bot="defensive", defend_wall=wall), FAR_HAND, tiles_left, **kw)
        assert got == (safe if tiles_left <= wall else greedy), wall
    # with nobody showing a meld there is nothing to defend against, whatever defend_wall says
    assert discard(BOT_DEFENSIVE, seat_row(bot="defensive", defend_wall=30), FAR_HAND, tiles_left,
                   safe="2p") == greedy
