"""跳舞 against 花猪: the waits a dancer shows are tiles the other players may not discard (``declare_ready: dance``).

Under ``void_suit: none`` a player drops a suit of its choice by discarding it, and pays the 花猪 penalty if it
still holds three suits at the exhaustive draw. A player who has not declared may not discard a kind a dancer still
in shows (engine ``declare_discard_mask``), so tiles of those kinds in the suit it plans to drop are stuck there
until that dancer wins — they make it a 花猪 unless the dancer leaves first, and meanwhile it cannot win either
(a win uses at most two suits). Measured before these functions (qq_sichuan, ``declare_ready: dance``, 1,000
hands): 224 花猪 with four experts against 0 without 跳舞.

The ``value``, ``defensive`` and ``expert`` bots therefore plan around them (:func:`dance_void`, called by their
dispatchers in :mod:`simulator.bots`): when the planned suit to drop holds stuck tiles, they switch to the best
suit without stuck tiles if the expected 花猪 cost of staying (:func:`stuck_cost`) outweighs the shanten the switch
gives up, priced at :data:`SHANTEN_PRICE` plain wins per step. The expert also charges :func:`stuck_cost` inside its
discard values (both plans it compares). ``greedy`` and ``random`` (the baselines) do not. Everything read is
public: the shown waits, who has won, the visible counts, the tiles left.

Measured (qq_sichuan, ``declare_ready: dance``, 1,000 hands, seed 0): 花猪 among four experts 224 → 112; in
``[expert, value, defensive, greedy]`` value 42 → 21, expert 36 → 16 (defensive 119 → 111: its folding keeps a
third suit anyway; greedy 77 → 80). Most of the rest are tiles of a shown kind drawn after the dance into a small
suit to drop, when every other plan needs more tiles cleared than draws remain. Charging also the chance of
drawing a shown kind later (a suit a dancer waits in made costly to plan to drop before any tile of it is held)
and the tiles of the other plan still to clear measured worse: 175 among four experts.
"""

from __future__ import annotations

from numba import njit

from simulator.bots.common import suit_count
from simulator.kernel.scoring import points_of
from simulator.kernel.shape import SHANTEN_NEVER, shanten
from simulator.kernel.state import N_KINDS, N_SEATS, PS_DECLARED, PS_SHOWN, PS_WON, VOID_NONE, void_rule
from simulator.rules.keys import SLOT, code
from simulator.rules.vocab import UNCAPPED_HUAZHU_FAN

P_CAP = SLOT["scoring.cap"]
P_DECLARE_READY = SLOT["declare_ready"]
P_HUAZHU_PAYS = SLOT["settlement.huazhu_pays"]
P_HUAZHU_PENALTY = SLOT["settlement.huazhu_penalty"]
HUAZHU_CAP = code("settlement.huazhu_penalty", "cap")
NO_CAP = code("scoring.cap", None)

DECL_DANCE = code("declare_ready", "dance")
P_EXHAUST = 0.8      # P(the hand reaches the exhaustive draw with this seat still in | it does not win)
SHANTEN_PRICE = 0.5  # what one step of shanten is worth, in plain wins (points_of(1) from each opponent still in)


@njit(cache=True, _nrt=False)
def huazhu_points(params) -> float:
    """The 花猪 penalty each payee receives, in base units (``cap``: the capped hand's points, 2^6 uncapped)."""
    pen = params[P_HUAZHU_PENALTY]
    if pen == HUAZHU_CAP:
        cap = params[P_CAP]
        pen = points_of(UNCAPPED_HUAZHU_FAN if cap == NO_CAP else cap, params)
    return float(pen)


@njit(cache=True, _nrt=False)
def huazhu_payees(params, n_in) -> int:
    """How many players a 花猪 pays: every other seat (``huazhu_pays: all``) or those still in."""
    return N_SEATS - 1 if params[P_HUAZHU_PAYS] == 1 else n_in


@njit(cache=True, _nrt=False)
def blocked_kinds(params, ps, seat) -> int:
    """Bit mask of the kinds ``seat`` may not discard because a dancer still in shows them (as the engine's
    ``declare_discard_mask``; 0 unless ``declare_ready: dance`` and ``seat`` has not declared)."""
    if params[P_DECLARE_READY] != DECL_DANCE or ps[seat, PS_DECLARED]:
        return 0
    m = 0
    for q in range(N_SEATS):
        if q != seat and not ps[q, PS_WON]:
            m |= ps[q, PS_SHOWN]
    return m


