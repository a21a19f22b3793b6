"""Bots: compiled policies chosen per seat by integer id (``rules.BOT_INDEX``) inside the engine's loop.

The engine owns legality (it passes the mask of legal discards and which claims are allowed); a bot only
chooses. Each decision has one dispatcher here, called as ``(game, st, bpar, seat, …the decision's scalars)``: the
engine's records (:class:`~simulator.state.Game`, :class:`~simulator.state.HandState`), the seat's parameter row
and the seat. The dispatcher hands the bots the public part of it as two records, built once per decision: the seat's
own hand (:class:`~simulator.shape.HandTiles`: its tiles, melds and the suit it plans to drop) and what it sees of
the table (:class:`~simulator.bots.view.SeatView`, :func:`view_of`: every seat's melds, ``visible``, the rules, the
public per-seat scalars, the seat, tiles left), with ``bpar`` beside them; no bot reads the wall or another seat's
concealed tiles (the expert's win decision also reads the hands winners laid down, public under 血战). Each
decision:

- ``bot_exchange`` — three tiles to pass for 换三张; ``bot_void`` — the 定缺 suit;
- ``planning_void`` — the suit a bot treats as dead (its declared void; under ``void_suit: none`` the suit it
  currently finds cheapest to drop, so that bots clear a third suit and avoid ending as 花猪); ``value``,
  ``defensive`` and ``expert`` re-plan it away from a suit holding tiles a dancer shows (they may not discard
  them: :func:`simulator.bots.dance.dance_void`, called in the ``param_*`` dispatchers);
- ``bot_discard`` (the kind, with the expert's reason code in the bits from ``REASON_SHIFT`` up: the engine logs
  it with the discard for ``xuezhan replay``); ``bot_claim`` (0 pass, 1 pung, 2 exposed kong);
  ``bot_self_kong`` (kind or −1);
- ``bot_takes_win`` — whether to take a legal win (the engine enforces 最后N张必胡 and the pass lock);
- ``bot_declares`` — whether a ready seat declares 唱歌/跳舞 after its discard (``declare_ready``).

The per-turn dispatchers are inlined into the engine's loop (``inline="always"``), like the loop's own per-turn
steps: a call passing a dozen arrays costs a measurable share of a turn (making all of them calls cost about 10%
of the engine's speed). They stay thin, so inlining copies little; the bots' own functions are ordinary calls,
compiled and cached once (a cold warm-up compiles them in a second process, see simulator.warmup). The expert's
decisions are inlined into their ``param_*`` dispatcher (and its 定缺 into ``bot_void``), which is the ordinary
call: each library links and re-optimises the expert's hand values, so one fewer per decision saves compile time.

Bot parameters come from ``RuleSet.bot_arrays()``: one ``int64[N_BOT_PARAMS]`` row per seat (``BP_*`` slots).
Randomness only through the seat's own stream (``rng``: ``uint64[1]``).

A line-up of ``random`` and ``greedy`` seats only (:func:`simple_lineup`) passes ``None`` as every seat's parameter
row. The parameterised bots (``value``, ``defensive``, ``expert``) are reached through the ``param_*`` functions,
ordinary calls whose first branch ``bpar is None`` numba prunes before typing the rest: such an engine is compiled
without them (most of a cold start's compile time and machine code). Any other line-up compiles a second copy of
the loop with the full dispatch; each is cached.

``visible`` (kinds counted as seen by everyone, one rule: a tile seen face up stays seen — every discard, also one
claimed or won on, exposed melds, a robbed 加杠's tile, 血流's set-aside winning tiles) never holds a concealed
kong's tiles, which are face down; around each decision the dispatcher adds the deciding seat's own concealed kongs
(it knows them) and takes them out again, so no bot counts another seat's 暗杠 as seen. The other seats' melds
(``mk_all``, ``mt_all``, ``nm_all``) hold their 暗杠 too, with the tile: a bot reads only the face-up ones
(:func:`simulator.bots.common.face_up`) and the number of melds, never a concealed kong's kind or suit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.bots.common import plan_void
from simulator.bots.dance import dance_void
from simulator.bots.declare import declare_by_value
from simulator.bots.defensive import defensive_discard
from simulator.bots.expert import (
    REASON_SHIFT as REASON_SHIFT,
)
from simulator.bots.expert import (
    expert_claim,
    expert_discard,
    expert_self_kong,
    expert_takes_win,
    expert_void,
)
from simulator.bots.greedy import greedy_claim, greedy_discard, greedy_exchange, greedy_self_kong
from simulator.bots.random_bot import random_discard, random_exchange, random_void
from simulator.bots.value import value_claim, value_discard, value_self_kong, value_takes_win
from simulator.bots.view import seat_view
from simulator.rules_vocab import BOT_INDEX
from simulator.shape import MELD_CKONG, hand_tiles
from simulator.state import (
    G_NWON,
    N_KINDS,
    N_SEATS,
    PS_EVOID,
    PS_WON,
    VOID_NONE,
    held_face_up,
    tiles_left,
    void_rule,
)

BOT_RANDOM = BOT_INDEX["random"]
BOT_GREEDY = BOT_INDEX["greedy"]
BOT_VALUE = BOT_INDEX["value"]
BOT_DEFENSIVE = BOT_INDEX["defensive"]
BOT_EXPERT = BOT_INDEX["expert"]
BP_DECLINE_BELOW, BP_DECLINE_WALL, BP_DEFEND_WALL, BP_STEER = range(4)  # BotSpec.to_row order (expert: 4..6)
SIMPLE_BOTS = (BOT_RANDOM, BOT_GREEDY)  # bots that read no parameter row


def simple_lineup(bot_ids) -> bool:
    """Whether every seat is played by a bot of ``SIMPLE_BOTS`` (then the engine gets ``None`` parameter rows)."""
    return all(int(b) in SIMPLE_BOTS for b in bot_ids)


@njit(cache=True, _nrt=False)
def own_ckongs(visible, mk, mt, nm, sign) -> None:
    """Add (``sign`` 1) or remove (−1) the deciding seat's own concealed kongs to/from ``visible``."""
    for i in range(nm):
        if mk[i] == MELD_CKONG:
            visible[mt[i]] += 4 * sign


