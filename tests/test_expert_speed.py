"""The expert's speed-ups change no decision: each shortcut agrees with the computation it replaces, on random
hands (hypothesis), and pruning never changes what the caller reads from a result."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.bots.expert_pwin import PWIN, PWIN_UB, p_win, p_win_bound
from simulator.bots.expert_turn import Outlook
from simulator.bots.expert_value import N_SHAPES, kept_counts, shapes_value, unseen_of
from simulator.bots.value import ddh_dist, qidui_dist
from simulator.kernel.evaluate import CTX_SELF_DRAW, evaluate_win, win_points_both
from simulator.kernel.shape import MELD_KONG, MELD_PUNG, HandTiles, is_complete, wait_mask
from simulator.kernel.tables import suit_table
from simulator.rules import load_rules

TABLE = suit_table()
SEEDS = st.integers(0, 2**32 - 1)
RULE_SETS = ["chengdu", "qq_sichuan", "chengdu_points", "zimo_add_fan", "uncapped", "xueliu"]
PARAMS = {name: load_rules(name).to_arrays() for name in RULE_SETS}


def random_hand(rng, n_tiles=13):
    """A possible hand: ``n_tiles − 3·nm`` concealed tiles, ``nm`` pungs/kongs of kinds not held, some tiles
    seen, a void suit (or −1)."""
    wall = rng.permutation(np.repeat(np.arange(27), 4))
    nm = int(rng.integers(0, 4))
    conc = np.bincount(wall[:n_tiles - 3 * nm], minlength=27).astype(np.uint8)
    mk = np.zeros(4, np.int8)
    mt = np.zeros(4, np.int8)
    free = [k for k in rng.permutation(27) if conc[k] == 0]
    for i in range(nm):
        mk[i] = MELD_PUNG if rng.random() < 0.7 else MELD_KONG
        mt[i] = free[i]
    visible = np.bincount(wall[50:50 + int(rng.integers(0, 50))], minlength=27)
    visible = np.minimum(visible, 4 - conc).astype(np.int8)
    void = int(rng.integers(-1, 3))
    return conc, mk, mt, nm, visible, void


def unseen_total(conc, visible) -> float:
    return float(sum(unseen_of(conc, visible, k) for k in range(27)))


@settings(max_examples=150, deadline=None)
@given(SEEDS)
def test_kept_counts_gives_the_shape_distances_and_acceptances_of_value_bot(seed):
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, visible, void = random_hand(rng)
    dd, acc_dd, qd, acc_qd = kept_counts(conc, nm, void, visible)
    assert dd == ddh_dist(conc, nm, void)
    kept = [k for k in range(27) if k // 9 != void]
    assert acc_dd == sum(unseen_of(conc, visible, k) for k in kept if conc[k] in (1, 2))
    assert acc_qd == sum(unseen_of(conc, visible, k) for k in kept if conc[k] & 1)
    if nm == 0:
        assert qd == qidui_dist(conc, nm, void)


def test_the_p_win_bound_is_a_running_maximum_over_acceptance():
    assert PWIN_UB.dtype == PWIN.dtype
    assert (PWIN_UB >= PWIN).all()
    assert (np.diff(PWIN_UB, axis=1) >= 0).all()


@settings(max_examples=150, deadline=None)
@given(SEEDS, st.integers(0, 30), st.integers(0, 3))
def test_p_win_bound_bounds_p_win_for_every_smaller_acceptance(seed, n_draws, n_in):
    rng = np.random.default_rng(seed)
    u_tot = float(rng.integers(0, 90))
    ub = float(rng.integers(0, 40))
    for d in range(-1, 6):
        bound = p_win_bound(d, ub, u_tot, n_draws, n_in)
        for acc in np.linspace(0.0, ub, 9):
            assert p_win(d, acc, u_tot, n_draws, n_in) <= bound


@settings(max_examples=200, deadline=None)
@given(SEEDS, st.integers(0, 30), st.integers(0, 3), st.sampled_from([0.25, 1.0, 3.0]))
def test_pruned_shapes_value_decides_as_the_full_one(seed, n_draws, n_in, ambition):
    """Over one decision's discards (sharing the 清一色 cache as ``discard_values`` does), the pruned value
    with floor v gives what ``hand_value`` reads — max(v, s) and s > v — exactly as the unpruned one."""
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, visible, void = random_hand(rng, 14)
    inc = rng.uniform(0.0, 40.0, N_SHAPES)
    u_tot = unseen_total(conc, visible)
    qc_full = np.full(6, -1.0)
    qc_pruned = np.full(6, -1.0)
    hand = HandTiles(conc, mk, mt, nm, void)
    full_look = Outlook(TABLE, PARAMS["chengdu"], visible, u_tot, n_draws, n_in, inc, 0.0, qc_full, np.zeros(3))
    pruned_look = Outlook(TABLE, PARAMS["chengdu"], visible, u_tot, n_draws, n_in, inc, 0.0, qc_pruned, np.zeros(3))
    for k in range(27):
        if conc[k] == 0:
            continue
        conc[k] -= 1
        full, shape = shapes_value(full_look, hand, ambition, k // 9)
        # the plain value v: around the shape value, sometimes equal, sometimes zero
        v = float(rng.choice([0.0, full, full * rng.uniform(0.5, 1.5), rng.uniform(0.0, 20.0)]))
        pruned, pshape = shapes_value(pruned_look, hand, ambition, k // 9, v)
        conc[k] += 1
        assert max(v, pruned) == max(v, full)
        assert (pruned > v) == (full > v)
        if full > v:
            assert (pruned, pshape) == (full, shape)


def winning_hand(rng):
    """A random winning hand (standard form in at most two suits, or seven pairs), its win tile and void (a
    draw with five of a kind is drawn again; never None, so no test that uses it can skip silently)."""
    suits = rng.choice(3, 2, replace=False)
    void = int(3 - suits.sum())
    while True:
        conc = np.zeros(27, np.int64)
        mk = np.zeros(4, np.int8)
        mt = np.zeros(4, np.int8)
        if rng.random() < 0.2:  # seven pairs
            for k in rng.choice([9 * s + r for s in suits for r in range(9)], 7, replace=True):
                conc[k] += 2
            nm = 0
        else:
            nm = int(rng.integers(0, 4))
            for i in range(nm):
                mk[i] = MELD_PUNG if rng.random() < 0.7 else MELD_KONG
                mt[i] = 9 * int(rng.choice(suits)) + int(rng.integers(0, 9))
            for _ in range(4 - nm):
                s = int(rng.choice(suits))
                if rng.random() < 0.5:
                    conc[9 * s + int(rng.integers(0, 9))] += 3
                else:
                    r = int(rng.integers(0, 7))
                    conc[9 * s + r:9 * s + r + 3] += 1
            conc[9 * int(rng.choice(suits)) + int(rng.integers(0, 9))] += 2
        held = conc.copy()
        for i in range(nm):
            held[mt[i]] += 3 if mk[i] == MELD_PUNG else 4
        if held.max() <= 4:
            win = int(rng.choice(np.flatnonzero(conc)))
            return conc.astype(np.uint8), mk, mt, nm, void, win


@settings(max_examples=150, deadline=None)
@given(SEEDS, st.sampled_from(RULE_SETS))
def test_win_points_both_scores_as_evaluate_win(seed, rule_set):
    params = PARAMS[rule_set]
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, void, win = winning_hand(rng)
    won = HandTiles(conc, mk, mt, nm, void)
    assert is_complete(TABLE, conc, mk, mt, nm, void)
    ron = evaluate_win(TABLE, won, win, 0, params)[5]
    sd = evaluate_win(TABLE, won, win, CTX_SELF_DRAW, params)[5]
    assert ron > 0
    assert win_points_both(TABLE, won, win, params) == (ron, sd)
    # and on a random ready-or-not hand, every kind as the win tile (non-wins score 0 both ways)
    conc, mk, mt, nm, visible, void = random_hand(rng)
    waits = wait_mask(TABLE, conc, mk, mt, nm, void)
    trial = HandTiles(conc, mk, mt, nm, void)
    for k in range(27):
        if conc[k] >= 4:
            continue
        conc[k] += 1
        got = win_points_both(TABLE, trial, k, params)
        ron = evaluate_win(TABLE, trial, k, 0, params)
        sd = evaluate_win(TABLE, trial, k, CTX_SELF_DRAW, params)[5]
        conc[k] -= 1
        assert got == (ron[5], sd)
        assert (ron[0] >= 0) == bool((waits >> k) & 1)  # a win exactly on the waits


@settings(max_examples=300, deadline=None)
@given(SEEDS)
def test_wait_mask_is_the_kinds_that_complete_the_hand(seed):
    """``wait_mask`` (which looks up only the receiving suit per kind and skips isolated kinds) sets exactly
    the kinds whose addition makes a complete hand."""
    rng = np.random.default_rng(seed)
    conc, mk, mt, nm, _, void = random_hand(rng)
    if rng.random() < 0.5:  # near-ready hands: a winning hand less one tile
        conc, mk, mt, nm, void, win = winning_hand(rng)
        conc[win] -= 1
    want = 0
    for k in range(27):
        if conc[k] < 4:
            conc[k] += 1
            if is_complete(TABLE, conc, mk, mt, nm, void):
                want |= 1 << k
            conc[k] -= 1
    assert wait_mask(TABLE, conc, mk, mt, nm, void) == want
