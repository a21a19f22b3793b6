"""Bad input at the command line: one line naming the problem, exit code 2, no traceback and nothing written;
an interrupted tune exits 130 with its resume hint. Each case is refused before any hand is played."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from analysis_synth import example_run
from cli_helpers import cli_run, snapshot

RUN = Path(__file__).parent / "data" / "analysis_golden" / "caps"  # a committed run: cap4 (baseline), cap3, …


@pytest.mark.parametrize(("argv", "message"), [
    (["compare", str(RUN), "cap3", "cap3"], "error: compare cap3 with itself: name two different variants"),
    (["compare", str(RUN), "cap4", "cap3", "--detect", "0"],
     "error: --detect must be a positive finite number, got 0.0"),
    (["report", str(RUN), "--session-hands", "0", "--out", "{tmp}/r.html"],
     "error: --session-hands must be at least 1, got 0"),
    (["play", "chengdu", "--seat", "4"], "error: --seat 4: expected 0, 1, 2 or 3"),
    (["play", "chengdu", "--hand", "-1"], "error: --hand -1: hand ids are 0 or more"),
    (["replay", "chengdu", "--hand", "3"], "error: replay needs CONFIG and --seed (or --run DIR)"),
    (["replay", "chengdu", "--seed", "-1"], "error: --seed must be a non-negative integer, got -1"),
    (["replay", "chengdu", "--seed", "1", "--variant", "cap3"], "error: --variant needs --run"),
    (["replay", "chengdu", "--run", str(RUN)],
     "error: --run replays the run's own rules, seed and seating: drop CONFIG"),
])
def test_bad_arguments_are_one_line(argv, message, tmp_path, capsys):
    before = snapshot(RUN)
    code, out, err = cli_run([a.replace("{tmp}", str(tmp_path)) for a in argv], capsys)
    assert (code, err.strip(), out) == (2, message, "")
    assert snapshot(RUN) == before and not list(tmp_path.iterdir())


def test_unreadable_logs_are_named_with_the_check_that_finds_them(tmp_path, capsys):
    """Bits flipped inside a Parquet part (same size, so ``--check sizes`` passes it) surface while reading: one
    line naming the run and ``xuezhan verify``, not a pyarrow traceback, and no report."""
    run = example_run(tmp_path / "run")
    part = sorted((run / "players").rglob("*.parquet"))[-1]  # not a first chunk: --check sizes reads its footer
    data = bytearray(part.read_bytes())
    data[4:200] = bytes(b ^ 0xFF for b in data[4:200])  # the first column pages, after the magic
    part.write_bytes(bytes(data))
    code, out, err = cli_run(["report", str(run), "--check", "sizes", "--boot", "0", "--out",
                              str(tmp_path / "r.html")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: cannot read the logs of {run} (") and f"`xuezhan verify {run}`" in err
    assert "Traceback" not in err and not (tmp_path / "r.html").exists()


def test_an_interrupted_tune_keeps_its_trials_and_says_how_to_continue(monkeypatch, tmp_path, capsys):
    import simulator.run.tune as tn

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tn, "tune", interrupted)
    code, out, err = cli_run(["tune", "chengdu", "--budget", "3", "--out", str(tmp_path), "-q"], capsys)
    assert (code, err.strip()) == (130, "error: interrupted: finished trials are kept; rerun the same command to "
                                        "continue")


def test_play_takes_a_typed_answer_not_only_the_default(monkeypatch, capsys):
    """Typing ``s`` at 定缺 declares the void the default (Enter: the first legal, m) would not; every later
    view of the table shows it."""
    monkeypatch.setattr("sys.stdin", io.StringIO("s\n" + "\n" * 300))
    code, out, err = cli_run(["play", "chengdu", "--seed", "3", "--seat", "1"], capsys)
    assert code in (0, None), err
    after = out.split("legal: void m, void p, void s", 1)[1]
    assert "seat 1 (you) void s" in after and "seat 1 (you) void m" not in after
