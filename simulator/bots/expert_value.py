"""The expert's hand value: P(win before the wall ends) × expected income of a target shape, under the rules.

A 13-tile-shaped hand (3k+1 concealed tiles) is valued against several target shapes — plain (the fastest
hand), 对对胡, 七对 and 清一色 in either kept suit — each with its own distance (shanten toward that shape) and
its own acceptance (unseen tiles that bring it one step closer). The value of a shape is

    P_win(distance, acceptance / unseen, own draws left, opponents still in) × income(shape flags, 根)

and the hand is worth its best shape (the big shapes scaled by the seat's ``ambition``). ``P_win`` is the table of
:mod:`simulator.bots.expert_pwin` (a Markov chain over own draws; an opponent's discard hits a ready hand's wait
``RON_SHARE`` of a draw, ``RON_VOID`` for a wait in the suit that opponent declared void: :func:`ron_weights`).
The income is exact under the active scoring rules (mode, table, cap, 根, self-draw bonus): it calls
:func:`simulator.kernel.scoring.score_flags` for the shape's flags, weighting self-draw (every opponent still in pays)
against a discard win (one payer).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import face_up
from simulator.bots.expert_pwin import MAX_D, RON_SHARE, p_win, p_win_bound, pwin_col
from simulator.bots.expert_turn import kept_tally
from simulator.bots.value import qys_dist
from simulator.kernel.evaluate import win_points_both
from simulator.kernel.scoring import (
    F_DUIDUIHU,
    F_LONGQIDUI,
    F_MENQING,
    F_PINGHU,
    F_QIDUI,
    F_QINGYISE,
    F_ZIMO,
    points_of,
    score_flags,
)
from simulator.kernel.shape import MELD_CKONG, MELD_PUNG, held_copies, seven_pairs_distance, wait_mask
from simulator.kernel.state import N_KINDS, N_SEATS, PS_VOID, PS_WON, VOID_NONE, void_rule

CDJ_TOP_DRAWS = 1  # own draws left at most which a ready hand's 查大叫 is its best wait's points (issue 54)
RON_VOID = 1.0         # a wait in a suit an opponent declared void is hit by each of its discards (RON_SHARE: others)


@njit(cache=True, _nrt=False)
def income(params, flags, gen, n_in) -> float:
    """Expected points (base units) of a win with these pattern flags and 根 under the active rules: a
    self-draw (share 1/(1 + RON_SHARE·n_in)) is paid by every opponent still in, a discard win by one."""
    if n_in <= 0:
        return 0.0
    sd = score_flags(flags | F_ZIMO, np.bool_(False), gen, np.bool_(True), params)[4]  # np.bool_: no literal copies
    ron = score_flags(flags, np.bool_(False), gen, np.bool_(False), params)[4]
    f_sd = 1.0 / (1.0 + RON_SHARE * n_in)
    return f_sd * sd * n_in + (1.0 - f_sd) * ron


@njit(cache=True, _nrt=False)
def held4(conc, mk, mt, nm) -> int:
    """根 held now: kinds with all four copies in hand, in a kong, or a pung plus the tile in hand."""
    g = 0
    for k in range(N_KINDS):
        if conc[k] == 4:
            g += 1
    for i in range(nm):
        if mk[i] != MELD_PUNG or conc[mt[i]] >= 1:
            g += 1
    return g


@njit(cache=True, _nrt=False)
def menqing(mk, nm) -> bool:
    for i in range(nm):  # noqa: SIM110 (numba compiles no generator expressions)
        if mk[i] != MELD_CKONG:
            return False
    return True


# Shape slots of the income cache (one income per shape, computed once per decision)
S_PLAIN, S_DDH, S_QIDUI, S_QYS, S_QDUI, S_EXIT = range(6)
N_SHAPES = 6  # the last slot holds the exit value alone (added to a ready hand's exact wait income)


@njit(cache=True, _nrt=False)
def exit_value(params, n_in, n_draws, tempo) -> float:
    """What winning now saves: a player who has won pays nothing more (no deal-in, no opponent's self-draw,
    no 查大叫/花猪), worth ``tempo`` plain-hand points per opponent still in and own draw left. (Under 血流成河,
    where a winner plays on and may win again, the P(win) table's own column counts the wins: until 2026-12-04 an
    exit value of 0.015–0.03 more stood in for it.)"""
    return tempo * points_of(1, params) * n_in * n_draws


@njit(cache=True, _nrt=False)
def shape_incomes(params, mk, nm, gen, n_in, n_draws, tempo, out) -> None:
    """``out[S_*]`` = :func:`income` of each target shape for this seat (its 根 and 门清 as they stand), plus the
    :func:`exit_value` of having won (the same for every shape, so it rewards speed)."""
    mq = F_MENQING if menqing(mk, nm) else 0
    base = F_PINGHU | mq
    ex = exit_value(params, n_in, n_draws, tempo)
    out[S_PLAIN] = income(params, base, gen, n_in) + ex
    out[S_DDH] = income(params, base | F_DUIDUIHU, gen, n_in) + ex
    qd = base | F_QIDUI
    if gen > 0:
        qd |= F_LONGQIDUI
    out[S_QIDUI] = income(params, qd, gen, n_in) + ex
    out[S_QYS] = income(params, base | F_QINGYISE, gen, n_in) + ex
    out[S_QDUI] = income(params, base | F_QINGYISE | F_DUIDUIHU, gen, n_in) + ex
    out[S_EXIT] = ex


@njit(cache=True, _nrt=False)
def unseen_of(conc, visible, k) -> float:
    u = 4 - np.int64(conc[k]) - np.int64(visible[k])
    return float(u) if u > 0 else 0.0


@njit(cache=True, _nrt=False)
def qys_reach(table, conc, mt, nm, visible, s):
    """``(distance, acceptance)`` toward 清一色 in suit ``s``: from the suit table alone (melds + a pair)."""
    d = qys_dist(table, conc, mt, nm, s)
    if d >= MAX_D:
        return d, 0.0
    key = 0
    for r in range(8, -1, -1):
        key = key * 5 + np.int64(conc[9 * s + r])
    col = 4 - nm + 5  # melds still needed + a pair, all in this suit (see value.qys_dist)
    acc = 0.0
    step = 1
    for r in range(9):
        k = 9 * s + r
        if conc[k] < 4 and np.int64(table[key + step, col]) - 1 < d:
            acc += unseen_of(conc, visible, k)
        step *= 5
    return d, acc


@njit(cache=True, _nrt=False)
def _nth_count(i, h4, h3, h2, h1) -> int:
    """The ``i``-th largest count (from 0) among kinds of which ``h4`` hold 4, ``h3`` 3, ``h2`` 2, ``h1`` 1."""
    if i < h4:
        return 4
    i -= h4
    if i < h3:
        return 3
    i -= h3
    if i < h2:
        return 2
    return 1 if i - h2 < h1 else 0


@njit(cache=True, _nrt=False)
def counts_of(tally, nm):
    """``(对对胡 distance, its acceptance, 七对 distance, its acceptance)`` from a :func:`kept_tally` with ``nm``
    melds set down (see :func:`kept_counts`)."""
    h4, h3, h2, h1, pairs, singles, acc_dd, acc_qd = tally
    # 对对胡: the largest counts make the missing triplets, the next one the pair
    need = 4 - nm
    cost = 2 - min(_nth_count(need, h4, h3, h2, h1), 2)
    for i in range(need):
        cost += 3 - min(_nth_count(i, h4, h3, h2, h1), 3)
    qd = seven_pairs_distance(pairs, singles) - 1 if nm == 0 else MAX_D
    return cost - 1, acc_dd, qd, acc_qd


@njit(cache=True, _nrt=False)
def kept_counts(conc, nm, void, visible):
    """One pass over the kept suits: ``(对对胡 distance, its acceptance, 七对 distance, its acceptance)``, the
    distances as :func:`simulator.bots.value.ddh_dist` and ``qidui_dist`` (``BIG``-like when something is set
    down: ``MAX_D``), the acceptances as unseen copies of the kinds held once or twice (对对胡) or an odd
    number of times (七对)."""
    return counts_of(kept_tally(conc, void, visible), nm)


@njit(cache=True, _nrt=False)
def suit_acc_bound(conc, visible, s) -> float:
    """Unseen copies of the kinds of suit ``s`` held fewer than 4 times: no acceptance toward 清一色 in ``s``
    (:func:`qys_reach`) can exceed it."""
    acc = 0.0
    for r in range(9):
        k = 9 * s + r
        if conc[k] < 4:
            acc += unseen_of(conc, visible, k)
    return acc


@njit(cache=True, _nrt=False)
def shapes_value(look, hand, ambition, ks, floor=-1.0):
    """``(value, shape)``: the best big-shape value of this 3k+1 ``hand`` (对对胡, 七对, 清一色 of a kept suit),
    already scaled by ``ambition``; shape −1 when none is within reach. ``look``: the decision's
    :class:`~simulator.bots.expert_turn.Outlook`; its ``qc`` (float64[6]: distances then
    acceptances per suit, distance −1 = not yet known) caches each suit's 清一色 reach across the discards of
    one decision: a discard from suit ``ks`` leaves the other suits as they were (``ks`` −1: no caching).

    With ``floor`` (≥ 0), the result is exact only when it exceeds ``floor`` (otherwise it is some value ≤
    ``floor``): a 清一色 is priced only when :data:`~simulator.bots.expert_pwin.PWIN_UB` (P(win) at the best
    acceptance the suit's unseen tiles allow) says it could beat both ``floor`` and the best shape so far. The
    bound holds in floating point because rounding is monotone (tests/test_expert_speed.py checks it on random
    hands)."""
    return shapes_of(kept_counts(hand.conc, hand.nm, hand.void, look.visible), look, hand, ambition, ks, floor)


@njit(cache=True, _nrt=False)
def shapes_of(counts, look, hand, ambition, ks, floor):
    """:func:`shapes_value` with the hand's :func:`kept_counts` given (``counts``)."""
    table, visible, unseen_total, n_draws = look.table, look.visible, look.u_tot, look.n_draws
    inc, qc = look.inc, look.qc
    col = pwin_col(look.params, look.n_in)  # P(win)'s column
    conc, _, mt, nm, void = hand
    best = 0.0
    best_s = -1
    dd, acc_dd, qd, acc_qd = counts
    # 对对胡: every meld set down is a pung/kong (no chow in this game); pairs become triplets, from the wall or
    # punged from any opponent, so its acceptance counts in full (halved, as it was, measured 0.008 ± 0.006 and
    # 0.014 ± 0.006 worse against greedy: paired, 6,000 walls × 4, seeds 7 and 11)
    if dd < MAX_D:
        v = p_win(dd, acc_dd, unseen_total, n_draws, col) * inc[S_DDH]
        if v > best:
            best, best_s = v, S_DDH
    # 七对: nothing set down; odd kinds wait for their pair, from own draws only (七对 claims nothing), and the hand
    # ends on a single wait of at most three copies, far narrower than the table's typical last step: its
    # acceptance is discounted to 0.3 (0.5 measured 0.017 ± 0.005 and 0.006 ± 0.005 worse against greedy, paired,
    # 6,000 walls × 4, seeds 7 and 11; 0.15 the same as 0.3; in full 0.137 ± 0.016 worse)
    if qd < MAX_D:
        v = p_win(qd, acc_qd * 0.3, unseen_total, n_draws, col) * inc[S_QIDUI]  # ends on a single wait
        if v > best:
            best, best_s = v, S_QIDUI
    # 清一色 in each kept suit
    for s in range(3):
        if s == void:
            continue
        cached = s != ks and ks >= 0 and qc[s] >= 0.0
        if cached:
            d = np.int64(qc[s])
            acc = qc[3 + s]
        else:
            d = qys_dist(table, conc, mt, nm, s)
            if d >= MAX_D:
                if s != ks and ks >= 0:
                    qc[s] = d
                    qc[3 + s] = 0.0
                continue
            slot = S_QDUI if dd <= d else S_QYS
            ub = p_win_bound(d, suit_acc_bound(conc, visible, s), unseen_total, n_draws, col) * inc[slot]
            if inc[slot] >= 0.0 and (ub <= best or ub * ambition <= floor):
                continue  # cannot change the result (not cached: a later discard may still need it exactly)
            d, acc = qys_reach(table, conc, mt, nm, visible, s)
            if s != ks and ks >= 0:
                qc[s] = d
                qc[3 + s] = acc
        if d >= MAX_D:
            continue
        slot = S_QDUI if dd <= d else S_QYS
        v = p_win(d, acc, unseen_total, n_draws, col) * inc[slot]
        if v > best:
            best, best_s = v, slot
    return best * ambition, best_s


@njit(cache=True, _nrt=False)
def ron_weights(params, ps, seat, out) -> None:
    """``out`` (float64[3]) = how many opponents' discards a wait in suit ``s`` is hit by, per own draw, in units
    of a blind draw: :data:`RON_SHARE` per opponent still in, :data:`RON_VOID` for one whose declared void is ``s`` (it
    discards every tile of that suit it holds or draws: Sichuan players wait on others' 缺门 for this). Voids are
    public under ``declared`` and ``declared_lenient``; under ``none`` every opponent counts RON_SHARE.

    Measured (paired, 6,000 walls × 4, seed 7, one expert among three greedy): +0.024 ± 0.006 base units per
    player-hand. Weighting the other waits too did not pay: a kind the opponent has discarded before counted as
    a void tile (+0.017 ± 0.008 instead), terminals ×1.5 and 2/8 ×1.25 (+0.015 ± 0.009), both (+0.006 ± 0.010);
    RON_VOID 1.5 or 2.0 instead of 1.0 measured the same within noise (+0.025, +0.028 ± 0.008)."""
    public = void_rule(params) != VOID_NONE
    out[:] = 0.0
    for q in range(N_SEATS):
        if q == seat or ps[q, PS_WON]:
            continue
        for s in range(3):
            out[s] += RON_VOID if public and ps[q, PS_VOID] == s else RON_SHARE


@njit(cache=True, _nrt=False)
def wait_income(look, hand):
    """``(waits, income, top)`` of a ready 3k+1 ``hand`` (``look``: the decision's
    :class:`~simulator.bots.expert_turn.Outlook`): its effective acceptance, and the expected points of its win
    averaged over the ways it can come, each wait scored exactly under the active rules (its own fan, 根, 对对胡,
    金钩钓, 清一色 …). A strong player picks the wait worth most, not just the widest, and the one opponents must
    throw: a wait of suit ``s`` is hit by an own draw and ``ronw[s]`` opponents' discards per draw
    (:func:`ron_weights`), so it wins that much more often, and more of its wins are discard wins (one payer).
    The acceptance is in the units :func:`p_win` expects (it multiplies by ``1 + RON_SHARE·n_in``); with every
    ``ronw[s] = RON_SHARE·n_in`` this is the plain count of unseen waits and a uniform self-draw share.
    ``top``: what 查大叫 collects from each not-ready opponent if the hand is ready at the exhaustive draw — its best
    wait as a discard win, a wait with no copy left included (not one held four times: docs/rules.md); read only
    with at most :data:`CDJ_TOP_DRAWS` own draws left (``look.n_draws``), so dead waits are scored only then."""
    table, params, visible, n_in, ronw = look.table, look.params, look.visible, look.n_in, look.ronw
    conc, mk, mt, nm, void = hand
    waits = wait_mask(table, conc, mk, mt, nm, void)
    w = 0.0
    tot = 0.0
    top = 0
    for k in range(N_KINDS):
        if not (waits >> k) & 1:
            continue
        u = unseen_of(conc, visible, k)
        if u <= 0.0 and (look.n_draws > CDJ_TOP_DRAWS or held_copies(conc, mk, mt, nm, k) >= 4):
            continue  # a dead wait wins nothing; its points matter to `top` only at the last draws
        conc[k] += 1
        ron, sd = win_points_both(table, hand, k, params)
        conc[k] -= 1
        top = max(top, ron)
        if u <= 0.0:
            continue
        hit = 1.0 + ronw[k // 9]
        f_sd = 1.0 / hit
        w += u * hit
        tot += u * hit * (f_sd * sd * n_in + (1.0 - f_sd) * ron)
    if w <= 0.0:
        return 0.0, 0.0, top
    return w / (1.0 + RON_SHARE * n_in), tot / w, top


@njit(cache=True, _nrt=False)
def wait_copies(view, conc_all, tile, k) -> float:
    """Copies of kind ``k`` that may still come to the seat of ``view`` (a :class:`~simulator.bots.view.SeatView`)
    when a win on ``tile`` is on offer, from public information: 4 − its own − those seen face up (``visible``:
    every discard, the one on offer included, and the exposed melds) − its own 暗杠 (face down, so not in
    ``visible`` at this decision) − the winners' laid-down hands (血战: public; ``conc_all`` is read for them only;
    a discard win's tile counts both there and as a discard, so at most one copy too few). Another seat's 暗杠 is
    face down: its kind is not read. On a robbed 加杠 the tile on offer is not yet in ``visible``, but the pung
    it completes is: none of that kind is left."""
    seat, ps, mk_all, mt_all, nm_all = view.seat, view.ps, view.mk_all, view.mt_all, view.nm_all
    u = 4 - np.int64(conc_all[seat, k]) - np.int64(view.visible[k])
    for q in range(N_SEATS):
        for i in range(nm_all[q]):
            if (mt_all[q, i] if q == seat else face_up(mk_all, mt_all, q, i)) != k:
                continue
            if q == seat and mk_all[q, i] == MELD_CKONG:
                u -= 4
            elif k == tile and mk_all[q, i] == MELD_PUNG:
                return 0.0  # a robbed 加杠 (on a discard a face-up pung of it leaves none either)
        if q != seat and ps[q, PS_WON]:
            u -= np.int64(conc_all[q, k])
    return float(u) if u > 0 else 0.0
