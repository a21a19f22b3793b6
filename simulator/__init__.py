"""xuezhan simulator: tiles, rules, hand evaluation and scoring, engine, bots, batch runner, CLI."""

__version__ = "0.1.0"

from simulator import numba_cache as _numba_cache  # noqa: E402  (reads files only; numba is imported later)

_numba_cache.drop_stale_caches()  # before any module of the package can compile or load a cached function
