"""Bots: compiled policies chosen per seat by integer id (``bot_table.BOT_INDEX``) inside the engine's loop, each
declared by one row of :mod:`simulator.rules.bot_table` and one module of its decisions; the dispatchers are built here
from the table.

The engine owns legality (it passes the mask of legal discards and which claims are allowed); a bot only
chooses. Each decision has one dispatcher here, called as ``(game, st, bpar, seat, …the decision's scalars)``: the
engine's records (:class:`~simulator.kernel.state.Game`, :class:`~simulator.kernel.state.HandState`), the seat's
parameter row and the seat. The dispatcher hands the bots the public part of it as two records, built once per decision:
the seat's own hand (:class:`~simulator.kernel.shape.HandTiles`: its tiles, melds and the suit it plans to drop) and
what it sees of the table (:class:`~simulator.bots.view.SeatView`, :func:`view_of`: every seat's melds, ``visible``, the
rules, the public per-seat scalars, the seat, tiles left), with ``bpar`` beside them; no bot reads the wall or another
seat's concealed tiles (the expert's win decision also reads the hands winners laid down, public under 血战). Each
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

**Dispatch from the table.** A bot's module defines ``seat_<decision>(game, st, bpar, seat, …)`` for the decisions
it makes its own way (inlined, ``inline="always"``); the others are its ``base`` bot's. A bot with parameters
takes its discard, claim, kong and win decisions as ``seat_<decision>(view, hand, st, bpar, void, …)``
(:data:`PREPARED_ARGS`): ``param_<decision>`` builds the seat's view and hand once before it branches (the planned
hand; for the discard with the seat's own concealed kongs counted in ``visible`` around it; for the win the hand
under the declared void), where each bot building its own inlined and optimised that code once per bot (+6% cold
compile). What a bot counts as seen beyond that around its discard, claim and kong (its row's ``sees``: the
expert's own concealed kongs and the hands 血战 winners laid down) the dispatcher adds to ``visible`` around that
bot's call and takes out after, so the bot's decision is inlined one level deep (a ``seat_*`` wrapper of its own,
inlined around its inlined decision, cost ~0.3–0.5 s of cold compile per dispatcher). :func:`dispatch_source`
writes each dispatcher as a chain of ``if bot == id`` over the table's rows (the bots sharing one function in one
branch), and the module compiles that text at import (numba caches it like the code of this file, whose name it
carries; ``python -m simulator.bots`` prints it). So adding a bot is a row in the table and its module: no
dispatcher is edited.

The per-turn dispatchers are inlined into the engine's loop (``inline="always"``), like the loop's own per-turn
steps: a call passing a dozen arrays costs a measurable share of a turn (making all of them calls cost about 10%
of the engine's speed). They stay thin, so inlining copies little; the bots' own functions are ordinary calls,
compiled and cached once (a cold warm-up compiles them in a second process, see simulator.hands.warmup). The expert's
decisions are inlined into their ``param_*`` dispatcher (its ``seat_*`` are :mod:`simulator.bots.expert`'s functions
themselves; its 定缺 into ``bot_void``), which is the ordinary call: each library links and re-optimises the
expert's hand values, so one fewer per decision saves compile time.

Bot parameters come from ``RuleSet.bot_arrays()``: one ``int64[N_BOT_PARAMS]`` row per seat, its own bot's
parameters in the table's order (``bot_table.slot``).
Randomness only through the seat's own stream (``rng``: ``uint64[1]``).

A line-up of bots without parameters only (``random``, ``greedy``: :func:`simple_lineup`) passes ``None`` as
every seat's parameter row. The decisions of the parameterised bots (``value``, ``defensive``, ``expert``),
where they are not those of a bot without parameters, are reached through the ``param_*`` functions,
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

import importlib
from typing import NamedTuple

from numba import njit  # noqa: F401  (the decorator of the generated dispatchers)

from simulator.bots.expert import REASON_SHIFT as REASON_SHIFT
from simulator.bots.seat import laid_down as laid_down
from simulator.bots.seat import own_ckongs as own_ckongs
from simulator.bots.seat import planned_hand as planned_hand
from simulator.bots.seat import planning_void as planning_void
from simulator.bots.seat import view_of as view_of
from simulator.kernel.shape import hand_tiles as hand_tiles
from simulator.kernel.state import PS_EVOID as PS_EVOID
from simulator.rules import bot_table
from simulator.rules.bot_table import BOT_INDEX, BOT_TABLE, BY_NAME, SIMPLE_BOTS

BOT_RANDOM, BOT_GREEDY, BOT_VALUE, BOT_DEFENSIVE, BOT_EXPERT = (
    BOT_INDEX[b] for b in ("random", "greedy", "value", "defensive", "expert"))


class Decision(NamedTuple):
    """One decision's dispatcher: its arguments (a scalar's type annotated: ``simulator.hands.precompile`` reads them),
    whether it is inlined into the loop (then the parameterised bots' branches are the ordinary call
    ``param_<name>``), numba's ``_nrt`` switch of its ordinary call, what it returns for a simple line-up's
    ``None`` parameter row (never reached: such a line-up seats no parameterised bot), a first line, and whether
    ``param_<name>`` builds the seat's view and planned hand once for the parameterised bots (``prepared``:
    ``"hand"``; ``"ckongs"``: with the seat's own concealed kongs counted in ``visible`` around the decision;
    ``"win"``: the hand under the seat's declared void, the ``void`` passed), who
    then take ``(view, hand, st, bpar, void, …the decision's other scalars)`` (:data:`PREPARED_ARGS`)."""

    name: str
    args: str
    inline: bool
    nrt: bool = False
    none: str = ""
    first: str = ""
    prepared: str = ""


DISPATCH = (
    Decision("exchange", "game, st, seat, out", False),  # reads no parameter row
    Decision("void", "game, st, bpar, seat: int", False, nrt=True, none="-1"),  # the expert's 定缺 allocates
    Decision("discard", "game, st, bpar, seat: int, void: int, legal: int", True, none="-1", prepared="ckongs"),
    Decision("claim", "game, st, bpar, seat: int, void: int, tile: int, can_pung: bool, can_kong: bool", True,
             none="0", prepared="hand"),
    Decision("self_kong", "game, st, bpar, seat: int, void: int, opts: int", True, none="-1",
             first="if opts == 0:\n        return -1", prepared="hand"),
    Decision("takes_win", "game, st, bpar, seat, tile, capped_fan, self_draw", True, none="True", prepared="win"),
    Decision("declares", "game, st, bpar, seat, void, waits", False, none="0"),
)
assert tuple(d.name for d in DISPATCH) == bot_table.DECISIONS
PREPARED_ARGS = "view, hand, st, bpar, void"  # a parameterised bot's prepared decision: these, then the scalars
# built once in param_<decision> before it branches (each bot building them inlined and optimised that code once
# per bot: +6% cold compile); "ckongs" adds the seat's own concealed kongs to ``visible`` first, removes them after
_PREPARE = {
    "hand": ["    view = view_of(game, st, seat)", "    hand = planned_hand(view, st, seat, void)"],
    "ckongs": ["    mk, mt, nm, visible = st.mk[seat], st.mt[seat], st.nm[seat], st.visible",
               "    own_ckongs(visible, mk, mt, nm, 1)",
               "    view = view_of(game, st, seat)", "    hand = planned_hand(view, st, seat, void)"],
    # the win: the hand under the seat's declared void, its tiles without the winning one
    "win": ["    void = st.ps[seat, PS_EVOID]", "    view = view_of(game, st, seat)",
            "    hand = hand_tiles(st.conc[seat], st.mk[seat], st.mt[seat], st.nm[seat], void)"],
}
_PREPARED_SEES = {"ckongs": ("own_ckongs",)}  # what a prepared decision already counts as seen, for every bot
# what a bot's ``sees`` (bot_table.SEES) adds to ``visible`` around its discard, claim and kong (sign 1, then -1)
_SEES = {
    "own_ckongs": "own_ckongs(st.visible, st.mk[seat], st.mt[seat], st.nm[seat], {})",
    "laid_down": "laid_down(st.visible, st, {})",
}


def _defines(module: str, decision: str) -> bool:
    return hasattr(importlib.import_module(module), f"seat_{decision}")


def groups(decision: str) -> list[tuple[str, tuple[int, ...], bool]]:
    """The branches of a dispatcher: ``(function name, bot ids, parameterised)``, in the order of their first id;
    ids whose decision is the same function share a branch; a branch is parameterised unless its function is a
    bot's without parameters."""
    out: dict[str, list[int]] = {}
    param: dict[str, bool] = {}
    for bot in sorted(BOT_TABLE, key=lambda b: b.id):
        owner = BY_NAME[bot_table.decision_bot(bot.name, decision, _defines)]
        fn = getattr(importlib.import_module(owner.module), f"seat_{decision}")
        name = f"{fn.__module__.rpartition('.')[2]}__seat_{decision}"
        out.setdefault(name, []).append(bot.id)
        param[name] = param.get(name, False) or bool(owner.params)
        _FUNCTIONS[name] = fn
        _OWNER_SEES[name] = tuple(s for s in bot_table.SEES if s in owner.sees)
    return [(name, tuple(ids), param[name]) for name, ids in out.items()]


_FUNCTIONS: dict = {}  # the bots' seat_* functions the dispatchers call, by the name the generated text uses
_OWNER_SEES: dict[str, tuple[str, ...]] = {}  # and what their bot counts as seen (bot_table.Bot.sees)


def _chain(branches, call: str, last_unconditional: bool) -> list[str]:
    lines = []
    for i, (name, ids, _) in enumerate(branches):
        if last_unconditional and i == len(branches) - 1:
            lines.append(f"    return {name}({call})")
        else:
            cond = " or ".join(f"bot == {b}" for b in ids)
            lines += [f"    if {cond}:", f"        return {name}({call})"]
    return lines


def _prepared_chain(d: Decision, branches, call: str) -> list[str]:
    """The parameterised branches of a prepared decision: the view and hand built once, then one call per branch
    (with ``ckongs``, its result kept until the seat's own concealed kongs are taken out of ``visible`` again); a
    bot that ``sees`` more (its discard, claim and kong) has it added to ``visible`` around its call."""
    rest = [a for a in call.split(", ")[4:] if a != "void"]
    args = ", ".join([PREPARED_ARGS, *rest])
    held = d.prepared == "ckongs"  # the result waits for the common tail
    lines = list(_PREPARE[d.prepared])
    done = _PREPARED_SEES.get(d.prepared, ())
    for i, (name, ids, _) in enumerate(branches):
        last = i == len(branches) - 1
        extra = [s for s in _OWNER_SEES[name] if s not in done] if d.prepared != "win" else []
        call_ = [*(_SEES[s].format(1) for s in extra), f"r = {name}({args})",
                 *(_SEES[s].format(-1) for s in reversed(extra))]
        call_ += [] if held else ["return r"]
        if not extra and not held:
            call_ = [f"return {name}({args})"]
        if last and not held:
            lines += [f"    {c}" for c in call_]
            continue
        cond = " or ".join(f"bot == {b}" for b in ids)
        head = (["    else:"] if i else []) if last else [f"    {'el' if i and held else ''}if {cond}:"]
        lines += head + [f"    {'    ' if head else ''}{c}" for c in call_]
    return lines + (["    own_ckongs(visible, mk, mt, nm, -1)", "    return r"] if held else [])


def _function(d: Decision, name: str, decorator: str, body: list[str]) -> str:
    first = [f"    {d.first}"] if d.first and name.startswith("bot_") else []
    return "\n".join([decorator, f"def {name}({d.args}):", *first, *body]) + "\n"


def dispatch_source() -> str:
    """The dispatchers' source, generated from the bot table (what this module compiles)."""
    out = []
    for d in DISPATCH:
        call = ", ".join(a.partition(":")[0].strip() for a in d.args.split(","))
        branches = groups(d.name)
        simple = [b for b in branches if not b[2]]
        param = [b for b in branches if b[2]]
        pick = ["    bot = game.bots[seat]"]
        if d.inline:
            body = pick + _chain(simple, call, False) + [f"    return param_{d.name}({call})"]
            out.append(_function(d, f"bot_{d.name}", '@njit(cache=True, inline="always")', body))
            chain = _prepared_chain(d, param, call) if d.prepared and param else _chain(param, call, True)
            body = ["    if bpar is None:", f"        return {d.none}", *pick, *chain]
            out.append(_function(d, f"param_{d.name}", "@njit(cache=True, _nrt=False)", body))
        else:
            if param and "bpar" not in call:
                raise ValueError(f"decision {d.name!r} reads no parameter row: no bot with parameters may define it")
            body = pick + _chain(simple, call, not param)
            if param:
                body += ["    if bpar is None:", f"        return {d.none}", *_chain(param, call, True)]
            out.append(_function(d, f"bot_{d.name}", f"@njit(cache=True, _nrt={d.nrt})", body))
    return "\n\n".join(out)


def simple_lineup(bot_ids) -> bool:
    """Whether every seat is played by a bot without parameters (then the engine gets ``None`` parameter rows)."""
    return all(int(b) in SIMPLE_BOTS for b in bot_ids)


_SOURCE = dispatch_source()
globals().update(_FUNCTIONS)
exec(compile(_SOURCE, __file__, "exec"), globals())  # noqa: S102  (the dispatchers: bot_*, param_*)

if __name__ == "__main__":
    print(_SOURCE)
