"""How the expert prices kong income it holds or would make: 退税 (refunded unless ready at the exhaustive draw)
and 呼叫转移 (passed on by a kong that leads to a discard win); and what ending not ready costs a claim or kong
decision — that refund, and from a ready hand the 查大叫 it would pay (:func:`not_ready_cost`). Read by the claim
and kong decisions of :mod:`simulator.bots.expert`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.dance import P_EXHAUST
from simulator.bots.expert_hand import concealed_kong_amount, direct_kong_amount, table_context
from simulator.bots.expert_pwin import MODE_SINGLE, TYP_ACC, end_rate, p_win
from simulator.kernel.scoring import points_of
from simulator.kernel.shape import MELD_CKONG, MELD_KONG, SHANTEN_NEVER, shanten
from simulator.rules.keys import SLOT

P_CHADAJIAO = SLOT["settlement.chadajiao"]
P_MODE = SLOT["mode"]
P_REFUND_KONGS_IF_NOT_READY = SLOT["settlement.refund_kongs_if_not_ready"]

TRANSFER_KEEP = 0.95   # share of a new kong's income not passed on by 呼叫转移 (退税 is priced apart: end_risk)
# Share of the opponents still in that are ready at the exhaustive draw (greedy's, measured 0.83; 24,000 walls × 4,
# seed 7): a seat ending not ready pays each of them 查大叫 (docs/rules.md, "End settlement").
CDJ_PAY = 0.8
# The late-kong guard (issue 54): with fewer tiles than this left in the wall, no kong that leaves a ready hand not
# ready. A search player (simulator/bots/search*.py) saw such kongs end −1.9 (expert + 3 greedy) to −4.3 (four
# experts) with fewer than 8 tiles left; greedy never makes them (it kongs only when shanten does not worsen).
LATE_KONG_WALL = 16


@njit(cache=True, _nrt=False)
def held_kong_income(params, mk, nm, n_in) -> float:
    """Kong income the seat holds from its own kongs, priced with the opponents in now (a lower bound: more may
    have paid when it was made): 暗杠 at the concealed-kong rate, an exposed kong at the 直杠 rate."""
    tot = 0.0
    for i in range(nm):
        if mk[i] == MELD_CKONG:
            tot += concealed_kong_amount(params, n_in)
        elif mk[i] == MELD_KONG:
            tot += direct_kong_amount(params, n_in)
    return tot


@njit(cache=True, _nrt=False)
def ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws) -> float:
    """P(the hand is ready at the exhaustive draw): 1 when ready now (a 3k+2 hand: one discard from it), else
    P(reaching shanten 0 within ``n_draws`` own draws) at the typical acceptance."""
    sh = shanten(table, conc, mk, mt, nm, void)
    if sh <= 0:
        return 1.0
    if sh >= SHANTEN_NEVER:
        return 0.0
    return p_win(sh - 1, TYP_ACC, u_tot, n_draws, np.int64(0))


@njit(cache=True, _nrt=False)
def breaks_ready_late(table, hand, ready_now, tiles_left) -> bool:
    """The late-kong guard: ``hand`` (a :class:`~simulator.kernel.shape.HandTiles` after the kong, before its
    replacement draw: 3k+1 concealed tiles) is not ready though the hand was (``ready_now``), with fewer than
    :data:`LATE_KONG_WALL` tiles left. Such a kong is never made."""
    if not ready_now or tiles_left >= LATE_KONG_WALL:
        return False
    conc, mk, mt, nm, void = hand
    return shanten(table, conc, mk, mt, nm, void) > 0


@njit(cache=True, _nrt=False)
def end_risk(params, ready, n_in, n_draws) -> float:
    """P(the hand reaches the exhaustive draw with the seat not ready): no end first over ``n_draws`` own draws at
    :func:`end_rate` per draw for ``n_in`` opponents in, times :data:`~simulator.bots.dance.P_EXHAUST`, times
    1 − ``ready`` (P(ready then): :func:`ready_chance`)."""
    return P_EXHAUST * (1.0 - end_rate(params, n_in)) ** n_draws * (1.0 - ready)


@njit(cache=True, _nrt=False)
def not_ready_cost(params, held, n_in, ready_now) -> float:
    """What ending not ready at the exhaustive draw costs each option of a claim or kong decision beyond the
    hand's value (each option pays it × its :func:`end_risk`): the kong income ``held`` (refunded under 退税)
    and, when the hand is ready now (``ready_now``), the 查大叫 it would pay each of the ``n_in`` opponents still
    in that is ready then (:data:`CDJ_PAY` of them, a 1-fan hand each). The hand's value counts only the side a
    ready hand collects (:func:`~simulator.bots.expert_hand.ready_bonus`, ~0.8 per opponent in at the end under
    Chengdu scoring, where being ready is worth ~1.9: 查大叫 collected 0.3–0.6, paid 1.3–1.7 per opponent in);
    the rest is charged where a claim or kong would break a ready hand, whose every option that keeps it ready
    has no end risk. (Charged also on hands not ready now it measured worse: the crude chance of getting ready,
    :func:`ready_chance`, then decides between options; docs/bots.md, "Claims and kongs".) Not under mode
    ``single``, where the first win ends the hand: charged there it measured −0.0051 ± 0.0014 base units per
    player-hand with 血战's end rate (12,000 walls × 4, seed 7), and still −0.0026 ± 0.0008 with the mode's own
    (:func:`end_rate`; 24,000 walls × 4, seed 7)."""
    c = held if params[P_REFUND_KONGS_IF_NOT_READY] else 0.0
    if ready_now and params[P_CHADAJIAO] and params[P_MODE] != MODE_SINGLE:
        c += points_of(1, params) * n_in * CDJ_PAY
    return c


@njit(cache=True, _nrt=False)
def kong_value(view, hand, u_tot, cost, amount) -> float:
    """What a kong collecting ``amount`` is worth to the seat of ``view`` (a :class:`~simulator.bots.view.SeatView`
    before the kong's replacement draw), with ``cost`` what ending not ready costs beyond the hand's value
    (:func:`not_ready_cost`: the kong income held before it, and 查大叫 when the hand is ready now): the new
    income is kept unless passed on by 呼叫转移 (:data:`TRANSFER_KEEP`, under 退税 rules) or refunded (退税), and
    ``cost`` is paid, if the hand is not ready at the exhaustive draw (:func:`end_risk`, by the chance the
    ``hand`` after the kong — its concealed tiles without the kong's, its melds with it, the draw to come — is
    ready at the end). A kong that breaks a ready hand with the wall nearly empty so costs its own income, the
    income held and the 查大叫 a not-ready hand pays."""
    params, table = view.params, view.table
    conc, mk, mt, nm, void = hand
    n_in, n_draws = table_context(view.ps, view.seat, view.tiles_left - 1)
    e = end_risk(params, ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws + 1), n_in, n_draws + 1)
    if not params[P_REFUND_KONGS_IF_NOT_READY]:
        return amount - cost * e
    return amount * TRANSFER_KEEP * (1.0 - e) - cost * e
