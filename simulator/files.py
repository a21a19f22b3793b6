"""Atomic file writes: a file is either absent (or its old self) or complete, never partial, even when the process
is killed mid-write. Every writer of the project's outputs (log chunks, manifests, study records, the suit table)
goes through :func:`atomic_write`."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, tmp_dir: Path | None = None, tag: str | None = None) -> None:
    """Write ``data`` to ``path`` so that ``path`` is either absent/old or complete, never partial.

    The temporary (``.<tag>.<name>.<pid>.tmp``; ``tag`` defaults to the name of the file's directory) goes to
    ``tmp_dir`` (default: beside ``path``, without a tag; same file system,
    so the rename is atomic): the runner keeps temporaries out of the table directories that readers scan."""
    tag = "" if tmp_dir is None else f"{tag or path.parent.name}."  # which table directory the file goes to
    tmp = (tmp_dir or path.parent) / f".{tag}{path.name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    finally:
        if tmp.exists():  # interrupted between open and rename
            tmp.unlink()
