"""The dependency direction of the code (pyproject.toml, [tool.importlinter]) holds, and covers every module.

``lint-imports`` checks the contracts: the simulator's layers (each imports only the layers below it), analysis
importing only the rules, the log schema, the manifest and the vocabulary from the simulator, and the simulator
reaching analysis only from the CLI and the study composition.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_import_contracts_are_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "import-linter is part of the test extra (pip install -e '.[test]')"
    out = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert f"{len(_contracts())} kept, 0 broken" in out.stdout


def test_every_simulator_module_has_a_layer():
    """A new module must be placed in the layers (else nothing checks what it may import)."""
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    placed = {m.strip() for layer in layers for m in layer.split("|")}
    modules = {f"simulator.{p.stem if p.is_file() else p.name}" for p in (ROOT / "simulator").iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    modules.discard("simulator.configs")  # data only
    assert modules - placed == set(), "modules missing from [tool.importlinter] layers"
    assert placed - modules == set(), "layers name modules that do not exist"


@pytest.mark.parametrize("importer,imported", [("simulator.engine.common", "simulator.hands"),
                                               ("analysis.ev", "simulator.engine"),
                                               ("analysis.clustered", "analysis.report_render")])
def test_a_wrong_import_breaks_a_contract(tmp_path, importer, imported):
    """The contracts can fail: a copy of the code with one upward import is refused."""
    for pkg in ("simulator", "analysis", "xuezhan"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__", "configs"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path.joinpath(*importer.split(".")).with_suffix(".py")
    target.write_text(target.read_text() + f"\nimport {imported}  # noqa\n")
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    out = subprocess.run([exe, "--config", str(tmp_path / "pyproject.toml")], cwd=tmp_path, capture_output=True,
                         text=True, env={"PYTHONPATH": str(tmp_path), "PATH": str(Path(sys.executable).parent)})
    assert out.returncode != 0 and "BROKEN" in out.stdout, out.stdout[-2000:]


def test_every_analysis_module_has_a_layer():
    """analysis's modules are layered too (the report on top, reading the logs at the bottom): each is placed."""
    layers = next(c for c in _contracts() if c["name"] == "analysis layers")["layers"]
    placed = {m.strip() for layer in layers for m in layer.split("|")}
    modules = {f"analysis.{p.stem}" for p in (ROOT / "analysis").glob("*.py") if p.stem != "__init__"}
    assert modules - placed == set(), "analysis modules missing from the 'analysis layers' contract"
    assert placed - modules == set(), "the 'analysis layers' contract names modules that do not exist"
