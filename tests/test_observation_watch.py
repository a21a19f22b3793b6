"""A watcher at every seat (issue 33 item 4): at every decision of hands played through the public bot API
(:func:`simulator.hands.game.play_hands` with Python agents), every field of the :class:`simulator.agents.Observation`
is checked against the hand's recorded event log (``record=True``) up to that decision, replayed here on plain
Python lists from the dealt hands — sharing no code with ``agents.observe``. The action each seat then took is
checked to appear in the log right after the decision (so the log position is the decision's own).

The log position of a decision is read by wrapping ``observe`` (``G_NEV`` when the observation is made);
the prefix is checked to be the final log's first rows. tests/test_observation_mutants.py shows each field's
check fires when that field's computation is changed.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from watch_offers import Offers

from simulator import agents
from simulator.agents import DANCE, DECLARE, KONG, PASS, PUNG, WIN, GreedyBot, RandomBot, ValueBot
from simulator.hands import game, observation
from simulator.kernel import state
from simulator.rules import load_rules

S = state
FIELDS = ("seat", "decision", "legal_actions", "action_mask", "tile", "from_seat", "fan", "hand", "picked",
          "melds", "voids", "discards", "ponds", "won", "win_order", "scores", "visible", "declared", "shown",
          "won_on", "cleared", "laid_down", "tiles_left", "dealer", "rules")


def _public_fields() -> set[str]:
    """The Observation's public attributes (slots and properties), to keep FIELDS complete."""
    names = {n for n in agents.Observation.__slots__ if not n.startswith("_")}
    names |= {n for n, v in vars(agents.Observation).items() if isinstance(v, property) and not n.startswith("_")}
    return names


class Watcher:
    """A Python agent that records every field of each observation it gets (read at the decision) and answers
    with its inner bot. ``log``: shared list of ``(hand label, events logged so far, prefix digest, fields,
    action)``; the position comes from :func:`spy` through ``pending``."""

    def __init__(self, inner, log: list, pending: dict):
        self.inner, self.log, self.pending = inner, log, pending

    def new_hand(self, seed: int) -> None:
        if hasattr(self.inner, "new_hand"):
            self.inner.new_hand(seed)

    def act(self, obs) -> int:
        fields = {}
        for name in FIELDS:
            v = getattr(obs, name)
            fields[name] = v.copy() if isinstance(v, np.ndarray) else v
        action = self.inner.act(obs)
        self.log.append((*self.pending.pop("at"), fields, int(action)))
        return action


def spy(monkeypatch, pending: dict) -> None:
    """Wrap ``observe`` where play_hands imports it at call time (simulator.hands.observation) to note where in the
    log each decision is."""
    real = observation.observe

    def observe(hand, d):
        n = int(hand.st.g[S.G_NEV])
        digest = hashlib.blake2b(hand.st.events[:n].tobytes(), digest_size=16).digest()
        pending["at"] = (hand.hand_label, n, digest)
        return real(hand, d)

    monkeypatch.setattr(observation, "observe", observe)


# ---- the table replayed from the log ----------------------------------------------------------------------------

