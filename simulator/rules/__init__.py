"""Rule sets: the YAML schema of docs/spec.md §2–§6 as one frozen, validated :class:`RuleSet`, its array form, and
loading one (:func:`load_rules`).

A rule set is read from YAML (``configs/<name>.yaml`` or a path), may ``extends:`` another (deep merge: mappings
merge key by key, everything else is replaced), and may be adjusted by ``--set key.path=value`` overrides
(:mod:`simulator.rules.load`). Validation is strict: unknown keys, wrong types and out-of-range values are errors
that name the file and the key. :meth:`RuleSet.to_arrays` turns a validated set into the flat ``int64`` vector the
compiled engine reads; the slot of each key is the constant ``P_<KEY>`` (:mod:`simulator.rules.vocab`), so a rule
key has exactly one home in code.

The parts live in their own modules and are re-exported here, where callers import them: the vocabulary and
slots (:mod:`simulator.rules.vocab`), the blocks ``scoring``/``kongs``/``settlement``/``economy``/``session``
(:mod:`simulator.rules.blocks`), the seats (:mod:`simulator.rules.seats`) and the file reading
(:mod:`simulator.rules.load`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import numpy as np
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from simulator.errors import did_you_mean
from simulator.rules.blocks import DEALER_RULES as DEALER_RULES
from simulator.rules.blocks import MAX_RAKE as MAX_RAKE
from simulator.rules.blocks import MAX_ROOM_FACTOR as MAX_ROOM_FACTOR
from simulator.rules.blocks import MAX_SESSION_HANDS as MAX_SESSION_HANDS
from simulator.rules.blocks import EachPayment as EachPayment
from simulator.rules.blocks import EconomyRules as EconomyRules
from simulator.rules.blocks import Fan as Fan
from simulator.rules.blocks import FrozenModel, yaml_off
from simulator.rules.blocks import KongPayment as KongPayment
from simulator.rules.blocks import KongRules as KongRules
from simulator.rules.blocks import NonNeg as NonNeg
from simulator.rules.blocks import Payment as Payment
from simulator.rules.blocks import ScoringRules as ScoringRules
from simulator.rules.blocks import SessionRules as SessionRules
from simulator.rules.blocks import SettlementRules as SettlementRules
from simulator.rules.keys import KEYS as KEYS
from simulator.rules.keys import N_PARAMS as N_PARAMS
from simulator.rules.keys import SLOT as SLOT
from simulator.rules.keys import value_of
from simulator.rules.load import CONFIG_DIR as CONFIG_DIR
from simulator.rules.load import RulesError as RulesError
from simulator.rules.load import apply_overrides, load_raw, resolve_config_path, shorten
from simulator.rules.load import deep_merge as deep_merge
from simulator.rules.load import flat_keys as flat_keys
from simulator.rules.load import parse_override as parse_override
from simulator.rules.load import read_yaml_mapping as read_yaml_mapping
from simulator.rules.seats import TUNABLE as TUNABLE
from simulator.rules.seats import TUNED_KEY as TUNED_KEY
from simulator.rules.seats import BotSpec as BotSpec
from simulator.rules.seats import bot_class as bot_class
from simulator.rules.seats import read_tuned as read_tuned
from simulator.rules.seats import resolve_tuned_path as resolve_tuned_path
from simulator.rules.vocab import *  # noqa: F403 - every name of the vocabulary and every P_* slot is this module's API
from simulator.rules.vocab import (
    BLOOM_PAYERS,
    BOT_INDEX,
    DEAL_INS,
    DECLARE_FAN,
    DECLARES,
    EXCHANGES,
    FLAG_BIT,
    HAND_TYPE_INDEX,
    HAND_TYPES,
    HUAZHU_CAP,
    HUAZHU_PAYERS,
    LAST_DISCARD_CLAIMS,
    MODES,
    NO_CAP,
    P_ADDED_KONG_EACH,
    P_ADDED_KONG_FRESH_ONLY,
    P_AFTER_KONG_DEAL_IN,
    P_BASE,
    P_CAP,
    P_CHADAJIAO,
    P_CONCEALED_KONG_EACH,
    P_DECLARE_READY,
    P_DISCARD_KONG_DISCARDER,
    P_DISCARD_KONG_OTHERS,
    P_EXCHANGE_THREE,
    P_FAN_OFFSET,
    P_FLAG_FAN,
    P_FORCED_WIN_LAST_TILES,
    P_GEN_FAN,
    P_HUAZHU_PAYS,
    P_HUAZHU_PENALTY,
    P_KONG_BLOOM_PAYER,
    P_LAST_DISCARD_CLAIMS,
    P_LONG_USES_GEN,
    P_MODE,
    P_MULTIPLE_RON,
    P_PASS_RON_LOCK,
    P_POINTS,
    P_REFUND_KONGS_IF_NOT_READY,
    P_ROB_KONG,
    P_SCORING_MODE,
    P_SELF_DRAW_BONUS,
    P_TABLE_FAN,
    P_VOID_SUIT,
    PASS_LOCKS,
    POINTS,
    PYTHON_BOT,
    SCORING_MODES,
    SELF_DRAW_BONUSES,
    UNCAPPED_HUAZHU_FAN,
    VOID_SUITS,
    XUELIU_MAX_WIN_EVENTS,
)


def _seat(v: Any) -> Any:
    return {"bot": v} if isinstance(v, str) else v


class RuleSet(FrozenModel):
    """A complete, validated rule set (docs/spec.md §2–§6) plus the bots seated at the table."""

    name: str = "chengdu"
    description: str = ""
    mode: Literal["xuezhan", "single", "xueliu"] = "xuezhan"
    exchange_three: Literal["none", "clockwise", "counterclockwise", "opposite", "random"] = "none"
    void_suit: Literal["declared", "declared_lenient", "none"] = "declared"
    multiple_ron: bool = True
    last_discard_claims: Literal["win_only", "any"] = "win_only"
    rob_kong: bool = True
    pass_ron_lock: Literal["off", "same_tile", "all_tiles", "higher_fan"] = "higher_fan"
    forced_win_last_tiles: Annotated[int, Field(ge=0, le=55)] = 0
    declare_ready: Literal["none", "sing", "dance", "both"] = "none"
    kong_bloom_payer: Literal["self_draw", "feeder"] = "self_draw"
    scoring: ScoringRules = ScoringRules()
    kongs: KongRules = KongRules()
    settlement: SettlementRules = SettlementRules()
    economy: EconomyRules = EconomyRules()
    session: SessionRules | None = None  # None: independent hands (no sessions), the logs as before sessions
    seats: tuple[BotSpec, BotSpec, BotSpec, BotSpec] = (BotSpec(),) * 4

    _off = field_validator("pass_ron_lock", mode="before")(yaml_off)

    @field_validator("seats", mode="before")
    @classmethod
    def _seats(cls, v: Any) -> Any:
        if isinstance(v, list | tuple):
            if len(v) != 4:
                raise ValueError(f"needs exactly 4 seats, got {len(v)}")
            return tuple(_seat(x) for x in v)
        return v

    @model_validator(mode="before")
    @classmethod
    def _declare_fans(cls, data: Any) -> Any:
        """Under declare_ready sing/dance/both, scoring.extras gets the default 唱歌/跳舞 fans it does not set (so the
        manifest records the fan in force); otherwise nothing is added (existing digests stay the same)."""
        if not isinstance(data, dict) or data.get("declare_ready", "none") == "none":
            return data
        scoring = data.get("scoring", {})
        if isinstance(scoring, ScoringRules):
            scoring = scoring.model_dump()
        if not isinstance(scoring, dict):
            return data
        extras = scoring.get("extras", ScoringRules().extras)
        if not isinstance(extras, dict):
            return data
        filled = {**extras, **{k: v for k, v in DECLARE_FAN.items() if k not in extras}}
        return {**data, "scoring": {**scoring, "extras": filled}}

    @model_validator(mode="after")
    def _fits_logs(self) -> RuleSet:
        fan, money = log_bounds(self)
        if fan > FAN_LOG_MAX:
            raise ValueError(f"scoring: a hand could score {fan} fan (every pattern and extra together, 根 ×"
                             f" {MAX_GEN}), more than the logs hold ({FAN_LOG_MAX}); lower the pattern fans")
        if money > MONEY_LOG_MAX:
            raise ValueError(f"scoring: one hand could move up to {money:,} money units (base units × "
                             f"settlement.money_scale) for a seat, more than the logs hold ({MONEY_LOG_MAX:,}); set "
                             "a lower scoring.cap, lower fans/payments or a lower settlement.money_scale")
        return self

    # -- derived forms ------------------------------------------------------------------------------------
    def resolved(self) -> dict[str, Any]:
        """Plain-data form (what manifests record). Without sessions there is no ``session`` key at all, so the
        manifests and digests of rule sets written before sessions existed are unchanged."""
        data = self.model_dump(mode="json")
        if data["session"] is None:
            del data["session"]
        for key in KEYS:  # the key table's keys at their default are left out: existing digests stay the same
            block = data[key.block] if key.block else data
            if block.get(key.name) == key.default:
                del block[key.name]
        return data

    def digest(self) -> str:
        """SHA-256 of the game rules and seats (name and description excluded), stable across runs."""
        data = self.resolved()
        data.pop("name")
        data.pop("description")
        blob = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    def to_arrays(self) -> np.ndarray:
        """Flat ``int64[N_PARAMS]`` vector read by compiled code; slots are the ``P_*`` constants."""
        s, k, st = self.scoring, self.kongs, self.settlement
        p = np.zeros(N_PARAMS, dtype=np.int64)
        p[P_MODE] = MODES.index(self.mode)
        p[P_EXCHANGE_THREE] = EXCHANGES.index(self.exchange_three)
        p[P_VOID_SUIT] = VOID_SUITS.index(self.void_suit)
        p[P_MULTIPLE_RON] = self.multiple_ron
        p[P_ROB_KONG] = self.rob_kong
        p[P_PASS_RON_LOCK] = PASS_LOCKS.index(self.pass_ron_lock)
        p[P_FORCED_WIN_LAST_TILES] = self.forced_win_last_tiles
        p[P_KONG_BLOOM_PAYER] = BLOOM_PAYERS.index(self.kong_bloom_payer)
        p[P_SCORING_MODE] = SCORING_MODES.index(s.mode)
        p[P_LONG_USES_GEN] = s.long_uses_gen
        p[P_POINTS] = POINTS.index(s.points)
        p[P_FAN_OFFSET] = s.fan_offset
        p[P_CAP] = NO_CAP if s.cap is None else s.cap
        p[P_BASE] = s.base
        p[P_SELF_DRAW_BONUS] = SELF_DRAW_BONUSES.index(s.self_draw_bonus)
        p[P_GEN_FAN] = s.extras.get("gen", 0)
        p[P_DISCARD_KONG_DISCARDER] = k.discard_kong.discarder
        p[P_DISCARD_KONG_OTHERS] = k.discard_kong.others
        p[P_ADDED_KONG_EACH] = k.added_kong.each
        p[P_CONCEALED_KONG_EACH] = k.concealed_kong.each
        p[P_ADDED_KONG_FRESH_ONLY] = k.added_kong_fresh_only
        p[P_AFTER_KONG_DEAL_IN] = DEAL_INS.index(k.after_kong_deal_in)
        p[P_REFUND_KONGS_IF_NOT_READY] = st.refund_kongs_if_not_ready
        p[P_HUAZHU_PENALTY] = HUAZHU_CAP if st.huazhu_penalty == "cap" else st.huazhu_penalty
        p[P_HUAZHU_PAYS] = HUAZHU_PAYERS.index(st.huazhu_pays)
        p[P_CHADAJIAO] = st.chadajiao
        p[P_LAST_DISCARD_CLAIMS] = LAST_DISCARD_CLAIMS.index(self.last_discard_claims)
        p[P_DECLARE_READY] = DECLARES.index(self.declare_ready)
        if s.mode == "additive":
            for name, fan in s.patterns.items():
                p[P_FLAG_FAN + FLAG_BIT[name]] = fan
        for name, fan in s.extras.items():
            if name != "gen":
                p[P_FLAG_FAN + FLAG_BIT[name]] = fan
        p[P_TABLE_FAN:P_TABLE_FAN + len(HAND_TYPES)] = -1
        if s.mode == "table":
            for name, fan in s.hand_types.items():
                p[P_TABLE_FAN + HAND_TYPE_INDEX[name]] = fan
        for key in KEYS:  # the key table's keys: each in its slot, as its integer
            p[SLOT[key.path]] = key.encode(value_of(self, key))
        return p

    def python_seats(self) -> tuple[int, ...]:
        """Indices of the seat specs played by Python bots (the step path instead of the compiled batch)."""
        return tuple(i for i, b in enumerate(self.seats) if b.is_python)

    def bot_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(int64[4] bot ids, int64[4, N_BOT_PARAMS] bot parameters)`` for the compiled engine."""
        ids = np.array([BOT_INDEX.get(b.bot, PYTHON_BOT) for b in self.seats], dtype=np.int64)
        return ids, np.stack([b.to_row() for b in self.seats])


