"""The whole run directory, beyond one manifest: ``study.json`` against the variant directories, the manifest's
backup copy and its repair, and moving aside what is not ours (``_quarantine/``). Where each file lives:
:mod:`simulator.logs.layout`.

User documentation: ``docs/logs.md``. Plain data and files only (no engine, no runner at import time), so the
readers (``analysis.load``), ``xuezhan verify`` and the runner share every check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from simulator.files import atomic_write
from simulator.logs import layout
from simulator.logs import manifest as mf

STUDY_FILE = "study.json"
# the fields of study.json (simulator.run.study.study_record); one written before checksums has exactly these
STUDY_KEYS = {"name", "description", "baseline", "variants", "seats", "set", "hands", "seed", "duplicate",
              "contrasts"}
# fields a manifest and its backup must agree on (the rest moves on as chunks finish)
_SAME = ("format", "package", "version", "variant", "digest", "rules", "seed", "duplicate", "chunk_size",
         mf.LOG_FORMAT_KEY)


class RunDirProblem(mf.ManifestError):
    """A run directory whose parts disagree (study.json against its variant directories); one line."""


class BothDamaged(mf.ManifestError):
    """A manifest and its backup both damaged: ``--resume`` rebuilds the manifest (:func:`rebuild`)."""


# ---------------------------------------------------------------------------------------------------------
# study.json

def read_study(run_dir: Path) -> dict[str, Any] | None:
    """``run_dir/study.json`` checked (JSON object, checksum), None when the run is not a study."""
    path = Path(run_dir) / STUDY_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise RunDirProblem(f"{path}: cannot read ({exc.strerror})") from None
    except (ValueError, RecursionError) as exc:
        raise RunDirProblem(f"{path}: not valid JSON ({str(exc)[:80]}); the study record is damaged") from None
    if not isinstance(data, dict):
        raise RunDirProblem(f"{path}: not a JSON object; the study record is damaged")
    try:
        mf.check_checksum(data, path, STUDY_KEYS)
    except mf.ManifestError as exc:
        raise RunDirProblem(str(exc).split("; the manifest")[0] + "; the study record is damaged") from None
    return data


def study_arms(study: dict[str, Any]) -> list[tuple[str, str | None]]:
    """``[(name, digest or None), ...]`` of a study record's arms (entries are mappings or bare names)."""
    arms = []
    for v in study.get("variants") or []:
        name = v.get("name") if isinstance(v, dict) else v
        digest = v.get("digest") if isinstance(v, dict) else None
        if isinstance(name, str):
            arms.append((name, digest if isinstance(digest, str) else None))
    return arms


def study_problems(run_dir: Path, study: dict[str, Any] | None, found: list[str],
                   manifests: dict[str, dict[str, Any]]) -> list[str]:
    """What disagrees between a study record (None: no study.json) and the variant directories ``found``
    (names) with their manifests: an arm without its directory, a directory that is no arm, an arm whose rules
    differ, a study's variant without its study.json."""
    if study is None:
        owned = sorted({str(m["source"]["study"]) for m in manifests.values()
                        if isinstance(m.get("source"), dict) and m["source"].get("study") is not None})
        return [f"{run_dir}/{STUDY_FILE}: missing (the variants were run by study {owned[0][:60]!r})"] if owned else []
    arms = study_arms(study)
    names = [a for a, _ in arms]
    vdir = layout.control_dir
    out = [f"{vdir(run_dir, a)}: missing (an arm of study {study.get('name')!r})" for a in names if a not in found]
    out += [f"{vdir(run_dir, v)}: not an arm of study {study.get('name')!r} (arms: {', '.join(names)})"
            for v in found if v not in names]
    out += [f"{vdir(run_dir, a)}: rules {manifests[a]['digest'][:12]}, study.json records {d[:12]} for this arm "
            "(a swapped or renamed directory?)" for a, d in arms
            if d is not None and a in manifests and manifests[a].get("digest") != d]
    if study.get("baseline") is not None and study.get("baseline") not in names and names:
        out.append(f"{run_dir}/{STUDY_FILE}: baseline {str(study.get('baseline'))[:40]!r} is not one of its arms")
    return out


def in_progress(path: Path) -> str | None:
    """A line saying that a xuezhan run is writing into the run directory ``path`` (or into ``path`` itself,
    a variant directory), with the hands done of each variant whose manifest can be read; None when no writer
    holds its locks."""
    path = Path(path)
    vdirs = [path] if layout.is_control_dir(path) else layout.control_dirs(path)
    busy = [v for v in vdirs if mf.writer_active(v)]
    if not busy and not mf.writer_active(path):
        return None
    done = []
    for v in busy:
        try:
            m = mf.read(v)
            done.append(f"{layout.name_of(v)} {m['hands_done']:,} of {m['hands']:,} hands")
        except mf.ManifestError:
            done.append(f"{layout.name_of(v)} starting")
    return (f"{path}: run in progress ({'; '.join(done) or 'starting'}); wait for it to finish, or read the "
            "finished chunks with --partial")


# ---------------------------------------------------------------------------------------------------------
# The backup manifest

