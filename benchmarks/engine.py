"""Engine throughput: hands per second on one core, compiled and warm, plus peak RSS.

    python benchmarks/engine.py                    # greedy×4 on chengdu, 20,000 hands
    python benchmarks/engine.py --hands 50000 --mix all --config qq_sichuan

Times are CPU time of this process (``time.process_time``), so other jobs on the machine distort them less
than wall-clock time would. Prints, per bot mix: total hands/s of ``play_hands`` and the split between seed derivation
(``SeedSequence`` per deal), the compiled batch, and the string/column formatting of ``simulator.records``;
then the peak RSS of the process and the RSS after each of several chunks (it must stay flat).
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from simulator import records
from simulator.engine import deal_seeds, play_hands, run_batch
from simulator.rules import load_rules

MIXES = {
    "greedy": ["greedy"] * 4,
    "value": ["value"] * 4,
    "defensive": ["defensive"] * 4,
    "random": ["random"] * 4,
    "mixed": ["greedy", "value", "defensive", "random"],
}


def rss_mb() -> float:
    """Current resident set size in MB (Linux /proc), or the peak where /proc is unavailable."""
    try:
        with open(f"/proc/{os.getpid()}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench(config: str, seats: list[str], hands: int, chunk: int) -> None:
    rules = load_rules(config, {"seats": seats})
    play_hands(rules, np.arange(64), 0)  # compile / load the cache, build the suit table
    ids = np.arange(hands, dtype=np.int64)
    t0 = time.process_time()
    deal_seeds(0, ids)
    t_seed = time.process_time() - t0
    t_batch = t_rec = 0.0
    rss = []
    for start in range(0, hands, chunk):
        part = ids[start:start + chunk]
        t0 = time.process_time()
        raw = run_batch(rules, part, 0)
        t1 = time.process_time()
        records.to_columns(raw)
        t2 = time.process_time()
        t_batch += t1 - t0
        t_rec += t2 - t1
        rss.append(rss_mb())
    total = t_batch + t_rec  # run_batch includes the seed derivation
    print(f"{config} {'/'.join(seats)}: {hands / total:,.0f} hands/s "
          f"({1e6 * total / hands:.0f} µs/hand: seeds {1e6 * t_seed / hands:.0f}, "
          f"compiled {1e6 * (t_batch - t_seed) / hands:.0f}, records {1e6 * t_rec / hands:.0f})")
    print(f"  RSS after each {chunk}-hand chunk (MB): {' '.join(f'{x:.0f}' for x in rss)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--chunk", type=int, default=5_000)
    ap.add_argument("--mix", default="greedy", choices=[*MIXES, "all"])
    args = ap.parse_args()
    for name in MIXES if args.mix == "all" else [args.mix]:
        bench(args.config, MIXES[name], args.hands, args.chunk)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
