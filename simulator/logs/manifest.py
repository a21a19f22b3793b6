"""The manifest of a variant directory, and the check of its files against it.

``DIR/_variants/variant=<name>/_manifest.json`` (user documentation: ``docs/logs.md``; the layout:
:mod:`simulator.logs.layout`) says what was simulated (rules, seed, plan of hand-id chunks) and lists every
**finished** chunk with, per table, the size, SHA-256 and row count of its Parquet file
``DIR/<table>/variant=<name>/part-….parquet``. Pending chunks are not listed (they follow from ``hands`` and
``chunk_size``), so the manifest holds one entry per finished chunk and nothing per hand. It lives outside the
table directories, which hold nothing but ``part-*.parquet`` files (polars and DuckDB read every file of a
directory they are given).

Pure data and hashing: no engine, no runner, so ``analysis`` uses it to verify before reading.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
from pathlib import Path
from typing import Any, NamedTuple, get_args

from simulator.choices import Check
from simulator.errors import UserError
from simulator.logs import layout

MANIFEST = "_manifest.json"
BACKUP = ".manifest.backup.json"  # the same bytes, written after MANIFEST: what --resume / verify --repair restore
LOCK_NAME = ".lock"          # flock'd by the writer of a directory (simulator.run.runner); readers probe it
LOG_FORMAT_KEY = "log_format"  # manifest field and Parquet metadata key: simulator.logs.schema.LOG_FORMAT (absent: 0)
CHECKSUM = "checksum"        # SHA-256 of the canonical JSON of every other field (header and chunk list)
LEGACY_MANIFEST = "manifest.json"  # format 1 (no checksums), written by xuezhan before checksums existed
FORMAT = 3                   # 3: table-first layout (simulator.logs.layout); 2: variant-first, refused
TABLES = layout.TABLES       # hands, players, wins
MAX_HANDS = 10**10           # upper limit of --hands (documented in docs/logs.md)
MAX_CHUNKS = 2_000_000       # = MAX_HANDS / the default chunk size: bounds the manifest (~0.5 KB per chunk)
CHECKS: tuple[str, ...] = get_args(Check)  # full: size + SHA-256 + row count in the footer; sizes: size only
QUARANTINE = "_quarantine"  # where --resume and verify --repair move what is not theirs (never deleted)
_PART_RE = re.compile(r"part-\d+-\d+\.parquet\Z")
_SHA_RE = re.compile(r"[0-9a-f]{64}\Z")
_READ_BLOCK = 1 << 20


class ManifestError(UserError):
    """A manifest that is missing, unreadable, of another format, or inconsistent; names the file."""


def part_name(first: int, last: int) -> str:
    """File name of the chunk of hand ids ``first..last`` (inclusive); zero-padded so names sort by hand id."""
    return f"part-{first:010d}-{last:010d}.parquet"


def is_part_name(name: str) -> bool:
    return bool(_PART_RE.match(name))


def file_info(data: bytes) -> dict[str, Any]:
    """``{size, sha256}`` of a file's bytes, as recorded per table in a chunk entry."""
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def chunk_entry(first: int, last: int, rows: dict[str, int], files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The manifest entry of a finished chunk: hand ids, file name, and per table rows, size and SHA-256."""
    return {"first": first, "last": last, "file": part_name(first, last),
            "rows": {t: int(rows[t]) for t in TABLES},
            "size": {t: int(files[t]["size"]) for t in TABLES},
            "sha256": {t: files[t]["sha256"] for t in TABLES}}


def refresh_totals(manifest: dict[str, Any]) -> None:
    """Recompute ``hands_done``, ``rows`` and ``complete`` from the chunk entries."""
    chunks = manifest["chunks"]
    manifest["hands_done"] = sum(c["last"] - c["first"] + 1 for c in chunks)
    manifest["rows"] = {t: sum(c["rows"][t] for c in chunks) for t in TABLES}
    manifest["complete"] = manifest["hands_done"] == manifest["hands"]


def canonical_checksum(data: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``data`` without its ``checksum`` field, as sorted compact JSON: any change of any value
    of a manifest (or study record) changes it, whatever the layout of the file."""
    blob = json.dumps({k: v for k, v in data.items() if k != CHECKSUM}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def check_checksum(data: dict[str, Any], path: Path, known: set[str]) -> None:
    """The ``checksum`` of a manifest or study record matches its content. A file written before checksums
    existed has none: accepted only when it has no key outside ``known`` (a flipped bit in the key itself
    would otherwise pass as such a file)."""
    try:
        actual = canonical_checksum(data)
    except ValueError:  # NaN or infinity somewhere: not JSON xuezhan writes
        raise _bad(path, "a non-finite number in a field") from None
    if CHECKSUM not in data:
        unknown = sorted(set(data) - known)
        if unknown:
            raise _bad(path, f"no {CHECKSUM!r} and an unknown field {unknown[0][:40]!r}")
        return
    if data[CHECKSUM] != actual:
        raise _bad(path, f"its {CHECKSUM} does not match its content (edited or corrupted)")


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """Indented JSON with one line per chunk: readable, and written in one pass (no per-hand content). Sets
    ``manifest["checksum"]`` (:func:`canonical_checksum`) first."""
    manifest[CHECKSUM] = canonical_checksum(manifest)
    head = json.dumps({k: v for k, v in manifest.items() if k != "chunks"}, indent=1, ensure_ascii=False)
    if not manifest["chunks"]:
        return f'{head[:-2]},\n "chunks": []\n}}\n'.encode()
    chunks = ",\n  ".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in manifest["chunks"])
    return f'{head[:-2]},\n "chunks": [\n  {chunks}\n ]\n}}\n'.encode()


# ---------------------------------------------------------------------------------------------------------
# Reading: every field type-checked, totals re-derived, so a garbled manifest is an error, never a default.

class Stale(NamedTuple):
    """A seated tuned file whose weights may no longer fit (:func:`simulator.run.tuned.stale_notes`): ``ref`` as the
    rule set gives it (``params_from``), ``problem`` (naming the file) and ``advice``. A manifest records each as
    a mapping of these fields (``stale``)."""

    ref: str
    problem: str
    advice: str

    def text(self) -> str:
        return f"{self.problem}; {self.advice}"


# Keys a manifest has only when they say something: `economy` (room factor and rake, when set at the top level),
# `stale` (the tuned files seated whose weights were tuned on another version of the expert or rule set, as the
# run's check found them after its warm-up: Stale as mappings; absent when there are none).
# `log_format` (simulator.logs.schema.LOG_FORMAT; absent in manifests written before it was recorded: format 0).
OPTIONAL = ("economy", "stale", LOG_FORMAT_KEY)
_HEAD_TYPES: dict[str, type | tuple[type, ...]] = {
    "format": int, "package": str, "version": str, "variant": str, "source": dict, "digest": str, "rules": dict,
    "seed": int, "duplicate": bool, "hands": int, "chunk_size": int, "complete": bool, "hands_done": int,
    "rows": dict, "chunks": list,
}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _bad(path: Path, what: str) -> ManifestError:
    return ManifestError(f"{path}: {what}; the manifest is damaged (`xuezhan verify --repair` or --resume "
                         f"restores it from {BACKUP} when that copy is intact)")


def _check_head(data: dict, path: Path) -> None:
    for key, typ in _HEAD_TYPES.items():
        if key not in data:
            raise _bad(path, f"no {key!r}")
        val = data[key]
        if (typ is int and not _is_int(val)) or (typ is not int and not isinstance(val, typ)):
            raise _bad(path, f"{key!r} is {type(val).__name__} {str(val)[:40]!r}, expected {typ.__name__}")
    if not 0 < data["hands"] <= MAX_HANDS or data["chunk_size"] < 1 or data["seed"] < 0:
        raise _bad(path, "hands, chunk_size or seed out of range")


def _check_chunk(c: Any, i: int, data: dict, path: Path, prev_last: int) -> None:
    where = f"chunk {i}"
    if not isinstance(c, dict) or not all(_is_int(c.get(k)) for k in ("first", "last")):
        raise _bad(path, f"{where} has no integer first/last")
    first, last = c["first"], c["last"]
    size = data["chunk_size"]
    if first <= prev_last or first % size or last != min(first + size, data["hands"]) - 1:
        raise _bad(path, f"{where} ({first}-{last}) is not a chunk of the plan or out of order")
    if c.get("file") != part_name(first, last):
        raise _bad(path, f"{where}: file {str(c.get('file'))[:60]!r}, expected {part_name(first, last)}")
    for key in ("rows", "size", "sha256"):
        val = c.get(key)
        if not isinstance(val, dict) or set(val) != set(TABLES):
            raise _bad(path, f"{where}: {key} must give hands, players and wins")
    if not all(_is_int(v) and v >= 0 for k in ("rows", "size") for v in c[k].values()):
        raise _bad(path, f"{where}: rows and sizes must be non-negative integers")
    if not all(isinstance(v, str) and _SHA_RE.match(v) for v in c["sha256"].values()):
        raise _bad(path, f"{where}: sha256 must be 64 lowercase hex digits")
    n = c["rows"]["hands"]
    # sessions that stop when a player is broke leave their remaining hand ids unplayed
    sess = data["rules"].get("session")
    may_stop = isinstance(sess, dict) and sess.get("stop_when_broke") is True
    if (n > last - first + 1 if may_stop else n != last - first + 1) or c["rows"]["players"] != 4 * n:
        raise _bad(path, f"{where}: {c['rows']['hands']} hands rows / {c['rows']['players']} players rows for "
                         f"{last - first + 1} hands")


def read(vdir: Path) -> dict[str, Any]:
    """The manifest of a variant directory, fully checked (:func:`read_file`); :class:`ManifestError` (one
    line) otherwise.

    A directory written by an older xuezhan (``manifest.json``, no checksums) is refused with a message
    saying to re-simulate: its files cannot be verified.
    """
    path = vdir / MANIFEST
    if not path.is_file():
        if (vdir / LEGACY_MANIFEST).is_file():
            raise ManifestError(f"{vdir}: written by an older xuezhan ({LEGACY_MANIFEST}, no checksums); its "
                                "files cannot be verified: re-simulate it into a new directory")
        if (vdir / BACKUP).is_file():
            raise _bad(path, "missing")
        raise ManifestError(f"{vdir}: no {MANIFEST} (not a xuezhan run directory, or a run killed before its "
                            "first chunk)")
    return read_file(path, vdir)


def read_file(path: Path, vdir: Path) -> dict[str, Any]:
    """A manifest file (``vdir/_manifest.json`` or its backup) checked as every reader needs it: JSON object
    of this format, checksum, every field type-checked, totals re-derived, the rule set valid with the digest
    recorded, and the variant named as its directory ``variant=<name>`` (a swapped or renamed directory is
    refused)."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read ({exc.strerror})") from None
    except (ValueError, RecursionError) as exc:  # JSON or UTF-8 decoding
        raise _bad(path, f"not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(data, dict):
        raise _bad(path, "not a JSON object")
    if data.get("format") != FORMAT:
        raise ManifestError(f"{path}: manifest format {str(data.get('format'))[:20]}, this xuezhan reads format "
                            f"{FORMAT}: re-simulate it")
    _check_head(data, path)
    prev = -1
    for i, c in enumerate(data["chunks"]):
        _check_chunk(c, i, data, path, prev)
        prev = c["last"]
    stated = {k: data[k] for k in ("hands_done", "rows", "complete")}
    refresh_totals(data)
    if stated != {k: data[k] for k in ("hands_done", "rows", "complete")}:
        raise _bad(path, "totals (hands_done, rows, complete) disagree with the chunk list")
    _check_rules(data, path)
    if vdir.name != f"variant={data['variant']}":
        raise _bad(path, f"it is the manifest of variant {data['variant'][:60]!r}, found in {vdir.name} (a swapped "
                         "or renamed directory?)")
    _check_stale(data, path)
    if not _is_int(data.get(LOG_FORMAT_KEY, 0)) or data.get(LOG_FORMAT_KEY, 0) < 0:
        raise _bad(path, f"{LOG_FORMAT_KEY!r} must be a non-negative integer")
    check_checksum(data, path, set(_HEAD_TYPES) | set(OPTIONAL))
    return data


def _check_stale(data: dict[str, Any], path: Path) -> None:
    """``stale``, when present: a list of ``{ref, problem, advice}`` strings (see :data:`OPTIONAL`)."""
    stale = data.get("stale", [])
    if not isinstance(stale, list) or not all(
            isinstance(e, dict) and set(e) == set(Stale._fields) and all(isinstance(v, str) for v in e.values())
            for e in stale):
        raise _bad(path, f"'stale' must be a list of {{{', '.join(Stale._fields)}}} strings")


def _check_rules(data: dict[str, Any], path: Path) -> None:
    """The recorded rule set is valid and its digest is the one recorded (what every reader relies on)."""
    from simulator.rules import RulesError, validate  # plain data (pydantic), no engine

    try:
        rules = validate(dict(data["rules"]), f"{path} (rules)", recorded=True)  # never imports a bot
    except RulesError as exc:
        raise ManifestError(str(exc)) from None
    if rules.digest() != data["digest"]:
        raise _bad(path, f"its digest {data['digest'][:12]} is not that of its rules ({rules.digest()[:12]})")


# ---------------------------------------------------------------------------------------------------------
# Verifying files against the manifest.

def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_READ_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _footer(path: Path) -> tuple[int, dict[str, str]] | None:
    """Row count and ``xuezhan.*`` key-value metadata (keys without the prefix) in a Parquet footer, None when
    the footer cannot be read."""
    import pyarrow.parquet as pq  # only when reading footers

    try:
        meta = pq.read_metadata(path)
    except (OSError, ValueError, IndexError):  # pyarrow raises ArrowInvalid (a ValueError) for a bad footer
        return None
    pairs = meta.metadata or {}
    try:
        return meta.num_rows, {k.decode()[len("xuezhan."):]: v.decode() for k, v in pairs.items()
                               if k.startswith(b"xuezhan.")}
    except UnicodeDecodeError:
        return meta.num_rows, {}


def file_facts(manifest: dict[str, Any]) -> dict[str, str]:
    """What every Parquet file of a variant says of itself (its ``xuezhan.*`` key-value metadata,
    :func:`simulator.logs.layout.file_metadata`), as the manifest records it: variant, rules digest, seed, seating,
    log format (0 when the manifest and the file predate it)."""
    return {"variant": manifest["variant"], "digest": manifest["digest"], "seed": str(manifest["seed"]),
            "duplicate": str(manifest["duplicate"]).lower(), LOG_FORMAT_KEY: str(manifest.get(LOG_FORMAT_KEY, 0))}


def check_file(path: Path, size: int, sha256: str, rows: int, check: str = "full",
               facts: dict[str, str] | None = None) -> str | None:
    """What is wrong with one chunk file (None when it matches the manifest). ``facts``: what the file's own
    metadata must say (:func:`file_facts` and its table), compared with its footer whatever ``check``."""
    try:
        actual = path.lstat()  # a link is never followed (simulator.logs.rundir.links)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot read ({exc.strerror})"
    if stat.S_ISLNK(actual.st_mode):
        return "a symbolic link, not the file xuezhan wrote"
    if not stat.S_ISREG(actual.st_mode):
        return "not a regular file"
    if actual.st_size != size:
        return f"{actual.st_size:,} bytes, the manifest says {size:,} (truncated or overwritten)"
    if check == "sizes" and facts is None:
        return None
    if check == "full":
        try:
            if sha256_file(path) != sha256:
                return "SHA-256 differs from the manifest (corrupted)"
        except OSError as exc:
            return f"cannot read ({exc.strerror})"
    footer = _footer(path)
    if footer is None or footer[0] != rows:
        return f"{None if footer is None else footer[0]} rows in its footer, the manifest says {rows}"
    for key, value in (facts or {}).items():
        found = footer[1].get(key, "0" if key == LOG_FORMAT_KEY else None)
        if found != value:
            return (f"its own metadata says {key} {str(found)[:70]!r}, the manifest {value[:70]!r} (an edited "
                    "manifest, or another run's file)")
    return None


def bad_chunks(vdir: Path, manifest: dict[str, Any], check: str = "full") -> dict[int, list[str]]:
    """Problems of the listed chunks: ``{chunk index: ["hands/variant=x/part-...: what", ...]}`` (paths relative to
    the run directory; empty when all good). Each file's own metadata is compared with the manifest's facts
    (:func:`file_facts`): every file's under ``full``, the first chunk's under ``sizes`` (one footer per table:
    an edited manifest states its facts for every file)."""
    if check not in CHECKS:
        raise ValueError(f"check must be one of {CHECKS}, got {check!r}")
    bad: dict[int, list[str]] = {}
    facts = file_facts(manifest)
    for i, c in enumerate(manifest["chunks"]):
        for t in TABLES:
            path = layout.table_dir(vdir, t) / c["file"]
            problem = check_file(path, c["size"][t], c["sha256"][t], c["rows"][t], check,
                                 {**facts, "table": t} if check == "full" or i == 0 else None)
            if problem:
                bad.setdefault(i, []).append(f"{layout.rel(path, vdir)}: {problem}")
    return bad


def unlisted_parts(vdir: Path, manifest: dict[str, Any]) -> list[str]:
    """``table/variant=x/file`` of every entry of the variant's table directories that the manifest does not list.

    Anything there is read by a reader given the directory (pandas, pyarrow, polars, DuckDB), so it matters
    even though xuezhan itself reads only listed files."""
    listed = {c["file"] for c in manifest["chunks"]}
    out = []
    for t in TABLES:
        tdir = layout.table_dir(vdir, t)
        if tdir.is_dir():
            out += [layout.rel(p, vdir) for p in sorted(tdir.iterdir())
                    if p.name not in listed and not layout.is_litter(p)]
    return out


def unlisted_problems(vdir: Path, manifest: dict[str, Any]) -> list[str]:
    """One line per entry of the variant's table directories the manifest does not list."""
    return [f"{name}: not listed in the manifest (left by an interrupted run? --repair or --resume moves it to "
            f"{QUARANTINE}/; --resume deletes a part file of this run instead)"
            for name in unlisted_parts(vdir, manifest)]


def problems(vdir: Path, manifest: dict[str, Any], check: str = "full") -> list[str]:
    """Every problem of a variant against its manifest, one line each naming the file (relative to the run)."""
    found = [p for lines in bad_chunks(vdir, manifest, check).values() for p in lines]
    return found + unlisted_problems(vdir, manifest)


def verified(vdir: Path, check: str = "full") -> dict[str, Any]:
    """Read the manifest and check every listed file; :class:`ManifestError` naming the first bad files and what
    fixes them (``--resume`` for damaged chunks, ``verify --repair`` for stray entries only)."""
    manifest = read(vdir)
    chunks = [p for lines in bad_chunks(vdir, manifest, check).values() for p in lines]
    found = chunks + unlisted_problems(vdir, manifest)
    if found:
        more = f" (+{len(found) - 3} more)" if len(found) > 3 else ""
        fix = ("`xuezhan simulate/study ... --resume` to re-simulate damaged chunks" if chunks
               else f"`xuezhan verify --repair` to move them to {QUARANTINE}/")
        raise ManifestError(f"{layout.run_of(vdir)}: {'; '.join(found[:3])}{more}; run `xuezhan verify` for the "
                            f"full list, and {fix}")
    return manifest



def writer_active(path: Path) -> bool:
    """Whether a xuezhan run holds the lock of ``path`` (a run or variant directory) right now: a reader must
    not take its unfinished state for damage. Probes the writer's ``flock`` without creating anything."""
    import fcntl
    import os

    try:
        fd = os.open(path / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False  # no lock file: nothing ever wrote there, or it cannot be opened (then no writer either)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a shared lock we took
    return False
