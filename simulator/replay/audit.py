"""The audit of an event log: :class:`ReplayedHand` replays a recorded hand's events on plain Python hands, checking
as it goes that every event is possible (a discarded tile is held, nobody acts after winning — under ``mode:
xueliu`` a winner plays on, but only with its locked hand —, the strict 定缺 order holds, tiles are conserved, ...);
:func:`audit` adds the end-of-hand checks. An impossible event is an :class:`EventLogError` (an engine bug). The
tests use it to audit the engine on samples of hands; :mod:`simulator.replay.text` to show the hands in play.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simulator.kernel import state as S
from simulator.kernel.tiles import counts_from_str, tile_str
from simulator.replay.log import EventLogError, HandLog


@dataclass
class ReplayedHand:
    """Hands replayed from events, with the checks that make the log an audit of the engine."""

    log: HandLog
    strict_void: bool
    conc: list[np.ndarray] = field(default_factory=list)
    melds: list[list[tuple[str, int]]] = field(default_factory=lambda: [[] for _ in range(4)])
    void: list[int] = field(default_factory=lambda: [-1] * 4)
    won: list[bool] = field(default_factory=lambda: [False] * 4)
    drawn: int = 0
    seen: np.ndarray = field(default_factory=lambda: np.zeros(27, np.int64))  # dealt + drawn, per kind
    last_discard: tuple[int, int] = (-1, -1)
    win_event_tile_taken: bool = False
    event_winners: set[int] = field(default_factory=set)  # winners of the latest win event
    n_wins: int = 0
    declared: list[bool] = field(default_factory=lambda: [False] * 4)  # 唱歌/跳舞: the hand is locked
    # 血流 (mode: xueliu): winners play on (``won`` stays False: it means "out of play"), locked; their winning
    # tiles are set aside. ``pool``: discards (and a robbed kong's tile) on the table, for the tile count.
    xueliu: bool = False
    has_won: list[bool] = field(default_factory=lambda: [False] * 4)
    aside: int = 0
    pool: int = 0
    last_draw: tuple[int, int] = (-1, -1)
    ended: bool = False

    def __post_init__(self) -> None:
        self.conc = [counts_from_str(p["dealt"]).astype(np.int64) for p in self.log.players]
        for c in self.conc:
            self.seen += c
        self.xueliu = self.log.rules.mode == "xueliu"

    def _fail(self, msg: str) -> None:
        raise EventLogError(f"hand {self.log.hand_id}: {msg}")

    def _take(self, seat: int, tile: int, n: int, what: str) -> None:
        if self.conc[seat][tile] < n:
            self._fail(f"seat {seat} {what} {n}× tile {tile} but holds {self.conc[seat][tile]}")
        self.conc[seat][tile] -= n

    def _active(self, seat: int, what: str) -> None:
        if self.won[seat]:
            self._fail(f"seat {seat} {what} after winning")

    def apply(self, ev: tuple[int, ...]) -> None:
        typ, seat, tile, amount, a, b = ev
        if typ == S.EV_EXCHANGE:
            self._take(seat, tile, 1, "passes")
            self.conc[a][tile] += 1
        elif typ == S.EV_VOID:
            self.void[seat] = a
        elif typ == S.EV_DRAW:
            self._active(seat, "draws")
            self.conc[seat][tile] += 1
            self.last_draw = (seat, tile)
            self.drawn += 1
            self.seen[tile] += 1
            self.win_event_tile_taken = False
            self.event_winners = set()
        elif typ == S.EV_DISCARD:
            self._active(seat, "discards")
            v = self.void[seat]
            if self.strict_void and v >= 0 and tile // 9 != v and self.conc[seat][9 * v:9 * v + 9].sum() > 0:
                self._fail(f"seat {seat} discards {tile} while holding tiles of its void suit {v}")
            if self._locked(seat) and self.last_draw != (seat, tile):
                self._fail(f"seat {seat} discards {tile} from its locked hand ({self._locked(seat)}), "
                           "not the tile it drew")
            self._take(seat, tile, 1, "discards")
            self.pool += 1
            self.last_discard = (seat, tile)
            self.win_event_tile_taken = False
            self.event_winners = set()
        elif typ == S.EV_DECLARE:
            self._active(seat, "declares")
            self.declared[seat] = True
        elif typ == S.EV_PUNG:
            self._active(seat, "pungs")
            if self._locked(seat):
                self._fail(f"seat {seat} pungs with its locked hand ({self._locked(seat)})")
            self._check_claim(seat, tile, a)
            self._take(seat, tile, 2, "pungs")
            self.pool -= 1
            self.melds[seat].append(("pung", tile))
        elif typ == S.EV_KONG:
            self._active(seat, "kongs")
            self._check_locked_kong(seat, tile, a)
            if a == 1:
                self._check_claim(seat, tile, b)
                self._take(seat, tile, 3, "konged")
                self.pool -= 1
                self.melds[seat].append(("kong", tile))
            elif a == 2:
                self._take(seat, tile, 1, "added to a kong")
                i = self.melds[seat].index(("pung", tile))
                self.melds[seat][i] = ("kong", tile)
            else:
                self._take(seat, tile, 4, "konged")
                self.melds[seat].append(("ckong", tile))
        elif typ == S.EV_ROBBED:
            self._take(seat, tile, 1, "had robbed")
            self.pool += 1  # on the table until a winner takes it
        elif typ == S.EV_WIN:
            self._win(seat, tile, a, b)
        elif typ == S.EV_PAY:
            self._check_pay(seat, a, b)
        elif typ in (S.EV_DECLINE, S.EV_LOCKED):
            self._active(seat, "declines")
        elif typ == S.EV_END:
            self.ended = True

    def _locked(self, seat: int) -> str:
        """Why the seat's hand is locked ('' when it is not): it declared ready (唱歌/跳舞), or it won under 血流
        and plays on. Either way it only discards the tile it drew and never pungs (engine.locked and the
        declared discard mask); the kongs each allows differ (:meth:`_check_locked_kong`)."""
        if self.declared[seat]:  # a declared 血流 winner: the stricter lock of the two
            return "declared ready"
        return "won, plays on" if self.xueliu and self.has_won[seat] else ""

    def _check_locked_kong(self, seat: int, tile: int, kind: int) -> None:
        """A locked hand's kong: a declared hand only a concealed kong (kind 3) of the tile it drew; a 血流
        winner also an added kong of its draw or an exposed kong of a discard (kind 1), which the engine allows
        when the waits stay the same."""
        why = self._locked(seat)
        if not why:
            return
        declared = bool(self.declared[seat])
        of_draw = self.last_draw == (seat, tile)
        if (of_draw and (kind == 3 or not declared)) or (kind == 1 and not declared):
            self._check_waits_kept(seat, tile, kind, why)
            return
        allowed = ("a concealed kong of the tile it drew" if declared
                   else "a kong of the tile it drew or of a discard")
        self._fail(f"seat {seat} konged {tile} from its locked hand ({why}), which allows only {allowed}")

    def _check_waits_kept(self, seat: int, tile: int, kind: int, why: str) -> None:
        """A locked hand's kong must leave its waits exactly as they were (docs/rules.md): the wait mask of the
        13-tile shape before (without the tile just drawn for a 加杠/暗杠) and after the kong (kind 1 直杠 of a
        discard with three in hand, 2 加杠, 3 暗杠; called before the kong is applied)."""
        from simulator.kernel.shape import MELD_CKONG, MELD_KONG, MELD_PUNG, wait_mask
        from simulator.kernel.tables import suit_table

        codes = {"pung": MELD_PUNG, "kong": MELD_KONG, "ckong": MELD_CKONG}

        def waits(conc: np.ndarray, melds: list[tuple[str, int]]) -> int:
            mk, mt = np.zeros(4, np.int8), np.zeros(4, np.int8)
            for i, (k, t) in enumerate(melds):
                mk[i], mt[i] = codes[k], t
            void = self.void[seat] if self.log.rules.void_suit != "none" else -1
            return int(wait_mask(suit_table(), conc.astype(np.uint8), mk, mt, len(melds), void))

        before = self.conc[seat].copy()
        if kind != 1:
            before[tile] -= 1  # the tile just drawn
        melds = list(self.melds[seat])
        after = before.copy()
        if kind == 2:
            melds[melds.index(("pung", tile))] = ("kong", tile)
        else:
            after[tile] -= 3
            melds.append(("kong", tile) if kind == 1 else ("ckong", tile))
        old, new = waits(before, self.melds[seat]), waits(after, melds)
        if old != new:
            self._fail(f"seat {seat}'s kong of {tile} (kind {kind}) changed the waits of its locked hand ({why}) "
                       f"from {old:#x} to {new:#x}")

    def _check_claim(self, seat: int, tile: int, src: int) -> None:
        if self.last_discard != (src, tile):
            self._fail(f"seat {seat} claims {tile} from {src}, last discard was {self.last_discard}")
        if self.strict_void and tile // 9 == self.void[seat]:
            self._fail(f"seat {seat} claims a tile of its void suit")

    def _check_pay(self, payer: int, payee: int, comp: int) -> None:
        # A winner collects for its own win (and a 呼叫转移) as it wins. Afterwards only two rules reach a
        # player who has won: 花猪 paid to it under huazhu_pays: all, and kong money returned to whoever paid
        # it (退税, 杠上炮 refund). Nothing else.
        if self.xueliu and self.ended and comp != S.C_REFUND and self._settled_after_winning(payer, payee, comp):
            self._fail(f"seat {payer} → seat {payee} component {comp} at the end, but one of them has won")
        if self.won[payer]:
            self._fail(f"seat {payer} pays after winning")
        if not self.won[payee]:
            return
        ok = ((comp in (S.C_WIN, S.C_TRANSFER) and payee in self.event_winners) or comp == S.C_REFUND
              or (comp == S.C_HUAZHU and self.log.rules.settlement.huazhu_pays == "all"))
        if not ok:
            self._fail(f"seat {payee} collects component {comp} after winning")

    def _settled_after_winning(self, payer: int, payee: int, comp: int) -> bool:
        """血流: a seat that has won is outside the end settlement (docs/rules.md), except as a payee of 花猪 under
        ``huazhu_pays: all``."""
        all_collect = comp == S.C_HUAZHU and self.log.rules.settlement.huazhu_pays == "all"
        return self.has_won[payer] or (self.has_won[payee] and not all_collect)

    def _win(self, seat: int, tile: int, kind: int, idx: int) -> None:
        self._active(seat, "wins")
        row = self.log.wins[idx]
        hand = self.conc[seat].copy()
        if kind != S.WK_SELF_DRAW:
            hand[tile] += 1
            if not self.win_event_tile_taken:  # the physical tile goes to the first winner only; a 一炮多响
                self.pool -= 1                 # partner scores the same tile without holding it
                if self.xueliu:
                    self.aside += 1
                else:
                    self.conc[seat][tile] += 1
                self.win_event_tile_taken = True
        elif self.xueliu:
            self._take(seat, tile, 1, "sets aside")
            self.aside += 1
        if not np.array_equal(hand, counts_from_str(row["hand"])):
            self._fail(f"seat {seat}'s winning hand {row['hand']} differs from the replayed hand")
        melds = ",".join(f"{k}:{tile_str(t)}" for k, t in self.melds[seat])
        if melds != row["melds"]:
            self._fail(f"seat {seat}'s melds {row['melds']!r} differ from the replayed {melds!r}")
        self.won[seat] = not self.xueliu
        self.has_won[seat] = True
        self.event_winners.add(seat)
        self.n_wins += 1

    def tiles_in_hand(self, seat: int) -> int:
        return int(self.conc[seat].sum()) + 3 * len(self.melds[seat])

    def tiles_held(self) -> int:
        """Physical tiles in the seats' hands and melds (a kong is four), set aside, and on the table."""
        melds = sum(4 if k != "pung" else 3 for ms in self.melds for k, _ in ms)
        return int(sum(c.sum() for c in self.conc)) + melds + self.aside + self.pool


def audit(log: HandLog) -> ReplayedHand:
    """Replay every event with its checks, then the end-of-hand checks: tiles conserved (dealt + drawn + left in
    the wall = 108, no kind seen more than four times), hands of the right size, the right number of wins."""
    st = ReplayedHand(log, strict_void=log.rules.void_suit == "declared")
    for ev in log.events:
        st.apply(ev)
    if 53 + st.drawn + log.hand["tiles_left"] != S.N_TILES:
        st._fail(f"53 dealt + {st.drawn} drawn + {log.hand['tiles_left']} left != 108")
    if st.seen.max() > 4:
        st._fail(f"kind {int(st.seen.argmax())} seen {int(st.seen.max())} times")
    if st.tiles_held() != 53 + st.drawn:
        st._fail(f"{st.tiles_held()} tiles in hands, melds, set aside and discards, but {53 + st.drawn} in play")
    for s in range(4):
        if not st.won[s] and st.tiles_in_hand(s) != 13:
            st._fail(f"seat {s} ends with {st.tiles_in_hand(s)} tiles")
    if st.n_wins != len(log.wins):
        st._fail(f"{st.n_wins} win events but {len(log.wins)} win rows")
    return st
