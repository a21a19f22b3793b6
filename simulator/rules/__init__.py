"""Rule sets: the YAML schema of docs/spec.md §2–§6 as one frozen, validated :class:`RuleSet`, its array form, and
loading one (:func:`load_rules`).

A rule set is read from YAML (``configs/<name>.yaml`` or a path), may ``extends:`` another (deep merge: mappings
merge key by key, everything else is replaced), and may be adjusted by ``--set key.path=value`` overrides
(:mod:`simulator.rules.load`). Validation is strict: unknown keys, wrong types and out-of-range values are errors
that name the file and the key. :meth:`RuleSet.to_arrays` turns a validated set into the flat ``int64`` vector the
compiled engine reads; each key's slot and enum integers are its row of the key table (:mod:`simulator.rules.keys`),
where every rule key is declared once.

The parts live in their own modules and are re-exported here, where callers import them: the vocabulary
(:mod:`simulator.rules.vocab`), the key table (:mod:`simulator.rules.keys`), the blocks
``scoring``/``kongs``/``settlement``/``economy``/``session`` (:mod:`simulator.rules.blocks`), the seats
(:mod:`simulator.rules.seats`) and the file reading (:mod:`simulator.rules.load`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, get_args

import numpy as np
from pydantic import BaseModel, ValidationError, field_validator, model_validator

from simulator.errors import did_you_mean
from simulator.rules.blocks import DEALER_RULES as DEALER_RULES
from simulator.rules.blocks import MAX_RAKE as MAX_RAKE
from simulator.rules.blocks import MAX_ROOM_FACTOR as MAX_ROOM_FACTOR
from simulator.rules.blocks import MAX_SESSION_HANDS as MAX_SESSION_HANDS
from simulator.rules.blocks import EconomyRules as EconomyRules
from simulator.rules.blocks import FrozenModel, table_block
from simulator.rules.blocks import KongRules as KongRules
from simulator.rules.blocks import ScoringRules as ScoringRules
from simulator.rules.blocks import SessionRules as SessionRules
from simulator.rules.blocks import SettlementRules as SettlementRules
from simulator.rules.keys import BY_PATH as BY_PATH
from simulator.rules.keys import KEYS as KEYS
from simulator.rules.keys import N_PARAMS as N_PARAMS
from simulator.rules.keys import P_FLAG_FAN as P_FLAG_FAN
from simulator.rules.keys import P_TABLE_FAN as P_TABLE_FAN
from simulator.rules.keys import SLOT as SLOT
from simulator.rules.keys import SPECIAL as SPECIAL
from simulator.rules.keys import choices as choices
from simulator.rules.keys import code as code
from simulator.rules.keys import compiled, money_bound
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
from simulator.rules.vocab import *  # noqa: F403 - every name of the vocabulary is this module's API
from simulator.rules.vocab import (
    BOT_INDEX,
    DECLARE_FAN,
    FLAG_BIT,
    HAND_TYPE_INDEX,
    HAND_TYPES,
    PYTHON_BOT,
    UNCAPPED_HUAZHU_FAN,
    XUELIU_MAX_WIN_EVENTS,
)


def _seat(v: Any) -> Any:
    return {"bot": v} if isinstance(v, str) else v


class _Named(FrozenModel):
    name: str = "chengdu"
    description: str = ""


class RuleSet(table_block("", _Named, nested=False)):  # type: ignore[misc]
    """A complete, validated rule set (docs/spec.md §2–§6) plus the bots seated at the table: the name, the
    top-level keys of the key table (:mod:`simulator.rules.keys`), the blocks and the seats."""

    scoring: ScoringRules = ScoringRules()
    kongs: KongRules = KongRules()
    settlement: SettlementRules = SettlementRules()
    economy: EconomyRules = EconomyRules()
    session: SessionRules | None = None  # None: independent hands (no sessions), the logs as before sessions
    seats: tuple[BotSpec, BotSpec, BotSpec, BotSpec] = (BotSpec(),) * 4

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
        for key in KEYS:  # the key table's newer keys at their default are left out: existing digests stay the same
            if key.recorded:
                continue
            block = data
            for part in key.path.split(".")[:-1]:
                block = block[part]
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

    def base_units(self, money):
        """Money units (the engine's scores and the logs' score columns) in base units: ``money /
        settlement.money_scale`` as float64, or ``money`` itself (integers) at scale 1. Every reader of scores in
        base units goes through here (sessions, designs, tune, the RL environments, the replay)."""
        scale = self.settlement.money_scale
        return money if scale == 1 else np.asarray(money, dtype=np.float64) / scale

    def to_arrays(self) -> np.ndarray:
        """Flat ``int64[N_PARAMS]`` vector read by compiled code; slots are the ``P_*`` constants."""
        s = self.scoring
        p = np.zeros(N_PARAMS, dtype=np.int64)
        p[:P_FLAG_FAN] = compiled(self)  # the key table's keys, each in its slot as its integer
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


def log_bounds(rules: RuleSet) -> tuple[int, int]:
    """``(max fan, max money)``: upper bounds of a hand's uncapped fan and of one seat's score in one hand (money
    units: base units × ``settlement.money_scale``), which validation keeps within the int8 fan and int32 money
    columns of the logs.

    Conservative: the fan bound adds every pattern and extra as if all could hold at once (with 根 × MAX_GEN and
    the add_fan bonus); the money bound adds 3 wins paid by one seat for three payers each (P + 1, the
    self-draw base bonus included; a 杠上花 feeder pays for everyone) and 查大叫 to 3 seats — what the points of a
    hand bound — and what the key table's money keys move (:func:`simulator.rules.keys.money_bound`: the 花猪
    penalty to 3 seats, ``cap`` the points of a capped hand; every kong's payment from 3 seats collected and then
    moved again, the largest of the four payments; the dealer's compensation). Under ``mode: xueliu`` a seat takes
    part in up to ``XUELIU_MAX_WIN_EVENTS`` win events instead of 3."""
    s = rules.scoring
    extras = sum(f for name, f in s.extras.items() if name != "gen") + MAX_GEN * s.extras.get("gen", 0)
    shape = sum(s.patterns.values()) if s.mode == "additive" else max(s.hand_types.values(), default=0)
    fan = shape + extras + (1 if s.self_draw_bonus == "add_fan" else 0)
    paid = fan if s.cap is None else min(fan, s.cap)
    points = paid if s.points == "linear" else 2 ** max(0, paid - s.fan_offset)
    if s.cap is None:
        cap_penalty = 2 ** UNCAPPED_HUAZHU_FAN
    else:
        cap_penalty = s.cap if s.points == "linear" else 2 ** max(0, s.cap - s.fan_offset)
    events = XUELIU_MAX_WIN_EVENTS if rules.mode == "xueliu" else 3
    money = 3 * events * (points + 1) + 3 * points
    money += money_bound(rules, {"settlement.huazhu_penalty": cap_penalty})  # the key table's money keys
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
    elif err["type"] == "model_type":  # a block given as a scalar: not pydantic's class name, what is expected
        msg = f"expected a mapping of keys (got {shorten(repr(err['input']))})"
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
