"""The expert's per-turn caches (simulator.bots.expert_turn) agree with the computations they replace.

``discard_values`` prices each legal discard from what the 14 tiles share (draw gains, the shape tally, the kong
income to come); each piece is compared with its uncached computation on random hands, and the whole of
``discard_values`` with ``hand_value`` called per discard as before the caches. A stale cache (a piece kept from
the 14 tiles where the discard changes it) changes a value and fails these tests.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.bots.common import (
    _acceptance_by_shanten,
    discard_shantens,
    draw_candidates,
    kept_summary,
    suit_count,
    turn_acceptance,
    usable_void,
)
from simulator.bots.dance import huazhu_cost, stuck_cost
from simulator.bots.expert_hand import (
    BP_AMBITION,
    BP_TEMPO,
    discard_values,
    hand_value,
    kong_potential,
    ready_bonus,
    table_context,
    unseen_total,
)
from simulator.bots.expert_turn import Outlook, kept_tally, kong_changes, moved_tally
from simulator.bots.expert_value import N_SHAPES, counts_of, held4, kept_counts, ron_weights, shape_incomes
from simulator.bots.view import SeatView
from simulator.kernel.shape import MELD_KONG, MELD_PUNG, HandTiles, shanten
from simulator.kernel.state import N_SEATS, PS_N, PS_NDRAWS, PS_VOID, PS_WON, VOID_DECLARED, void_rule
from simulator.kernel.tables import suit_table
from simulator.rules import BOT_MILLI, load_rules
from simulator.rules.bot_table import row as bot_row

TABLE = suit_table()
SEEDS = st.integers(0, 2**32 - 1)
PARAMS = {name: load_rules(name).to_arrays() for name in ("chengdu", "qq_sichuan", "xueliu")}
PARAMS["void_none"] = load_rules("chengdu", ["void_suit=none"]).to_arrays()
# the expert's parameter row (simulator.rules.bot_table): defence 0.3, ambition 1.0, tempo 0.02
BPAR = np.array(bot_row("expert", {"defence": 0.3, "ambition": 1.0, "temperature": 0.0, "tempo": 0.02}), np.int64)


def crowded_hand(rng, n_tiles=14):
    """A 3k+2 hand (``n_tiles`` − 3·nm concealed tiles) drawn from few kinds, so that pairs, triplets and fours
    are common; ``nm`` pungs/kongs (a pung's kind may also be held once: a 加杠 tile); tiles seen; a void suit
    without melds (usable) or −1."""
    nm = int(rng.integers(0, 4))
    kinds = rng.choice(27, size=int(rng.integers(4, 10)), replace=False)
    pool = rng.permutation(np.repeat(kinds, 4))
    conc = np.bincount(pool[:n_tiles - 3 * nm], minlength=27).astype(np.uint8)
    mk = np.zeros(4, np.int8)
    mt = np.zeros(4, np.int8)
    free = [k for k in rng.permutation(27) if conc[k] <= 1]
    for i in range(nm):
        mk[i] = MELD_PUNG if rng.random() < 0.7 else MELD_KONG
        mt[i] = free[i]
    in_melds = np.zeros(27, np.int64)
    for i in range(nm):
        in_melds[mt[i]] = 4 if mk[i] == MELD_KONG else 3
    if any(conc[mt[i]] and mk[i] == MELD_KONG for i in range(nm)):
        return crowded_hand(rng, n_tiles)  # four in a kong: none left to hold
    room = np.maximum(4 - conc.astype(np.int64) - in_melds, 0)
    visible = (in_melds + rng.binomial(room, rng.uniform(0.0, 0.6))).astype(np.int8)
    meld_suits = {int(mt[i]) // 9 for i in range(nm)}
    voids = [s for s in range(3) if s not in meld_suits] + [-1]
    void = int(rng.choice(voids))
    return conc, mk, mt, nm, visible, void


def table_state(rng):
    ps = np.zeros((N_SEATS, PS_N), np.int64)
    for q in range(1, N_SEATS):
        ps[q, PS_WON] = rng.random() < 0.2
        ps[q, PS_VOID] = rng.integers(0, 3)
        ps[q, PS_NDRAWS] = rng.integers(0, 15)
    return ps, int(rng.integers(4, 60))


@settings(max_examples=300, deadline=None)
@given(SEEDS)
def test_turn_acceptance_is_the_acceptance_of_each_discard(seed):
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, visible, void = crowded_hand(rng)
    if not usable_void(mt, nm, void):
        usable = [s for s in range(3) if usable_void(mt, nm, s)]
        if not usable:
            return  # melds in all three suits: acceptance counts by full shanten (no fast path)
        void = usable[0]
    draws = draw_candidates(conc, void)
    summary = kept_summary(conc, void, nm)
    hand = HandTiles(conc, mk, mt, nm, void)
    for k in np.flatnonzero(conc):
        conc[k] -= 1
        sh = shanten(TABLE, conc, mk, mt, nm, void)
        got = turn_acceptance(TABLE, visible, hand, sh, draws, k, summary)
        assert got == _acceptance_by_shanten(TABLE, hand, sh, visible, draws), (k, sh)  # a shanten per draw
        conc[k] += 1


@settings(max_examples=300, deadline=None)
@given(SEEDS)
def test_the_moved_tally_gives_the_kept_counts_of_each_discard(seed):
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, visible, void = crowded_hand(rng)
    tally = kept_tally(conc, void, visible)
    for k in np.flatnonzero(conc):
        conc[k] -= 1
        assert counts_of(moved_tally(tally, conc, void, visible, k, -1), nm) == kept_counts(conc, nm, void, visible)
        conc[k] += 1


@settings(max_examples=300, deadline=None)
@given(SEEDS, st.sampled_from(sorted(PARAMS)))
def test_kong_income_to_come_changes_only_for_the_kinds_kong_changes_lists(seed, rules):
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, visible, void = crowded_hand(rng)
    ronw = rng.uniform(0.5, 2.0, 3)
    look = Outlook(TABLE, PARAMS[rules], visible, 60.0, int(rng.integers(1, 12)), int(rng.integers(1, 4)),
                   np.zeros(N_SHAPES), 0.0, np.full(6, -1.0), ronw)
    hand = HandTiles(conc, mk, mt, nm, void)
    whole = kong_potential(look, hand)
    changes = kong_changes(conc, mk, mt, nm)
    for k in np.flatnonzero(conc):
        conc[k] -= 1
        if not (changes >> k) & 1:
            assert kong_potential(look, hand) == whole, k
        conc[k] += 1


@settings(max_examples=200, deadline=None)
@given(SEEDS, st.sampled_from(sorted(PARAMS)))
def test_discard_values_price_each_discard_as_hand_value_does(seed, rules):
    """``discard_values`` (cached per turn) against ``hand_value`` per discard, as the loop was before the caches:
    the same floating-point values, bit for bit."""
    params = PARAMS[rules]
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, visible, void = crowded_hand(rng)
    ps, tiles_left = table_state(rng)
    legal = 0
    for k in np.flatnonzero(conc):
        legal |= 1 << int(k)
    out = np.empty(27, np.float64)
    shaped = np.empty(27, np.int8)
    sh_buf = np.empty(27, np.int64)
    view = SeatView(TABLE, params, ps, np.zeros((4, 4), np.int8), np.zeros((4, 4), np.int8), np.zeros(4, np.int64),
                    visible, 0, tiles_left)
    hand = HandTiles(conc, mk, mt, nm, void)
    best = discard_values(view, hand, legal, sh_buf, BPAR, out, shaped)
    # the reference: everything recomputed for each discard
    n_in, n_draws = table_context(ps, 0, tiles_left)
    ambition = BPAR[BP_AMBITION] / BOT_MILLI
    inc = np.empty(N_SHAPES, np.float64)
    shape_incomes(params, mk, nm, held4(conc, mk, mt, nm), n_in, n_draws, BPAR[BP_TEMPO] / BOT_MILLI, inc)
    ref_sh = np.empty(27, np.int64)
    assert discard_shantens(TABLE, conc, mk, mt, nm, void, legal, ref_sh) == best
    u_tot = unseen_total(conc, visible)
    draws = draw_candidates(conc, void)
    rb = ready_bonus(params, n_in, n_draws)
    qc = np.full(6, -1.0)
    ronw = np.empty(3)
    ron_weights(params, ps, 0, ronw)
    look = Outlook(TABLE, params, visible, u_tot, n_draws, n_in, inc, rb, qc, ronw)
    dead = None
    for k in np.flatnonzero(conc):
        sh = ref_sh[k]
        if k // 9 == void and dead is not None:
            v, shp = dead
        else:
            conc[k] -= 1
            v, shp = hand_value(look, hand, ambition if sh <= best + 1 else 0.0, sh, draws if sh == best else 0,
                                k // 9)
            conc[k] += 1
            if k // 9 == void:
                dead = v, shp
        if void_rule(params) != VOID_DECLARED and void >= 0:
            left = suit_count(conc, void) - (1 if k // 9 == void else 0)
            v -= huazhu_cost(params, n_in, n_draws, left) + stuck_cost(params, ps, 0, conc, visible, void, tiles_left)
        assert out[k] == v, k
        assert shaped[k] == shp


@settings(max_examples=300, deadline=None)
@given(SEEDS)
def test_draw_candidates_are_the_kept_kinds_near_a_held_tile(seed):
    rng = np.random.default_rng(seed)
    conc, _, _, _, _, void = crowded_hand(rng)
    want = 0
    for k in range(27):
        s, r = divmod(k, 9)
        near = any(0 <= r + d < 9 and conc[9 * s + r + d] > 0 for d in range(-2, 3))
        if s != void and conc[k] < 4 and near:
            want |= 1 << k
    assert draw_candidates(conc, void) == want
