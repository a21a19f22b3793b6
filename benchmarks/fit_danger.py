"""Fit a deal-in model for the expert on simulated hands (an experiment: it is not what the bot ships, see
docs/bots.md, "What was tried, by part of the rules", Danger and folding, for the measured strength with it).

    python benchmarks/fit_danger.py                      # fit and print the coefficients (seed 11)
    python benchmarks/fit_danger.py --hands 3000 --seed 11

The engine's event log replays every hand with every player's concealed tiles, so at each discard we know each
opponent's true waits. For every kind the discarding player holds (its choices) and every opponent still in
whose dead suit it is not, we take the public features a player at the table sees
(:func:`deal_in_features`, from the same arrays the engine hands a bot) and the label "the opponent's 13
tiles win on this kind"
(``wait_mask``), then fit a logistic regression by Newton's method (small L2 ridge, numpy only). Hands are
played by line-ups of greedy and expert seats on the default rule set (the opponents the expert meets), half
of each. Reports the held-out log-loss against a constant model, the calibration by decile, and prints
the coefficients (``COEF`` below holds those of the default run). The expert played with this model (risk =
Σ_q P(q wins on k) × q's expected loss in place of ``danger.tile_risk``) in commit 673746b of branch
``strength``; measured with ``benchmarks/expert.py --expert '{bot: expert, defence: 0.3}'``.
"""

from __future__ import annotations

import argparse

import numpy as np
from numba import njit
from table_states import discards, recorded_hands

from simulator.bots.common import face_up
from simulator.bots.danger import meld_suit
from simulator.bots.defensive import dead_suit
from simulator.kernel import state as S
from simulator.kernel.shape import wait_mask
from simulator.kernel.state import PS_DISCARDED, PS_NDRAWS, PS_NKONGS, PS_SAFE
from simulator.kernel.tables import suit_table
from simulator.rules import SLOT, code, load_rules

P_PASS_RON_LOCK = SLOT["pass_ron_lock"]
LOCK_OFF, LOCK_SAME = code("pass_ron_lock", "off"), code("pass_ron_lock", "same_tile")
N_FEAT = 21
FEATURES = ("bias", "draws", "draws²", "melds", "tiles_left", "terminal", "rank_2_8", "passed", "own_discard",
            "suji", "unseen", "unseen_0", "suit_discards", "flush_suit", "flush_other", "melds_in_suit",
            "near_discards", "kongs", "draws≤2", "draws≤4", "draws≤6")
# The fit of seed 11, 1,500 hands per line-up (what `python benchmarks/fit_danger.py` prints), log-odds per
# feature unit; kept to measure the expert with it (docs/bots.md, "What was tried, by part of the rules",
# Danger and folding).
# (seed 11, 1,500 hands each of greedy×4 and expert/greedy alternating, default rules: 2.4 M samples, held-out
# log-loss 0.100 against 0.123 for a constant; calibrated within ~20% above P = 0.01, overstated below).
COEF = np.array([-4.1694, 0.5238, 0.3398, 0.4801, -0.3646, -0.2727, -0.1348, -0.2581, -1.0360, -0.0029, 0.5104,
                 -0.2320, 0.5053, 0.0171, 0.1346, -0.1430, 0.3862, -0.1491, -0.6510, -0.6417, -0.4458])



@njit(cache=True)
def deal_in_features(ps, mk, mt, nm, q, k, unseen, tiles_left, out) -> None:
    """Fill ``out`` (float64[N_FEAT], :data:`FEATURES` order) for "opponent q wins on kind k": public facts
    only. ``unseen``: copies of k the deciding player has not seen (4 − its own − visible), 0..4."""
    r = k % 9
    s = k // 9
    nd = ps[q, PS_NDRAWS] / 10.0
    disc = ps[q, PS_DISCARDED]
    out[0] = 1.0
    out[1] = nd
    out[2] = nd * nd
    out[3] = nm[q]
    out[4] = tiles_left / 55.0
    out[5] = 1.0 if r == 0 or r == 8 else 0.0
    out[6] = 1.0 if r == 1 or r == 7 else 0.0
    out[7] = 1.0 if (ps[q, PS_SAFE] >> k) & 1 else 0.0
    own = (disc >> k) & 1
    out[8] = 1.0 if own else 0.0
    suji = (r >= 3 and (disc >> (k - 3)) & 1) or (r <= 5 and (disc >> (k + 3)) & 1)
    out[9] = 1.0 if suji and not own else 0.0
    out[10] = unseen / 4.0
    out[11] = 1.0 if unseen <= 0 else 0.0
    n_s = 0
    for j in range(9):
        n_s += (disc >> (9 * s + j)) & 1
    out[12] = n_s / 9.0
    qs = meld_suit(mk, mt, nm, q)
    out[13] = 1.0 if qs == s else 0.0
    out[14] = 1.0 if qs >= 0 and qs != s else 0.0
    m_s = 0
    for i in range(nm[q]):
        t = face_up(mk, mt, q, i)  # another seat's 暗杠 is face down: its suit is not public
        if t >= 0 and t // 9 == s:
            m_s += 1
    out[15] = m_s
    near = 0
    for d in (-2, -1, 1, 2):
        if 0 <= r + d <= 8:
            near += (disc >> (k + d)) & 1
    out[16] = near / 4.0
    out[17] = ps[q, PS_NKONGS]
    # early in the hand few opponents are ready at all: steps the smooth draw terms cannot follow
    out[18] = 1.0 if ps[q, PS_NDRAWS] <= 2 else 0.0
    out[19] = 1.0 if ps[q, PS_NDRAWS] <= 4 else 0.0
    out[20] = 1.0 if ps[q, PS_NDRAWS] <= 6 else 0.0


