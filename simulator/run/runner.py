"""Batch simulation: hand-id chunks run in parallel (joblib: loky or dask), written as Parquet with a manifest.

This module plans and executes a run (phase 1 validates everything and writes nothing, phase 3 runs the pending
chunks); the worker tasks are :mod:`simulator.run.worker`, opening a variant's directory and committing its
chunks :mod:`simulator.run.open`, the progress bars :mod:`simulator.run.progress`, the plans and manifests
:mod:`simulator.run.plan` (their names are re-exported here, where callers import them).

Layout of a run directory (documented for users in ``docs/logs.md``; paths: ``simulator.logs.layout``)::

    DIR/_variants/variant=<name>/_manifest.json             (simulator.logs.manifest: plan + checksums)
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

import itertools
import logging
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from simulator.logs import layout, rundir
from simulator.logs import manifest as mf
from simulator.logs.dirlock import (  # noqa: F401 - run_lock: this module's API too
    MAX_NAME,
    DirLock,
    RunError,
    check_out_dir,
    checkpoint,
    run_lock,
)
from simulator.logs.manifest import part_name as part_name
from simulator.run.open import OpenRun as OpenRun
from simulator.run.open import open_variant
from simulator.run.plan import (  # noqa: F401 - Variant, RunSpec, RunSummary, plan_chunks, read_manifest, BACKENDS, LOCK_NAME: this module's API too
    BACKENDS,
    DASK_MISSING,
    LOCK_NAME,
    RunSpec,
    RunSummary,
    Variant,
    clean_run,
    inspect_dir,
    not_a_study,
    plan_chunks,
    read_manifest,
    validate_spec,
    variant_dir,
)
from simulator.run.pool_watch import PoolWatch, kill_workers
from simulator.run.progress import progress_bars
from simulator.run.worker import preload, run_chunk
from simulator.run.worker import watch_parent as watch_parent

_WORKER_LOST = {"TerminatedWorkerError", "BrokenProcessPool", "KilledWorker"}  # loky, concurrent.futures, dask
WORKER_DIED = "a worker died (out of memory?) — rerun with --resume"
WORKER_DIED_BOTS = ("a worker died during a chunk with Python bots (a bot that ends its process, such as os._exit, "
                    "or out of memory) — fix the bot, then rerun with --resume")


def default_jobs() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


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
        raise RunError(DASK_MISSING) from None
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


def _interleave(runs: Sequence[OpenRun]) -> Iterator[tuple[OpenRun, int, int]]:
    """Chunk-major order, so that an interrupted study has roughly equal progress in every variant (lazy: a
    plan of millions of chunks is never held in memory)."""
    def stream(run: OpenRun) -> Iterator[tuple[OpenRun, int, int]]:  # binds its run (a bare genexp would bind the last)
        return ((run, first, last) for first, last in run.pending)

    for group in itertools.zip_longest(*map(stream, runs)):
        yield from (t for t in group if t is not None)


def _worker_lost(exc: BaseException) -> bool:
    return any(type(e).__name__ in _WORKER_LOST for e in (exc, exc.__cause__, exc.__context__) if e is not None)


def _worker_died() -> RunError:
    """A worker died, so the pool is broken: stop this process's other loky workers now, so that nothing (closing
    the pool, the interpreter's exit) waits on them. Finished chunks are durable; ``--resume`` redoes the rest."""
    kill_workers()
    return RunError(WORKER_DIED)


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


def _execute(runs: Sequence[OpenRun], spec: RunSpec, jobs: int, progress: Any, preloaded: Any = None) -> None:
    if not any(r.n_pending for r in runs):
        return
    python_bots = any(r.plan.variant.rules.python_seats() for r in runs)
    with _watched(spec, jobs, python_bots), _bot_reports(python_bots and not spec.scheduler) as reports:
        try:
            _execute_pending(runs, spec, jobs, progress, preloaded, reports)
        except RunError as exc:
            if str(exc) == WORKER_DIED and python_bots:  # what a bot's watchdog said before it ended the worker
                raise RunError(_bot_report(reports) or WORKER_DIED_BOTS) from None
            raise


@contextmanager
def _bot_reports(local: bool) -> Iterator[str | None]:
    """A private directory where a worker's bot watchdog writes its error line (:mod:`simulator.hands.ask`)
    before ending the worker; None without Python bots or with remote workers."""
    if not local:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="xuezhan-bots-") as tmp:
        yield tmp


def _bot_report(reports: str | None) -> str | None:
    """The first error line a bot watchdog wrote, None when none did."""
    found = sorted(Path(reports).glob("*.txt")) if reports else []
    return found[0].read_text(encoding="utf-8").strip() if found else None


def _one_worker(tasks: Iterator[tuple[Any, ...]]) -> Iterator[Any]:
    """``run_chunk`` over ``tasks`` in one loky worker process, one chunk at a time: ``--jobs 1`` with Python bots,
    which never run in the xuezhan process itself (a bot's ``os._exit(0)`` there would end the run with success,
    and a bot that swallows its time-out could only be stopped by ending the process)."""
    from joblib.externals.loky import get_reusable_executor

    executor = get_reusable_executor(max_workers=1)
    for args in tasks:
        yield executor.submit(run_chunk, *args).result()


