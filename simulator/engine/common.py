"""Shared pieces of the compiled engine: rule-value indices, the turn-loop outcomes, cached waits and the small
predicates every part asks (is the hand over, is a seat locked, must a seat win)."""

from __future__ import annotations

from numba import njit

from simulator.kernel.shape import shanten, wait_mask
from simulator.kernel.state import (
    G_NWON,
    N_SEATS,
    PS_EVOID,
    PS_NWINS,
    PS_WAITS,
    tiles_left,
)
from simulator.rules.keys import SLOT, code

P_FORCED_WIN_LAST_TILES = SLOT["forced_win_last_tiles"]
P_MODE = SLOT["mode"]

# Rule values the compiled code compares against (enum integers of the key table, simulator.rules.keys)
EX_RANDOM = code("exchange_three", "random")
EX_CLOCKWISE = code("exchange_three", "clockwise")
EX_COUNTER = code("exchange_three", "counterclockwise")
MODE_SINGLE = code("mode", "single")
MODE_XUELIU = code("mode", "xueliu")
LOCK_OFF, LOCK_SAME, LOCK_ALL = (code("pass_ron_lock", x) for x in ("off", "same_tile", "all_tiles"))
DEAL_IN_KEEP, DEAL_IN_REFUND, DEAL_IN_TRANSFER = (code("kongs.after_kong_deal_in", x)
                                                  for x in ("keep", "refund", "transfer"))
BLOOM_FEEDER = code("kong_bloom_payer", "feeder")
LAST_WIN_ONLY = code("last_discard_claims", "win_only")
DECL_SING, DECL_DANCE, DECL_BOTH = (code("declare_ready", x) for x in ("sing", "dance", "both"))
MAX_STEPS = 2000  # turn-loop guard; a hand needs at most ~150 steps, so hitting it means an engine bug
# What a step of the turn loop leads to
GO_DISCARD, NEXT_DRAW, KONG_DRAW, PUNG_DISCARD, HAND_OVER = range(5)
# How a turn began (own_turn's ``how`` bits): after a draw, a replacement draw from the tail, the dealer's first turn
HOW_DREW, HOW_TAIL, HOW_DEALER_FIRST = 1, 2, 4


@njit(cache=True, inline="always")
def hand_over(params, g) -> bool:
    """After a win event: ``single`` ends at the first; ``xuezhan`` when three have won; ``xueliu`` never (the
    wall ends it)."""
    mode = params[P_MODE]
    return mode == MODE_SINGLE or (mode != MODE_XUELIU and g[G_NWON] >= N_SEATS - 1)


@njit(cache=True, inline="always")
def locked(params, ps, p) -> bool:
    """血流: a seat that has won plays on with its hand locked (docs/rules.md): it may win again, make a kong
    that keeps its waits (of the tile it drew, or a discard with three in hand), and otherwise discards the tile
    it drew; it never pungs. So every bot plays a winner's hand correctly without knowing the mode."""
    return params[P_MODE] == MODE_XUELIU and ps[p, PS_NWINS] > 0


@njit(cache=True, _nrt=False)
def keeps_waits(table, st, p: int, k: int, n: int, kind: int) -> bool:
    """Would ``p`` keep exactly its cached waits after setting ``n`` tiles of kind ``k`` down as a kong of
    ``kind`` (the tiles of a 暗杠 including the one drawn, or three in hand for a 直杠)? Restores the hand."""
    ps, conc, mk, mt, nm = st.ps, st.conc, st.mk, st.mt, st.nm
    conc[p, k] -= n
    mk[p, nm[p]] = kind
    mt[p, nm[p]] = k
    nm[p] += 1
    w = wait_mask(table, conc[p], mk[p], mt[p], nm[p], ps[p, PS_EVOID])
    nm[p] -= 1
    mk[p, nm[p]] = 0
    mt[p, nm[p]] = 0
    conc[p, k] += n
    return w == ps[p, PS_WAITS]


@njit(cache=True, inline="always")
def forced_win(params, g) -> bool:
    """最后N张必胡: with at most N tiles in the wall a player who can win must."""
    n = params[P_FORCED_WIN_LAST_TILES]
    return n > 0 and tiles_left(g) <= n


@njit(cache=True, inline="always")  # every discard: inlined into the loop (no call)
def refresh_waits(table, st, p) -> None:
    """Cache ``p``'s waits after its discard, so a ron check on a later discard is a bit test."""
    ps, conc, mk, mt, nm = st.ps, st.conc, st.mk, st.mt, st.nm
    ev = ps[p, PS_EVOID]
    if shanten(table, conc[p], mk[p], mt[p], nm[p], ev) == 0:
        ps[p, PS_WAITS] = wait_mask(table, conc[p], mk[p], mt[p], nm[p], ev)
    else:
        ps[p, PS_WAITS] = 0
