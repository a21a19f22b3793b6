"""What the deciding seat sees of the table, as one record: :class:`SeatView`.

The dispatchers of :mod:`simulator.bots` build it once per decision (:func:`seat_view`) from the engine's records
and hand it to the parameterised bots with the seat's own hand (:class:`~simulator.kernel.shape.HandTiles`). It holds
public information and the rules only — never the wall or another seat's concealed tiles.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


class SeatView(NamedTuple):
    """The table as seat ``seat`` sees it when it decides:

    - ``table: uint8[5**9, 32]`` the suit table (:mod:`simulator.kernel.tables`), ``params: int64[N_PARAMS]`` the rules,
    - ``ps: int64[4, PS_N]`` the per-seat scalars (the bots read the public ones: voids, who has won, draws made,
      discards, declarations),
    - ``mk_all, mt_all: int8[4, 4]`` and ``nm_all: int64[4]`` every seat's melds (another seat's 暗杠 is read only
      through :func:`simulator.bots.common.face_up`),
    - ``visible: int8[27]`` the kinds seen face up (with the seat's own 暗杠 added around the decision),
    - ``seat: int64`` the deciding seat, ``tiles_left: int64`` tiles left in the wall.

    Built in compiled code only through :func:`seat_view` (one tuple type, one compiled copy of each bot)."""

    table: np.ndarray
    params: np.ndarray
    ps: np.ndarray
    mk_all: np.ndarray
    mt_all: np.ndarray
    nm_all: np.ndarray
    visible: np.ndarray
    seat: np.int64
    tiles_left: np.int64


@njit(cache=True, inline="always")
def seat_view(table, params, ps, melds, visible, seat, tiles_left):
    """The one constructor of :class:`SeatView` in compiled code: ``melds`` = ``(mk_all, mt_all, nm_all)``;
    ``seat`` and ``tiles_left`` as int64."""
    mk_all, mt_all, nm_all = melds
    return SeatView(table, params, ps, mk_all, mt_all, nm_all, visible, np.int64(seat), np.int64(tiles_left))


@njit(cache=True, inline="always")
def with_tiles_left(view, tiles_left):
    """``view`` with ``tiles_left`` replaced (the value of a hand after a kong's replacement draw)."""
    return seat_view(view.table, view.params, view.ps, (view.mk_all, view.mt_all, view.nm_all), view.visible,
                     view.seat, tiles_left)
