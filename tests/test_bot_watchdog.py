"""A misbehaving Python bot ends the run with one error line and a non-zero exit, whatever it catches (issue 51,
item 2): the time-out is no ``Exception`` a fallback swallows, a late answer is refused, a bot that keeps running
after its time-out is stopped by a watchdog in its worker, and a bot that ends its process (``os._exit(0)``) never
ends ``simulate`` with success — Python bots always play in a worker process, ``--jobs 1`` too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import bot_module, cli_run

from simulator.logs import manifest as mf

BOTS = '''
import os, time
from simulator.agents import GreedyBot


class Fallback(GreedyBot):
    """The ordinary fallback: think, and on any error play greedy."""
    def act(self, obs):
        try:
            time.sleep(30)
        except Exception:
            pass
        return super().act(obs)


class Late(GreedyBot):
    """Swallows everything, answers once interrupted: late."""
    def act(self, obs):
        try:
            time.sleep(30)
        except BaseException:
            pass
        return super().act(obs)


class Hangs(GreedyBot):
    """Swallows everything and never answers."""
    def act(self, obs):
        while True:
            try:
                time.sleep(30)
            except BaseException:
                pass


class Exits(GreedyBot):
    def act(self, obs):
        os._exit(0)
'''


@pytest.fixture()
def bots(tmp_path: Path, monkeypatch):
    yield from bot_module(tmp_path, monkeypatch, "watchbots", BOTS)


def argv(out: Path, bot: str) -> list[str]:
    return ["simulate", "chengdu", "-n", "4", "--chunk-size", "2", "--quiet", "--jobs", "1", "--bot-timeout", "0.3",
            "--out", str(out), "--set", f"seats=[watchbots:{bot}, greedy, greedy, greedy]"]


def check(out: Path, code: int, err: str, says: str) -> None:
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert says in err, err
    assert mf.read(out / "_variants" / "variant=chengdu")["hands_done"] == 0


@pytest.mark.parametrize("bot, says", [
    ("Fallback", "bot watchbots:Fallback: no answer within 0.3 s (hand 0, seat 0, decision "),
    ("Late", "bot watchbots:Late: answered after "),
    ("Hangs", "bot watchbots:Hangs: no answer within 0.3 s (hand 0, seat 0, decision "),
])
def test_a_bot_that_swallows_its_time_out_ends_the_run_with_one_line(bots: Path, tmp_path: Path, capsys, bot,
                                                                     says):
    code, _, err = cli_run(argv(tmp_path / "o", bot), capsys)
    check(tmp_path / "o", code, err, says)


def test_a_bot_that_ends_its_process_never_ends_the_run_with_success(bots: Path, tmp_path: Path):
    """In a child process: where the bot plays in the xuezhan process itself, its os._exit(0) ends it with 0."""
    proc = subprocess.run([sys.executable, "-m", "simulator.cli", *argv(tmp_path / "o", "Exits")],
                          capture_output=True, text=True, timeout=600, env=os.environ)
    check(tmp_path / "o", proc.returncode, proc.stderr,
          "a worker died during a chunk with Python bots (a bot that ends its process, such as os._exit")
