"""How the expert prices kong income it holds or would make: 退税 (refunded unless ready at the exhaustive draw)
and 呼叫转移 (passed on by a kong that leads to a discard win). Read by the claim and kong decisions of
:mod:`simulator.bots.expert`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.dance import P_EXHAUST
from simulator.bots.expert_hand import concealed_kong_amount, direct_kong_amount, table_context
from simulator.bots.expert_value import END_RATE, TYP_ACC, p_win
from simulator.rules import P_REFUND_KONGS_IF_NOT_READY
from simulator.shape import MELD_CKONG, MELD_KONG, SHANTEN_NEVER, shanten

TRANSFER_KEEP = 0.95   # share of a new kong's income not passed on by 呼叫转移 (退税 is priced apart: refund_risk)


@njit(cache=True)
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


@njit(cache=True)
def ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws) -> float:
    """P(the hand is ready at the exhaustive draw): 1 when ready now (a 3k+2 hand: one discard from it), else
    P(reaching shanten 0 within ``n_draws`` own draws) at the typical acceptance."""
    sh = shanten(table, conc, mk, mt, nm, void)
    if sh <= 0:
        return 1.0
    if sh >= SHANTEN_NEVER:
        return 0.0
    return p_win(sh - 1, TYP_ACC, u_tot, n_draws, np.int64(0))


@njit(cache=True)
def refund_risk(params, ready, n_in, n_draws) -> float:
    """P(kong income is refunded under 退税): the hand reaches the exhaustive draw — no end first over ``n_draws``
    own draws at :data:`~simulator.bots.expert_value.END_RATE` per draw for ``n_in`` opponents in, times
    :data:`~simulator.bots.dance.P_EXHAUST` — with the seat not ready (``ready``: P(ready then))."""
    if not params[P_REFUND_KONGS_IF_NOT_READY]:
        return 0.0
    return P_EXHAUST * (1.0 - END_RATE[min(n_in, len(END_RATE) - 1)]) ** n_draws * (1.0 - ready)


@njit(cache=True)
def kong_value(view, hand, u_tot, held, amount) -> float:
    """What a kong collecting ``amount`` is worth to the seat of ``view`` (a :class:`~simulator.bots.view.SeatView`
    before the kong's replacement draw), with ``held`` the kong income the seat held before it: the new
    income is kept unless passed on by 呼叫转移 (:data:`TRANSFER_KEEP`, under 退税 rules) or refunded, and all of
    it is refunded at the exhaustive draw if the hand is not ready then (:func:`refund_risk`, by the chance the
    ``hand`` after the kong — its concealed tiles without the kong's, its melds with it, the draw to come — is
    ready at the end). A kong that breaks a ready hand with the wall nearly empty so costs its own income and the
    income held; the 查大叫 side is in the hand's value (:func:`~simulator.bots.expert_hand.ready_bonus`)."""
    params, table = view.params, view.table
    conc, mk, mt, nm, void = hand
    n_in, n_draws = table_context(view.ps, view.seat, view.tiles_left - 1)
    r = refund_risk(params, ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws + 1), n_in,
                    n_draws + 1)
    keep = TRANSFER_KEEP if params[P_REFUND_KONGS_IF_NOT_READY] else 1.0
    return amount * keep * (1.0 - r) - held * r
