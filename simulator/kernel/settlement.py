"""Money: the dealer's compensation, kong payments, win payments, 杠上炮 transfers/refunds and the
exhaustive-draw settlement (docs/spec.md §4–§5).

All compiled; every movement of money goes through :func:`simulator.kernel.state.pay`, so each hand is zero-sum by
construction. Amounts are base units. The kong ledger ``kl`` remembers what each seat paid for each kong, which
is what 呼叫转移 (transfer), 杠上炮 refunds and 退税 move back. Decisions where docs/spec.md is silent are listed in
docs/rules.md ("Engine conventions").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.kernel.evaluate import CTX_DANCE, CTX_SING, max_ready_points
from simulator.kernel.scoring import cap_fan, points_of
from simulator.kernel.shape import hand_tiles, held4_mask, wait_mask
from simulator.kernel.state import (
    C_CHADAJIAO,
    C_HUAZHU,
    C_KONG,
    C_REFUND,
    C_TRANSFER,
    EV_HUAZHU,
    EV_KONG,
    EV_READY,
    G_MONEY_SCALE,
    G_NKONGS,
    KL_FEEDER,
    KL_KIND,
    KL_MAKER,
    KL_PAID,
    KL_STATUS,
    KL_TILE,
    KS_LIVE,
    KS_RETURNED,
    KS_TRANSFERRED,
    N_SEATS,
    PS_DECLARED,
    PS_EVOID,
    PS_HUAZHU,
    PS_NWINS,
    PS_READY,
    PS_VOID,
    PS_WON,
    VOID_NONE,
    log_event,
    pay,
    pay_units,
    void_rule,
)
from simulator.rules.keys import SLOT, code
from simulator.rules.vocab import UNCAPPED_HUAZHU_FAN

P_ADDED_KONG_EACH = SLOT["kongs.added_kong.each"]
P_ADDED_KONG_FRESH_ONLY = SLOT["kongs.added_kong_fresh_only"]
P_CHADAJIAO = SLOT["settlement.chadajiao"]
P_CONCEALED_KONG_EACH = SLOT["kongs.concealed_kong.each"]
P_DISCARD_KONG_DISCARDER = SLOT["kongs.discard_kong.discarder"]
P_DISCARD_KONG_OTHERS = SLOT["kongs.discard_kong.others"]
P_HUAZHU_PAYS = SLOT["settlement.huazhu_pays"]
P_HUAZHU_PENALTY = SLOT["settlement.huazhu_penalty"]
P_REFUND_KONGS_IF_NOT_READY = SLOT["settlement.refund_kongs_if_not_ready"]
HUAZHU_CAP = code("settlement.huazhu_penalty", "cap")

# Kong kinds in the ledger (KL_KIND) and in EV_KONG events
KK_DIRECT, KK_ADDED, KK_CONCEALED = 1, 2, 3
HUAZHU_ALL = code("settlement.huazhu_pays", "all")
DECL_SING, DECL_DANCE = code("declare_ready", "sing"), code("declare_ready", "dance")
_NO_FAN_LIMIT = 1 << 20  # above any cap
P_DEALER_COMPENSATION = SLOT["settlement.dealer_compensation"]
P_MONEY_SCALE = SLOT["settlement.money_scale"]


@njit(cache=True, _nrt=False)
def settle_deal(params, st, dealer: int) -> None:
    """The start of a hand, after the deal: the hand's money unit (``settlement.money_scale`` units per base unit,
    read by every :func:`simulator.kernel.state.pay`), then ``settlement.dealer_compensation`` — the dealer pays each
    other player that many money units (score_transfer; docs/rules.md "Dealer compensation"). Nothing when 0."""
    st.g[G_MONEY_SCALE] = params[P_MONEY_SCALE]
    amount = params[P_DEALER_COMPENSATION]
    if amount > 0:
        for q in range(N_SEATS):
            pay_units(st, dealer, q, amount, np.int64(C_TRANSFER))  # typed int64, as pay passes it: one copy


@njit(cache=True, inline="always")
def declared_ctx(ps, q) -> int:
    """The 唱歌/跳舞 context bit of seat ``q``'s wins and of its 查大叫 (0 when it has not declared)."""
    d = ps[q, PS_DECLARED]
    if d == DECL_SING:
        return np.int64(CTX_SING)
    if d == DECL_DANCE:
        return np.int64(CTX_DANCE)
    return np.int64(0)