@njit(cache=True)
def p_deal_in(ps, mk, mt, nm, q, k, unseen, tiles_left, feat) -> float:
    """P(opponent q wins on kind k), from :data:`COEF` (``feat``: scratch float64[N_FEAT])."""
    deal_in_features(ps, mk, mt, nm, q, k, unseen, tiles_left, feat)
    z = 0.0
    for i in range(N_FEAT):
        z += COEF[i] * feat[i]
    return 1.0 / (1.0 + np.exp(-z))




def sample(params, table, conc, ps, mk, mt, nm, visible, evoid, lock, d, left, feat, xs, ys) -> None:
    """Rows for seat d's discard choices. The label is "q may win on k now": k completes q's 13 tiles and q
    is not under a pass lock (it declined a discard win since its last draw: under ``same_tile`` only that
    kind is barred; under ``higher_fan``, a win on another kind worth more fan, rare, is counted as barred)."""
    rule = int(params[P_PASS_RON_LOCK])
    waits = [0] * S.N_SEATS
    for q in range(S.N_SEATS):
        if q != d and not ps[q, S.PS_WON]:
            waits[q] = wait_mask(table, conc[q], mk[q], mt[q], nm[q], evoid[q])
            if lock[q] >= 0 and rule != LOCK_OFF:
                waits[q] &= ~(1 << lock[q]) if rule == LOCK_SAME else 0
    for k in np.flatnonzero(conc[d]).tolist():
        unseen = 4 - int(conc[d, k]) - int(visible[k])
        for q in range(S.N_SEATS):
            if q == d or ps[q, S.PS_WON] or k // 9 == dead_suit(params, ps, mk, mt, nm, q):
                continue
            deal_in_features(ps, mk, mt, nm, q, k, unseen, left, feat)
            xs.append(feat.copy())
            ys.append((waits[q] >> k) & 1)


def collect(hands: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and the hand index of each row, from ``hands`` hands of each line-up."""
    table = suit_table()
    xs: list[np.ndarray] = []
    ys: list[int] = []
    hid: list[int] = []
    feat = np.empty(N_FEAT, np.float64)
    for li, seats in enumerate(("greedy, greedy, greedy, greedy", "expert, greedy, expert, greedy")):
        rules = load_rules("chengdu", [f"seats=[{seats}]"])
        params = rules.to_arrays()
        for h, dealt, events, _players in recorded_hands(rules, hands, seed):
            n0 = len(ys)
            for _i, (_typ, seat, _tile, *_), st in discards(params, dealt, events):
                sample(params, table, st.conc, st.ps, st.mk, st.mt, st.nm, st.visible, st.evoid, st.lock, seat,
                       st.left, feat, xs, ys)
            hid.extend([li * hands + h] * (len(ys) - n0))
    return np.array(xs), np.array(ys, np.float64), np.array(hid, np.int64)


def fit(x: np.ndarray, y: np.ndarray, ridge: float = 1e-3, iters: int = 25) -> np.ndarray:
    """Logistic regression by Newton's method (IRLS) with an L2 ridge on all but the bias."""
    w = np.zeros(x.shape[1])
    w[0] = np.log(y.mean() / (1 - y.mean()))
    reg = np.full(x.shape[1], ridge * len(y))
    reg[0] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) + reg * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def logloss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=3000, help="hands per line-up")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    x, y, hid = collect(args.hands, args.seed)
    test = hid % 5 == 0  # a fifth of the hands held out, whole hands
    w = fit(x[~test], y[~test])
    p = 1 / (1 + np.exp(-x[test] @ w))
    base = np.full(test.sum(), y[~test].mean())
    print(f"{len(y):,} samples from {2 * args.hands:,} hands; P(win on the tile) {y.mean():.4f}")
    print(f"held-out log-loss {logloss(p, y[test]):.4f} vs constant {logloss(base, y[test]):.4f}")
    edges = np.quantile(p, np.linspace(0, 1, 11))
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (p >= lo) & (p <= hi)
        print(f"  predicted {p[m].mean():.4f}  observed {y[test][m].mean():.4f}  (n = {m.sum():,})")
    print("COEF = np.array([" + ", ".join(f"{c:.4f}" for c in w) + "])  # " + ", ".join(FEATURES))


if __name__ == "__main__":
    main()
