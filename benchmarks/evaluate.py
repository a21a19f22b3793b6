"""Throughput of the compiled evaluator (not a test): complete-hand checks/s and shanten evaluations/s.

Single core, warm (compiled and table loaded before timing), over pre-generated hands:

- *random* hands: the first 13/14 tiles of a shuffled 108-tile wall (what a deal looks like);
- *complete* hands: random two-suit winning hands (melds + pair, or seven pairs), what a check sees late in
  a hand, so that the positive path is timed too.

Run: ``python benchmarks/evaluate.py [--n 200000] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from simulator.kernel import evaluate as E
from simulator.kernel import shape as H
from simulator.kernel.tables import suit_table
from simulator.rules import load_rules


def random_deals(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``uint8[n, 27]`` counts of the first ``size`` tiles of n shuffled walls."""
    wall = np.repeat(np.arange(27), 4)
    out = np.zeros((n, 27), dtype=np.uint8)
    for i in range(n):
        np.add.at(out[i], rng.permutation(wall)[:size], 1)
    return out


def complete_hands(n: int, rng: np.random.Generator) -> np.ndarray:
    """``uint8[n, 27]`` random two-suit complete hands (1 in 8 seven pairs), each kind ≤ 4."""
    out = np.zeros((n, 27), dtype=np.uint8)
    i = 0
    while i < n:
        suits = rng.choice(3, size=2, replace=False)
        kinds = np.concatenate([np.arange(9) + 9 * s for s in suits])
        c = np.zeros(27, dtype=np.int64)
        if rng.random() < 0.125:
            for k in rng.choice(kinds, size=7, replace=True):
                c[k] += 2
        else:
            for _ in range(4):
                k = rng.choice(kinds)
                if rng.random() < 0.6 and k % 9 <= 6:
                    c[k:k + 3] += 1
                else:
                    c[k] += 3
            c[rng.choice(kinds)] += 2
        if c.max() <= 4:
            out[i] = c
            i += 1
    return out


@njit(cache=True)
def _count_complete(table, hands, meld_kind, meld_tile):
    n = 0
    for i in range(hands.shape[0]):
        if H.is_complete(table, hands[i], meld_kind, meld_tile, 0, -1):
            n += 1
    return n


@njit(cache=True)
def _sum_shanten(table, hands, meld_kind, meld_tile):
    s = 0
    for i in range(hands.shape[0]):
        s += H.shanten(table, hands[i], meld_kind, meld_tile, 0, -1)
    return s


@njit(cache=True)
def _sum_points(table, hands, meld_kind, meld_tile, params):
    s = 0
    for i in range(hands.shape[0]):
        win = 0
        while hands[i, win] == 0:
            win += 1
        s += E.evaluate_win(table, H.hand_tiles(hands[i], meld_kind, meld_tile, 0, -1), win, E.CTX_SELF_DRAW,
                            params)[5]
    return s


@njit(cache=True)
def _sum_waits(table, hands, meld_kind, meld_tile):
    s = 0
    for i in range(hands.shape[0]):
        s += H.wait_mask(table, hands[i], meld_kind, meld_tile, 0, -1) != 0
    return s


def _rate(fn, *args, repeat: int = 3) -> tuple[float, int]:
    """Best-of-``repeat`` calls per second of a compiled loop over ``args[1]`` (the hands)."""
    fn(*args)  # warm: compile / load from cache
    best = float("inf")
    result = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return args[1].shape[0] / best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000, help="hands per set")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    table = suit_table()
    mk = np.zeros(4, dtype=np.int8)
    mt = np.zeros(4, dtype=np.int8)
    deals14 = random_deals(args.n, 14, rng)
    deals13 = random_deals(args.n, 13, rng)
    wins = complete_hands(args.n, rng)
    for label, hands in (("random 14-tile deals", deals14), ("complete two-suit hands", wins)):
        rate, hits = _rate(_count_complete, table, hands, mk, mt)
        print(f"is_complete  {label:26s} {rate / 1e6:6.2f} M/s  ({hits} of {len(hands)} complete)")
    for label, hands in (("random 13-tile deals", deals13), ("random 14-tile deals", deals14)):
        rate, total = _rate(_sum_shanten, table, hands, mk, mt)
        print(f"shanten      {label:26s} {rate / 1e6:6.2f} M/s  (mean shanten {total / len(hands):.2f})")
    rate, _ = _rate(_sum_waits, table, deals13, mk, mt)
    print(f"wait_mask    {'random 13-tile deals':26s} {rate / 1e6:6.2f} M/s")
    params = load_rules("chengdu").to_arrays()
    rate, _ = _rate(_sum_points, table, wins, mk, mt, params)
    print(f"evaluate_win {'complete two-suit hands':26s} {rate / 1e6:6.2f} M/s")


if __name__ == "__main__":
    main()
