"""Issue 27, items 7, 9, 10, 11: Python bots that misbehave, bad input anywhere on the command line, nonsense
that used to be accepted — each one line ``error: ...`` with a non-zero exit, never a traceback, never exit 0
for a run that did not finish."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import bot_module, cli_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.logs import manifest as mf
from simulator.run import runner

XUEZHAN = Path(sys.executable).parent / "xuezhan"

BOTS = '''
import sys, time
from simulator.agents import GreedyBot


class Exits(GreedyBot):
    def act(self, obs):
        sys.exit(0)


class Raises(GreedyBot):
    def discard(self, obs):
        raise ValueError("my bug")


class BadInit(GreedyBot):
    def __init__(self):
        raise RuntimeError("no model file")


class Sleeps(GreedyBot):
    def act(self, obs):
        time.sleep(30)


class Returns(GreedyBot):
    def __init__(self, value=None):
        self.value = value

    def act(self, obs):
        return self.value
'''


@pytest.fixture()
def bots(tmp_path: Path, monkeypatch):
    yield from bot_module(tmp_path, monkeypatch, "trustbots", BOTS)


def one_line(code: int, err: str) -> None:
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err


def sim(out: Path, seat: str, *extra: str) -> list[str]:
    return ["simulate", "chengdu", "-n", "4", "--chunk-size", "2", "--quiet", "--out", str(out),
            "--set", f"seats=[{seat}, greedy, greedy, greedy]", *extra]


# ---------------------------------------------------------------------------------------------------------
# 7. Python bots

def test_a_bot_calling_sys_exit_never_ends_the_run_with_success(bots: Path, tmp_path: Path):
    proc = subprocess.run([str(XUEZHAN), *sim(tmp_path / "o", "trustbots:Exits"), "--jobs", "2"],
                          capture_output=True, text=True, timeout=600, env=os.environ)
    assert proc.returncode == 2, proc
    assert proc.stderr.strip().splitlines()[-1].startswith("error: bot trustbots:Exits: SystemExit")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("value", ["'5m'", "None", "3.0", "'7'", "True"])
def test_a_bot_returning_a_non_action_gets_the_illegal_action_error(bots: Path, tmp_path: Path, capsys, value):
    code, _, err = cli_run(sim(tmp_path / "o", f"{{bot: 'trustbots:Returns', params: {{value: {value}}}}}",
                               "--jobs", "1"), capsys)
    one_line(code, err)
    assert "seat 0 answered" in err and "illegal action" in err and "not an action number" in err


def test_a_bot_that_raises_is_named_with_hand_seat_and_decision(bots: Path, tmp_path: Path, capsys):
    code, _, err = cli_run(sim(tmp_path / "o", "trustbots:Raises", "--jobs", "1"), capsys)
    one_line(code, err)
    assert "bot trustbots:Raises: ValueError: my bug (hand 0, seat 0, decision discard)" in err
    code, _, err = cli_run(["--debug", *sim(tmp_path / "p", "trustbots:Raises", "--jobs", "1")], capsys)
    assert code == 2 and err.startswith("error: bot trustbots:Raises") and "Traceback" in err and "my bug" in err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_bot_whose_constructor_raises_is_one_line(bots: Path, tmp_path: Path, capsys, jobs):
    code, _, err = cli_run(sim(tmp_path / "o", "trustbots:BadInit", "--jobs", jobs), capsys)
    one_line(code, err)
    assert "bot trustbots:BadInit: its constructor raised RuntimeError: no model file (seat 0)" in err
    assert mf.read(tmp_path / "o" / "_variants" / "variant=chengdu")["hands_done"] == 0


def test_a_bot_that_never_answers_times_out(bots: Path, tmp_path: Path, capsys):
    code, _, err = cli_run(sim(tmp_path / "o", "trustbots:Sleeps", "--jobs", "1", "--bot-timeout", "0.2"), capsys)
    one_line(code, err)
    assert "bot trustbots:Sleeps: no answer within 0.2 s (hand 0, seat 0, decision" in err


def test_a_run_that_did_not_finish_never_reports_success(tmp_path: Path, monkeypatch):
    """Whatever made the workers stop without an error (a bot's sys.exit in a worker used to), the parent checks
    that every chunk is done before it reports success."""
    interleave = runner._interleave
    monkeypatch.setattr(runner, "_interleave", lambda runs: list(interleave(runs))[:1])  # one chunk comes back
    spec = runner.RunSpec(hands=20, seed=3, jobs=1, chunk_size=10, progress=False)
    with pytest.raises(runner.RunError, match="stopped at 10 of 20 hands without an error"):
        runner.simulate(runner.Variant.load("chengdu"), tmp_path, spec)


# ---------------------------------------------------------------------------------------------------------
# 9, 10. bad input: a table of cases, every one a single error line

def _nested(n: int) -> str:
    return "[" * n + "]" * n


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in {"empty": "", "dupkey": "extends: chengdu\nscoring:\n  cap: 3\n  cap: 5\n",
                       "deep": f"extends: chengdu\ndescription: {_nested(3000)}\n",
                       "deepstudy": f"name: s\nbaseline: chengdu\nhands: 4\nvariants: {_nested(3000)}\n"}.items():
        (tmp_path / f"{name}.yaml").write_text(text)
        out[name] = tmp_path / f"{name}.yaml"
    out["binary"] = tmp_path / "vectors.bin"
    out["binary"].write_bytes(bytes(range(256)) * 4)
    return out


CASES = [
    ("long --out", lambda f, t: ["simulate", "chengdu", "-n", "4", "--out", str(t / ("d/" * 2100))], "limit"),
    ("nested --set", lambda f, t: ["simulate", "chengdu", "-n", "4", "--out", str(t / "o"),
                                   "--set", f"description={_nested(3000)}"], "nested too deeply"),
    ("nested rule file", lambda f, t: ["simulate", str(f["deep"]), "-n", "4", "--out", str(t / "o")], ""),
    ("nested study", lambda f, t: ["study", str(f["deepstudy"]), "--out", str(t / "o")], ""),
    ("binary vectors", lambda f, t: ["score", "--vectors", str(f["binary"])], "not UTF-8"),
    ("empty rule file", lambda f, t: ["simulate", str(f["empty"]), "-n", "4", "--out", str(t / "o")], "empty"),
    ("duplicate key", lambda f, t: ["simulate", str(f["dupkey"]), "-n", "4", "--out", str(t / "o")],
     "'cap' given twice"),
    ("room_factor inf", lambda f, t: ["simulate", "chengdu", "-n", "4", "--out", str(t / "o"),
                                      "--set", "economy.room_factor=.inf"], "room_factor"),
    ("room_factor 1e308", lambda f, t: ["simulate", "chengdu", "-n", "4", "--out", str(t / "o"),
                                        "--set", "economy.room_factor=1e308"], "room_factor"),
    ("rake 1e300", lambda f, t: ["simulate", "chengdu", "-n", "4", "--out", str(t / "o"),
                                 "--set", "economy.rake=1e300"], "rake"),
    ("bot timeout nan", lambda f, t: ["simulate", "chengdu", "-n", "4", "--out", str(t / "o"),
                                      "--bot-timeout", "nan"], "--bot-timeout"),
]


@pytest.mark.parametrize(("label", "argv", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line(files, tmp_path: Path, capsys, label, argv, words):
    code, out, err = cli_run(argv(files, tmp_path), capsys)
    one_line(code, err)
    assert words in err
    assert not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def two_arms(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("two")
    spec = runner.RunSpec(hands=20, seed=3, jobs=1, chunk_size=10, progress=False)
    runner.run_variants(out, [runner.Variant.load("chengdu"), runner.Variant.load("cap3")], spec)
    return out


def test_compare_refuses_nonsense(two_arms: Path, capsys):
    code, _, err = cli_run(["compare", str(two_arms), "chengdu", "chengdu"], capsys)
    one_line(code, err)
    assert "itself" in err
    code, _, err = cli_run(["compare", str(two_arms), "chengdu", "cap3", "--detect", "nan"], capsys)
    one_line(code, err)
    assert "--detect" in err


def test_report_refuses_an_output_inside_a_table_directory(two_arms: Path, capsys):
    target = two_arms / "hands" / "variant=cap3" / "r.html"
    code, _, err = cli_run(["report", str(two_arms), "--boot", "0", "--out", str(target)], capsys)
    one_line(code, err)
    assert "inside the table directory" in err and not target.exists()


# ---------------------------------------------------------------------------------------------------------
# 11. cosmetic: the report's own name on a write error, compare warns of an unfinished arm

def test_an_unwritable_report_names_report_html(two_arms: Path, capsys, monkeypatch):
    """On a read-only file system the write of the report's temporary fails; the error names the report."""
    import analysis.report

    def read_only(path, text):
        raise PermissionError(30, "Read-only file system", str(path.parent / f".{path.name}.77.tmp"))
    monkeypatch.setattr(analysis.report, "_atomic_write_text", read_only)
    code, _, err = cli_run(["report", str(two_arms), "--boot", "0"], capsys)
    one_line(code, err)
    assert f"{two_arms / 'report.html'}: Read-only file system" in err and ".tmp" not in err


def test_compare_warns_that_an_arm_did_not_finish(two_arms: Path, tmp_path: Path, capsys, monkeypatch):
    run = tmp_path / "run"
    commit = runner.OpenRun.commit

    def stop_after_one(self, res):
        commit(self, res)
        if self.plan.variant.name == "cap3":
            raise KeyboardInterrupt
    monkeypatch.setattr(runner.OpenRun, "commit", stop_after_one)
    spec = runner.RunSpec(hands=20, seed=3, jobs=1, chunk_size=10, progress=False)
    with pytest.raises(KeyboardInterrupt):
        runner.run_variants(run, [runner.Variant.load("chengdu"), runner.Variant.load("cap3")], spec)
    assert not mf.read(run / "_variants" / "variant=cap3")["complete"]
    code, _, err = cli_run(["compare", str(run), "chengdu", "cap3", "--format", "csv"], capsys)
    assert code == 0 and err.startswith("warning: ") and "cap3 did not finish" in err


# ---------------------------------------------------------------------------------------------------------
# A fuzz of the command line: random commands, options and values → never a traceback

_TOKENS = ["-n", "4", "0", "-1", "1e20", "nan", "inf", "--seed", "--jobs", "--chunk-size", "--set", "--check",
           "--format", "--detect", "--by", "--boot", "--hand", "--variant", "--run", "--out", "--resume", "--lang",
           "x", "", "chengdu", "cap3", "scoring.cap=.inf", "scoring.cap=[[[]]]", "seats=[a, b]", "a.b.c=1",
           "economy.rake=-1", "csv", "json", "sizes", "bot", "seat", "123m456m789m11p22p", "--win-tile", "2p",
           "--vectors", "--meld", "pung:5p", "kong:99z", "--context", "junk", "\x00", "é" * 300]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(["simulate", "study", "report", "compare", "verify", "score", "replay", "play"]),
       args=st.lists(st.one_of(st.sampled_from(_TOKENS), st.sampled_from(["FILE", "EMPTY", "BIN", "RUN", "OUT"])),
                     max_size=8))
def test_fuzzed_command_lines_never_print_a_traceback(files, two_arms: Path, tmp_path: Path, capsys, command,
                                                      args):
    where = {"FILE": str(files["dupkey"]), "EMPTY": str(files["empty"]), "BIN": str(files["binary"]),
             "RUN": str(two_arms), "OUT": str(tmp_path / "fuzz")}
    argv = [command, *(where.get(a, a) for a in args)]
    if command in ("simulate", "study"):
        argv += ["--hands", "4", "--out", str(tmp_path / "fuzz"), "--jobs", "1", "--quiet"]
    if command == "play":
        argv += ["--hand", "-1"]  # never waits for a human: refused before the table opens
    code, out, err = cli_run(argv, capsys)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    if code not in (0, None):
        assert err.rstrip().splitlines()[-1].startswith(("error: ", "interrupted")), (argv, err)
    shutil.rmtree(tmp_path / "fuzz", ignore_errors=True)
