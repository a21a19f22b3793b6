"""The runner's worker tasks, run in the loky (or dask) worker processes: :func:`run_chunk` plays one chunk of hand
ids and returns its three Parquet files as bytes, :func:`preload` imports the engine ahead of the first chunk, and
:func:`watch_parent` ends a local worker when the ``xuezhan`` process that started it dies. Imported by the
workers without the rest of the runner.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from collections.abc import Sequence

import numpy as np

from simulator import __version__
from simulator.logs import manifest as mf
from simulator.logs.encode import check_chunk, encode_tables, parquet_bytes
from simulator.logs.schema import LOG_FORMAT
from simulator.rules import RuleSet
from simulator.run.plan import ChunkResult, Variant


def run_chunk(variant: Variant, first: int, last: int, seed: int, duplicate: bool,
              parent: int | None = None, import_path: tuple[str, ...] = (),
              bot_report: str | None = None) -> ChunkResult:
    """Worker task: play hands ``first..last`` and return their three Parquet files as bytes.

    ``parent``: pid of the local process that submitted the task; the worker exits when it dies (a killed
    ``xuezhan`` must not leave idle workers holding memory). None for remote (dask scheduler) workers.
    ``import_path``: the submitting process's ``sys.path``, put first in a local worker's, so that a Python bot's
    module imports there as it does in the parent (a reused worker may have started before it was on the path).
    ``bot_report``: where a Python bot that outlives its time-out is reported before its worker ends
    (:func:`simulator.hands.ask.watch_bots`; the runner always plays Python bots in a worker process)."""
    from simulator.hands import run_batch  # imported in the worker: numba-compiled, heavy
    from simulator.logs.records import to_columns

    if parent is not None:
        watch_parent(parent)
    if variant.rules.python_seats() and os.getpid() != parent:  # never in the xuezhan process itself
        from simulator.hands.ask import watch_bots

        watch_bots(bot_report)
    for entry in reversed(import_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    ids = np.arange(first, last + 1, dtype=np.int64)
    sess = variant.rules.session
    # play_hands without its string columns: codes go straight into the dictionary arrays.
    if sess is None:
        raw = run_batch(variant.rules, ids, seed, duplicate=duplicate)
    else:
        from simulator.hands.sessions import run_sessions

        raw = run_sessions(variant.rules, ids, seed, duplicate=duplicate)
    meta = {"variant": variant.name, "digest": variant.rules.digest(), "seed": seed, "duplicate": duplicate,
            "version": __version__, "log_format": LOG_FORMAT}
    tables = encode_tables(to_columns(raw, encoded=True), meta)
    check_chunk(tables, ids, sess is not None and sess.stop_when_broke)
    blobs = {name: parquet_bytes(t) for name, t in tables.items()}
    rows = {name: t.num_rows for name, t in tables.items()}
    return ChunkResult(variant.name, first, last, blobs, rows, {t: mf.file_info(b) for t, b in blobs.items()})


_WATCHED: set[int] = set()


def watch_parent(pid: int) -> None:
    """Exit this (worker) process as soon as process ``pid`` ends; started once per process.

    Linux: a pidfd becomes readable when the process exits (no polling, no pid-reuse race); elsewhere the
    process is polled every second. Called from :func:`run_chunk`, so it also covers an idle worker."""
    if pid in _WATCHED or pid == os.getpid():
        return
    _WATCHED.add(pid)

    def wait() -> None:
        try:
            fd = os.pidfd_open(pid)
            select.select([fd], [], [])
        except (AttributeError, OSError):  # no pidfd (not Linux, old kernel) or the process is already gone
            while True:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
                time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=wait, name="xuezhan-parent-watch", daemon=True).start()


def preload(parent: int | None = None, rules: Sequence[RuleSet] = ()) -> None:
    """Worker task: import what :func:`run_chunk` needs (the engine, numba, pyarrow: about a second per worker)
    while the parent is still preparing (warm-up, manifests) and, when the numba cache already holds the engine
    for a rule set's line-up, load it by playing one hand (a few tenths of a second more). A cold cache is left
    alone: the parent compiles it, once (``simulator.hands.warmup``)."""
    if parent is not None:
        watch_parent(parent)
    from simulator.hands import run_batch
    from simulator.hands.warmup import cache_is_warm, lineup_of
    from simulator.logs.records import to_columns

    one_per_lineup = {lineup_of(r): r for r in rules if r.session is None}
    for lineup, r in one_per_lineup.items():
        if cache_is_warm(lineup):
            to_columns(run_batch(r, np.zeros(1, np.int64), 0), encoded=True)
