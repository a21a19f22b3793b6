"""The dependency direction of the code (pyproject.toml, [tool.importlinter]) holds, and covers every module.

``lint-imports`` checks the contracts: the simulator's layers (each imports only the layers below it), analysis
importing only the rules, the log schema, the manifest and the vocabulary from the simulator, and the simulator
reaching analysis (and the xuezhan facade, where a study meets the analysis) only from the CLI.
"""

from __future__ import annotations

import ast
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
                                               ("analysis.clustered", "analysis.report_render"),
                                               ("simulator.run.study", "analysis.report")])
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


def _package_modules(pkg: Path) -> set[str]:
    """Dotted names of a package's modules, its ``__init__`` (the package itself) and ``__main__`` left out."""
    return {f"simulator.{pkg.name}.{p.stem}" for p in pkg.glob("*.py") if p.stem not in ("__init__", "__main__")}


def test_every_module_of_a_package_has_a_layer_in_its_package():
    """Each package's contract places all its modules (a new module must say where it sits in its package); the
    package's ``__init__``, where it has code, is above them all."""
    contracts = _contracts()
    for pkg in sorted(p for p in (ROOT / "simulator").iterdir() if (p / "__init__.py").is_file()):
        modules = _package_modules(pkg)
        own = [c for c in contracts if c["type"] == "layers" and c["name"].startswith(f"simulator.{pkg.name}")]
        if pkg.name == "bots":  # the expert's contract orders its own modules; the others are one layer
            own = [c for c in contracts if c["name"].startswith("the expert's modules")]
            modules = {m for m in modules if m.startswith("simulator.bots.expert")}
        if not own:
            assert len(modules) <= 1 or pkg.name == "engine", f"simulator.{pkg.name} has no contract"
            continue
        placed = {m.strip() for c in own for layer in c["layers"] for m in layer.split("|")}
        assert modules == placed, f"simulator.{pkg.name}: contract vs modules"


def test_analysis_may_import_only_its_list():
    """analysis' contract is the list of what it may import (in the contract's name): its forbidden modules are
    exactly the rest of the simulator, so a new package or module is forbidden to analysis until listed."""
    contract = next(c for c in _contracts() if c["type"] == "forbidden" and c["source_modules"] == ["analysis"])
    allowed = {m.strip() for m in contract["name"].split("may import only:")[1].split(",")}
    forbidden = set(contract["forbidden_modules"])
    assert not allowed & forbidden
    top = {f"simulator.{p.stem if p.is_file() else p.name}" for p in (ROOT / "simulator").iterdir()
           if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()} - {"simulator.configs"}
    for name in top:
        pkg = ROOT / "simulator" / name.split(".")[1]
        inside = {m for m in allowed | forbidden if m.startswith(name + ".")}
        if name in allowed or name in forbidden:
            assert not inside, f"{name} is listed whole and by module"
        else:  # partly allowed: each of its modules is on one list
            assert pkg.is_dir() and inside == _package_modules(pkg), name


def test_every_analysis_module_has_a_layer():
    """analysis's modules are layered too (the report on top, reading the logs at the bottom): each is placed."""
    layers = next(c for c in _contracts() if c["name"] == "analysis layers")["layers"]
    placed = {m.strip() for layer in layers for m in layer.split("|")}
    modules = {f"analysis.{p.stem}" for p in (ROOT / "analysis").glob("*.py") if p.stem != "__init__"}
    assert modules - placed == set(), "analysis modules missing from the 'analysis layers' contract"
    assert placed - modules == set(), "the 'analysis layers' contract names modules that do not exist"


