"""Python bots: the protocol (``act(obs) -> action``), the observation a bot sees, and the built-in bots as objects.

A bot is any object with ``act(self, obs: Observation) -> int`` returning one of ``obs.legal_actions`` (an
action of :mod:`simulator.kernel.state`: ``0..26`` a tile kind, ``27..29`` a void suit, ``PASS``/``PUNG``/``KONG``/
``WIN``, ``DECLARE``). :class:`Bot` is a convenience base class that dispatches to one method per decision, so a bot can
override just one of them; :class:`GreedyBot` and :class:`ValueBot` are the compiled bots behind that interface
(they call the same compiled policy functions, so a table of them plays exactly as the compiled seats do).

The observation (what a seat may know, built by :func:`observe`) is :mod:`simulator.hands.observation`; calling a
bot, its answer checked and its errors turned into one line (:func:`ask`, :func:`build`), is
:mod:`simulator.hands.ask`. Their names are re-exported here, where callers import them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from simulator.hands.ask import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from simulator.hands.ask import TIMEOUT_ENV as TIMEOUT_ENV
from simulator.hands.ask import BotError as BotError
from simulator.hands.ask import ask as ask
from simulator.hands.ask import bot_name as bot_name
from simulator.hands.ask import build as build
from simulator.hands.ask import decision_timeout as decision_timeout
from simulator.hands.observation import CLAIMS as CLAIMS
from simulator.hands.observation import PUBLIC_PS as PUBLIC_PS
from simulator.hands.observation import Discard as Discard
from simulator.hands.observation import Observation as Observation
from simulator.hands.observation import observe as observe
from simulator.kernel import state
from simulator.kernel.state import (
    A_DANCE,
    A_DECLARE,
    A_KONG,
    A_PASS,
    A_PUNG,
    A_TILE0,
    A_VOID0,
    A_WIN,
)
from simulator.rules import BOT_INDEX

PASS, PUNG, KONG, WIN, DECLARE, DANCE = A_PASS, A_PUNG, A_KONG, A_WIN, A_DECLARE, A_DANCE
VOID_ACTIONS = (A_VOID0, A_VOID0 + 1, A_VOID0 + 2)


@runtime_checkable
class Agent(Protocol):
    """What the engine needs from a Python bot."""

    def act(self, obs: Observation) -> int: ...


class Bot:
    """Base class: ``act`` calls the method named after the decision (``exchange``, ``void``, ``discard``,
    ``claim``, ``self_kong``, ``take_win``, ``declare``), each returning an action. The defaults take the first
    legal action (for ``take_win``: win; for ``claim``/``self_kong``/``declare``: pass). A seat is logged with
    ``bot`` = its seat's name (``package.module:Class`` or the entry-point name, :func:`simulator.hands.game.
    python_bot_name`) unless its class itself (not a parent) sets ``log_bot_id`` (the built-in wrappers: their
    compiled bot's name)."""

    def act(self, obs: Observation) -> int:
        return getattr(self, obs.decision)(obs)

    def exchange(self, obs: Observation) -> int:
        return obs.legal_actions[0]

    def void(self, obs: Observation) -> int:
        return obs.legal_actions[0]

    def discard(self, obs: Observation) -> int:
        return obs.legal_actions[0]

    def claim(self, obs: Observation) -> int:
        return PASS

    def self_kong(self, obs: Observation) -> int:
        return PASS

    def take_win(self, obs: Observation) -> int:
        return WIN

    def declare(self, obs: Observation) -> int:
        return PASS


class FirstLegalBot(Bot):
    """Always the first legal action (the benchmark's bot): discards its lowest legal tile, never claims."""

    def act(self, obs: Observation) -> int:
        return obs.legal_actions[0]


class RandomBot(Bot):
    """A uniformly random legal action. Reseeded by ``new_hand`` from the seat's own stream seed at the start of
    every hand, so its choices depend on the hand only (not on chunking or workers); not the compiled ``random``
    bot's draws, so its hands differ from a compiled random seat's."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def new_hand(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Observation) -> int:
        return obs.legal_actions[int(self.rng.integers(len(obs.legal_actions)))]


def _hand(raw: dict, void: int):
    """The observer's own hand as the compiled bots take it (:class:`simulator.kernel.shape.HandTiles`)."""
    from simulator.kernel.shape import HandTiles

    return HandTiles(raw["conc"], raw["mk"], raw["mt"], int(raw["nm"]), int(void))


class GreedyBot(Bot):
    """The compiled ``greedy`` bot as a Python object: each decision calls the same compiled policy function the
    engine calls for a greedy seat, so subclasses can override one decision and keep the others."""

    log_bot_id = BOT_INDEX["greedy"]

    def exchange(self, obs: Observation) -> int:
        from simulator.bots.greedy import greedy_exchange

        out = np.zeros(3, np.int64)
        greedy_exchange(obs._raw["conc"], out)
        return A_TILE0 + int(out[len(obs.picked)])

    def void(self, obs: Observation) -> int:
        from simulator.bots.common import plan_void

        r = obs._raw
        return A_VOID0 + int(plan_void(r["table"], r["conc"], r["mk"], r["mt"], r["nm"]))

    def _pv(self, obs: Observation) -> int:
        from simulator.bots import planning_void

        r = obs._raw
        return int(planning_void(r["params"], r["void"], r["table"], r["conc"], r["mk"], r["mt"], r["nm"]))

    def _legal_kinds(self, obs: Observation) -> int:
        return sum(1 << a for a in obs.legal_actions if a < A_VOID0)

    def discard(self, obs: Observation) -> int:
        from simulator.bots.greedy import greedy_discard

        r = obs._raw
        return int(greedy_discard(r["table"], _hand(r, self._pv(obs)), self._legal_kinds(obs), r["visible"],
                                  np.zeros(27, np.int64)))

    def claim(self, obs: Observation) -> int:
        from simulator.bots.greedy import greedy_claim

        r = obs._raw
        c = greedy_claim(r["table"], _hand(r, self._pv(obs)), obs.tile, True, KONG in obs.legal_actions)
        return (PASS, PUNG, KONG)[c]

    def self_kong(self, obs: Observation) -> int:
        from simulator.bots.greedy import greedy_self_kong

        r = obs._raw
        k = greedy_self_kong(r["table"], _hand(r, self._pv(obs)), self._legal_kinds(obs))
        return PASS if k < 0 else A_TILE0 + int(k)


class ValueBot(GreedyBot):
    """The compiled ``value`` bot (steers toward 清一色/对对胡/七对, declines cheap discard wins) as an object."""

    log_bot_id = BOT_INDEX["value"]

    def __init__(self, decline_below: int = 2, decline_wall: int = 24, steer_shanten: int = 2):
        self.decline_below, self.decline_wall, self.steer = decline_below, decline_wall, steer_shanten

    def discard(self, obs: Observation) -> int:
        from simulator.bots.value import value_discard

        r = obs._raw
        return int(value_discard(r["table"], _hand(r, self._pv(obs)), self._legal_kinds(obs), r["visible"],
                                 np.zeros(27, np.int64), self.steer))

    def claim(self, obs: Observation) -> int:
        from simulator.bots.value import value_claim

        r = obs._raw
        c = value_claim(r["table"], _hand(r, self._pv(obs)), obs.tile, True, KONG in obs.legal_actions,
                        self.steer)
        return (PASS, PUNG, KONG)[c]

    def self_kong(self, obs: Observation) -> int:
        from simulator.bots.value import value_self_kong

        r = obs._raw
        k = value_self_kong(r["table"], _hand(r, self._pv(obs)), self._legal_kinds(obs), self.steer)
        return PASS if k < 0 else A_TILE0 + int(k)

    def declare(self, obs: Observation) -> int:
        from simulator.bots.declare import declare_by_value
        from simulator.bots.view import SeatView

        r, s = obs._raw, obs._s
        ps = s["ps"]  # the public per-seat scalars (its own in full)
        waits = int(ps[obs.seat, state.PS_WAITS])
        view = SeatView(r["table"], r["params"], ps, np.asarray(s["mk"], np.int8), np.asarray(s["mt"], np.int8),
                        np.asarray(s["nm"], np.int64), r["visible"], int(obs.seat), int(obs.tiles_left))
        kind = declare_by_value(view, _hand(r, int(ps[obs.seat, state.PS_EVOID])), waits)
        return PASS if not kind else (DANCE if kind == 2 and DANCE in obs.legal_actions else DECLARE)

    def take_win(self, obs: Observation) -> int:
        from simulator.bots.value import value_takes_win

        take = value_takes_win(obs.fan, obs.from_seat < 0, obs.tiles_left, self.decline_below, self.decline_wall)
        return WIN if take else PASS