@njit(cache=True, _nrt=False)
def bot_exchange(game, st, seat, out) -> None:
    """换三张: the three kinds seat ``seat`` passes, into ``out: int64[3]``."""
    if game.bots[seat] == BOT_RANDOM:
        random_exchange(st.conc[seat], st.rngs[1 + seat:2 + seat], out)
    else:  # the expert too: its value-based pass measured worse against greedy (docs/bots.md,
        # "What was tried, by part of the rules")
        greedy_exchange(st.conc[seat], out)


@njit(cache=True, _nrt=True)  # inlines the expert's 定缺 choice, whose start values allocate
def bot_void(game, st, bpar, seat: int) -> int:
    """定缺: the suit seat ``seat`` declares void (0–2)."""
    bot, table = game.bots[seat], game.table
    conc, mk, mt, nm = st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat]
    if bot == BOT_RANDOM:
        return random_void(st.rngs[1 + seat:2 + seat])
    if bpar is None:  # a simple line-up: the expert below is pruned
        return plan_void(table, conc, mk, mt, nm)
    if bot == BOT_EXPERT:
        return expert_void(table, game.params, conc, mk, mt, nm, bpar)
    return plan_void(table, conc, mk, mt, nm)


@njit(cache=True, inline="always")
def planning_void(params, declared, table, conc, mk, mt, nm) -> int:
    """The suit a bot treats as dead: its declared void, or under ``void_suit: none`` the suit whose dropping
    leaves the lowest shanten right now (re-chosen every turn, so a bot can switch while it has not cleared
    one). Keeping all three suits open instead (shanten over every droppable suit) until late in the wall gave
    the same results at half the speed."""
    if void_rule(params) != VOID_NONE:
        return declared
    return plan_void(table, conc, mk, mt, nm)


