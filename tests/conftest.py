"""Test session set-up: on a cold numba cache, compile both copies of the engine at once.

Most tests play random/greedy line-ups (the engine's simple copy), some play the parameterised bots (the full
copy; see simulator.bots). Compiled on demand inside the test process, the two would be compiled one after the
other on one core; here a child compiles the full copy while this process compiles the simple one (each
warm-up also splits its own work over two processes), so a cold CI run waits for the longer of the two only.
Nothing happens when the cache is warm.
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
    from simulator.hands import warmup

    cold = [lineup for lineup in ("simple", "full") if not warmup.cache_is_warm(lineup)]
    child = None
    if "full" in cold:
        child = subprocess.Popen([sys.executable, "-c", "from simulator.hands.warmup import warm_up; "
                                  "warm_up(progress=False, lineups=['full'])"])
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
