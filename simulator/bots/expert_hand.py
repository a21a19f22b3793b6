"""The expert's value of a hand and of each of its discards (expected base units won, under the active rules).

:func:`hand_value` prices a 3k+1 hand (plain speed by shanten and acceptance, or exact waits when ready; the best
big shape of :mod:`simulator.bots.expert_value`; readiness at the exhaustive draw; kong income still to come);
:func:`discard_values` prices every legal discard of a 3k+2 hand, reading what its candidates share from one
per-turn pass (:mod:`simulator.bots.expert_turn`); :func:`best_after` and :func:`value13` are the values the
claim and kong decisions of :mod:`simulator.bots.expert` compare.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import (
    acceptance,
    discard_shantens,
    draw_candidates,
    kept_summary,
    suit_count,
    turn_acceptance,
    usable_void,
)
from simulator.bots.dance import P_EXHAUST, huazhu_cost, stuck_cost
from simulator.bots.expert_pwin import p_win, pwin_col
from simulator.bots.expert_turn import kept_tally, kong_changes, moved_tally, outlook
from simulator.bots.expert_value import (
    CDJ_TOP_DRAWS,
    N_SHAPES,
    S_EXIT,
    S_PLAIN,
    counts_of,
    held4,
    kept_counts,
    ron_weights,
    shape_incomes,
    shapes_of,
    unseen_of,
    wait_income,
)
from simulator.kernel.scoring import points_of
from simulator.kernel.settlement import (  # the slots of the kong and end-of-hand keys the settlement reads
    P_ADDED_KONG_EACH,
    P_CHADAJIAO,
    P_CONCEALED_KONG_EACH,
    P_DISCARD_KONG_DISCARDER,
    P_DISCARD_KONG_OTHERS,
    P_REFUND_KONGS_IF_NOT_READY,
)
from simulator.kernel.shape import MELD_PUNG, SHANTEN_NEVER, shanten
from simulator.kernel.state import N_KINDS, N_SEATS, PS_WON, VOID_DECLARED, stack_empty, void_rule
from simulator.rules.bot_table import slot
from simulator.rules.vocab import BOT_MILLI

# its parameters' slots in the seat's row, in thousandths (simulator.rules.bot_table)
BP_DEFENCE, BP_AMBITION, BP_TEMPERATURE, BP_TEMPO = (slot("expert", p) for p in ("defence", "ambition", "temperature",
                                                                                   "tempo"))
KONG_KEEP = 0.8        # share of kong income still to come kept on average (退税 if not ready, 呼叫转移)
CDJ_SHARE = 0.5        # share of opponents still in that are not ready at the exhaustive draw
NO_COUNTS = (0, 0.0, 0, 0.0)  # kept_counts' place when no big shape is priced (ambition 0)


@njit(cache=True, _nrt=False)
def table_context(ps, seat, tiles_left):
    """``(opponents still in, own draws left)``."""
    n_in = 0
    for q in range(N_SEATS):
        if q != seat and not ps[q, PS_WON]:
            n_in += 1
    n_draws = (tiles_left + n_in) // (n_in + 1)
    return n_in, n_draws


@njit(cache=True, _nrt=False)
def unseen_total(conc, visible) -> float:
    u = 0.0
    for k in range(N_KINDS):
        u += unseen_of(conc, visible, k)
    return u


@njit(cache=True, inline="always")  # inlined into value13: one library fewer to compile
def hand_value(look, hand, ambition, sh, draws, ks):
    """Value (expected base units won) of a 3k+1 ``hand`` at plain shanten ``sh``, with the decision's constants
    ``look`` (:class:`~simulator.bots.expert_turn.Outlook`): the plain hand from its acceptance (computed only when
    ``draws`` is non-zero, else a typical 4 tiles), or its best big shape scaled by ``ambition``; plus
    ``look.ready_bonus`` × P(ready by the end) (查大叫 and 退税 reward a ready hand at the exhaustive draw; with at most
    :data:`CDJ_TOP_DRAWS` own draws left a ready hand's bonus is at its best wait's points, what 查大叫 collects).
    ``ks``: the discarded suit, for the 清一色 cache ``look.qc`` of :func:`~simulator.bots.expert_value.shapes_value`
    (−1: none). Returns ``(value, shaped)``: ``shaped`` when a big shape, not the plain hand, gave the value."""
    if sh >= SHANTEN_NEVER:
        return 0.0, False
    acc = 0
    if needs_acceptance(sh, draws, look.n_in):
        acc = acceptance(look.table, hand, sh, look.visible, draws)
    counts = kept_counts(hand.conc, hand.nm, hand.void, look.visible) if ambition > 0.0 else NO_COUNTS
    kp = kong_potential(look, hand)
    return priced_value(look, hand, ambition, sh, draws, ks, (acc, counts, kp))


@njit(cache=True, inline="always")
def needs_acceptance(sh, draws, n_in) -> bool:
    """Whether :func:`priced_value` reads the acceptance: counted (``draws`` non-zero) and not ready (a ready hand
    prices its waits)."""
    return draws != 0 and sh < SHANTEN_NEVER and not (sh == 0 and n_in > 0)


@njit(cache=True, _nrt=False)
def priced_value(look, hand, ambition, sh, draws, ks, parts):
    """:func:`hand_value` from the parts a caller may have computed once per turn, ``parts`` = ``(acc_count,
    counts, kp)``: ``acc_count`` (the acceptance when :func:`needs_acceptance`), ``counts``
    (:func:`~simulator.bots.expert_value.kept_counts`, read when ``ambition`` > 0) and ``kp``
    (:func:`kong_potential`)."""
    acc_count, counts, kp = parts
    if sh >= SHANTEN_NEVER:
        return 0.0, False
    u_tot, n_draws, n_in, inc = look.u_tot, look.n_draws, look.n_in, look.inc
    acc = 4.0
    pay = inc[S_PLAIN]
    bonus = look.ready_bonus
    if draws != 0 and sh == 0 and n_in > 0:  # ready: price each wait exactly
        acc, pay, top = wait_income(look, hand)
        pay += inc[S_EXIT]
        if look.n_draws <= CDJ_TOP_DRAWS:  # 查大叫 collects the best wait's points, not a 1-fan hand's
            bonus *= top / points_of(1, look.params)
    elif draws != 0:
        acc = float(acc_count)
    v = p_win(sh, acc, u_tot, n_draws, pwin_col(look.params, n_in)) * pay
    s = 0.0
    if ambition > 0.0:  # only a shape worth more than v matters: shapes_value may stop at v
        s, _ = shapes_of(counts, look, hand, ambition, ks, v)
    ready = 1.0 if sh == 0 else p_win(sh - 1, acc, u_tot, n_draws, np.int64(0))
    return max(v, s) + bonus * ready + kong_income(look.params, kp), s > v


@njit(cache=True, _nrt=False)
def kong_potential(look, hand) -> float:
    """Expected kong income still to come from what ``hand`` holds (``look``: the decision's
    :class:`~simulator.bots.expert_turn.Outlook`): a concealed triplet whose fourth copy is unseen becomes a 暗杠
    when drawn or a 直杠 when an opponent throws it; an exposed pung becomes a 加杠 when its fourth copy is drawn.
    P(the copy comes) ≈ own draws × (1 + opponents' discards per draw) / unseen."""
    params, visible, u_tot, n_draws, n_in, ronw = look.params, look.visible, look.u_tot, look.n_draws, look.n_in, \
        look.ronw
    conc, mk, mt, nm, void = hand
    if n_in <= 0 or n_draws <= 0 or u_tot <= 0.0:
        return 0.0
    per = n_draws / u_tot
    p_draw = min(0.9, per)
    tot = 0.0
    for k in range(N_KINDS):
        if conc[k] == 3 and k // 9 != void and unseen_of(conc, visible, k) > 0.0:
            p_thrown = min(0.9 - p_draw, per * ronw[k // 9])
            tot += p_draw * concealed_kong_amount(params, n_in) + p_thrown * direct_kong_amount(params, n_in)
    for i in range(nm):
        k = mt[i]
        if mk[i] == MELD_PUNG and conc[k] == 0 and unseen_of(conc, visible, k) > 0.0:
            tot += p_draw * params[P_ADDED_KONG_EACH] * n_in
    return tot


@njit(cache=True, inline="always")
def direct_kong_amount(params, n_in) -> float:
    """What a 直杠 collects: the feeder's payment and each other opponent still in's."""
    return params[P_DISCARD_KONG_DISCARDER] + params[P_DISCARD_KONG_OTHERS] * (n_in - 1)


@njit(cache=True, inline="always")
def concealed_kong_amount(params, n_in) -> float:
    """What a 暗杠 collects: each opponent still in pays."""
    return params[P_CONCEALED_KONG_EACH] * n_in


@njit(cache=True, _nrt=False)
def ready_bonus(params, n_in, n_draws) -> float:
    """What being ready at the exhaustive draw is worth: 查大叫 (a not-ready player pays each ready one) and
    keeping kong income under 退税, weighted by the chance the hand gets there; grows as the wall empties."""
    if n_in == 0:
        return 0.0
    b = 0.0
    if params[P_CHADAJIAO]:
        b += points_of(1, params) * n_in * CDJ_SHARE
    return b * P_EXHAUST / (1.0 + 0.25 * n_draws)


@njit(cache=True, inline="always")  # inlined by numba: the Outlook's arrays live on the caller's stack
def decision_outlook(view, hand, n_in, n_draws, tempo):
    """The :class:`~simulator.bots.expert_turn.Outlook` of one decision about ``hand`` seen from ``view``: the target
    shapes' incomes (:func:`~simulator.bots.expert_value.shape_incomes`), an empty 清一色 cache (−1 per suit, filled
    by the candidates), the opponents' discard weights per suit (:func:`~simulator.bots.expert_value.ron_weights`),
    the unseen total and the ready bonus. Its arrays are scratch on the calling function's stack
    (:func:`~simulator.kernel.state.stack_empty`)."""
    params, conc, mk, mt, nm = view.params, hand.conc, hand.mk, hand.mt, hand.nm
    inc, qc, ronw = stack_empty(N_SHAPES, np.float64), stack_empty(6, np.float64), stack_empty(3, np.float64)
    shape_incomes(params, mk, nm, held4(conc, mk, mt, nm), n_in, n_draws, tempo, inc)
    qc[:] = -1.0
    ron_weights(params, view.ps, view.seat, ronw)
    return outlook(view.table, params, view.visible, unseen_total(conc, view.visible), n_draws, n_in,
                   ready_bonus(params, n_in, n_draws), (inc, qc, ronw))


@njit(cache=True, _nrt=False)
def discard_values(view, hand, legal, sh_buf, bpar, out, shaped) -> float:
    """``out[k]`` = value of ``hand`` (a :class:`~simulator.kernel.shape.HandTiles`, 3k+2 tiles) after discarding k
    (−inf when illegal), seen from ``view`` (:class:`~simulator.bots.view.SeatView`), 花猪 cost included (also of tiles
    of ``void`` a dancer's shown waits keep in hand: :func:`~simulator.bots.dance.stuck_cost`), and
    ``shaped[k]`` = 1 when a big shape gave that value; returns the best plain shanten. The plain acceptance is
    counted for the discards at the best shanten only."""
    table, params, ps, seat, visible, tiles_left = view.table, view.params, view.ps, view.seat, view.visible, \
        view.tiles_left
    conc, mk, mt, nm, void = hand
    n_in, n_draws = table_context(ps, seat, tiles_left)
    ambition = bpar[BP_AMBITION] / BOT_MILLI
    tempo = bpar[BP_TEMPO] / BOT_MILLI
    best = discard_shantens(table, conc, mk, mt, nm, void, legal, sh_buf)
    draws = draw_candidates(conc, void)
    hz_rule = void_rule(params) != VOID_DECLARED
    hz_held = suit_count(conc, void) if void >= 0 else 0
    stuck = stuck_cost(params, ps, seat, conc, visible, void, tiles_left)  # the same whatever is discarded
    look = decision_outlook(view, hand, n_in, n_draws, tempo)  # once per turn
    # shared by the candidates (expert_turn): the kept suits' keys, shape tally, kong income to come
    fast = usable_void(mt, nm, void)
    summary = kept_summary(conc, void, nm) if fast else (0, 0, 0, 0)
    tally = kept_tally(conc, void, visible)
    kp14 = kong_potential(look, hand)
    kong_kinds = kong_changes(conc, mk, mt, nm)
    dead_v = -np.inf  # every tile of the suit to drop leaves the same hand value (its tiles are dead)
    dead_s = False
    for k in range(N_KINDS):
        shaped[k] = 0
        if not (legal >> k) & 1:
            out[k] = -np.inf
            continue
        sh = sh_buf[k]
        if k // 9 == void and dead_v != -np.inf:
            v, shp = dead_v, dead_s
        else:
            # every shape's distance is at least the plain shanten: two behind the best, not worth pricing
            amb = ambition if sh <= best + 1 else 0.0
            dr = draws if sh == best else 0
            conc[k] -= 1
            acc = 0
            if needs_acceptance(sh, dr, n_in):
                if fast:
                    acc = turn_acceptance(table, visible, hand, sh, dr, k, summary)
                else:
                    acc = acceptance(table, hand, sh, visible, dr)
            counts = counts_of(moved_tally(tally, conc, void, visible, k, -1), nm) if amb > 0.0 else NO_COUNTS
            kp = kp14
            if (kong_kinds >> k) & 1:
                kp = kong_potential(look, hand)
            v, shp = priced_value(look, hand, amb, sh, dr, k // 9, (acc, counts, kp))
            conc[k] += 1
            if k // 9 == void:
                dead_v, dead_s = v, shp
        if hz_rule and void >= 0:
            left = hz_held - 1 if k // 9 == void else hz_held
            v -= huazhu_cost(params, n_in, n_draws, left) + stuck
        out[k] = v
        shaped[k] = 1 if shp else 0
    return best


@njit(cache=True, inline="always")  # inlined into its callers: one library fewer to compile
def best_after(view, hand, bpar) -> float:
    """Value of a 3k+2 hand: its best discard (any held tile)."""
    conc = hand.conc
    legal = np.int64(0)
    for k in range(N_KINDS):
        if conc[k] > 0:
            legal |= 1 << k
    vals = stack_empty(N_KINDS, np.float64)
    buf = stack_empty(N_KINDS, np.int64)
    discard_values(view, hand, legal, buf, bpar, vals, stack_empty(N_KINDS, np.int8))
    best = -np.inf
    for k in range(N_KINDS):
        best = max(best, vals[k])
    return best


@njit(cache=True, _nrt=False)
def value13(view, hand, bpar) -> float:
    """Value of a 3k+1 hand as it stands."""
    conc, mk, mt, nm, void = hand
    n_in, n_draws = table_context(view.ps, view.seat, view.tiles_left)
    ambition = bpar[BP_AMBITION] / BOT_MILLI
    look = decision_outlook(view, hand, n_in, n_draws, bpar[BP_TEMPO] / BOT_MILLI)
    sh = shanten(view.table, conc, mk, mt, nm, void)
    return hand_value(look, hand, ambition, sh, draw_candidates(conc, void), np.int64(-1))[0]


@njit(cache=True, _nrt=False)
def kong_income(params, amount) -> float:
    """Kong income still to come (:func:`kong_potential`), at the average share kept (:data:`KONG_KEEP`)."""
    keep = KONG_KEEP if params[P_REFUND_KONGS_IF_NOT_READY] else 1.0
    return keep * amount
