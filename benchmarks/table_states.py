"""Replay recorded hands to the table state at every discard (shared by the fitting scripts in ``benchmarks/``).

The engine's event log replays a hand with every player's concealed tiles, so a script can ask, at any discard,
what the discarding player saw (public information plus its own tiles) and what the others really held.
:func:`recorded_hands` plays hands with the log on; :func:`discards` walks one hand's events and yields the
state just before each discard is applied (its arrays are updated in place as the walk goes on: use them
before asking for the next discard); :func:`deal_ins` says which discards were won on, by whom, for how much.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from simulator.hands import run_batch
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_CKONG, MELD_KONG, MELD_PUNG
from simulator.kernel.state import void_rule
from simulator.kernel.tiles import counts_from_str
from simulator.logs import records

WALL = S.N_TILES - 13 * S.N_SEATS - 1  # tiles left after the deal


@dataclass
class TableState:
    """Every seat's concealed tiles and melds, the ``ps`` columns bots read (void, won, draws, kongs, discards,
    passed-on kinds), the kinds seen by all (discards and exposed melds, not concealed kongs), the tiles left,
    each seat's void as evaluate sees it (−1 under ``void_suit: none``), and each seat's pass lock (the tile it
    declined since its last draw, or −1)."""

    conc: np.ndarray
    ps: np.ndarray = field(default_factory=lambda: np.zeros((S.N_SEATS, S.PS_N), np.int64))
    mk: np.ndarray = field(default_factory=lambda: np.zeros((S.N_SEATS, 4), np.int8))
    mt: np.ndarray = field(default_factory=lambda: np.zeros((S.N_SEATS, 4), np.int8))
    nm: np.ndarray = field(default_factory=lambda: np.zeros(S.N_SEATS, np.int64))
    visible: np.ndarray = field(default_factory=lambda: np.zeros(S.N_KINDS, np.int8))
    left: int = WALL
    evoid: list[int] = field(default_factory=lambda: [-1] * S.N_SEATS)
    lock: list[int] = field(default_factory=lambda: [-1] * S.N_SEATS)

    def seen_by(self, seat: int) -> np.ndarray:
        """``visible`` as ``seat`` counts it: its own concealed kongs added (they are face down to the others)."""
        vis = self.visible.copy()
        for i in range(self.nm[seat]):
            if self.mk[seat, i] == MELD_CKONG:
                vis[self.mt[seat, i]] += 4
        return vis


def discards(params: np.ndarray, dealt: list[str], events: list[tuple[int, ...]]
             ) -> Iterator[tuple[int, tuple[int, ...], TableState]]:
    """``(event index, event, state before it)`` for every discard of one recorded hand."""
    st = TableState(np.array([counts_from_str(d) for d in dealt], np.uint8))
    st.ps[:, S.PS_VOID] = -1
    declared = void_rule(params) != S.VOID_NONE
    for i, ev in enumerate(events):
        typ, seat, tile, _amount, a, _b = ev
        if typ == S.EV_EXCHANGE:
            st.conc[seat, tile] -= 1
            st.conc[a, tile] += 1
        elif typ == S.EV_VOID:
            st.ps[seat, S.PS_VOID] = a
            st.evoid[seat] = a if declared else -1
        elif typ == S.EV_DRAW:
            st.conc[seat, tile] += 1
            st.ps[seat, S.PS_NDRAWS] += 1
            st.ps[seat, S.PS_SAFE] = 0
            st.lock[seat] = -1
            st.left -= 1
        elif typ == S.EV_DISCARD:
            yield i, ev, st
            st.conc[seat, tile] -= 1
            st.visible[tile] += 1
            st.ps[seat, S.PS_DISCARDED] |= 1 << tile
            for q in range(S.N_SEATS):
                if q != seat:
                    st.ps[q, S.PS_SAFE] |= 1 << tile
        elif typ == S.EV_PUNG:
            _meld(st, seat, tile, MELD_PUNG, 2, 2)
        elif typ == S.EV_KONG:
            st.ps[seat, S.PS_NKONGS] += 1
            if a == 1:  # 明杠 from a discard
                _meld(st, seat, tile, MELD_KONG, 3, 3)
            elif a == 2:  # 加杠: the pung becomes a kong
                st.conc[seat, tile] -= 1
                for j in range(st.nm[seat]):
                    if st.mt[seat, j] == tile:
                        st.mk[seat, j] = MELD_KONG
                st.visible[tile] += 1
            else:  # 暗杠: face down, unseen by the others
                _meld(st, seat, tile, MELD_CKONG, 4, 0)
        elif typ == S.EV_DECLINE and a != S.WK_SELF_DRAW:
            st.lock[seat] = tile
        elif typ == S.EV_ROBBED:
            st.conc[seat, tile] -= 1
            st.visible[tile] += 1
        elif typ == S.EV_WIN:  # a discard won on stays in visible: a tile seen face up stays seen
            st.ps[seat, S.PS_WON] = 1


def deal_ins(events: list[tuple[int, ...]]) -> dict[int, dict[int, int]]:
    """``{index of a discard event won on: {winner: points paid}}`` for one recorded hand (a 一炮多响 discard has
    several winners)."""
    won: dict[int, dict[int, int]] = {}
    last = -1
    for i, ev in enumerate(events):
        if ev[0] == S.EV_DISCARD:
            last = i
        elif ev[0] == S.EV_WIN and ev[4] == S.WK_DISCARD:
            won.setdefault(last, {})[ev[1]] = ev[3]
    return won


def _meld(st: TableState, seat: int, tile: int, kind: int, taken: int, shown: int) -> None:
    st.conc[seat, tile] -= taken
    st.mk[seat, st.nm[seat]], st.mt[seat, st.nm[seat]] = kind, tile
    st.nm[seat] += 1
    st.visible[tile] += shown


def recorded_hands(rules, hands: int, seed: int, chunk: int = 250
                   ) -> Iterator[tuple[int, list[str], list[tuple[int, ...]], dict]]:
    """``(hand id, dealt tiles per seat, events, players columns of the hand)`` of hands ``0 … hands−1``."""
    for start in range(0, hands, chunk):
        ids = np.arange(start, min(hands, start + chunk), dtype=np.int64)
        raw = run_batch(rules, ids, seed, record=True)
        players = records.to_columns(raw)["players"]
        ev = records.event_columns(raw)
        dealt = np.asarray(players["dealt"]).astype(str).reshape(-1, S.N_SEATS)
        bounds = np.searchsorted(np.asarray(ev["hand_row"]), np.arange(len(ids) + 1))
        cols = [np.asarray(ev[f]).tolist() for f in records.EVENT_FIELDS]
        for h in range(len(ids)):
            lo, hi = bounds[h], bounds[h + 1]
            mine = {k: np.asarray(v)[h * S.N_SEATS:(h + 1) * S.N_SEATS] for k, v in players.items()}
            yield int(ids[h]), dealt[h].tolist(), list(zip(*(c[lo:hi] for c in cols), strict=True)), mine
