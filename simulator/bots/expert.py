"""``expert``: decides by expected value under the active rule set (see docs/rules.md, "Bots").

- **Discard**: for every legal discard, the value of the hand left (:mod:`simulator.bots.expert_value`: plain
  hand by 缺一门 shanten and acceptance over unseen tiles, or the best big shape scaled by ``ambition``) minus
  ``defence`` × the expected deal-in loss of the tile (:mod:`simulator.bots.danger`) minus the expected 花猪
  penalty of the third-suit tiles still held (only where 花猪 can happen: ``void_suit`` none / lenient), plus
  optional Gumbel noise of scale ``temperature`` (softmax choice). Ties: a dead tile, then the least connected.
- **Claims and kongs**: take a pung or kong when the hand's value after it (plus the kong's income) beats the
  value without it, every option charged the 退税 refund of all kong income held by its chance of ending not
  ready (:func:`kong_value`); never a tile whose discard win it has just declined.
- **Wins**: self-draws are always taken; a discard win is declined when waiting for a self-draw (every
  opponent still in pays) or a bigger hand is worth more than the points now, counting the discard wins the
  pass lock (``pass_ron_lock``) would forbid until the next draw, the hand ending first (fewer opponents in,
  fewer draws left) and the deal-in risk of playing on; the waits' copies left exclude winners' laid-down
  hands (public under 血战). The engine enforces 最后N张必胡.
- **定缺**: the suit whose dropping leaves the starting hand worth most (:func:`expert_void`); **换三张**: as
  greedy (a pass chosen by this evaluation measured worse against greedy).
- **Reason**: each discard carries a code (``R_*``) saying what decided it; ``xuezhan replay`` shows it.

Everything it reads is public or its own: its hand and melds, discards and face-up melds of all seats
(``visible``, with its own concealed kongs added by the dispatcher; another seat's 暗杠 is face down: only that it
exists counts, never its kind or suit), declared voids, who has won, draws made, tiles left, and the rules.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from simulator.bots.common import acceptance, connectivity, discard_shantens, draw_candidates, face_up, suit_count
from simulator.bots.dance import P_EXHAUST, huazhu_cost, stuck_cost
from simulator.bots.danger import WAIT_PER_WEIGHT, mean_risk, opponent_threats, tile_risk
from simulator.bots.expert_value import (
    END_RATE,
    N_SHAPES,
    S_EXIT,
    S_PLAIN,
    TYP_ACC,
    exit_value,
    held4,
    p_win,
    ron_weights,
    shape_incomes,
    shapes_value,
    unseen_of,
    wait_income,
)
from simulator.evaluate import CTX_SELF_DRAW, evaluate_win
from simulator.rng import randbelow
from simulator.rules import (
    BOT_MILLI,
    P_ADDED_KONG_EACH,
    P_ADDED_KONG_FRESH_ONLY,
    P_CHADAJIAO,
    P_CONCEALED_KONG_EACH,
    P_DISCARD_KONG_DISCARDER,
    P_DISCARD_KONG_OTHERS,
    P_PASS_RON_LOCK,
    P_REFUND_KONGS_IF_NOT_READY,
    P_SELF_DRAW_BONUS,
    PASS_LOCKS,
)
from simulator.scoring import BONUS_ADD_BASE, BONUS_ADD_FAN, cap_fan, points_of
from simulator.shape import MELD_CKONG, MELD_KONG, MELD_PUNG, SHANTEN_NEVER, shanten, wait_mask
from simulator.state import (
    N_KINDS,
    N_SEATS,
    N_TILES,
    PS_DISCARDED,
    PS_LOCK_MASK,
    PS_LOCKED,
    PS_N,
    PS_WON,
    VOID_DECLARED,
    VOID_NONE,
    void_rule,
)

BP_DEFENCE, BP_AMBITION, BP_TEMPERATURE, BP_TEMPO = 4, 5, 6, 7  # BotSpec.to_row slots (thousandths)
LOCK_OFF, LOCK_SAME, LOCK_HIGHER = (PASS_LOCKS.index(x) for x in ("off", "same_tile", "higher_fan"))
KONG_KEEP = 0.8        # share of kong income still to come kept on average (退税 if not ready, 呼叫转移)
TRANSFER_KEEP = 0.95   # share of a new kong's income not passed on by 呼叫转移 (退税 is priced apart: refund_risk)
LOCK_ROUNDS = 0.75     # discard-win chances lost by a lock until the next draw, in rounds of discards
# The deal-in cost of each discard while waiting after a declined win, per unit of the table's mean danger
# (danger.mean_risk: the opponents' P(ready), waits and expected win from public signals — melds, one-suit melds,
# kongs, discards, draws made), × `defence`. 0.035 is the measured P(deal-in) per danger weight unit (danger.tile_risk
# assumes WAIT_PER_WEIGHT; 2 × 1,500 hands, seed 5, all seats' discards), so at the default `defence` 0.3 the wait
# pays the measured price in full (0.6 or 1.5 of it measured less: docs/bots.md, "The expert's defence"). It
# replaced a flat 0.1 deal-ins per discard × a plain hand's points (issue 34 item 7).
WAIT_DANGER = 0.035 / WAIT_PER_WEIGHT / 0.3
CDJ_SHARE = 0.5        # share of opponents still in that are not ready at the exhaustive draw
TIE = 1e-6             # tie-break weight of connectivity (never outweighs a real difference in value)


@njit(cache=True)
def table_context(ps, seat, tiles_left):
    """``(opponents still in, own draws left)``."""
    n_in = 0
    for q in range(N_SEATS):
        if q != seat and not ps[q, PS_WON]:
            n_in += 1
    n_draws = (tiles_left + n_in) // (n_in + 1)
    return n_in, n_draws


@njit(cache=True)
def unseen_total(conc, visible) -> float:
    u = 0.0
    for k in range(N_KINDS):
        u += unseen_of(conc, visible, k)
    return u


@njit(cache=True)
def hand_value(table, params, conc, mk, mt, nm, void, visible, u_tot, n_draws, n_in, inc, ambition, sh, draws,
               ready_bonus, qc, ks, ronw):
    """Value (expected base units won) of a 3k+1 hand at plain shanten ``sh``: the plain hand from its
    acceptance (computed only when ``draws`` is non-zero, else a typical 4 tiles), or its best big shape;
    plus ``ready_bonus`` × P(ready by the end) (查大叫 and 退税 reward a ready hand at the exhaustive draw).
    ``qc``, ``ks``: the 清一色 cache of :func:`~simulator.bots.expert_value.shapes_value` and the discarded suit;
    ``ronw``: the opponents' discards that hit a wait, per suit (:func:`~simulator.bots.expert_value.ron_weights`).
    Returns ``(value, shaped)``: ``shaped`` when a big shape, not the plain hand, gave the value."""
    if sh >= SHANTEN_NEVER:
        return 0.0, False
    acc = 4.0
    pay = inc[S_PLAIN]
    if draws != 0 and sh == 0 and n_in > 0:  # ready: price each wait exactly
        acc, pay = wait_income(table, params, conc, mk, mt, nm, void, visible, n_in, ronw)
        pay += inc[S_EXIT]
    elif draws != 0:
        acc = float(acceptance(table, conc, mk, mt, nm, void, sh, visible, draws))
    v = p_win(sh, acc, u_tot, n_draws, n_in) * pay
    s = 0.0
    if ambition > 0.0:  # only a shape worth more than v matters: shapes_value may stop at v
        s, _ = shapes_value(table, conc, mk, mt, nm, void, visible, u_tot, n_draws, n_in, inc, ambition, qc, ks, v)
    ready = 1.0 if sh == 0 else p_win(sh - 1, acc, u_tot, n_draws, 0)
    kp = kong_income(params, kong_potential(params, conc, mk, mt, nm, void, visible, u_tot, n_draws, n_in, ronw))
    return max(v, s) + ready_bonus * ready + kp, s > v


@njit(cache=True)
def kong_potential(params, conc, mk, mt, nm, void, visible, u_tot, n_draws, n_in, ronw) -> float:
    """Expected kong income still to come from what the hand holds: a concealed triplet whose fourth copy is
    unseen becomes a 暗杠 when drawn or a 直杠 when an opponent throws it; an exposed pung becomes a 加杠 when
    its fourth copy is drawn. P(the copy comes) ≈ own draws × (1 + opponents' discards per draw) / unseen."""
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


@njit(cache=True)
def ready_bonus(params, n_in, n_draws) -> float:
    """What being ready at the exhaustive draw is worth: 查大叫 (a not-ready player pays each ready one) and
    keeping kong income under 退税, weighted by the chance the hand gets there; grows as the wall empties."""
    if n_in == 0:
        return 0.0
    b = 0.0
    if params[P_CHADAJIAO]:
        b += points_of(1, params) * n_in * CDJ_SHARE
    return b * P_EXHAUST / (1.0 + 0.25 * n_draws)


@njit(cache=True)
def discard_values(table, params, ps, seat, conc, mk, mt, nm, void, legal, visible, sh_buf, tiles_left,
                   bpar, out, shaped) -> float:
    """``out[k]`` = value of the hand after discarding k (−inf when illegal), 花猪 cost included (also of tiles
    of ``void`` a dancer's shown waits keep in hand: :func:`~simulator.bots.dance.stuck_cost`), and
    ``shaped[k]`` = 1 when a big shape gave that value; returns the best plain shanten. The plain acceptance is
    counted for the discards at the best shanten only."""
    n_in, n_draws = table_context(ps, seat, tiles_left)
    ambition = bpar[BP_AMBITION] / BOT_MILLI
    tempo = bpar[BP_TEMPO] / BOT_MILLI
    u_tot = unseen_total(conc, visible)
    inc = np.empty(N_SHAPES, np.float64)
    shape_incomes(params, mk, nm, held4(conc, mk, mt, nm), n_in, n_draws, tempo, inc)
    best = discard_shantens(table, conc, mk, mt, nm, void, legal, sh_buf)
    draws = draw_candidates(conc, void)
    rb = ready_bonus(params, n_in, n_draws)
    hz_rule = void_rule(params) != VOID_DECLARED
    hz_held = suit_count(conc, void) if void >= 0 else 0
    stuck = stuck_cost(params, ps, seat, conc, visible, void, tiles_left)  # the same whatever is discarded
    qc = np.full(6, -1.0)  # 清一色 reach per suit, shared by the discards from the other suits
    ronw = ron_weights(params, ps, seat)
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
            conc[k] -= 1
            # every shape's distance is at least the plain shanten: two behind the best, not worth pricing
            v, shp = hand_value(table, params, conc, mk, mt, nm, void, visible, u_tot, n_draws, n_in, inc,
                                ambition if sh <= best + 1 else 0.0, sh, draws if sh == best else 0, rb, qc, k // 9,
                                ronw)
            conc[k] += 1
            if k // 9 == void:
                dead_v, dead_s = v, shp
        if hz_rule and void >= 0:
            left = hz_held - 1 if k // 9 == void else hz_held
            v -= huazhu_cost(params, n_in, n_draws, left) + stuck
        out[k] = v
        shaped[k] = 1 if shp else 0
    return best


@njit(cache=True)
def second_void(table, params, conc, mk, mt, nm, void) -> int:
    """Under ``void_suit: none``, while the planned suit to drop is not cleared: the other suit whose dropping
    is at most one shanten worse (and still holds tiles), else −1. Valuing discards under both plans keeps
    three suits open as long as the expected 花猪 penalty allows (a low penalty keeps them open longer)."""
    if void_rule(params) != VOID_NONE or void < 0 or suit_count(conc, void) == 0:
        return -1
    sh = shanten(table, conc, mk, mt, nm, void)
    best, best_sh = -1, SHANTEN_NEVER
    for s in range(3):
        if s == void or suit_count(conc, s) == 0:
            continue
        d = shanten(table, conc, mk, mt, nm, s)
        if d <= sh + 1 and d < best_sh:
            best, best_sh = s, d
    return best


@njit(cache=True)
def gumbel(rng) -> float:
    u = (randbelow(rng, 1 << 30) + 0.5) / (1 << 30)
    return -math.log(-math.log(u))


# Why the expert chose its discard (logged with the discard event, shown by ``xuezhan replay``; 0 = not the expert)
R_VALUE, R_SHAPE, R_READY, R_VOID, R_THIRD, R_FOLD, R_SAFER, R_NOISE = range(1, 9)
FOLD_MIN = 0.01  # value (base units) a discard must give up for the deal-in risk to count as folding
REASON_SHIFT = 5  # bot_discard returns kind | reason << REASON_SHIFT (kinds < 32)


@njit(cache=True)
def expert_discard(table, params, g, ps, mk_all, mt_all, nm_all, seat, conc, mk, mt, nm, void, legal, visible,
                   sh_buf, tiles_left, bpar, rng) -> int:
    """The legal discard of highest value − defence × deal-in risk (+ temperature noise), as
    ``kind | reason << REASON_SHIFT`` (``R_*``: what decided it — see :func:`discard_reason`)."""
    vals = np.empty(N_KINDS, np.float64)
    shaped = np.empty(N_KINDS, np.int8)
    discard_values(table, params, ps, seat, conc, mk, mt, nm, void, legal, visible, sh_buf, tiles_left, bpar,
                   vals, shaped)
    alt = second_void(table, params, conc, mk, mt, nm, void)
    if alt >= 0:  # keep the option of dropping the other suit: value each discard under the better plan
        vals2 = np.empty(N_KINDS, np.float64)
        shaped2 = np.empty(N_KINDS, np.int8)
        buf2 = np.empty(N_KINDS, np.int64)
        discard_values(table, params, ps, seat, conc, mk, mt, nm, alt, legal, visible, buf2, tiles_left, bpar,
                       vals2, shaped2)
        for k in range(N_KINDS):
            if vals2[k] > vals[k]:
                vals[k] = vals2[k]
                shaped[k] = shaped2[k]
    p_ready = np.zeros(N_SEATS, np.float64)
    loss = np.zeros(N_SEATS, np.float64)
    dead = np.full(N_SEATS, -1, np.int64)
    qsuit = np.full(N_SEATS, -1, np.int64)
    opponent_threats(params, ps, mk_all, mt_all, nm_all, seat, p_ready, loss, dead, qsuit)
    defence = bpar[BP_DEFENCE] / BOT_MILLI
    temp = bpar[BP_TEMPERATURE] / BOT_MILLI
    best = best_safe = best_val = -1
    best_v = best_sv = best_vv = -np.inf
    for k in range(N_KINDS):
        if not (legal >> k) & 1:
            continue
        tie = TIE * (100.0 if k // 9 == void else 0.0) - TIE * connectivity(conc, k)
        v = vals[k] + tie
        if v > best_vv:
            best_val, best_vv = k, v
        v -= defence * tile_risk(ps, seat, p_ready, loss, dead, qsuit, k)
        if v > best_sv:
            best_safe, best_sv = k, v
        if temp > 0.0:
            v += temp * gumbel(rng)
        if v > best_v:
            best, best_v = k, v
    why = discard_reason(params, best, best_safe, best_val, void, sh_buf[best] if alt < 0 else SHANTEN_NEVER,
                         shaped[best], vals[best_val] - vals[best], sh_buf[best] > sh_buf[best_val])
    return best | why << REASON_SHIFT


@njit(cache=True)
def discard_reason(params, k, best_safe, best_val, void, sh_after, shaped, given_up, steps_up) -> int:
    """What decided discard ``k``: the noise (``temperature``) moved it off the best choice; else the deal-in
    risk moved it off the best-value tile, giving up ``given_up`` base units of hand value: folding when that is
    at least :data:`FOLD_MIN` or the tile leaves the hand a step further from ready (``steps_up``), else the safer
    of tiles worth the same (a tie broken by safety); else it is the
    best-value tile and the reason is what its value rests on — a dead tile of the void suit (declared, or the
    third suit cleared against 花猪), staying ready, a big shape, or plain efficiency."""
    if k != best_safe:
        return R_NOISE
    if k != best_val:
        return R_FOLD if given_up >= FOLD_MIN or steps_up else R_SAFER
    if k // 9 == void:
        return R_THIRD if void_rule(params) != VOID_DECLARED else R_VOID
    if sh_after == 0:
        return R_READY
    if shaped:
        return R_SHAPE
    return R_VALUE


@njit(cache=True)
def best_after(table, params, ps, seat, conc, mk, mt, nm, void, visible, tiles_left, bpar) -> float:
    """Value of a 3k+2 hand: its best discard (any held tile)."""
    legal = 0
    for k in range(N_KINDS):
        if conc[k] > 0:
            legal |= 1 << k
    vals = np.empty(N_KINDS, np.float64)
    buf = np.empty(N_KINDS, np.int64)
    discard_values(table, params, ps, seat, conc, mk, mt, nm, void, legal, visible, buf, tiles_left, bpar, vals,
                   np.empty(N_KINDS, np.int8))
    return vals.max()


@njit(cache=True)
def value13(table, params, ps, seat, conc, mk, mt, nm, void, visible, tiles_left, bpar) -> float:
    """Value of a 3k+1 hand as it stands."""
    n_in, n_draws = table_context(ps, seat, tiles_left)
    ambition = bpar[BP_AMBITION] / BOT_MILLI
    tempo = bpar[BP_TEMPO] / BOT_MILLI
    inc = np.empty(N_SHAPES, np.float64)
    shape_incomes(params, mk, nm, held4(conc, mk, mt, nm), n_in, n_draws, tempo, inc)
    sh = shanten(table, conc, mk, mt, nm, void)
    return hand_value(table, params, conc, mk, mt, nm, void, visible, unseen_total(conc, visible), n_draws, n_in, inc,
                      ambition, sh, draw_candidates(conc, void), ready_bonus(params, n_in, n_draws),
                      np.full(6, -1.0), -1, ron_weights(params, ps, seat))[0]


@njit(cache=True)
def expert_claim(table, params, ps, seat, conc, mk, mt, nm, void, tile, can_pung, can_kong, visible,
                 tiles_left, bpar) -> int:
    """0 pass, 1 pung, 2 exposed kong: whichever leaves the most value (a kong adds its income, and all kong
    income held is priced by the chance of being ready at the end: :func:`refund_risk`). Never a tile whose
    discard win it has just declined (its lock since its last draw holds the tile): the decline kept the wait
    as worth more than the win, and a pung or kong of the tile gives the wait up."""
    if ps[seat, PS_LOCKED] and (ps[seat, PS_LOCK_MASK] >> tile) & 1:
        return 0
    n_in, n_draws = table_context(ps, seat, tiles_left)
    held = held_kong_income(params, mk, nm, n_in)
    u_tot = unseen_total(conc, visible)
    now = value13(table, params, ps, seat, conc, mk, mt, nm, void, visible, tiles_left, bpar)
    now -= held * refund_risk(params, ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws), n_in, n_draws)
    best, choice = now, 0
    mk[nm] = MELD_PUNG
    mt[nm] = tile
    # the claimed tiles become a meld, face up: counted as seen while the hand after the claim is valued
    if can_pung:
        conc[tile] -= 2
        visible[tile] += 2
        v = best_after(table, params, ps, seat, conc, mk, mt, nm + 1, void, visible, tiles_left, bpar)
        v -= held * refund_risk(params, ready_chance(table, conc, mk, mt, nm + 1, void, u_tot, n_draws), n_in,
                           n_draws)
        conc[tile] += 2
        visible[tile] -= 2
        if v > best:
            best, choice = v, 1
    if can_kong:
        conc[tile] -= 3
        visible[tile] += 3
        mk[nm] = MELD_KONG
        v = value13(table, params, ps, seat, conc, mk, mt, nm + 1, void, visible, tiles_left - 1, bpar)
        v += kong_value(params, table, ps, seat, conc, mk, mt, nm + 1, void, u_tot, tiles_left, held,
                        direct_kong_amount(params, n_in))
        conc[tile] += 3
        visible[tile] -= 3
        if v > best:
            choice = 2
    return choice


@njit(cache=True)
def kong_income(params, amount) -> float:
    """Kong income still to come (:func:`kong_potential`), at the average share kept (:data:`KONG_KEEP`)."""
    keep = KONG_KEEP if params[P_REFUND_KONGS_IF_NOT_READY] else 1.0
    return keep * amount


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
    return p_win(sh - 1, TYP_ACC, u_tot, n_draws, 0)


@njit(cache=True)
def refund_risk(params, ready, n_in, n_draws) -> float:
    """P(kong income is refunded under 退税): the hand reaches the exhaustive draw — no end first over ``n_draws``
    own draws at :data:`~simulator.bots.expert_value.END_RATE` per draw for ``n_in`` opponents in, times
    :data:`~simulator.bots.dance.P_EXHAUST` — with the seat not ready (``ready``: P(ready then))."""
    if not params[P_REFUND_KONGS_IF_NOT_READY]:
        return 0.0
    return P_EXHAUST * (1.0 - END_RATE[min(n_in, len(END_RATE) - 1)]) ** n_draws * (1.0 - ready)


@njit(cache=True)
def kong_value(params, table, ps, seat, conc, mk, mt, nm, void, u_tot, tiles_left, held, amount) -> float:
    """What a kong collecting ``amount`` is worth, with ``held`` the kong income the seat held before it: the new
    income is kept unless passed on by 呼叫转移 (:data:`TRANSFER_KEEP`, under 退税 rules) or refunded, and all of
    it is refunded at the exhaustive draw if the hand is not ready then (:func:`refund_risk`, by the chance the
    hand after the kong — ``conc``, ``mk``, ``nm`` without the kong's tiles, its replacement draw to come — is
    ready at the end). A kong that breaks a ready hand with the wall nearly empty so costs its own income and the
    income held; the 查大叫 side is in the hand's value (:func:`ready_bonus`)."""
    n_in, n_draws = table_context(ps, seat, tiles_left - 1)
    r = refund_risk(params, ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws + 1), n_in,
                    n_draws + 1)
    keep = TRANSFER_KEEP if params[P_REFUND_KONGS_IF_NOT_READY] else 1.0
    return amount * keep * (1.0 - r) - held * r


