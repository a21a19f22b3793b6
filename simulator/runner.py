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
import re
import select
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import numpy as np

from simulator import __version__, layout, rundir
from simulator import manifest as mf
from simulator.choices import Backend
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
from simulator.manifest import MANIFEST, MAX_CHUNKS, MAX_HANDS, part_name
from simulator.rules import RuleSet, load_rules, resolve_config_path
from simulator.schema import TABLES

DEFAULT_CHUNK_SIZE = 5_000
MAX_CHUNK_SIZE = 200_000     # a worker holds a whole chunk in memory
BACKENDS = get_args(Backend)  # ("loky", "dask")
LOCK_NAME = mf.LOCK_NAME
# atomic_write's temporaries in a variant's control directory
_TEMP_RE = re.compile(r"\.((hands|players|wins)\.part-\d+-\d+\.parquet|_manifest\.json|\.manifest\.backup\.json)"
                      r"\.\d+\.tmp\Z")
_WORKER_LOST = {"TerminatedWorkerError", "BrokenProcessPool", "KilledWorker"}  # loky, concurrent.futures, dask
WORKER_DIED = "a worker died (out of memory?) — rerun with --resume"


@dataclass(frozen=True)
class Variant:
    """One rule set to simulate, written to ``DIR/<table>/variant=<name>/`` (``simulator.layout``).

    ``source`` records where the rules came from (config reference, overrides) in the manifest; it does not
    affect the simulation, which depends only on ``rules``.
    """

    name: str
    rules: RuleSet
    source: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, config: str, overrides: list[str] | None = None, name: str | None = None) -> Variant:
        """A variant from a rule set reference and ``--set`` overrides, named after the rule set by default."""
        rules = load_rules(config, overrides or None)
        source = {"rules": config, "config": str(resolve_config_path(config)), "set": overrides or None}
        return cls(name=name or rules.name, rules=rules, source=source)


@dataclass(frozen=True)
class RunSpec:
    """How to simulate: the same for every variant of a run, which is what makes variants comparable."""

    hands: int
    seed: int = 0
    jobs: int | None = None          # None: all local CPUs (loky, local dask) or every worker of a scheduler
    chunk_size: int | None = None    # None: the existing run's, else DEFAULT_CHUNK_SIZE
    resume: bool = False
    backend: str = "loky"
    scheduler: str | None = None
    duplicate: bool = False
    progress: bool = True


@dataclass(frozen=True)
class ChunkResult:
    """What a worker sends back: the three Parquet files of one chunk, encoded, with their sizes and SHA-256."""

    variant: str
    first: int
    last: int
    blobs: dict[str, bytes]
    rows: dict[str, int]
    files: dict[str, dict[str, Any]]   # table -> {size, sha256}


@dataclass
class RunSummary:
    """Per variant: where it was written, how much of it this invocation ran, and which damaged chunks it
    re-simulated (one line per bad file)."""

    name: str
    path: Path
    hands: int
    hands_run: int
    rows: dict[str, int]
    seconds: float
    redone: list[str] = field(default_factory=list)
    played_run: int = 0  # hands actually played now (fewer than hands_run when sessions stop early)
    sessions: int | None = None  # whole sessions done, None without a session block
    notes: list[str] = field(default_factory=list)  # manifest restored from its backup, entries quarantined


# ---------------------------------------------------------------------------------------------------------
# Names and plans.

def variant_dir(out_dir: Path, name: str) -> Path:
    """The control directory of a variant (manifest, lock): ``DIR/_variants/variant=<name>``."""
    return layout.control_dir(out_dir, name)


def iter_chunks(hands: int, chunk_size: int) -> Iterator[tuple[int, int]]:
    """Inclusive hand-id ranges ``(0, C-1), (C, 2C-1), ...`` covering ``0..hands-1``, lazily."""
    return ((first, min(first + chunk_size, hands) - 1) for first in range(0, hands, chunk_size))


def plan_chunks(hands: int, chunk_size: int) -> list[tuple[int, int]]:
    """Inclusive hand-id ranges ``[(0, C-1), (C, 2C-1), ...]`` covering ``0..hands-1``."""
    return list(iter_chunks(hands, chunk_size))


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

