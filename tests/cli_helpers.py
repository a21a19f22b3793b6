"""Run the real console entry point (``simulator.cli.main``) in-process, as a user's shell would; and the runs
the runner and integrity tests compare bytes against (:func:`snapshot`, :func:`reference_fixture`)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from simulator import cli
from simulator.run import runner


def cli_run(argv: list[str], capsys) -> tuple[int, str, str]:
    """``xuezhan *argv`` through ``cli.main``: returns (exit code, stdout, stderr)."""
    old, env = sys.argv, dict(os.environ)
    sys.argv = ["xuezhan", *argv]
    try:
        with pytest.raises(SystemExit) as exc:
            cli.main()
    finally:  # the CLI sets process-wide state for its workers (--bot-timeout's environment): never leak it
        sys.argv = old
        os.environ.clear()
        os.environ.update(env)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of a run (manifest and Parquet parts) by relative path, lock file excluded."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != runner.LOCK_NAME}


def reference_fixture(run: Callable[[Path], object]):
    """A module-scoped fixture ``reference``: the directory of one clean ``run(out)``, the bytes every other way
    of running (resumed, parallel, damaged and repaired) must reproduce. Use as ``reference =
    reference_fixture(run)`` in the test module."""

    @pytest.fixture(scope="module")
    def reference(tmp_path_factory) -> Path:
        out = tmp_path_factory.mktemp("ref")
        run(out)
        return out

    return reference


# A run that stops right after its first manifest write listing a finished chunk (the parent commits chunks in its
# main thread, so it sits there, workers up, the run unfinished, signals delivered) until the release file exists:
# tests kill or interrupt it at that point, with no race against the run finishing first.
_PAUSED = """
import sys, time
from pathlib import Path
from simulator import cli
from simulator.run import runner
paused, release = Path(sys.argv[1]), Path(sys.argv[2])
write = runner.OpenRun.write_manifest
def write_then_pause(self):
    write(self)
    if self.manifest["chunks"] and not paused.exists():
        paused.write_text(str(sum(c["last"] - c["first"] + 1 for c in self.manifest["chunks"])))
        while not release.exists():
            time.sleep(0.01)
runner.OpenRun.write_manifest = write_then_pause
sys.argv = ["xuezhan", *sys.argv[3:]]
cli.main()
"""


def start_paused(argv: list[str], where: Path, **popen) -> subprocess.Popen:
    """``xuezhan *argv`` in a child that pauses after its first listed chunk (see :func:`wait_paused`); it goes on
    once ``where / "release"`` exists. ``where`` must not be inside the run's output directory."""
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, "-c", _PAUSED, str(where / "paused"), str(where / "release"), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def wait_paused(proc: subprocess.Popen, where: Path, timeout: float = 300) -> int:
    """Wait until the child of :func:`start_paused` is paused; returns the hands its manifest lists as done."""
    deadline = time.monotonic() + timeout
    while not (where / "paused").exists():
        assert proc.poll() is None, f"run ended before pausing: {proc.communicate()[1]}"
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("no chunk finished in time")
        time.sleep(0.01)
    time.sleep(0.05)  # the file is written before the pause loop starts
    return int((where / "paused").read_text())


def bot_module(tmp_path: Path, monkeypatch, name: str, source: str):
    """Write a Python bot module ``name`` into ``tmp_path/bots``, importable here and in worker processes; yields
    the directory and forgets the module afterwards (use in a fixture: ``yield from bot_module(...)``)."""
    d = tmp_path / "bots"
    d.mkdir()
    (d / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(d))
    monkeypatch.setenv("PYTHONPATH", f"{d}:{':'.join(sys.path)}")  # for worker processes
    yield d
    sys.modules.pop(name, None)


def bare_venv(venv: Path) -> tuple[Path, Path]:
    """A new venv without pip at ``venv`` that sees this environment's installed dependencies by plain path (its
    own .pth files, this checkout's install among them, stay unread), so a test can install xuezhan into it alone
    (``pip --python``, ``--no-deps``); returns its python and its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    deps = [p for p in dict.fromkeys(sys.path + [sysconfig.get_paths()["purelib"]]) if p.endswith("site-packages")]
    (purelib / "deps.pth").write_text("\n".join(deps) + "\n")
    return python, purelib