def recover(vdir: Path) -> tuple[dict[str, Any], str | None]:
    """The manifest of ``vdir``; when it is damaged or missing but its backup is intact, the backup and a line
    saying so. :class:`simulator.logs.manifest.ManifestError` when neither can be used."""
    try:
        return mf.read(vdir), None
    except mf.ManifestError as exc:
        if not (vdir / mf.BACKUP).is_file() or (vdir / mf.LEGACY_MANIFEST).is_file():
            raise
        try:
            backup = mf.read_file(vdir / mf.BACKUP, vdir)
        except mf.ManifestError:
            raise BothDamaged(f"{str(exc).split('; the manifest')[0]}; its backup {mf.BACKUP} is damaged too: run "
                              "the run's own simulate/study command again with --resume, which rebuilds the "
                              "manifest from the part files' own metadata") from None
        first = str(exc).split("; the manifest")[0]
        return backup, (f"{first}; restored from {mf.BACKUP} ({len(backup['chunks'])} chunks listed, their files "
                        "checked)")


def rebuild(vdir: Path, fresh: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The manifest of a variant whose manifest and backup are both damaged, rebuilt from its part files:
    ``fresh`` is the manifest the resumed run starts with (its rules, seed, seating, hands and chunk size, from
    the command; the chunk size, when the command does not give one (``None``), from the name of the first
    part). A chunk of that plan is listed when its three files name this run in their own metadata
    (:func:`belongs`), decode whole, and hold consistent row counts; with the size and SHA-256 of each file as
    found. Anything else is left for ``--resume`` to redo and move aside. Returns the manifest and a line."""
    import pyarrow.parquet as pq

    manifest = dict(fresh, chunks=[])
    hands_dir = layout.table_dir(vdir, "hands")
    names = sorted(p.name for p in hands_dir.iterdir() if mf.is_part_name(p.name)) if hands_dir.is_dir() else []
    if manifest["chunk_size"] is None:
        zero = [n for n in names if n.startswith(mf.part_name(0, 0)[:16])]
        manifest["chunk_size"] = int(zero[0][16:26]) + 1 if zero else manifest["hands"]
    size, hands = manifest["chunk_size"], manifest["hands"]
    may_stop = (manifest["rules"].get("session") or {}).get("stop_when_broke") is True
    for name in names:
        first, last = int(name[5:15]), int(name[16:26])
        if first % size or last != min(first + size, hands) - 1:
            continue
        paths = {t: layout.table_dir(vdir, t) / name for t in mf.TABLES}
        rows: dict[str, int] = {}
        for t, path in paths.items():
            if path.is_symlink() or not path.is_file() or belongs(path, manifest) is not True:
                break
            try:
                rows[t] = pq.read_table(path).num_rows
            except (OSError, ValueError):
                break
        n = last - first + 1
        if len(rows) < len(mf.TABLES) or rows["players"] != 4 * rows["hands"] or (
                rows["hands"] > n if may_stop else rows["hands"] != n):
            continue
        files = {t: {"size": p.stat().st_size, "sha256": mf.sha256_file(p)} for t, p in paths.items()}
        manifest["chunks"].append(mf.chunk_entry(first, last, rows, files))
    mf.refresh_totals(manifest)
    return manifest, (f"{vdir}: {mf.MANIFEST} and its backup both damaged; rebuilt from the part files' own "
                      f"metadata ({len(manifest['chunks'])} chunks kept: each file names this run and decodes whole)")


def backup_problem(vdir: Path, manifest: dict[str, Any]) -> str | None:
    """What is wrong with the backup of an intact manifest (None when it is usable, or absent: runs written
    before backups existed)."""
    path = vdir / mf.BACKUP
    if not path.exists():
        return None
    try:
        backup = mf.read_file(path, vdir)
    except mf.ManifestError as exc:
        return str(exc).split("; the manifest")[0].replace(f"{path}: ", "")
    if any(backup.get(k) != manifest.get(k) for k in _SAME):
        return "does not describe the same run as the manifest"
    return None


def write_manifest(vdir: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest, then its backup (the same bytes), each atomically: one of them is always whole."""
    data = mf.manifest_bytes(manifest)
    atomic_write(vdir / mf.MANIFEST, data)
    atomic_write(vdir / mf.BACKUP, data)


# ---------------------------------------------------------------------------------------------------------
# Symbolic links: refused, never followed

LINK_ADVICE = ("a symbolic link: xuezhan neither follows nor moves links inside a run directory; replace it with a "
               "copy of what it points to (cp -a), then run the command again")


def _link_entries(d: Path) -> list[Path]:
    """The entries of directory ``d`` that are symbolic links (``[]`` when ``d`` is not a real directory)."""
    if d.is_symlink() or not d.is_dir():
        return []
    with os.scandir(d) as it:
        return [Path(e.path) for e in it if e.is_symlink()]


def links(run_dir: Path) -> list[Path]:
    """Every symbolic link where a run keeps its files (``RUN/_variants``, the control directories and their
    manifests, ``RUN/<table>``, the partition directories and their entries, ``study.json``), sorted. The run
    directory itself may be a link; nothing inside it may: a linked file or partition would pass a check made
    through the link and be lost when the link is moved, so verify, the readers, ``--resume`` and ``--repair``
    refuse a run holding one, with one line naming it (:data:`LINK_ADVICE`)."""
    run_dir = Path(run_dir)
    top = [run_dir / n for n in (layout.CONTROL, *mf.TABLES, STUDY_FILE)]
    out = [p for p in top if p.is_symlink()]
    for vdir in _link_entries(run_dir / layout.CONTROL) + layout.control_dirs(run_dir):
        out += [vdir] if vdir.is_symlink() else [vdir / n for n in (mf.MANIFEST, mf.BACKUP) if (vdir / n).is_symlink()]
    for t in mf.TABLES:
        out += _link_entries(run_dir / t)
        for part in (run_dir / t).glob(f"{layout.PREFIX}*") if (run_dir / t).is_dir() else ():
            out += _link_entries(part)
    return sorted(set(out))


def link_lines(run_dir: Path) -> list[str]:
    """One line per symbolic link of :func:`links`."""
    return [f"{layout.shown(p)}: {LINK_ADVICE}" for p in links(run_dir)]


# ---------------------------------------------------------------------------------------------------------
# What is not ours

def strays(vdir: Path, keep: set[str]) -> tuple[list[Path], list[Path]]:
    """Entries of the variant's table directories (``RUN/<table>/variant=<name>/``) not in ``keep`` (file names
    of listed chunks): (``ours``: part files, left by an interrupted or re-planned run; ``foreign``: anything
    else, files and directories, and a listed name that is not a regular file)."""
    ours, foreign = [], []
    for t in mf.TABLES:
        tdir = layout.table_dir(vdir, t)
        if not tdir.is_dir():
            continue
        for p in sorted(tdir.iterdir()):
            regular = p.is_file() and not p.is_symlink()
            if (regular and p.name in keep) or layout.is_litter(p):
                continue
            (ours if regular and mf.is_part_name(p.name) else foreign).append(p)
    return ours, foreign


def belongs(path: Path, manifest: dict[str, Any]) -> bool | None:
    """Whether an unlisted part file is this run's own (left by an interrupted write or a re-planned chunk): its
    own Parquet metadata names its table and the variant, rules, seed, seating and log format of ``manifest``.
    False for another run's part; None when its metadata cannot be read (a damaged file)."""
    try:
        meta = layout.read_file_metadata(path)
    except (OSError, ValueError):  # pyarrow: ArrowInvalid (a ValueError) for what is not Parquet
        return None
    return meta.get("table") == path.parent.parent.name and all(
        meta.get(k) == v for k, v in mf.file_facts(manifest).items())


def quarantine(where: Path, entries: list[Path], run_dir: Path) -> list[str]:
    """Move each entry (file or directory) of ``run_dir/<table>/…`` to ``where/_quarantine/<table>/`` (``where``:
    the variant's control directory, or the run directory for entries of ``RUN/<table>/`` itself; a free name:
    ``name.1``, ...); one line per entry saying where it went, relative to the run. Nothing is deleted."""
    lines = []
    for p in entries:
        dest_dir = where / mf.QUARANTINE / p.relative_to(run_dir).parts[0]
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest, n = dest_dir / p.name, 0
        while dest.exists() or dest.is_symlink():
            n += 1
            dest = dest_dir / f"{p.name}.{n}"
        os.replace(p, dest)
        lines.append(f"{p.relative_to(run_dir).as_posix()}: not ours, moved to {dest.relative_to(run_dir).as_posix()}")
    return lines


def run_strays(run_dir: Path) -> tuple[list[Path], str]:
    """Entries of ``RUN/<table>/`` that are no variant's partition directory (:func:`simulator.logs.layout.strays`,
    against the variants that have a control directory), and what to say of each."""
    names = {layout.name_of(v) for v in layout.control_dirs(run_dir)}
    return layout.strays(run_dir, names), (f"not a variant=<name> directory of this run (a reader of the table "
                                           f"directory would read it); --repair or --resume moves it to "
                                           f"{mf.QUARANTINE}/")


def repair(vdir: Path) -> list[str]:
    """``xuezhan verify --repair`` on one locked variant directory: restore a damaged manifest from its backup
    (or the backup from the manifest) and move every unlisted entry of the table directories to
    ``_quarantine/``. Returns one line per change, each naming its file by its full path; chunk files are never
    touched (``--resume`` re-simulates damaged ones)."""
    manifest, note = recover(vdir)
    lines = [note] if note else []
    if note or backup_problem(vdir, manifest) or not (vdir / mf.BACKUP).exists():
        write_manifest(vdir, manifest)
        if not note:
            lines.append(f"{vdir / mf.BACKUP}: rewritten from {mf.MANIFEST}")
    ours, foreign = strays(vdir, {c["file"] for c in manifest["chunks"]})
    run = layout.run_of(vdir)
    return lines + [f"{run}/{line}" for line in quarantine(vdir, ours + foreign, run)]
