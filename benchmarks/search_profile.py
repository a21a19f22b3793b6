"""The search player's opponent profile (issue 54), measured: how often a seat still in is ready by its melds and
discards made, and how much less often than an even share it holds a kind it discarded or one near it.

    python benchmarks/search_profile.py --hands 800 --opponents expert greedy

One watching seat plays as the expert among three ``--opponents``; at each of its own-turn decisions it reads, for
every other seat still in, what the table shows (discards, melds, void) beside what that seat really holds (this
script only: the search player never reads it). Prints the share of seats ready per (melds, discards) cell and,
with ``--wall`` tiles left or fewer, the held copies of a kind over an even share of the unseen copies outside its
void suit (the re-deal's weights, simulator.search DISCARD_WEIGHT / NEAR_WEIGHT, are these ratios over the ratio
of kinds with no discard near), each with its count of (seat, kind) cases.
"""

from __future__ import annotations

import argparse

import numpy as np

from simulator.hands.game import play_hands
from simulator.kernel import state
from simulator.kernel.shape import shanten
from simulator.rules import load_rules
from simulator.search import SearchBot, ready_chance

CAP = 17  # discards made, capped


class Watch(SearchBot):
    """Answers as the expert; records the table at every own-turn decision."""

    def __init__(self, wall: int):
        super().__init__(rollouts=2, wall=55)
        self.late = wall
        self.ready: list[tuple[int, int, int]] = []  # (melds, discards, ready)
        self.held: list[np.ndarray] = []  # per (seat, kind): held, even share, discarded, near 1, near 2
        self.voiding: list[tuple[float, float]] = []  # last discard of its void suit: void tiles held, even share
        self.unready: list[int] = []  # shanten of a seat not ready
        self.by_left: list[tuple[int, float, int]] = []  # (tiles left, the re-deal's chance it is ready, ready)

    def _search(self, hand, obs, legal, policy):
        pool = (4 - obs.hand.astype(np.int64) - obs.visible.astype(np.int64)
                - obs.laid_down.astype(np.int64).sum(axis=0))
        for q in range(state.N_SEATS):
            if q == obs.seat or obs.won[q] >= 0:
                continue
            self.ready.append((min(len(obs.melds[q]), 2), min(len(obs.ponds[q]), CAP),
                               int(hand.st.ps[q, state.PS_WAITS] != 0)))
            self.by_left.append((int(obs.tiles_left), ready_chance(len(obs.ponds[q]), len(obs.melds[q])),
                                 int(hand.st.ps[q, state.PS_WAITS] != 0)))
            if obs.tiles_left > self.late:
                continue
            void = int(obs.voids[q])
            conc = hand.st.conc[q]
            if not hand.st.ps[q, state.PS_WAITS]:
                self.unready.append(int(shanten(hand.game.table, conc, hand.st.mk[q], hand.st.mt[q], hand.st.nm[q],
                                                hand.st.ps[q, state.PS_EVOID])))
            if void >= 0 and obs.ponds[q] and obs.ponds[q][-1].tile // 9 == void:
                unseen = pool[9 * void:9 * void + 9].sum()
                self.voiding.append((float(conc[9 * void:9 * void + 9].sum()), unseen * conc.sum() / pool.sum()))
            near = np.zeros((3, state.N_KINDS))
            for d in obs.ponds[q]:
                if d.tile // 9 == void:
                    continue
                near[0, d.tile] += 1
                for dist in (1, 2):
                    for j in (d.tile - dist, d.tile + dist):
                        if 0 <= j < state.N_KINDS and j // 9 == d.tile // 9:
                            near[dist, j] += 1
            keep = (np.arange(state.N_KINDS) // 9 != void) & (pool > 0)
            held = hand.st.conc[q].astype(np.float64)
            even = pool * keep * held[keep].sum() / max(pool[keep].sum(), 1)
            self.held.append(np.vstack([held, even, near])[:, keep].T)
        return policy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=800, help="hands per opponent bot (duplicate seating)")
    ap.add_argument("--opponents", nargs="+", default=["expert", "greedy"])
    ap.add_argument("--wall", type=int, default=30, help="read the held kinds with at most this many tiles left")
    ap.add_argument("--seed", type=int, default=99)
    args = ap.parse_args()
    ready, held, voiding, unready, by_left = [], [], [], [], []
    for opp in args.opponents:
        bot = Watch(args.wall)
        rules = load_rules("chengdu", [f"seats=[search, {opp}, {opp}, {opp}]"])
        play_hands(rules, np.arange(args.hands, dtype=np.int64), args.seed, {0: bot}, duplicate=True)
        ready += bot.ready
        held += bot.held
        voiding += bot.voiding
        unready += bot.unready
        by_left += bot.by_left
    r = np.array(ready)
    print(f"share of seats ready (cases), chengdu, {args.hands:,} hands × {len(args.opponents)} tables, "
          f"seed {args.seed}; columns: discards made 0–{CAP}+")
    for m in range(3):
        cells = []
        for d in range(CAP + 1):
            sel = (r[:, 0] == m) & (r[:, 1] == d)
            cells.append(f"{r[sel, 2].mean():.2f}({sel.sum()})" if sel.sum() >= 20 else "–")
        print(f"  melds {m}{'+' if m == 2 else ' '}: " + " ".join(cells))
    h = np.vstack(held)
    none = (h[:, 2] == 0) & (h[:, 3] == 0) & (h[:, 4] == 0)
    base = h[none, 0].sum() / h[none, 1].sum()
    print(f"held over an even share, {args.wall} tiles left or fewer (relative to kinds with no discard near, "
          f"{base:.3f}):")
    for label, sel in (("discarded once", h[:, 2] == 1), ("discarded twice+", h[:, 2] >= 2),
                       ("one rank from 1 discard", (h[:, 2] == 0) & (h[:, 3] == 1)),
                       ("one rank from 2 discards", (h[:, 2] == 0) & (h[:, 3] == 2)),
                       ("two ranks from 1 discard", (h[:, 2] == 0) & (h[:, 3] == 0) & (h[:, 4] == 1))):
        print(f"  {label:>24}: {h[sel, 0].sum() / h[sel, 1].sum() / base:.3f} ({sel.sum():,} cases)")
    v = np.array(voiding).reshape(-1, 2)
    print(f"a seat whose last discard was of its void suit, {args.wall} tiles left or fewer ({v.shape[0]:,} cases): "
          f"holds {v[:, 0].mean():.3f} tiles of it (an even share of the unseen: {v[:, 1].mean():.3f}; "
          f"{(v[:, 0] > 0).mean():.3f} hold any)")
    b = np.array(by_left, np.float64)
    print("share of seats ready by tiles left, the re-deal's chance (READY by melds and discards) / actual (cases):")
    print("  " + "; ".join(f"{lo}–{hi}: {b[sel, 1].mean():.3f} / {b[sel, 2].mean():.3f} ({sel.sum():,})"
                           for lo, hi in ((0, 4), (5, 8), (9, 12), (13, 20), (21, 30), (31, 55))
                           if (sel := (b[:, 0] >= lo) & (b[:, 0] <= hi)).any()))
    u = np.bincount(np.array(unready, np.int64), minlength=4)
    print(f"a seat not ready, {args.wall} tiles left or fewer ({u.sum():,} cases): shanten 1 / 2 / 3+: "
          f"{u[1] / u.sum():.3f} / {u[2] / u.sum():.3f} / {u[3:].sum() / u.sum():.3f}")


if __name__ == "__main__":
    main()
