"""Compile the engine once, in the parent process, before any worker starts.

numba compiles on first call and caches the machine code on disk (``cache=True``). Without this step every
loky/dask worker of a cold run compiles the same functions at the same time, each taking as long as one
compilation alone would on a quiet core. :func:`warm_up` runs one tiny batch here first: a cold cache is
compiled (and written) once, and the workers then only load it. The one-time wait is announced, so that a
first run does not look hung, and it happens before the progress bars start, so their rate and ETA measure
simulation only.
"""

from __future__ import annotations

import gc
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

LOG = logging.getLogger("xuezhan.compile")  # the one-time compile notices (docs/internals.md, "Logging")
_warm: set[str] = set()  # line-ups this process has already run (nothing left to compile or load)
_busy = False  # a warm-up is compiling in this process (its own play_hands call must not start another)


def cache_location() -> Path:
    """Where numba keeps the engine's compiled code: ``$NUMBA_CACHE_DIR`` or the package's ``__pycache__``."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "engine" / "__pycache__"


def lineup_of(rules) -> str:
    """``"simple"`` when the engine runs ``rules`` without parameterised bots (see simulator.bots), else
    ``"full"``: the two compiled copies of the loop, each compiled (and cached) on first use."""
    from simulator.hands.compiled_rules import CompiledTable

    return "simple" if CompiledTable.of(rules).simple and not rules.python_seats() else "full"


def cache_is_warm(lineup: str = "simple") -> bool:
    """True when the suit table and the compiled batch function for ``lineup`` are both cached on disk."""
    from simulator import numba_cache
    from simulator.hands import precompile
    from simulator.kernel import tables

    (batch, sig), = precompile.batch_plan(lineup == "simple")
    return tables.table_path().is_file() and numba_cache.is_cached(batch, sig)


def warm_up(progress: bool = True, lineups=("simple",)) -> float:
    """Compile (or load) every compiled function a worker runs for each line-up of ``lineups`` (``"simple"``,
    ``"full"``; see :func:`lineup_of`), in this process; returns the seconds spent.

    Cheap when the cache is warm (nothing is compiled or loaded here: the workers load it themselves). When it
    is cold, says so before and after (logger ``xuezhan.compile`` at WARNING, so that it shows without any logging
    set-up: a silent minute looks hung, from the CLI's ``--quiet`` as from Python), and compiles: about half a
    minute per line-up on a quiet core. ``progress`` is kept for callers; the notice does not depend on it.
    """
    if _busy:
        return 0.0
    cold = [lu for lu in dict.fromkeys(lineups) if lu not in _warm and not cache_is_warm(lu)]
    if not cold:
        return 0.0  # (the disk check costs 0.3 ms: cheap before each play_hands call)
    from simulator import engine
    from simulator.kernel import tables

    start = time.perf_counter()
    # logged, not printed: shown on stderr when nothing is configured (logging's last resort takes WARNING), in a
    # notebook's cell, through the CLI's handler; silenced or captured like any library's log
    LOG.warning("compiling the engine (one time, cached in %s and %s) …", cache_location(), tables.cache_dir())
    _compile_all(engine, tables, cold)
    LOG.warning("compiled in %.0f s; later runs start at once", time.perf_counter() - start)
    return time.perf_counter() - start


def announce(rules) -> None:
    """Before a Python entry point (``play_hands``, ``record_hand``, the RL env) first runs the engine on
    ``rules``: compile it here with the notice of :func:`warm_up` if the cache is cold, instead of silently."""
    warm_up(progress=True, lineups=(lineup_of(rules),))


def _compile_all(engine, tables, lineups) -> None:
    global _busy
    _busy = True
    gc.freeze()  # what the process holds already (a CLI's polars, pyarrow, …) is not re-scanned by every collection
    try:
        for lineup in lineups:
            _run_once(engine, tables, lineup == "simple")
            _warm.add(lineup)
    finally:
        _busy = False
        gc.unfreeze()


_SIDE = ("from simulator.hands import precompile; from simulator.kernel import tables; tables.suit_table(); "
         "precompile.precompile_side({simple})")


def _run_once(engine, tables, simple: bool = True) -> None:
    """One hand through the whole path a worker takes (table, seeds, engine, log columns) for one line-up.

    Two processes share a cold compilation: a child builds the suit table and compiles the bots, the setup steps,
    the discard turn and the end of the hand (:func:`simulator.hands.precompile.precompile_side`) while this one
    compiles the functions the loop calls with constants, the settlement, the own turn and the deal
    (``precompile_core``); when the child says its half is cached this one compiles the batch (loading the child's half
    from the cache) while the child compiles the log columns and the seeds. If the child fails, this one compiles
    everything."""
    from simulator import hands
    from simulator.hands import precompile
    from simulator.rules import load_rules

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
    try:
        side = subprocess.Popen([sys.executable, "-c", _SIDE.format(simple=simple)], env=env, text=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        side = None
    try:
        precompile.precompile_core(simple)
        if side is not None:
            wait_ready(side)
        precompile.precompile_batch(simple)
    finally:
        if side is not None:
            side.stdout.close()
            side.wait()
    tables.suit_table()
    seats = ["greedy"] * 4 if simple else ["expert", "value", "defensive", "greedy"]
    rules = load_rules("chengdu", {"seats": seats})
    hands.play_hands(rules, np.zeros(1, np.int64), 0, record=True)
    sys.stderr.flush()


def wait_ready(side: subprocess.Popen) -> None:
    """Block until the warm-up's child prints :data:`simulator.hands.precompile.READY` (or ends, having failed)."""
    from simulator.hands import precompile

    for line in side.stdout:
        if line.strip() == precompile.READY:
            return


def play_hands(rules, hand_ids, seed: int, *, duplicate: bool = False, record: bool = False) -> dict:
    """:func:`simulator.hands.play_hands` for a Python user (``xuezhan.play_hands``): a cold cache is compiled
    first with the notice of :func:`warm_up` (a minute or more), as ``xuezhan simulate`` does, not silently."""
    from simulator import hands

    announce(rules)
    return hands.play_hands(rules, hand_ids, seed, duplicate=duplicate, record=record)
