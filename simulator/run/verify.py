"""``xuezhan verify``: every check a reader makes, on a whole run directory, one line per problem; and
``--repair`` (restore a damaged manifest from its backup, move stray entries to ``_quarantine/``).

The checks themselves live in :mod:`simulator.logs.manifest` (one manifest and its files) and
:mod:`simulator.logs.rundir` (study.json against the variant directories, backups, a writer at work); the readers
(``analysis.load.open_run``) call the same functions, so a run ``verify`` passes is one every reader opens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator.errors import UserError
from simulator.logs import layout, rundir
from simulator.logs import manifest as mf
from simulator.logs.dirlock import DirLock


class VerifyError(UserError):
    """A path that is not a run directory at all."""


def _vdirs(run_dir: Path) -> tuple[Path | None, list[Path]]:
    """(the run directory, None when given one variant directory; its variant directories)."""
    if not run_dir.is_dir():
        raise VerifyError(f"{run_dir}: run directory not found")
    if layout.is_control_dir(run_dir):
        return None, [run_dir]
    old = layout.old_layout(run_dir)
    if old:
        raise VerifyError(old)
    vdirs = layout.control_dirs(run_dir)
    if not vdirs:
        raise VerifyError(f"{run_dir}: not a run directory (no {layout.CONTROL}/variant=<name>/ subdirectories)")
    return run_dir, vdirs


# What fixes each kind of problem verify finds (verify_report's hint names only those it found).
FIXES = {
    "links": "replace each link with a copy of what it points to",
    "manifest": "`xuezhan verify --repair` (or --resume) restores a damaged manifest from its backup",
    "backup": "`xuezhan verify --repair` rewrites a damaged backup",
    "strays": f"`xuezhan verify --repair` (or --resume) moves stray entries to {mf.QUARANTINE}/",
    "chunks": "`xuezhan simulate/study ... --resume` re-simulates the damaged chunks",
    "study": f"{rundir.STUDY_FILE} and the variant directories disagree: restore the run as it was written",
    "busy": "wait for the run to finish",
}


def verify_run(run_dir: Path, check: str = "full") -> tuple[list[str], int]:
    """Lines to print (``ok``/``BAD``/``BUSY`` first) and the number of problems of a run directory."""
    lines, bad, _ = verify_report(run_dir, check)
    return lines, bad


def verify_report(run_dir: Path, check: str = "full") -> tuple[list[str], int, str]:
    """:func:`verify_run`'s lines and count, and what fixes the problems found (:data:`FIXES`, those that apply,
    in that order; "" when there are none). Control characters in the lines are escaped (a newline in a name
    must not start a line of its own)."""
    kinds: set[str] = set()
    lines, bad = _verify(Path(run_dir), check, kinds)
    return [layout.shown(line) for line in lines], bad, "; ".join(v for k, v in FIXES.items() if k in kinds)


def _verify(run_dir: Path, check: str, kinds: set[str]) -> tuple[list[str], int]:
    root, vdirs = _vdirs(run_dir)
    busy = rundir.in_progress(run_dir)
    if busy:
        kinds.add("busy")
        return [f"BUSY {busy}"], 1
    linked = rundir.link_lines(root or layout.run_of(run_dir))
    if linked:  # checked through a link, a file would pass; nothing else is checked until it is replaced
        kinds.add("links")
        return [f"BAD  {line}" for line in linked], len(linked)
    lines, bad = [], 0
    manifests: dict[str, dict[str, Any]] = {}
    for vdir in vdirs:
        try:
            manifest = mf.read(vdir)
        except mf.ManifestError as exc:
            lines.append(f"BAD  {exc}")
            kinds.add("manifest")
            bad += 1
            continue
        manifests[layout.name_of(vdir)] = manifest
        run = layout.run_of(vdir)
        chunks = [f"{run}/{p}" for found in mf.bad_chunks(vdir, manifest, check).values() for p in found]
        strays = [f"{run}/{p}" for p in mf.unlisted_problems(vdir, manifest)]
        backup = rundir.backup_problem(vdir, manifest)
        found = chunks + strays + ([f"{vdir}/{mf.BACKUP}: {backup} (`xuezhan verify --repair` rewrites it)"]
                                   if backup else [])
        kinds.update(k for k, v in (("chunks", chunks), ("strays", strays), ("backup", backup)) if v)
        lines += [f"BAD  {line}" for line in found]
        bad += len(found)
        state = "complete" if manifest["complete"] else "INCOMPLETE (continue it with --resume)"
        files = len(manifest["chunks"]) * len(mf.TABLES)
        lines.append(f"{'ok ' if not found else 'BAD'}  {vdir}: {files:,} files checked ({check}), "
                     f"{manifest['hands_done']:,}/{manifest['hands']:,} hands, {state}")
    if root is not None:
        try:
            study = rundir.read_study(root)
        except mf.ManifestError as exc:
            kinds.add("study")
            lines.append(f"BAD  {exc}")
            return lines, bad + 1
        clash = rundir.study_problems(root, study, [layout.name_of(v) for v in vdirs], manifests)
        entries, what = rundir.run_strays(root)
        kinds.update(k for k, v in (("study", clash), ("strays", entries)) if v)
        clash += [f"{p}: {what}" for p in entries]
        lines += [f"BAD  {line}" for line in clash]
        bad += len(clash)
    return lines, bad


def repair_run(run_dir: Path) -> list[str]:
    """Repair every variant directory of a run under its lock (:func:`simulator.logs.rundir.repair`); one line per
    change (``repaired  <path>: ...``) or per directory that cannot be repaired (``cannot repair <path>: ...``),
    control characters escaped. A run holding a symbolic link is not touched (one line per link)."""
    root, vdirs = _vdirs(Path(run_dir))
    linked = rundir.link_lines(root or layout.run_of(Path(run_dir)))
    if linked:
        return [layout.shown(f"cannot repair {line}") for line in linked]
    lines = []
    if root is not None and rundir.run_strays(root)[0]:  # entries of RUN/<table>/ itself, under the run's lock
        lock = DirLock(root)
        lock.acquire()
        try:
            lines += [f"repaired  {root}/{line}" for line in rundir.quarantine(root, rundir.run_strays(root)[0], root)]
        finally:
            lock.release()
    for vdir in vdirs:
        lock = DirLock(vdir)
        lock.acquire()  # refused (RunError) while a run writes there
        try:
            lines += [f"repaired  {line}" for line in rundir.repair(vdir)]
        except mf.ManifestError as exc:
            lines.append(f"cannot repair {vdir}: {exc}")
        finally:
            lock.release()
    return [layout.shown(line) for line in lines]
