"""Where the files of a run directory live: a table-first hive layout (user documentation: ``docs/logs.md``).

::

    RUN/<table>/variant=<name>/part-<first>-<last>.parquet   data only: hands, players, wins
    RUN/_variants/variant=<name>/                             per variant: _manifest.json, .manifest.backup.json,
                                                              .lock, _quarantine/<table>/
    RUN/study.json, RUN/.lock, RUN/report.html, RUN/report.md, RUN/_quarantine/<table>/

So ``RUN/<table>`` is one dataset over every variant, partitioned by ``variant`` (the files do not store the
column: readers take it from the path), and nothing but Parquet parts is ever inside it. The per-variant
"variant directory" of the code (``vdir``) is ``RUN/_variants/variant=<name>``: it holds the manifest, its
backup, the lock, the temporaries being written and what was moved aside; its leading ``_`` keeps it out of
what any reader scans. Runs of the earlier variant-first layout (``RUN/variant=<name>/<table>/``) are refused
with a one-line "re-simulate" message (:func:`old_layout`).

Plain paths and names only (no pyarrow at import time), shared by the runner, the readers and ``verify``.
"""

from __future__ import annotations

import re
from pathlib import Path

from simulator.logs.schema import PARTITION
from simulator.logs.schema import TABLES as _SCHEMAS

TABLES = tuple(_SCHEMAS)      # hands, players, wins: the table directories of a run
CONTROL = "_variants"        # RUN/_variants/variant=<name>/: manifest, backup, lock, quarantine of a variant
PREFIX = f"{PARTITION}="      # the hive key of the partitions, and of the control directories
# Variant names are hive partition values: they start with a letter (a name of digits or a date would be read as
# a number or a date by polars / DuckDB / pyarrow), use no character a reader escapes or splits on (%, /, =,
# space), and are not a word a reader takes for a value (polars reads `true` as a boolean, DuckDB `epoch` and
# `infinity` as dates).
NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*\Z")
VALUE_WORDS = ("true", "false", "null", "nan", "inf", "infinity", "epoch")
META_KEYS = ("table", "variant", "digest", "seed", "duplicate", "version", "log_format")  # Parquet metadata, xuezhan.*
# Files an operating system drops into any directory it shows (macOS Finder, its AppleDouble ._* files on foreign
# disks, Windows Explorer): ignored wherever a run is checked or read, never reported, moved or deleted.
LITTER = frozenset({".ds_store", "thumbs.db", "ehthumbs.db", "desktop.ini"})


def is_litter(path: Path) -> bool:
    """A regular file an OS drops in a directory it shows (:data:`LITTER`, ``._*``): not part of a run, harmless."""
    return ((path.name.lower() in LITTER or path.name.startswith("._")) and path.is_file()
            and not path.is_symlink())


def shown(text: object) -> str:
    """``text`` (a path, a line naming paths) as one printable line: each control or unprintable character (a
    newline in a directory name would start a forged ``ok`` line) escaped as Python writes it (``\\n``)."""
    text = str(text)
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def name_problem(name: str) -> str | None:
    """What makes ``name`` unusable as a variant name (a hive partition value), None when it is fine."""
    if not NAME_RE.match(name):
        return f"variant name {name[:60]!r}: use a letter first, then letters, digits and _ . + -"
    if name.lower() in VALUE_WORDS:
        return (f"variant name {name!r}: Parquet readers take it for a value, not a name (as they do "
                f"{', '.join(VALUE_WORDS)}); choose another")
    return None


def control_dir(run_dir: Path | str, name: str) -> Path:
    """``RUN/_variants/variant=<name>``: the variant's manifest, backup, lock and quarantine."""
    return Path(run_dir) / CONTROL / f"{PREFIX}{name}"


def is_control_dir(path: Path) -> bool:
    return path.name.startswith(PREFIX) and path.parent.name == CONTROL


def name_of(vdir: Path) -> str:
    """The variant name of a control directory (or a partition directory)."""
    return vdir.name[len(PREFIX):]


def run_of(vdir: Path) -> Path:
    """The run directory of a control directory."""
    return vdir.parent.parent


def table_dir(vdir: Path, table: str) -> Path:
    """``RUN/<table>/variant=<name>``: the part files of one table of the variant whose control directory is
    ``vdir``."""
    return run_of(vdir) / table / vdir.name


def rel(path: Path, vdir: Path) -> str:
    """``path`` relative to the run directory of ``vdir`` (how problems name files: ``hands/variant=x/part-…``)."""
    return path.relative_to(run_of(vdir)).as_posix()


def control_dirs(run_dir: Path | str) -> list[Path]:
    """Every variant's control directory in a run directory, in name order."""
    return sorted(p for p in (Path(run_dir) / CONTROL).glob(f"{PREFIX}*") if p.is_dir())


def old_layout(path: Path | str) -> str | None:
    """A one-line refusal when ``path`` is (or is a variant directory of) a run written in the variant-first
    layout of earlier versions (``RUN/variant=<name>/<table>/``); None otherwise."""
    path = Path(path)
    if path.name.startswith(PREFIX) and path.parent.name not in (CONTROL, *TABLES) and _old_vdir(path):
        run = path.parent
    elif any(_old_vdir(p) for p in path.glob(f"{PREFIX}*")):
        run = path
    else:
        return None
    return (f"{run}: written by an older xuezhan (variant=<name>/<table>/ directories; this one reads "
            "<table>/variant=<name>/); re-simulate it into a new directory (the same rules and seed give the "
            "same hands)")


def _old_vdir(path: Path) -> bool:
    """A variant directory of the variant-first layout: a manifest or a table directory inside."""
    return path.is_dir() and (any((path / n).is_file() for n in ("_manifest.json", "manifest.json"))
                              or any((path / t).is_dir() for t in TABLES))


def strays(run_dir: Path | str, names: set[str]) -> list[Path]:
    """Entries of ``RUN/<table>/`` that are not the partition directory of a variant in ``names``: a reader of
    the table directory would trip on them or read them as data."""
    out = []
    for t in TABLES:
        tdir = Path(run_dir) / t
        if tdir.is_dir():
            out += [p for p in sorted(tdir.iterdir())
                    if not (p.is_dir() and not p.is_symlink() and p.name.startswith(PREFIX)
                            and name_of(p) in names) and not is_litter(p)]
    return out


def file_metadata(table: str, variant: str, digest: str, seed: int, duplicate: bool,
                  version: str, log_format: int) -> dict[bytes, bytes]:
    """The key-value metadata written into every Parquet file (``xuezhan.<key>``, strings): which table,
    variant, rule set (digest), seed, seating, xuezhan version and log format (``simulator.logs.schema.LOG_FORMAT``)
    the file belongs to."""
    values = (table, variant, digest, str(seed), str(duplicate).lower(), version, str(log_format))
    return {f"xuezhan.{k}".encode(): v.encode() for k, v in zip(META_KEYS, values, strict=True)}


def read_file_metadata(path: Path | str) -> dict[str, str]:
    """The ``xuezhan.*`` key-value metadata of one Parquet file, keys without the prefix (``{}`` when none)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    return {k.decode()[len("xuezhan."):]: v.decode() for k, v in meta.items() if k.startswith(b"xuezhan.")}
