"""Golden playthroughs: the digests of every array the engine returns, committed in tests/data/golden_play.json.

A refactor or a speed-up must leave them identical (same seed, same code behaviour ⇒ same bytes). A change that
means to alter play (a rule correction, a bot change) regenerates them, and its commit says why:

    python benchmarks/same_play.py --hands 200 --save tests/data/golden_play.json

The cases cover the compiled batch, the step API with Python agents, sessions under every dealer rule, 血流 and
唱歌/跳舞 (benchmarks/same_play.py lists them).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden_play.json"


def _same_play():
    spec = importlib.util.spec_from_file_location("same_play", ROOT / "benchmarks" / "same_play.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.fixture(scope="module")
def played(golden) -> dict:
    return _same_play().run(golden["hands"], golden["seed"])


def test_every_case_has_a_committed_digest(golden, played):
    assert set(golden["digests"]) == set(played)


@pytest.mark.parametrize("case", sorted(json.loads(GOLDEN.read_text())["digests"]))
def test_play_is_unchanged(golden, played, case):
    assert played[case] == golden["digests"][case], (
        f"{case}: play changed. If the change is meant to alter play, regenerate with "
        f"`python benchmarks/same_play.py --hands {golden['hands']} --save {GOLDEN.relative_to(ROOT)}` and say why "
        "in the commit message.")


def test_a_changed_array_changes_the_digest():
    """The digest covers the bytes, dtype and shape of every array, nested dicts included."""
    import numpy as np

    sp = _same_play()
    raw = {"p": np.arange(8, dtype=np.int64).reshape(4, 2), "nested": {"w": np.zeros(3, np.int8)}}
    base = sp.digest(raw)
    raw["nested"]["w"][1] = 1
    assert sp.digest(raw) != base
    raw["nested"]["w"][1] = 0
    assert sp.digest(raw) == base
    assert sp.digest({**raw, "p": raw["p"].astype(np.int32)}) != base
    assert sp.digest({**raw, "p": raw["p"].reshape(2, 4)}) != base


GOLDEN_RUNS = ROOT / "tests" / "data" / "golden_runs.json"


def test_the_logs_of_four_small_studies_are_unchanged():
    """The Parquet bytes the runner writes for quickstart, sessions, xueliu and declare (small), file by file:
    the engine, the log encoding and the chunking together (``same_play.py --runs --save ...`` regenerates).
    The files' key-value metadata holds the xuezhan version, so a version bump regenerates them too."""
    ref = json.loads(GOLDEN_RUNS.read_text())
    got = _same_play().run_studies(ref["seed"])
    changed = sorted(k for k in set(ref["digests"]) | set(got) if ref["digests"].get(k) != got.get(k))
    assert not changed, f"these log files changed: {changed}"
