"""A run's plan: what to simulate (:class:`Variant`, :class:`RunSpec`), whether it may run, and what a locked
variant directory already holds (fresh, resume, refuse), with the cleanup of an interrupted run.

Everything here only reads and checks, or cleans under the run's lock; :mod:`simulator.run.runner` runs the plan
(workers, atomic writes, the manifest as chunks finish). Paths come from :mod:`simulator.logs.layout`.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from simulator import __version__
from simulator.choices import Backend
from simulator.logs import layout, rundir
from simulator.logs import manifest as mf
from simulator.logs.dirlock import MAX_NAME, RunError
from simulator.logs.manifest import MANIFEST, MAX_CHUNKS, MAX_HANDS
from simulator.logs.schema import LOG_FORMAT, TABLES
from simulator.rules import RuleSet, load_rules, resolve_config_path

DASK_MISSING = "--backend dask needs the dask extra: pip install 'xuezhan[dask]'"

DEFAULT_CHUNK_SIZE = 5_000
MAX_CHUNK_SIZE = 200_000     # a worker holds a whole chunk in memory
BACKENDS = get_args(Backend)  # ("loky", "dask")
LOCK_NAME = mf.LOCK_NAME
# atomic_write's temporaries in a variant's control directory
_TEMP_RE = re.compile(r"\.((hands|players|wins)\.part-\d+-\d+\.parquet|_manifest\.json|\.manifest\.backup\.json)"
                      r"\.\d+\.tmp\Z")


@dataclass(frozen=True)
class Variant:
    """One rule set to simulate, written to ``DIR/<table>/variant=<name>/`` (``simulator.logs.layout``).

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
    # simulator.logs.manifest.Stale: seated tuned files tuned on another expert
    stale: list = field(default_factory=list)


def variant_dir(out_dir: Path, name: str) -> Path:
    """The control directory of a variant (manifest, lock): ``DIR/_variants/variant=<name>``."""
    return layout.control_dir(out_dir, name)


def iter_chunks(hands: int, chunk_size: int) -> Iterator[tuple[int, int]]:
    """Inclusive hand-id ranges ``(0, C-1), (C, 2C-1), ...`` covering ``0..hands-1``, lazily."""
    return ((first, min(first + chunk_size, hands) - 1) for first in range(0, hands, chunk_size))


def plan_chunks(hands: int, chunk_size: int) -> list[tuple[int, int]]:
    """Inclusive hand-id ranges ``[(0, C-1), (C, 2C-1), ...]`` covering ``0..hands-1``."""
    return list(iter_chunks(hands, chunk_size))


def read_manifest(vdir: Path) -> dict:
    """The manifest of a variant directory (:func:`simulator.logs.manifest.read`); :class:`RunError` when it is
    missing, unreadable or damaged."""
    try:
        return mf.read(vdir)
    except mf.ManifestError as exc:
        raise RunError(str(exc)) from None


def recover_manifest(vdir: Path, variant: Variant, spec: RunSpec) -> tuple[dict, str | None]:
    """The manifest, or its intact backup when it is damaged (:func:`simulator.logs.rundir.recover`); when both are
    damaged, one rebuilt from the part files for this run (:func:`simulator.logs.rundir.rebuild`)."""
    try:
        return rundir.recover(vdir)
    except rundir.BothDamaged:
        try:
            return rundir.rebuild(vdir, new_manifest(variant, spec, spec.chunk_size))
        except OSError as exc:
            raise RunError(f"cannot rebuild the manifest of {vdir}: {exc.strerror} ({exc.filename})") from None
    except mf.ManifestError as exc:
        raise RunError(str(exc)) from None