def test_only_the_cli_reaches_the_analysis():
    """Every simulator module but the CLI's is a source of the contract forbidding ``analysis`` and ``xuezhan``
    (a study's report is composed in xuezhan.studies, not behind an import inside simulator.run.study)."""
    contract = next(c for c in _contracts() if c["type"] == "forbidden" and "xuezhan" in c["forbidden_modules"])
    modules = {f"simulator.{p.stem if p.is_file() else p.name}" for p in (ROOT / "simulator").iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    modules = {m for m in modules if m != "simulator.configs" and not m.startswith("simulator.cli")}
    assert modules - set(contract["source_modules"]) == set()


MAX_PARAMS = 8  # docs/internals.md, "Records on the hot path"


def _compiled(node) -> bool:
    """Decorated ``@njit``/``@jit`` (bare, called, or as ``numba.njit``)."""
    for dec in node.decorator_list:
        fn = dec.func if isinstance(dec, ast.Call) else dec
        name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
        if name in ("njit", "jit"):
            return True
    return False


def test_no_compiled_function_takes_more_than_eight_parameters():
    """A compiled function takes at most MAX_PARAMS parameters: a seat's own hand travels as one
    ``shape.HandTiles``, what it sees of the table as one ``bots.view.SeatView``, the expert's per-decision
    constants as one ``bots.expert_turn.Outlook`` (numba flattens them: a record costs what its members did)."""
    over = []
    for path in sorted((ROOT / "simulator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _compiled(node):
                a = node.args
                n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None)
                if n > MAX_PARAMS:
                    over.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n})")
    assert over == [], "compiled functions with more than 8 parameters:\n" + "\n".join(over)


def test_the_parameter_scan_finds_compiled_functions():
    """The scan is not vacuous: it sees the engine's compiled functions, decorated in each way they are."""
    tree = ast.parse("from numba import njit\n@njit(cache=True)\ndef f(a, b): pass\n@njit\ndef g(): pass\n"
                     "def h(): pass\n")
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and _compiled(n)] == ["f", "g"]
    found = sum(_compiled(n) for p in (ROOT / "simulator").rglob("*.py") for n in ast.walk(ast.parse(p.read_text()))
                if isinstance(n, ast.FunctionDef))
    assert found > 200


def _nrt_unstated(node) -> bool:
    """A compiled, not inlined function whose decorator leaves ``_nrt`` unset."""
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and getattr(dec.func, "id", getattr(dec.func, "attr", "")) in ("njit", "jit"):
            kw = {k.arg: k.value for k in dec.keywords}
            inline = kw.get("inline")
            if isinstance(inline, ast.Constant) and inline.value == "always":
                return False
            return "_nrt" not in kw
    return _compiled(node)


def test_every_compiled_function_states_its_reference_counting():
    """Each compiled function says ``_nrt=False`` (no reference counting: it allocates nothing and takes no new
    array from a callee) or ``_nrt=True`` (it allocates). Unset, numba inherits the flag from whichever caller
    compiles it first, so the same function would compile differently by call order (docs/internals.md,
    "Reference counting"). Inlined functions take their caller's."""
    unstated = [f"{p.relative_to(ROOT)}:{n.lineno} {n.name}" for p in sorted((ROOT / "simulator").rglob("*.py"))
                for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.FunctionDef) and _nrt_unstated(n)]
    assert unstated == [], "compiled functions without _nrt=True/False:\n" + "\n".join(unstated)
    tree = ast.parse("@njit(cache=True)\ndef f(): pass\n@njit(cache=True, _nrt=False)\ndef g(): pass\n"
                     "@njit(cache=True, inline='always')\ndef h(): pass\n@njit\ndef k(): pass\n")
    assert [n.name for n in tree.body if _nrt_unstated(n)] == ["f", "k"]


def _private_imports(source: str) -> list[str]:
    """``module.name`` of every private name (``_x``, not dunder) imported from the project's packages."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("simulator", "analysis",
                                                                                      "xuezhan"):
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_name():
    """What one module uses of another is public in it: a leading underscore means "only here", so a rename or a
    change of a private helper never breaks another module unseen."""
    bad = {str(p.relative_to(ROOT)): _private_imports(p.read_text(encoding="utf-8"))
           for pkg in ("simulator", "analysis", "xuezhan") for p in (ROOT / pkg).rglob("*.py")}
    assert {k: v for k, v in bad.items() if v} == {}
    assert _private_imports("from simulator.rules.load import _short, load_raw\nfrom os import _exit\n") == \
        ["simulator.rules.load._short"]


MAX_MODULE_LINES = 450
"""A file does one thing: no Python module of the project is longer than this (split by purpose, not by number)."""


def test_no_module_is_longer_than_450_lines():
    files = [p for d in ("simulator", "analysis", "xuezhan", "benchmarks", "tests") for p in (ROOT / d).rglob("*.py")]
    assert len(files) > 100  # the scan sees the project
    long = {str(p.relative_to(ROOT)): n for p in files if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by purpose): {long}"
