"""Every example command of the README (and of docs/studies.md) runs as written, with fewer hands."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from cli_helpers import cli_run
from typer.testing import CliRunner

from simulator.cli import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "docs/studies.md")
SMALL_HANDS = "48"  # a multiple of 4 (duplicate seating) above the hand ids the examples replay
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def code_blocks(text: str, lang: str) -> list[str]:
    """The bodies of the fenced code blocks of one language, in order."""
    return [body for kind, body in FENCE.findall(text) if kind == lang]


def examples(doc: str) -> list[list[str]]:
    """Every ``xuezhan ...`` command of a document in order of appearance: lines of ``bash`` blocks (each
    ``&&``-separated part) and the backticked commands of table rows."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    for match in FENCE.finditer(text):
        if match.group(1) == "bash":
            for line in match.group(2).splitlines():
                found += [(match.start(), part.strip()) for part in line.split("&&")]
    for match in re.finditer(r"^\|\s*`(xuezhan [^`]+)`\s*\|", text, re.M):
        found.append((match.start(), match.group(1)))
    return [shlex.split(cmd) for _, cmd in sorted(found) if cmd.startswith("xuezhan ")]


def small(argv: list[str], report: bool = True) -> list[str]:
    """The command with fewer hands: ``--hands``/``-n`` replaced (or added to simulate/study); simulate and study
    on one process (``--jobs 1``: starting workers costs more than these few hands), a study without its report
    unless ``report`` (one study per document writes one: the report is tested on its own elsewhere)."""
    argv = list(argv)
    if argv[1] not in ("simulate", "study"):
        return argv
    for flag, value in (("--hands", SMALL_HANDS), ("--jobs", "1")):
        short = {"--hands": "-n", "--jobs": "-j"}[flag]
        where = next((i for i, a in enumerate(argv) if a in (flag, short)), None)
        if where is None:
            argv += [flag, value]
        else:
            argv[where + 1] = value
    return argv + (["--no-report"] if argv[1] == "study" and not report else [])


def test_the_readme_has_the_examples_it_promises():
    commands = {argv[1] for argv in examples("README.md")}
    assert {"score", "replay", "simulate", "study", "report", "compare"} <= commands
    assert len(examples("README.md")) >= 10 and len(examples("docs/studies.md")) >= 3


@pytest.mark.parametrize("doc", DOCS)
def test_every_example_command_runs(doc: str, tmp_path: Path, monkeypatch, capsys):
    for folder in ("configs", "tests"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    monkeypatch.chdir(tmp_path)
    studies = 0
    for argv in examples(doc):
        studies += argv[1] == "study"
        report = argv[1] == "study" and studies <= 1
        # as written, progress bars included (no --quiet added: a broken progress display must fail here)
        code, out, err = cli_run(small(argv, report=studies <= 1)[1:], capsys)
        assert code == 0, f"{shlex.join(argv)}\n{out}\n{err}"
        assert out.strip(), shlex.join(argv)
        assert "Traceback" not in out + err and not err.lstrip().startswith("error"), (argv, err)
        # what a command says it writes is there: its --out path, and a simulate or study run's manifest
        outs = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--out", "-o")]
        for path in outs:
            assert (tmp_path / path).exists(), (shlex.join(argv), path)
        if argv[1] in ("simulate", "study") and outs:
            assert any((tmp_path / outs[0]).rglob("_manifest.json")), shlex.join(argv)
        if report and outs:  # the quick start's promise: runs/quickstart/report.html (and the Markdown summary)
            assert {"report.html", "report.md"} <= {p.name for p in (tmp_path / outs[0]).iterdir()}, argv


def test_the_readme_python_example_runs(tmp_path: Path, monkeypatch):
    (block,) = code_blocks((ROOT / "README.md").read_text(encoding="utf-8"), "python")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - the README's own example
    assert scope["run"].variants == ("chengdu", "cap3", "uncapped")
    assert scope["rules"].scoring.cap == 5


def test_help_shows_flags_as_flags():
    for command in ("score", "replay", "simulate", "study", "report", "compare"):
        res = CliRunner().invoke(app, [command, "--help"], terminal_width=120)
        assert res.exit_code == 0 and "--" in res.output
        assert "<bool>" not in res.output, command


def test_the_documented_study_file_is_valid_and_shows_every_key(tmp_path: Path):
    from simulator.run.study import StudyFile, load_study, study_variants

    text = (ROOT / "docs/studies.md").read_text(encoding="utf-8")
    block, populations = code_blocks(text, "yaml")  # the file, key by key; the populations' own example
    (tmp_path / "example.yaml").write_text(block)
    study, path = load_study(tmp_path / "example.yaml")
    # the example sets every key but populations, which replace its seats: shown in "Populations"
    assert set(StudyFile.model_fields) - {"populations"} == set(study.model_fields_set)
    (tmp_path / "pops.yaml").write_text(block.replace("seats:", "# seats:") + populations)
    pops, where = load_study(tmp_path / "pops.yaml")
    assert [v.name for v in study_variants(pops, where)][:2] == ["base.strong", "cap3.strong"]
    variants = study_variants(study, path)
    assert [v.name for v in variants] == ["base", "cap3", "huazhu8", "nolock"]
    assert variants[0].rules.seats[3].decline_below == 3
    for key in StudyFile.model_fields:
        assert f"| `{key}` |" in text, key


def test_the_documented_bot_parameters_are_the_schemas():
    from simulator.rules import BOTS, BotSpec

    text = (ROOT / "docs/studies.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| `?([^`|\s]+)`? \|", text, re.M)}
    for name, info in BotSpec.model_fields.items():
        assert rows[name] == str(info.default), name
        bounds = {type(m).__name__: m for m in info.metadata}
        if bounds:
            assert f"| {bounds['Ge'].ge}–{bounds['Le'].le} |" in text.split(f"| `{name}` |")[1].split("\n")[0]
    assert ", ".join(f"`{b}`" for b in BOTS) in text


def test_ci_runs_the_readme_test_command_verbatim():
    """.ci/run's last line is the README's test command after its venv part: the suite on two pytest-xdist workers
    (two cores), durations report included."""
    readme = next(line for line in (ROOT / "README.md").read_text().splitlines()
                  if line.startswith("python3.11 -m venv .venv && ") and "pytest" in line)
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert readme.removeprefix("python3.11 -m venv .venv && . .venv/bin/activate && ") == ci[-1]
    pytest_args = ci[-1].split(" && pytest ")[1].split()
    assert "--durations=25" in pytest_args and pytest_args[pytest_args.index("-n") + 1] == "2"