@njit(cache=True, _nrt=False)
def stuck_in(conc, blocked, s) -> int:
    """Tiles of suit ``s`` held whose kind is in ``blocked``."""
    n = 0
    for r in range(9):
        k = 9 * s + r
        if (blocked >> k) & 1:
            n += conc[k]
    return n


@njit(cache=True, _nrt=False)
def seats_in(ps, seat) -> int:
    """Opponents of ``seat`` still in play."""
    n_in = 0
    for q in range(N_SEATS):
        if q != seat and not ps[q, PS_WON]:
            n_in += 1
    return n_in


@njit(cache=True, _nrt=False)
def huazhu_cost(params, n_in, n_draws, held) -> float:
    """Expected 花猪 penalty (base units) of still holding ``held`` tiles of the suit to clear: penalty ×
    payees × P(exhaustive draw) × the share of own turns those tiles still need, squared (convex: a tile or two
    early is cheap, many late are not)."""
    if held <= 0:
        return 0.0
    need = min(1.0, held / (n_draws + 1.0))
    return huazhu_points(params) * huazhu_payees(params, n_in) * P_EXHAUST * need * need


@njit(cache=True, _nrt=False)
def stuck_cost(params, ps, seat, conc, visible, s, tiles_left) -> float:
    """Expected 花猪 penalty (base units) of planning to drop suit ``s`` while holding tiles of it that a dancer
    still in shows: penalty × payees × P(exhaustive draw) × P(no dancer showing one of them wins before the end).
    A dancer wins by its own draws only (the players who have not declared may not feed it): per draw its live
    waits (4 − visible − own copies) over the unseen tiles, over its share of the draws left. 0 when nothing is
    stuck or outside ``void_suit: none``."""
    if void_rule(params) != VOID_NONE or s < 0:
        return 0.0
    blocked = blocked_kinds(params, ps, seat)
    if blocked == 0 or stuck_in(conc, blocked, s) == 0:
        return 0.0
    n_in = seats_in(ps, seat)
    pool = tiles_left + 13.0 * n_in
    draws = (tiles_left + n_in) // (n_in + 1)
    stays = 0.0  # the most likely-to-stay dancer among those blocking a held tile of s
    for q in range(N_SEATS):
        shown = ps[q, PS_SHOWN]
        if q == seat or ps[q, PS_WON] or stuck_in(conc, shown, s) == 0:
            continue
        live = 0.0
        for k in range(N_KINDS):
            if (shown >> k) & 1:
                u = 4 - int(visible[k]) - int(conc[k])
                live += u if u > 0 else 0
        p = min(1.0, live / pool) if pool > 0 else 0.0
        stay = (1.0 - p) ** draws
        if stay > stays:
            stays = stay
    return huazhu_points(params) * huazhu_payees(params, n_in) * P_EXHAUST * stays


@njit(cache=True, _nrt=False)
def dance_void(view, hand) -> int:
    """The suit to plan to drop under ``void_suit: none`` with dancers about (``view``: the deciding seat's
    :class:`~simulator.bots.view.SeatView`): ``hand.void`` (the bots' planning void) unless it holds stuck tiles
    (:func:`stuck_cost` > 0) and another droppable suit without any is worth the
    switch — its shanten loss, at :data:`SHANTEN_PRICE` plain wins a step, below the stuck cost. Ties between
    such suits: lower shanten, then fewer tiles."""
    table, params, ps, seat = view.table, view.params, view.ps, view.seat
    conc, mk, mt, nm, void = hand
    cost = stuck_cost(params, ps, seat, conc, view.visible, void, view.tiles_left)
    if cost <= 0.0:
        return void
    blocked = blocked_kinds(params, ps, seat)
    best, best_sh, best_n = -1, SHANTEN_NEVER, 99
    for s in range(3):
        if s == void or stuck_in(conc, blocked, s) > 0:
            continue
        sh = shanten(table, conc, mk, mt, nm, s)
        n = suit_count(conc, s)
        if sh < best_sh or (sh == best_sh and n < best_n):
            best, best_sh, best_n = s, sh, n
    if best < 0 or best_sh >= SHANTEN_NEVER:
        return void
    loss = max(0, best_sh - shanten(table, conc, mk, mt, nm, void))
    return best if cost > loss * SHANTEN_PRICE * points_of(1, params) * max(seats_in(ps, seat), 1) else void
