"""Power at the printed "hands needed", and coverage, of rare-difference rows on real simulated hands.

Usage::

    python benchmarks/rare_power.py                         # 40,000 hands per arm, greedy seats
    python benchmarks/rare_power.py --hands 200000 --jobs 2 --seats expert
    python benchmarks/rare_power.py --run DIR               # reuse a run written by an earlier call (--keep)

The study: Chengdu rules (baseline), haidilao (海底捞月 / 海底炮 +1 fan) and a 3-fan cap — rules that rarely
change a hand. For each (variant, hand metric) row, the full run's paired estimate stands in for the true
effect and ``detect`` is set to it; the row's printed ``hands_paired`` (:func:`analysis.power.
paired_hands_needed`, as the report computes it) is then the block size: the run is cut into blocks of exactly
that many hands and each block gets the production paired estimator (:func:`analysis.compare.paired_stats`).
Printed per row: hands needed, blocks, the share of blocks whose test rejects at 5% (promised: 80%), the share
whose interval holds the full-run estimate, and how many blocks had fewer than 30 differing hands (Student
interval). Monte Carlo SE of a share over B blocks: √(p(1−p)/B); the full-run "truth" has its own error, so
both figures read a little low with few blocks.
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

from analysis.compare import _hand_frame, paired_hand_metrics, paired_stats
from analysis.load import Run, open_run
from analysis.rare import RARE_UNITS

STUDY = """\
name: rare_power
baseline: {{name: chengdu, rules: chengdu}}
variants:
  - {{name: haidilao, rules: haidilao}}
  - {{name: cap3, rules: chengdu, set: {{scoring.cap: 3}}}}
seats: [{seats}, {seats}, {seats}, {seats}]
hands: {hands}
seed: {seed}
"""

ROWS = (("haidilao", "points exchanged"), ("haidilao", "wins ≥ 2 fan"), ("cap3", "cap binds (any win)"),
        ("cap3", "points exchanged"))
"""The (variant, hand metric) rows the issue measured."""


def simulate(out: Path, hands: int, seats: str, jobs: int, seed: int) -> Path:
    """Run the study with the ``xuezhan`` CLI of this interpreter into ``out/run``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "study.yaml").write_text(STUDY.format(seats=seats, hands=hands, seed=seed))
    cmd = [sys.executable, "-c", "from simulator.cli import main; main()", "study", str(out / "study.yaml"),
           "--out", str(out / "run"), "--no-report", "-q", "-j", str(jobs)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    print(f"simulated {3 * hands:,} hands in {time.perf_counter() - t0:.0f} s")
    return out / "run"


def _joined(run: Run, variant: str, metric: str) -> pl.LazyFrame:
    """One row per paired hand: ``hand_id, deal_id, x`` (variant), ``x_base`` (baseline) of one hand metric."""
    a = _hand_frame(run, variant).select("hand_id", "deal_id", pl.col(metric).alias("x"))
    b = _hand_frame(run, "chengdu").select("hand_id", pl.col(metric).alias("x_base"))
    return a.join(b, on="hand_id")


def row_power(run: Run, variant: str, metric: str) -> dict:
    """Printed hands needed for detect = the full-run estimate, and the power/coverage of blocks of that size."""
    joined = _joined(run, variant, metric)
    full = paired_stats(joined.with_columns(pl.lit(0).alias("k")), ["k"], cluster=run.cluster)
    f = full.row(0, named=True)
    truth = f["diff"]
    # the report's own row at detect = the full-run estimate (its hands_paired, as printed)
    printed = paired_hand_metrics(run, variant, baseline="chengdu", detect={metric: abs(truth)})
    need = float(printed.filter(pl.col("metric") == metric).row(0, named=True)["hands_paired"] or math.nan)
    out = {"variant": variant, "metric": metric, "full diff": truth, "full differ": f["n_differ"],
           "hands": f["n_hands"], "printed hands": need}
    if not np.isfinite(need) or need > f["n_hands"] // 2:
        return {**out, "blocks": 0}
    size = int(need)
    blocks = f["n_hands"] // size
    blk = paired_stats(joined.with_columns((pl.col("hand_id") // size).alias("block"))
                       .filter(pl.col("block") < blocks), ["block"], cluster=run.cluster)
    p = blk["p_value"].fill_null(1.0)
    tested = blk.filter(pl.col("n_differ") > 0)
    cover = ((tested["ci_lo"] <= truth) & (truth <= tested["ci_hi"])).mean() if tested.height else math.nan
    return {**out, "blocks": blocks, "power": float((p < 0.05).mean()), "coverage": float(cover),
            "few-differing blocks": int((blk["n_differ"] < RARE_UNITS).sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=40_000, help="hands per arm")
    ap.add_argument("--seats", default="greedy", help="the compiled bot in every seat")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2028)
    ap.add_argument("--run", type=Path, help="analyse this run directory instead of simulating")
    ap.add_argument("--keep", type=Path, help="simulate into this directory and keep it")
    args = ap.parse_args()
    tmp = None
    if args.run is not None:
        run_dir = args.run
    else:
        base = args.keep or Path(tmp := tempfile.mkdtemp(prefix="xuezhan-rare-power-"))
        run_dir = simulate(base, args.hands, args.seats, args.jobs, args.seed)
    try:
        run = open_run(run_dir)
        rows = [row_power(run, v, m) for v, m in ROWS]
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, fmt_str_lengths=40):
            print(pl.DataFrame(rows, infer_schema_length=None))
        print("promised: power 0.80 at the printed size; coverage ≥ 0.95 (Monte Carlo SE √(p(1−p)/blocks))")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
