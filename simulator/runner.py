"""Batch simulation: hand-id chunks run in parallel (joblib: loky or dask), written as Parquet with a manifest.

Layout of a run directory (documented for users in ``docs/logs.md``)::

    DIR/variant=<name>/manifest.json
    DIR/variant=<name>/{hands,players,wins}/part-<first>-<last>.parquet

Determinism: a chunk's rows depend only on (rules, hand ids, seed, duplicate), because ``play_hands`` seeds every
deal from ``SeedSequence(seed, spawn_key=(deal_id,))``; a file's bytes depend only on its rows, because the
writer options are fixed, categorical dictionaries are fixed and nothing time-dependent is written. So the
output is byte-identical whatever the number of jobs, the backend or the order in which chunks finish, and a
resumed run equals an uninterrupted one.

Durability: workers return finished Parquet bytes; the parent writes each file under a hidden temporary name,
fsyncs it and renames it into place, then rewrites the manifest the same way. A kill at any moment leaves
complete files plus hidden temporaries; a resume deletes the temporaries and any part file the manifest does
not list as done, and redoes the chunks that are not done.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from simulator import __version__
from simulator.errors import UserError
from simulator.rules import BOTS, EXCHANGES, HAND_TYPES, RuleSet, load_rules, resolve_config_path
from simulator.schema import TABLES
from simulator.tiles import N_KINDS, tile_str

DEFAULT_CHUNK_SIZE = 5_000
BACKENDS = ("loky", "dask")
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
_MANIFEST_KEYS = {"version", "variant", "digest", "rules", "seed", "duplicate", "hands", "chunk_size", "hands_done",
                  "chunks"}
LOCK_NAME = ".lock"
# Fixed writer options: the bytes of a file must not depend on library defaults changing under us.
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd", "compression_level": 3, "version": "2.6", "data_page_version": "1.0",
    "use_dictionary": True, "write_statistics": True, "row_group_size": 1 << 20,
}
WIN_KINDS = ("discard", "self_draw", "rob_kong")
# Fixed dictionaries of the categorical columns: every file carries the same dictionary in the same order, so
# files concatenate without re-encoding, and a value outside it is an engine bug caught at write time.
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "exchange": tuple(e for e in EXCHANGES if e != "random"),  # the direction actually used
    "bot": BOTS,
    "void_suit": ("m", "p", "s"),
    "win_kind": WIN_KINDS,
    "kind": WIN_KINDS,
    "hand_type": HAND_TYPES,
    "tile": tuple(tile_str(k) for k in range(N_KINDS)),
}
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")
_PART_RE = re.compile(r"part-\d+-\d+\.parquet\Z")
_TEMP_RE = re.compile(r"\.(part-\d+-\d+\.parquet|manifest\.json)\.\d+\.tmp\Z")  # atomic_write's temporaries


class RunError(UserError):
    """A simulation that cannot start or continue as asked (bad argument, output directory conflict)."""


@dataclass(frozen=True)
class Variant:
    """One rule set to simulate, written to ``DIR/variant=<name>/``.

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
    """What a worker sends back: the three Parquet files of one chunk, already encoded."""

    variant: str
    first: int
    last: int
    blobs: dict[str, bytes]
    rows: dict[str, int]


@dataclass
class RunSummary:
    """Per variant: where it was written and how much of it this invocation ran."""

    name: str
    path: Path
    hands: int
    hands_run: int
    rows: dict[str, int]
    seconds: float


# ---------------------------------------------------------------------------------------------------------
# Names and plans.

def part_name(first: int, last: int) -> str:
    """File name of the chunk of hand ids ``first..last`` (inclusive); zero-padded so names sort by hand id."""
    return f"part-{first:010d}-{last:010d}.parquet"


def variant_dir(out_dir: Path, name: str) -> Path:
    return Path(out_dir) / f"variant={name}"


def plan_chunks(hands: int, chunk_size: int) -> list[tuple[int, int]]:
    """Inclusive hand-id ranges ``[(0, C-1), (C, 2C-1), ...]`` covering ``0..hands-1``."""
    return [(first, min(first + chunk_size, hands) - 1) for first in range(0, hands, chunk_size)]


def default_jobs() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


# ---------------------------------------------------------------------------------------------------------
# Encoding: engine columns -> Arrow tables with the schema of simulator.schema -> Parquet bytes.

def _vocab_array(vocab: Sequence[str]) -> pa.Array:
    key = tuple(vocab)
    arr = _VOCAB_ARRAYS.get(key)
    if arr is None:
        arr = _VOCAB_ARRAYS[key] = pa.array(key, pa.string())
    return arr


