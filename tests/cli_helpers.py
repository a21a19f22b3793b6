"""Run the real console entry point (``simulator.cli.main``) in-process, as a user's shell would; and the runs
the runner and integrity tests compare bytes against (:func:`snapshot`, :func:`reference_fixture`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from simulator import cli, runner


def cli_run(argv: list[str], capsys) -> tuple[int, str, str]:
    """``xuezhan *argv`` through ``cli.main``: returns (exit code, stdout, stderr)."""
    old = sys.argv
    sys.argv = ["xuezhan", *argv]
    try:
        with pytest.raises(SystemExit) as exc:
            cli.main()
    finally:
        sys.argv = old
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