@njit(cache=True)
def expert_self_kong(table, params, ps, seat, conc, mk, mt, nm, void, opts, visible, tiles_left, bpar) -> int:
    """The kong among ``opts`` that adds the most value over discarding normally (kong income priced by
    :func:`kong_value`), or −1."""
    base = best_after(table, params, ps, seat, conc, mk, mt, nm, void, visible, tiles_left, bpar)
    n_in, n_draws = table_context(ps, seat, tiles_left)
    held = held_kong_income(params, mk, nm, n_in)
    u_tot = unseen_total(conc, visible)
    base -= held * refund_risk(params, ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws), n_in, n_draws)
    best, pick = base, -1
    for k in range(N_KINDS):
        if not (opts >> k) & 1:
            continue
        if conc[k] == 4:
            conc[k] = 0
            visible[k] += 4  # its own 暗杠: the deciding seat knows where all four are
            mk[nm] = MELD_CKONG
            mt[nm] = k
            v = value13(table, params, ps, seat, conc, mk, mt, nm + 1, void, visible, tiles_left - 1, bpar)
            v += kong_value(params, table, ps, seat, conc, mk, mt, nm + 1, void, u_tot, tiles_left, held,
                            concealed_kong_amount(params, n_in))
            conc[k] = 4
            visible[k] -= 4
        else:
            i = 0
            while mt[i] != k or mk[i] != MELD_PUNG:
                i += 1
            conc[k] -= 1
            visible[k] += 1
            mk[i] = MELD_KONG
            v = value13(table, params, ps, seat, conc, mk, mt, nm, void, visible, tiles_left - 1, bpar)
            each = params[P_ADDED_KONG_EACH] * (0.5 if params[P_ADDED_KONG_FRESH_ONLY] else 1.0)
            v += kong_value(params, table, ps, seat, conc, mk, mt, nm, void, u_tot, tiles_left, held, each * n_in)
            mk[i] = MELD_PUNG
            conc[k] += 1
            visible[k] -= 1
        if v > best:
            best, pick = v, k
    return pick