_VOCAB_ARRAYS: dict[tuple[str, ...], pa.Array] = {}
_REMAPS: dict[tuple[tuple[str, ...], tuple[str, ...]], np.ndarray] = {}


def _remap(names: tuple[str, ...], vocab: Sequence[str]) -> np.ndarray:
    """Code → index in ``vocab``, shifted by one (entry 0 is code −1): −1 = null ("" too), −2 = not in ``vocab``."""
    key = (names, tuple(vocab))
    table = _REMAPS.get(key)
    if table is None:
        where = {v: i for i, v in enumerate(vocab)}
        table = np.array([-1, *(-1 if n == "" else where.get(n, -2) for n in names)], np.int64)
        _REMAPS[key] = table
    return table


def _coded(col: Any, fld: pa.Field, vocab: Sequence[str]) -> pa.Array:
    """Dictionary array straight from engine codes (no strings): the codes are mapped onto ``vocab``."""
    codes = np.asarray(col.codes)
    table = _remap(tuple(col.names), vocab)
    if len(codes) and (codes.min() < -1 or codes.max() >= len(col.names)):
        bad = codes[(codes < -1) | (codes >= len(col.names))][0]
        raise ValueError(f"column {fld.name!r}: code {int(bad)} is outside 0..{len(col.names) - 1}")
    idx = table[codes + 1]
    nulls = idx < 0
    if nulls.any():
        if (idx == -2).any():
            bad = col.names[int(codes[idx == -2][0])]
            raise ValueError(f"column {fld.name!r}: value {bad!r} is not one of {list(vocab)}")
        indices = pa.array(idx.astype(fld.type.index_type.to_pandas_dtype()), mask=nulls)
    else:
        indices = pa.array(idx.astype(fld.type.index_type.to_pandas_dtype()))
    return pa.DictionaryArray.from_arrays(indices, _vocab_array(vocab))


def _categorical(values: Any, fld: pa.Field, vocab: Sequence[str]) -> pa.Array:
    """Dictionary-encode against a fixed vocabulary: engine codes (:class:`records.Coded`) directly, strings by
    lookup; None and "" are null (not applicable)."""
    if hasattr(values, "codes"):  # records.Coded (not imported here: records pulls in numba)
        return _coded(values, fld, vocab)
    strings = pa.array(np.asarray(values, dtype=object), type=pa.string())
    strings = pc.if_else(pc.equal(strings, ""), pa.scalar(None, pa.string()), strings)
    indices = pc.index_in(strings, value_set=_vocab_array(vocab))
    if indices.null_count != strings.null_count:
        bad = pc.filter(strings, pc.and_(pc.is_null(indices), pc.is_valid(strings)))[0].as_py()
        raise ValueError(f"column {fld.name!r}: value {bad!r} is not one of {list(vocab)}")
    index_type = fld.type.index_type
    return pa.DictionaryArray.from_arrays(indices.cast(index_type), _vocab_array(vocab))


def _column(values: Any, fld: pa.Field, n: int, variant: str) -> pa.Array:
    if fld.name == "variant":
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)), pa.array([variant]))
    if pa.types.is_dictionary(fld.type):
        return _categorical(values, fld, VOCABULARIES[fld.name])
    if pa.types.is_string(fld.type):
        if isinstance(values, pa.Array) and values.type == pa.string():
            return values
        return pa.array(np.asarray(values, dtype=object), type=pa.string())
    # A safe cast raises on overflow instead of wrapping, so a too-narrow schema dtype cannot corrupt data.
    return pa.array(np.asarray(values)).cast(fld.type, safe=True)


def encode_tables(columns: dict[str, dict[str, Any]], variant: str) -> dict[str, pa.Table]:
    """Arrow tables with the exact schema of :data:`simulator.schema.TABLES` from ``play_hands`` output or from
    ``records.to_columns(raw, encoded=True)`` (categorical codes and Arrow text columns, no strings per row)."""
    tables = {}
    for table, schema in TABLES.items():
        cols = columns[table]
        expected = [f.name for f in schema if f.name != "variant"]
        if set(cols) != set(expected):
            missing, extra = sorted(set(expected) - set(cols)), sorted(set(cols) - set(expected))
            raise ValueError(f"engine output for {table!r} does not match the schema: missing {missing}, "
                             f"unexpected {extra}")
        n = len(cols["hand_id"])
        arrays = [_column(cols.get(f.name), f, n, variant) for f in schema]
        tables[table] = pa.Table.from_arrays(arrays, schema=schema)
    return tables