def new_manifest(variant: Variant, spec: RunSpec, chunk_size: int | None) -> dict:
    return {
        "format": mf.FORMAT,
        "package": "xuezhan",
        "version": __version__,
        mf.LOG_FORMAT_KEY: LOG_FORMAT,
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


def validate_spec(spec: RunSpec, variants: Sequence[Variant]) -> None:
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
    if spec.backend == "dask" and not all(importlib.util.find_spec(m) for m in ("dask", "distributed")):
        raise RunError(DASK_MISSING)  # now, not after compiling the engine (runner._backend imports it then)
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
    multiples of it: a session never spans two chunks (simulator.hands.sessions)."""
    sess = variant.rules.session
    return 1 if sess is None else sess.hands * (4 if duplicate else 1)


def check_session_chunks(chunk_size: int, unit: int, vdir: Path) -> None:
    if chunk_size % unit:
        raise RunError(f"{vdir.name}: a chunk must hold whole sessions ({unit} hand ids each); chunks of "
                       f"{chunk_size} do not: use a --chunk-size that is a multiple of {unit}")


def check_chunk_count(hands: int, chunk_size: int) -> None:
    n = -(-hands // chunk_size)
    if n > MAX_CHUNKS:
        raise RunError(f"--hands {hands:,} in chunks of {chunk_size:,} is {n:,} chunks, above the limit of "
                       f"{MAX_CHUNKS:,}: raise --chunk-size")


def not_a_study(out_dir: Path) -> None:
    if (out_dir / rundir.STUDY_FILE).exists():
        raise RunError(f"{out_dir} holds a study ({rundir.STUDY_FILE}): one study per directory; simulate into "
                       "another --out, or continue the study with `xuezhan study ... --resume`")


@dataclass
class Plan:
    variant: Variant
    vdir: Path
    chunk_size: int
    existing: dict | None                  # the manifest found, None for a fresh directory
    done: list[dict]                       # entries of finished chunks kept, verified, in hand-id order
    redone: list[str] = field(default_factory=list)  # damaged chunk files that will be re-simulated
    notes: list[str] = field(default_factory=list)   # manifest restored from its backup, entries quarantined
    # simulator.logs.manifest.Stale of the variant's seats (after the warm-up)
    stale: list = field(default_factory=list)


def is_debris(p: Path) -> bool:
    """Our lock or a temporary."""
    return not p.is_dir() and (p.name == LOCK_NAME or bool(_TEMP_RE.match(p.name)))


def own_files_only(vdir: Path) -> bool:
    """True when a control directory holds nothing but debris of a run killed before it wrote its manifest, and
    the variant's table directories are absent or empty."""
    tdirs = [layout.table_dir(vdir, t) for t in TABLES]
    return all(is_debris(p) or layout.is_litter(p) for p in vdir.iterdir()) and not any(
        d.is_dir() and any(not layout.is_litter(p) for p in d.iterdir()) for d in tdirs)


def kept_chunks(manifest: dict, vdir: Path, spec_hands: int) -> tuple[list[dict], list[str]]:
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


def compare_manifest(manifest: dict, variant: Variant, spec: RunSpec, vdir: Path) -> None:
    """Refuse to mix runs: another rule set, seed, mode or package version in the same directory."""
    digest = variant.rules.digest()
    if manifest["digest"] != digest:
        raise RunError(f"{vdir} holds rule set {manifest['digest'][:12]} ({manifest['variant']}), this run's rules "
                       f"are {digest[:12]}: refusing to mix them; choose another --out or --name")
    if manifest["seed"] != spec.seed:
        raise RunError(f"{vdir} was run with seed {manifest['seed']}, not {spec.seed}: refusing to mix seeds")
    if manifest["duplicate"] != spec.duplicate:
        raise RunError(f"{vdir} was run with duplicate={manifest['duplicate']}, not {spec.duplicate}")
    written = manifest.get(mf.LOG_FORMAT_KEY, 0)
    if written != LOG_FORMAT:  # before the package version: what would mix is the encoding of the files
        raise RunError(f"{vdir} holds logs of log format {written}, this xuezhan writes format {LOG_FORMAT} (other "
                       "columns or dictionaries): resuming would mix two encodings in one variant; simulate into a "
                       "new --out (the same rules and seed give the same hands), or resume with the xuezhan that "
                       "wrote it")
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


def inspect_dir(vdir: Path, variant: Variant, spec: RunSpec) -> Plan:
    """Decide what to do in a locked variant directory (fresh, resume, refuse); writes nothing."""
    unit = session_unit(variant, spec.duplicate)
    if own_files_only(vdir):
        chunk_size = spec.chunk_size or -(-DEFAULT_CHUNK_SIZE // unit) * unit
        check_session_chunks(chunk_size, unit, vdir)
        check_chunk_count(spec.hands, chunk_size)
        return Plan(variant, vdir, chunk_size, None, [])
    if not any((vdir / n).exists() for n in (MANIFEST, mf.LEGACY_MANIFEST, mf.BACKUP)):
        raise RunError(f"{vdir} (or its table directories <table>/{vdir.name}) is not empty and has no {MANIFEST}: "
                       "refusing to write there")
    manifest, note = recover_manifest(vdir, variant, spec)
    compare_manifest(manifest, variant, spec, vdir)
    chunk_size = manifest["chunk_size"]
    if spec.duplicate and chunk_size % 4:
        raise RunError(f"duplicate play needs a chunk size that is a multiple of 4, got {chunk_size}")
    check_session_chunks(chunk_size, unit, vdir)
    check_chunk_count(spec.hands, chunk_size)
    kept, redone = kept_chunks(manifest, vdir, spec.hands)
    return Plan(variant, vdir, chunk_size, manifest, kept, redone, [note] if note else [])


def clean_variant(vdir: Path, done: list[dict], manifest: dict, listed: set[str]) -> list[str]:
    """Remove temporaries and the part files this run left unlisted (interrupted writes, chunks re-planned or
    damaged: their own metadata names this run's variant, rules, seed, seating and log format,
    :func:`rundir.belongs`, or, unreadable, they are ``listed`` in the manifest found); move anything else found
    in a table directory (another run's part file, a user's file, a directory) to ``_quarantine/`` and return one
    line per entry moved. Called under the lock, on the listing made under it."""
    for p in vdir.iterdir():
        if p.is_file() and _TEMP_RE.match(p.name):
            p.unlink()
    ours, foreign = rundir.strays(vdir, {c["file"] for c in done})
    for p in ours:
        mine = rundir.belongs(p, manifest)
        if mine is False or (mine is None and p.name not in listed):
            foreign.append(p)
    for p in ours:
        if p not in foreign:
            p.unlink()
    try:
        return rundir.quarantine(vdir, foreign, layout.run_of(vdir))
    except OSError as exc:
        raise RunError(f"cannot move {exc.filename} aside to {mf.QUARANTINE}/: {exc.strerror}") from None


def clean_run(out_dir: Path) -> list[str]:
    """Move what is not a variant's partition directory out of ``DIR/<table>/`` (to ``DIR/_quarantine/``),
    under the run directory's lock; one line per entry moved."""
    try:
        return rundir.quarantine(out_dir, rundir.run_strays(out_dir)[0], out_dir)
    except OSError as exc:
        raise RunError(f"cannot move {exc.filename} aside to {mf.QUARANTINE}/: {exc.strerror}") from None


def make_table_dirs(vdir: Path) -> None:
    try:
        for t in TABLES:
            layout.table_dir(vdir, t).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"cannot create {exc.filename or vdir}: {exc.strerror}") from None
