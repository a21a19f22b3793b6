"""Engine throughput: hands per second on one core, compiled and warm, plus peak RSS.

    python benchmarks/engine.py                    # greedy×4 on chengdu, 20,000 hands
    python benchmarks/engine.py --hands 50000 --mix all --config qq_sichuan
    python benchmarks/engine.py --compile          # one-time compilation: CPU seconds per module and function
    python benchmarks/engine.py --compile --mix expert   # the same for the full copy of the engine
    python benchmarks/engine.py --compile --warm-up      # the two-process warm-up of a cold start, as it runs

Times are CPU time of this process (``time.process_time``), so other jobs on the machine distort them less
than wall-clock time would. Prints, per bot mix: total hands/s of ``play_hands`` and the split between seed derivation
(``SeedSequence`` per deal), the compiled batch, and the string/column formatting of ``simulator.logs.records``;
then the peak RSS of the process and the RSS after each of several chunks (it must stay flat).

``--compile`` measures a cold start instead: a child process with an empty numba cache (a temporary
``NUMBA_CACHE_DIR``; the real cache is untouched) runs one hand, and numba's compile events give the CPU time
spent compiling each function (exclusive of its callees), summed per module, plus how many copies of a function
were compiled (more than one means several argument-type specialisations). With ``--warm-up`` the child runs
the real cold warm-up instead (simulator.hands.warmup: two processes, see simulator.hands.precompile) and prints the
wall time, each process's compile CPU, the CPU the second process spent on functions the parent compiled too (work done
twice), and what was left to compile after both (the batch itself).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

import numpy as np

from simulator.engine import deal_seeds
from simulator.hands import play_hands, run_batch
from simulator.logs import records
from simulator.rules import load_rules

MIXES = {
    "greedy": ["greedy"] * 4,
    "value": ["value"] * 4,
    "defensive": ["defensive"] * 4,
    "random": ["random"] * 4,
    "mixed": ["greedy", "value", "defensive", "random"],
    "expert": ["expert"] * 4,
}


def rss_mb() -> float:
    """Current resident set size in MB (Linux /proc), or the peak where /proc is unavailable."""
    try:
        with open(f"/proc/{os.getpid()}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench(config: str, seats: list[str], hands: int, chunk: int) -> None:
    rules = load_rules(config, {"seats": seats})
    play_hands(rules, np.arange(64), 0)  # compile / load the cache, build the suit table
    ids = np.arange(hands, dtype=np.int64)
    t0 = time.process_time()
    deal_seeds(0, ids)
    t_seed = time.process_time() - t0
    t_batch = t_rec = 0.0
    rss = []
    for start in range(0, hands, chunk):
        part = ids[start:start + chunk]
        t0 = time.process_time()
        raw = run_batch(rules, part, 0)
        t1 = time.process_time()
        records.to_columns(raw)
        t2 = time.process_time()
        t_batch += t1 - t0
        t_rec += t2 - t1
        rss.append(rss_mb())
    total = t_batch + t_rec  # run_batch includes the seed derivation
    print(f"{config} {'/'.join(seats)}: {hands / total:,.0f} hands/s "
          f"({1e6 * total / hands:.0f} µs/hand: seeds {1e6 * t_seed / hands:.0f}, "
          f"compiled {1e6 * (t_batch - t_seed) / hands:.0f}, records {1e6 * t_rec / hands:.0f})")
    print(f"  RSS after each {chunk}-hand chunk (MB): {' '.join(f'{x:.0f}' for x in rss)}")


class CompileTimes:
    """numba compile events of this process: CPU seconds per function, exclusive of its callees."""

    def __init__(self) -> None:
        from numba.core import event

        self.marks: list[tuple[float, bool, str]] = []
        recorder = self

        class Listener(event.Listener):
            def on_start(self, ev) -> None:
                recorder.marks.append((time.process_time(), True, recorder.name(ev)))

            def on_end(self, ev) -> None:
                recorder.marks.append((time.process_time(), False, recorder.name(ev)))

        event.register("numba:compile", Listener())

    @staticmethod
    def name(ev) -> str:
        fn = ev.data["dispatcher"].py_func
        return f"{fn.__module__.split('.')[-1]}.{fn.__name__}"

    def take(self) -> dict[str, float]:
        """Exclusive CPU seconds per function since the last call."""
        excl: dict[str, float] = defaultdict(float)
        stack: list[list] = []
        for t, start, name in self.marks:
            if start:
                stack.append([name, t, 0.0])
                continue
            _, t_start, children = stack.pop()
            excl[name] += t - t_start - children
            if stack:
                stack[-1][2] += t - t_start
        self.marks.clear()
        return dict(excl)


def profile_compile(top: int, seats: list[str]) -> None:
    """In this process (which must start with an empty numba cache): compile the engine through one hand with
    these seats and print the CPU seconds spent compiling, per module and per function. A line-up of greedy and
    random seats compiles the engine's simple copy, any other the full one (see simulator.bots)."""
    rec = CompileTimes()
    t0 = time.process_time()
    play_hands(load_rules("chengdu", {"seats": seats}), np.arange(1), 0, record=True)
    total = time.process_time() - t0
    copies: dict[str, int] = defaultdict(int)
    for _, start, name in rec.marks:
        copies[name] += not start
    excl = rec.take()
    print(f"first hand, cold: {total:.1f} s CPU, of which compiling {sum(excl.values()):.1f} s")
    per_module: dict[str, float] = defaultdict(float)
    for name, sec in excl.items():
        per_module[name.split(".")[0]] += sec
    print("per module (CPU s): " + ", ".join(f"{m} {v:.1f}" for m, v in sorted(per_module.items(),
                                                                                 key=lambda x: -x[1])))
    for name, sec in sorted(excl.items(), key=lambda x: -x[1])[:top]:
        print(f"  {name:36s} {sec:6.2f} s  ×{copies[name]}")


