"""Where the compiled engine spends its time: each compiled function's share of CPU samples (Linux ``perf``).

    python benchmarks/profile.py                          # greedy×4 on chengdu, 20,000 hands
    python benchmarks/profile.py --mix expert --hands 3000
    python benchmarks/profile.py --config xueliu --top 30

numba's machine code has no symbols ``perf`` can read, so the child process, once the engine is loaded, writes the
address of every function of every loaded ``simulator`` dispatcher to a file, plays the hands under ``perf record
-e cpu-clock`` (a software clock: it works on VMs without hardware counters), and the parent maps each sample to the
function at or below its address. Prints the share of the compiled code's samples per function (``NRT_incref`` /
``NRT_decref`` are numba's reference counting; see docs/internals.md, "Borrowed views") and the number of samples,
which compares two versions of the code on the same hands (fewer is faster; shares alone can mislead).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import sys, numpy as np
from numba.core.registry import CPUDispatcher
from simulator.hands import run_batch
from simulator.rules import load_rules

rules = load_rules(sys.argv[1], {"seats": sys.argv[2].split(",")})
run_batch(rules, np.arange(4), 0)  # load (or compile) the engine
rows = []
for name, mod in list(sys.modules.items()):
    if not name.startswith("simulator"):
        continue
    for obj in list(vars(mod).values()):
        if not isinstance(obj, CPUDispatcher):
            continue
        for cres in obj.overloads.values():
            lib = cres.library
            module = getattr(lib, "_shared_module", None) or getattr(lib, "_final_module", None)
            if module is None:
                continue
            for fn in module.functions:
                if not fn.is_declaration:
                    address = lib._codegen._engine.get_function_address(fn.name)
                    if address:
                        rows.append(f"{address:x} {fn.name}")
with open(sys.argv[4], "w") as fh:
    fh.write("\\n".join(sorted(set(rows))))
run_batch(rules, np.arange(int(sys.argv[3])), 0)
"""
MIXES = {"greedy": "greedy,greedy,greedy,greedy", "expert": "expert,expert,expert,expert",
         "mixed": "greedy,value,defensive,expert"}


def _short(symbol: str) -> str:
    """``simulator.bots.common.acceptance`` from numba's mangled name (``_ZN9simulator4bots6common10acceptanceB…``)."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        n = int(symbol[i:j])
        parts.append(symbol[j:j + n])
        i = j + n
    return ".".join(parts) or symbol


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--mix", choices=sorted(MIXES), default="greedy")
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("error: this needs Linux perf (apt install linux-perf)")
    with tempfile.TemporaryDirectory() as tmp:
        syms, data = Path(tmp) / "symbols.txt", Path(tmp) / "perf.data"
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", str(data), sys.executable,
                        "-c", CHILD, args.config, MIXES[args.mix], str(args.hands), str(syms)], check=True,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        samples = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,dso"], check=True,
                                 capture_output=True, text=True).stdout.splitlines()
        table = sorted((int(a, 16), name) for a, name in (line.split(None, 1) for line in syms.read_text().split("\n")))
    starts = [a for a, _ in table]
    counts: collections.Counter[str] = collections.Counter()
    for line in samples:
        parts = line.split()
        if len(parts) < 2 or "perf-" not in parts[1]:  # JIT code shows as the process's perf map
            continue
        i = bisect.bisect_right(starts, int(parts[0], 16)) - 1
        counts[_short(table[i][1]) if i >= 0 else "?"] += 1
    total = sum(counts.values())
    print(f"{args.config} {args.mix}×4, {args.hands:,} hands: {total:,} samples of compiled code "
          f"({len(samples):,} in all, at 2 kHz)")
    for name, n in counts.most_common(args.top):
        print(f"{100 * n / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
