"""state.borrowed: the engine's borrowed views of the caller's arrays (same data, no owner)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from simulator import engine
from simulator.kernel import state


@njit
def _bump_through_borrowed(st, seat):
    b = state.borrowed(st)
    b.ps[seat, state.PS_NDRAWS] += 7
    b.conc[seat, 3] += 2
    return b.conc[seat].shape[0], b.ps.strides[0]


@njit
def _views(rec):
    return state.borrowed(rec)[0].sum()


def test_a_borrowed_state_writes_through_to_the_callers_arrays():
    st = engine.alloc(False, state.MAX_WINS)
    n, stride = _bump_through_borrowed(st, 2)
    assert st.ps[2, state.PS_NDRAWS] == 7 and st.conc[2, 3] == 2 and st.conc.sum() == 2
    assert n == state.N_KINDS and stride == st.ps.strides[0]


def test_borrowed_keeps_none_members_and_sliced_views():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)[:, 1]  # a strided view
    assert _views((a, None)) == a.sum()


def test_borrowed_refuses_what_it_cannot_borrow():
    with pytest.raises(TypingError, match="borrowed: expected arrays"):
        _views((np.zeros(3), 1))
