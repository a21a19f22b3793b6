"""``expert``: decides by expected value under the active rule set (see docs/rules.md, "Bots").

- **Discard**: for every legal discard, the value of the hand left (:mod:`simulator.bots.expert_value`: plain
  hand by 缺一门 shanten and acceptance over unseen tiles, or the best big shape scaled by ``ambition``) minus
  ``defence`` × the expected deal-in loss of the tile (:mod:`simulator.bots.danger`) minus the expected 花猪
  penalty of the third-suit tiles still held (only where 花猪 can happen: ``void_suit`` none / lenient), plus
  optional Gumbel noise of scale ``temperature`` (softmax choice). Ties: a dead tile, then the least connected.
  With one opponent in at the last tiles the deal-in loss is read exactly from the hands the unseen tiles leave
  it (:mod:`simulator.bots.expert_read`).
- **Claims and kongs**: take a pung or kong when the hand's value after it (plus the kong's income) beats the
  value without it, every option charged by its chance of ending not ready the 退税 refund of all kong income
  held and, when the hand is ready now, the 查大叫 it would pay (:func:`~simulator.bots.expert_kongs.not_ready_cost`,
  :func:`kong_value`); never a tile whose discard win it has just declined.
- **Wins**: self-draws are always taken, and under 血流 every win (the seat plays on with the same waits); a discard
  win is declined when waiting for a self-draw (every opponent still in pays) or a bigger hand is worth more than the
  points now, counting the discard wins the pass lock (``pass_ron_lock``) would forbid until the next draw, the hand
  ending first (fewer opponents in, fewer draws left) and the deal-in risk of playing on; the waits' copies left
  exclude winners' laid-down hands (public under 血战). The engine enforces 最后N张必胡.
- **定缺**: the suit whose dropping leaves the starting hand worth most (:func:`expert_void`); **换三张**: as
  greedy (a pass chosen by this evaluation measured worse against greedy).
- **Reason**: each discard carries a code (``R_*``) saying what decided it; ``xuezhan replay`` shows it.

Everything it reads is public or its own: its hand and melds, discards and face-up melds of all seats
(``visible``, with its own concealed kongs and the hands 血战 winners laid down added by the dispatcher; another
seat's 暗杠 is face down: only that it exists counts, never its kind or suit), declared voids, who has won, draws
made, tiles left, and the rules.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from simulator.bots.common import connectivity, suit_count
from simulator.bots.dance import huazhu_cost
from simulator.bots.danger import WAIT_PER_WEIGHT, mean_risk, opponent_threats, threat_arrays, tile_risk
from simulator.bots.expert_hand import (
    BP_AMBITION,
    BP_DEFENCE,
    BP_TEMPERATURE,
    BP_TEMPO,
    best_after,
    concealed_kong_amount,
    direct_kong_amount,
    discard_values,
    table_context,
    unseen_total,
    value13,
)
from simulator.bots.expert_kongs import (
    breaks_ready_late,
    end_risk,
    held_kong_income,
    kong_value,
    not_ready_cost,
    ready_chance,
)
from simulator.bots.expert_pwin import MODE_XUELIU, end_rate
from simulator.bots.expert_read import read_deal_in
from simulator.bots.expert_value import exit_value, ron_weights, wait_copies
from simulator.bots.view import seat_view, with_tiles_left
from simulator.kernel.evaluate import CTX_SELF_DRAW, evaluate_win
from simulator.kernel.rng import randbelow
from simulator.kernel.scoring import points_of
from simulator.kernel.shape import MELD_CKONG, MELD_KONG, MELD_PUNG, SHANTEN_NEVER, hand_tiles, shanten, wait_mask
from simulator.kernel.state import (
    N_KINDS,
    N_SEATS,
    N_TILES,
    PS_LOCK_MASK,
    PS_LOCKED,
    PS_N,
    VOID_DECLARED,
    VOID_NONE,
    stack_empty,
    void_rule,
)
from simulator.rules.keys import SLOT, code
from simulator.rules.vocab import BOT_MILLI

P_ADDED_KONG_EACH = SLOT["kongs.added_kong.each"]
P_ADDED_KONG_FRESH_ONLY = SLOT["kongs.added_kong_fresh_only"]
P_MODE = SLOT["mode"]
P_PASS_RON_LOCK = SLOT["pass_ron_lock"]

LOCK_OFF, LOCK_SAME, LOCK_HIGHER = (code("pass_ron_lock", x) for x in ("off", "same_tile", "higher_fan"))
LOCK_ROUNDS = 0.75     # discard-win chances lost by a lock until the next draw, in rounds of discards
# The deal-in cost of each discard while waiting after a declined win, per unit of the table's mean danger
# (danger.mean_risk: the opponents' P(ready), waits and expected win from public signals — melds, one-suit melds,
# kongs, discards, draws made), × `defence`. 0.035 is the measured P(deal-in) per danger weight unit (danger.tile_risk
# assumes WAIT_PER_WEIGHT; 2 × 1,500 hands, seed 5, all seats' discards), so at `defence` 0.3 (the default until
# 2026-12-05; 0.65 since, where the wait pays 2.7 × the measured price: docs/bots.md, "The default `defence`") the wait
# pays 1.25 × the measured price (it replaced a flat 0.1 deal-ins per discard × a plain hand's points, issue 34
# item 7; with the copies a wait has left counted exactly, 1.25 × and a wait at face value — WAIT_AMBITION — measured
# +0.007 / +0.001 / +0.004 ± 0.0024 base units per player-hand on seeds 7 / 11 / 13 at no more deal-ins:
# docs/bots.md, "Wins and declines").
WAIT_DANGER = 1.25 * 0.035 / WAIT_PER_WEIGHT / 0.3
WAIT_AMBITION = 1.15   # the `ambition` at which a declined win's wait is priced at face value (the default)
TIE = 1e-6             # tie-break weight of connectivity (never outweighs a real difference in value)


@njit(cache=True, _nrt=False)
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


@njit(cache=True, _nrt=False)
def gumbel(rng) -> float:
    u = (randbelow(rng, np.int64(1 << 30)) + 0.5) / (1 << 30)
    return -math.log(-math.log(u))


# Why the expert chose its discard (logged with the discard event, shown by ``xuezhan replay``; 0 = not the expert)
R_VALUE, R_SHAPE, R_READY, R_VOID, R_THIRD, R_FOLD, R_SAFER, R_NOISE = range(1, 9)
FOLD_MIN = 0.01  # value (base units) a discard must give up for the deal-in risk to count as folding
REASON_SHIFT = 5  # bot_discard returns kind | reason << REASON_SHIFT (kinds < 32)


@njit(cache=True, inline="always")  # inlined into bots.param_discard: one library fewer to compile
def expert_discard(view, hand, st, bpar, void, legal) -> int:
    """The legal discard of ``hand`` (:class:`~simulator.kernel.shape.HandTiles`) of highest value − defence × deal-in
    risk (+ temperature noise), seen from ``view`` (:class:`~simulator.bots.view.SeatView`), as
    ``kind | reason << REASON_SHIFT`` (``R_*``: what decided it — see :func:`discard_reason`). The prepared
    arguments of :data:`simulator.bots.PREPARED_ARGS` (it is the expert's ``seat_discard``); of ``st`` it reads the
    shanten scratch ``sh_buf`` and the seat's random stream ``rngs[1 + seat]``, the plan's suit is ``hand``'s."""
    table, params, ps = view.table, view.params, view.ps
    sh_buf, rng = st.sh_buf, st.rngs[1 + view.seat:2 + view.seat]
    conc, mk, mt, nm, void = hand
    vals = stack_empty(N_KINDS, np.float64)  # scratch arrays on the stack: no allocation, no reference counting
    shaped = stack_empty(N_KINDS, np.int8)
    discard_values(view, hand, legal, sh_buf, bpar, vals, shaped)
    alt = second_void(table, params, conc, mk, mt, nm, void)
    if alt >= 0:  # keep the option of dropping the other suit: value each discard under the better plan
        vals2 = stack_empty(N_KINDS, np.float64)
        shaped2 = stack_empty(N_KINDS, np.int8)
        buf2 = stack_empty(N_KINDS, np.int64)
        discard_values(view, hand_tiles(conc, mk, mt, nm, alt), legal, buf2, bpar, vals2, shaped2)
        for k in range(N_KINDS):
            if vals2[k] > vals[k]:
                vals[k] = vals2[k]
                shaped[k] = shaped2[k]
    p_ready, loss, dead, qsuit = threats = threat_arrays()
    opponent_threats(view, threats)
    exact = stack_empty(N_KINDS, np.float64)  # the lone opponent's wins read from the unseen tiles, at the last ones
    read = read_deal_in(view, conc, exact)
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
        v -= exact[k] if read else defence * tile_risk(ps, p_ready, loss, dead, qsuit, k)
        if v > best_sv:
            best_safe, best_sv = k, v
        if temp > 0.0:
            v += temp * gumbel(rng)
        if v > best_v:
            best, best_v = k, v
    why = discard_reason(params, void, (best, best_safe, best_val), sh_buf[best] if alt < 0 else SHANTEN_NEVER,
                         shaped[best], vals[best_val] - vals[best], sh_buf[best] > sh_buf[best_val])
    return best | why << REASON_SHIFT


@njit(cache=True, _nrt=False)
def discard_reason(params, void, choice, sh_after, shaped, given_up, steps_up) -> int:
    """What decided discard ``k`` (``choice`` = ``(k, best_safe, best_val)``: the tile chosen, the best after the
    deal-in risk, the best by value alone): the noise (``temperature``) moved it off the best choice; else the deal-in
    risk moved it off the best-value tile, giving up ``given_up`` base units of hand value: folding when that is
    at least :data:`FOLD_MIN` or the tile leaves the hand a step further from ready (``steps_up``), else the safer
    of tiles worth the same (a tie broken by safety); else it is the
    best-value tile and the reason is what its value rests on — a dead tile of the void suit (declared, or the
    third suit cleared against 花猪), staying ready, a big shape, or plain efficiency."""
    k, best_safe, best_val = choice
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



@njit(cache=True, inline="always")  # inlined into bots.param_claim: one library fewer to compile
def expert_claim(view, hand, st, bpar, void, tile, can_pung, can_kong) -> int:
    """0 pass, 1 pung, 2 exposed kong: whichever leaves the most value (a kong adds its income; each option pays
    what ending not ready costs — the kong income held and, from a ready hand, 查大叫: :func:`not_ready_cost` —
    by its chance of ending not ready: :func:`end_risk`). Never a tile whose
    discard win it has just declined (its lock since its last draw holds the tile): the decline kept the wait
    as worth more than the win, and a pung or kong of the tile gives the wait up. (The prepared arguments, as the
    expert's ``seat_claim``; ``st`` and ``void`` unread: the plan's suit is ``hand``'s.)"""
    table, params, ps, seat, visible, tiles_left = view.table, view.params, view.ps, view.seat, view.visible, \
        view.tiles_left
    conc, mk, mt, nm, void = hand
    if ps[seat, PS_LOCKED] and (ps[seat, PS_LOCK_MASK] >> tile) & 1:
        return 0
    n_in, n_draws = table_context(ps, seat, tiles_left)
    u_tot = unseen_total(conc, visible)
    r0 = ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws)
    cost = not_ready_cost(params, held_kong_income(params, mk, nm, n_in), n_in, r0 >= 1.0)
    now = value13(view, hand, bpar) - cost * end_risk(params, r0, n_in, n_draws)
    best, choice = now, 0
    mk[nm] = MELD_PUNG
    mt[nm] = tile
    claimed = hand_tiles(conc, mk, mt, nm + 1, void)  # the hand with the claimed meld set down
    # the claimed tiles become a meld, face up: counted as seen while the hand after the claim is valued
    if can_pung:
        conc[tile] -= 2
        visible[tile] += 2
        v = best_after(view, claimed, bpar)
        v -= cost * end_risk(params, ready_chance(table, conc, mk, mt, nm + 1, void, u_tot, n_draws), n_in, n_draws)
        conc[tile] += 2
        visible[tile] -= 2
        if v > best:
            best, choice = v, 1
    if can_kong:
        conc[tile] -= 3
        visible[tile] += 3
        mk[nm] = MELD_KONG
        v = value13(with_tiles_left(view, tiles_left - 1), claimed, bpar)
        v += kong_value(view, claimed, u_tot, cost, direct_kong_amount(params, n_in))
        guard = breaks_ready_late(table, claimed, r0 >= 1.0, tiles_left)
        conc[tile] += 3
        visible[tile] -= 3
        if v > best and not guard:
            choice = 2
    return choice