@njit(cache=True, inline="always")
def bot_discard(game, st, bpar, seat: int, void: int, legal: int) -> int:
    """The kind seat ``seat`` discards (among the kinds of the mask ``legal``), planning ``void`` as its dead suit,
    with the expert's reason code from bit ``REASON_SHIFT`` up."""
    bot = game.bots[seat]
    conc, mk, mt, nm, visible = st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], st.visible
    if bot == BOT_RANDOM:
        return random_discard(conc, legal, st.rngs[1 + seat:2 + seat])
    own_ckongs(visible, mk, mt, nm, 1)
    if bot == BOT_GREEDY:
        t = greedy_discard(game.table, hand_tiles(conc, mk, mt, nm, void), legal, visible, st.sh_buf)
    else:
        t = param_discard(game, st, bpar, seat, void, legal)
    own_ckongs(visible, mk, mt, nm, -1)
    return t


@njit(cache=True, inline="always")
def laid_down(visible, st, sign) -> None:
    """Add (``sign`` 1) or remove (−1) the hands 血战 winners laid down (推倒: public) to/from ``visible``, for the
    expert's counts of unseen tiles; a discard or robbed-kong win's tile is already there (seen face up), and only
    its first winner holds it (:func:`simulator.state.held_face_up`)."""
    ps, conc, nm = st.ps, st.conc, st.nm
    for q in range(N_SEATS):
        if ps[q, PS_WON]:
            for k in range(N_KINDS):
                visible[k] += sign * np.int64(conc[q, k])
            t = held_face_up(conc[q], nm[q], ps[q])
            if t >= 0:
                visible[t] -= sign


@njit(cache=True, inline="always")
def view_of(game, st, seat):
    """What seat ``seat`` sees of the table (:class:`~simulator.bots.view.SeatView`), once per decision."""
    return seat_view(game.table, game.params, st.ps, (st.mk, st.mt, st.nm), st.visible, seat, tiles_left(st.g))


@njit(cache=True, inline="always")
def planned_hand(view, st, seat, void):
    """The seat's own hand (:class:`~simulator.shape.HandTiles`) with the suit it plans to drop: ``void``, re-planned
    away from a dancer's shown waits (:func:`simulator.bots.dance.dance_void`)."""
    conc, mk, mt, nm = st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat]
    return hand_tiles(conc, mk, mt, nm, dance_void(view, hand_tiles(conc, mk, mt, nm, void)))


@njit(cache=True, _nrt=False)
def param_discard(game, st, bpar, seat: int, void: int, legal: int) -> int:
    """The parameterised bots' discards (a call, not inlined, so that ``bpar is None`` prunes them)."""
    if bpar is None:  # a simple line-up never gets here
        return -1
    bot, table, visible, sh_buf = game.bots[seat], game.table, st.visible, st.sh_buf
    view = view_of(game, st, seat)
    hand = planned_hand(view, st, seat, void)
    if bot == BOT_VALUE:
        return value_discard(table, hand, legal, visible, sh_buf, bpar[BP_STEER])
    if bot == BOT_DEFENSIVE:
        return defensive_discard(view, hand, legal, sh_buf, st.g[G_NWON], bpar[BP_DEFEND_WALL])
    if bot == BOT_EXPERT:
        laid_down(visible, st, 1)
        t = expert_discard(view, hand, legal, sh_buf, bpar, st.rngs[1 + seat:2 + seat])
        laid_down(visible, st, -1)
        return t
    return greedy_discard(table, hand, legal, visible, sh_buf)


@njit(cache=True, inline="always")
def bot_claim(game, st, bpar, seat: int, void: int, tile: int, can_pung: bool, can_kong: bool) -> int:
    """0 = pass, 1 = pung, 2 = exposed kong of the discard ``tile`` (as far as ``can_pung``/``can_kong`` allow)."""
    bot = game.bots[seat]
    if bot == BOT_RANDOM:
        return 0
    if bot == BOT_GREEDY:
        return greedy_claim(game.table, hand_tiles(st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], void), tile,
                            can_pung, can_kong)
    return param_claim(game, st, bpar, seat, void, tile, can_pung, can_kong)


@njit(cache=True, _nrt=False)
def param_claim(game, st, bpar, seat: int, void: int, tile: int, can_pung: bool, can_kong: bool) -> int:
    if bpar is None:
        return 0
    bot, table, visible = game.bots[seat], game.table, st.visible
    mk, mt, nm = st.mk[seat], st.mt[seat], st.nm[seat]
    view = view_of(game, st, seat)
    hand = planned_hand(view, st, seat, void)
    if bot == BOT_VALUE:
        return value_claim(table, hand, tile, can_pung, can_kong, bpar[BP_STEER])
    if bot == BOT_EXPERT:
        own_ckongs(visible, mk, mt, nm, 1)
        laid_down(visible, st, 1)
        c = expert_claim(view, hand, tile, can_pung, can_kong, bpar)
        laid_down(visible, st, -1)
        own_ckongs(visible, mk, mt, nm, -1)
        return c
    return greedy_claim(table, hand, tile, can_pung, can_kong)  # defensive claims as greedy