# Log dtypes (simulator/logs/schema.py) that every reachable value must fit: fan columns are int8, money int32.
FAN_LOG_MAX = 127
MONEY_LOG_MAX = 2**31 - 1
MAX_GEN = 4            # 根 of one hand: four kongs plus a pair is the most (seven pairs: three)
MAX_KONGS = 16         # four seats × four melds


def log_bounds(rules: RuleSet) -> tuple[int, int]:
    """``(max fan, max money)``: upper bounds of a hand's uncapped fan and of one seat's score in one hand (money
    units: base units × ``settlement.money_scale``), which validation keeps within the int8 fan and int32 money
    columns of the logs.

    Conservative: the fan bound adds every pattern and extra as if all could hold at once (with 根 × MAX_GEN and
    the add_fan bonus); the money bound adds 3 wins paid by one seat for three payers each (P + 1, the
    self-draw base bonus included; a 杠上花 feeder pays for everyone), 查大叫 to 3 seats, the 花猪 penalty to 3
    seats, every kong's payment from 3 seats collected and then moved again (transfer/refund), and what the key
    table's money keys move (``rule_keys.Key.money`` per unit of their value). Under
    ``mode: xueliu`` a seat takes part in up to ``XUELIU_MAX_WIN_EVENTS`` win events instead of 3."""
    s, k, st = rules.scoring, rules.kongs, rules.settlement
    extras = sum(f for name, f in s.extras.items() if name != "gen") + MAX_GEN * s.extras.get("gen", 0)
    shape = sum(s.patterns.values()) if s.mode == "additive" else max(s.hand_types.values(), default=0)
    fan = shape + extras + (1 if s.self_draw_bonus == "add_fan" else 0)
    paid = fan if s.cap is None else min(fan, s.cap)
    points = paid if s.points == "linear" else 2 ** max(0, paid - s.fan_offset)
    if st.huazhu_penalty != "cap":
        penalty = st.huazhu_penalty
    elif s.cap is None:
        penalty = 2 ** UNCAPPED_HUAZHU_FAN
    else:
        penalty = s.cap if s.points == "linear" else 2 ** max(0, s.cap - s.fan_offset)
    kong = max(k.discard_kong.discarder, k.discard_kong.others, k.added_kong.each, k.concealed_kong.each)
    events = XUELIU_MAX_WIN_EVENTS if rules.mode == "xueliu" else 3
    money = 3 * events * (points + 1) + 3 * points + 3 * penalty + 2 * 3 * MAX_KONGS * kong
    money += sum(key.money * int(value_of(rules, key)) for key in KEYS)  # the key table's money keys
    return fan, money * rules.settlement.money_scale  # in money units (conservative for those already in units)


