"""Batch simulation: hand-id chunks run in parallel (joblib: loky or dask), written as Parquet with a manifest.

Layout of a run directory (documented for users in ``docs/logs.md``; paths: ``simulator.layout``)::

    DIR/_variants/variant=<name>/_manifest.json             (simulator.manifest: plan + checksums)
    DIR/{hands,players,wins}/variant=<name>/part-<first>-<last>.parquet

Determinism: a chunk's rows depend only on (rules, hand ids, seed, duplicate), because ``play_hands`` seeds every
deal from ``SeedSequence(seed, spawn_key=(deal_id,))``; a file's bytes depend only on its rows, because the
writer options are fixed, categorical dictionaries are fixed and nothing time-dependent is written. So the
output is byte-identical whatever the number of jobs, the backend or the order in which chunks finish, and a
resumed run equals an uninterrupted one.

Integrity: the output directory is locked before it is inspected, cleaned or written, so two runs can never
both believe they own it, and nothing is deleted that was not listed under the lock. Workers return finished
Parquet bytes with their size and SHA-256; the parent writes each file under a hidden temporary name in the
variant's control directory (never inside a table directory, which readers scan), fsyncs it and renames it into place,
then records the chunk in the manifest. A kill at any moment leaves complete files plus hidden temporaries; a
resume checks every listed chunk against its checksums (re-simulating, and naming, any that fail), deletes
temporaries and unlisted part files, and redoes the chunks that are not done.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import os
import select
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simulator import __version__, layout, rundir
from simulator import manifest as mf
from simulator.dirlock import (  # noqa: F401 - run_lock: this module's API too
    MAX_NAME,
    RunError,
    _check_out_dir,
    _checkpoint,
    _DirLock,
    run_lock,
)
from simulator.encode import check_chunk, encode_tables, parquet_bytes
from simulator.files import atomic_write
from simulator.manifest import part_name
from simulator.rules import RuleSet
from simulator.runplan import (  # noqa: F401 - Variant, RunSpec, RunSummary, plan_chunks, read_manifest, BACKENDS, LOCK_NAME: this module's API too
    BACKENDS,
    LOCK_NAME,
    ChunkResult,
    Plan,
    RunSpec,
    RunSummary,
    Variant,
    clean_run,
    clean_variant,
    inspect_dir,
    iter_chunks,
    make_table_dirs,
    new_manifest,
    not_a_study,
    plan_chunks,
    read_manifest,
    validate_spec,
    variant_dir,
)

_WORKER_LOST = {"TerminatedWorkerError", "BrokenProcessPool", "KilledWorker"}  # loky, concurrent.futures, dask
WORKER_DIED = "a worker died (out of memory?) — rerun with --resume"










# ---------------------------------------------------------------------------------------------------------
# Names and plans.







def default_jobs() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def run_chunk(variant: Variant, first: int, last: int, seed: int, duplicate: bool,
              parent: int | None = None, import_path: tuple[str, ...] = ()) -> ChunkResult:
    """Worker task: play hands ``first..last`` and return their three Parquet files as bytes.

    ``parent``: pid of the local process that submitted the task; the worker exits when it dies (a killed
    ``xuezhan`` must not leave idle workers holding memory). None for remote (dask scheduler) workers.
    ``import_path``: the submitting process's ``sys.path``, put first in a local worker's, so that a Python bot's
    module imports there as it does in the parent (a reused worker may have started before it was on the path)."""
    from simulator.hands import run_batch  # imported in the worker: numba-compiled, heavy
    from simulator.records import to_columns

    if parent is not None:
        watch_parent(parent)
    for entry in reversed(import_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    ids = np.arange(first, last + 1, dtype=np.int64)
    sess = variant.rules.session
    # play_hands without its string columns: codes go straight into the dictionary arrays.
    if sess is None:
        raw = run_batch(variant.rules, ids, seed, duplicate=duplicate)
    else:
        from simulator.sessions import run_sessions

        raw = run_sessions(variant.rules, ids, seed, duplicate=duplicate)
    meta = {"variant": variant.name, "digest": variant.rules.digest(), "seed": seed, "duplicate": duplicate,
            "version": __version__}
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


# ---------------------------------------------------------------------------------------------------------
# Files: atomic writes, manifest, lock.









# ---------------------------------------------------------------------------------------------------------
# Phase 1: validate everything, write nothing.























# ---------------------------------------------------------------------------------------------------------
# Phase 2: open the locked directories (clean up an interrupted run, write the manifest).

@dataclass
class _Run:
    plan: Plan
    manifest: dict
    pending: Iterable[tuple[int, int]]
    n_pending: int
    hands_run: int = 0
    played_run: int = 0
    _dirty: bool = False
    _last_write: float = 0.0
    _write_cost: float = 0.0

    def commit(self, res: ChunkResult) -> None:
        """Make a finished chunk durable: its files first, then the manifest entry that lists it.

        The manifest is rewritten after a chunk unless the last rewrite was recent relative to its own cost
        (at most ~10% of the time goes to rewriting, however long the chunk list); a chunk finished but not yet
        listed when the run is killed is simply redone by ``--resume``."""
        name = part_name(res.first, res.last)
        written: list[Path] = []
        try:
            for table, blob in res.blobs.items():
                written.append(layout.table_dir(self.plan.vdir, table) / name)
                atomic_write(written[-1], blob, tmp_dir=self.plan.vdir, tag=table)
        except BaseException as exc:
            # Ctrl-C/SIGTERM or a write error between a chunk's files: leave no unlisted part file behind.
            for path in written:
                path.unlink(missing_ok=True)
            if isinstance(exc, OSError):  # disk full, directory removed under us, ...
                raise self._write_error(exc) from None
            raise
        self._dirty = True
        entry = mf.chunk_entry(res.first, res.last, res.rows, res.files)
        bisect.insort(self.manifest["chunks"], entry, key=lambda c: c["first"])
        self.hands_run += res.last - res.first + 1
        self.played_run += res.rows["hands"]
        if time.monotonic() - self._last_write >= 10 * self._write_cost:
            self.write_manifest()

    def write_manifest(self) -> None:
        start = time.monotonic()
        mf.refresh_totals(self.manifest)
        try:
            rundir.write_manifest(self.plan.vdir, self.manifest)
        except OSError as exc:
            raise self._write_error(exc) from None
        self._dirty = False
        self._last_write = time.monotonic()
        self._write_cost = self._last_write - start

    def _write_error(self, exc: OSError) -> RunError:
        return RunError(f"cannot write {exc.filename or self.plan.vdir}: {exc.strerror}; finished chunks are "
                        "kept, rerun with --resume")








def _open(plan: Plan, spec: RunSpec) -> _Run:
    vdir = plan.vdir
    make_table_dirs(vdir)
    plan.notes += clean_variant(vdir, plan.done)
    manifest = new_manifest(plan.variant, spec, plan.chunk_size)
    if plan.existing is not None:
        manifest["source"] = plan.existing.get("source", manifest["source"])
    manifest["chunks"] = list(plan.done)
    done = {c["first"] for c in plan.done}
    pending = (c for c in iter_chunks(spec.hands, plan.chunk_size) if c[0] not in done)
    n_pending = -(-spec.hands // plan.chunk_size) - len(done)
    run = _Run(plan, manifest, pending, n_pending)
    run.write_manifest()
    return run


# ---------------------------------------------------------------------------------------------------------
# Phase 3: run the pending chunks.

@contextmanager
def _backend(spec: RunSpec, jobs: int) -> Iterator[None]:
    """joblib's loky backend as is; or a dask.distributed Client (at --scheduler, else a LocalCluster)."""
    if spec.backend == "loky":
        yield
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise RunError("--backend dask needs the dask extra: pip install 'xuezhan[dask]'") from None
    from joblib import parallel_config

    with ExitStack() as stack:
        try:
            if spec.scheduler:
                client = stack.enter_context(Client(spec.scheduler, timeout="10s"))
            else:
                cluster = stack.enter_context(LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                                           dashboard_address=None, silence_logs=logging.ERROR))
                client = stack.enter_context(Client(cluster))
        except (OSError, TimeoutError, ValueError) as exc:
            where = spec.scheduler or "a local cluster"
            raise RunError(f"cannot start dask on {where}: {str(exc).splitlines()[0]}") from None
        stack.enter_context(parallel_config(backend="dask", client=client))
        yield


