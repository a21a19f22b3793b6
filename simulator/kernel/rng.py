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


@njit(cache=True, _nrt=False)
def mix64(z: np.uint64) -> np.uint64:
    """SplitMix64 finaliser: a bijection of uint64 with good avalanche."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, _nrt=False)
def next_u64(state: np.ndarray) -> np.uint64:
    """Advance the stream ``state`` (``uint64[1]``) and return 64 random bits."""
    state[0] = state[0] + GOLDEN
    return mix64(state[0])


@njit(cache=True, _nrt=False)
def randbelow(state: np.ndarray, n: int) -> int:
    """Uniform integer in ``[0, n)`` for ``1 <= n < 2**32`` (multiply-shift on the high 32 bits; the bias is
    below n / 2**32, far under any statistical resolution of the simulator)."""
    hi = next_u64(state) >> _S32
    return int((hi * np.uint64(n)) >> _S32)


@njit(cache=True, _nrt=False)
def derive(seed: np.uint64, index: int) -> np.uint64:
    """State of sub-stream ``index`` of ``seed`` (used for the per-seat bot streams)."""
    return mix64(seed ^ mix64(np.uint64(index + 1) * GOLDEN))


@njit(cache=True, _nrt=False)
def shuffle_int8(a: np.ndarray, state: np.ndarray) -> None:
    """Fisher–Yates shuffle of ``a`` in place."""
    for i in range(a.shape[0] - 1, 0, -1):
        j = randbelow(state, i + 1)
        t = a[i]
        a[i] = a[j]
        a[j] = t


# ---------------------------------------------------------------------------------------------------------
# numpy's SeedSequence, compiled: per-deal seeds without a Python object per hand. Bit for bit the algorithm of
# numpy/random/bit_generator.pyx (pool of four 32-bit words, hashmix/mix), which the tests check against
# ``np.random.SeedSequence(seed, spawn_key=(deal_id,)).generate_state(2, np.uint64)``.
_MASK32 = np.uint64(0xFFFFFFFF)
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_L = np.uint64(0xCA01F9DD)
_MIX_R = np.uint64(0x4973F715)
_S16 = np.uint64(16)
POOL = 4


@njit(cache=True, _nrt=False)
def _hashmix(value, hc):
    """numpy's hashmix on 32-bit words; ``hc`` is a one-element array holding the running hash constant."""
    value = (value ^ hc[0]) & _MASK32
    hc[0] = (hc[0] * _MULT_A) & _MASK32
    value = (value * hc[0]) & _MASK32
    return value ^ (value >> _S16)


@njit(cache=True, _nrt=False)
def _mix(x, y):
    r = ((_MIX_L * x) - (_MIX_R * y)) & _MASK32
    return r ^ (r >> _S16)


@njit(cache=True, _nrt=False)
def _words(n, out, at) -> int:
    """Little-endian 32-bit words of the non-negative integer ``n`` (``[0]`` for 0) written at ``out[at:]``."""
    v = np.uint64(n)
    if v == 0:
        out[at] = 0
        return at + 1
    while v > 0:
        out[at] = v & _MASK32
        at += 1
        v = v >> np.uint64(32)
    return at


@njit(cache=True, _nrt=True)
def spawn_state(seed_words, deal_id, out) -> None:
    """``out[:] = SeedSequence(seed, spawn_key=(deal_id,)).generate_state(2, uint64)``; ``seed_words`` are the
    seed's 32-bit words (see :func:`seed_words`)."""
    ent = np.zeros(seed_words.shape[0] + POOL + 2, np.uint64)
    n = 0
    for i in range(seed_words.shape[0]):
        ent[n] = seed_words[i]
        n += 1
    n = max(n, POOL)  # a spawned sequence pads the run entropy to the pool size
    n = _words(deal_id, ent, n)
    pool = np.zeros(POOL, np.uint64)
    hc = np.array([_INIT_A], np.uint64)
    for i in range(POOL):
        pool[i] = _hashmix(ent[i] if i < n else np.uint64(0), hc)
    for src in range(POOL):
        for dst in range(POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], hc))
    for src in range(POOL, n):
        for dst in range(POOL):
            pool[dst] = _mix(pool[dst], _hashmix(ent[src], hc))
    hb = _INIT_B
    state = np.zeros(4, np.uint64)
    for i in range(4):
        v = (pool[i % POOL] ^ hb) & _MASK32
        hb = (hb * _MULT_B) & _MASK32
        v = (v * hb) & _MASK32
        state[i] = v ^ (v >> _S16)
    out[0] = state[0] | (state[1] << np.uint64(32))
    out[1] = state[2] | (state[3] << np.uint64(32))


@njit(cache=True, _nrt=True)
def spawn_states(seed_words, deal_ids, wall_seeds, bot_seeds) -> None:
    out = np.zeros(2, np.uint64)
    for i in range(deal_ids.shape[0]):
        spawn_state(seed_words, deal_ids[i], out)
        wall_seeds[i] = out[0]
        bot_seeds[i] = out[1]


def seed_words(seed: int) -> np.ndarray:
    """The 32-bit words of a non-negative master seed, lowest first, as ``SeedSequence`` splits it."""
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    words = [seed & 0xFFFFFFFF] if seed == 0 else []
    while seed > 0:
        words.append(seed & 0xFFFFFFFF)
        seed >>= 32
    return np.array(words, dtype=np.uint64)
