"""The expert's P(win) table: P(completing a hand before the wall ends | distance, acceptance, own draws left,
opponents still in), by a Markov chain computed once at import (:data:`PWIN`, :func:`p_win`).

Each own draw improves the hand with probability acceptance/unseen for the first step, a typical acceptance
(``TYP_ACC`` of ``TYP_UNSEEN``) for later ones; once ready a hand wins on its own draw or on an opponent's discard
(each discard counts ``RON_SHARE`` of a draw, a typical ``TYP_WAIT`` tiles waited on beyond the first step); every own
draw the hand may also end first or a slow win lose worth as opponents win (``END_RATE``, by opponents still in; mode
``single`` has its own column, ``SINGLE_COL``, and mode ``xueliu`` one of expected wins, ``XUELIU_COL``: a 血流
winner plays on with its hand ready). Read by the hand values of :mod:`simulator.bots.expert_value` and the end
risks of :mod:`simulator.bots.expert_kongs`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from simulator.rules.keys import SLOT, choices, code

P_MODE = SLOT["mode"]

RON_SHARE = 0.5        # an opponent's discard hits a wait about half as often as a blind draw (they discard safe)
# Acceptance assumed for improvement steps after the first, and tiles waited on once ready (for steps beyond the
# first). Not a fitted forecast: outcomes say distant hands win more often than this chain does (they pung and
# widen), yet slower later steps pay in play, which weighs speed now against shape later. 6.5 and 4 against 8
# and 5 measured +0.009 / +0.005 / +0.008 ± 0.005 base units per player-hand against greedy (paired, 24,000
# walls × 4, seeds 7 / 11 / 13); 5 and 3.5 +0.003 / +0.009 / +0.004 ± 0.006; 11 (acceptance) −0.025, 6.5 (wait)
# −0.021 ± 0.004.
TYP_ACC = 6.5
TYP_WAIT = 4.0
TYP_UNSEEN = 50.0      # unseen tiles assumed for those later steps
# With one or two opponents still in, the hand ends as soon as they have won (three winners): per own draw, the
# chance it ends first, by opponents still in. Without it P(win) was 0.49 where 0.36 was observed with one
# opponent in (benchmarks/calibrate_pwin.py), and a slow hand looked as good late as early; the rates are tuned
# against greedy (paired, 24,000 walls × 4, seeds 7 and 11): 0.09/0.03 +0.011 ± 0.002 and +0.015 ± 0.002,
# 0.15/0.05 +0.009 and +0.006 more, 0.25/0.08 +0.005 and +0.003 more, 0.4/0.12 +0.003 ± 0.002 and +0.001 more.
# (A forecast fitted to outcomes would take 0.09/0.03: the larger rates make the expert play faster late.) With all
# three opponents in the hand cannot end first, but a slow win is worth less as they win and leave (fewer payers,
# less exit value): 0.06 measured +0.008 ± 0.004 on both seeds against 0, 0.03 half that, 0.1 the same as 0.06.
END_RATE = (0.0, 0.4, 0.12, 0.06)
# Mode `single` (the first win ends the hand): 0.11 per own draw, measured on the event log (expert + 3 greedy, 4,000
# hands, seed 3); 血战's 0.06 priced a slow hand as if the others' wins did not end it (docs/bots.md).
END_RATE_SINGLE = 0.11
Q_STEPS = 64           # acceptance ratio buckets: q = acc/unseen in steps of 1/128 (0 … 0.49)
MAX_D = 5              # distances 0..4 are tabled; farther shapes are worth ~0
MAX_N = 28             # own draws left 0..27
N_PLAYERS_IN = 4       # opponents still in: 0..3


class Column(NamedTuple):
    """One column of the table: ``opponents`` in (a ready hand's chances per own draw: 1 + ``RON_SHARE`` each),
    ``end``: P(the hand ends without this seat) per own draw, ``repeat``: a win does not end the seat's play (血流),
    so the column holds the expected number of wins instead of P(win)."""

    opponents: int
    end: float
    repeat: bool = False


SINGLE_COL = N_PLAYERS_IN      # mode `single`'s column (pwin_col): three opponents in, the first win ends the hand
XUELIU_COL = N_PLAYERS_IN + 1  # mode `xueliu`'s: three opponents in, expected wins (a winner plays on, see below)
PWIN_COLUMNS = (*(Column(m, END_RATE[m]) for m in range(N_PLAYERS_IN)), Column(N_PLAYERS_IN - 1, END_RATE_SINGLE),
                Column(N_PLAYERS_IN - 1, END_RATE[N_PLAYERS_IN - 1], repeat=True))
MODE_SINGLE = code("mode", "single")
MODE_XUELIU = code("mode", "xueliu")
# per mode (choices("mode") order) its own column once an opponent is in, or −1: the columns by opponents in (血战)
MODE_COL = np.array([{"single": SINGLE_COL, "xueliu": XUELIU_COL}.get(m, -1) for m in choices("mode")], np.int64)
LAST_COL = len(PWIN_COLUMNS) - 1


class ChainRates(NamedTuple):
    """The Markov chain's rates, per own draw: a ready hand hits ``hit · (ready_scale · q + ready_add)`` (``hit`` =
    1 + :data:`RON_SHARE` per opponent in, capped at 0.9), a farther hand's first step ``first_scale · q +
    first_add``, a later step at distance d ``step<d>`` (``step3`` beyond), the wait once there ``hit · wait``."""

    ready_scale: float = 1.0
    ready_add: float = 0.0
    first_scale: float = 1.0
    first_add: float = 0.0
    step1: float = TYP_ACC / TYP_UNSEEN
    step2: float = TYP_ACC / TYP_UNSEEN
    step3: float = TYP_ACC / TYP_UNSEEN
    wait: float = TYP_WAIT / TYP_UNSEEN


def markov_table(rates: ChainRates = ChainRates(), columns=PWIN_COLUMNS) -> np.ndarray:
    """``float64[MAX_D, Q_STEPS, MAX_N, len(columns)]``: P(complete within n own draws | distance d, first-step
    acceptance ratio q, column c: a :class:`Column`). Distance d needs d improvements then the winning tile, before
    the hand ends without this seat (the column's end rate per draw); in a ``repeat`` column a ready hand stays
    ready after a win and the entry is the expected number of wins within n draws. The shipped rates and
    :data:`PWIN_COLUMNS` give :data:`PWIN` (``benchmarks/calibrate_pwin.py`` refits the rates)."""
    out = np.zeros((MAX_D, Q_STEPS, MAX_N, len(columns)))
    q = np.arange(Q_STEPS) / 128.0
    later = (0.0, rates.step1, rates.step2, rates.step3, rates.step3)
    for col, (m, end, repeat) in enumerate(columns):
        hit = 1.0 + RON_SHARE * m  # chances per own draw once ready: the draw and the opponents' discards
        for d in range(MAX_D):
            steps = [np.full(Q_STEPS, later[d - j]) for j in range(d)] + [np.full(Q_STEPS, min(0.9, hit * rates.wait))]
            if d == 0:
                steps[0] = np.minimum(0.9, hit * (rates.ready_scale * q + rates.ready_add))
            else:
                steps[0] = rates.first_scale * q + rates.first_add
            state = np.zeros((d + 2, Q_STEPS))
            state[0] = 1.0
            for n in range(1, MAX_N):
                state[:d + 1] *= 1.0 - end
                new = state.copy()
                for j in range(d + 1):
                    moved = state[j] * steps[j]
                    if not (repeat and j == d):  # 血流: a ready hand stays ready after a win
                        new[j] -= moved
                    new[j + 1] += moved
                state = new
                out[d, :, n, col] = state[d + 1]
    return out


PWIN = markov_table().astype(np.float32)


@njit(cache=True, inline="always")
def pwin_col(params, n_in) -> int:
    """The P(win) table's column for ``n_in`` opponents still in under the mode of ``params``."""
    col = MODE_COL[params[P_MODE]]
    if col >= 0 and n_in > 0:
        return col
    return min(n_in, N_PLAYERS_IN - 1)


# P(the hand ends without this seat) per own draw, by column: what the decisions that ask when the hand ends read
# (:func:`end_rate`: the not-ready risk of claims and kongs, a declined win's wait). Under `single` and `xueliu` a
# seat decides only with three opponents in (nobody has won while a `single` hand goes on; a 血流 winner plays on),
# measured on the event log (expert + three greedy, 4,000 hands each, seed 3; docs/bots.md, "Claims and kongs"):
# under `single` the first win ends the hand (END_RATE_SINGLE). Under `xueliu` the hand ends only at the wall (no own
# draw of 154,185 was followed by an end before the seat's next draw) and a win does not end the seat's play: its
# column counts the expected wins of a hand that stays ready (`repeat`), at 血战's three-opponent rate (against the
# P(win) column with an exit value of 0.015 plain-hand points per opponent in and own draw left:
# +0.022 / +0.025 / +0.029 / +0.023 ± 0.011 base units per player-hand against three greedy, paired, seeds 7 / 11 /
# 13 / 17, 24,000 walls × 4; at a rate of 0.03 +0.025 / +0.038 ± 0.012, at 0 −0.001 / +0.011 ± 0.014, seeds 7 / 11).
END_RATE_OF_COL = np.array([c.end for c in PWIN_COLUMNS])


@njit(cache=True, _nrt=False)
def end_rate(params, n_in) -> float:
    """P(the hand ends without this seat) per own draw with ``n_in`` opponents in, under the mode of ``params``:
    the end rate of its P(win) column (:func:`pwin_col`)."""
    return END_RATE_OF_COL[pwin_col(params, n_in)]


@njit(cache=True, inline="always")
def _lookup(table, d, acc, unseen_total, n_draws, col) -> float:
    """``table[d, acceptance ratio, draws, col]`` (:data:`PWIN` or :data:`PWIN_UB`), clipped to its edges and
    linear between the ratio's buckets (bucket by bucket, 3 and 3.6 tiles of 94 unseen priced alike; interpolating
    measured +0.018 ± 0.007 base units per player-hand against greedy, paired, 6,000 walls × 4, seed 7).
    Non-decreasing in ``acc`` wherever the table is, which :func:`p_win_bound` relies on."""
    if d >= MAX_D or d < 0 or n_draws <= 0:
        return 0.0 if d >= 0 else 1.0
    x = 128.0 * acc / max(unseen_total, 1)
    n = min(n_draws, MAX_N - 1)
    m = min(col, LAST_COL)
    if x >= Q_STEPS - 1:
        return table[d, Q_STEPS - 1, n, m]
    qi = int(x)
    lo = table[d, qi, n, m]
    hi = table[d, qi + 1, n, m]
    return min(lo + (x - qi) * (hi - lo), hi)  # both tables rise with the acceptance; min: rounding stays ≤ hi


@njit(cache=True, _nrt=False)
def p_win(d, acc, unseen_total, n_draws, col) -> float:
    """P(completing a hand at distance ``d`` with ``acc`` accepted unseen tiles within ``n_draws`` own draws) in
    column ``col`` (opponents in at 血战's rates, or :func:`pwin_col`); in :data:`XUELIU_COL` the expected number
    of wins (it may exceed 1)."""
    return _lookup(PWIN, d, acc, unseen_total, n_draws, col)


PWIN_UB = np.maximum.accumulate(PWIN, axis=1)  # max of PWIN over acceptance buckets up to each one


@njit(cache=True, _nrt=False)
def p_win_bound(d, acc_ub, unseen_total, n_draws, col) -> float:
    """An upper bound of :func:`p_win` over every acceptance ≤ ``acc_ub`` (exact in floating point: the bucket
    index is monotone in the acceptance and :data:`PWIN_UB` is a running maximum over buckets)."""
    return _lookup(PWIN_UB, d, acc_ub, unseen_total, n_draws, col)
