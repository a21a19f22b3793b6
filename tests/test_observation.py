"""What a bot sees (issue 26 items 4–8, issue 34 item 2): the one visibility rule, claimed discards marked, nothing
reachable from an Observation that another seat keeps hidden, 暗杠 read as public information only, and the
跳舞 / 花猪 planning of the value, defensive and expert bots."""

from __future__ import annotations

import types

import numpy as np
import pytest
from engine_helpers import decision

from simulator import agents, engine, hands
from simulator.bots import BOT_DEFENSIVE, BOT_EXPERT, BOT_GREEDY, BOT_VALUE, bot_discard
from simulator.bots.dance import blocked_kinds, dance_void, stuck_cost
from simulator.bots.danger import meld_suit
from simulator.bots.defensive import dead_suit
from simulator.bots.view import SeatView
from simulator.hands import game
from simulator.hands.compiled_rules import CompiledTable
from simulator.kernel import state
from simulator.kernel.shape import MELD_CKONG, MELD_PUNG, HandTiles
from simulator.kernel.tables import suit_table
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.rules import load_rules

TABLE = suit_table()


def decisions(config, seats, external, n, seed, **overrides):
    """``(hand, decision, observation)`` at every decision of the ``external`` seats over ``n`` hands, which
    play as the compiled greedy bot (through :class:`agents.GreedyBot`)."""
    rules = load_rules(config, {"seats": seats, **overrides})
    hand = game.Hand(CompiledTable.of(rules), external)
    walls, bots = engine.deal_seeds(seed, np.arange(n))
    bot = agents.GreedyBot()
    for i in range(n):
        hand.deal(walls[i], bots[i], i % 4, label=str(i))
        while (d := hand.advance()) is not None:
            obs = agents.observe(hand, d)
            yield hand, d, obs
            hand.apply(bot.act(obs))


def events_now(hand) -> np.ndarray:
    return hand.st.events[:hand.st.g[state.G_NEV]].copy()


# ---- nothing hidden is reachable -----------------------------------------------------------------------------

def reachable(root) -> list:
    """Every object reachable from ``root`` through attributes (slots and ``__dict__``), containers and arrays'
    bases; functions, classes and modules are leaves."""
    seen, out, stack = set(), [], [root]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        out.append(o)
        if isinstance(o, (str, bytes, int, float, bool, type(None), np.generic, types.FunctionType,
                          types.BuiltinFunctionType, types.MethodType, types.ModuleType, type)):
            continue
        if isinstance(o, np.ndarray):
            if o.base is not None:
                stack.append(o.base)
            continue
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
            continue
        if isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
            continue
        for cls in type(o).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if hasattr(o, name):
                    stack.append(getattr(o, name))
        if getattr(o, "__dict__", None) is not None:
            stack.append(o.__dict__)
    return out


def read_everything(obs) -> None:
    for name in ("hand", "melds", "voids", "discards", "ponds", "won", "win_order", "declared", "shown", "scores",
                 "visible", "won_on", "cleared", "laid_down", "_raw"):
        getattr(obs, name)