_SIDE_PROFILE = ("import json, sys; sys.path.insert(0, {here!r}); from engine import CompileTimes; "
                 "rec = CompileTimes(); {side}; json.dump(rec.take(), open({out!r}, 'w'))")


def profile_warm_up(seats: list[str]) -> None:
    """In this process (empty numba cache): the cold warm-up of simulator.hands.warmup for this line-up, measured."""
    import json

    from simulator.hands import precompile, warmup
    from simulator.kernel import tables
    from simulator.rules import load_rules

    simple = warmup.lineup_of(load_rules("chengdu", {"seats": seats})) == "simple"
    rec = CompileTimes()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "side.json")
        code = _SIDE_PROFILE.format(here=os.path.dirname(os.path.abspath(__file__)), out=out,
                                    side=warmup._SIDE.format(simple=simple))
        t0 = time.perf_counter()
        side = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        precompile.precompile_core(simple)
        core = rec.take()
        t_core = time.perf_counter()
        warmup.wait_ready(side)
        t_ready = time.perf_counter()
        precompile.precompile_batch(simple)
        batch = rec.take()
        t_batch = time.perf_counter()
        side.stdout.close()
        side.wait()
        t1 = time.perf_counter()
        tables.suit_table()
        play_hands(load_rules("chengdu", {"seats": seats}), np.arange(1), 0, record=True)
        last = rec.take()
        t2 = time.perf_counter()
        with open(out) as fh:
            second = json.load(fh)
    twice = sum(v for k, v in second.items() if k in core or k in batch)
    print(f"cold warm-up ({'simple' if simple else 'full'} copy): {t2 - t0:.1f} s wall — parent's half "
          f"{t_core - t0:.1f} s, second process ready at {t_ready - t0:.1f} s, batch until {t_batch - t0:.1f} s, "
          f"second process done at {t1 - t0:.1f} s, then the first hand {t2 - t1:.1f} s")
    print(f"  compile CPU: parent {sum(core.values()):.1f} s, second process {sum(second.values()):.1f} s "
          f"(of which {twice:.1f} s on functions the parent compiled too), batch {sum(batch.values()):.1f} s, "
          f"left for the first hand {sum(last.values()):.1f} s")
    for label, times in (("parent", core), ("second", second), ("batch", batch), ("left", last)):
        top = sorted(times.items(), key=lambda x: -x[1])[:5]
        print(f"  {label:7s} " + ", ".join(f"{k} {v:.1f}" for k, v in top))


def compile_child(top: int, mix: str, warm_up: bool = False) -> None:
    """Run :func:`profile_compile` (or :func:`profile_warm_up`) in a child with a fresh, temporary numba cache."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "NUMBA_CACHE_DIR": tmp}
        flag = "--warm-up-here" if warm_up else "--profile-compile-here"
        subprocess.run([sys.executable, __file__, flag, "--top", str(top), "--mix", mix], env=env, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--chunk", type=int, default=5_000)
    ap.add_argument("--mix", default="greedy", choices=[*MIXES, "all"])
    ap.add_argument("--compile", action="store_true", help="profile a cold start's compilation instead")
    ap.add_argument("--top", type=int, default=25, help="functions listed by --compile")
    ap.add_argument("--warm-up", action="store_true", help="with --compile: the two-process warm-up as it runs")
    ap.add_argument("--profile-compile-here", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--warm-up-here", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.profile_compile_here:
        profile_compile(args.top, MIXES[args.mix])
        return
    if args.warm_up_here:
        profile_warm_up(MIXES[args.mix])
        return
    if args.compile:
        compile_child(args.top, "greedy" if args.mix == "all" else args.mix, args.warm_up)
        return
    for name in MIXES if args.mix == "all" else [args.mix]:
        bench(args.config, MIXES[name], args.hands, args.chunk)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
