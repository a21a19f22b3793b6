"""Phase 2 of a run: open a variant's locked directory (clean up an interrupted run, write the manifest) as a
:class:`OpenRun`, which then makes each finished chunk durable (its files first, then the manifest entry listing it).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from simulator.files import atomic_write
from simulator.logs import layout, rundir
from simulator.logs import manifest as mf
from simulator.logs.dirlock import RunError
from simulator.logs.manifest import part_name
from simulator.run.plan import ChunkResult, Plan, RunSpec, clean_variant, iter_chunks, make_table_dirs, new_manifest


@dataclass
class OpenRun:
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


def open_variant(plan: Plan, spec: RunSpec) -> OpenRun:
    vdir = plan.vdir
    make_table_dirs(vdir)
    manifest = new_manifest(plan.variant, spec, plan.chunk_size)
    listed = {c["file"] for c in (plan.existing or {}).get("chunks", [])}
    plan.notes += clean_variant(vdir, plan.done, manifest, listed)
    if plan.existing is not None:
        manifest["source"] = plan.existing.get("source", manifest["source"])
    if plan.stale:  # what this run's check found (the latest, on a resume); absent when nothing is stale
        manifest["stale"] = [st._asdict() for st in plan.stale]
    manifest["chunks"] = list(plan.done)
    done = {c["first"] for c in plan.done}
    pending = (c for c in iter_chunks(spec.hands, plan.chunk_size) if c[0] not in done)
    n_pending = -(-spec.hands // plan.chunk_size) - len(done)
    run = OpenRun(plan, manifest, pending, n_pending)
    if plan.existing is None or not _unchanged(vdir, manifest):  # a finished run resumed writes nothing
        run.write_manifest()
    return run


def _unchanged(vdir: Path, manifest: dict) -> bool:
    """Whether the manifest and its backup on disk are already the bytes ``manifest`` would be written as (a no-op
    ``--resume`` of a finished run then needs no disk space)."""
    mf.refresh_totals(manifest)
    data = mf.manifest_bytes(manifest)
    try:
        return all((vdir / name).read_bytes() == data for name in (mf.MANIFEST, mf.BACKUP))
    except OSError:
        return False
