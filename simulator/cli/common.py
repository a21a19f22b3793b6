"""What the ``xuezhan`` commands share: the one-line error exit (:func:`fail`), the ``--bot-timeout`` and
``--check`` options, and the interruption message.
"""

from __future__ import annotations

import os

import typer

INTERRUPTED = "interrupted: finished chunks are kept; rerun with --resume to continue"


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def set_bot_timeout(seconds: float | None) -> None:
    """--bot-timeout: the per-decision limit of Python bots, passed to the workers through their environment."""
    if seconds is None:
        return
    if not 0 <= seconds < float("inf"):
        raise fail(f"--bot-timeout must be a finite number of seconds >= 0 (0: no limit), got {seconds}")
    from simulator.agents import TIMEOUT_ENV

    os.environ[TIMEOUT_ENV] = repr(seconds)


def check_mode(check: str) -> None:
    from simulator.logs.manifest import CHECKS

    if check not in CHECKS:
        raise fail(f"--check {check!r}: expected one of {', '.join(CHECKS)}")
