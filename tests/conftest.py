"""Test session set-up: on a cold numba cache, compile both copies of the engine at once.

Most tests play random/greedy line-ups (the engine's simple copy), some play the parameterised bots (the full
copy; see simulator.bots). Compiled on demand inside the test process, the two would be compiled one after the
other on one core; here a child compiles the full copy while this process compiles the simple one (each
warm-up also splits its own work over two processes), so a cold CI run waits for the longer of the two only.
Nothing happens when the cache is warm.
"""

from __future__ import annotations

import subprocess
import sys


def pytest_sessionstart(session) -> None:
    from simulator import warmup

    cold = [lineup for lineup in ("simple", "full") if not warmup.cache_is_warm(lineup)]
    child = None
    if "full" in cold:
        child = subprocess.Popen([sys.executable, "-c", "from simulator.warmup import warm_up; "
                                  "warm_up(progress=False, lineups=['full'])"])
    try:
        if "simple" in cold:
            warmup.warm_up(progress=False, lineups=["simple"])
    finally:
        if child is not None:
            child.wait()
