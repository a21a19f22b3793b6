"""Each field's check of the observation watcher (tests/test_observation_watch.py) can fail: the field's
computation changed alone (a plausible slip, ``MUTANTS``) makes the watch fail naming that field, while the same
hands watched unmutated pass.
"""

from __future__ import annotations

import dataclasses
import inspect
import textwrap

import pytest
from test_observation_watch import lineup, watch

from simulator import agents
from simulator.agents import KONG, PASS, PUNG, WIN, RandomBot
from simulator.hands import game, observation


def mutated(fn, old: str, new: str):
    """``fn`` (a function, method or property) recompiled with ``old`` replaced by ``new`` in its source (once)."""
    fget = fn.fget if isinstance(fn, property) else fn
    src = textwrap.dedent(inspect.getsource(fget))
    assert src.count(old) == 1, (fget.__name__, old)
    ns = dict(getattr(fget, "__wrapped__", fget).__globals__)
    exec(compile(src.replace(old, new), f"<mutant of {fget.__name__}>", "exec"), ns)
    return ns[fget.__name__]


OBS = agents.Observation
# field -> (owner, attribute, old source, mutant): a plausible slip in that field's computation only. observe and
# its helpers are patched where play_hands imports them at call time (simulator.hands.observation)
MUTANTS = {
    "hand": (observation, "observe", '"conc": conc[q].copy()', '"conc": hand.snap.conc[q].copy()'),  # start of step
    "melds": (observation, "observe", "mt_l[p][i] = -1", "pass"),  # another seat's 暗杠 face up
    "voids": (observation, "observe", "voids[:] = -1", "pass"),  # 定缺 choices shown before all have chosen
    "discards": (OBS, "discards", "disc[:, 2].tolist()", "disc[:, 3].tolist()"),  # a column off
    "ponds": (observation, "_ponds", "elif flat:", "elif flat and typ != state.EV_WIN:"),  # wins not marked
    "won": (OBS, "won", "ps[:, state.PS_NWINS] > 0", "ps[:, state.PS_WON] > 0"),  # 血流 winners play on
    "win_order": (OBS, "win_order", "ps[:, state.PS_WIN_ORDER], -1", "ps[:, state.PS_WIN_TURN], -1"),
    "scores": (OBS, "scores", 'self._s["score"].sum(axis=1)', 'self._s["score"][:, 0]'),  # kong money left out
    "visible": (observation, "observe", "vis[mt_l[p][i]] += 4", "pass"),  # one's own 暗杠 not counted
    "declared": (OBS, "declared", 'self._s["ps"][:, state.PS_DECLARED].copy()',
                 'np.minimum(self._s["ps"][:, state.PS_DECLARED], 1)'),  # 跳舞 read as 唱歌
    "shown": (OBS, "shown", "state.PS_SHOWN", "state.PS_WAITS"),
    "won_on": (OBS, "won_on", "state.PS_WON_KINDS", "state.PS_WAITS"),  # the waits, not what it won on
    "cleared": (OBS, "cleared", "state.PS_CLEARED", "state.PS_SAFE"),  # only the passes since its last draw
    "laid_down": (observation, "observe", "laid[p, t] -= 1", "pass"),  # the tile won on counted twice
    "tiles_left": (observation, "observe", "int(g[state.G_TAIL] - g[state.G_HEAD])",
                   "int(state.N_TILES - g[state.G_HEAD])"),
    "dealer": (observation, "observe", "int(g[state.G_DEALER])", "int(g[state.G_DEALER] + 1) % 4"),
    "picked": (game.Hand, "picked", 'if s == seat and k == "exchange"', 'if k == "exchange"'),  # everyone's picks
    "tile": (observation, "observe", "d.tile, d.from_seat, d.fan",
             "d.tile if d.from_seat >= 0 else -1, d.from_seat, d.fan"),
    "from_seat": (observation, "observe", "d.tile, d.from_seat, d.fan", "d.tile, (d.from_seat + 1) % 4, d.fan"),
    "fan": (observation, "observe", "d.tile, d.from_seat, d.fan", "d.tile, d.from_seat, d.fan + (d.from_seat < 0)"),
    "legal_actions": (observation, "_legal", "range(N_ACTIONS)", "range(N_ACTIONS - 1)"),  # 跳舞 never offered
    "action_mask": (observation, "_legal", "mask[list(actions)] = 1", "mask[list(actions)[1:]] = 1"),
    "decision": (observation, "observe", "Observation(d.seat, d.kind,",
                 'Observation(d.seat, "discard" if d.kind == "self_kong" else d.kind,'),
}


