"""Directory locks of a run: the exclusive ``flock`` a writer holds on ``DIR/.lock`` and on each
``DIR/_variants/variant=<name>/.lock`` (``simulator.logs.layout``) from before it inspects a directory until it ends
(docs/logs.md, "Layout").

Readers probe the same locks (``simulator.logs.manifest.writer_active``) to tell a run in progress from a damaged one.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from simulator.errors import UserError
from simulator.logs.layout import CONTROL
from simulator.logs.manifest import LOCK_NAME

MAX_NAME = 200  # variant names: "variant=" + name must fit a 255-byte file name


class RunError(UserError):
    """A simulation that cannot start or continue as asked (bad argument, output directory conflict)."""


def checkpoint(point: str, vdir: Path) -> None:
    """Test seam: called at named points of a run ("before_lock", "locked") with the variant directory, so a
    test can interleave two runs deterministically. Does nothing unless a test sets :data:`CHECKPOINT`."""
    if CHECKPOINT is not None:
        CHECKPOINT(point, vdir)


CHECKPOINT: Callable[[str, Path], None] | None = None


def check_out_dir(out_dir: Path) -> None:
    """The output directory exists as a writable directory or can be created, and is not inside another run
    (``RUN/wins/variant=x/nested``, ``RUN/_variants``, ...: anything below a directory holding ``_variants/``)."""
    probe = Path(os.path.abspath(out_dir))
    if len(os.fsencode(probe)) + 32 + MAX_NAME > os.pathconf("/", "PC_PATH_MAX"):
        raise RunError(f"--out: the path is {len(os.fsencode(probe)):,} bytes long; with the files inside it, "
                       f"above the file system's limit of {os.pathconf('/', 'PC_PATH_MAX'):,}")
    too_long = [p for p in probe.parts if len(os.fsencode(p)) > 255]
    if too_long:
        raise RunError(f"--out: the name {too_long[0][:40]}... is {len(os.fsencode(too_long[0]))} bytes long, "
                       "above the file system's 255")
    host = next((p for p in probe.parents if (p / CONTROL).is_dir()), None)
    if host is not None:
        raise RunError(f"--out {out_dir}: inside the run directory {host} (only its own files may be there, and "
                       "its readers and --resume would take a run nested in it for damage); choose a directory "
                       "outside it")
    while not probe.exists():
        if probe.is_symlink():  # dangling symlink
            raise RunError(f"--out {out_dir}: {probe} is a broken symlink")
        probe = probe.parent
    if not probe.is_dir():
        raise RunError(f"--out {out_dir}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise RunError(f"--out {out_dir}: {probe} is not writable")


def _retry_lock(fd: int, path: Path) -> bool:
    """A reader probes the lock for an instant (``simulator.logs.manifest.writer_active``): try again for 0.2 s
    before concluding that another run holds it."""
    for _ in range(20):
        time.sleep(0.01)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue
        try:
            return os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            return False
    return False


class DirLock:
    """The exclusive advisory lock of a variant directory, taken before the directory is inspected.

    Creates the directory (and missing parents) if needed; :meth:`undo` removes what it created when the run
    is refused before writing anything. The lock (``flock``) is released by the kernel even on kill -9."""

    def __init__(self, vdir: Path) -> None:
        self.vdir = vdir
        self.created: list[Path] = []
        self.lock_created = False
        self.fd: int | None = None

    def acquire(self) -> None:
        vdir = self.vdir
        if vdir.exists() and not vdir.is_dir():
            raise RunError(f"{vdir} exists and is not a directory")
        missing = [p for p in (*reversed(vdir.parents), vdir) if not p.exists()]
        try:
            for p in missing:
                p.mkdir()
                self.created.append(p)
        except FileExistsError:  # created meanwhile by a concurrent run: fine, the lock decides
            pass
        except OSError as exc:
            self.undo()
            raise RunError(f"cannot create {exc.filename or vdir}: {exc.strerror}") from None
        checkpoint("before_lock", vdir)
        path = vdir / LOCK_NAME
        try:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                self.lock_created = True
            except FileExistsError:
                fd = os.open(path, os.O_RDWR)
        except OSError as exc:
            self.undo()
            raise RunError(f"cannot create {path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            ours = os.fstat(fd).st_ino == os.stat(path).st_ino  # False: unlinked by a refused run after we opened it
        except BlockingIOError:
            ours = _retry_lock(fd, path)
        except FileNotFoundError:
            ours = False
        if not ours:
            os.close(fd)
            # Not ours: remove nothing, not even the directories we may have created (the other run uses them).
            self.created, self.lock_created = [], False
            raise RunError(f"{vdir}: another xuezhan run is writing there; wait for it or choose another --out")
        self.fd = fd
        checkpoint("locked", vdir)

    def undo(self) -> None:
        """Remove the lock file and the directories this run created, if they hold nothing else."""
        if self.fd is not None and self.lock_created:
            (self.vdir / LOCK_NAME).unlink(missing_ok=True)
        for p in reversed(self.created):
            try:
                p.rmdir()
            except OSError:
                break
        self.created = []

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None



@contextmanager
def run_lock(out_dir: Path) -> Iterator[None]:
    """Hold the lock of the run directory ``out_dir`` itself (created if needed): one run or study at a time
    writes there. Refused at once when another holds it; on an error inside, what the lock created (the lock
    file, empty directories) is removed."""
    check_out_dir(out_dir)
    lock = DirLock(Path(out_dir))
    lock.acquire()
    try:
        yield
    except BaseException:
        lock.undo()
        raise
    finally:
        lock.release()