def _interleave(runs: Sequence[_Run]) -> Iterator[tuple[_Run, int, int]]:
    """Chunk-major order, so that an interrupted study has roughly equal progress in every variant (lazy: a
    plan of millions of chunks is never held in memory)."""
    def stream(run: _Run) -> Iterator[tuple[_Run, int, int]]:  # binds its run (a bare genexp would bind the last)
        return ((run, first, last) for first, last in run.pending)

    for group in itertools.zip_longest(*map(stream, runs)):
        yield from (t for t in group if t is not None)


def _worker_lost(exc: BaseException) -> bool:
    return any(type(e).__name__ in _WORKER_LOST for e in (exc, exc.__cause__, exc.__context__) if e is not None)


def _worker_died() -> RunError:
    """A worker died, so the pool is broken: stop this process's other loky workers now, so that nothing (closing
    the pool, the interpreter's exit) waits on them. Finished chunks are durable; ``--resume`` redoes the rest."""
    import multiprocessing

    for p in multiprocessing.active_children():
        if type(p).__name__ == "LokyProcess":
            p.kill()
    return RunError(WORKER_DIED)


def preload(parent: int | None = None, rules: Sequence[RuleSet] = ()) -> None:
    """Worker task: import what :func:`run_chunk` needs (the engine, numba, pyarrow: about a second per worker)
    while the parent is still preparing (warm-up, manifests) and, when the numba cache already holds the engine
    for a rule set's line-up, load it by playing one hand (a few tenths of a second more). A cold cache is left
    alone: the parent compiles it, once (``simulator.warmup``)."""
    if parent is not None:
        watch_parent(parent)
    from simulator.hands import run_batch
    from simulator.records import to_columns
    from simulator.warmup import cache_is_warm, lineup_of

    one_per_lineup = {lineup_of(r): r for r in rules if r.session is None}
    for lineup, r in one_per_lineup.items():
        if cache_is_warm(lineup):
            to_columns(run_batch(r, np.zeros(1, np.int64), 0), encoded=True)