def parquet_bytes(table: pa.Table) -> bytes:
    """The Parquet file of ``table`` with the fixed writer options (deterministic bytes)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue().to_pybytes()


def _check_chunk(tables: dict[str, pa.Table], hand_ids: np.ndarray) -> None:
    """Cheap contract checks on engine output: one hands row per hand id in order, four players per hand."""
    got = tables["hands"].column("hand_id").to_numpy()
    if not np.array_equal(got, hand_ids):
        raise ValueError(f"engine returned hand ids {got[:3]}... for chunk {hand_ids[0]}-{hand_ids[-1]}")
    if tables["players"].num_rows != 4 * len(hand_ids):
        raise ValueError(f"engine returned {tables['players'].num_rows} player rows for {len(hand_ids)} hands")


def run_chunk(variant: Variant, first: int, last: int, seed: int, duplicate: bool) -> ChunkResult:
    """Worker task: play hands ``first..last`` and return their three Parquet files as bytes."""
    from simulator.engine import run_batch  # imported in the worker: numba-compiled, heavy
    from simulator.records import to_columns

    ids = np.arange(first, last + 1, dtype=np.int64)
    # play_hands without its string columns: codes go straight into the dictionary arrays.
    raw = run_batch(variant.rules, ids, seed, duplicate=duplicate)
    tables = encode_tables(to_columns(raw, encoded=True), variant.name)
    _check_chunk(tables, ids)
    blobs = {name: parquet_bytes(t) for name, t in tables.items()}
    rows = {name: t.num_rows for name, t in tables.items()}
    return ChunkResult(variant.name, first, last, blobs, rows)


# ---------------------------------------------------------------------------------------------------------
# Files: atomic writes, manifest, lock.

def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that ``path`` is either absent/old or complete, never partial."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        if tmp.exists():  # interrupted between open and rename
            tmp.unlink()


def _manifest_bytes(manifest: dict) -> bytes:
    """Indented JSON with one line per chunk: readable, and small enough to rewrite after every chunk."""
    head = json.dumps({k: v for k, v in manifest.items() if k != "chunks"}, indent=1, ensure_ascii=False)
    chunks = ",\n  ".join(json.dumps(c, ensure_ascii=False) for c in manifest["chunks"])
    return f'{head[:-2]},\n "chunks": [\n  {chunks}\n ]\n}}\n'.encode()


def read_manifest(vdir: Path) -> dict:
    """The manifest of a variant directory; :class:`RunError` when it is missing or unreadable."""
    path = vdir / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{vdir}: no {MANIFEST} (not a xuezhan run directory)") from None
    except (OSError, ValueError) as exc:
        raise RunError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise RunError(f"{path}: not a format-{MANIFEST_FORMAT} xuezhan manifest")
    missing = sorted(_MANIFEST_KEYS - data.keys())
    if missing:
        raise RunError(f"{path}: manifest lacks {', '.join(missing)}")
    return data


def _new_manifest(variant: Variant, spec: RunSpec, chunk_size: int) -> dict:
    return {
        "format": MANIFEST_FORMAT,
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


def _chunk_entries(hands: int, chunk_size: int, done: dict[tuple[int, int], dict]) -> list[dict]:
    return [{"first": f, "last": last, "file": part_name(f, last), "status": "done" if (f, last) in done else
             "pending", "rows": done.get((f, last))} for f, last in plan_chunks(hands, chunk_size)]


def _refresh_totals(manifest: dict) -> None:
    done = [c for c in manifest["chunks"] if c["status"] == "done"]
    manifest["hands_done"] = sum(c["last"] - c["first"] + 1 for c in done)
    manifest["rows"] = {t: sum(c["rows"][t] for c in done) for t in TABLES}
    manifest["complete"] = len(done) == len(manifest["chunks"])


def _lock(vdir: Path, stack: ExitStack) -> None:
    """Hold an exclusive advisory lock on the variant directory for the whole run (released even on kill -9)."""
    fd = os.open(vdir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    stack.callback(os.close, fd)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunError(f"{vdir}: another xuezhan run is writing there") from None


# ---------------------------------------------------------------------------------------------------------
# Phase 1: validate everything, write nothing.

def _validate_spec(spec: RunSpec, variants: Sequence[Variant]) -> None:
    if spec.hands <= 0:
        raise RunError(f"--hands must be positive, got {spec.hands}")
    if spec.seed < 0:
        raise RunError(f"--seed must be non-negative, got {spec.seed}")
    if spec.jobs is not None and spec.jobs < 1:
        raise RunError(f"--jobs must be at least 1, got {spec.jobs}")
    if spec.chunk_size is not None and spec.chunk_size < 1:
        raise RunError(f"--chunk-size must be at least 1, got {spec.chunk_size}")
    if spec.backend not in BACKENDS:
        raise RunError(f"--backend {spec.backend!r}: expected one of {', '.join(BACKENDS)}")
    if spec.scheduler is not None and spec.backend != "dask":
        raise RunError("--scheduler needs --backend dask")
    if spec.duplicate and spec.hands % 4:
        raise RunError(f"duplicate play needs a multiple of 4 hands (4 seatings per wall), got {spec.hands}")
    names = [v.name for v in variants]
    for name in names:
        if not _NAME_RE.match(name):
            raise RunError(f"variant name {name!r}: use letters, digits and _ . + - (not starting with . _ + -)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise RunError(f"variant name {dup[0]!r} is used twice")


def _check_out_dir(out_dir: Path) -> None:
    """The output directory exists as a writable directory or can be created."""
    probe = Path(os.path.abspath(out_dir))
    while not probe.exists():
        if probe.is_symlink():  # dangling symlink
            raise RunError(f"--out {out_dir}: {probe} is a broken symlink")
        probe = probe.parent
    if not probe.is_dir():
        raise RunError(f"--out {out_dir}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise RunError(f"--out {out_dir}: {probe} is not writable")


@dataclass
class _Plan:
    variant: Variant
    vdir: Path
    chunk_size: int
    existing: dict | None                     # the manifest found, None for a fresh directory
    done: dict[tuple[int, int], dict]         # finished chunks kept: (first, last) -> rows per table


def _is_debris(p: Path) -> bool:
    """Our lock, a temporary, or a table directory holding only temporaries."""
    if p.is_dir():
        return p.name in TABLES and all(_TEMP_RE.match(q.name) for q in p.iterdir())
    return p.name == LOCK_NAME or bool(_TEMP_RE.match(p.name))


def _own_files_only(vdir: Path) -> bool:
    """True when a directory holds nothing but debris of a run killed before it wrote its manifest."""
    return all(_is_debris(p) for p in vdir.iterdir())


def _done_chunks(manifest: dict, vdir: Path, plan: set[tuple[int, int]]) -> dict[tuple[int, int], dict]:
    """Chunks marked done whose range is still in the plan and whose three files are all on disk."""
    done = {}
    for c in manifest.get("chunks", []):
        key = (c["first"], c["last"])
        if c["status"] == "done" and key in plan and all((vdir / t / c["file"]).is_file() for t in TABLES):
            done[key] = c["rows"]
    return done


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


def _inspect(out_dir: Path, variant: Variant, spec: RunSpec) -> _Plan:
    vdir = variant_dir(out_dir, variant.name)
    if vdir.exists() and not vdir.is_dir():
        raise RunError(f"{vdir} exists and is not a directory")
    if not vdir.exists() or _own_files_only(vdir):
        return _Plan(variant, vdir, spec.chunk_size or DEFAULT_CHUNK_SIZE, None, {})
    if not (vdir / MANIFEST).exists():
        raise RunError(f"{vdir} is not empty and has no {MANIFEST}: refusing to write there")
    manifest = read_manifest(vdir)
    _compare(manifest, variant, spec, vdir)
    chunk_size = manifest["chunk_size"]
    if spec.duplicate and chunk_size % 4:
        raise RunError(f"duplicate play needs a chunk size that is a multiple of 4, got {chunk_size}")
    return _Plan(variant, vdir, chunk_size, manifest, _done_chunks(manifest, vdir, set(plan_chunks(spec.hands,
                                                                                                   chunk_size))))


# ---------------------------------------------------------------------------------------------------------
# Phase 2: open the directories (lock, clean up an interrupted run, write the manifest).

@dataclass
class _Run:
    plan: _Plan
    manifest: dict
    pending: list[tuple[int, int]]
    hands_run: int = 0

    def commit(self, res: ChunkResult) -> None:
        """Make a finished chunk durable: its files first, then the manifest that lists it as done."""
        name = part_name(res.first, res.last)
        entry = next(c for c in self.manifest["chunks"] if c["first"] == res.first and c["last"] == res.last)
        try:
            for table, blob in res.blobs.items():
                atomic_write(self.plan.vdir / table / name, blob)
            entry["status"], entry["rows"] = "done", res.rows
            _refresh_totals(self.manifest)
            atomic_write(self.plan.vdir / MANIFEST, _manifest_bytes(self.manifest))
        except OSError as exc:  # disk full, directory removed under us, ...
            raise RunError(f"cannot write {exc.filename or self.plan.vdir}: {exc.strerror}; finished chunks are "
                           "kept, rerun with --resume") from None
        self.hands_run += res.last - res.first + 1


def _clean(vdir: Path, done: dict[tuple[int, int], dict]) -> None:
    """Remove temporaries and part files not listed as done (interrupted writes, chunks re-planned)."""
    keep = {part_name(f, last) for f, last in done}
    for d in [vdir, *(vdir / t for t in TABLES)]:
        for p in d.iterdir():
            if p.is_file() and (_TEMP_RE.match(p.name) or (_PART_RE.match(p.name) and p.name not in keep)):
                p.unlink()


def _make_dirs(vdir: Path) -> None:
    """Create the variant directory and its table directories; on failure remove what was created."""
    missing = [p for p in (*reversed(vdir.parents), vdir) if not p.exists()]
    missing += [vdir / t for t in TABLES if not (vdir / t).exists()]
    try:
        for p in missing:
            p.mkdir()
    except OSError as exc:
        for p in reversed(missing):
            if p.is_dir():
                p.rmdir()
        raise RunError(f"cannot create {exc.filename or vdir}: {exc.strerror}") from None


def _open(plan: _Plan, spec: RunSpec, stack: ExitStack) -> _Run:
    vdir = plan.vdir
    _make_dirs(vdir)
    _lock(vdir, stack)
    _clean(vdir, plan.done)
    manifest = _new_manifest(plan.variant, spec, plan.chunk_size)
    if plan.existing is not None:
        manifest["source"] = plan.existing.get("source", manifest["source"])
    manifest["chunks"] = _chunk_entries(spec.hands, plan.chunk_size, plan.done)
    _refresh_totals(manifest)
    atomic_write(vdir / MANIFEST, _manifest_bytes(manifest))
    pending = [(c["first"], c["last"]) for c in manifest["chunks"] if c["status"] != "done"]
    return _Run(plan, manifest, pending)


# ---------------------------------------------------------------------------------------------------------
# Phase 3: run the pending chunks.

@contextmanager
def _backend(spec: RunSpec, jobs: int) -> Iterator[None]:
    """joblib's loky backend as is; or a dask.distributed Client (at --scheduler, else a LocalCluster)."""
    if spec.backend == "loky":
        yield
        return
    from dask.distributed import Client, LocalCluster
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


