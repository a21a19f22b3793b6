"""Peak memory and time of each stage of the analysis on a run, each stage in its own process (issue 47).

    python benchmarks/analysis_scale.py RUN_DIR [--code DIR ...] [--stages a,b] [--rounds N] [--boot 0]
    python benchmarks/analysis_scale.py RUN_DIR --make [--variants 4] [--hands 10000000] [--jobs 2] ...

``--make`` first simulates the scale study into RUN_DIR (benchmarks/scale_study.yaml: greedy x4, fan caps, the
default 5,000-hand parts; its first ``--variants`` arms, ``--hands`` a variant), resuming a run left
unfinished, then measures the stages on it (``--stages ''``: simulate only).

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
    peak, wall, cpu, rc = run_code(src, code_dir, env)
    return peak, wall, cpu, rc


def run_code(src: str, code_dir: Path | None, env: dict[str, str]) -> tuple[float, float, float, int]:
    """``(peak GiB, wall s, CPU s, exit status)`` of ``python -c src`` in a fresh process (``code_dir`` first on
    its path when given): the child's own ``ru_maxrss`` and user + system time from ``os.wait4``."""
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
        print(f"  under {code_dir}: exit {proc.returncode}: {err.strip().splitlines()[-1:]}", flush=True)
    return usage.ru_maxrss / 2 ** 20, wall, usage.ru_utime + usage.ru_stime, proc.returncode


def table_times(run_dir: Path, boot: int) -> None:
    """Where a report's time goes: each table job of the report (``analysis.report_build._submit_tables``) run one
    after the other in this process, its CPU (every thread's: polars' included) and wall time printed, largest
    first; the figures and files are not made."""
    from concurrent.futures import Future

    from analysis import report_build
    from analysis.load import open_run

    times: list[tuple[float, float, str]] = []

    class Serial:
        """An executor that runs each job at once, timing it."""

        def submit(self, fn, *args):  # noqa: ANN001, ANN202 - the executor's signature
            fut: Future = Future()
            name = getattr(fn, "__name__", None) or fn.func.__name__  # a function or a functools.partial
            name += "".join(f" {a}" for a in (*args, *getattr(fn, "args", ())) if isinstance(a, str))
            t0, c0 = time.perf_counter(), time.process_time()
            fut.set_result(fn(*args))
            times.append((time.process_time() - c0, time.perf_counter() - t0, name))
            return fut

    run = open_run(run_dir, check="sizes")
    report_build._submit_tables(Serial(), run, run.baseline, boot, 40, 0, None)  # type: ignore[arg-type]
    total = sum(c for c, _, _ in times)
    print(f"report tables on {run_dir}, boot {boot}: {total:.1f} s CPU in all (one after the other)")
    for cpu, wall, name in sorted(times, reverse=True):
        print(f"  {name:34s} cpu {cpu:7.1f} s ({cpu / total:5.1%})  wall {wall:7.1f} s", flush=True)


def table_peaks(run_dir: Path, boot: int, code_dir: Path | None, env: dict[str, str]) -> None:
    """Each table job of the report in a fresh process (its peak RSS, wall and CPU printed): where a report's
    peak comes from, and which tables' peaks grow with the hands (run at two sizes)."""
    from analysis import report_build
    from analysis.load import open_run

    run = open_run(run_dir, check="sizes")
    names = list(report_build._submit_tables(_Lazy(), run, run.baseline, boot, 40, 0, None))  # type: ignore[arg-type]
    print(f"report table jobs on {run_dir}, boot {boot}, each in a fresh process (peak GiB / wall s / CPU s):")
    for name in names:
        src = (f"from pathlib import Path\nfrom analysis.load import open_run\nfrom analysis import report_build\n"
               f"RUN = Path({str(run_dir)!r})\nrun = open_run(RUN, check='sizes')\n"
               f"class One:\n    def submit(self, fn, *args):\n        return fn, args\n"
               f"jobs = report_build._submit_tables(One(), run, run.baseline, {boot}, 40, 0, None)\n"
               f"fn, args = jobs[{name!r}]\nfn(*args)\n")
        peak, wall, cpu, rc = run_code(src, code_dir, env)
        print(f"  {name:34s} peak {peak:6.2f} GiB  wall {wall:7.1f} s  cpu {cpu:7.1f} s{'' if rc == 0 else '  FAILED'}",
              flush=True)


class _Lazy:
    """An executor that runs nothing: the report's job names."""

    def submit(self, fn, *args):  # noqa: ANN001, ANN202 - the executor's signature
        return None


STUDY = Path(__file__).with_name("scale_study.yaml")
"""The scale study: four fan caps, greedy x4, 10,000,000 hands a variant, the default chunking."""


def make_study(run_dir: Path, variants: int, hands: int, jobs: int) -> None:
    """Simulate the first ``variants`` arms of :data:`STUDY` (baseline included), ``hands`` each, into
    ``run_dir``; an unfinished run there is resumed (same study, same hands: the same bytes)."""
    import yaml

    from simulator.run.study import simulate_study

    study = yaml.safe_load(STUDY.read_text(encoding="utf-8"))
    study["variants"] = study["variants"][:variants - 1]
    if variants < 4:
        study["name"] = f"{study['name']}{variants}"
    t0, c0 = time.perf_counter(), os.times()
    simulate_study(study, out_dir=run_dir, hands=hands, jobs=jobs, resume=(run_dir / "study.json").exists(),
                   progress=sys.stderr.isatty())
    c1 = os.times()
    cpu = c1.user + c1.system + c1.children_user + c1.children_system - sum(c0[:4])
    print(f"simulated {variants} x {hands:,} hands into {run_dir}: wall {time.perf_counter() - t0:.0f} s, "
          f"cpu {cpu:.0f} s (this process and its workers)", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--code", type=Path, action="append", default=[], help="source tree (repeat to compare)")
    ap.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--boot", type=int, default=0)
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the stages")
    ap.add_argument("--tables", action="store_true", help="time each table of the report in this process")
    ap.add_argument("--table-peaks", action="store_true",
                    help="each table of the report in its own process: peak, wall, CPU (first --code tree)")
    ap.add_argument("--make", action="store_true", help="simulate the scale study into RUN_DIR first")
    ap.add_argument("--variants", type=int, default=4, choices=range(2, 5), help="arms of the study (--make)")
    ap.add_argument("--hands", type=int, default=10_000_000, help="hands a variant (--make)")
    ap.add_argument("--jobs", type=int, default=2, help="simulation workers (--make)")
    args = ap.parse_args(argv)
    if args.make:
        make_study(args.run_dir, args.variants, args.hands, args.jobs)
    env = dict(e.split("=", 1) for e in args.env)
    if args.tables:
        table_times(args.run_dir, args.boot)
    if args.table_peaks:
        table_peaks(args.run_dir, args.boot, (args.code or [None])[0], env)
    stages = [s for s in args.stages.split(",") if s]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        ap.error(f"unknown stage {unknown[0]!r}")
    trees: list[Path | None] = list(args.code) or [None]
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