@contextmanager
def _preloading(spec: RunSpec, jobs: int, variants: Sequence[Variant]) -> Iterator[Any]:
    """Start the loky workers now, each importing the engine (:func:`preload`), and yield the pending results;
    :func:`_execute` waits for them before it submits chunks to the same (reused) workers. Yields None when
    there is nothing to start: dask (started later, only when the run may proceed) or a single job (joblib
    then runs in this process)."""
    if spec.backend != "loky" or jobs == 1 or not spec.hands:
        yield None
        return
    from joblib import Parallel, delayed

    rules = [v.rules for v in variants]
    if any(r.python_seats() for r in rules):
        # A reused loky worker has the import path of the run that started it: a Python bot's module (and the
        # rule set naming it, unpickled before any task code runs) would not import there. Start fresh ones.
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    pending = Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(preload)(os.getpid(), rules) for _ in range(jobs))
    try:
        yield pending
        _drain(pending)  # nothing to run (a finished run resumed): let the workers finish importing
    except Exception:
        _drain(pending)  # aborting loky mid-dispatch can print a manager-thread traceback: wait instead
        raise
    finally:
        with warnings.catch_warnings():  # Ctrl-C: closed unconsumed, joblib would warn in several lines
            warnings.simplefilter("ignore", UserWarning)
            pending.close()


def _drain(pending: Any) -> None:
    """Wait for the preload tasks (their errors surface, if at all, when chunks are run)."""
    try:
        for _ in pending:
            pass
    except Exception:  # noqa: S110 - a lost worker is reported by the chunks that need it
        pass


def _execute(runs: Sequence[_Run], spec: RunSpec, jobs: int, progress: Any, preloaded: Any = None) -> None:
    from joblib import Parallel, delayed

    if not any(r.n_pending for r in runs):
        return
    if preloaded is not None:
        try:
            for _ in preloaded:  # the workers are up, the engine imported: chunks go to the same workers
                pass
        except Exception as exc:
            if _worker_lost(exc):
                raise _worker_died() from None
            raise
    by_name = {r.plan.variant.name: r for r in runs}
    parent = None if spec.scheduler else os.getpid()  # remote workers do not watch a local pid
    python_bots = any(r.plan.variant.rules.python_seats() for r in runs)
    path = tuple(sys.path) if python_bots and parent is not None else ()
    results = Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(run_chunk)(r.plan.variant, first, last, spec.seed, spec.duplicate, parent, path)
        for r, first, last in _interleave(runs))
    try:
        for res in results:
            by_name[res.variant].commit(res)
            progress.advance(res.variant, res.last - res.first + 1)
    except Exception as exc:
        if _worker_lost(exc):
            raise _worker_died() from None
        raise
    finally:
        # On Ctrl-C joblib warns, in several lines, that running tasks were cancelled; finished chunks are
        # already durable and the CLI says how to resume, so close the generator quietly.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            results.close()
        for r in runs:
            if r._dirty:
                r.write_manifest()
        if python_bots and spec.backend == "loky":
            # loky reuses its workers across runs: one that imported a Python bot keeps that version of its module,
            # so the next run (the bot edited in a notebook, say) starts from fresh workers
            from joblib.externals.loky import get_reusable_executor

            get_reusable_executor().shutdown(wait=True)