@njit(cache=True, _nrt=False)
def kong_payment(params, st, maker: int, kind: int, tile: int, feeder: int, fresh: bool) -> int:
    """Record a kong in the ledger and collect its payment from the players still in; returns its index.

    直杠: the feeder pays ``discard_kong.discarder``, every other player still in ``discard_kong.others``;
    加杠: each player still in pays ``added_kong.each`` (nothing under ``added_kong_fresh_only`` unless the
    fourth tile was just drawn); 暗杠: each player still in pays ``concealed_kong.each``."""
    g, ps, kl = st.g, st.ps, st.kl
    i = g[G_NKONGS]
    g[G_NKONGS] = i + 1
    kl[i, KL_MAKER] = maker
    kl[i, KL_KIND] = kind
    kl[i, KL_TILE] = tile
    kl[i, KL_STATUS] = KS_LIVE
    kl[i, KL_FEEDER] = feeder
    log_event(st, EV_KONG, maker, tile, 0, kind, feeder)
    for q in range(N_SEATS):
        kl[i, KL_PAID + q] = 0
        if q == maker or ps[q, PS_WON]:
            continue
        if kind == KK_DIRECT:
            amt = params[P_DISCARD_KONG_DISCARDER] if q == feeder else params[P_DISCARD_KONG_OTHERS]
        elif kind == KK_ADDED:
            amt = params[P_ADDED_KONG_EACH] if (fresh or not params[P_ADDED_KONG_FRESH_ONLY]) else 0
        else:
            amt = params[P_CONCEALED_KONG_EACH]
        kl[i, KL_PAID + q] = amt
        pay(st, q, maker, amt, C_KONG)
    return i


@njit(cache=True, _nrt=False)
def return_kong(st, i: int, status: int) -> None:
    """Give kong ``i``'s income back to the seats that paid it (杠上炮 refund or 退税)."""
    kl = st.kl
    maker = kl[i, KL_MAKER]
    for q in range(N_SEATS):
        pay(st, maker, q, kl[i, KL_PAID + q], C_REFUND)
    kl[i, KL_STATUS] = status


@njit(cache=True, _nrt=False)
def transfer_kong(st, i, n_winners) -> None:
    """呼叫转移: kong ``i``'s income goes from its maker to the winner(s) of the 杠上炮 (``st.winners[:n_winners]``).
    Split evenly; the remainder of the integer division goes one unit each to the first winners in turn order."""
    kl, winners = st.kl, st.winners
    maker = kl[i, KL_MAKER]
    total = 0
    for q in range(N_SEATS):
        total += kl[i, KL_PAID + q]
    share = total // n_winners
    extra = total - share * n_winners
    for j in range(n_winners):
        pay(st, maker, winners[j], share + (1 if j < extra else 0), C_TRANSFER)
    kl[i, KL_STATUS] = KS_TRANSFERRED


@njit(cache=True, _nrt=False)
def huazhu_penalty(params) -> int:
    """查花猪 penalty per payee in base units: the configured number, or ``cap`` = the points of a hand of
    ``cap`` fan (under the rule set's points/fan_offset), and 2^6 = 64 when uncapped (docs/spec.md §5), whatever
    points/fan_offset say."""
    pen = params[P_HUAZHU_PENALTY]
    if pen != HUAZHU_CAP:
        return pen
    fan = cap_fan(np.int64(_NO_FAN_LIMIT), params)  # the cap itself, read where scoring reads it
    if fan == _NO_FAN_LIMIT:
        return np.int64(1) << UNCAPPED_HUAZHU_FAN
    return points_of(fan, params)