@njit(cache=True)
def public_unseen(ps, conc_all, mk_all, mt_all, nm_all, seat, k) -> float:
    """Copies of k that may still come, judged without the exact discard counts (the win decision is taken
    inside the engine's claim step, which does not carry them): 4 − own − in melds − in winners' hands − 1 if
    anyone discarded it. Melds: its own and the others' face-up ones (another seat's 暗杠 is face down: its kind is
    not known). A winner's hand is laid down at the table under 血战 (public, docs/rules.md "Bots"); under 血流 a
    winner plays on with its hand hidden and is not marked out (``PS_WON`` 0), so it is not counted. A discard win's
    tile is in the winner's hand and counted as its discarder's discard too: at most one copy too few."""
    u = 4 - np.int64(conc_all[seat, k])
    for q in range(N_SEATS):
        for i in range(nm_all[q]):
            if (mt_all[q, i] if q == seat else face_up(mk_all, mt_all, q, i)) == k:
                u -= 3
        if (ps[q, PS_DISCARDED] >> k) & 1:
            u -= 1
        if q != seat and ps[q, PS_WON]:
            u -= np.int64(conc_all[q, k])
    return float(u) if u > 0 else 0.0


@njit(cache=True)
def first_hit(hits, rounds, end_rate) -> float:
    """P(a hit before the hand ends without this seat) over ``rounds`` own draws, with ``hits`` expected hits in
    all and the hand ending first at ``end_rate`` per own draw (competing risks)."""
    a = hits / rounds
    s = a - math.log(1.0 - end_rate)
    if s <= 0.0:
        return 0.0
    return a / s * (1.0 - math.exp(-s * rounds))


