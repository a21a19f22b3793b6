"""What the expert's candidate discards of one turn share: computed once from the 14 tiles, read per discard.

:func:`~simulator.bots.expert_hand.discard_values` values the hand left by each legal discard (up to 14 kinds).
Each of those hands differs from the 14 tiles by one copy of one kind, so most of what a valuation reads is the
same for all of them:

- the acceptance's draws: with a usable void (:func:`~simulator.bots.common.usable_void`) a hand's shanten is
  :func:`~simulator.kernel.shape.two_suit_distance` of its two kept suits' keys (and seven pairs). A draw lowers it
  only if it lowers the distance of a suit-table column used by a best (tight) split of the melds between the two
  suits, since one tile lowers a column by at most one (the table is exact: ``dist(key) ≤ 1 + dist(key + tile)``).
  The columns each draw lowers (:func:`~simulator.bots.common.column_gains`) are stored in the suit table's row
  of the key itself (:mod:`simulator.kernel.tables`), so :func:`~simulator.bots.common.turn_acceptance` (shared with the
  greedy bots' :func:`~simulator.bots.common.pick_among`) prices a draw by one mask test on a row it has read;
- the kong income still to come (:func:`~simulator.bots.expert_hand.kong_potential`) changes only for a
  discard of a kind held three or four times, or of the last copy of a punged kind (:func:`kong_changes`);
- the tally behind the big shapes' distances (:func:`kept_tally`, read by
  :func:`~simulator.bots.expert_value.counts_of`) moves by one kind (:func:`moved_tally`).

Every shortcut gives the exact result of the computation it replaces (integers, or sums of whole numbers of
tiles), so play is unchanged; tests/test_expert_turn.py compares each with it on random hands.

The constants of one decision that the value kernels read (suit table, rules, ``visible``, unseen tiles, draws
left, opponents in, shape incomes, the ready bonus, the 清一色 cache, the discard weights per suit) travel as one
record, :class:`Outlook`, built once per valuation; what varies per candidate is passed beside it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from simulator.bots.common import unseen
from simulator.kernel.shape import MELD_PUNG
from simulator.kernel.state import N_KINDS

N_COLS = 10  # the suit table's columns: m melds + 5·p pairs


class Outlook(NamedTuple):
    """What the expert's value kernels (:mod:`simulator.bots.expert_hand`, :mod:`simulator.bots.expert_value`) read
    that stays the same for every candidate of one decision, built once per valuation by :func:`outlook`:

    - ``table: uint8[5**9, 32]`` the suit table, ``params: int64[N_PARAMS]`` the rules, ``visible: int8[27]``,
    - ``u_tot: float64`` unseen tiles, ``n_draws: int64`` own draws left, ``n_in: int64`` opponents still in,
    - ``inc: float64[N_SHAPES]`` the income per target shape (``expert_value.shape_incomes``),
    - ``ready_bonus: float64`` what being ready at the exhaustive draw is worth (``expert_hand.ready_bonus``),
    - ``qc: float64[6]`` the 清一色 reach cache (``expert_value.shapes_value``), ``ronw: float64[3]`` the opponents'
      discards hitting a wait per suit (``expert_value.ron_weights``).

    What varies per candidate (its hand, shanten, draws, the discarded suit, its ambition, its acceptance …) is
    passed beside it. Its arrays are scratch on the stack of the function that builds it
    (:func:`~simulator.kernel.state.stack_empty`)."""

    table: np.ndarray
    params: np.ndarray
    visible: np.ndarray
    u_tot: np.float64
    n_draws: np.int64
    n_in: np.int64
    inc: np.ndarray
    ready_bonus: np.float64
    qc: np.ndarray
    ronw: np.ndarray


@njit(cache=True, inline="always")
def outlook(table, params, visible, u_tot, n_draws, n_in, ready_bonus, arrays):
    """The one constructor of :class:`Outlook` in compiled code; ``arrays`` = ``(inc, qc, ronw)``."""
    inc, qc, ronw = arrays
    return Outlook(table, params, visible, np.float64(u_tot), np.int64(n_draws), np.int64(n_in), inc,
                   np.float64(ready_bonus), qc, ronw)


@njit(cache=True, _nrt=False)
def kong_changes(conc, mk, mt, nm) -> int:
    """Bit mask of the kinds whose discard from ``conc`` (the 14 tiles) can change the kong income still to come
    (:func:`~simulator.bots.expert_hand.kong_potential`): held three or four times (a concealed triplet is lost or
    made), or held once beside a pung of it (its 加杠 tile leaves the hand). Any other discard leaves it as it is
    for the 14 tiles."""
    mask = 0
    for k in range(N_KINDS):
        if conc[k] >= 3:
            mask |= 1 << k
    for i in range(nm):
        k = np.int64(mt[i])
        if mk[i] == MELD_PUNG and conc[k] == 1:
            mask |= 1 << k
    return mask


@njit(cache=True, inline="always")
def kind_tally(c, u):
    """What one kept kind held ``c`` times with ``u`` unseen copies adds to a :func:`kept_tally`."""
    h4 = 1 if c == 4 else 0
    h3 = 1 if c == 3 else 0
    h2 = 1 if c == 2 else 0
    h1 = 1 if c == 1 else 0
    acc_dd = u if c == 1 or c == 2 else 0.0
    acc_qd = u if c == 1 or c == 3 else 0.0
    return h4, h3, h2, h1, c >> 1, c & 1, acc_dd, acc_qd


@njit(cache=True, _nrt=False)
def kept_tally(conc, void, visible):
    """``(h4, h3, h2, h1, pairs, singles, acc_dd, acc_qd)`` over the kept suits: kinds held 4, 3, 2 and 1
    times, pairs and odd kinds (七对), unseen copies of the kinds held once or twice (对对胡) and of those held
    an odd number of times (七对). The acceptances are sums of whole numbers of copies: exact in any order."""
    h4 = h3 = h2 = h1 = 0
    pairs = singles = 0
    acc_dd = acc_qd = 0.0
    for k in range(N_KINDS):
        if k // 9 == void:
            continue
        c = np.int64(conc[k])
        if c == 0:
            continue
        a4, a3, a2, a1, ap, asg, add, aqd = kind_tally(c, float(unseen(conc, visible, k)))
        h4 += a4
        h3 += a3
        h2 += a2
        h1 += a1
        pairs += ap
        singles += asg
        acc_dd += add
        acc_qd += aqd
    return h4, h3, h2, h1, pairs, singles, acc_dd, acc_qd


@njit(cache=True, _nrt=False)
def moved_tally(tally, conc, void, visible, k, d):
    """:func:`kept_tally` of ``conc`` from ``tally``, the tally of ``conc`` before ``d`` (±1) copies of kind ``k``
    were added (``conc`` already holds the change): only kind k's part is recounted."""
    if k // 9 == void:
        return tally
    h4, h3, h2, h1, pairs, singles, acc_dd, acc_qd = tally
    c = np.int64(conc[k])
    before = c - d
    u = 4 - before - np.int64(visible[k])
    o4, o3, o2, o1, op, osg, odd_, oqd = kind_tally(before, float(u) if u > 0 else 0.0)
    n4, n3, n2, n1, npr, nsg, ndd, nqd = kind_tally(c, float(unseen(conc, visible, k)))
    return (h4 - o4 + n4, h3 - o3 + n3, h2 - o2 + n2, h1 - o1 + n1, pairs - op + npr, singles - osg + nsg,
            acc_dd - odd_ + ndd, acc_qd - oqd + nqd)
