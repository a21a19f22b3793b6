"""The blocks of a rule set (docs/spec.md §3–§6) as frozen, strictly validated pydantic models: ``scoring``,
``kongs``, ``settlement``, ``economy`` and ``session``; :class:`simulator.rules.RuleSet` holds one of each. The
rule keys' fields are built from the key table (:mod:`simulator.rules.keys`): :func:`table_block` turns a block's
rows into a model, nested blocks (``kongs.discard_kong``) into models of their own, in table order.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from simulator.rules import keys as rule_keys
from simulator.rules.keys import Key

NonNeg = Annotated[int, Field(ge=0)]


class FrozenModel(BaseModel):
    # strict: YAML's true is not the integer 1 and 1 is not true; a float field still accepts an integer.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def yaml_off(v: Any) -> Any:
    # YAML 1.1 reads a bare `off` as False; a choice key whose first value is literally called "off" means that.
    return "off" if v is False else v


def _field(key: Key) -> tuple[Any, Any]:
    """A row of the key table as a pydantic field: type, bounds, default, description."""
    number = Annotated[int, Field(ge=key.low, le=key.high)]
    if key.kind == "fans":
        # a dict default is copied for each instance (pydantic), and shows in the JSON Schema
        return dict[Literal[key.choices], number], Field(key.field_default, description=key.doc)  # type: ignore[valid-type]
    if key.kind == "choice":
        kind: Any = Literal[key.choices]  # type: ignore[valid-type]
    elif key.kind == "bool":
        kind = bool
    else:
        kind = Union[(number, *(None if s is None else Literal[s] for s in key.special))]  # noqa: UP007
    return kind, Field(key.default, description=key.doc)


def _class_name(block: str) -> str:
    return block.rpartition(".")[2].title().replace("_", "")  # kongs.discard_kong → DiscardKong


def table_block(block: str, base: type[FrozenModel] = FrozenModel, nested: bool = True) -> type[FrozenModel]:
    """A model holding the key table's keys of ``block`` as fields, in table order, after ``base``'s fields (the
    block's class adds its own); ``nested``: a block inside it (``kongs.discard_kong``) becomes a field holding a
    model of its own, at its first key's place. The models are this module's attributes (so they pickle)."""
    fields: dict[str, Any] = {}
    validators: dict[str, Any] = {}
    prefix = f"{block}." if block else ""
    for key in rule_keys.KEYS:
        if key.block == block:
            fields[key.name] = _field(key)
            if "off" in key.choices:
                validators[f"_off_{key.name}"] = field_validator(key.name, mode="before")(yaml_off)
        elif nested and key.path.startswith(prefix):
            name = key.path[len(prefix):].split(".")[0]
            if name not in fields:
                model = table_block(prefix + name)
                fields[name] = (model, model())
    model = create_model(_class_name(block or "rules"), __base__=base, __module__=__name__,
                         __validators__=validators, **fields)
    globals()[model.__name__] = model
    return model


class ScoringRules(table_block("scoring")):  # type: ignore[misc]
    @model_validator(mode="after")
    def _table_has_pinghu(self) -> ScoringRules:
        if self.mode == "table" and "pinghu" not in self.hand_types:
            raise ValueError("table mode needs a 'pinghu' entry in hand_types (every complete hand matches it)")
        return self


class KongRules(table_block("kongs")):  # type: ignore[misc]
    """Kong payments (docs/spec.md §4), paid at once by the players who have not won."""


class SettlementRules(table_block("settlement")):  # type: ignore[misc]
    """Money at the start of a hand and at an exhaustive draw (docs/spec.md §5)."""


MAX_ROOM_FACTOR = 1e6  # finite bounds: coins = room_factor · base · score − rake must stay far inside a float's
MAX_RAKE = 1e9         # exact integers (2^53), and .inf / 1e308 are typos, not rooms


class EconomyRules(FrozenModel):
    room_factor: Annotated[float, Field(gt=0, le=MAX_ROOM_FACTOR, allow_inf_nan=False)] = 1.0
    rake: Annotated[float, Field(ge=0, le=MAX_RAKE, allow_inf_nan=False)] = 0.0


DEALER_RULES = ("rotate", "first_winner", "feeder_on_multi_ron", "feeder_keeps_on_draw", "dice")
MAX_SESSION_HANDS = 1000


class SessionRules(FrozenModel):
    """An evening of ``hands`` chained hands (docs/rules.md "Sessions"): who deals each hand after the first,
    each player's running bankroll, and whether the session ends when someone is broke.

    - ``dealer``: ``rotate`` (the next seat), ``first_winner`` (the first winner of the previous hand; of several
      on one discard, the first after the discarder in turn order), ``feeder_on_multi_ron`` (seed 000: the first
      winner, or the discarder after 一炮多响), ``feeder_keeps_on_draw`` (seed 001, non-血战: the player who fed
      the first win; a self-draw's winner; nobody won = the dealer stays), ``dice`` (seed 001 血战: a die every
      hand). The first hand's dealer is always thrown by a die.
    - ``money``: ``points`` (balances in base units) or ``coins`` (the ``economy`` block: a hand changes a
      balance by ``room_factor · scoring.base · score − rake``, so the house takes ``4·rake`` per hand).
    - ``bankroll``: each player's starting balance in that money (none = balances start at 0).
    - ``stop_when_broke``: end the session after a hand that leaves a balance at or below 0 (needs ``bankroll``).
    """

    hands: Annotated[int, Field(ge=1, le=MAX_SESSION_HANDS)]
    dealer: Literal["rotate", "first_winner", "feeder_on_multi_ron", "feeder_keeps_on_draw", "dice"] = "rotate"
    money: Literal["points", "coins"] = "points"
    bankroll: Annotated[float, Field(gt=0, le=1e15)] | None = None
    stop_when_broke: bool = False

    @model_validator(mode="after")
    def _broke_needs_bankroll(self) -> SessionRules:
        if self.stop_when_broke and self.bankroll is None:
            raise ValueError("stop_when_broke needs a bankroll (the balance a player starts the session with)")
        return self
