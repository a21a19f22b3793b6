"""The bot table: a compiled bot declared once — its name, log id, module, documentation and parameters (name,
type, range, default, doc, the range ``xuezhan tune`` searches) — from which everything else follows:

- the seat's fields of :class:`simulator.rules.seats.BotSpec` (validation, ``xuezhan rules schema``, ``xuezhan
  list``), ``rules_seats.TUNABLE`` and the seat's parameter row (:func:`row`: its own bot's parameters in table
  order, a real-valued one in thousandths) that the compiled bot reads at :func:`slot`;
- the engine's dispatch: :mod:`simulator.bots` builds each decision's dispatcher from the rows — a bot's module
  defines the decisions it makes its own way (``seat_discard``, … see :data:`DECISIONS`), ``base`` names the bot
  whose decisions it takes for the others;
- the players log's ``bot`` labels (:data:`BOT_LABELS`, by log id): ids are stable and appended, ``python`` (a
  user's Python bot) keeps id 5, and a file's dictionary is the labels up to the last one it uses
  (:func:`file_labels`), so adding a bot changes no existing file's bytes.

Plain tuples and integers (no pydantic, no numpy, no numba): the compiled bots read their slots from here, and
the Python-only rule modules read the rest. Adding a bot: one row here and its module under ``simulator/bots/``
(docs/internals.md, "Files to touch"; ``closed`` was added that way).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

BOT_MILLI = 1000  # a real-valued parameter travels in the int64 row as thousandths


class Param(NamedTuple):
    """One bot parameter: ``kind`` ``int`` or ``float`` (in the row as thousandths), its range and default, and the
    ``(low, high, step)`` ``xuezhan tune`` searches (``None``: not tuned)."""

    name: str
    kind: str
    default: int | float
    low: int | float
    high: int | float
    doc: str
    tune: tuple[float, float, float] | None = None

    def encode(self, value: int | float) -> int:
        """The value in the seat's int64 parameter row."""
        return round(value * BOT_MILLI) if self.kind == "float" else int(value)


class Bot(NamedTuple):
    """One compiled bot: its name (what a seat writes), its log id (``players.bot``; stable, append-only), the
    module holding its ``seat_*`` decisions, a one-line doc, its parameters, the bot whose decisions it takes
    where its module defines none, and what its own discard, claim and kong decisions count as seen beyond what
    every bot sees (``sees``, from :data:`SEES`): the dispatcher adds it to ``visible`` around the call and takes it
    out again, so the decision is called one level deep (no wrapper of the bot's own to inline)."""

    name: str
    id: int
    module: str
    doc: str
    params: tuple[Param, ...] = ()
    base: str = ""
    sees: tuple[str, ...] = ()


BOT_TABLE: tuple[Bot, ...] = (
    Bot("random", 0, "simulator.bots.random_bot",
        "uniform random legal play (exchange, 定缺, discards), never claims or kongs, always wins",
        base="greedy"),
    Bot("greedy", 1, "simulator.bots.greedy",
        "minimises 缺一门 shanten (ties by acceptance), pungs/kongs when that does not worsen it, always wins"),
    Bot("value", 2, "simulator.bots.value",
        "greedy that steers toward 清一色/对对胡/七对 and declines cheap discard wins early", (
            Param("decline_below", "int", 2, 0, 16, "decline a discard win worth fewer fan than this ..."),
            Param("decline_wall", "int", 24, 0, 55, "... while more than this many tiles remain in the wall"),
            Param("steer_shanten", "int", 2, 0, 6,
                  "steer toward 清一色/对对胡/七对 when that shape is within this many shanten"),
        ), base="greedy"),
    Bot("defensive", 3, "simulator.bots.defensive",
        "greedy that stops feeding the others once the wall is short or someone has won", (
            Param("defend_wall", "int", 30, 0, 55,
                  "start defending once the wall is this short, or as soon as anyone has won"),
        ), base="greedy"),
    Bot("expert", 4, "simulator.bots.expert_seat",
        "expected-value play: prices each discard by its hand's chance and value against its deal-in risk", (
            Param("defence", "float", 0.65, 0, 10,
                  "weight of the expected deal-in loss against the hand's expected gain (0 = never folds, 1 = "
                  "risk-neutral, larger = more cautious; default 0.65, where it deals in no more often than greedy "
                  "in the same seats: docs/bots.md, \"The default `defence`\")", tune=(0.0, 1.5, 0.01)),
            Param("ambition", "float", 1.15, 0, 10,
                  "multiplier on the value of the big shapes (清一色, 七对, 对对胡) relative to a plain hand (0 = "
                  "plays for the fastest hand only, 1 = their value under the active scoring rules)",
                  tune=(0.5, 2.0, 0.01)),
            Param("temperature", "float", 0.0, 0, 100,
                  "softmax noise on discards, in base units of expected value (0 = always the best discard; 0.5 "
                  "or more models a noticeably weaker player)"),
            Param("tempo", "float", 0.0, 0, 10,
                  "what winning early is worth beyond the points, in plain-hand points per opponent still in and "
                  "own draw left (0 = ignores it beyond the end rate of the P(win) table; larger = plays faster "
                  "and declines fewer discard wins)", tune=(0.0, 0.3, 0.005)),
        ), base="greedy", sees=("own_ckongs", "laid_down")),
    Bot("closed", 6, "simulator.bots.closed",
        "greedy that keeps its hand concealed (门清): claims no discard until the wall is short", (
            Param("open_wall", "int", 0, 0, 56, "claim no discard while this many tiles or more remain in the wall "
                  "(0 = never claims; 56 = claims as greedy throughout)"),
        ), base="greedy"),
)

