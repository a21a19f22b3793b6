"""Benchmark ``xuezhan simulate``: hands per second and peak memory of every process, for one or more N.

Usage::

    python benchmarks/runner.py --hands 100000 --hands 1000000 --jobs 2

Each N runs ``xuezhan simulate`` in a fresh output directory as a subprocess. The script polls ``/proc`` for the
process tree (the command and its workers) and records each process's ``VmHWM`` (peak resident set size, as
the kernel counts it), and polls the manifest to time the steady state: hands per second between the first
finished chunk and the last, which excludes start-up (imports, numba cache loading, worker spawn). "Memory
flat in N" means the peak RSS per process does not grow with N.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

POLL = 0.1  # seconds between /proc and manifest samples
XUEZHAN = Path(sys.executable).parent / "xuezhan"


def _ppid_map() -> dict[int, int]:
    """pid -> parent pid of every process, from /proc/<pid>/stat."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended while we looked
            continue
        # The command name (2nd field) may contain spaces; the fields after the last ')' are fixed.
        out[int(stat.parent.name)] = int(text.rsplit(")", 1)[1].split()[1])
    return out


def _tree(root: int) -> list[int]:
    ppid = _ppid_map()
    found, frontier = [root], [root]
    while frontier:
        kids = [p for p, pp in ppid.items() if pp in frontier]
        found += kids
        frontier = kids
    return found


def _peak_rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _role(pid: int, root: int) -> str:
    if pid == root:
        return "main"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    if "resource_tracker" in cmd:
        return "tracker"
    return "worker" if ("loky" in cmd or "distributed" in cmd or "multiprocessing" in cmd) else "child"


@dataclass
class Result:
    hands: int
    jobs: int
    wall: float
    steady_rate: float | None
    peaks: dict[int, tuple[str, int]] = field(default_factory=dict)  # pid -> (role, peak KiB)


def _hands_done(manifest: Path) -> int:
    try:
        return int(json.loads(manifest.read_text())["hands_done"])
    except (OSError, ValueError, KeyError):
        return 0


def bench(config: str, hands: int, jobs: int, chunk_size: int | None, out: Path) -> Result:
    """Run one simulation, sampling memory and progress until it exits."""
    args = [str(XUEZHAN), "simulate", config, "--hands", str(hands), "--jobs", str(jobs), "--out", str(out),
            "--name", "bench", "--quiet"]
    if chunk_size:
        args += ["--chunk-size", str(chunk_size)]
    manifest = out / "_variants" / "variant=bench" / "_manifest.json"
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peaks: dict[int, tuple[str, int]] = {}
    first: tuple[float, int] | None = None   # (time, hands done) at the first finished chunk
    last: tuple[float, int] | None = None
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            kib = _peak_rss_kib(pid)
            if kib is not None:
                peaks[pid] = (_role(pid, proc.pid), max(kib, peaks.get(pid, ("", 0))[1]))
        done = _hands_done(manifest)
        now = time.perf_counter()
        if done and first is None:
            first = (now, done)
        if done and (last is None or done > last[1]):
            last = (now, done)
        time.sleep(POLL)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"simulate failed ({proc.returncode}): {proc.stderr.read().strip()}")
    done = _hands_done(manifest)
    last = (time.perf_counter(), done) if last is None or done > last[1] else last
    steady = (last[1] - first[1]) / (last[0] - first[0]) if first and last[0] > first[0] else None
    return Result(hands, jobs, wall, steady, peaks)


def report(r: Result) -> str:
    by_role: dict[str, list[int]] = {}
    for role, kib in r.peaks.values():
        by_role.setdefault(role, []).append(kib)
    mem = ", ".join(f"{role} {max(v) / 1024:.0f} MiB" + (f" (x{len(v)})" if len(v) > 1 else "")
                    for role, v in sorted(by_role.items()))
    steady = f"{r.steady_rate:,.0f}" if r.steady_rate else "n/a"
    return (f"hands={r.hands:,} jobs={r.jobs}: wall {r.wall:.1f} s, {r.hands / r.wall:,.0f} hands/s overall, "
            f"{steady} hands/s steady; peak RSS per process: {mem}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, action="append", required=True, help="N (repeat for several)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--chunk-size", type=int, default=None)
    ap.add_argument("--keep", type=Path, default=None, help="write runs under this directory and keep them")
    a = ap.parse_args()
    for n in a.hands:
        base = a.keep or Path(tempfile.mkdtemp(prefix="xuezhan-bench-"))
        out = base / f"n{n}-j{a.jobs}"
        try:
            print(report(bench(a.config, n, a.jobs, a.chunk_size, out)), flush=True)
        finally:
            if a.keep is None:
                shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