@njit(cache=True, _nrt=False)
def is_huazhu(params, ps, conc, mt, nm, p) -> bool:
    """花猪: tiles of all three suits (``void_suit: none``) or any tile of the declared void suit."""
    used = 0
    for k in range(27):
        if conc[p, k] > 0:
            used |= 1 << (k // 9)
    for i in range(nm[p]):
        used |= 1 << (np.int64(mt[p, i]) // 9)
    if void_rule(params) == VOID_NONE:
        return used == 7
    return (used >> ps[p, PS_VOID]) & 1 == 1


@njit(cache=True, _nrt=False)
def mark_ready(table, st, p) -> bool:
    """Ready (下叫): some tile of a kind not already held four times completes a legal hand."""
    ps, conc, mk, mt, nm = st.ps, st.conc, st.mk, st.mt, st.nm
    w = wait_mask(table, conc[p], mk[p], mt[p], nm[p], ps[p, PS_EVOID])
    w &= ~held4_mask(conc[p], mk[p], mt[p], nm[p])
    ps[p, PS_READY] = 1 if w != 0 else 0
    return w != 0


@njit(cache=True, _nrt=False)
def settle_exhaustive(table, params, st) -> None:
    """Exhaustive draw: 退税, then 查花猪, then 查大叫, among the players still in (docs/spec.md §5): those who have
    not won (血流: a seat that won and played on is outside this settlement, as in 血战; docs/rules.md)."""
    g, ps, conc, mk, mt, nm, kl = st.g, st.ps, st.conc, st.mk, st.mt, st.nm, st.kl
    for p in range(N_SEATS):
        if not ps[p, PS_NWINS] and is_huazhu(params, ps, conc, mt, nm, p):
            ps[p, PS_HUAZHU] = 1
            log_event(st, EV_HUAZHU, p, -1, 0, 0, 0)
    # 退税: every not-ready player still in (a 花猪 is never ready) returns all its live kong income
    if params[P_REFUND_KONGS_IF_NOT_READY]:
        for i in range(g[G_NKONGS]):
            m = kl[i, KL_MAKER]
            if kl[i, KL_STATUS] == KS_LIVE and not ps[m, PS_NWINS] and not ps[m, PS_READY]:
                return_kong(st, i, KS_RETURNED)
    # 查花猪: each 花猪 pays each other non-花猪 player still in (or every non-花猪 player under "all")
    pen = huazhu_penalty(params)
    for h in range(N_SEATS):
        if not ps[h, PS_HUAZHU]:
            continue
        for q in range(N_SEATS):
            if q == h or ps[q, PS_HUAZHU]:
                continue
            if ps[q, PS_NWINS] and params[P_HUAZHU_PAYS] != HUAZHU_ALL:
                continue
            pay(st, h, q, pen, C_HUAZHU)
    # 查大叫: every not-ready, non-花猪 player still in pays every ready player still in its best hand, a declared
    # hand's with the fan of its 唱歌/跳舞 (seed 001: 最大的可能番)
    if params[P_CHADAJIAO]:
        for r in range(N_SEATS):
            if ps[r, PS_NWINS] or not ps[r, PS_READY]:
                continue
            pts = max_ready_points(table, hand_tiles(conc[r], mk[r], mt[r], nm[r], ps[r, PS_EVOID]),
                                   declared_ctx(ps, r), params)
            log_event(st, EV_READY, r, -1, pts, 0, 0)
            for q in range(N_SEATS):
                if q != r and not ps[q, PS_NWINS] and not ps[q, PS_READY] and not ps[q, PS_HUAZHU]:
                    pay(st, q, r, pts, C_CHADAJIAO)