@njit(cache=True, inline="always")  # inlined into bots.param_self_kong: one library fewer to compile
def expert_self_kong(view, hand, st, bpar, void, opts) -> int:
    """The kong among ``opts`` that adds the most value over discarding normally (kong income priced by
    :func:`kong_value`; not konging pays :func:`not_ready_cost` × :func:`end_risk` of the hand as it is), or −1.
    A kong that breaks a ready hand late so weighs its income against the chance of not being ready again by
    the exhaustive draw, which refunds all kong income held and pays 查大叫 to the ready opponents. (The prepared
    arguments, as the expert's ``seat_self_kong``; ``st`` and ``void`` unread.)"""
    table, params, ps, seat, visible, tiles_left = view.table, view.params, view.ps, view.seat, view.visible, \
        view.tiles_left
    conc, mk, mt, nm, void = hand
    base = best_after(view, hand, bpar)
    n_in, n_draws = table_context(ps, seat, tiles_left)
    u_tot = unseen_total(conc, visible)
    r0 = ready_chance(table, conc, mk, mt, nm, void, u_tot, n_draws)
    cost = not_ready_cost(params, held_kong_income(params, mk, nm, n_in), n_in, r0 >= 1.0)
    base -= cost * end_risk(params, r0, n_in, n_draws)
    best, pick = base, -1
    after = with_tiles_left(view, tiles_left - 1)  # valued after the replacement draw
    konged = hand_tiles(conc, mk, mt, nm + 1, void)  # with a concealed kong set down in slot nm
    for k in range(N_KINDS):
        if not (opts >> k) & 1:
            continue
        if conc[k] == 4:
            conc[k] = 0
            visible[k] += 4  # its own 暗杠: the deciding seat knows where all four are
            mk[nm] = MELD_CKONG
            mt[nm] = k
            v = value13(after, konged, bpar)
            v += kong_value(view, konged, u_tot, cost, concealed_kong_amount(params, n_in))
            guard = breaks_ready_late(table, konged, r0 >= 1.0, tiles_left)
            conc[k] = 4
            visible[k] -= 4
        else:
            i = 0
            while mt[i] != k or mk[i] != MELD_PUNG:
                i += 1
            conc[k] -= 1
            visible[k] += 1
            mk[i] = MELD_KONG
            v = value13(after, hand, bpar)
            each = params[P_ADDED_KONG_EACH] * (0.5 if params[P_ADDED_KONG_FRESH_ONLY] else 1.0)
            v += kong_value(view, hand, u_tot, cost, each * n_in)
            guard = breaks_ready_late(table, hand, r0 >= 1.0, tiles_left)
            mk[i] = MELD_PUNG
            conc[k] += 1
            visible[k] -= 1
        if v > best and not guard:
            best, pick = v, k
    return pick


