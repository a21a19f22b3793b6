"""Compiled UTF-8 writers of the log's text columns: tile notation (``123m55p``) of count rows and meld lists
(``pung:5p,kong:7s,ckong:3m``), straight into the buffers of an Arrow string array (UTF-8 data + int32 offsets).
A compiled module of its own so that :mod:`simulator.logs.records` (which follows the column table of
:mod:`simulator.logs.schema`) is plain Python: editing the log columns leaves numba's cache valid.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.kernel.tiles import SUITS
from simulator.vocab import MELD_NAMES

SUIT_BYTES = np.frombuffer(SUITS.encode(), np.uint8).copy()
MELD_BYTES = np.zeros((4, 6), np.uint8)
for _i, _name in enumerate(MELD_NAMES):
    MELD_BYTES[_i, :len(_name)] = np.frombuffer(_name.encode(), np.uint8)
MELD_LEN = np.array([len(x) for x in MELD_NAMES], np.int64)


@njit(cache=True, _nrt=True)
def notation_utf8(counts, suits):
    """ASCII notation (``123m55p``) of each row of ``counts: uint8[m, 27]``: ``(data, offsets)`` of a string array.

    Branch-free for counts up to 4: a rank's digit is written four times and the position advances by its count
    (the buffer has 4 bytes of slack); the suit letter is always written and kept only if the suit has tiles.
    """
    m = counts.shape[0]
    total = 0
    for i in range(m):
        for k in range(counts.shape[1]):
            total += counts[i, k]
    data = np.empty(total + 3 * m + 4, np.uint8)
    offsets = np.empty(m + 1, np.int32)
    pos = 0
    for i in range(m):
        offsets[i] = pos
        for s in range(3):
            start = pos
            for r in range(9):
                c = counts[i, 9 * s + r]
                d = np.uint8(49 + r)  # '1' + r
                if c <= 4:
                    data[pos] = d
                    data[pos + 1] = d
                    data[pos + 2] = d
                    data[pos + 3] = d
                    pos += c
                else:
                    for _ in range(c):
                        data[pos] = d
                        pos += 1
            data[pos] = suits[s]
            pos += pos > start
    offsets[m] = pos
    return data[:pos], offsets


@njit(cache=True, _nrt=True)
def melds_utf8(mk, mt, nmelds, suits, names, name_len):
    """``pung:5p,kong:7s,ckong:3m`` for each row (melds in the order they were made): ``(data, offsets)``."""
    m = mk.shape[0]
    data = np.empty(9 * mk.shape[1] * m, np.uint8)  # "ckong:3m," at most per meld
    offsets = np.empty(m + 1, np.int32)
    pos = 0
    for i in range(m):
        offsets[i] = pos
        for j in range(nmelds[i]):
            if j > 0:
                data[pos] = 44  # ','
                pos += 1
            kind = mk[i, j]
            for c in range(name_len[kind]):
                data[pos] = names[kind, c]
                pos += 1
            data[pos] = 58  # ':'
            data[pos + 1] = 49 + mt[i, j] % 9
            data[pos + 2] = suits[mt[i, j] // 9]
            pos += 3
    offsets[m] = pos
    return data[:pos], offsets
