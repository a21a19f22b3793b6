"""``analysis.sessions.session_results`` and ``session_distribution`` on a hand-worked session run (issue 33
item 8): two sessions of two hands, bankroll 10 (money: points), seats 0-1 greedy, 2-3 value. Every number
asserted is worked out in the comments from the rows below."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from analysis_synth import player, write_run

from analysis import sessions as asess
from analysis.load import open_run
from analysis.stats import z_value

BOTS = ("greedy", "greedy", "value", "value")
START = 10
# score per seat of each hand, and its dealer
#   session 0: hand 0 seat 0 self-draws 2 from each; hand 1 seat 1 wins 4 off seat 2   (seat 0 deals both)
#   session 1: hand 2 seat 2 wins 8 off seat 3;      hand 3 seat 3 self-draws 3 from each (seats 1, 2 deal)
SCORES = ([6, -2, -2, -2], [0, 4, -4, 0], [0, 0, 8, -8], [-3, -3, -3, 9])
DEALERS = (0, 0, 1, 2)
# balances after each hand: s0 [16, 8, 8, 8] -> [16, 12, 4, 8]; s1 [10, 10, 18, 2] -> [7, 7, 15, 11]
# net = points per player-session: s0 [6, 2, -6, -2], s1 [-3, -3, 5, 1]


def session_hands() -> list[dict]:
    hands, balance = [], {}
    for hid, score in enumerate(SCORES):
        sid, k = divmod(hid, 2)
        if k == 0:
            balance = dict.fromkeys(range(4), START)
        players = []
        for seat in range(4):
            balance[seat] += score[seat]
            players.append(player(seat, BOTS[seat], score_win=score[seat], session_id=sid, hand_in_session=k,
                                  bankroll=float(balance[seat])))
        hands.append({"hand_id": hid, "exhaustive_draw": False, "session_id": sid, "hand_in_session": k,
                      "dealer": DEALERS[hid], "players": players})
    return hands


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("sessions")
    write_run(Path(root), {"evening": session_hands()},
              overrides={"evening": {"session": {"hands": 2, "bankroll": START}}})
    return open_run(root)


def rows(table: pl.DataFrame, **where) -> dict:
    for k, v in where.items():
        table = table.filter(pl.col(k) == v)
    assert table.height == 1, where
    return table.row(0, named=True)


def test_session_results_by_bot_are_the_hand_worked_cluster_means(run):
    """greedy nets 6, 2 (session 0) and -3, -3 (session 1): mean 2/4 = 0.5; session totals 8 and -6 less
    0.5 x 2 players leave 7 and -7, so se = sqrt((49 + 49) / 4^2 x 2/1) = 3.5. value: -8 and 6 in total, mean
    -0.5, se 3.5. dealt: greedy seats 2, 0 (session 0) and 0, 1 (session 1): mean 3/4, totals 2 and 1 less
    0.75 x 2 -> residuals 0.5, -0.5 -> se sqrt(0.5 / 16 x 2) = 0.25; value seats 0, 0 and 1, 0: mean 0.25, se
    0.25. Every player played both hands: mean 2, se 0, no interval."""
    out = asess.session_results(run, "bot")
    assert out.columns == ["id", "variant", "bot", "quantity", "n_units", "n_obs", "mean", "se", "ci_lo", "ci_hi"]
    z = z_value(0.95)
    for bot, mean in (("greedy", 0.5), ("value", -0.5)):
        for quantity in ("net", "points"):  # money: points, so the session money is the points
            r = rows(out, bot=bot, quantity=quantity)
            assert (r["n_units"], r["n_obs"]) == (2, 4)
            assert np.isclose(r["mean"], mean) and np.isclose(r["se"], 3.5)
            assert np.isclose(r["ci_lo"], mean - z * 3.5) and np.isclose(r["ci_hi"], mean + z * 3.5)
        dealt = rows(out, bot=bot, quantity="dealt")
        assert np.isclose(dealt["mean"], {"greedy": 0.75, "value": 0.25}[bot]) and np.isclose(dealt["se"], 0.25)
        n = rows(out, bot=bot, quantity="n_hands")
        assert n["mean"] == 2 and n["se"] == 0 and n["ci_lo"] is None and n["ci_hi"] is None


def test_session_results_by_seat(run):
    """Seat 0 nets 6 and -3: mean 1.5, residuals 4.5 and -4.5 -> se sqrt(40.5 / 4 x 2) = 4.5; seat 3 -2 and 1:
    mean -0.5, se 1.5."""
    out = asess.session_results(run, "seat")
    r0, r3 = rows(out, seat=0, quantity="net"), rows(out, seat=3, quantity="net")
    assert (r0["n_units"], r0["n_obs"]) == (2, 2)
    assert np.isclose(r0["mean"], 1.5) and np.isclose(r0["se"], 4.5)
    assert np.isclose(r3["mean"], -0.5) and np.isclose(r3["se"], 1.5)


def test_session_distribution_is_the_order_statistics_of_the_player_sessions(run):
    """greedy nets sorted -3, -3, 2, 6 (linear interpolation at (n-1)q): q05 = q25 = -3, q50 = -0.5,
    q75 = 2 + 0.25 x 4 = 3, q95 = 2 + 0.85 x 4 = 5.4; value -6, -2, 1, 5: q05 = -6 + 0.15 x 4 = -5.4,
    q25 = -3, q50 = -0.5, q75 = 2, q95 = 1 + 0.85 x 4 = 4.4."""
    out = asess.session_distribution(run, "bot")
    assert out.columns == ["id", "variant", "bot", "n_obs", "min", "q05", "q25", "q50", "q75", "q95", "max"]
    want = {"greedy": (4, -3, -3, -3, -0.5, 3, 5.4, 6), "value": (4, -6, -5.4, -3, -0.5, 2, 4.4, 5)}
    for bot, values in want.items():
        r = rows(out, bot=bot)
        assert np.allclose([r[c] for c in out.columns[3:]], values), (bot, r)