@pytest.mark.parametrize("config,seats,extra", [
    ("chengdu", ["greedy", "expert", "value", "defensive"], {}),
    ("qq_sichuan", ["greedy", "expert", "value", "expert"], {"declare_ready": "dance"}),
    ("xueliu", ["greedy", "greedy", "expert", "greedy"], {}),
])
def test_nothing_reachable_from_an_observation_holds_another_seats_concealed_tiles(config, seats, extra):
    """Walk every object reachable from the observation (all its lazy fields read first): no array shares memory
    with the engine's state, none holds another seat's concealed counts (as a row or flat; a 血战 winner's hand is
    laid down, public), the wall or a draw event, and no other seat's waits or last drawn tile; no game.Hand is
    reachable."""
    checked = 0
    for hand, d, obs in decisions(config, seats, (0,), 4, 5, **extra):
        read_everything(obs)
        conc, wall = hand.st.conc, hand.st.wall
        engine_arrays = [a for a in (*hand.st, *hand.snap) if isinstance(a, np.ndarray)]
        hidden = [conc[q].copy() for q in range(4) if q != d.seat and conc[q].sum() > 0
                  and not hand.st.ps[q, state.PS_WON] and not np.array_equal(conc[q], conc[d.seat])]
        for o in reachable(obs):
            assert not isinstance(o, game.Hand)
            if isinstance(o, list) and len(o) == 27:
                assert not any(o == h.tolist() for h in hidden)
            if not isinstance(o, np.ndarray) or o.dtype == object:
                continue
            assert not any(np.shares_memory(o, a) for a in engine_arrays)
            if o.size == wall.size:
                assert not np.array_equal(o.ravel(), wall)
            if o.ndim and o.shape[-1] == 27:
                rows = o.reshape(-1, 27)
                assert not any((rows == h).all(axis=1).any() for h in hidden), "another seat's concealed tiles"
            if o.ndim == 2 and o.shape == (4, state.PS_N):
                others = [q for q in range(4) if q != d.seat]
                for col in (state.PS_WAITS, state.PS_DRAWN, state.PS_DECLINED, state.PS_LOCK_MASK):
                    assert not o[others, col].any(), col
            if o.ndim == 2 and o.shape[0] and o.dtype == np.int32:
                assert not (o[:, 0] == state.EV_DRAW).any()
        checked += 1
    assert checked > 40


# ---- one visibility rule ---------------------------------------------------------------------------------------

def visible_from_public(obs) -> np.ndarray:
    """The visible counts rebuilt from what the observation shows: every discard once (claimed, won on or not),
    the claimed pungs' two other tiles, an exposed kong's three, the seat's own concealed kongs' four."""
    v = np.zeros(27, np.int64)
    for _, t in obs.discards:
        v[t] += 1
    for q in range(4):
        for kind, t in obs.melds[q]:
            if kind == "pung":
                v[t] += 2
            elif kind == "kong":
                v[t] += 3
            elif kind == "concealed_kong" and q == obs.seat:
                v[t] += 4
    return v


def test_a_tile_seen_face_up_stays_seen_also_when_won_on():
    """血战: after a discard win the tile is still counted (it used to leave ``visible``, while a robbed kong's tile
    stayed); the engine's count (the bots' input) is the observation's less the seat's own concealed kongs."""
    after_ron = 0
    for hand, _, obs in decisions("chengdu", ["greedy"] * 4, (0,), 30, 3):
        own_ckongs = np.zeros(27, np.int64)
        for kind, t in obs.melds[0]:
            if kind == "concealed_kong":
                own_ckongs[t] = 4
        assert np.array_equal(hand.st.visible, obs.visible - own_ckongs)
        ev = events_now(hand)
        if (ev[:, 0] == state.EV_ROBBED).any():  # a robbed 加杠's tile counts too, but shows in no meld
            continue
        assert np.array_equal(obs.visible, visible_from_public(obs))
        after_ron += bool(((ev[:, 0] == state.EV_WIN) & (ev[:, 4] == state.WK_DISCARD)).any())
    assert after_ron > 20


# ---- claimed discards ------------------------------------------------------------------------------------------

def claims_from_log(ev) -> list:
    """``[(seat, tile, claim, by)]`` of every discard, read from the full event log; each claim is checked to
    point at the discard it follows (a pung's and a 直杠's feeder, a discard win's tile)."""
    out = []
    for typ, seat, tile, _amount, a, b in ev.tolist():
        if typ == state.EV_DISCARD:
            out.append([seat, tile, "", ()])
        elif typ in (state.EV_DRAW, state.EV_END):
            continue
        elif typ == state.EV_PUNG:
            assert a == out[-1][0] and tile == out[-1][1]
            out[-1][2:] = ["pung", (seat,)]
        elif typ == state.EV_KONG and a == 1:
            assert b == out[-1][0] and tile == out[-1][1]
            out[-1][2:] = ["kong", (seat,)]
        elif typ == state.EV_WIN and a == state.WK_DISCARD:
            assert tile == out[-1][1]
            out[-1][2:] = ["win", out[-1][3] + (seat,)]
    return [tuple(x) for x in out]


