"""Check "ahead with probability 90% after n hands" (analysis.skill) against a direct simulation.

    python benchmarks/skill_check.py --run runs/skill --variant exchange_three --hands 24000
    python benchmarks/skill_check.py --config chengdu --walls 1000 --hands 8000     # estimate here too

1. The estimate: ``analysis.skill.skill_measures`` on duplicate walls — the variant of a finished skill study
   (``--run``, ``--variant``) or ``--walls`` duplicate walls played here (seed ``--seed``) — gives the per-hand
   ratio ρ = edge_pair / sd_pair (test bot − one field opponent) and ``hands_90`` = (z₀.₉/ρ)².
2. The direct simulation: ``--hands`` fresh hands (seed ``--seed`` + 1000, no duplicate seating: the test bot
   always at seat 0, the dealer rotating with the hand id) cut into consecutive blocks of n hands (n a multiple
   of 4, so every seat deals equally often); in each block, for each of the three field opponents, whether the
   test bot's total exceeds that opponent's. The share of (block, opponent) pairs ahead, with a 95% interval
   clustered by block (the three opponents of a block share its hands), against the prediction Φ(√n·ρ) with ρ's
   bootstrap interval — at n = hands_90 and at hands_90/4 and /16 (more blocks, a sharper check of the curve).
"""

from __future__ import annotations

import argparse
import time
from statistics import NormalDist

import numpy as np
import polars as pl

from analysis import skill
from analysis.load import open_run
from simulator.hands import run_batch
from simulator.logs import records
from simulator.rules import load_rules

SEATS = ["expert", "greedy", "greedy", "greedy"]


def estimate(args: argparse.Namespace) -> tuple[dict[str, float], np.ndarray]:
    """The measures of analysis.skill and the bootstrap replicates' ratio bounds (lo, hi) of edge_pair/sd_pair."""
    if args.run:
        got = skill.variant_design(open_run(args.run, check="sizes"), args.variant)
        if got is None:
            raise SystemExit(f"{args.run}: variant {args.variant} does not seat exactly two bots")
        d = got[0]
    else:
        rules = load_rules(args.config, [f"seats=[{', '.join(SEATS)}]"])
        ids = np.arange(4 * args.walls, dtype=np.int64)
        p = records.to_columns(run_batch(rules, ids, args.seed, duplicate=True))["players"]
        d = skill.Design.from_frame(pl.DataFrame({
            "deal_id": np.asarray(p["deal_id"], dtype=np.int64), "hand_id": np.asarray(p["hand_id"], dtype=np.int64),
            "seat": np.asarray(p["seat"], dtype=np.int8), "test": np.asarray(p["bot"]).astype(str) == SEATS[0],
            "score": np.asarray(p["score_total"], dtype=np.float64)}))
    m = skill.skill_measures(d, n_boot=args.boot, seed=args.seed)
    z = NormalDist().inv_cdf(skill.TARGET)
    # hands_90 = (z/ρ)² ⇒ ρ = z/√hands_90; its bounds swap (more hands ⇔ a smaller ratio)
    rho = np.array([z / np.sqrt(m["hands_90_hi"]), z / np.sqrt(m["hands_90_lo"])], dtype=np.float64)
    return m, rho


def direct(config: str, hands: int, seed: int) -> np.ndarray:
    """float64[hands, 3]: test bot's score − field opponent j's score (seats 1..3), hand by hand."""
    rules = load_rules(config, [f"seats=[{', '.join(SEATS)}]"])
    p = records.to_columns(run_batch(rules, np.arange(hands, dtype=np.int64), seed))["players"]
    df = pl.DataFrame({"hand_id": np.asarray(p["hand_id"], dtype=np.int64),
                       "seat": np.asarray(p["seat"], dtype=np.int8),
                       "score": np.asarray(p["score_total"], dtype=np.float64)}).sort("hand_id", "seat")
    s = df["score"].to_numpy().reshape(hands, 4)
    return s[:, :1] - s[:, 1:]


def check(diff: np.ndarray, n: int, rho: float, rho_lo: float, rho_hi: float) -> dict[str, float]:
    """Share of (block of n hands, opponent) pairs where the test bot is ahead, 95% interval clustered by block,
    and the normal approximation's prediction with its interval."""
    blocks = diff.shape[0] // n
    sums = diff[: blocks * n].reshape(blocks, n, 3).sum(axis=1)
    per_block = (sums > 0).mean(axis=1)
    p, se = per_block.mean(), per_block.std(ddof=1) / np.sqrt(blocks)
    pred = [float(skill.p_ahead(r, n)) for r in (rho, rho_lo, rho_hi)]
    return {"n": n, "blocks": blocks, "observed": p, "lo": p - 1.96 * se, "hi": p + 1.96 * se,
            "ties": float((sums == 0).mean()), "predicted": pred[0], "pred_lo": pred[1], "pred_hi": pred[2]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", help="a finished skill study (its variant gives the estimate)")
    ap.add_argument("--variant", default="exchange_three")
    ap.add_argument("--config", help="rule set of the direct simulation (default: --variant's rules file)")
    ap.add_argument("--walls", type=int, default=1000, help="duplicate walls for the estimate (without --run)")
    ap.add_argument("--hands", type=int, default=24000, help="hands of the direct simulation")
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--boot", type=int, default=400)
    args = ap.parse_args()
    config = args.config or args.variant
    args.config = config
    t0 = time.process_time()
    m, (rho_lo, rho_hi) = estimate(args)
    rho = m["edge_pair"] / m["sd_pair"]
    print(f"estimate ({'run ' + args.run if args.run else f'{args.walls:,} duplicate walls'}, {args.variant}): "
          f"edge {m['edge']:+.3f} [{m['edge_lo']:+.3f}, {m['edge_hi']:+.3f}] base units per player-hand, "
          f"skill/luck {m['skill_luck']:.4f} [{m['skill_luck_lo']:.4f}, {m['skill_luck_hi']:.4f}], "
          f"pair ratio {rho:.4f} [{rho_lo:.4f}, {rho_hi:.4f}], hands_90 {m['hands_90']:.0f} "
          f"[{m['hands_90_lo']:.0f}, {m['hands_90_hi']:.0f}] ({int(m['walls']):,} walls)")
    diff = direct(config, args.hands, args.seed + 1000)
    own = diff.mean() / diff.std()
    se_mean = diff.mean(axis=1).std(ddof=1) / np.sqrt(diff.shape[0])
    print(f"direct: {args.hands:,} hands of {config}, seats {SEATS}, seed {args.seed + 1000}: its own pair "
          f"edge {diff.mean():+.3f} (SE {se_mean:.3f}), sd {diff.std():.2f}, ratio {own:.4f} "
          f"(P ahead from it: {float(skill.p_ahead(own, m['hands_90'])):.3f} at {m['hands_90']:.0f} hands)")
    n90 = int(4 * round(m["hands_90"] / 4))
    for n in sorted({max(4, int(4 * round(n90 / k / 4))) for k in (16, 4, 1)}):
        r = check(diff, n, rho, rho_lo, rho_hi)
        print(f"  after {r['n']:5d} hands ({r['blocks']:4d} blocks x 3 opponents): ahead {r['observed']:.3f} "
              f"[{r['lo']:.3f}, {r['hi']:.3f}] (ties {r['ties']:.3f}); predicted {r['predicted']:.3f} "
              f"[{r['pred_lo']:.3f}, {r['pred_hi']:.3f}]")
    print(f"CPU {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
