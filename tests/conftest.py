"""Test session set-up: on a cold numba cache, compile the engine's copies at once, before any test runs.

Most tests play random/greedy line-ups (the engine's simple copy), some play the parameterised bots (the full
copy; see simulator.bots), the Python-bot tests (RL environment, replays, search) the step path's copy.
Compiled on demand inside the tests, they would be compiled one after the other on one core, and under
pytest-xdist (CI runs ``pytest -n 2``) each worker would compile the same copies at the same time. Here, in the
session's one controlling process, before the workers start: a child compiles the full copy and then the step
path while this process compiles the simple one (each warm-up also splits its own work over two processes), so a
cold CI run waits for the longer of the two only, and the workers load the cache. Nothing happens when the cache
is warm.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (derandomize: a CI failure reproduces, no test passes or
# fails by luck) and have no per-example deadline (timings on a shared two-core machine are noise).
# HYPOTHESIS_PROFILE=explore draws fresh random examples, for a local search for counterexamples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_sessionstart(session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: its controller ran this before starting the workers (their hooks run last)
    from simulator import numba_cache
    from simulator.hands import precompile, warmup

    cold = [lineup for lineup in ("simple", "full") if not warmup.cache_is_warm(lineup)]
    step_cold = not numba_cache.is_cached(*precompile.step_plan())
    steps = [*(["warmup.warm_up(progress=False, lineups=['full'])"] if "full" in cold else []),
             *(["precompile.precompile_step()"] if step_cold else [])]  # the step path after the full copy's callees
    child = None
    if steps:
        child = subprocess.Popen([sys.executable, "-c", "; ".join(["from simulator.hands import precompile, warmup",
                                                                   *steps])])
    try:
        if "simple" in cold:
            warmup.warm_up(progress=False, lineups=["simple"])
    finally:
        if child is not None:
            child.wait()


@pytest.fixture
def no_numba_cache_writes(monkeypatch):
    """For tests that call compiled engine internals directly: numba compiles copies for the test's argument
    types, which are kept out of the disk cache (they would only cost disk and load time: the engine's own
    signatures are checked by type inference, tests/signature_probe.py, whatever the cache holds). Loading
    still works."""
    from numba.core import caching

    monkeypatch.setattr(caching.Cache, "save_overload", lambda self, sig, data: None)
