"""Cold compile of the parameterised bots' dispatchers alone: CPU seconds per function, exclusive of its callees.

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_dispatchers.py param_self_kong param_claim param_takes_win

Run it with an empty numba cache (a fresh ``NUMBA_CACHE_DIR``; the real cache is untouched). It compiles the named
``simulator.bots`` dispatchers for the full line-up's argument types (``simulator.hands.precompile``), which
compiles their callees too (the expert's decisions and what they call, about 25 s of CPU), and prints the total and
the functions that took longest. Much quicker than a whole cold start (``benchmarks/engine.py --compile``) and
less noisy, for a before/after of the dispatchers' shape (docs/internals.md, "Cold compile against the commit
before the bot table"); alternate the trees compared (``git archive`` copies, each with its own empty cache).
"""

from __future__ import annotations

import argparse
import time

from engine import CompileTimes
from numba import typeof
from numba import types as nt

import simulator.bots as bots
from simulator.hands import precompile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("functions", nargs="+", help="param_* dispatchers of simulator.bots")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    times = CompileTimes()
    t0 = time.process_time()
    for name in args.functions:
        fn = getattr(bots, name)
        if name == "param_takes_win":  # its scalars carry no annotations: typed here
            types = precompile.arg_types(False)
            row = typeof(precompile._lineup(False)[1][0])
            fn.compile((types["game"], types["st"], row, nt.int64, nt.int64, nt.int64, nt.boolean))
        else:
            precompile._compile(precompile._bots((fn,), False))
    print(f"total {time.process_time() - t0:.1f} s CPU")
    for fname, sec in sorted(times.take().items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"  {fname:40s} {sec:6.2f} s")


if __name__ == "__main__":
    main()
