"""What a Python bot sees: the :class:`Observation` of one seat at one decision, built by :func:`observe` from a
public copy of the table taken at the decision.

The observation holds only what the seat may know: its own concealed tiles, everybody's melds (another seat's
concealed kong is face down: its tile reads −1), declared voids, all discards in order with who claimed them, who
has won and how, the hands 血战 winners laid down, the scores, the tiles left, the legal actions and the rule set.
Nothing reachable from it holds another seat's concealed tiles (a 血战 winner's are laid down), draws, waits or
declined wins (tests/test_observation.py walks it). Changing it changes nothing in the game.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from simulator.kernel import state
from simulator.kernel.settlement import KK_DIRECT
from simulator.kernel.state import N_ACTIONS, WK_DISCARD, held_face_up
from simulator.vocab import MELD_API_NAMES

CLAIMS = ("", "pung", "kong", "win")  # what became of a discard (Discard.claim), by _CLAIM_EVENTS position
# Per-seat scalars of the engine (state.PS_*) everyone at the table knows; the others (waits, declines, pass
# locks, the last drawn tile …) follow from a seat's concealed tiles or private choices and are zeroed in the
# observation for every seat but the observer's own.
PUBLIC_PS = (state.PS_VOID, state.PS_EVOID, state.PS_WON, state.PS_WIN_ORDER, state.PS_NKONGS, state.PS_NDRAWS,
             state.PS_SAFE, state.PS_DISCARDED, state.PS_WIN_TURN, state.PS_WIN_KIND, state.PS_DECLARED,
             state.PS_SHOWN, state.PS_NWINS, state.PS_WON_KINDS, state.PS_CLEARED)
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


def _kinds(ps: np.ndarray, col: int) -> tuple[tuple[int, ...], ...]:
    """Per seat, the kinds whose bits are set in the mask ``ps[seat, col]``, ascending."""
    return tuple(tuple(k for k in range(state.N_KINDS) if (int(ps[q, col]) >> k) & 1) for q in range(4))


class Discard(NamedTuple):
    """One discard as the table saw it: ``seat`` discarded ``tile``; ``claim`` what became of it (``""`` left in
    the pond, ``"pung"``, ``"kong"`` an exposed kong, ``"win"`` won on — under ``mode: xueliu`` set aside face up),
    ``by`` the claiming seats (one, or several for a 一炮多响; ``()`` when unclaimed)."""

    seat: int
    tile: int
    claim: str
    by: tuple[int, ...]


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
    - ``won_on``: per seat the kinds it has won on (under 血流 its locked hand still waits on them); ``cleared``:
      per seat the kinds others discarded after its first win that it did not win on (under 血流 its locked hand
      does not wait on them, unless it declined a win on one);
    - ``laid_down``: ``uint8[4, 27]`` per seat the concealed tiles a 血战 winner laid down (推倒), without the tile
      of a discard or robbed-kong win (seen face up already: it is in ``visible``), with a self-draw's; zeros for
      the other seats (under 血流 a winner's hand stays concealed). ``visible + laid_down.sum(axis=0)`` counts
      every tile seen face up, as the compiled expert does;
    - ``tiles_left``, ``dealer``, ``rules`` (the :class:`RuleSet`).
    """

    __slots__ = ("seat", "decision", "legal_actions", "action_mask", "tile", "from_seat", "fan", "picked",
                 "tiles_left", "dealer", "rules", "_s", "_cache")
    # _s: the public copy of the table (see observe): own hand, melds with others' 暗杠 face down, public per-seat
    # scalars, the discard/claim events, visible counts with the observer's own 暗杠 added, the 血战 winners'
    # laid-down hands. Nothing else.

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
        return self._get("shown", lambda: _kinds(self._s["ps"], state.PS_SHOWN))

    @property
    def won_on(self) -> tuple[tuple[int, ...], ...]:
        return self._get("won_on", lambda: _kinds(self._s["ps"], state.PS_WON_KINDS))

    @property
    def cleared(self) -> tuple[tuple[int, ...], ...]:
        return self._get("cleared", lambda: _kinds(self._s["ps"], state.PS_CLEARED))

    @property
    def laid_down(self) -> np.ndarray:
        return self._get("laid_down", lambda: self._s["laid"].copy())

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
    """The observation of ``d.seat`` at decision ``d`` of a :class:`simulator.hands.game.Hand`: a public copy of the
    table taken now (the hand moves on after the bot answers) — the seat's own concealed tiles, the melds with
    other seats' 暗杠 face down (tile −1), the per-seat scalars of :data:`PUBLIC_PS` (all of its own), the
    discard and claim events, the visible counts with its own 暗杠 added, the hands 血战 winners laid down.
    Neither the hand nor the engine's arrays are referenced."""
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
    laid = np.zeros((state.N_SEATS, state.N_KINDS), np.uint8)
    for p in range(state.N_SEATS):
        if ps[p, state.PS_WON]:  # a 血战 winner, out of play (血流 winners play on: PS_WON is 0 again)
            laid[p] = conc[p]
            t = held_face_up(conc[p], nm_l[p], ps[p])
            if t >= 0:
                laid[p, t] -= 1
    ev = events[:g[state.G_NEV]]
    snapshot = {"table": hand.game.table, "params": hand.game.params, "conc": conc[q].copy(), "mk": mk_l, "mt": mt_l,
                "nm": nm_l, "ps": pub, "score": score.copy(), "visible": vis,
                "events": ev[_KEEP[ev[:, 0], ev[:, 4] & 15]], "voids": voids, "laid": laid}
    legal, mask = _legal(d.legal)
    return Observation(d.seat, d.kind, legal, mask, d.tile, d.from_seat, d.fan,
                       hand.picked(d.seat) if d.kind == "exchange" else (), int(g[state.G_TAIL] - g[state.G_HEAD]),
                       int(g[state.G_DEALER]), hand.rules, snapshot)
