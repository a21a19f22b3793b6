"""Run the shipped design examples (configs/designs/) at full size and print what each found: the chosen values,
every target's estimate with its 95% interval on fresh walls (walls, n), the baseline's on the same walls, the
search's size, CPU seconds and the process's peak memory.

    nice -n 10 python benchmarks/design_examples.py --out runs/designs            # both examples, full size
    python benchmarks/design_examples.py --only huazhu_floor --fresh-walls 4000    # one, smaller

The run resumes from ``OUT/NAME.db`` like ``xuezhan design``. The machine is shared: times are indicative only.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from simulator.run.design import design
from simulator.run.design_file import DESIGN_DIR


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/designs"))
    ap.add_argument("--only", action="append", help="an example's name (repeatable; default: every example)")
    ap.add_argument("--budget", type=int)
    ap.add_argument("--walls", type=int)
    ap.add_argument("--fresh-walls", type=int)
    args = ap.parse_args()
    names = args.only or sorted(p.stem for p in DESIGN_DIR.glob("*.yaml"))
    for name in names:
        wall0, cpu0 = time.time(), time.process_time()
        res = design(name, args.out, budget=args.budget, walls=args.walls, fresh_walls=args.fresh_walls)
        doc, s = res.document, res.document["search"]
        print(f"== {name}: {'every target met' if res.met else 'NOT met'}; {s['trials']} trials on {s['walls']:,} "
              f"walls (seed {s['seed']}), {s['feasible']} feasible on the search walls; "
              f"fresh walls: {doc['fresh']['walls']:,} (seed {doc['fresh']['seed']})")
        part = doc["chosen"] if res.met else doc["closest"]
        print(f"   {'chosen' if res.met else 'closest'}: {part['params']}")
        for t, b in zip(part["targets"], doc["baseline_fresh"]["targets"], strict=True):
            print(f"   {t['target']} ({t['population']}): {t['estimate']:+.5f} [{t['ci95'][0]:+.5f}, "
                  f"{t['ci95'][1]:+.5f}] se {t['se']:.5f}, {t['walls']:,} walls, n = {t['n']:,}; baseline "
                  f"{b['estimate']:+.5f} [{b['ci95'][0]:+.5f}, {b['ci95'][1]:+.5f}]; met: {t['met']}")
        print(f"   {res.trials_run} trials run now; wall {time.time() - wall0:.0f} s, CPU "
              f"{time.process_time() - cpu0:.0f} s; report {res.report}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
