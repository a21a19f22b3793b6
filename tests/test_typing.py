"""``xuezhan`` is a typed API: a type checker (mypy, in the test extra) run on a user's script finds every public
name with its real signature, and reports a misspelt name or a wrong argument type — from the user's own
directory, against the README's install (``pip install -e .``), not only from the repository's root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import bare_venv
from test_readme import code_blocks

import xuezhan

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "simulator", "analysis", "xuezhan", "configs")
pytestmark = pytest.mark.slow  # an editable install (~5 s) and mypy reading the package and its dependencies' stubs

GOOD = '''\
import xuezhan
from xuezhan import plots

rules: xuezhan.RuleSet = xuezhan.load_rules("chengdu", ["scoring.cap=5"])
study: xuezhan.StudyResult = xuezhan.run_study({"name": "s", "baseline": "chengdu", "hands": 8}, report=False)
run: xuezhan.Run = xuezhan.open_run(study.out_dir)
cap: int | None = rules.scoring.cap
figure = plots.ev_errorbars(xuezhan.expected_value(run, ("seat", "bot")))
'''
BAD = '''\
import xuezhan

xuezhan.load_rulez("chengdu")
xuezhan.load_rules(5)
xuezhan.open_run("runs/x").no_such_method()
xuezhan.expected_value("runs/x", by="sweat")
'''


def editable_install(tmp: Path) -> Path:
    """A fresh venv with a copy of the source tree installed as the README installs it (``pip install -e .``,
    offline: the dependencies are this environment's, by plain path); returns its python."""
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, src / name)
    venv = tmp / "venv"
    python, purelib = bare_venv(venv)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-build-isolation", "--no-index", "-e", str(src)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return python


def test_mypy_sees_every_public_name_and_its_signature(tmp_path: Path):
    python = editable_install(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH", "PYTHONHOME")}
    where = subprocess.run([python, "-c", "import sys, xuezhan; print(xuezhan.__file__); print(sys.path)"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(tmp_path / "src" / "xuezhan")), where.stdout  # the copy, not the checkout
    assert repr(str(ROOT)) not in where.stdout.splitlines()[1]  # the checkout is not on the path
    (readme,) = code_blocks((ROOT / "README.md").read_text(encoding="utf-8"), "python")
    every = "".join(f"_{i} = xuezhan.{name}\n" for i, name in enumerate(xuezhan.__all__))
    (work / "good.py").write_text(GOOD + every + readme)
    (work / "bad.py").write_text(BAD)
    env["MYPY_CACHE_DIR"] = str(ROOT / ".mypy_cache")  # third-party stubs stay cached between runs
    proc = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(python), "--follow-imports=silent",
                           "--no-error-summary", "--hide-error-context", "good.py", "bad.py"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = proc.stdout.splitlines()
    assert not [e for e in errors if e.startswith("good.py")], proc.stdout  # every name and call resolved
    assert len(errors) == 4, proc.stdout
    assert 'bad.py:3: error: Module has no attribute "load_rulez"' in errors[0]
    assert 'bad.py:4: error: Argument 1 to "load_rules" has incompatible type "int"' in errors[1]
    assert 'bad.py:5: error: "Run" has no attribute "no_such_method"' in errors[2]
    assert 'bad.py:6: error: Argument "by" to "expected_value" has incompatible type' in errors[3]


def test_the_stub_is_the_runtime_api():
    """Each name of xuezhan/__init__.pyi is the object of the module it names (the stub is the one list)."""
    import importlib

    assert "XuezhanGymEnv" in xuezhan.API and xuezhan.API["plots"] == "analysis"
    for name, module in xuezhan.API.items():
        value = getattr(xuezhan, name)
        assert value is getattr(importlib.import_module(module), name), name
    assert xuezhan.plots is importlib.import_module("analysis.plots")
    assert sorted(dir(xuezhan)) == sorted(xuezhan.__all__)
