"""The ``xuezhan`` command line (typer): thin — it parses, calls library functions and prints.

Every expected failure (bad tiles, bad rule files, bad paths, ...) is raised as a ``simulator.errors.UserError``
subclass by the library and printed here as one line
``error: ...`` with exit status 2, never as a traceback.
"""

from __future__ import annotations

import sys

import typer

from simulator.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Monte Carlo rules statistics for Chengdu 血战到底 mahjong.")

def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


# ---- commands: each lives in its own section, calling into its module --------------------------------------


def main() -> None:
    """Console-script entry point: user errors become one line and exit status 2."""
    try:
        app()
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted: finished chunks are kept; rerun with --resume to continue", err=True)
        sys.exit(130)
