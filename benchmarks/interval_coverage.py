"""Coverage of the analysis intervals on real simulated hands: split one big study into blocks, compute every
interval family on each block, and count how often a block's 95% interval holds the full-run estimate.

Usage::

    python benchmarks/interval_coverage.py                       # 40 blocks of 1,000 hands, duplicate seating
    python benchmarks/interval_coverage.py --blocks 60 --block-hands 800 --no-duplicate --jobs 2
    python benchmarks/interval_coverage.py --run DIR             # reuse a run written by an earlier call (--keep)

The study: Chengdu rules with all-greedy seats (baseline), the same with the value bot at seat 0 (decisions
differ on most hands) and with a 3-fan cap (a rule that rarely binds: few differing units per block). With
duplicate seating the all-greedy baseline's four rotations of a wall are byte-identical, so the wall is the
independent unit: the "hand-clustered" rows show what treating hands as independent would give.

The full-run estimate stands in for the truth; it has its own error (a block's SE / √blocks), which lowers the
expected coverage of an exact 95% interval to about 2Φ(1.96/√(1 + 1/blocks)) − 1 (94.7% for 40 blocks).
Monte Carlo error of one coverage figure: √(0.95·0.05/blocks) (3.4 points for 40 blocks), so read the
families together. Families:

- rate: deal-in rate per player-hand (Wilson at the effective n, clustered);
- per-win share: self-draw share of wins (clustered share, Wilson at the effective n);
- mean: mean score per hand of each seat;
- paired mean: value0 − baseline, score per hand of each seat (many differing units: normal interval);
- few differing: cap3 − baseline, score per hand of each seat (blocks whose differing units number fewer than
  30 get the gamma interval; blocks where nothing differs have none and are counted apart).
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from analysis.compare import paired_stats
from analysis.load import Run, open_run
from analysis.stats import cluster_means, cluster_share_exprs, share_moments

STUDY = """\
name: coverage
baseline: {{name: chengdu, rules: chengdu}}
variants:
  - {{name: value0, rules: chengdu, set: {{seats: [value, greedy, greedy, greedy]}}}}
  - {{name: cap3, rules: chengdu, set: {{scoring.cap: 3}}}}