def run_variants(out_dir: Path | str, variants: Sequence[Variant], spec: RunSpec, *,
                 study_locked: bool = False) -> list[RunSummary]:
    """Simulate every variant on the same hand ids and seed into ``out_dir/<table>/variant=<name>/``.

    ``out_dir`` itself is locked first (one run at a time in a directory), then every variant directory before
    it is inspected; all arguments and directories are checked before anything is written, so a refused run
    leaves nothing behind. ``study_locked``: the caller (:func:`simulator.study.run_study`) holds the lock of
    ``out_dir`` (:func:`run_lock`) and has checked its study; otherwise a directory holding a study is refused.
    Raises :class:`RunError` for bad arguments, conflicts with existing or concurrent runs, and a worker that
    died.
    """
    out_dir = Path(out_dir)
    validate_spec(spec, variants)
    _check_out_dir(out_dir)
    old = layout.old_layout(out_dir)
    if old:
        raise RunError(f"{old}; or choose another --out")
    jobs = spec.jobs or (-1 if spec.scheduler else default_jobs())
    with ExitStack() as stack:
        locks = []
        opened = False
        try:
            for path in ([] if study_locked else [out_dir]) + [variant_dir(out_dir, v.name) for v in variants]:
                lock = _DirLock(path)
                lock.acquire()
                locks.append(lock)
                stack.callback(lock.release)
                if path == out_dir:
                    not_a_study(out_dir)
            plans = [inspect_dir(lock.vdir, v, spec) for lock, v in zip(locks[-len(variants):], variants, strict=True)]
            if spec.duplicate and any(p.chunk_size % 4 for p in plans):
                raise RunError("duplicate play needs a chunk size that is a multiple of 4")
            # the run may proceed: workers start and import the engine while this process warms up and opens
            preloaded = stack.enter_context(_preloading(spec, jobs, variants))
            from simulator.warmup import lineup_of, warm_up  # compile once here, before workers run (they load it)

            warm_up(spec.progress, sorted({lineup_of(v.rules) for v in variants}, reverse=True))  # "simple" first
            opened = True
            plans[0].notes += clean_run(out_dir)
            runs = [_open(p, spec) for p in plans]
        except BaseException:
            if not opened:
                for lock in reversed(locks):
                    lock.undo()
            raise
        start = time.perf_counter()
        stack.enter_context(_backend(spec, jobs))
        progress = stack.enter_context(_progress(runs, spec))
        _execute(runs, spec, jobs, progress, preloaded)
    short = [r for r in runs if not r.manifest["complete"]]
    if short:  # a run that did not finish never reports success (a worker that exited quietly, ...)
        r = short[0]
        raise RunError(f"{r.plan.vdir}: stopped at {r.manifest['hands_done']:,} of {r.manifest['hands']:,} hands "
                       "without an error from the workers; rerun with --resume")
    wall = time.perf_counter() - start
    return [RunSummary(r.plan.variant.name, r.plan.vdir, r.manifest["hands_done"], r.hands_run,
                       dict(r.manifest["rows"]), wall, r.plan.redone, r.played_run,
                       None if r.plan.variant.rules.session is None
                       else r.manifest["hands_done"] // r.plan.variant.rules.session.hands, r.plan.notes)
            for r in runs]


def simulate(variant: Variant, out_dir: Path | str, spec: RunSpec) -> RunSummary:
    """Simulate one variant (``xuezhan simulate``); see :func:`run_variants`."""
    return run_variants(out_dir, [variant], spec)[0]


# ---------------------------------------------------------------------------------------------------------
# Progress display (rich, on stderr).

class _Quiet:
    def advance(self, name: str, hands: int) -> None:
        pass


class _RichProgress:
    """One bar per variant: hands done / total, hands/s and ETA."""

    def __init__(self, runs: Sequence[_Run]) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class HandsPerSecond(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("– hands/s" if speed is None else f"{speed:,.0f} hands/s")

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 HandsPerSecond(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=False)
        self.tasks = {r.plan.variant.name: self.progress.add_task(r.plan.variant.name, total=r.manifest["hands"],
                                                                  completed=r.manifest["hands_done"])
                      for r in runs}

    def advance(self, name: str, hands: int) -> None:
        self.progress.advance(self.tasks[name], hands)


@contextmanager
def _progress(runs: Sequence[_Run], spec: RunSpec) -> Iterator[Any]:
    if not spec.progress:
        yield _Quiet()
        return
    bars = _RichProgress(runs)
    with bars.progress:
        yield bars
