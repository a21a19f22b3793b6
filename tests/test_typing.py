"""``xuezhan`` is a typed API: a type checker (mypy, in the test extra) run on a user's script finds every public
name with its real signature, and reports a misspelt name or a wrong argument type."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import xuezhan

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # mypy reads the package's modules and their dependencies' stubs (~20 s cold)

GOOD = '''\
import xuezhan
from xuezhan import plots

rules: xuezhan.RuleSet = xuezhan.load_rules("chengdu", ["scoring.cap=5"])
study: xuezhan.StudyResult = xuezhan.run_study({"name": "s", "baseline": "chengdu", "hands": 8}, report=False)
run: xuezhan.Run = xuezhan.open_run(study.out_dir)
cap: int | None = rules.scoring.cap
figure = plots.ev_errorbars(xuezhan.expected_value(run, "seat"))
'''
BAD = '''\
import xuezhan

xuezhan.load_rulez("chengdu")
xuezhan.load_rules(5)
xuezhan.open_run("runs/x").no_such_method()
'''


def test_mypy_sees_every_public_name_and_its_signature(tmp_path: Path):
    every = "".join(f"_{i} = xuezhan.{name}\n" for i, name in enumerate(xuezhan.__all__))
    (tmp_path / "good.py").write_text(GOOD + every)
    (tmp_path / "bad.py").write_text(BAD)
    env = {**os.environ, "MYPY_CACHE_DIR": str(ROOT / ".mypy_cache")}
    proc = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
                           "--no-error-summary", "--hide-error-context", str(tmp_path / "good.py"),
                           str(tmp_path / "bad.py")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = [line.split(str(tmp_path) + os.sep, 1)[-1] for line in proc.stdout.splitlines()]
    assert not [e for e in errors if e.startswith("good.py")], proc.stdout  # every name and call resolved
    assert len(errors) == 3, proc.stdout
    assert 'bad.py:3: error: Module has no attribute "load_rulez"' in errors[0]
    assert 'bad.py:4: error: Argument 1 to "load_rules" has incompatible type "int"' in errors[1]
    assert 'bad.py:5: error: "Run" has no attribute "no_such_method"' in errors[2]


def test_the_stub_is_the_runtime_api():
    """Each name of xuezhan/__init__.pyi is the object of the module it names (the stub is the one list)."""
    import importlib

    assert "XuezhanGymEnv" in xuezhan.API and xuezhan.API["plots"] == "analysis"
    for name, module in xuezhan.API.items():
        value = getattr(xuezhan, name)
        assert value is getattr(importlib.import_module(module), name), name
    assert xuezhan.plots is importlib.import_module("analysis.plots")
    assert sorted(dir(xuezhan)) == sorted(xuezhan.__all__)