PYTHON_LABEL = "python"  # the players log's label of a user's Python bot (named ones follow all labels)
PYTHON_BOT = 5  # its log id, between the bots of log format 1 and those added since
# The seat fields every seat's rule set writes, whatever its bot (the flat fields of rule sets before this table:
# kept so their digests and manifests stay the same); a later bot's parameters are written for its seats only.
FLAT_PARAMS = ("decline_below", "decline_wall", "defend_wall", "steer_shanten", "defence", "ambition",
               "temperature", "tempo")
# The seven decisions a bot module may define (``seat_<name>``), each with the arguments after
# ``(game, st, bpar, seat)`` (a bot with parameters: its discard, claim, kong and win after ``(view, hand, st, bpar,
# void)``, simulator.bots.PREPARED_ARGS): simulator.bots builds the dispatchers from these.
DECISIONS = ("exchange", "void", "discard", "claim", "self_kong", "takes_win", "declares")

# What a bot's discard, claim and kong may count as seen (``Bot.sees``), in the order the dispatcher adds them: the
# seat's own concealed kongs (face down: not in ``visible``; every bot's discard counts them) and the hands 血战
# winners laid down (public; simulator.bots.seat.laid_down).
SEES = ("own_ckongs", "laid_down")

BY_NAME = {b.name: b for b in BOT_TABLE}
assert all(set(b.sees) <= set(SEES) for b in BOT_TABLE)
BOTS = tuple(b.name for b in sorted(BOT_TABLE, key=lambda b: b.id))  # the compiled bots, in log-id order
BOT_INDEX = {b.name: b.id for b in BOT_TABLE}
_BY_ID = {**{b.id: b.name for b in BOT_TABLE}, PYTHON_BOT: PYTHON_LABEL}
BOT_LABELS = tuple(_BY_ID[i] for i in range(len(_BY_ID)))  # the ``bot`` labels by log id
N_BOT_PARAMS = max(1, *(len(b.params) for b in BOT_TABLE))  # width of a seat's parameter row
SIMPLE_BOTS = tuple(b.id for b in BOT_TABLE if not b.params)  # bots that read no parameter row


def all_params() -> dict[str, Param]:
    """Every bot parameter by name (the seat's fields): the flat fields first, then later bots' in table order.
    A name two bots share must be declared the same way."""
    out: dict[str, Param] = {}
    for bot in BOT_TABLE:
        for p in bot.params:
            if out.setdefault(p.name, p) != p:
                raise ValueError(f"bot parameter {p.name!r} is declared twice, differently")
    return {**{n: out[n] for n in FLAT_PARAMS}, **out}


def slot(bot: str, param: str) -> int:
    """Where bot ``bot`` reads parameter ``param`` in its seat's row."""
    return [p.name for p in BY_NAME[bot].params].index(param)


def row(bot: str, values: dict[str, int | float]) -> list[int]:
    """A seat's parameter row (width :data:`N_BOT_PARAMS`): its bot's parameters in table order, encoded; zeros
    for a bot without parameters or a Python bot."""
    params = BY_NAME[bot].params if bot in BY_NAME else ()
    return [p.encode(values[p.name]) for p in params] + [0] * (N_BOT_PARAMS - len(params))


def decision_bot(bot: str, decision: str, defines) -> str:
    """The bot whose module makes ``bot``'s ``decision``: itself if ``defines(module, decision)``, else its
    ``base``'s (recursively)."""
    row_ = BY_NAME[bot]
    if defines(row_.module, decision) or not row_.base:
        return bot
    return decision_bot(row_.base, decision, defines)


def file_labels(codes: Iterable[int], python_names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A players file's ``bot`` dictionary: the labels up to the highest compiled-bot id it holds, at least up to
    ``python`` (the dictionary of log format 1), then the run's Python bots by name (codes from
    ``len(BOT_LABELS)``). A bot appended to the table thus changes no file that does not seat it."""
    top = max((c for c in codes if 0 <= c < len(BOT_LABELS)), default=PYTHON_BOT)
    return (*BOT_LABELS[:max(top, PYTHON_BOT) + 1], *python_names)
