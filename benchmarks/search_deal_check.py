"""The search player's re-deal against the true hidden hands, seat by seat (issue 54): at each own-turn decision with
``--wall`` tiles left or fewer, each other seat still in as re-dealt (``--samples`` re-deals from the observation) and
as it really is (this script only: the search player never reads it) — how often it is ready, how many unseen copies
its waits have, and, for each kind in the searching seat's hand, whether some seat waits on it (the re-deal's
chance, binned, against the share truly waited on: the calibration of the danger a discard is judged by).

    python benchmarks/search_deal_check.py --hands 400 --opponents greedy
"""

from __future__ import annotations

import argparse

import numpy as np

from simulator.hands.game import play_hands
from simulator.kernel import state
from simulator.kernel.rng import derive
from simulator.rules import load_rules
from simulator.search import SearchBot, own_draw, public_of
from simulator.search.rollout import load
from simulator.search.sample import redeal

BINS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.01)
LEFT = ((0, 4), (5, 8), (9, 16), (17, 24))


def waits_of(mask: int) -> np.ndarray:
    return np.array([(mask >> k) & 1 for k in range(state.N_KINDS)], np.bool_)


class Check(SearchBot):
    """Answers as the expert; compares re-deals with the true hands at its own-turn decisions."""

    def __init__(self, wall: int, samples: int):
        super().__init__(rollouts=2, wall=wall)
        self.samples = samples
        self.seats: list[tuple] = []  # (left, true ready, true live, re-dealt ready share, re-dealt live mean, chance)
        self.kinds: list[tuple] = []  # (left, chance waited on in half the re-deals, truly, in the other half)
        self.missed: list[int] = []  # a kind rated 0 yet waited on: 0 let pass, 1 discarded, 2 no unseen copy, 3 other

    def _search(self, hand, obs, legal, policy):
        seat, pc, snap = obs.seat, hand.st.pc, hand.snap
        pub = public_of(obs, own_draw(hand, seat))
        live = pub.pool.astype(np.float64)
        others = [q for q in range(state.N_SEATS) if q != seat and pub.sizes[q] >= 0]
        true_w = {q: waits_of(int(snap.ps[q, state.PS_WAITS])) for q in others}
        sam_w = {q: [] for q in others}
        ro = self._ro
        base = np.uint64((self._seed * 7919 + self._n) & (2**62 - 1))
        for i in range(self.samples):
            load(ro.dealt, snap, hand.st.wall, pc)
            if redeal(ro.game.table, ro.dealt, seat, pub, np.uint64(derive(base, i))):
                for q in others:
                    sam_w[q].append(waits_of(int(ro.dealt.ps[q, state.PS_WAITS])))
        if not sam_w[others[0]] if others else True:
            return policy
        left = int(obs.tiles_left)
        any_true = np.zeros(state.N_KINDS, np.bool_)
        any_sam = np.zeros((len(sam_w[others[0]]), state.N_KINDS), np.bool_)
        for q in others:
            t, s = true_w[q], np.array(sam_w[q])
            self.seats.append((left, t.any(), (live * t).sum() if t.any() else np.nan, s.any(axis=1).mean(),
                               np.nanmean(np.where(s.any(axis=1), (s * live).sum(axis=1), np.nan))
                               if s.any() else np.nan, pub.ready[q]))
            any_true |= t
            any_sam |= s
        half = any_sam.shape[0] // 2  # binned by one half's chance, read on the other's: a bin of a noisy chance is
        p, p2 = any_sam[:half].mean(axis=0), any_sam[half:].mean(axis=0)  # biased toward its edges
        for k in np.flatnonzero(obs.hand):
            self.kinds.append((left, p[k], any_true[k], p2[k]))
            if p[k] == 0 and any_true[k]:  # rated safe, yet waited on: why (the first seat waiting on it)
                q = next(q for q in others if true_w[q][k])
                self.missed.append(0 if (pub.passed[q] >> k) & 1 else (
                    1 if any(d.tile == k for d in obs.ponds[q]) else (2 if pub.pool[k] == 0 else 3)))
        return policy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=400)
    ap.add_argument("--opponents", default="greedy")
    ap.add_argument("--wall", type=int, default=24)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--seed", type=int, default=20)
    args = ap.parse_args()
    bot = Check(args.wall, args.samples)
    rules = load_rules("chengdu", [f"seats=[search, {args.opponents}, {args.opponents}, {args.opponents}]"])
    play_hands(rules, np.arange(args.hands, dtype=np.int64), args.seed, {0: bot}, duplicate=True)
    s = np.array(bot.seats, np.float64)
    k = np.array(bot.kinds, np.float64)
    print(f"expert seat vs three {args.opponents}, {args.hands:,} hands, seed {args.seed}, {args.samples} re-deals a "
          f"decision, {args.wall} tiles left or fewer; {len(s):,} (decision, seat) cases, {len(k):,} (decision, kind)")
    print("  tiles left: share ready true / re-dealt (the profile's chance); unseen copies of a ready seat's waits "
          "true / re-dealt")
    for lo, hi in LEFT:
        sel = (s[:, 0] >= lo) & (s[:, 0] <= hi)
        if sel.any():
            print(f"  {lo:>2}–{hi:<2} ({sel.sum():5d}): {s[sel, 1].mean():.3f} / {s[sel, 3].mean():.3f} "
                  f"({s[sel, 5].mean():.3f});  {np.nanmean(s[sel, 2]):.2f} / {np.nanmean(s[sel, 4]):.2f}")
    print("  a kind in its hand waited on by some seat: the re-deal's chance (binned by half the re-deals, read on "
          "the other half) → share truly waited on (cases)")
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        sel = (k[:, 1] >= lo) & (k[:, 1] < hi)
        if sel.any():
            print(f"  [{lo:.2f}, {hi:.2f}): mean chance {k[sel, 3].mean():.3f} → true {k[sel, 2].mean():.3f} "
                  f"({sel.sum():,})")
    m = np.bincount(np.array(bot.missed, np.int64), minlength=4)
    print(f"  the kinds rated 0 yet waited on ({m.sum():,}): the seat let it pass since its last discard {m[0]}, "
          f"discarded it {m[1]}, no copy unseen by this seat {m[2]}, other {m[3]}")


if __name__ == "__main__":
    main()
