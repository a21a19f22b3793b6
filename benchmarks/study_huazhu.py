"""Wall time of the shipped huazhu study (issue 49): simulation and report, on two cores, as a user runs it.

    python benchmarks/study_huazhu.py                      # the shipped study: 3 arms x 4 populations, --jobs 2
    python benchmarks/study_huazhu.py --hands 4000         # a smaller one (hands per arm and population)

Runs ``xuezhan study huazhu --jobs 2`` in a fresh output directory (a child process, niced by the caller if you
wish: ``nice -n 10 python benchmarks/study_huazhu.py``) and prints its wall time, the simulated hands, the time
the report took (the study prints its simulation time; the rest is checks and report) and the peak resident
memory of the study process and its workers (``/usr/bin/time -v`` when present). The engine must be compiled
already (run any study once): a cold compile would be measured too. Printed figures depend on the machine and on
what else runs on it; say so when you quote them.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=None, help="hands per arm and population (default: the study's)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--study", default="huazhu")
    ap.add_argument("--keep", type=Path, default=None, help="keep the run in this directory (default: removed)")
    args = ap.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="xz_bench_")) / "run"
    cmd = [sys.executable, "-m", "simulator.cli", "study", args.study, "--jobs", str(args.jobs), "--out", str(out),
           "--quiet", *(["--hands", str(args.hands)] if args.hands else [])]
    timer = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    if timer:
        cmd = [timer, "-v", *cmd]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:], sep="\n")
        return proc.returncode
    sim = re.search(r"simulated ([\d,]+) hands in ([\d.]+) s", proc.stdout)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    print(f"study {args.study}: {wall:.1f} s wall with --jobs {args.jobs}")
    if sim:
        hands, secs = int(sim.group(1).replace(",", "")), float(sim.group(2))
        print(f"  simulation: {hands:,} hands in {secs:.1f} s ({hands / secs:,.0f} hands/s); checks and report: "
              f"{wall - secs:.1f} s")
    if rss:
        print(f"  peak RSS of the study process (largest single process): {int(rss.group(1)) / 1024:,.0f} MiB")
    report = out / "report.md"
    print(f"  report: {report} ({'kept' if args.keep else 'removed'})")
    if not args.keep:
        shutil.rmtree(out.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
