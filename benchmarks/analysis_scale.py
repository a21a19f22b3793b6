"""Peak memory and time of each stage of the analysis on a run, each stage in its own process (issue 47).

    python benchmarks/analysis_scale.py RUN_DIR [--code DIR ...] [--stages a,b] [--rounds N] [--boot 0]

Every stage (the study's checks, each table family of the report, ``compare``, the whole report) runs in a fresh
Python process whose peak resident set size (``ru_maxrss`` of the child, from ``os.wait4``), wall and CPU time
are printed. ``--code`` names source trees to compare (e.g. an export of the commit before a change and the
checkout after it): each stage runs under each tree (``PYTHONPATH``), trees alternating in order every round,
so a machine loaded by others weighs on both alike. ``--env KEY=VALUE`` sets a variable for the stages (e.g.
``XUEZHAN_PIECE_HANDS``). The figures go to stdout, one line per stage, tree and round, then a summary of the
medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

STAGES: dict[str, str] = {
    "open": "run = open_run(RUN)",
    "checks": ("run = open_run(RUN, check='sizes'); b = run.baseline\n"
               "from analysis.diagnostics import diagnose, differing_hands\n"
               "diagnose(run, b); [differing_hands(run, v, b) for v in run.variants if v != b]"),
    "ev_seat": "from analysis.ev import expected_value; expected_value(open_run(RUN, check='sizes'), 'seat')",
    "ev_position": "from analysis.ev import expected_value; expected_value(open_run(RUN, check='sizes'), 'position')",
    "family": ("run = open_run(RUN, check='sizes'); from analysis.family import paired_family\n"
               "[paired_family(run, v, run.baseline) for v in run.variants if v != run.baseline]"),
    "risk": ("run = open_run(RUN, check='sizes'); from analysis import risk\n"
             "risk.risk_table(run, 'bot', n_boot=BOOT); risk.session_risk_table(run, 'bot', n_boot=BOOT)"),
    "fans": ("run = open_run(RUN, check='sizes'); from analysis import fans\n"
             "fans.hand_type_frequencies(run); fans.flag_frequencies(run); fans.fan_distribution(run); "
             "fans.fan_summary(run)"),
    "shape": ("run = open_run(RUN, check='sizes'); from analysis import shape, economy, risk\n"
              "shape.game_shape(run); shape.decline_effect(run); economy.economy_table(run); "
              "risk.score_distribution(run)"),
    "compare": ("run = open_run(RUN); from analysis.family import compare_rows, compare_document\n"
                "v = [x for x in run.variants if x != run.baseline][0]\n"
                "s, m, n = compare_rows(run, v, run.baseline, 'seat', ['score_total'])\n"
                "compare_document(s, m, run.baseline, v, 'seat', n)"),
    "report": ("from analysis.report import write_report; import tempfile\n"
               "out = Path(tempfile.mkdtemp()) / 'report.html'\n"
               "write_report(open_run(RUN), None, out, n_boot=BOOT)"),
}
"""Each stage's code; ``RUN`` is the run directory and ``BOOT`` the bootstrap replicates."""


def run_stage(code_dir: Path | None, stage: str, run_dir: Path, boot: int, env: dict[str, str]
              ) -> tuple[float, float, float, int]:
    """``(peak GiB, wall s, CPU s, exit status)`` of one stage in a fresh process."""
    src = (f"from pathlib import Path\nfrom analysis.load import open_run\nRUN = Path({str(run_dir)!r})\n"
           f"BOOT = {boot}\n{STAGES[stage]}\n")
    child_env = {**os.environ, **env}
    if code_dir is not None:
        child_env["PYTHONPATH"] = str(code_dir)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", src], env=child_env, cwd=str(code_dir or Path.cwd()),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        print(f"  {stage} under {code_dir}: exit {proc.returncode}: {err.strip().splitlines()[-1:]}", flush=True)
    return usage.ru_maxrss / 2 ** 20, wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--code", type=Path, action="append", default=[], help="source tree (repeat to compare)")
    ap.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--boot", type=int, default=0)
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the stages")
    args = ap.parse_args(argv)
    stages = [s for s in args.stages.split(",") if s]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        ap.error(f"unknown stage {unknown[0]!r}")
    trees: list[Path | None] = list(args.code) or [None]
    env = dict(e.split("=", 1) for e in args.env)
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    print(f"run {args.run_dir}; stages each in a fresh process; boot {args.boot}; env {env or '-'}", flush=True)
    for r in range(args.rounds):
        order = trees if r % 2 == 0 else trees[::-1]
        for stage in stages:
            for tree in order:
                peak, wall, cpu, rc = run_stage(tree, stage, args.run_dir, args.boot, env)
                name = str(tree) if tree is not None else "(installed)"
                if rc == 0:
                    results.setdefault((stage, name), []).append((peak, wall, cpu))
                print(f"round {r + 1}  {stage:12s} {name:28s} peak {peak:6.2f} GiB  wall {wall:7.1f} s  "
                      f"cpu {cpu:7.1f} s{'' if rc == 0 else '  FAILED'}", flush=True)
    print("\nmedians (peak GiB / wall s / CPU s):")
    for (stage, name), rows in results.items():
        peak, wall, cpu = (statistics.median(x) for x in zip(*rows, strict=True))
        print(f"  {stage:12s} {name:28s} {peak:6.2f} / {wall:7.1f} / {cpu:7.1f}  ({len(rows)} rounds)")


if __name__ == "__main__":
    main()
