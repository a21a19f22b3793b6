"""``xuezhan verify``: every check a reader makes, on a whole run directory, one line per problem; and
``--repair`` (restore a damaged manifest from its backup, move stray entries to ``_quarantine/``).

The checks themselves live in :mod:`simulator.manifest` (one manifest and its files) and
:mod:`simulator.rundir` (study.json against the variant directories, backups, a writer at work); the readers
(``analysis.load.open_run``) call the same functions, so a run ``verify`` passes is one every reader opens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator import layout, rundir
from simulator import manifest as mf
from simulator.dirlock import DirLock
from simulator.errors import UserError


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


def verify_run(run_dir: Path, check: str = "full") -> tuple[list[str], int]:
    """Lines to print (``ok``/``BAD``/``BUSY`` first) and the number of problems of a run directory."""
    root, vdirs = _vdirs(Path(run_dir))
    busy = rundir.in_progress(Path(run_dir))
    if busy:
        return [f"BUSY {busy}"], 1
    lines, bad = [], 0
    manifests: dict[str, dict[str, Any]] = {}
    for vdir in vdirs:
        try:
            manifest = mf.read(vdir)
        except mf.ManifestError as exc:
            lines.append(f"BAD  {exc}")
            bad += 1
            continue
        manifests[layout.name_of(vdir)] = manifest
        found = [f"{layout.run_of(vdir)}/{line}" for line in mf.problems(vdir, manifest, check)]
        backup = rundir.backup_problem(vdir, manifest)
        if backup:
            found.append(f"{vdir}/{mf.BACKUP}: {backup} (`xuezhan verify --repair` rewrites it)")
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
            lines.append(f"BAD  {exc}")
            return lines, bad + 1
        clash = rundir.study_problems(root, study, [layout.name_of(v) for v in vdirs], manifests)
        entries, what = rundir.run_strays(root)
        clash += [f"{p}: {what}" for p in entries]
        lines += [f"BAD  {line}" for line in clash]
        bad += len(clash)
    return lines, bad


def repair_run(run_dir: Path) -> list[str]:
    """Repair every variant directory of a run under its lock (:func:`simulator.rundir.repair`); one line per
    change or per directory that cannot be repaired."""
    root, vdirs = _vdirs(Path(run_dir))
    lines = []
    if root is not None and rundir.run_strays(root)[0]:  # entries of RUN/<table>/ itself, under the run's lock
        lock = DirLock(root)
        lock.acquire()
        try:
            lines += [f"{root}/{line}" for line in rundir.quarantine(root, rundir.run_strays(root)[0], root)]
        finally:
            lock.release()
    for vdir in vdirs:
        lock = DirLock(vdir)
        lock.acquire()  # refused (RunError) while a run writes there
        try:
            lines += [f"{layout.run_of(vdir)}/{line}" for line in rundir.repair(vdir)]
        except mf.ManifestError as exc:
            lines.append(f"cannot repair {vdir}: {exc}")
        finally:
            lock.release()
    return lines