@njit(cache=True, inline="always")
def bot_self_kong(game, st, bpar, seat: int, void: int, opts: int) -> int:
    """The kind seat ``seat`` kongs on its own turn (暗杠/加杠, among the kind mask ``opts``), or −1."""
    bot = game.bots[seat]
    if bot == BOT_RANDOM or opts == 0:
        return -1
    if bot == BOT_GREEDY:
        return greedy_self_kong(game.table, hand_tiles(st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], void),
                                opts)
    return param_self_kong(game, st, bpar, seat, void, opts)


@njit(cache=True, _nrt=False)
def param_self_kong(game, st, bpar, seat: int, void: int, opts: int) -> int:
    if bpar is None:
        return -1
    bot, table, visible = game.bots[seat], game.table, st.visible
    mk, mt, nm = st.mk[seat], st.mt[seat], st.nm[seat]
    view = view_of(game, st, seat)
    hand = planned_hand(view, st, seat, void)
    if bot == BOT_VALUE:
        return value_self_kong(table, hand, opts, bpar[BP_STEER])
    if bot == BOT_EXPERT:
        own_ckongs(visible, mk, mt, nm, 1)
        laid_down(visible, st, 1)
        k = expert_self_kong(view, hand, opts, bpar)
        laid_down(visible, st, -1)
        own_ckongs(visible, mk, mt, nm, -1)
        return k
    return greedy_self_kong(table, hand, opts)  # defensive kongs as greedy


@njit(cache=True, inline="always")
def bot_takes_win(game, st, bpar, seat, tile, capped_fan, self_draw) -> bool:
    """Whether seat ``seat`` takes its legal win on ``tile`` worth ``capped_fan``; for a discard win
    ``st.conc[seat]`` does not hold ``tile``."""
    if game.bots[seat] in (BOT_VALUE, BOT_EXPERT):
        return param_takes_win(game, st, bpar, seat, tile, capped_fan, self_draw)
    return True


@njit(cache=True, _nrt=False)
def param_takes_win(game, st, bpar, seat, tile, capped_fan, self_draw) -> bool:
    if bpar is None:
        return True
    left = tiles_left(st.g)
    if game.bots[seat] == BOT_VALUE:
        return value_takes_win(capped_fan, self_draw, left, bpar[BP_DECLINE_BELOW], bpar[BP_DECLINE_WALL])
    ps, mk, mt, nm = st.ps, st.mk, st.mt, st.nm
    hand = hand_tiles(st.conc[seat], mk[seat], mt[seat], nm[seat], ps[seat, PS_EVOID])
    return expert_takes_win(view_of(game, st, seat), st.conc, hand, tile, capped_fan, self_draw, bpar)


@njit(cache=True, _nrt=False)  # at most once per discard of a ready seat, only under declare_ready: an ordinary call
def bot_declares(game, st, bpar, seat, void, waits) -> int:
    """唱歌/跳舞 after the seat's discard (it is ready, ``waits`` its winning kinds as a bit mask): 0 = no, else what
    it declares (1 唱歌, 2 跳舞). ``random`` and ``greedy`` never declare (the baselines); ``value``, ``defensive``
    and ``expert`` declare by :func:`simulator.bots.declare.declare_by_value`."""
    if bpar is None:  # a simple line-up: the rest is pruned (see the module docstring)
        return 0
    if game.bots[seat] in (BOT_RANDOM, BOT_GREEDY):
        return 0
    visible, conc, mk, mt, nm = st.visible, st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat]
    own_ckongs(visible, mk, mt, nm, 1)
    kind = declare_by_value(view_of(game, st, seat), hand_tiles(conc, mk, mt, nm, void), waits)
    own_ckongs(visible, mk, mt, nm, -1)
    return kind