def _interleave(runs: Sequence[_Run]) -> list[tuple[_Run, int, int]]:
    """Chunk-major order, so that an interrupted study has roughly equal progress in every variant."""
    longest = max(len(r.pending) for r in runs)
    return [(r, *r.pending[i]) for i in range(longest) for r in runs if i < len(r.pending)]


def _execute(runs: Sequence[_Run], spec: RunSpec, jobs: int, progress: Any) -> None:
    from joblib import Parallel, delayed

    tasks = _interleave(runs)
    if not tasks:
        return
    by_name = {r.plan.variant.name: r for r in runs}
    results = Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(run_chunk)(r.plan.variant, first, last, spec.seed, spec.duplicate) for r, first, last in tasks)
    try:
        for res in results:
            by_name[res.variant].commit(res)
            progress.advance(res.variant, res.last - res.first + 1)
    finally:
        # On Ctrl-C joblib warns, in several lines, that running tasks were cancelled; finished chunks are
        # already durable and the CLI says how to resume, so close the generator quietly.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            results.close()


def run_variants(out_dir: Path | str, variants: Sequence[Variant], spec: RunSpec) -> list[RunSummary]:
    """Simulate every variant on the same hand ids and seed into ``out_dir/variant=<name>/``.

    All arguments and existing directories are checked before anything is written, so a refused run leaves
    nothing behind. Raises :class:`RunError` for bad arguments and conflicts with existing runs.
    """
    out_dir = Path(out_dir)
    _validate_spec(spec, variants)
    _check_out_dir(out_dir)
    plans = [_inspect(out_dir, v, spec) for v in variants]
    if spec.duplicate and any(p.chunk_size % 4 for p in plans):
        raise RunError("duplicate play needs a chunk size that is a multiple of 4")
    jobs = spec.jobs or (-1 if spec.scheduler else default_jobs())
    from simulator.warmup import warm_up  # compile once here, before workers start (they load the cache)

    warm_up(spec.progress)
    start = time.perf_counter()
    with ExitStack() as stack:
        stack.enter_context(_backend(spec, jobs))
        runs = [_open(p, spec, stack) for p in plans]
        progress = stack.enter_context(_progress(runs, spec))
        _execute(runs, spec, jobs, progress)
    wall = time.perf_counter() - start
    return [RunSummary(r.plan.variant.name, r.plan.vdir, r.manifest["hands_done"], r.hands_run,
                       dict(r.manifest["rows"]), wall) for r in runs]


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
