"""The blocks of a rule set (docs/spec.md §3–§6) as frozen, strictly validated pydantic models: ``scoring``,
``kongs``, ``settlement``, ``economy`` and ``session``; :class:`simulator.rules.RuleSet` holds one of each.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from simulator.rules.keys import Key, in_block
from simulator.rules.vocab import EXTRAS, HAND_TYPES, SHAPE_PATTERNS

NonNeg = Annotated[int, Field(ge=0)]
Fan = Annotated[int, Field(ge=0, le=64)]
Payment = Annotated[int, Field(ge=0, le=10_000)]  # a kong payment, base units


class FrozenModel(BaseModel):
    # strict: YAML's true is not the integer 1 and 1 is not true; a float field still accepts an integer.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def yaml_off(v: Any) -> Any:
    # YAML 1.1 reads a bare `off` as False; the key's first value is literally called "off".
    return "off" if v is False else v


class ScoringRules(FrozenModel):
    mode: Literal["additive", "table"] = "additive"
    patterns: dict[Literal[SHAPE_PATTERNS], Fan] = Field(  # type: ignore[valid-type]
        default_factory=lambda: {"duiduihu": 1, "qingyise": 2, "qidui": 2, "daiyaojiu": 2, "jiangdui": 2,
                                 "jingou": 1})
    hand_types: dict[Literal[HAND_TYPES], Fan] = Field(default_factory=dict)  # type: ignore[valid-type]
    long_uses_gen: bool = False
    extras: dict[Literal[EXTRAS], Fan] = Field(  # type: ignore[valid-type]
        default_factory=lambda: {"gen": 1, "gangshanghua": 1, "gangshangpao": 1, "qiangganghu": 1,
                                 "haidilaoyue": 0, "haidipao": 0, "tianhu": 3, "dihu": 2, "menqing": 0,
                                 "zhongzhang": 0, "zimo": 0})
    points: Literal["exponential", "linear"] = "exponential"
    fan_offset: Annotated[int, Field(ge=0, le=8)] = 0
    cap: Annotated[int, Field(ge=1, le=32)] | None = 4
    base: Annotated[int, Field(ge=1, le=10_000)] = 1
    self_draw_bonus: Literal["none", "add_base", "add_fan"] = "add_base"

    @model_validator(mode="after")
    def _table_has_pinghu(self) -> ScoringRules:
        if self.mode == "table" and "pinghu" not in self.hand_types:
            raise ValueError("table mode needs a 'pinghu' entry in hand_types (every complete hand matches it)")
        return self


def _field(key: Key) -> tuple[Any, Any]:
    """A key of the key table (simulator.rules.keys) as a pydantic field: type, bounds, default, description."""
    if key.kind == "choice":
        kind: Any = Literal[key.choices]  # type: ignore[valid-type]
    elif key.kind == "bool":
        kind = bool
    else:
        kind = Annotated[int, Field(ge=key.low, le=key.high)]
    return kind, Field(key.default, description=key.doc)


def table_keys(block: str) -> type[FrozenModel]:
    """A base model holding the key table's keys of ``block`` as fields (the block's class adds its own)."""
    fields: dict[str, Any] = {k.name: _field(k) for k in in_block(block)}
    return create_model(f"_{block.title()}Keys", __base__=FrozenModel, **fields)


class KongPayment(FrozenModel):
    discarder: Payment = 2
    others: Payment = 0


class EachPayment(FrozenModel):
    each: Payment


class KongRules(FrozenModel):
    discard_kong: KongPayment = KongPayment()
    added_kong: EachPayment = EachPayment(each=1)
    concealed_kong: EachPayment = EachPayment(each=2)
    added_kong_fresh_only: bool = False
    after_kong_deal_in: Literal["keep", "refund", "transfer"] = "transfer"


class SettlementRules(table_keys("settlement")):  # type: ignore[misc]
    refund_kongs_if_not_ready: bool = True
    huazhu_penalty: Annotated[int, Field(ge=0, le=10_000)] | Literal["cap"] = 16
    huazhu_pays: Literal["unwon", "all"] = "unwon"
    chadajiao: bool = True


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
