"""The expert's defence (issue 34 item 7): the deal-in cost of waiting after a declined discard win is priced
from the threats on the table (public signals only), not flat."""

from __future__ import annotations

import numpy as np
from engine_helpers import finished_hands
from test_expert import FACE_UP, TABLE, bot_row, engine_state, fresh_table_state, seat_rows

from simulator.bots.danger import LOCKED_HIT, mean_risk, opponent_threats, tile_risk
from simulator.bots.expert import expert_takes_win
from simulator.bots.view import SeatView
from simulator.kernel import state as S
from simulator.kernel.scoring import points_of
from simulator.kernel.shape import MELD_CKONG, HandTiles
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import load_rules

CHENGDU = load_rules("chengdu").to_arrays()
NO = np.zeros(4, np.int8)
HAND, TILE = "123m456m789m3345p", "2p"  # a plain discard win on 2p, or wait for 2p/5p (self-draws pay more)


def _table(tiles_left: int, melds: str = ""):
    """Seat 1 shows pungs of the kinds in ``melds`` (face up); nobody has won."""
    _, ps, mt_all, nm_all = fresh_table_state(tiles_left)
    for i, k in enumerate(parse_tiles(melds) if melds else []):
        mt_all[1, i] = k
    nm_all[1] = len(melds) // 2
    return ps, mt_all, nm_all


def _takes(tiles_left: int, melds: str, ambition: float) -> bool:
    ps, mt_all, nm_all = _table(tiles_left, melds)
    rows = seat_rows(counts_from_str(HAND))
    return expert_takes_win(_view(ps, FACE_UP, mt_all, nm_all, tiles_left),
                            HandTiles(rows[0], NO.copy(), NO.copy(), 0, 2), engine_state(rows),
                            bot_row(ambition=ambition), 2, parse_tiles(TILE)[0], 0, False)


def _view(ps, mk_all, mt_all, nm_all, tiles_left=20):
    """Seat 0's view of the table (nothing seen face up beyond the melds)."""
    return SeatView(TABLE, CHENGDU, ps, mk_all, mt_all, nm_all, np.zeros(27, np.int8), 0, tiles_left)


def _threshold(tiles_left: int, melds: str) -> float:
    """The smallest ``ambition`` at which the win is declined (decisions are monotone in it)."""
    lo, hi = 0.0, 20.0
    for _ in range(25):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _takes(tiles_left, melds, mid) else (lo, mid)
    return hi


def test_an_opponent_showing_a_one_suit_hand_makes_waiting_after_a_decline_costlier():
    """Three face-up 筒 pungs (a 清一色 signal, likely ready) raise the ambition needed to decline; three pungs
    in three suits less so; with none the price of waiting is lowest. (The old flat price of 0.1 deal-ins per
    discard × a plain hand gave the same threshold whatever the table showed.)"""
    for left in (16, 30):
        none, mixed, flush = _threshold(left, ""), _threshold(left, "1m5p9s"), _threshold(left, "2p5p8p")
        assert none < mixed < flush


def test_mean_risk_reads_only_public_melds():
    """A concealed kong is face down: its kind and suit do not shape the threat (only that it is a meld)."""
    ps, mt_all, nm_all = _table(20, "2p5p8p")
    mk = FACE_UP.copy()
    r_flush = mean_risk(_view(ps, mk, mt_all, nm_all), 0)
    mk[1, 2] = MELD_CKONG  # the third meld face down
    ps[1, S.PS_NKONGS] = 1
    r_a = mean_risk(_view(ps, mk, mt_all, nm_all), 0)
    mt_all[1, 2] = parse_tiles("9s")[0]  # what is inside a face-down kong cannot matter
    r_b = mean_risk(_view(ps, mk, mt_all, nm_all), 0)
    assert r_a == r_b
    ps2, mt2, nm2 = _table(20, "2p5p9s")
    assert r_flush > mean_risk(_view(ps2, FACE_UP, mt2, nm2), 0) > 0.0  # the one-suit signal is priced


# ---- 血流: a winner's locked hand ------------------------------------------------------------------------

XUELIU = load_rules("xueliu").to_arrays()


def _risks(ps) -> np.ndarray:
    """float64[27]: ``tile_risk`` of every kind for seat 0 under ``xueliu`` (nothing set down, 20 tiles left)."""
    _, _, mt_all, nm_all = fresh_table_state(20)
    view = SeatView(TABLE, XUELIU, ps, FACE_UP, mt_all, nm_all, np.zeros(27, np.int8), 0, 20)
    threats = (np.zeros(4), np.zeros(4), np.full(4, -1, np.int64), np.full(4, -1, np.int64))
    opponent_threats(view, threats)
    return np.array([tile_risk(ps, *threats, k) for k in range(27)])


def test_a_xueliu_winner_waits_on_what_it_won_on_and_not_on_what_it_let_pass():
    """Under 血流 a winner plays on with its locked hand: the kinds it won on are certain waits, and every kind it
    let pass since its first win can never be one (both public: the win and its tile are shown, the passes seen)."""
    _, ps, _, _ = fresh_table_state(20)
    base = _risks(ps)
    p5, p6, p4 = (parse_tiles(t)[0] for t in ("5p", "6p", "4p"))
    ps[1, S.PS_NWINS] = 1
    ps[1, S.PS_WON_KINDS] = 1 << p5
    ps[1, S.PS_CLEARED] = 1 << p6
    r = _risks(ps)
    assert r[p5] >= LOCKED_HIT * points_of(0, XUELIU)  # at least a plain discard win, for certain
    assert r[p5] > 5 * r[p4]
    assert r[p6] < r[p4] and r[p6] < base[p6]  # seat 1 no longer counts for 6p
    assert r[p4] > base[p4]  # a locked hand is ready: P(ready) 1 instead of the draws' estimate


def test_the_engine_records_a_xueliu_winners_won_kinds_and_passes_as_its_waits_say():
    """The public masks the bots read (``PS_WON_KINDS``, ``PS_CLEARED``) agree with the engine's private waits of
    every 血流 winner at the end of the hand: it waits on every kind it won on and on none it let pass."""
    winners = cleared = 0
    for st in finished_hands(load_rules("xueliu"), 300, 9):
        ps = st.ps
        for s in range(4):
            if ps[s, S.PS_NWINS] == 0:
                assert ps[s, S.PS_WON_KINDS] == 0 and ps[s, S.PS_CLEARED] == 0
                continue
            winners += 1
            cleared += bin(int(ps[s, S.PS_CLEARED])).count("1")
            assert ps[s, S.PS_WON_KINDS] & ~ps[s, S.PS_WAITS] == 0
            assert ps[s, S.PS_CLEARED] & ps[s, S.PS_WAITS] == 0
    assert winners >= 300 and cleared >= 1000  # the check bites
