"""Python bots: the protocol (``act(obs) -> action``), the observation a bot sees, and the built-in bots as objects.

A bot is any object with ``act(self, obs: Observation) -> int`` returning one of ``obs.legal_actions`` (an
action of :mod:`simulator.state`: ``0..26`` a tile kind, ``27..29`` a void suit, ``PASS``/``PUNG``/``KONG``/
``WIN``, ``DECLARE``). :class:`Bot` is a convenience base class that dispatches to one method per decision, so a bot can
override just one of them; :class:`GreedyBot` and :class:`ValueBot` are the compiled bots behind that interface
(they call the same compiled policy functions, so a table of them plays exactly as the compiled seats do).

The observation holds only what the seat may know: its own concealed tiles, everybody's melds (another seat's
concealed kong is face down: its tile reads −1), declared voids, all discards in order with who claimed them, who
has won and how, the scores, the tiles left, the legal actions and the rule set. It is built from a public copy of
the table taken at the decision (:func:`observe`): nothing reachable from it holds another seat's concealed tiles,
draws, waits or declined wins (tests/test_observation.py walks it). Changing it changes nothing in the game.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import traceback
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from simulator import state
from simulator.errors import IllegalActionError, UserError
from simulator.rules import BOT_INDEX
from simulator.settlement import KK_DIRECT
from simulator.state import (
    A_DANCE,
    A_DECLARE,
    A_KONG,
    A_PASS,
    A_PUNG,
    A_TILE0,
    A_VOID0,
    A_WIN,
    N_ACTIONS,
    WK_DISCARD,
)
from simulator.vocab import MELD_API_NAMES

PASS, PUNG, KONG, WIN, DECLARE, DANCE = A_PASS, A_PUNG, A_KONG, A_WIN, A_DECLARE, A_DANCE
VOID_ACTIONS = (A_VOID0, A_VOID0 + 1, A_VOID0 + 2)
CLAIMS = ("", "pung", "kong", "win")  # what became of a discard (Discard.claim), by _CLAIM_EVENTS position
# Per-seat scalars of the engine (state.PS_*) everyone at the table knows; the others (waits, declines, pass
# locks, the last drawn tile …) follow from a seat's concealed tiles or private choices and are zeroed in the
# observation for every seat but the observer's own.
PUBLIC_PS = (state.PS_VOID, state.PS_EVOID, state.PS_WON, state.PS_WIN_ORDER, state.PS_NKONGS, state.PS_NDRAWS,
             state.PS_SAFE, state.PS_DISCARDED, state.PS_WIN_TURN, state.PS_WIN_KIND, state.PS_DECLARED,
             state.PS_SHOWN, state.PS_NWINS)
# Event rows an observation keeps (all six columns, public for these rows): the discards and what claimed them.
# Draws, the exchange, declines and a 唱歌's waits are private and never copied.
_CLAIM_EVENTS = (state.EV_DISCARD, state.EV_PUNG, state.EV_KONG, state.EV_WIN)
# kept rows by (type, a & 15) — every event's ``a`` is below 16 — in one lookup (np.isin and separate tests of the
# kong's and the win's kind cost more than the rest of observe): discards, pungs, 直杠 and discard wins
_KEEP = np.zeros((64, 16), np.bool_)
_KEEP[state.EV_DISCARD, :] = _KEEP[state.EV_PUNG, :] = True
_KEEP[state.EV_KONG, KK_DIRECT] = _KEEP[state.EV_WIN, WK_DISCARD] = True
_PUBLIC_ROW = np.zeros(state.PS_N, np.int64)
_PUBLIC_ROW[list(PUBLIC_PS)] = 1


class Discard(NamedTuple):
    """One discard as the table saw it: ``seat`` discarded ``tile``; ``claim`` what became of it (``""`` left in
    the pond, ``"pung"``, ``"kong"`` an exposed kong, ``"win"`` won on — under ``mode: xueliu`` set aside face up),
    ``by`` the claiming seats (one, or several for a 一炮多响; ``()`` when unclaimed)."""

    seat: int
    tile: int
    claim: str
    by: tuple[int, ...]


@runtime_checkable
class Agent(Protocol):
    """What the engine needs from a Python bot."""

    def act(self, obs: Observation) -> int: ...


class Observation:
    """One seat's view at one of its decisions. Tile kinds are 0–26 (``1m``…``9m``, ``1p``…, ``1s``…); seats
    0–3 in turn order. Arrays are read-only copies; attributes cannot be set. The fields past the
    decision's own are derived on first access from a copy of the state taken at the decision (a bot that reads
    only ``legal_actions`` pays for nothing else).

    - ``seat``, ``decision`` (``exchange`` / ``void`` / ``discard`` / ``claim`` / ``self_kong`` / ``take_win`` /
      ``declare``), ``legal_actions`` (tuple) and ``action_mask`` (``int8[36]``);
    - ``tile``: the tile on offer (the discard to claim or win on, the robbed kong, one's own winning tile; −1
      otherwise), ``from_seat`` who gave it (−1: one's own), ``fan`` the capped fan of the win on offer;
    - ``hand``: ``uint8[27]`` own concealed counts; ``picked``: 换三张 tiles chosen so far (exchange only);
    - ``melds``: per seat a tuple of ``(kind, tile)`` with kind ``pung`` / ``kong`` / ``concealed_kong``;
    - ``voids``: ``int64[4]`` declared void suit per seat (0 m, 1 p, 2 s; −1 not declared / no 定缺 rule);
    - ``discards``: ``((seat, tile), ...)`` every discard in order (claimed ones included); ``ponds``: per seat
      its discards in order as :class:`Discard` ``(seat, tile, claim, by)``, marked with what claimed them
      (``claim`` ``""`` / ``pung`` / ``kong`` / ``win``, ``by`` the claiming seats);
    - ``won``: ``int64[4]`` win kind per seat (−1 not won, 0 discard, 1 self-draw, 2 robbed kong);
      ``win_order``: the win event (1, 2, 3) or −1 (under ``mode: xueliu``: of the seat's first win); ``scores``:
      ``int64[4]`` net base units so far;
    - ``visible``: ``int8[27]`` copies of each kind this seat has seen face up, with one rule (docs/rules.md, "What
      a bot sees"): a tile seen face up stays seen — every discard (also one punged, konged or won on), exposed
      melds, a robbed 加杠's tile, 血流's set-aside winning tiles — plus its own concealed kongs (another seat's
      concealed kong is face down and not counted); the engine's bots count the same;
    - ``declared``: ``int64[4]`` per seat 0 = not declared, 1 = 唱歌, 2 = 跳舞 (``declare_ready``); ``shown``:
      per seat the tile kinds a dancer has shown as its waits (``()`` for the others);
    - ``tiles_left``, ``dealer``, ``rules`` (the :class:`RuleSet`).
    """

    __slots__ = ("seat", "decision", "legal_actions", "action_mask", "tile", "from_seat", "fan", "picked",
                 "tiles_left", "dealer", "rules", "_s", "_cache")
    # _s: the public copy of the table (see observe): own hand, melds with others' 暗杠 face down, public per-seat
    # scalars, the discard/claim events, visible counts with the observer's own 暗杠 added. Nothing else.

    def __init__(self, seat, decision, legal_actions, action_mask, tile, from_seat, fan, picked, tiles_left, dealer,
                 rules, snapshot):
        for name, value in (("seat", seat), ("decision", decision), ("legal_actions", legal_actions),
                            ("action_mask", action_mask), ("tile", tile), ("from_seat", from_seat), ("fan", fan),
                            ("picked", picked), ("tiles_left", tiles_left), ("dealer", dealer), ("rules", rules),
                            ("_s", snapshot), ("_cache", {})):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Observation is read-only (cannot set {name!r})")

    def __repr__(self) -> str:
        return (f"Observation(seat={self.seat}, decision={self.decision!r}, legal_actions={self.legal_actions},"
                f" tile={self.tile}, tiles_left={self.tiles_left})")

    def _get(self, name, make):
        c = self._cache
        if name not in c:
            v = make()
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
            c[name] = v
        return c[name]

    @property
    def hand(self) -> np.ndarray:
        return self._get("hand", lambda: self._s["conc"].copy())

    @property
    def melds(self) -> tuple[tuple[tuple[str, int], ...], ...]:
        s = self._s
        return self._get("melds", lambda: tuple(
            _melds(s["mk"][q], s["mt"][q], s["nm"][q]) if s["nm"][q] else () for q in range(4)))

    @property
    def voids(self) -> np.ndarray:
        return self._get("voids", lambda: self._s["voids"].copy())

    @property
    def discards(self) -> tuple[tuple[int, int], ...]:
        def make():
            ev = self._s["events"]
            disc = ev[ev[:, 0] == state.EV_DISCARD]
            return tuple(zip(disc[:, 1].tolist(), disc[:, 2].tolist(), strict=True))
        return self._get("discards", make)

    @property
    def ponds(self) -> tuple[tuple[Discard, ...], ...]:
        return self._get("ponds", lambda: _ponds(self._s["events"]))

    @property
    def won(self) -> np.ndarray:
        ps = self._s["ps"]
        return self._get("won", lambda: np.where(ps[:, state.PS_NWINS] > 0, ps[:, state.PS_WIN_KIND], -1))

    @property
    def win_order(self) -> np.ndarray:
        ps = self._s["ps"]
        return self._get("win_order", lambda: np.where(ps[:, state.PS_NWINS] > 0, ps[:, state.PS_WIN_ORDER], -1))

    @property
    def declared(self) -> np.ndarray:
        return self._get("declared", lambda: self._s["ps"][:, state.PS_DECLARED].copy())

    @property
    def shown(self) -> tuple[tuple[int, ...], ...]:
        ps = self._s["ps"]
        return self._get("shown", lambda: tuple(
            tuple(k for k in range(state.N_KINDS) if (int(ps[q, state.PS_SHOWN]) >> k) & 1) for q in range(4)))

    @property
    def scores(self) -> np.ndarray:
        return self._get("scores", lambda: self._s["score"].sum(axis=1))

    @property
    def visible(self) -> np.ndarray:
        return self._get("visible", lambda: self._s["visible"].copy())

    @property
    def _raw(self) -> dict:
        """The compiled policies' inputs of this seat, for the built-in bots to choose exactly as their compiled
        seats do (``visible`` as the dispatchers give it: public tiles plus the seat's own concealed kongs)."""
        def make():
            s, q = self._s, self.seat
            return {"table": s["table"], "params": s["params"], "conc": s["conc"].copy(),
                    "mk": np.array(s["mk"][q], np.int8), "mt": np.array(s["mt"][q], np.int8), "nm": s["nm"][q],
                    "void": int(s["ps"][q, state.PS_VOID]), "visible": self.visible.copy()}
        return self._get("_raw", make)


@functools.lru_cache(maxsize=4096)
def _legal(legal: int) -> tuple[tuple[int, ...], np.ndarray]:
    """The legal actions of a bit mask as a tuple and a read-only ``int8[N_ACTIONS]`` (``int8[35]``) mask (cached:
    masks repeat)."""
    actions = tuple(a for a in range(N_ACTIONS) if (legal >> a) & 1)
    mask = np.zeros(N_ACTIONS, np.int8)
    mask[list(actions)] = 1
    mask.flags.writeable = False
    return actions, mask


def _melds(kinds: list, tiles: list, n: int) -> tuple[tuple[str, int], ...]:
    """``(kind name, tile)`` of one seat's melds (another seat's concealed kong already reads tile −1)."""
    return tuple((MELD_API_NAMES[kinds[i]], tiles[i]) for i in range(n))


def _ponds(ev: np.ndarray) -> tuple[tuple[Discard, ...], ...]:
    """Per seat its discards as :class:`Discard`, from the kept event rows (type, seat, tile, amount, a, b): a
    pung, a 直杠 or a discard win always claims the latest discard."""
    out: list[list] = [[] for _ in range(state.N_SEATS)]
    flat: list[list] = []
    for typ, seat, tile, *_ in ev.tolist():
        if typ == state.EV_DISCARD:
            flat.append([seat, tile, "", []])
            out[seat].append(flat[-1])
        elif flat:
            flat[-1][2] = CLAIMS[_CLAIM_EVENTS.index(typ)]
            flat[-1][3].append(seat)
    return tuple(tuple(Discard(s, t, c, tuple(by)) for s, t, c, by in pond) for pond in out)


def observe(hand, d) -> Observation:
    """The observation of ``d.seat`` at decision ``d`` of a :class:`simulator.game.Hand`: a public copy of the
    table taken now (the hand moves on after the bot answers) — the seat's own concealed tiles, the melds with
    other seats' 暗杠 face down (tile −1), the per-seat scalars of :data:`PUBLIC_PS` (all of its own), the
    discard and claim events, the visible counts with its own 暗杠 added. Neither the hand nor the engine's
    arrays are referenced."""
    st = hand.st
    conc, mk, mt, nm, g, ps, score, visible, events = st.conc, st.mk, st.mt, st.nm, st.g, st.ps, st.score, st.visible, \
        st.events
    q = d.seat
    voids = ps[:, state.PS_VOID].copy()
    pub = ps * _PUBLIC_ROW  # the others' private scalars zeroed
    pub[q] = ps[q]
    if st.pc[state.PC_STAGE] == state.STAGE_SETUP:  # 定缺 is simultaneous: nobody sees another's choice yet
        voids[:] = -1
        pub[:, state.PS_VOID] = -1
        pub[q, state.PS_VOID] = ps[q, state.PS_VOID]
    nm_l = nm.tolist()
    # slots past nm may hold a bot's trial meld: never copied
    mk_l = [row[:n] + [0] * (4 - n) for row, n in zip(mk.tolist(), nm_l, strict=True)]
    mt_l = [row[:n] + [0] * (4 - n) for row, n in zip(mt.tolist(), nm_l, strict=True)]
    vis = visible.copy()  # the engine's count leaves every concealed kong out (face down); a seat knows its own
    for p in range(state.N_SEATS):
        for i in range(nm_l[p]):
            if mk_l[p][i] == 3:
                if p == q:
                    vis[mt_l[p][i]] += 4
                else:
                    mt_l[p][i] = -1
    ev = events[:g[state.G_NEV]]
    snapshot = {"table": hand.game.table, "params": hand.game.params, "conc": conc[q].copy(), "mk": mk_l, "mt": mt_l,
                "nm": nm_l, "ps": pub, "score": score.copy(), "visible": vis,
                "events": ev[_KEEP[ev[:, 0], ev[:, 4] & 15]], "voids": voids}
    legal, mask = _legal(d.legal)
    return Observation(d.seat, d.kind, legal, mask, d.tile, d.from_seat, d.fan,
                       hand.picked(d.seat) if d.kind == "exchange" else (), int(g[state.G_TAIL] - g[state.G_HEAD]),
                       int(g[state.G_DEALER]), hand.rules, snapshot)


class Bot:
    """Base class: ``act`` calls the method named after the decision (``exchange``, ``void``, ``discard``,
    ``claim``, ``self_kong``, ``take_win``, ``declare``), each returning an action. The defaults take the first
    legal action (for ``take_win``: win; for ``claim``/``self_kong``/``declare``: pass). A seat is logged with
    ``bot`` = its seat's name (``package.module:Class`` or the entry-point name, :func:`simulator.game.
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
        return int(greedy_discard(r["table"], r["conc"], r["mk"], r["mt"], r["nm"], self._pv(obs),
                                  self._legal_kinds(obs), r["visible"], np.zeros(27, np.int64)))

    def claim(self, obs: Observation) -> int:
        from simulator.bots.greedy import greedy_claim

        r = obs._raw
        c = greedy_claim(r["table"], r["conc"], r["mk"], r["mt"], r["nm"], self._pv(obs), obs.tile, True,
                         KONG in obs.legal_actions)
        return (PASS, PUNG, KONG)[c]

    def self_kong(self, obs: Observation) -> int:
        from simulator.bots.greedy import greedy_self_kong

        r = obs._raw
        k = greedy_self_kong(r["table"], r["conc"], r["mk"], r["mt"], r["nm"], self._pv(obs),
                             self._legal_kinds(obs))
        return PASS if k < 0 else A_TILE0 + int(k)


class ValueBot(GreedyBot):
    """The compiled ``value`` bot (steers toward 清一色/对对胡/七对, declines cheap discard wins) as an object."""

    log_bot_id = BOT_INDEX["value"]

    def __init__(self, decline_below: int = 2, decline_wall: int = 24, steer_shanten: int = 2):
        self.decline_below, self.decline_wall, self.steer = decline_below, decline_wall, steer_shanten

    def discard(self, obs: Observation) -> int:
        from simulator.bots.value import value_discard

        r = obs._raw
        return int(value_discard(r["table"], r["conc"], r["mk"], r["mt"], r["nm"], self._pv(obs),
                                 self._legal_kinds(obs), r["visible"], np.zeros(27, np.int64), self.steer))

    def claim(self, obs: Observation) -> int:
        from simulator.bots.value import value_claim

        r = obs._raw
        c = value_claim(r["table"], r["conc"], r["mk"], r["mt"], r["nm"], self._pv(obs), obs.tile, True,
                        KONG in obs.legal_actions, self.steer)
        return (PASS, PUNG, KONG)[c]

    def self_kong(self, obs: Observation) -> int:
        from simulator.bots.value import value_self_kong

        r = obs._raw
        k = value_self_kong(r["table"], r["conc"], r["mk"], r["mt"], r["nm"], self._pv(obs),
                            self._legal_kinds(obs), self.steer)
        return PASS if k < 0 else A_TILE0 + int(k)

    def declare(self, obs: Observation) -> int:
        from simulator.bots.declare import declare_by_value

        r, ps = obs._raw, obs._s["ps"]  # the public per-seat scalars (its own in full)
        waits = int(ps[obs.seat, state.PS_WAITS])
        kind = declare_by_value(r["table"], r["params"], ps, obs.seat, r["conc"], r["mk"], r["mt"], r["nm"],
                                int(ps[obs.seat, state.PS_EVOID]), waits, r["visible"])
        return PASS if not kind else (DANCE if kind == 2 and DANCE in obs.legal_actions else DECLARE)

    def take_win(self, obs: Observation) -> int:
        from simulator.bots.value import value_takes_win

        take = value_takes_win(obs.fan, obs.from_seat < 0, obs.tiles_left, self.decline_below, self.decline_wall)
        return WIN if take else PASS


# ---------------------------------------------------------------------------------------------------------
# Calling a bot: its answer checked, its errors and silences turned into one line naming it.

TIMEOUT_ENV = "XUEZHAN_BOT_TIMEOUT"  # seconds per decision (float; 0 = no limit); set by --bot-timeout
DEFAULT_TIMEOUT = 60.0


class BotError(UserError):
    """A Python bot raised (or tried to exit), or did not answer in time. ``bot_traceback``: the bot's own
    traceback as text (printed under ``xuezhan --debug``)."""

    bot_traceback: str = ""


class _NoAnswer(Exception):
    pass


def _on_alarm(signum, frame):
    raise _NoAnswer


def bot_name(agent) -> str:
    cls = type(agent)
    return f"{cls.__module__}:{cls.__qualname__}"


def decision_timeout() -> float:
    """The per-decision time limit in seconds (``$XUEZHAN_BOT_TIMEOUT``, default 60; 0 = none)."""
    raw = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if 0 <= value < float("inf") else DEFAULT_TIMEOUT


def ask(agent, obs: Observation, hand_label: str) -> int:
    """``agent.act(obs)`` checked: an integer action (a bool, a string, a float, None... is the documented
    illegal-action error); an exception, ``sys.exit`` or no answer within :func:`decision_timeout` is a
    :class:`BotError` naming the bot, hand, seat and decision."""
    where = f"hand {hand_label or '?'}, seat {obs.seat}, decision {obs.decision}"
    limit = decision_timeout()
    timed = limit > 0 and threading.current_thread() is threading.main_thread()
    if timed:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        action = agent.act(obs)
    except _NoAnswer:
        raise BotError(f"bot {bot_name(agent)}: no answer within {limit:g} s ({where}); raise the limit with "
                       "--bot-timeout") from None
    except (KeyboardInterrupt, UserError):  # a UserError is already one line (xuezhan play's input, say)
        raise
    except BaseException as exc:  # SystemExit too: a bot never ends the run
        err = BotError(f"bot {bot_name(agent)}: {type(exc).__name__}: {str(exc)[:160]} ({where}); "
                       "`xuezhan --debug ...` shows its traceback")
        err.bot_traceback = "".join(traceback.format_exception(exc))
        raise err from None
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise IllegalActionError(f"hand {hand_label or '?'}: seat {obs.seat} answered {obs.decision} with illegal "
                                 f"action {str(repr(action))[:40]} ({type(action).__name__}, not an action "
                                 f"number); legal: {list(obs.legal_actions)}")
    return int(action)


def build(spec, seat: int):
    """A new instance of a seat's Python bot (``rules.BotSpec.build``); a :class:`BotError` naming it when its
    constructor raises or exits."""
    try:
        return spec.build()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        err = BotError(f"bot {spec.bot}: its constructor raised {type(exc).__name__}: {str(exc)[:160]} (seat "
                       f"{seat}); `xuezhan --debug ...` shows its traceback")
        err.bot_traceback = "".join(traceback.format_exception(exc))
        raise err from None
