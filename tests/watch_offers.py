"""The other side of the observation watcher's legal-action check (tests/test_observation_watch.py): every pung,
exposed kong and win the rules allow must be offered. As the watcher replays a hand's log, :class:`Offers` notes
at each discard and draw what the rules (docs/spec.md §2–3, docs/rules.md) let each seat claim or win, with the
winning-hand test of the independent reference scorer (tests/reference_scorer.py), and at the end of the hand
asserts that each was offered.

Left out, where the engine decides without asking or a rule would need the engine's own scoring: 最后N张必胡
(a forced win is taken, not offered), a seat locked by 过水不胡 (it declined a win since its last draw), 抢杠胡,
the dealer's 天胡, a 血流 winner's exposed kong (allowed only when its waits stay the same).
"""

from __future__ import annotations

from reference_scorer import is_winning

from simulator.agents import KONG, PUNG
from simulator.kernel import state as S

MELDS = {"pung": "pung", "kong": "kong", "concealed_kong": "ckong"}


class Offers:
    """What must be offered in one hand (filled by :meth:`see` after each replayed event) against what was
    (:meth:`offered` at each decision); :meth:`check` at the end of the hand."""

    def __init__(self, rules):
        self.rules = rules
        self.locked = [False] * 4  # declined a win since its last draw (过水不胡)
        self.wins: dict[tuple, None] = {}  # (("discard", index) | ("draw", index), seat) the rules let win
        self.claims: dict[tuple, bool] = {}  # (discard index, seat) -> whether a kong is allowed too
        self.ponds: dict[int, list] = {}  # discard index -> its pond entry (marked "win" when won)
        self.got_wins: set[tuple] = set()
        self.got_claims: dict[tuple, tuple] = {}

    def _wins(self, table, q: int, tile: int | None) -> bool:
        counts = list(table.conc[q])
        if tile is not None:
            counts[tile] += 1
        melds = [(MELDS[k], t) for k, t in table.melds[q]]
        void = table.void[q] if self.rules.void_suit != "none" else None
        forced = self.rules.forced_win_last_tiles
        left = S.N_TILES - table.dealt_tiles - table.draws
        return not (forced and left <= forced) and is_winning(counts, melds, void)

    def see(self, table, ev) -> None:
        """``ev`` was just applied to ``table``."""
        typ, seat = ev[0], ev[1]
        if typ == S.EV_DECLINE and ev[4] != S.WK_SELF_DRAW:  # a declined self-draw locks nothing
            self.locked[seat] = self.rules.pass_ron_lock != "off"
        elif typ == S.EV_DRAW:
            self.locked[seat] = False
            if self._wins(table, seat, None):
                self.wins[("draw", table.draws), seat] = None
        elif typ == S.EV_DISCARD:
            d, t = len(table.discards) - 1, ev[2]
            self.ponds[d] = table.last_pond
            left = S.N_TILES - table.dealt_tiles - table.draws
            for q in range(4):
                out = table.won[q] >= 0 and not table.xueliu
                if q == seat or out:
                    continue
                if not self.locked[q] and self._wins(table, q, t):
                    self.wins[("discard", d), q] = None
                void = self.rules.void_suit == "declared" and t // 9 == table.void[q]
                if (table.won[q] < 0 and not table.declared[q] and table.conc[q][t] >= 2 and not void
                        and not (left == 0 and self.rules.last_discard_claims == "win_only")):
                    self.claims[d, q] = table.conc[q][t] == 3 and left > 0

    def offered(self, table, f: dict) -> None:
        """Note the decision ``f`` (the observation's fields) of the watched seat."""
        q, kind = f["seat"], f["decision"]
        if kind == "claim":
            self.got_claims[len(table.discards) - 1, q] = tuple(f["legal_actions"])
        elif kind == "take_win" and f["from_seat"] < 0 and table.draws:
            self.got_wins.add((("draw", table.draws), q))
        elif kind == "take_win" and table.on_table:
            self.got_wins.add((("discard", len(table.discards) - 1), q))

    def check(self) -> int:
        """Assert that every allowed win, pung and kong was offered; returns how many were checked."""
        single = not self.rules.multiple_ron
        for (at, q) in self.wins:
            if single and at[0] == "discard" and self.ponds[at[1]][2] == "win" and q not in self.ponds[at[1]][3]:
                continue  # multiple_ron: false — the first winner in turn order takes the discard
            assert (at, q) in self.got_wins, f"field legal_actions: seat {q} was never offered its win ({at})"
        claims = 0
        for (d, q), kong in self.claims.items():
            if self.ponds[d][2] == "win":
                continue  # a win on the discard comes before any pung or kong of it
            legal = self.got_claims.get((d, q), ())
            assert PUNG in legal and (KONG in legal) == kong, \
                f"field legal_actions: seat {q} was offered {legal} on discard {d} (pung{', kong' if kong else ''})"
            claims += 1
        return len(self.wins) + claims
