"""The optional extras: without one, the feature that needs it stops with one line naming the extra to install
(`pip install 'xuezhan[dask]'`, `'xuezhan[rl]'`), never a traceback from deep inside; the core stays light."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from simulator import runner

ROOT = Path(__file__).resolve().parent.parent


def test_dask_backend_without_dask_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if dask were not installed
    message = r"^--backend dask needs the dask extra: pip install 'xuezhan\[dask\]'$"
    with pytest.raises(runner.RunError, match=message), runner._backend(runner.RunSpec(hands=8, backend="dask"), 2):
        pass


@pytest.mark.parametrize("module", ["simulator.env", "simulator.gym_env"])
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
