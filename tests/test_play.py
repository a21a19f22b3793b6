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