class Table:
    """The public table and every seat's concealed tiles, replayed event by event from the deal."""

    def __init__(self, rules, dealt: np.ndarray):
        self.xueliu = rules.mode == "xueliu"
        self.conc = [[int(x) for x in dealt[s]] for s in range(4)]
        self.melds: list[list[list]] = [[] for _ in range(4)]
        self.discards: list[tuple[int, int]] = []
        self.ponds: list[list[list]] = [[] for _ in range(4)]
        self.last_pond: list | None = None
        self.void = [-1] * 4
        self.n_void = 0
        self.won = [-1] * 4
        self.win_order = [-1] * 4
        self.win_events = 0
        self.prev = None  # the last event other than a payment
        self.scores = [0] * 4
        self.visible = [0] * 27
        self.own_ckong = [[0] * 27 for _ in range(4)]
        self.declared = [0] * 4
        self.shown: list[tuple[int, ...]] = [()] * 4
        self.won_on: list[set[int]] = [set() for _ in range(4)]
        self.cleared: list[set[int]] = [set() for _ in range(4)]  # discarded after the seat's first win, not won on
        self.laid = [[0] * 27 for _ in range(4)]  # a 血战 winner's concealed tiles as it won (the tile won on is not
        # among them unless self-drawn: a discard stays the discarder's until claimed, a robbed tile the konger's)
        self.dealt_tiles = 0
        self.draws = 0
        self.dealer = -1
        self.last_draw = [-1] * 4
        self.gives: list[list[int]] = [[] for _ in range(4)]
        self.on_table = False  # the latest discard is still on offer (no draw, claim or kong since)

    def apply(self, ev) -> None:
        typ, seat, t, amount, a, b = ev
        conc = self.conc[seat] if seat >= 0 else None
        if typ in (S.EV_DRAW, S.EV_PUNG, S.EV_KONG, S.EV_DISCARD):
            self.on_table = typ == S.EV_DISCARD
        if typ == S.EV_DEAL:
            self.dealt_tiles += a
            if a == 14:
                self.dealer = seat
        elif typ == S.EV_EXCHANGE:
            conc[t] -= 1
            self.conc[a][t] += 1
            self.gives[seat].append(t)
        elif typ == S.EV_VOID:
            self.void[seat] = a
            self.n_void += 1
        elif typ == S.EV_DRAW:
            conc[t] += 1
            self.draws += 1
            self.last_draw[seat] = t
        elif typ == S.EV_DISCARD:
            conc[t] -= 1
            self.discards.append((seat, t))
            self.last_pond = [seat, t, "", []]
            self.ponds[seat].append(self.last_pond)
            self.visible[t] += 1
            for q in range(4):
                if q != seat and self.won_on[q]:
                    self.cleared[q].add(t)
        elif typ == S.EV_PUNG:
            assert self.last_pond[:2] == [a, t]
            conc[t] -= 2
            self.melds[seat].append(["pung", t])
            self.visible[t] += 2
            self.last_pond[2:] = ["pung", [seat]]
        elif typ == S.EV_KONG and a == 1:
            assert self.last_pond[:2] == [b, t]
            conc[t] -= 3
            self.melds[seat].append(["kong", t])
            self.visible[t] += 3
            self.last_pond[2:] = ["kong", [seat]]
        elif typ == S.EV_KONG and a == 2:
            conc[t] -= 1
            self.melds[seat][self.melds[seat].index(["pung", t])][0] = "kong"
            self.visible[t] += 1
        elif typ == S.EV_KONG:
            conc[t] -= 4
            self.melds[seat].append(["concealed_kong", t])
            self.own_ckong[seat][t] += 4
        elif typ == S.EV_ROBBED:
            conc[t] -= 1
            self.visible[t] += 1
        elif typ == S.EV_WIN:
            partner = (a != S.WK_SELF_DRAW and self.prev is not None and self.prev[0] == S.EV_WIN
                       and self.prev[4] != S.WK_SELF_DRAW and self.prev[2] == t)  # 一炮多响: the same win event
            if not partner:
                self.win_events += 1
            if self.won[seat] < 0:
                self.won[seat], self.win_order[seat] = a, self.win_events
            self.won_on[seat].add(t)
            self.cleared[seat].discard(t)
            if not self.xueliu:
                self.laid[seat] = list(conc)
            if a == S.WK_DISCARD:
                assert self.last_pond[1] == t
                self.last_pond[2] = "win"
                self.last_pond[3].append(seat)
            if self.xueliu and a == S.WK_SELF_DRAW:  # set aside face up; a discard's copy was never held
                conc[t] -= 1
                self.visible[t] += 1
        elif typ == S.EV_PAY:
            self.scores[seat] -= amount
            self.scores[a] += amount
        elif typ == S.EV_DECLARE:
            self.declared[seat] = a
            if a == 2:
                self.shown[seat] = tuple(k for k in range(27) if (amount >> k) & 1)
        if typ != S.EV_PAY:
            self.prev = ev

    def expected(self, q: int) -> dict:
        """What seat ``q`` may see now, field by field (the decision-specific fields are checked apart)."""
        setup_done = self.n_void == 4
        return {
            "seat": q,
            "hand": self.conc[q],
            "melds": tuple(tuple((k, t if k != "concealed_kong" or p == q else -1) for k, t in self.melds[p])
                           for p in range(4)),
            "voids": self.void if setup_done else [-1] * 4,
            "discards": tuple(self.discards),
            "ponds": tuple(tuple((s, t, c, tuple(by)) for s, t, c, by in self.ponds[p]) for p in range(4)),
            "won": self.won,
            "win_order": self.win_order,
            "scores": self.scores,
            "visible": [v + o for v, o in zip(self.visible, self.own_ckong[q], strict=True)],
            "declared": self.declared,
            "shown": tuple(self.shown),
            "won_on": tuple(tuple(sorted(k)) for k in self.won_on),
            "cleared": tuple(tuple(sorted(k)) for k in self.cleared),
            "laid_down": self.laid,
            "tiles_left": S.N_TILES - self.dealt_tiles - self.draws,
            "dealer": self.dealer,
        }