# Segments pydantic adds to an error location for union members and constraints ("constrained-int",
# "literal['cap']", "function-after[...]", "int"): they are not rule keys and mean nothing to a user.
_INTERNAL_LOC = {"int", "str", "float", "bool", "none", "dict", "list", "tuple", "[key]"}


def _is_internal(part: Any) -> bool:
    text = str(part)
    return text in _INTERNAL_LOC or "-" in text or "[" in text


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (``X``, ``X | None``, ``list[X]``, ``Annotated[X, ...]`` ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models(arg)]


def _close_key(model: type[BaseModel] | None, key: tuple) -> str:
    """``" (did you mean 'cap'?)"`` for an unknown key close to a key of the model where it stands."""
    for part in key[:-1]:
        if isinstance(part, int) or model is None:
            continue  # a list's item keeps the list's model
        field = model.model_fields.get(str(part))
        model = next(iter(_models(field.annotation)), None) if field is not None else None
    if model is None or not key:
        return ""
    return did_you_mean(key[-1], [f.alias or name for name, f in model.model_fields.items()])


def explain(exc: ValidationError, source: str | Path, model: type[BaseModel] | None = None) -> str:
    """One line naming the source and the dotted key of the first validation error; an unknown key close to one
    of ``model``'s (the model validated) gets a "did you mean".

    A value that fails every member of a union (``huazhu_penalty: -1``, an integer ≥ 0 or ``cap``) gets one
    message listing what is accepted, not pydantic's per-member reports."""
    errors = exc.errors()
    err = errors[0]
    key = tuple(x for x in err["loc"] if not _is_internal(x))
    loc = ".".join(str(x) for x in key)
    same = [e for e in errors if tuple(x for x in e["loc"] if not _is_internal(x)) == key]
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = f"unknown key{_close_key(model, key)}"
    elif len(same) > 1 and len(same) == len(errors):
        expected = " or ".join(e["msg"].removeprefix("Input should be ") for e in same)
        msg = f"got {shorten(repr(err.get('input')))}; expected a value {expected}"
        errors = same[:1]
    elif err["type"] == "value_error":  # our own validators' messages are complete sentences
        msg = msg.removeprefix("Value error, ")
    elif err["type"] == "literal_error":
        msg = f"got {shorten(repr(err['input']))}; {msg.lower()}"
    elif "input" in err and not isinstance(err["input"], dict | list):
        msg = f"{msg} (got {shorten(repr(err['input']))})"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: {loc or '<top>'}: {msg}{more}"


def validate(data: dict, source: str = "<rules>", recorded: bool = False) -> RuleSet:
    """Validate a raw mapping into a frozen :class:`RuleSet`; errors become one-line :class:`RulesError`.

    ``recorded``: the rule set of a manifest (logs being read or verified): a Python bot's module is not imported
    (reading logs never executes code named in them, and works where the bot is not installed); such a rule set
    is for reading, not for playing."""
    from simulator.rules.seats import RECORDED

    try:
        return RuleSet.model_validate(data, context={RECORDED: True} if recorded else None)
    except ValidationError as exc:
        raise RulesError(explain(exc, source, RuleSet)) from None


def load_rules(ref: str | Path = "chengdu", overrides: list[str] | dict | None = None) -> RuleSet:
    """Load a rule set by name or path, resolve ``extends``, apply overrides and validate."""
    path = resolve_config_path(ref)
    data = apply_overrides(load_raw(ref), overrides)
    # Name the overrides too: an unknown key may come from --set rather than from the file.
    return validate(data, f"{path} (with overrides)" if overrides else str(path))