@njit(cache=True, _nrt=False)
def first_hit(hits, rounds, rate) -> float:
    """P(a hit before the hand ends without this seat) over ``rounds`` own draws, with ``hits`` expected hits in
    all and the hand ending first at ``rate`` per own draw (competing risks)."""
    a = hits / rounds
    s = a - math.log(1.0 - rate)
    if s <= 0.0:
        return 0.0
    return a / s * (1.0 - math.exp(-s * rounds))


@njit(cache=True, inline="always")  # inlined into bots.param_takes_win: one library fewer to compile
def expert_takes_win(view, hand, st, bpar, void, tile, capped, self_draw) -> bool:
    """Take a self-draw always, and under 血流 every win (the seat plays on after it with the same waits, so a decline
    gives up the points and keeps nothing the win does not); take a discard win unless waiting is worth more
    (the prepared arguments, as the expert's ``seat_takes_win``: ``hand`` the seat's
    :class:`~simulator.kernel.shape.HandTiles` under its declared void, its ``conc`` = ``st.conc[seat]`` the 13 tiles
    without the winning one; of ``st`` only ``conc``, read for the hands winners laid down:
    :func:`~simulator.bots.expert_value.wait_copies`).
    Waiting is valued over the hand's waits (copies still unseen: ``wait_copies``),
    each scored as a self-draw (every opponent still in pays) and as a discard win; the pass lock removes, until the
    next draw, the discard wins it forbids (``off`` none, ``same_tile`` this kind, ``higher_fan`` those not worth
    more fan, ``all_tiles`` all). The hand may end first — with one or two opponents in, as soon as they have won;
    under mode ``single`` with any opponent's win — at :func:`~simulator.bots.expert_pwin.end_rate` per own draw,
    so a wait is worth less the fewer opponents are in and the fewer draws are left. Waiting costs ``defence`` ×
    deal-in risk; winning now also leaves the table now (``tempo``). (Charging as well the opponents' self-draws
    paid while still in, 0.02 per opponent in and own draw, measured worse: docs/bots.md, "What was tried, by part
    of the rules".)"""
    if self_draw:
        return True
    table, params, ps, seat, tiles_left = view.table, view.params, view.ps, view.seat, view.tiles_left
    if params[P_MODE] == MODE_XUELIU:  # a 血流 win keeps the seat in with the same waits: declining only loses
        return True
    n_in, n_draws = table_context(ps, seat, tiles_left)
    if n_draws <= 1 or n_in == 0:
        return True
    conc, mk, mt, nm, void = hand
    conc_all = st.conc
    waits = wait_mask(table, conc, mk, mt, nm, void)
    lock = params[P_PASS_RON_LOCK]
    ronw = stack_empty(3, np.float64)
    ron_weights(params, ps, seat, ronw)
    w = sd_sum = r_w = ron_sum = ok_w = ok_sum = 0.0  # r_*: weighted by the opponents' discards that hit a wait
    for k in range(N_KINDS):
        if not (waits >> k) & 1:
            continue
        u = wait_copies(view, conc_all, tile, k)  # the tile on offer is in `visible`
        if u <= 0.0:
            continue
        conc[k] += 1
        ron = evaluate_win(table, hand, k, np.int64(0), params)  # np.int64: no literal copies
        sd = evaluate_win(table, hand, k, np.int64(CTX_SELF_DRAW), params)
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
    end = end_rate(params, n_in)
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
    wait = min(p_any * value, free) * (bpar[BP_AMBITION] / BOT_MILLI / WAIT_AMBITION)
    now = float(points_of(capped, params))
    # winning now also leaves the table now; a later win saves only the rounds after it
    now += exit_value(params, n_in, n_draws, bpar[BP_TEMPO] / BOT_MILLI) * (1.0 - p_any * 0.5)
    exposure = min(rounds, rounds / max(total, 1e-3))  # discards made before the hand is won
    danger = WAIT_DANGER * mean_risk(view, void)
    risk = bpar[BP_DEFENCE] / BOT_MILLI * danger * exposure
    return now >= wait - risk