MUTANT_RULES = {"mode": "xueliu", "exchange_three": "random", "declare_ready": "both"}
BLOOD_BATTLE = ("laid_down",)  # fields that stay empty under 血流: their mutants play 血战 hands


@pytest.mark.parametrize("field", list(MUTANTS))
def test_every_field_check_fails_on_a_mutated_field(field, monkeypatch):
    """Each field's computation changed alone (``MUTANTS``) makes the watcher fail naming that field, over a few
    血流 hands with 换三张 and 唱歌/跳舞 (血战 for ``BLOOD_BATTLE``; ``seat`` and ``rules`` are passed through
    unchanged: not mutated)."""
    owner, attr, old, new = MUTANTS[field]
    monkeypatch.setattr(owner, attr, mutated(getattr(owner, attr) if owner is not OBS else vars(OBS)[attr], old, new))
    # a wrong hand would reach the compiled bots' inputs (obs._raw) and crash them: random seats read no hand
    seats = (lambda: [RandomBot(s) for s in range(4)]) if field in ("hand", "picked") else lineup
    rules = MUTANT_RULES | {"mode": "xuezhan"} if field in BLOOD_BATTLE else MUTANT_RULES
    with pytest.raises(AssertionError, match=rf"field {field}\b"):
        for first in range(0, 30, 5):  # five hands at a time: most mutants fail in the first five
            watch(monkeypatch, "chengdu", rules, seats, 5, seed=3, first=first)


@pytest.mark.parametrize("mode", ["xueliu", "xuezhan"])
def test_the_unmutated_watch_of_the_mutants_hands_passes(mode, monkeypatch):
    seen = watch(monkeypatch, "chengdu", MUTANT_RULES | {"mode": mode}, lineup, 30, seed=3)
    assert seen["danced"] and seen["ckong"] and seen["exchange"] and (seen["xueliu_rewin"] or mode == "xuezhan")


def hiding(action: int, kind: str):
    """A mutant of ``Hand.advance`` that never offers ``action`` at ``kind`` decisions: it is dropped from the
    offered set, and a decision left with nothing but passing is passed unseen (as if never asked)."""
    real = game.Hand.advance

    def advance(self):
        while (d := real(self)) is not None and d.kind == kind and (d.legal >> action) & 1:
            legal = d.legal & ~(1 << action)
            if legal != 1 << PASS:
                self.pending = dataclasses.replace(d, legal=legal)
                return self.pending
            self.apply(PASS)
        return d

    return advance


@pytest.mark.parametrize(("action", "kind"), [(PUNG, "claim"), (KONG, "claim"), (WIN, "take_win")])
def test_a_legal_claim_or_win_never_offered_fails_the_watch(action, kind, monkeypatch):
    """The legal-action check is two-sided: the engine dropping a legal pung, exposed kong or win from what it
    offers (the decision passed unseen when nothing else is left) fails the watch (tests/watch_offers.py)."""
    monkeypatch.setattr(game.Hand, "advance", hiding(action, kind))
    with pytest.raises(AssertionError, match=r"field legal_actions: seat \d was (never )?offered"):
        for first in range(0, 30, 5):
            watch(monkeypatch, "chengdu", MUTANT_RULES | {"mode": "xuezhan"}, lineup, 5, seed=3, first=first)
