"""``xuezhan score``: every worked vector passes, JSON and breakdown output, one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simulator.cli import app
from simulator.errors import UserError

VECTORS = Path(__file__).parent / "data" / "scoring_vectors.yaml"
runner = CliRunner()


def user_error(args: list[str]) -> str:
    """Invoke in-process and return the one-line UserError message (cli.main prints it as ``error: ...``)."""
    result = runner.invoke(app, args)
    assert isinstance(result.exception, UserError), (result.output, result.exception)
    message = str(result.exception)
    assert "\n" not in message and message
    return message


def run_main(*args: str) -> subprocess.CompletedProcess:
    """The real console entry point (cli.main), as a user runs it."""
    code = "import sys; from simulator.cli import main; sys.argv = ['xuezhan', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


def test_every_vector_passes():
    result = runner.invoke(app, ["score", "--vectors", str(VECTORS)])
    lines = result.output.strip().splitlines()
    records = [json.loads(line) for line in lines[:-1]]
    failed = [r for r in records if not r["ok"]]
    assert not failed, failed
    assert len(records) >= 36 and lines[-1] == f"{len(records)} passed, 0 failed"
    assert result.exit_code == 0


def test_failing_vectors_report_expected_and_got(tmp_path):
    path = tmp_path / "v.yaml"
    path.write_text(
        "- {id: right, rules: chengdu, hand: 123m456m789m123p22p, win_tile: 2p, win: discard,"
        " expect: {hand_type: pinghu, fan: 0, points: 1}}\n"
        "- {id: wrong-fan, rules: chengdu, hand: 123m456m789m123p22p, win_tile: 2p, win: discard,"
        " expect: {fan: 3}}\n"
        "- {id: wrong-error, rules: chengdu, hand: 123m456m789m123p22s, win_tile: 2s, win: discard,"
        " expect: {error: invalid_input}}\n"
        "- {id: missing-pattern, rules: qq_sichuan, hand: 123m456m789m123p22p, win_tile: 2p,"
        " melds: [], win: self_draw, context: {last_tile: true}, expect: {patterns: [zimo, qingyise]}}\n",
        encoding="utf-8")
    result = runner.invoke(app, ["score", "--vectors", str(path)])
    lines = result.output.strip().splitlines()
    records = {r["id"]: r for r in map(json.loads, lines[:-1])}
    assert records["right"] == {"id": "right", "ok": True}
    assert records["wrong-fan"]["expected"] == {"fan": 3} and records["wrong-fan"]["got"]["fan"] == 0
    assert records["wrong-error"]["got"]["error"] == "not_a_winning_hand"
    assert not records["missing-pattern"]["ok"]
    assert lines[-1] == "1 passed, 3 failed" and result.exit_code == 1


@pytest.mark.parametrize(("content", "words"), [
    ("- {id: a, hand: [unclosed", "malformed YAML"),
    ("id: not-a-list", "YAML list"),
    ("- {id: a, hand: 11m, expect: {fan: 1}}", "missing key 'win_tile'"),
    ("- {id: a, hand: 11m, win_tile: 1m, expect: {fan: 1}, colour: red}", "unknown key 'colour'"),
    ("- {id: a, hand: 11m, win_tile: 1m, expect: {fun: 1}}", "expect must map"),
    ("- {id: a, rules: nosuch, hand: 11m, win_tile: 1m, expect: {fan: 1}}", "not found"),
])
def test_bad_vectors_file_is_one_line_error(tmp_path, content, words):
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    assert words in user_error(["score", "--vectors", str(path)])


def test_missing_vectors_file():
    proc = run_main("score", "--vectors", "/nonexistent/v.yaml")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "cannot read" in proc.stderr


def test_json_output():
    result = runner.invoke(app, ["score", "123m345m999p66p", "--win-tile", "6p", "--meld", "ckong:2p",
                                 "--self-draw", "--after-kong", "--rules", "qq_sichuan", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"hand_type": "pinghu", "patterns": ["pinghu", "menqing", "gangshanghua",
                                                                             "zimo"],
                                         "gen": 1, "fan": 3, "capped_fan": 3, "points_each": 4}


def test_set_overrides_and_breakdown():
    result = runner.invoke(app, ["score", "11133355599s", "--win-tile", "9s", "--meld", "kong:7s",
                                 "--set", "scoring.base=5"])
    out = result.output
    assert result.exit_code == 0, out
    assert "hand type: qingdui 清对" in out and "qingyise 清一色: 2 fan" in out and "gen 根: 1 × 1 fan" in out
    assert "fan: 4   capped fan: 4" in out and "points: 80 from the discarder" in out


def test_rob_kong_and_discard_context_flags():
    result = runner.invoke(app, ["score", "123m456m789m234p55p", "--win-tile", "2p", "--rob-kong", "--json"])
    assert json.loads(result.output)["points"] == 2
    result = runner.invoke(app, ["score", "123m456m789m234p55p", "--win-tile", "2p", "--kong-discard", "--json",
                                 "--last-tile", "--rules", "haidilao"])
    d = json.loads(result.output)
    assert {"gangshangpao", "haidipao"} <= set(d["patterns"]) and d["fan"] == 2


@pytest.mark.parametrize(("args", "words"), [
    (["123m456m789m11p2p", "--win-tile", "2p"], "12 tiles"),
    (["123m456m789m123p22s", "--win-tile", "2s"], "three suits"),
    (["123m456m789m123p22p", "--win-tile", "2p", "--self-draw", "--rob-kong"], "exclude each other"),
    (["123m456m789m123p22p"], "--win-tile"),
    (["123m456m789m123p22p", "--win-tile", "2p", "--set", "scoring.cap=99"], "scoring.cap"),
    (["123m456m789m123p22p", "--win-tile", "2p", "--after-kong"], "impossible context"),
])
def test_invalid_hands_are_one_line_user_errors(args, words):
    result = runner.invoke(app, ["score", *args])
    if isinstance(result.exception, UserError):
        message = str(result.exception)
    else:  # option conflicts are reported by the command itself through cli.fail
        assert result.exit_code == 2, result.output
        message = result.output
    assert words in message and message.count("\n") <= 1


@pytest.mark.parametrize("args", [["123m456m789m123p22s", "--win-tile", "2s"],
                                  ["123m456m789m123p22p", "--win-tile", "2p", "--self-draw", "--rob-kong"]])
def test_console_entry_exits_2_with_one_line(args):
    proc = run_main("score", *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_logged_wins_rescore_from_their_logged_strings():
    """A logged win's hand / melds / context columns paste straight into `xuezhan score` and give its fan."""
    import numpy as np

    from simulator.hands import play_hands
    from simulator.rules import load_rules

    rules = load_rules("chengdu", ["seats=[greedy, value, defensive, greedy]"])
    wins = play_hands(rules, np.arange(400, dtype=np.int64), 5)["wins"]
    rows = [i for i in range(len(wins["hand"])) if wins["melds"][i] or wins["context"][i]][:40]
    assert len(rows) >= 20
    for i in rows:
        kind = str(wins["kind"][i])
        args = ["score", str(wins["hand"][i]), "--win-tile", str(wins["tile"][i]), "--json",
                "--meld", str(wins["melds"][i]), "--context", str(wins["context"][i])]
        if not wins["melds"][i]:
            args[-4:-2] = []
        args += {"self_draw": ["--self-draw"], "rob_kong": ["--rob-kong"], "discard": []}[kind]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output, result.exception)
        got = json.loads(result.output)
        paid = got["points_each"] if kind == "self_draw" else got["points"]
        assert (got["fan"], got["capped_fan"], paid) == (wins["fan"][i], wins["capped_fan"][i], wins["points"][i])
