"""The ``xuezhan`` command line (typer): thin — it parses, calls library functions and prints.

Every expected failure (bad tiles, bad rule files, bad paths, ...) is raised as a ``simulator.errors.UserError``
subclass by the library and printed here as one line
``error: ...`` with exit status 2, never as a traceback.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

import typer

from simulator.cli.catalog import list_command, rules_app
from simulator.cli.common import INTERRUPTED
from simulator.cli.common import fail as fail
from simulator.cli.design import design
from simulator.cli.hand import play, replay, score
from simulator.cli.logs import COMPARE_FORMATS as COMPARE_FORMATS
from simulator.cli.logs import compare, report, schema_command, verify
from simulator.cli.run import simulate, study, tune
from simulator.errors import UserError

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Monte Carlo rules statistics for Chengdu 血战到底 mahjong.")
# rich_markup_mode=None: click's plain help, which lists an option's choices (<loky|dask>) and shows a flag as
# a flag; shell completion: `xuezhan --install-completion` (typer's, for bash, zsh, fish, PowerShell)


def _version(value: bool) -> None:
    if value:
        from simulator import __version__

        typer.echo(f"xuezhan {__version__}")
        raise typer.Exit()


_DEBUG = {"on": False}


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Print the version and exit."),
             debug: bool = typer.Option(False, "--debug", help="On a Python bot's error, print its own traceback "
                                        "after the one-line error.")) -> None:
    """Monte Carlo rules statistics for Chengdu 血战到底 mahjong."""
    _DEBUG["on"] = debug


# ---- commands: each group lives in its own module (cli_hand, cli_run, cli_logs; list and rules in catalog), -----
# registered here in the order `xuezhan --help` lists them

for _command in (score, replay, simulate, study, tune, design, report, verify, compare):
    app.command()(_command)
app.command("list")(list_command)
rules_app.command("schema")(schema_command)  # in cli_logs: the compare document's schema is analysis'
app.add_typer(rules_app, name="rules")
app.command()(play)


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C: the run stops its workers, records finished chunks and exits (a default SIGTERM
    would leave the worker processes behind)."""
    raise KeyboardInterrupt


class _StderrLines(logging.Handler):
    """The library's log records as plain lines on the current stderr (no level or time: they read as the CLI's
    other notices; resolved at each record, so a captured stderr gets them)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            typer.echo(self.format(record), err=True)
        except Exception:  # noqa: BLE001 - logging's convention: a failing handler reports, never raises
            self.handleError(record)


def _log_to_stderr() -> None:
    """Logger ``xuezhan`` (compile notices, ...) to stderr from INFO up, once per process (tests call main often)."""
    logger = logging.getLogger("xuezhan")
    if not any(isinstance(h, _StderrLines) for h in logger.handlers):
        logger.addHandler(_StderrLines())
    logger.setLevel(logging.INFO)  # (records still propagate: the root has no handler in the CLI)


def _plain(message: str) -> str:
    """A usage error as one sentence: without the 'Value error, ' that typer's choice check (through pydantic)
    puts before "'table' is not one of ..." """
    return message.replace("Value error, ", "")


def main() -> None:
    """Console-script entry point: user errors (and usage errors) become one line and exit status 2."""
    _log_to_stderr()
    # typer may vendor click: take the exception classes from where typer's own come from.
    click = sys.modules[typer.BadParameter.__module__]
    signal.signal(signal.SIGTERM, _terminate)
    # a seat's `mymodule:MyBot` from the directory the command runs in, as uvicorn and celery do (last on the path:
    # a local analysis.py never shadows an installed module); workers inherit the path (loky, multiprocessing)
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    # loky's resource tracker (a process of its own, started with this interpreter's -W options) warns in several
    # lines about semaphores "leaked" by a killed run; it cleans them up anyway, so the warning only alarms.
    sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    try:
        code = app(standalone_mode=False)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        if _DEBUG["on"] and getattr(exc, "bot_traceback", ""):
            typer.echo(exc.bot_traceback.rstrip(), err=True)
        sys.exit(2)
    except click.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `xuezhan`: the help text is the answer
            exc.show()
            sys.exit(exc.exit_code)
        where = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        typer.echo(f"error: {_plain(exc.format_message())}{where}", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        typer.echo(f"error: {_plain(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except OverflowError as exc:  # a number that passed parsing but does not fit a machine integer
        typer.echo(f"error: a number is too large ({exc})", err=True)
        sys.exit(2)
    except RecursionError:  # YAML or --set values nested thousands deep
        typer.echo("error: the input is nested too deeply (thousands of nested lists or mappings in a rule file, "
                   "a study file or --set)", err=True)
        sys.exit(2)
    except OSError as exc:  # a path the file system refuses (name too long, ...) outside the checked ones
        typer.echo(f"error: {exc.filename or 'a file'}: {exc.strerror or exc}"[:400], err=True)
        sys.exit(2)
    except (KeyboardInterrupt, typer.Abort):
        typer.echo(INTERRUPTED, err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # python -m simulator.cli
    main()
