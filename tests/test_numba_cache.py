"""The numba disk cache never runs a caller with a callee older than its source (issue 34, item 1).

numba checks a cached function against its own file only, while the machine code embeds its compiled callees.
Each test copies the package to a temporary directory, runs a compiled caller in a subprocess (which compiles
and caches it with its callee from another file), edits the callee only, and runs it again in a fresh process:
the second run must show the edit. Both cache locations are covered: the package's ``__pycache__`` and a
``NUMBA_CACHE_DIR`` elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simulator import numba_cache

PACKAGE = Path(numba_cache.__file__).resolve().parent

# settlement.huazhu_penalty (caller, settlement.py) -> scoring.points_of (callee, scoring.py): the 查花猪 penalty
# of a rule set with huazhu_penalty: cap, cap 3 fan, exponential points = 2^3 = 8 points
CALLER = """
import sys
{engine}
from simulator.rules import load_rules
from simulator.kernel.settlement import huazhu_penalty
rules = load_rules({config!r}, {{"scoring": {{"cap": 3}}, "settlement": {{"huazhu_penalty": "cap"}}}})
print(int(huazhu_penalty(rules.to_arrays())))
"""
CALLEE_LINE = "    return np.int64(1) << e\n"
EDITED_LINE = "    return (np.int64(1) << e) + 1000\n"


def _run(root: Path, env: dict, engine: bool) -> int:
    code = CALLER.format(engine="import simulator.engine" if engine else "",
                         config=str(PACKAGE.parent / "configs" / "chengdu.yaml"))
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.split()[-1])


@pytest.mark.parametrize("own_cache_dir", [False, True], ids=["pycache", "NUMBA_CACHE_DIR"])
def test_editing_a_callee_reaches_its_cached_caller(tmp_path, own_cache_dir):
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "simulator", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(root)
    if own_cache_dir:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    # with its own cache dir, the run also imports the engine (where the check used to live only)
    assert _run(root, env, engine=own_cache_dir) == 8
    cache = tmp_path / "numba-cache" if own_cache_dir else root / "simulator" / "kernel" / "__pycache__"
    assert list(cache.rglob("settlement.huazhu_penalty*.nbc")), "the caller was not cached: nothing tested"
    scoring = root / "simulator" / "kernel" / "scoring.py"
    text = scoring.read_text()
    assert text.count(CALLEE_LINE) == 1
    scoring.write_text(text.replace(CALLEE_LINE, EDITED_LINE))
    assert _run(root, env, engine=own_cache_dir) == 1008


def test_compiled_sources_are_found_by_walking_the_package():
    sources = {p.relative_to(PACKAGE).as_posix() for p in numba_cache.compiled_sources()}
    compiled = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if "@njit" in p.read_text()}
    assert compiled and compiled <= sources
    # constants the compiled code embeds come from plain modules it imports: the rule vocabulary (parameter
    # slots, enumerations), the key table, the bot table, the log column table (the output slots), tiles
    assert {"rules/vocab.py", "rules/keys.py", "rules/bot_table.py", "rules/columns.py", "kernel/tiles.py"} <= sources
    # the CLI and the runner are never compiled nor imported by compiled modules: editing them keeps the cache
    assert not {"cli/__init__.py", "run/runner.py", "run/study.py"} & sources


# Python-only modules: loading and validating rules (pydantic: the package simulator.rules itself), their schema
# and docs, the logs' Arrow schemas and their encoding, the files, the CLI. The compiled modules import only
# numba-free vocabulary (rules/vocab.py, rules/keys.py, rules/bot_table.py, rules/columns.py, vocab.py,
# kernel/tiles.py), so editing any of these leaves every compiled function's cache valid.
PYTHON_ONLY = ("rules/__init__.py", "rules/blocks.py", "rules/seats.py", "rules/load.py", "logs/schema.py",
               "logs/records.py", "logs/encode.py", "files.py", "logs/manifest.py", "cli/catalog.py",
               "cli/__init__.py", "cli/run.py", "run/runner.py", "hands/__init__.py", "agents/__init__.py")


def test_python_only_modules_are_no_compiled_source():
    sources = {p.relative_to(PACKAGE).as_posix() for p in numba_cache.compiled_sources()}
    assert not set(PYTHON_ONLY) & sources


def test_editing_a_python_only_module_keeps_the_compiled_cache_valid(tmp_path):
    """The digest that decides whether numba's caches are dropped (``numba_cache.drop_stale_caches``) is the same
    after an edit of each Python-only module, and changes after an edit of a compiled one (the check can fail)."""
    root = tmp_path / "simulator"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))

    def digest() -> str:
        return numba_cache.sources_digest(numba_cache.compiled_sources(root), root)

    before = digest()
    for name in PYTHON_ONLY:
        with (root / name).open("a", encoding="utf-8") as f:
            f.write("\nEDITED = 1  # an edit of a Python-only module\n")
        assert digest() == before, name
    with (root / "rules" / "vocab.py").open("a", encoding="utf-8") as f:
        f.write("\nEDITED = 1\n")
    assert digest() != before


def test_a_stamp_mismatch_deletes_only_that_locations_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(numba_cache, "_checked", False)
    dirs = numba_cache.cache_dirs(numba_cache.compiled_sources())
    # one cache directory per directory with compiled sources: simulator/ (errors, vocab), rules/ (the vocabulary),
    # kernel/, bots/, engine/, search/
    assert len(dirs) == 6 and all(d.parent == tmp_path for d in dirs)
    for d in dirs:
        d.mkdir()
        (d / "f-1.py311.nbi").write_bytes(b"x")
        (d / numba_cache.STAMP).write_text("stale")
    (dirs[0] / numba_cache.STAMP).write_text(numba_cache.sources_digest(numba_cache.compiled_sources(), PACKAGE))
    numba_cache.drop_stale_caches()
    assert (dirs[0] / "f-1.py311.nbi").exists()  # current stamp: kept
    assert not (dirs[1] / "f-1.py311.nbi").exists()  # stale stamp: deleted, stamp renewed
    assert (dirs[1] / numba_cache.STAMP).read_text() == (dirs[0] / numba_cache.STAMP).read_text()
