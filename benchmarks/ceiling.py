"""How much of a stronger player's edge the expert captures, per rule set (issue 54), from a run of
``xuezhan study ceiling`` (configs/studies/ceiling.yaml: an expert and a search player, each among three greedy
bots, duplicate seating, the same walls in every cell).

    xuezhan study ceiling --jobs 2 --out runs/ceiling
    python benchmarks/ceiling.py --run runs/ceiling

Per arm, on the walls both cells played: the expert's edge over greedy and the search player's (test − field mean
score per player-hand, base units, the wall the unit), the paired difference search − expert, and the share of the
search's edge the expert captures (expert / search, SE by the delta method over walls).
"""

from __future__ import annotations

import argparse

import numpy as np

from analysis.load import as_run
from analysis.skill import variant_design


def per_wall_edge(run, variant: str) -> np.ndarray:
    """Each wall's edge (walls in deal id order): test − field mean score per player-hand."""
    got = variant_design(run, variant)
    if got is None:
        raise SystemExit(f"{variant}: not a cell of two distinct bots (is this a ceiling study run?)")
    d = got[0]
    w = d.n_walls
    t = np.bincount(d.wall[d.test], weights=d.score[d.test], minlength=w) / np.bincount(d.wall[d.test], minlength=w)
    f = (np.bincount(d.wall[~d.test], weights=d.score[~d.test], minlength=w)
         / np.bincount(d.wall[~d.test], minlength=w))
    return t - f


def ceiling_rows(run) -> list[dict]:
    """One row per arm with an ``.expert`` and a ``.search`` cell."""
    rows = []
    arms = sorted({v.rsplit(".", 1)[0] for v in run.variants if v.endswith((".expert", ".search"))})
    for arm in arms:
        if f"{arm}.expert" not in run.variants or f"{arm}.search" not in run.variants:
            continue
        e = per_wall_edge(run, f"{arm}.expert")
        s = per_wall_edge(run, f"{arm}.search")
        n = min(e.shape[0], s.shape[0])  # every cell plays hand ids 0..hands-1: wall k is the same wall
        e, s = e[:n], s[:n]
        me, ms = e.mean(), s.mean()
        cov = np.cov(e, s, ddof=1) / n
        ve, vs, c = cov[0, 0], cov[1, 1], cov[0, 1]
        ratio = me / ms
        se_ratio = np.sqrt(max(ve / ms ** 2 + me ** 2 * vs / ms ** 4 - 2 * me * c / ms ** 3, 0.0))
        d = s - e
        rows.append({"arm": arm, "walls": n, "expert": me, "expert_se": np.sqrt(ve), "search": ms,
                     "search_se": np.sqrt(vs), "gain": d.mean(), "gain_se": d.std(ddof=1) / np.sqrt(n),
                     "captured": ratio, "captured_se": se_ratio})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="the run directory of xuezhan study ceiling")
    args = ap.parse_args()
    rows = ceiling_rows(as_run(args.run))
    if not rows:
        raise SystemExit(f"{args.run}: no arm with both an expert and a search cell")
    print("arm | walls × 4 | expert − greedy | search − greedy | search − expert (paired) | captured (expert/search)")
    for r in rows:
        print(f"{r['arm']} | {r['walls']:,} | {r['expert']:+.3f} ± {r['expert_se']:.3f} | "
              f"{r['search']:+.3f} ± {r['search_se']:.3f} | {r['gain']:+.4f} ± {r['gain_se']:.4f} | "
              f"{r['captured']:.3f} ± {r['captured_se']:.3f}")


if __name__ == "__main__":
    main()
