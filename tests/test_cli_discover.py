"""What a command-line user finds without reading the docs: the choices of an option in --help, shell completion of
rule-set, study and variant names, a Python bot in the current directory, "did you mean" for a misspelt name, and
`rules show` describing the rule set asked for (issue 52, item 7)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_run
from typer.testing import CliRunner

from simulator.cli import app
from simulator.logs import layout
from simulator.rules import RulesError, load_rules
from simulator.run.study import StudyError, load_study


@pytest.mark.parametrize(("command", "shown"), [
    (["compare"], ["--format <table|csv|json>", "--by <bot|seat>"]),
    (["report"], ["--check <full|sizes>"]), (["verify"], ["--check <full|sizes>"]), (["score"], ["--void <m|p|s>"]),
])
def test_help_lists_each_options_choices(command, shown):
    res = CliRunner().invoke(app, [*command, "--help"], terminal_width=200)
    assert res.exit_code == 0
    for text in shown:
        assert text in res.output, res.output


def complete(words: str, cwd: Path | None = None) -> list[str]:
    """What bash completion offers for the last word of ``words`` (typer's completion protocol)."""
    env = {**os.environ, "_XUEZHAN_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
    exe = Path(sys.executable).parent / "xuezhan"
    proc = subprocess.run([exe], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_completion_offers_rule_sets_studies_and_the_runs_variants(tmp_path: Path):
    assert complete("xuezhan study quick") == ["quickstart"]
    assert complete("xuezhan rules show huazhu_") == ["huazhu_16x", "huazhu_8x", "huazhu_cap"]
    assert "cap3" in complete("xuezhan simulate ca")
    for name in ("chengdu", "cap3", "uncapped"):
        layout.control_dir(tmp_path / "run", name).mkdir(parents=True)
    assert complete("xuezhan compare run c", cwd=tmp_path) == ["cap3", "chengdu"]
    assert complete("xuezhan compare run chengdu u", cwd=tmp_path) == ["uncapped"]


def test_a_bot_in_the_current_directory_is_found(tmp_path: Path, monkeypatch, capsys):
    (tmp_path / "mybots_issue52.py").write_text("from xuezhan import GreedyBot\n\nclass Mine(GreedyBot):\n    pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "mybots_issue52", raising=False)
    seats = "seats=['mybots_issue52:Mine', greedy, greedy, greedy]"
    code, out, err = cli_run(["rules", "show", "chengdu", "--set", seats], capsys)
    assert code == 0, err
    assert "bot: mybots_issue52:Mine" in out
    code, out, err = cli_run(["rules", "show", "chengdu", "--set", seats.replace("mybots_", "nobots_")], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert "No module named 'nobots_issue52'; nobots_issue52 must be importable: run from its directory" in err


@pytest.mark.parametrize(("load", "hint"), [
    (lambda: load_rules("chengdu", ["scoring.capp=5"]), "scoring.capp: unknown key (did you mean 'cap'?)"),
    (lambda: load_rules("chengdu", ["sesion.hands=4"]), "sesion: unknown key (did you mean 'session'?)"),
    (lambda: load_rules("chengdu", ["seats=[{bot: expert, defense: 1}, greedy, greedy, greedy]"]),
     "seats.0.defense: unknown key (did you mean 'defence'?)"),
    (lambda: load_rules("chengdu", ["seats=[greedyy, greedy, greedy, greedy]"]),
     "unknown bot 'greedyy' (did you mean 'greedy'?)"),
    (lambda: load_rules("chengdoo"), "(did you mean 'chengdu'?)"),
    (lambda: load_study("quickstrat"), "(did you mean 'quickstart'?)"),
    (lambda: load_study({"name": "s", "baseline": "chengdu", "hands": 8, "varaints": []}),
     "varaints: unknown key (did you mean 'variants'?)"),
])
def test_a_misspelt_name_gets_did_you_mean(load, hint):
    with pytest.raises((RulesError, StudyError)) as exc:
        load()
    assert hint in str(exc.value) and "\n" not in str(exc.value)


def test_rules_show_describes_the_rule_set_itself_not_its_parent(capsys):
    code, out, err = cli_run(["rules", "show", "huazhu_8x"], capsys)
    assert code == 0, err
    description = next(line for line in out.splitlines() if line.startswith("description:"))
    assert "extends chengdu: settlement.huazhu_penalty=8" in description
    assert "default" not in description  # chengdu's "Chengdu 血战到底 (default)"