# ---- 定缺 and 换三张 by value ---------------------------------------------------------------------------------

@njit(cache=True, inline="always")  # inlined into expert_void: one library fewer to compile
def start_value(table, params, hand, bpar) -> float:
    """Value of a starting hand (13 or 14 tiles, nothing seen yet, nobody has won) played with ``void`` dead:
    a 3k+1 hand as it stands (minus the expected 花猪 cost of its ``void`` tiles where 花猪 can happen), a
    3k+2 hand (the dealer's) by its best discard."""
    conc, void = hand.conc, hand.void
    ps = np.zeros((N_SEATS, PS_N), np.int64)
    visible = np.zeros(N_KINDS, np.int8)
    melds = (np.zeros((N_SEATS, 4), np.int8), np.zeros((N_SEATS, 4), np.int8), np.zeros(N_SEATS, np.int64))
    left = N_TILES - 13 * N_SEATS - 1
    n = 0
    for k in range(N_KINDS):
        n += conc[k]
    seat = np.int64(0)  # not the literal 0: numba would compile every callee once more for a literal argument
    view = seat_view(table, params, ps, melds, visible, seat, left)  # nothing seen, nothing set down yet
    if n % 3 == 2:
        return best_after(view, hand, bpar)
    v = value13(view, hand, bpar)
    if void_rule(params) != VOID_DECLARED:
        n_in, n_draws = table_context(ps, seat, left)
        v -= huazhu_cost(params, n_in, n_draws, suit_count(conc, void))
    return v


@njit(cache=True, inline="always")  # inlined into bots.bot_void: one library fewer to compile
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
        v = start_value(table, params, hand_tiles(conc, mk, mt, nm, s), bpar)
        n = suit_count(conc, s)
        if v > best_v + TIE or (v > best_v - TIE and n < best_n):
            best, best_v, best_n = s, v, n
    return best