@njit(cache=True)
def expert_takes_win(table, params, ps, conc_all, mk_all, mt_all, nm_all, seat, mk, mt, nm, void, tile, capped,
                     self_draw, tiles_left, bpar) -> bool:
    """Take a self-draw always; take a discard win unless waiting is worth more (``conc_all[seat]`` = the 13 tiles
    without the winning one). Waiting is valued over the hand's waits (copies still unseen: :func:`public_unseen`),
    each scored as a self-draw (every opponent still in pays) and as a discard win; the pass lock removes, until the
    next draw, the discard wins it forbids (``off`` none, ``same_tile`` this kind, ``higher_fan`` those not worth
    more fan, ``all_tiles`` all). The hand may end first — with one or two opponents in, as soon as they have won
    — at :data:`~simulator.bots.expert_value.END_RATE` per own draw, so a wait is worth less the fewer opponents
    are in and the fewer draws are left. Waiting costs ``defence`` × deal-in risk; winning now also leaves the
    table now (``tempo``). (Charging as well the opponents' self-draws paid while still in, 0.02 per opponent in
    and own draw, measured worse: docs/bots.md, "What was tried, by part of the rules".)"""
    if self_draw:
        return True
    n_in, n_draws = table_context(ps, seat, tiles_left)
    if n_draws <= 1 or n_in == 0:
        return True
    conc = conc_all[seat]
    waits = wait_mask(table, conc, mk, mt, nm, void)
    lock = params[P_PASS_RON_LOCK]
    ronw = ron_weights(params, ps, seat)
    w = sd_sum = r_w = ron_sum = ok_w = ok_sum = 0.0  # r_*: weighted by the opponents' discards that hit a wait
    for k in range(N_KINDS):
        if not (waits >> k) & 1:
            continue
        u = public_unseen(ps, conc_all, mk_all, mt_all, nm_all, seat, k) - (1.0 if k == tile else 0.0)
        if u <= 0.0:
            continue
        conc[k] += 1
        ron = evaluate_win(table, conc, mk, mt, nm, void, k, 0, params)
        sd = evaluate_win(table, conc, mk, mt, nm, void, k, CTX_SELF_DRAW, params)
        conc[k] -= 1
        r = u * ronw[k // 9]  # discards that may hit it, per own draw (more in a suit an opponent must throw)
        w += u
        r_w += r
        sd_sum += u * sd[5]
        ron_sum += r * ron[5]
        if lock == LOCK_OFF or (lock == LOCK_SAME and k != tile) or (lock == LOCK_HIGHER and ron[1] > capped):
            ok_w += r
            ok_sum += r * ron[5]
    if w <= 0.0:
        return True
    unseen = tiles_left + 13.0 * n_in  # the wall and the opponents' hands
    p = w / unseen  # per own draw
    rounds = float(n_draws)
    end = END_RATE[min(n_in, len(END_RATE) - 1)]
    h_sd = p * rounds
    h_ron = r_w / unseen * (rounds - LOCK_ROUNDS)
    h_lock = ok_w / unseen * LOCK_ROUNDS  # the lock window: only allowed discard wins
    h_free = r_w / unseen * LOCK_ROUNDS  # the same window without a lock
    base = h_sd * sd_sum / w * n_in + h_ron * ron_sum / r_w
    total = h_sd + h_ron + h_lock
    p_any = first_hit(total, rounds, end)
    value = (base + (h_lock * ok_sum / ok_w if ok_w > 0 else 0.0)) / total
    # a lock only removes options: never value waiting under it above waiting without one
    p_free = first_hit(h_sd + h_ron + h_free, rounds, end)
    free = p_free * (base + h_free * ron_sum / r_w) / (h_sd + h_ron + h_free)
    wait = min(p_any * value, free) * bpar[BP_AMBITION] / BOT_MILLI
    now = float(points_of(capped, params))
    # winning now also leaves the table now; a later win saves only the rounds after it
    now += exit_value(params, n_in, n_draws, bpar[BP_TEMPO] / BOT_MILLI) * (1.0 - p_any * 0.5)
    exposure = min(rounds, rounds / max(total, 1e-3))  # discards made before the hand is won
    danger = WAIT_DANGER * mean_risk(params, ps, mk_all, mt_all, nm_all, seat, void)
    risk = bpar[BP_DEFENCE] / BOT_MILLI * danger * exposure
    return now >= wait - risk


@njit(cache=True)
def self_draw_points(params, capped) -> float:
    """Points each payer pays for the same hand won by self-draw (the self-draw bonus of the rules)."""
    bonus = params[P_SELF_DRAW_BONUS]
    if bonus == BONUS_ADD_BASE:
        return points_of(capped, params) + 1.0
    if bonus == BONUS_ADD_FAN:
        return points_of(cap_fan(capped + 1, params), params)
    return points_of(capped, params)


# ---- 定缺 and 换三张 by value ---------------------------------------------------------------------------------

@njit(cache=True)
def start_value(table, params, conc, mk, mt, nm, void, bpar) -> float:
    """Value of a starting hand (13 or 14 tiles, nothing seen yet, nobody has won) played with ``void`` dead:
    a 3k+1 hand as it stands (minus the expected 花猪 cost of its ``void`` tiles where 花猪 can happen), a
    3k+2 hand (the dealer's) by its best discard."""
    ps = np.zeros((N_SEATS, PS_N), np.int64)
    visible = np.zeros(N_KINDS, np.int8)
    left = N_TILES - 13 * N_SEATS - 1
    n = 0
    for k in range(N_KINDS):
        n += conc[k]
    if n % 3 == 2:
        return best_after(table, params, ps, 0, conc, mk, mt, nm, void, visible, left, bpar)
    v = value13(table, params, ps, 0, conc, mk, mt, nm, void, visible, left, bpar)
    if void_rule(params) != VOID_DECLARED:
        n_in, n_draws = table_context(ps, 0, left)
        v -= huazhu_cost(params, n_in, n_draws, suit_count(conc, void))
    return v


@njit(cache=True)
def expert_void(table, params, conc, mk, mt, nm, bpar) -> int:
    """定缺: the suit whose dropping leaves the hand worth most under the active rules (its plain speed,
    acceptance and waits, and the big shapes the other two suits still allow); ties to fewer tiles."""
    best, best_v, best_n = 0, -np.inf, 99
    sh = np.empty(3, np.int64)
    for s in range(3):
        sh[s] = shanten(table, conc, mk, mt, nm, s)
    for s in range(3):
        if sh[s] > sh.min() + 1:
            continue  # two steps slower: no triplet's kong income is worth that at the deal
        v = start_value(table, params, conc, mk, mt, nm, s, bpar)
        n = suit_count(conc, s)
        if v > best_v + TIE or (v > best_v - TIE and n < best_n):
            best, best_v, best_n = s, v, n
    return best
