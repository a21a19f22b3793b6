"""Installable as a package, not only as a checkout: the wheel carries every module and the configs/ rule sets and
studies, and an installed copy runs the quick start from an empty directory (offline, no source tree)."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from cli_helpers import bare_venv

import xuezhan

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "simulator", "analysis", "xuezhan", "configs")
CODE_PACKAGES = ("simulator", "analysis", "xuezhan")


def tree_packages() -> set[str]:
    """Dotted names of the code packages of the source tree (directories with an ``__init__.py``)."""
    inits = [p for top in CODE_PACKAGES for p in (ROOT / top).rglob("__init__.py") if "__pycache__" not in p.parts]
    return {".".join(p.parent.relative_to(ROOT).parts) for p in inits}


def test_pyproject_lists_every_package_and_ships_configs():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    data = {p for p in tool["packages"] if p.startswith("simulator.configs")}
    assert set(tool["packages"]) - data == tree_packages()
    assert tool["package-dir"] == {"": "."}  # no mapping: an editable install is a plain .pth line (test_typing)
    link = ROOT / "simulator" / "configs"
    assert link.is_symlink() and os.readlink(link) == "../configs"  # configs/ stays the one copy
    assert data == {"simulator.configs", "simulator.configs.studies", "simulator.configs.tuned",
                    "simulator.configs.designs"}


def test_public_api_names_the_modules_objects():
    import importlib

    assert set(xuezhan.__all__) == {"__version__", *xuezhan.API}
    for name, module in xuezhan.API.items():
        assert getattr(xuezhan, name) is getattr(importlib.import_module(module), name), name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = xuezhan.no_such_name


def _setuptools_builds_wheels() -> bool:
    version = tuple(int(x) for x in importlib.metadata.version("setuptools").split(".")[:2])
    return version >= (77, 0)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built offline from a copy of the source files (the checkout stays clean)."""
    # the test extra pins it: an older one is a broken test environment, never a skip
    assert _setuptools_builds_wheels(), "building a wheel offline needs setuptools>=77 (pip install -e '.[test]')"
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    for name in SOURCES:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy2)(ROOT / name, src / name, **(
            {"ignore": ignore} if (ROOT / name).is_dir() else {}))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--wheel-dir", str(tmp / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = (tmp / "dist").glob("xuezhan-*.whl")
    return path


def test_the_wheel_holds_every_module_and_every_config(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {str(p.relative_to(ROOT)) for top in CODE_PACKAGES for p in (ROOT / top).rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules <= names
    configs = {f"simulator/configs/{p.relative_to(ROOT / 'configs')}" for p in (ROOT / "configs").rglob("*.yaml")}
    assert configs <= names and "simulator/configs/studies/quickstart.yaml" in configs
    assert not any("__pycache__" in n or n.startswith(("configs/", "tests/")) for n in names)
    # the typed API (PEP 561) and the licence travel with it
    assert {"xuezhan/__init__.pyi", "xuezhan/py.typed", "simulator/py.typed", "analysis/py.typed"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def share_compiled_code(installed: Path) -> None:
    """Give the installed package this checkout's numba cache, so that the test measures packaging rather than a
    cold compilation (a minute or more, the same as a fresh checkout's first run). numba reuses a cache file
    when its source file has the recorded modification time and size: the installed sources are byte copies of
    the checkout's, so they get the checkout's times, and the cache files are copied beside them, with the stamp
    of each cache directory (simulator.numba_cache: a directory without its stamp is emptied on import, so every
    package with compiled code, simulator/bots and simulator/engine included, needs its own). The checkout's cache
    is found where it is, ``$NUMBA_CACHE_DIR`` or ``__pycache__``; the installed copy runs without
    ``$NUMBA_CACHE_DIR`` (its caches are in its ``__pycache__``). A missing or stale checkout cache only makes the
    installed copy compile."""
    from simulator import numba_cache

    source = ROOT / "simulator"
    for py in source.rglob("*.py"):
        target = installed / py.relative_to(source)
        if target.is_file() and target.read_bytes() == py.read_bytes():
            st = py.stat()
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    for package in sorted({src.parent for src in numba_cache.compiled_sources(source)}):
        (cache,) = numba_cache.cache_dirs([package / "__init__.py"])
        target = installed / package.relative_to(source) / "__pycache__"
        for cached in [*cache.glob("*.nb[ic]"), *cache.glob(numba_cache.STAMP)]:
            target.mkdir(exist_ok=True)
            shutil.copy2(cached, target / cached.name)


@pytest.mark.slow
def test_an_installed_wheel_runs_the_quick_start_from_an_empty_directory(wheel: Path, tmp_path: Path):
    venv = tmp_path / "venv"
    python, purelib = bare_venv(venv)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    share_compiled_code(purelib / "simulator")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "NUMBA_CACHE_DIR")}
    work = tmp_path / "empty"
    work.mkdir()
    where = subprocess.run([python, "-c", "import simulator, analysis, xuezhan; from simulator.rules import "
                            "CONFIG_DIR; print(simulator.__file__, analysis.__file__, xuezhan.__file__, CONFIG_DIR, "
                            "xuezhan.load_rules('qq_sichuan').name)"], cwd=work, env=env, capture_output=True,
                           text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    paths = where.stdout.split()
    assert all(p.startswith(str(purelib)) for p in paths[:4]), paths  # the installed copy, not the checkout
    assert paths[3] == str(purelib / "simulator" / "configs") and paths[4] == "qq_sichuan"
    proc = subprocess.run([venv / "bin" / "xuezhan", "study", "quickstart", "--hands", "8", "--jobs", "1",
                           "--quiet"], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split(":")[0] for line in proc.stdout.splitlines()[:3]] == ["chengdu", "cap3", "uncapped"]
    assert (work / "runs" / "quickstart" / "report.html").is_file()
