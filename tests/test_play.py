"""xuezhan play: a person at the terminal is one more Python bot."""

from __future__ import annotations

import io

from cli_helpers import cli_run


def test_play_a_hand_by_pressing_enter(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 300))
    code, out, err = cli_run(["play", "chengdu", "--seed", "3", "--seat", "1"], capsys)
    assert code in (0, None), err
    assert "seat 1 — void" in out and "legal: void m, void p, void s" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("> hand over: net scores") or last.startswith("hand over: net scores")
    scores = eval(last.split("net scores")[1].split("(")[0])  # noqa: S307 - a list literal we printed
    assert sum(scores) == 0


def test_an_illegal_answer_is_asked_again_and_ended_input_is_one_error_line(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("z\npung\n"))
    code, out, err = cli_run(["play", "chengdu", "--seed", "3", "--seat", "0"], capsys)
    assert "not legal here; choose one of: void m, void p, void s" in out
    assert code == 2 and err.strip() == "error: play: the input ended before the hand was over"


def test_a_person_has_no_decision_time_limit(monkeypatch, capsys):
    """--bot-timeout bounds bots, not the person: an answer after the limit is still taken (here the limit is 0.05 s
    and the person takes 0.2 s at the first decision)."""
    import time

    lines = iter(["\n"] * 300)

    def slow_readline(*_args):
        slow_readline.calls += 1
        if slow_readline.calls == 1:
            time.sleep(0.2)
        return next(lines, "")

    slow_readline.calls = 0
    stdin = io.StringIO()
    stdin.readline = slow_readline
    monkeypatch.setattr("sys.stdin", stdin)
    monkeypatch.setenv("XUEZHAN_BOT_TIMEOUT", "0.05")
    code, out, err = cli_run(["play", "chengdu", "--seed", "3", "--seat", "1"], capsys)
    assert code in (0, None), err
    assert "hand over: net scores" in out
