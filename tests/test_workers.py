"""Data integrity when processes die (issue 8, tests/test_integrity.py): a lost worker says to resume and leaves a
run that resumes; a killed parent takes its workers with it. Linux: the tests read worker pids from /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import start_paused, wait_paused

from simulator.logs import layout
from simulator.logs import manifest as mf


def _children(pid: int) -> set[int]:
    kids = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids |= {int(x) for x in (task / "children").read_text().split()}
    return kids


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _start(out: Path, hands: int = 4000) -> subprocess.Popen:
    """A two-worker run paused after its first listed chunk (cli_helpers.start_paused): it cannot finish before
    the test kills something; it goes on once ``out.parent / "pause" / "release"`` exists."""
    args = ["simulate", "chengdu", "-n", str(hands), "--chunk-size", "100", "--seed", "1", "--jobs", "2",
            "--quiet", "--out", str(out / "run")]
    return start_paused(args, out / "pause")


def _wait_for_workers(proc: subprocess.Popen, out: Path) -> set[int]:
    """Wait until the run is paused (a chunk done: workers up); return the worker pids."""
    wait_paused(proc, out / "pause")
    workers = {k for k in _children(proc.pid) if "resource_tracker" not in Path(f"/proc/{k}/cmdline").read_text()}
    assert workers
    return workers


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_a_dead_worker_says_rerun_with_resume(tmp_path: Path):
    proc = _start(tmp_path)
    workers = _wait_for_workers(proc, tmp_path)
    os.kill(min(workers), signal.SIGKILL)  # as the out-of-memory killer would
    (tmp_path / "pause" / "release").touch()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert err.strip().splitlines() == ["error: a worker died (out of memory?) — rerun with --resume"]
    vdir = layout.control_dir(tmp_path / "run", "chengdu")
    assert not mf.problems(vdir, mf.read(vdir))


# A worker killed while it holds the result pipe's write lock (loky cannot recover: the lock is a semaphore nobody
# releases; the other worker blocks on it, the pool's reader on the half-sent result). The worker of chunk 5 takes
# the lock, sends part of a result and kills itself, deterministically; run_chunk is replaced by a __main__
# function, which joblib's cloudpickle sends to the workers by value.
_DIES_HOLDING_THE_LOCK = """
import gc, os, signal, struct, sys
from simulator import cli
from simulator.run import runner
real = runner.run_chunk
def run_chunk(variant, first, last, *args):
    if first // 100 == 4:  # the fifth chunk
        from joblib.externals.loky.backend.queues import SimpleQueue
        q = next(q for q in gc.get_objects() if isinstance(q, SimpleQueue))
        q._wlock.acquire()
        os.write(q._writer.fileno(), struct.pack("!i", 1000) + bytes(10))  # a result cut off after 10 of 1000 bytes
        os.kill(os.getpid(), signal.SIGKILL)
    return real(variant, first, last, *args)
runner.run_chunk = run_chunk
sys.argv = ["xuezhan", *sys.argv[1:]]
cli.main()
"""


def test_a_worker_killed_holding_the_result_lock_does_not_hang_the_run(tmp_path: Path):
    args = ["simulate", "chengdu", "-n", "4000", "--chunk-size", "100", "--seed", "1", "--jobs", "2", "--quiet",
            "--out", str(tmp_path / "run")]
    proc = subprocess.run([sys.executable, "-c", _DIES_HOLDING_THE_LOCK, *args], capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == ["error: a worker died (out of memory?) — rerun with --resume"]
    vdir = layout.control_dir(tmp_path / "run", "chengdu")
    assert not mf.problems(vdir, mf.read(vdir))
    resumed = subprocess.run([sys.executable, "-m", "simulator.cli", *args, "--resume"], capture_output=True,
                             text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert mf.read(vdir)["hands_done"] == 4000 and not mf.problems(vdir, mf.read(vdir))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_parent_takes_its_workers_with_it(tmp_path: Path, sig):
    proc = _start(tmp_path)
    workers = _wait_for_workers(proc, tmp_path)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGTERM:
        assert proc.returncode == 130 and err.strip().splitlines()[-1].startswith("error: interrupted")
    assert "leaked" not in err and "Traceback" not in err, err  # loky's resource tracker is quiet (issue 27)
    deadline = time.monotonic() + 20
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)
    # killed while paused after a manifest write: what it lists is on disk and nothing else was committed
    vdir = layout.control_dir(tmp_path / "run", "chengdu")
    assert mf.read(vdir)["hands_done"] > 0 and not mf.problems(vdir, mf.read(vdir))