seats: [greedy, greedy, greedy, greedy]
duplicate: {duplicate}
hands: {hands}
seed: {seed}
"""


def simulate(out: Path, blocks: int, block_hands: int, duplicate: bool, jobs: int, seed: int) -> Path:
    """Run the study with the ``xuezhan`` CLI of this interpreter into ``out/run``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "study.yaml").write_text(STUDY.format(duplicate=str(duplicate).lower(), hands=blocks * block_hands,
                                                 seed=seed))
    cmd = [sys.executable, "-c", "from simulator.cli import main; main()", "study", str(out / "study.yaml"),
           "--out", str(out / "run"), "--no-report", "-q", "-j", str(jobs)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    print(f"simulated {3 * blocks * block_hands:,} hands in {time.perf_counter() - t0:.0f} s")
    return out / "run"


def _blocked(lf: pl.LazyFrame, block_hands: int) -> pl.LazyFrame:
    return lf.with_columns((pl.col("hand_id") // block_hands).alias("block"))


def _coverage(blocks: pl.DataFrame, full: pl.DataFrame, keys: list[str], est: str = "mean",
              lo: str = "ci_lo", hi: str = "ci_hi") -> tuple[float, int]:
    """Share of (block, key) rows whose interval holds the full-run estimate of the same key."""
    j = blocks.join(full.select(*keys, pl.col(est).alias("_truth")), on=keys).filter(pl.col(lo).is_not_null())
    hit = (j[lo] <= j["_truth"]) & (j["_truth"] <= j[hi])
    return float(hit.mean()), j.height


def families(run: Run, block_hands: int) -> list[tuple[str, str, float, int]]:
    """``(family, estimator, coverage, rows)`` for every family, clustered by the run's unit and by hand."""
    out = []
    players = run.players("chengdu")
    dealt_in = (run.wins("chengdu").filter(pl.col("kind").is_in(["discard", "rob_kong"]) & (pl.col("payer") >= 0))
                .select("hand_id", pl.col("payer").alias("seat")).unique().with_columns(pl.lit(1.0).alias("d")))
    rate = players.join(dealt_in, on=["hand_id", "seat"], how="left").with_columns(pl.col("d").fill_null(0.0))
    for cluster in dict.fromkeys((run.cluster, "hand_id")):
        name = "unit" if cluster == run.cluster else "hand-clustered"
        full = cluster_means(rate, [], ["d"], cluster=cluster, shares=["d"]).with_columns(pl.lit(0).alias("k"))
        blk = cluster_means(_blocked(rate, block_hands), ["block"], ["d"], cluster=cluster, shares=["d"])
        out.append(("rate (deal-in per player-hand)", name,
                    *_coverage(blk.with_columns(pl.lit(0).alias("k")), full, ["k"])))

        wins = run.wins("chengdu").with_columns((pl.col("kind") == "self_draw").alias("sd"))
        full_p = wins.select(pl.col("sd").mean()).collect().item()
        counts, totals = share_moments(_blocked(wins.filter(pl.col("sd")), block_hands).with_columns(
            pl.lit("sd").alias("key")), _blocked(wins, block_hands), ["block"], "key", cluster=cluster)
        shares = (totals.join(counts, on="block").collect()
                  .with_columns(cluster_share_exprs(pl.col("k"), pl.col("_SS"), pl.col("_SM"), pl.col("n_obs"),
                                                    pl.col("_MM"), pl.col("n_units")))
                  .with_columns(pl.lit(0).alias("k0")))
        out.append(("per-win share (self-draw)", name,
                    *_coverage(shares, pl.DataFrame({"k0": [0], "p": [full_p]}), ["k0"], "p", "p_lo", "p_hi")))

        full = cluster_means(players, ["seat"], ["score_total"], cluster=cluster)
        blk = cluster_means(_blocked(players, block_hands), ["block", "seat"], ["score_total"], cluster=cluster)
        out.append(("mean (score per hand, by seat)", name, *_coverage(blk, full, ["seat"])))

        for variant, family in (("value0", "paired mean (value0, by seat)"),
                                ("cap3", "few differing (cap3, by seat)")):
            joined = (run.players(variant).select("hand_id", "deal_id", "seat", pl.col("score_total").alias("x"))
                      .join(players.select("hand_id", "seat", pl.col("score_total").alias("x_base")),
                            on=["hand_id", "seat"]))
            full = paired_stats(joined, ["seat"], cluster=cluster)
            blk = paired_stats(_blocked(joined, block_hands), ["block", "seat"], cluster=cluster)
            cov, rows = _coverage(blk, full, ["seat"], "diff")
            none = int((blk["n_differ"] == 0).sum())
            rare = int((blk["interval"] == "few differing").sum())
            normal = int((blk["interval"] == "normal").sum())
            out.append((family + f" [{normal} normal, {rare} few, {none} none]", name, cov, rows))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=40)
    ap.add_argument("--block-hands", type=int, default=1000, help="hands per block (a multiple of 4)")
    ap.add_argument("--duplicate", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--run", type=Path, help="analyse this run directory instead of simulating")
    ap.add_argument("--keep", type=Path, help="simulate into this directory and keep it")
    args = ap.parse_args()
    tmp = None
    if args.run is not None:
        run_dir = args.run
    else:
        base = args.keep or Path(tmp := tempfile.mkdtemp(prefix="xuezhan-coverage-"))
        run_dir = simulate(base, args.blocks, args.block_hands, args.duplicate, args.jobs, args.seed)
    try:
        run = open_run(run_dir)
        blocks = run.hands("chengdu").select((pl.col("hand_id") // args.block_hands).n_unique()).collect().item()
        print(f"{blocks} blocks of {args.block_hands:,} hands; independent unit: {run.unit}; "
              f"Monte Carlo SE of a coverage ≈ {math.sqrt(0.95 * 0.05 / blocks):.3f} per group "
              f"(expected ≈ {2 * _phi(1.959964 / math.sqrt(1 + 1 / blocks)) - 1:.3f} with a noisy truth)")
        print(f"{'family':<70} {'clustered by':<15} {'coverage':>8} {'rows':>6}")
        for family, name, cov, rows in families(run, args.block_hands):
            print(f"{family:<70} {name:<15} {cov:>8.3f} {rows:>6}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
