"""The optional extras: without one, the feature that needs it stops with one line naming the extra to install
(`pip install 'xuezhan[dask]'`, `'xuezhan[rl]'`), never a traceback from deep inside; the core stays light."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from simulator.run import runner

ROOT = Path(__file__).resolve().parent.parent


def test_dask_backend_without_dask_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if dask were not installed
    message = r"^--backend dask needs the dask extra: pip install 'xuezhan\[dask\]'$"
    with pytest.raises(runner.RunError, match=message), runner._backend(runner.RunSpec(hands=8, backend="dask"), 2):
        pass


@pytest.mark.parametrize("command", [["study", "quickstart"], ["simulate", "chengdu", "--hands", "8"]])
def test_a_run_without_dask_is_refused_before_compiling_and_leaves_nothing(command, monkeypatch, tmp_path, capsys):
    """The missing extra is found before the engine compiles (a minute cold) and before any directory is made."""
    from cli_helpers import cli_run

    from simulator.hands import warmup

    for name in ("dask", "distributed", "dask.distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # as if dask were not installed

    def compile_engine(*args, **kwargs):
        raise AssertionError("the engine compiled before the run was refused")

    monkeypatch.setattr(warmup, "warm_up", compile_engine)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli_run([*command, "--backend", "dask", "--out", "runs/x", "--quiet"], capsys)
    assert (code, err) == (2, "error: --backend dask needs the dask extra: pip install 'xuezhan[dask]'\n"), out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", ["simulator.agents.env", "simulator.agents.gym"])
def test_rl_envs_without_gymnasium_name_the_extra(module):
    code = f"import sys; sys.modules['gymnasium'] = None; import {module}"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "ImportError: the RL environments need the rl extra: pip install 'xuezhan[rl]'")


def test_the_core_dependencies_leave_out_jupyter_and_dask():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "jupyter" not in core and "dask" not in core and "pettingzoo" not in core and "optuna" not in core
    extras = project["optional-dependencies"]
    assert extras["notebooks"] == ["jupyter"] and extras["dask"] == ["dask[distributed]>=2024.1"]
    assert extras["tune"] == ["optuna>=4"]
    assert extras["all"] == ["xuezhan[rl,dask,tune,notebooks]"] and "xuezhan[rl,dask,tune]" in extras["test"]
