"""Compiled random streams for the engine: splitmix64, one ``uint64`` of state per stream.

A stream is a one-element ``uint64`` array (so compiled functions can advance it in place). SplitMix64 is a
counter-based generator (state += golden gamma, then a bijective mix), fast and statistically sound for
simulation; it is only ever seeded from ``numpy.random.SeedSequence`` output, so distinct deals get
independent streams. Each seat's bot stream is derived from the deal's bot seed and the seat number, so one
seat's draws never shift another seat's randomness.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)


@njit(cache=True)
def mix64(z: np.uint64) -> np.uint64:
    """SplitMix64 finaliser: a bijection of uint64 with good avalanche."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def next_u64(state: np.ndarray) -> np.uint64:
    """Advance the stream ``state`` (``uint64[1]``) and return 64 random bits."""
    state[0] = state[0] + GOLDEN
    return mix64(state[0])


@njit(cache=True)
def randbelow(state: np.ndarray, n: int) -> int:
    """Uniform integer in ``[0, n)`` for ``1 <= n < 2**32`` (multiply-shift on the high 32 bits; the bias is
    below n / 2**32, far under any statistical resolution of the simulator)."""
    hi = next_u64(state) >> _S32
    return int((hi * np.uint64(n)) >> _S32)


@njit(cache=True)
def derive(seed: np.uint64, index: int) -> np.uint64:
    """State of sub-stream ``index`` of ``seed`` (used for the per-seat bot streams)."""
    return mix64(seed ^ mix64(np.uint64(index + 1) * GOLDEN))


@njit(cache=True)
def shuffle_int8(a: np.ndarray, state: np.ndarray) -> None:
    """Fisher–Yates shuffle of ``a`` in place."""
    for i in range(a.shape[0] - 1, 0, -1):
        j = randbelow(state, i + 1)
        t = a[i]
        a[i] = a[j]
        a[j] = t
