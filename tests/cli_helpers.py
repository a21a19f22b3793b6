"""Run the real console entry point (``simulator.cli.main``) in-process, as a user's shell would."""

from __future__ import annotations

import sys

import pytest

from simulator import cli


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