def read_manifest(vdir: Path) -> dict:
    """The manifest of a variant directory (:func:`simulator.manifest.read`); :class:`RunError` when it is
    missing, unreadable or damaged."""
    try:
        return mf.read(vdir)
    except mf.ManifestError as exc:
        raise RunError(str(exc)) from None


def _recover_manifest(vdir: Path) -> tuple[dict, str | None]:
    """The manifest, or its intact backup when it is damaged (:func:`simulator.rundir.recover`)."""
    try:
        return rundir.recover(vdir)
    except mf.ManifestError as exc:
        raise RunError(str(exc)) from None


def _new_manifest(variant: Variant, spec: RunSpec, chunk_size: int) -> dict:
    return {
        "format": mf.FORMAT,
        "package": "xuezhan",
        "version": __version__,
        "variant": variant.name,
        "source": variant.source,
        "digest": variant.rules.digest(),
        "rules": variant.rules.resolved(),
        "seed": spec.seed,
        "duplicate": spec.duplicate,
        "hands": spec.hands,
        "chunk_size": chunk_size,
        "complete": False,
        "hands_done": 0,
        "rows": dict.fromkeys(TABLES, 0),
        "chunks": [],
    }




# ---------------------------------------------------------------------------------------------------------
# Phase 1: validate everything, write nothing.