@pytest.mark.parametrize("config", ["chengdu", "xueliu"])
def test_claimed_discards_are_marked_as_the_event_log_says(config):
    """A watcher seat's ponds at every decision match the event log up to then; each seat's pung/kong marks
    equal its exposed melds (a 加杠 grows from a claimed pung) and its win marks its discard wins."""
    marks = {"pung": 0, "kong": 0, "win": 0}
    for hand, _, obs in decisions(config, ["greedy", "value", "greedy", "expert"], (0,), 24, 8):
        log = claims_from_log(events_now(hand))
        ponds = [p for q in range(4) for p in obs.ponds[q]]
        for q in range(4):
            assert list(obs.ponds[q]) == [x for x in log if x[0] == q]
            assert [(s, t) for s, t, _, _ in obs.ponds[q]] == [x for x in obs.discards if x[0] == q]
            claimed = sum(1 for p in ponds if p.claim in ("pung", "kong") and q in p.by)
            assert claimed == sum(1 for kind, _ in obs.melds[q] if kind in ("pung", "kong"))
        for p in ponds:
            if p.claim:
                marks[p.claim] += 1
                assert p.seat not in p.by
    assert min(marks.values()) > 0


# ---- 暗杠: public information only ---------------------------------------------------------------------------------

def table_with_concealed_kong(kong_tile: int):
    """Seat 1 shows two 饼 pungs and has a face-down 暗杠 of ``kong_tile``."""
    mk = np.zeros((4, 4), np.int8)
    mt = np.zeros((4, 4), np.int8)
    nm = np.zeros(4, np.int64)
    mk[1, :3] = (MELD_PUNG, MELD_PUNG, MELD_CKONG)
    mt[1, :3] = (*parse_tiles("2p5p"), kong_tile)
    nm[1] = 3
    ps = np.zeros((4, state.PS_N), np.int64)
    ps[:, state.PS_NDRAWS] = 8
    ps[1, state.PS_NKONGS] = 1
    ps[:, state.PS_VOID] = -1
    return mk, mt, nm, ps


KONG_TILES = [parse_tiles(t)[0] for t in ("8p", "9m", "1s", "4s")]


def test_another_seats_concealed_kong_is_read_as_public_information_only():
    """meld_suit (the expert's 清一色 signal) and dead_suit (defensive, expert) do not depend on the kind or suit
    of another seat's 暗杠 (the expert's waits: tests/test_expert_wait_copies.py)."""
    void_none = load_rules("chengdu", {"void_suit": "none"}).to_arrays()
    got = set()
    for x in KONG_TILES:
        mk, mt, nm, ps = table_with_concealed_kong(x)
        got.add((meld_suit(mk, mt, nm, 1), dead_suit(void_none, ps, mk, mt, nm, 1)))
    assert got == {(1, -1)}