@contextmanager
def _watched(spec: RunSpec, jobs: int, python_bots: bool = False) -> Iterator[None]:
    """Run the body with a :class:`PoolWatch` on the loky pool (a local pool of worker processes only)."""
    if spec.backend != "loky" or (jobs == 1 and not python_bots):
        yield
        return
    watch = PoolWatch()
    watch.start()
    try:
        yield
    except Exception as exc:
        if watch.broke and not isinstance(exc, RunError):
            raise _worker_died() from None
        raise
    finally:
        watch.stop()


def _execute_pending(runs: Sequence[OpenRun], spec: RunSpec, jobs: int, progress: Any, preloaded: Any,
                     reports: str | None = None) -> None:
    from joblib import Parallel, delayed

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
    tasks = ((r.plan.variant, first, last, spec.seed, spec.duplicate, parent, path, reports)
             for r, first, last in _interleave(runs))
    if python_bots and jobs == 1 and spec.backend == "loky":
        results = _one_worker(tasks)
    else:
        results = Parallel(n_jobs=jobs, return_as="generator_unordered")(delayed(run_chunk)(*t) for t in tasks)
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
    leaves nothing behind. ``study_locked``: the caller (:func:`simulator.run.study.simulate_study`) holds the lock of
    ``out_dir`` (:func:`run_lock`) and has checked its study; otherwise a directory holding a study is refused.
    Raises :class:`RunError` for bad arguments, conflicts with existing or concurrent runs, and a worker that
    died.
    """
    out_dir = Path(out_dir)
    validate_spec(spec, variants)
    check_out_dir(out_dir)
    old = layout.old_layout(out_dir)
    if old:
        raise RunError(f"{old}; or choose another --out")
    jobs = spec.jobs or (-1 if spec.scheduler else default_jobs())
    with ExitStack() as stack:
        locks = []
        opened = False
        try:
            for path in ([] if study_locked else [out_dir]) + [variant_dir(out_dir, v.name) for v in variants]:
                lock = DirLock(path)
                lock.acquire()
                locks.append(lock)
                stack.callback(lock.release)
                if path == out_dir:
                    not_a_study(out_dir)
            linked = rundir.link_lines(out_dir)  # refused before anything is inspected, moved or written
            if linked:
                raise RunError(linked[0] + (f" (+{len(linked) - 1} more)" if len(linked) > 1 else ""))
            plans = [inspect_dir(lock.vdir, v, spec) for lock, v in zip(locks[-len(variants):], variants, strict=True)]
            if spec.duplicate and any(p.chunk_size % 4 for p in plans):
                raise RunError("duplicate play needs a chunk size that is a multiple of 4")
            # the run may proceed: workers start and import the engine while this process warms up and opens
            preloaded = stack.enter_context(_preloading(spec, jobs, variants))
            from simulator.hands.warmup import (  # compile once here, before workers run (they load it)
                lineup_of,
                warm_up,
            )

            warm_up(spec.progress, sorted({lineup_of(v.rules) for v in variants}, reverse=True))  # "simple" first
            from simulator.run.tuned import stale_notes  # adapted players tuned on another expert: said, not refused

            for p in plans:
                p.stale = stale_notes(p.variant.rules)
            opened = True
            plans[0].notes += clean_run(out_dir)
            runs = [open_variant(p, spec) for p in plans]
        except BaseException:
            if not opened:
                for lock in reversed(locks):
                    lock.undo()
            raise
        start = time.perf_counter()
        stack.enter_context(_backend(spec, jobs))
        progress = stack.enter_context(progress_bars(runs, spec))
        _execute(runs, spec, jobs, progress, preloaded)
    short = [r for r in runs if not r.manifest["complete"]]
    if short:  # a run that did not finish never reports success (a worker that exited quietly, ...)
        r = short[0]
        raise RunError(f"{r.plan.vdir}: stopped at {r.manifest['hands_done']:,} of {r.manifest['hands']:,} hands "
                       "without an error from the workers; rerun with --resume")
    _check_whole(out_dir, runs)
    wall = time.perf_counter() - start
    return [RunSummary(r.plan.variant.name, r.plan.vdir, r.manifest["hands_done"], r.hands_run,
                       dict(r.manifest["rows"]), wall, r.plan.redone, r.played_run,
                       None if r.plan.variant.rules.session is None
                       else r.manifest["hands_done"] // r.plan.variant.rules.session.hands, r.plan.notes,
                       r.plan.stale)
            for r in runs]


def _check_whole(out_dir: Path, runs: Sequence[OpenRun]) -> None:
    """Never report success on a run that is not whole: every file the manifests list is in place, of its size,
    and no link has appeared (a fast check, no file is read)."""
    linked = rundir.link_lines(out_dir)
    bad = [line for r in runs for lines in mf.bad_chunks(r.plan.vdir, r.manifest, "sizes").values()
           for line in lines]
    if linked or bad:
        raise RunError(f"{out_dir}: the run is not whole after simulating ({(linked + bad)[0]}); `xuezhan verify "
                       f"{out_dir}` lists every problem")


def simulate(variant: Variant, out_dir: Path | str, spec: RunSpec) -> RunSummary:
    """Simulate one variant (``xuezhan simulate``); see :func:`run_variants`."""
    return run_variants(out_dir, [variant], spec)[0]
