"""Break a loky pool that a killed worker has deadlocked, so that the run stops with "a worker died" instead of hanging.

loky's workers send their results through one pipe guarded by a semaphore. A worker killed while it holds that
semaphore (the out-of-memory killer during a result's send) never releases it: the other workers block on it
forever, and the pool's manager thread blocks reading the dead worker's half-sent message, so loky never notices
the death and joblib waits forever (a known limitation: a semaphore has no owner to release it). In the
integrity test (a worker killed at a random moment) this happened in about one run in eight.

:class:`PoolWatch` is a thread that polls the pool's worker processes. When one has died by a signal or crashed and
loky has not reported it within ``grace`` seconds, the watch kills the remaining workers and closes this process's
copy of the result pipe's write end (:func:`_close_for_good`): the manager thread's read then ends (end of file),
loky marks the pool broken, and joblib raises its usual lost-worker error, which the runner turns into its one-line
message. It touches loky's private attributes, guarded: if they are not there (another joblib), it watches nothing.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

GRACE = 5.0  # s: loky reports a dead worker within milliseconds unless it is deadlocked
POLL = 0.25  # s


def _executor() -> Any:
    """The reusable loky executor joblib is using, or None."""
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:  # pragma: no cover - joblib without loky
        return None
    return getattr(reusable_executor, "_executor", None)


class PoolWatch(threading.Thread):
    """Watch the current loky pool from start() until stop(); see the module docstring. ``broke`` is True once the
    watch had to break the pool itself."""

    def __init__(self, grace: float = GRACE) -> None:
        super().__init__(name="xuezhan-pool-watch", daemon=True)
        self.grace = grace
        self.broke = False
        self._done = threading.Event()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        died_at: float | None = None
        while not self._done.wait(POLL):
            ex = _executor()
            procs = getattr(ex, "_processes", None)
            if not isinstance(procs, dict):
                continue
            dead = [p for p in list(procs.values()) if p.exitcode not in (None, 0)]
            if not dead:
                died_at = None
                continue
            now = time.monotonic()
            died_at = died_at if died_at is not None else now
            if now - died_at >= self.grace:
                self._break(ex)
                return

    def _break(self, ex: Any) -> None:
        self.broke = True
        kill_workers()
        _close_for_good(getattr(getattr(ex, "_result_queue", None), "_writer", None))


def _close_for_good(conn: Any) -> None:
    """Close a ``multiprocessing`` connection's descriptor so that its later ``close()`` (loky's manager thread, once
    the read has ended) finds it closed. ``conn.close()`` here raced with that thread: both closed the descriptor,
    and the second close failed with a bad file descriptor (a traceback on stderr), or could have closed a file
    opened in between under the same number."""
    fd = getattr(conn, "_handle", None)
    if not isinstance(fd, int):
        return
    conn._handle = None  # before the close: the reader wakes only once no write end is left
    os.close(fd)


def kill_workers() -> None:
    """SIGKILL this process's live loky workers and reap them (loky's processes have no ``kill()``)."""
    import multiprocessing

    procs = [p for p in multiprocessing.active_children() if type(p).__name__ == "LokyProcess"]
    for p in procs:
        if p.exitcode is None:
            os.kill(p.pid, signal.SIGKILL)
    for p in procs:
        p.join(timeout=5)