@pytest.mark.parametrize("bot", [BOT_GREEDY, BOT_VALUE, BOT_DEFENSIVE, BOT_EXPERT])
@pytest.mark.parametrize("config", ["chengdu", "qq_sichuan"])
def test_no_bot_decides_on_the_kind_of_another_seats_concealed_kong(bot, config):
    """The same discard (and reason code) whatever seat 1's 暗杠 is, for every bot, late in a hand with a player
    out (the defensive and expert bots defend)."""
    rules = load_rules(config, {"seats": ["expert", "expert", "expert", "expert"]})
    params = rules.to_arrays()
    bpar = rules.bot_arrays()[1][0].copy()
    g = np.zeros(state.G_N, np.int64)
    g[state.G_NWON] = 1
    seen = set()
    for conc0 in ("2345m345p6788p9s", "1123m56789p234s", "3456m3457p45s666s"):
        conc = counts_from_str(conc0)
        for x in KONG_TILES:
            mk, mt, nm, ps = table_with_concealed_kong(x)
            ps[3, state.PS_WON] = 1
            visible = np.zeros(27, np.int8)
            visible[parse_tiles("2p5p")] = 3
            legal = sum(1 << k for k in range(27) if conc[k])
            game, st = decision(bot, params, conc=conc, g=g, ps=ps, mk=mk, mt=mt, nm=nm, visible=visible,
                                tiles_left=12)
            t = bot_discard(game, st, bpar, 0, 0 if config == "qq_sichuan" else 2, legal)
            seen.add((conc0, t))
    assert len(seen) == 3


# ---- 跳舞 and 花猪 ------------------------------------------------------------------------------------------------

def _view(params, ps, visible):
    """Seat 0's view at 40 tiles left, nothing set down."""
    return SeatView(TABLE, params, ps, np.zeros((4, 4), np.int8), np.zeros((4, 4), np.int8), np.zeros(4, np.int64),
                    visible, 0, 40)


def test_a_suit_holding_a_dancers_wait_is_not_planned_as_the_one_to_drop():
    """qq_sichuan (no 定缺, 花猪 16 each) with 跳舞: seat 0 plans to drop 饼 (its fewest-shanten choice) but holds
    5p, which seat 2 dances on: it cannot discard it, so it plans to drop 索 instead; without the dancer, or once
    the dancer has won, 饼 again."""
    params = load_rules("qq_sichuan", {"declare_ready": "dance"}).to_arrays()
    conc = counts_from_str("1234566789m5p23s")
    mk, mt, nm = np.zeros(4, np.int8), np.zeros(4, np.int8), 0
    ps = np.zeros((4, state.PS_N), np.int64)
    visible = np.zeros(27, np.int8)
    p, s = 1, 2
    assert dance_void(_view(params, ps, visible), HandTiles(conc, mk, mt, nm, p)) == p
    ps[2, state.PS_DECLARED] = 2
    ps[2, state.PS_SHOWN] = (1 << parse_tiles("5p")[0]) | (1 << parse_tiles("8p")[0])
    assert blocked_kinds(params, ps, 0) == ps[2, state.PS_SHOWN]
    assert stuck_cost(params, ps, 0, conc, visible, p, 40) > 8.0  # 16 × 3 × 0.8 × P(the dancer stays)
    assert stuck_cost(params, ps, 0, conc, visible, s, 40) == 0.0
    assert stuck_cost(params, ps, 0, counts_from_str("1234566789m2p23s"), visible, p, 40) == 0.0
    assert dance_void(_view(params, ps, visible), HandTiles(conc, mk, mt, nm, p)) == s
    ps[2, state.PS_WON] = 1
    assert dance_void(_view(params, ps, visible), HandTiles(conc, mk, mt, nm, p)) == p
    ps[2, state.PS_WON] = 0
    sing = load_rules("qq_sichuan", {"declare_ready": "sing"}).to_arrays()
    assert dance_void(_view(sing, ps, visible), HandTiles(conc, mk, mt, nm, p)) == p


def test_dancers_no_longer_breed_huazhu_among_experts():
    """qq_sichuan with declare_ready: dance, four experts, 300 hands (seed 0): before the bots weighed the stuck
    tiles 71 players ended as 花猪 (224 in 1,000 hands); now 31 (112 in 1,000)."""
    rules = load_rules("qq_sichuan", {"seats": ["expert"] * 4, "declare_ready": "dance"})
    raw = hands.run_batch(rules, np.arange(300, dtype=np.int64), 0)
    assert raw.p[:, state.PL_HUAZHU].sum() <= 45