def _validate_spec(spec: RunSpec, variants: Sequence[Variant]) -> None:
    if spec.hands <= 0:
        raise RunError(f"--hands must be positive, got {spec.hands}")
    if spec.hands > MAX_HANDS:
        raise RunError(f"--hands {spec.hands:,} is above the limit of {MAX_HANDS:,} hands per run")
    if spec.seed < 0 or spec.seed >= 2**63:
        raise RunError(f"--seed must be in 0..2^63-1, got {spec.seed}")
    if spec.jobs is not None and not 1 <= spec.jobs <= 4096:
        raise RunError(f"--jobs must be in 1..4096, got {spec.jobs}")
    if spec.chunk_size is not None and not 1 <= spec.chunk_size <= MAX_CHUNK_SIZE:
        raise RunError(f"--chunk-size must be in 1..{MAX_CHUNK_SIZE:,}, got {spec.chunk_size}")
    if spec.backend not in BACKENDS:
        raise RunError(f"--backend {spec.backend!r}: expected one of {', '.join(BACKENDS)}")
    if spec.scheduler is not None and spec.backend != "dask":
        raise RunError("--scheduler needs --backend dask")
    if spec.duplicate and spec.hands % 4:
        raise RunError(f"duplicate play needs a multiple of 4 hands (4 seatings per wall), got {spec.hands}")
    for v in variants:
        unit = session_unit(v, spec.duplicate)
        if spec.hands % unit:
            raise RunError(f"--hands {spec.hands:,}: variant {v.name!r} plays sessions of {v.rules.session.hands} "
                           f"hands{' in 4 seatings' if spec.duplicate else ''}; use a multiple of {unit}")
    names = [v.name for v in variants]
    for name in names:
        problem = layout.name_problem(name)
        if problem:
            raise RunError(problem)
        if len(name) > MAX_NAME:
            raise RunError(f"variant name {name[:40]!r}...: {len(name)} characters, at most {MAX_NAME}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise RunError(f"variant name {dup[0]!r} is used twice")


def session_unit(variant: Variant, duplicate: bool) -> int:
    """Hand ids per whole session (times 4 seatings under duplicate); 1 without sessions. Chunks and runs are
    multiples of it: a session never spans two chunks (simulator.sessions)."""
    sess = variant.rules.session
    return 1 if sess is None else sess.hands * (4 if duplicate else 1)


def _session_chunks(chunk_size: int, unit: int, vdir: Path) -> None:
    if chunk_size % unit:
        raise RunError(f"{vdir.name}: a chunk must hold whole sessions ({unit} hand ids each); chunks of "
                       f"{chunk_size} do not: use a --chunk-size that is a multiple of {unit}")


def _check_chunks(hands: int, chunk_size: int) -> None:
    n = -(-hands // chunk_size)
    if n > MAX_CHUNKS:
        raise RunError(f"--hands {hands:,} in chunks of {chunk_size:,} is {n:,} chunks, above the limit of "
                       f"{MAX_CHUNKS:,}: raise --chunk-size")


def _not_a_study(out_dir: Path) -> None:
    if (out_dir / rundir.STUDY_FILE).exists():
        raise RunError(f"{out_dir} holds a study ({rundir.STUDY_FILE}): one study per directory; simulate into "
                       "another --out, or continue the study with `xuezhan study ... --resume`")


@dataclass
class _Plan:
    variant: Variant
    vdir: Path
    chunk_size: int
    existing: dict | None                  # the manifest found, None for a fresh directory
    done: list[dict]                       # entries of finished chunks kept, verified, in hand-id order
    redone: list[str] = field(default_factory=list)  # damaged chunk files that will be re-simulated
    notes: list[str] = field(default_factory=list)   # manifest restored from its backup, entries quarantined


def _is_debris(p: Path) -> bool:
    """Our lock or a temporary."""
    return not p.is_dir() and (p.name == LOCK_NAME or bool(_TEMP_RE.match(p.name)))


def _own_files_only(vdir: Path) -> bool:
    """True when a control directory holds nothing but debris of a run killed before it wrote its manifest, and
    the variant's table directories are absent or empty."""
    tdirs = [layout.table_dir(vdir, t) for t in TABLES]
    return all(_is_debris(p) for p in vdir.iterdir()) and not any(d.is_dir() and any(d.iterdir()) for d in tdirs)


def _kept_chunks(manifest: dict, vdir: Path, spec_hands: int) -> tuple[list[dict], list[str]]:
    """Listed chunks still in the plan whose three files match their size, SHA-256 and row count; and one
    line per file that does not (its chunk is re-simulated)."""
    chunk_size = manifest["chunk_size"]
    bad = mf.bad_chunks(vdir, manifest, "full")
    kept, redone = [], []
    for i, c in enumerate(manifest["chunks"]):
        if c["last"] != min(c["first"] + chunk_size, spec_hands) - 1:
            continue  # a trailing partial chunk of a run being extended: redone as part of a full one
        if i in bad:
            redone += bad[i]
        else:
            kept.append(c)
    return kept, redone


def _compare(manifest: dict, variant: Variant, spec: RunSpec, vdir: Path) -> None:
    """Refuse to mix runs: another rule set, seed, mode or package version in the same directory."""
    digest = variant.rules.digest()
    if manifest["digest"] != digest:
        raise RunError(f"{vdir} holds rule set {manifest['digest'][:12]} ({manifest['variant']}), this run's rules "
                       f"are {digest[:12]}: refusing to mix them; choose another --out or --name")
    if manifest["seed"] != spec.seed:
        raise RunError(f"{vdir} was run with seed {manifest['seed']}, not {spec.seed}: refusing to mix seeds")
    if manifest["duplicate"] != spec.duplicate:
        raise RunError(f"{vdir} was run with duplicate={manifest['duplicate']}, not {spec.duplicate}")
    if manifest["version"] != __version__:
        raise RunError(f"{vdir} was written by xuezhan {manifest['version']}, this is {__version__}: "
                       "results may differ; choose another --out")
    if spec.chunk_size is not None and spec.chunk_size != manifest["chunk_size"]:
        raise RunError(f"{vdir} uses chunks of {manifest['chunk_size']} hands, not {spec.chunk_size}")
    if spec.hands < manifest["hands"]:
        raise RunError(f"{vdir} holds a run of {manifest['hands']} hands; --hands {spec.hands} would drop some")
    if not spec.resume:
        raise RunError(f"{vdir} already holds a run of this rule set ({manifest['hands_done']}/"
                       f"{manifest['hands']} hands done); pass --resume to continue it, or choose another --out")


def _inspect(vdir: Path, variant: Variant, spec: RunSpec) -> _Plan:
    """Decide what to do in a locked variant directory (fresh, resume, refuse); writes nothing."""
    unit = session_unit(variant, spec.duplicate)
    if _own_files_only(vdir):
        chunk_size = spec.chunk_size or -(-DEFAULT_CHUNK_SIZE // unit) * unit
        _session_chunks(chunk_size, unit, vdir)
        _check_chunks(spec.hands, chunk_size)
        return _Plan(variant, vdir, chunk_size, None, [])
    if not any((vdir / n).exists() for n in (MANIFEST, mf.LEGACY_MANIFEST, mf.BACKUP)):
        raise RunError(f"{vdir} (or its table directories <table>/{vdir.name}) is not empty and has no {MANIFEST}: "
                       "refusing to write there")
    manifest, note = _recover_manifest(vdir)
    _compare(manifest, variant, spec, vdir)
    chunk_size = manifest["chunk_size"]
    if spec.duplicate and chunk_size % 4:
        raise RunError(f"duplicate play needs a chunk size that is a multiple of 4, got {chunk_size}")
    _session_chunks(chunk_size, unit, vdir)
    _check_chunks(spec.hands, chunk_size)
    kept, redone = _kept_chunks(manifest, vdir, spec.hands)
    return _Plan(variant, vdir, chunk_size, manifest, kept, redone, [note] if note else [])


# ---------------------------------------------------------------------------------------------------------
# Phase 2: open the locked directories (clean up an interrupted run, write the manifest).

@dataclass
class _Run:
    plan: _Plan
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


def _clean(vdir: Path, done: list[dict]) -> list[str]:
    """Remove temporaries and part files not listed as done (interrupted writes, chunks re-planned or
    damaged); move anything else found in a table directory (a user's file, a directory) to ``_quarantine/``
    and return one line per entry moved. Called under the lock, on the listing made under it."""
    for p in vdir.iterdir():
        if p.is_file() and _TEMP_RE.match(p.name):
            p.unlink()
    ours, foreign = rundir.strays(vdir, {c["file"] for c in done})
    for p in ours:
        p.unlink()
    try:
        return rundir.quarantine(vdir, foreign, layout.run_of(vdir))
    except OSError as exc:
        raise RunError(f"cannot move {exc.filename} aside to {mf.QUARANTINE}/: {exc.strerror}") from None


def _clean_run(out_dir: Path) -> list[str]:
    """Move what is not a variant's partition directory out of ``DIR/<table>/`` (to ``DIR/_quarantine/``),
    under the run directory's lock; one line per entry moved."""
    try:
        return rundir.quarantine(out_dir, rundir.run_strays(out_dir)[0], out_dir)
    except OSError as exc:
        raise RunError(f"cannot move {exc.filename} aside to {mf.QUARANTINE}/: {exc.strerror}") from None


def _make_table_dirs(vdir: Path) -> None:
    try:
        for t in TABLES:
            layout.table_dir(vdir, t).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"cannot create {exc.filename or vdir}: {exc.strerror}") from None


def _open(plan: _Plan, spec: RunSpec) -> _Run:
    vdir = plan.vdir
    _make_table_dirs(vdir)
    plan.notes += _clean(vdir, plan.done)
    manifest = _new_manifest(plan.variant, spec, plan.chunk_size)
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
                raise RunError(WORKER_DIED) from None
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
            raise RunError(WORKER_DIED) from None
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
    _validate_spec(spec, variants)
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
                    _not_a_study(out_dir)
            plans = [_inspect(lock.vdir, v, spec) for lock, v in zip(locks[-len(variants):], variants, strict=True)]
            if spec.duplicate and any(p.chunk_size % 4 for p in plans):
                raise RunError("duplicate play needs a chunk size that is a multiple of 4")
            # the run may proceed: workers start and import the engine while this process warms up and opens
            preloaded = stack.enter_context(_preloading(spec, jobs, variants))
            from simulator.warmup import lineup_of, warm_up  # compile once here, before workers run (they load it)

            warm_up(spec.progress, sorted({lineup_of(v.rules) for v in variants}, reverse=True))  # "simple" first
            opened = True
            plans[0].notes += _clean_run(out_dir)
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