def _same(field: str, got, want) -> None:
    if isinstance(got, np.ndarray):
        got = got.tolist()
    if isinstance(got, tuple) and got and isinstance(got[0], tuple) and field == "ponds":
        got = tuple(tuple(tuple(x) for x in pond) for pond in got)
    assert got == want, f"field {field}: observation {got!r}, event log {want!r}"


# ---- the checks at one decision ---------------------------------------------------------------------------------

def check_decision(rules, table: Table, f: dict, action: int, log: np.ndarray, at: int, wins_of_hand: np.ndarray,
                   picks_before: int, final_gives: list) -> None:
    """All fields of one observation ``f`` of seat ``f['seat']`` against ``table`` (the log replayed to ``at``) and
    the action's effect in the log after ``at``."""
    q, kind = f["seat"], f["decision"]
    for name, want in table.expected(q).items():
        _same(name, f[name], want)
    assert f["rules"] is rules, "field rules"
    legal = f["legal_actions"]
    assert list(np.flatnonzero(f["action_mask"])) == list(legal), "field action_mask"
    assert action in legal
    kinds = {"exchange": set(range(27)), "discard": set(range(27)), "void": {27, 28, 29}, "claim": {PASS, PUNG, KONG},
             "take_win": {PASS, WIN}, "self_kong": {PASS, *range(27)}, "declare": {PASS, DECLARE, DANCE}}
    assert set(legal) <= kinds[kind] and (PASS in legal) == (PASS in kinds[kind]), "field decision"
    after = [tuple(r) for r in log[at:].tolist()]
    hand = table.conc[q]
    # the decision kind and legal actions, as the table stands; what the log shows next
    if kind == "exchange":  # before the voids and any draw; its picks so far: the first of its logged gives
        assert table.n_void == 0 and table.draws == 0 and not table.gives[q], "field decision"
        _same("picked", f["picked"], tuple(final_gives[q][:picks_before]))
        pk = list(f["picked"])
        want = tuple(k for k in range(27) if hand[k] - pk.count(k) > 0 and (not pk or k // 9 == pk[0] // 9)
                     and sum(hand[9 * (k // 9):9 * (k // 9) + 9]) >= 3)
        _same("legal_actions", legal, want)
    else:
        _same("picked", f["picked"], ())
    if kind == "void":
        _same("legal_actions", legal, (27, 28, 29))
        _same("decision", (after[0][0], after[0][1], after[0][4]), (S.EV_VOID, q, action - 27))
    elif kind == "discard":
        held = [k for k in range(27) if hand[k]]
        v = table.void[q]
        if rules.void_suit == "declared" and v >= 0 and any(k // 9 == v for k in held):
            held = [k for k in held if k // 9 == v]
        if rules.declare_ready != "none":
            shown = {k for p in range(4) if p != q and (table.won[p] < 0 or table.xueliu) for k in table.shown[p]}
            held = [k for k in held if k not in shown] or held
        _same("legal_actions", legal, tuple(held))
        _same("decision", after[0][:3], (S.EV_DISCARD, q, action))
    elif kind == "claim":
        src, t = table.discards[-1]
        _same("tile", f["tile"], t)
        _same("from_seat", f["from_seat"], src)
        assert PASS in legal and (PUNG not in legal or hand[t] >= 2) and (KONG not in legal or hand[t] == 3), \
            "field legal_actions"
        if action == PUNG:
            _same("decision", after[0][:3] + (after[0][4],), (S.EV_PUNG, q, t, src))
        elif action == KONG:
            _same("decision", (after[0][0], after[0][1], after[0][2], after[0][4], after[0][5]),
                  (S.EV_KONG, q, t, 1, src))
    elif kind == "take_win":
        _same("legal_actions", legal, (PASS, WIN))
        t, src = f["tile"], f["from_seat"]
        if src < 0:  # a self-draw: the tile drawn last (the dealer's 天胡: a held tile)
            assert hand[t] >= 1, "field tile"
            if table.draws:
                _same("tile", t, table.last_draw[q])
        elif table.on_table:  # the latest discard, nothing drawn or claimed since
            _same("tile", (src, t), table.discards[-1])
        else:  # a 加杠 on offer to rob: the konger holds the tile and a pung of it
            assert ["pung", t] in table.melds[src] and table.conc[src][t] >= 1, "field tile/from_seat (robbed kong)"
        mine = [r for r in after if r[1] == q and r[0] in (S.EV_WIN, S.EV_DECLINE)]
        if action == WIN:
            win = mine[0]
            assert win[0] == S.EV_WIN and win[2] == t, "field tile"
            _same("fan", f["fan"], int(wins_of_hand[win[5], S.W_CAPPED]))
            assert (win[4] == S.WK_SELF_DRAW) == (src < 0), "field from_seat"
        else:
            assert mine and mine[0][0] == S.EV_DECLINE and mine[0][2] == t, "decline not logged"
            _same("fan", f["fan"], mine[0][3])
    if kind != "take_win":
        _same("fan", f["fan"], 0)
    if kind not in ("take_win", "claim"):
        _same("tile", f["tile"], -1)
        _same("from_seat", f["from_seat"], -1)
    if kind == "self_kong":
        ok = tuple(k for k in range(27) if hand[k] == 4 or (hand[k] and ["pung", k] in table.melds[q]))
        assert PASS in legal and set(legal) - {PASS} <= set(ok), "field legal_actions"
        if action != PASS:
            nxt = next(r for r in after if r[1] == q and r[0] in (S.EV_KONG, S.EV_ROBBED, S.EV_DISCARD))
            assert nxt[0] in (S.EV_KONG, S.EV_ROBBED) and nxt[2] == action, "field decision"
    if kind == "declare":
        want = (DECLARE, PASS, DANCE) if rules.declare_ready == "both" else (PASS, DECLARE)
        _same("legal_actions", tuple(sorted(legal)), tuple(sorted(want)))
        assert table.prev[0] == S.EV_DISCARD and table.prev[1] == q, "field decision"
        declared = after[0][0] == S.EV_DECLARE and after[0][1] == q
        assert declared == (action != PASS), "field decision"


# ---- playing and checking -------------------------------------------------------------------------------------

def watch(monkeypatch, config: str, overrides: dict, inner, n: int, seed: int, first: int = 0) -> dict:
    """Play hands ``first … first + n − 1`` with four watchers (inner bots ``inner()``: one per seat), then check
    every decision; returns counts by decision kind and of what the hands showed."""
    rules = load_rules(config, overrides)
    log: list = []
    pending: dict = {}
    spy(monkeypatch, pending)
    bots = {s: Watcher(b, log, pending) for s, b in enumerate(inner())}
    ids = np.arange(first, first + n, dtype=np.int64)
    raw = game.play_hands(rules, ids, seed, bots, record=True)
    ev_all, w, w_hand = raw.events, raw.w, raw.w_hand
    seen = {k: 0 for k in S.DECISIONS} | {"ron": 0, "declined": 0, "robbed": 0, "ckong": 0, "xueliu_rewin": 0,
                                          "multi": 0, "danced": 0, "offers": 0}
    by_hand: dict[str, list] = {}
    for rec in log:
        by_hand.setdefault(rec[0], []).append(rec)
    for row in range(n):
        ev = ev_all[ev_all[:, 0] == row, 1:]
        wins_of_hand = w[w_hand == row]
        table = Table(rules, raw.dealt[4 * row:4 * row + 4])
        pos = 0
        picks = [0] * 4
        gives = [[t for typ, s, t, *_ in ev.tolist() if typ == S.EV_EXCHANGE and s == q] for q in range(4)]
        offers = Offers(rules)  # the other side: every pung, kong and win the rules allow was offered
        for _, at, digest, fields, action in [*by_hand.get(str(first + row), []), (None, len(ev), None, None, 0)]:
            assert digest is None or hashlib.blake2b(ev[:at].tobytes(), digest_size=16).digest() == digest, \
                "log prefix changed"
            while pos < at:
                table.apply(tuple(ev[pos].tolist()))
                offers.see(table, tuple(ev[pos].tolist()))
                pos += 1
            if fields is None:  # the end of the hand
                seen["offers"] += offers.check()
                break
            check_decision(rules, table, fields, action, ev, at, wins_of_hand, picks[fields["seat"]], gives)
            offers.offered(table, fields)
            seen[fields["decision"]] += 1
            if fields["decision"] == "exchange":
                picks[fields["seat"]] += 1
            if fields["decision"] == "take_win" and action == PASS:
                seen["declined"] += 1
        for r in ev.tolist():
            seen["ron"] += r[0] == S.EV_WIN and r[4] == S.WK_DISCARD
            seen["robbed"] += r[0] == S.EV_ROBBED
            seen["ckong"] += r[0] == S.EV_KONG and r[4] == 3
            seen["danced"] += r[0] == S.EV_DECLARE and r[4] == 2
        seen["multi"] += int(np.any(np.bincount(wins_of_hand[:, S.W_ORDER]) > 1)) if len(wins_of_hand) else 0
        seen["xueliu_rewin"] += int(np.any(np.bincount(wins_of_hand[:, S.W_WINNER]) > 1)) if len(wins_of_hand) else 0
        for q in range(4):  # a seat's three picks are its three logged gives
            assert picks[q] in (0, 3) and len(gives[q]) == picks[q], "field picked"
    return seen


def lineup():
    return [GreedyBot(), ValueBot(), RandomBot(), ValueBot(decline_below=3, steer_shanten=3)]


CASES = {
    "chengdu": ("chengdu", {}, 100),
    "exchange": ("exchange_three", {}, 60),
    "xueliu": ("xueliu", {}, 100),
    "dance": ("chengdu", {"declare_ready": "both"}, 100),
    "qq_sichuan": ("qq_sichuan", {"declare_ready": "dance"}, 60),
    "xueliu_dance": ("xueliu", {"declare_ready": "both"}, 60),
}


def test_the_watcher_checks_every_public_field():
    assert _public_fields() == set(FIELDS)


@pytest.mark.parametrize("case", list(CASES))
def test_every_observation_field_matches_the_event_log_at_every_decision(case, monkeypatch):
    config, overrides, n = CASES[case]
    seen = watch(monkeypatch, config, overrides, lineup, n, seed=11)
    assert seen["discard"] > 20 * n and seen["claim"] > n and seen["take_win"] > n // 2
    assert seen["ron"] > n // 4 and (seen["declined"] > 0 or config == "qq_sichuan")  # uncapped: no cheap wins
    assert seen["offers"] > n  # allowed wins and claims checked to be offered
    if config == "exchange_three":
        assert seen["exchange"] == 3 * 4 * n
    if rules_void(config):
        assert seen["void"] == 4 * n
    if overrides.get("declare_ready"):
        assert seen["declare"] > n // 4
    if config == "xueliu":
        assert seen["xueliu_rewin"] > 5


def rules_void(config: str) -> bool:
    return load_rules(config).void_suit != "none"
