"""Rule sets: the YAML schema of RULES.md §2–§6 as frozen, validated models, and their array form.

A rule set is read from YAML (``configs/<name>.yaml`` or a path), may ``extends:`` another (deep merge: mappings
merge key by key, everything else is replaced), and may be adjusted by ``--set key.path=value`` overrides.
Validation is strict: unknown keys, wrong types and out-of-range values are errors that name the file and the
key. :meth:`RuleSet.to_arrays` turns a validated set into the flat ``int64`` vector the compiled engine reads;
the slot of each key is the module constant ``P_<KEY>`` below, so a rule key has exactly one home in code.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from simulator.errors import UserError


def _config_dir() -> Path:
    """Named rule sets and studies: ``simulator/configs`` inside an installed package (the repository's top-level
    ``configs/``, shipped as package data by ``pyproject.toml``), else the checkout's ``configs/`` (a source
    tree on ``PYTHONPATH`` or an editable install, where ``configs/`` is the one source of truth)."""
    packaged = Path(str(importlib.resources.files("simulator") / "configs"))
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "configs"


CONFIG_DIR = _config_dir()

# ---------------------------------------------------------------------------------------------------------
# Identifiers shared by code, logs and reports (RULES.md §3). The order of FLAGS is the bit order of the
# pattern mask returned by the evaluator and the column order of the logs.
SHAPE_PATTERNS = ("pinghu", "duiduihu", "qingyise", "qidui", "longqidui", "daiyaojiu", "jiangdui", "jingou",
                  "shibaluohan")
EXTRA_FLAGS = ("menqing", "zhongzhang", "tianhu", "dihu", "gangshanghua", "gangshangpao", "qiangganghu",
               "haidilaoyue", "haidipao", "zimo", "sing", "dance")
FLAGS = SHAPE_PATTERNS + EXTRA_FLAGS
FLAG_BIT = {name: i for i, name in enumerate(FLAGS)}
EXTRAS = ("gen",) + EXTRA_FLAGS
COMPOSITES = ("qingdui", "qingqidui", "qinglongqidui", "qingyaojiu", "qingjingou", "jiangqidui",
              "qingshibaluohan")
# Additive-mode label priority (RULES.md §3); table mode picks the listed entry with most fan, ties going to
# the earlier entry of HAND_TYPES.
LABEL_ORDER = ("qingshibaluohan", "shibaluohan", "qinglongqidui", "qingjingou", "qingqidui", "qingyaojiu",
               "qingdui", "jiangqidui", "longqidui", "jiangdui", "jingou", "qidui", "daiyaojiu", "qingyise",
               "duiduihu", "pinghu")
HAND_TYPES = ("tianhu", "dihu") + LABEL_ORDER
HAND_TYPE_INDEX = {name: i for i, name in enumerate(HAND_TYPES)}

BOTS = ("random", "greedy", "value", "defensive", "expert")
BOT_INDEX = {name: i for i, name in enumerate(BOTS)}
BOT_LABELS = (*BOTS, "python")  # the players table's ``bot`` vocabulary: a compiled bot, or a user's Python bot
PYTHON_BOT = len(BOTS)  # its code
BOT_ENTRY_POINTS = "xuezhan.bots"  # entry-point group under which packages register Python bots by name
N_BOT_PARAMS = 8  # width of the per-seat int64 parameter row, see BotSpec.to_row
BOT_MILLI = 1000  # the expert's real-valued parameters travel in the int64 row as thousandths

# Slots of RuleSet.to_arrays(): scalars first, then fan per flag, then table fan per hand type.
_SCALARS = ("mode", "exchange_three", "void_suit", "multiple_ron", "rob_kong", "pass_ron_lock",
            "forced_win_last_tiles", "kong_bloom_payer", "scoring_mode", "long_uses_gen", "points",
            "fan_offset", "cap", "base", "self_draw_bonus", "gen_fan", "discard_kong_discarder",
            "discard_kong_others", "added_kong_each", "concealed_kong_each", "added_kong_fresh_only",
            "after_kong_deal_in", "refund_kongs_if_not_ready", "huazhu_penalty", "huazhu_pays", "chadajiao",
            "last_discard_claims", "declare_ready")
(P_MODE, P_EXCHANGE_THREE, P_VOID_SUIT, P_MULTIPLE_RON, P_ROB_KONG, P_PASS_RON_LOCK, P_FORCED_WIN_LAST_TILES,
 P_KONG_BLOOM_PAYER, P_SCORING_MODE, P_LONG_USES_GEN, P_POINTS, P_FAN_OFFSET, P_CAP, P_BASE,
 P_SELF_DRAW_BONUS, P_GEN_FAN, P_DISCARD_KONG_DISCARDER, P_DISCARD_KONG_OTHERS, P_ADDED_KONG_EACH,
 P_CONCEALED_KONG_EACH, P_ADDED_KONG_FRESH_ONLY, P_AFTER_KONG_DEAL_IN, P_REFUND_KONGS_IF_NOT_READY,
 P_HUAZHU_PENALTY, P_HUAZHU_PAYS, P_CHADAJIAO, P_LAST_DISCARD_CLAIMS, P_DECLARE_READY) = range(len(_SCALARS))
P_FLAG_FAN = len(_SCALARS)                 # P_FLAG_FAN + FLAG_BIT[flag]: fan of a flag (additive + extras)
P_TABLE_FAN = P_FLAG_FAN + len(FLAGS)      # P_TABLE_FAN + HAND_TYPE_INDEX[t]: table fan, -1 = not listed
N_PARAMS = P_TABLE_FAN + len(HAND_TYPES)
NO_CAP = -1            # value of P_CAP when uncapped
HUAZHU_CAP = -1        # value of P_HUAZHU_PENALTY for "cap"
UNCAPPED_HUAZHU_FAN = 6  # RULES.md §5: "cap" when uncapped means 2^6 base units

# Enumerations in slot order (the integer stored is the index in the tuple).
MODES = ("xuezhan", "single", "xueliu")
# 血流成河: each win event sets one tile aside for good and every seat keeps at least one tile, so a hand has at
# most 108 − 4 win events (the bound that sizes the engine's win records and the money check of log_bounds)
XUELIU_MAX_WIN_EVENTS = 104
EXCHANGES = ("none", "clockwise", "counterclockwise", "opposite", "random")
VOID_SUITS = ("declared", "declared_lenient", "none")
PASS_LOCKS = ("off", "same_tile", "all_tiles", "higher_fan")
BLOOM_PAYERS = ("self_draw", "feeder")
SCORING_MODES = ("additive", "table")
POINTS = ("exponential", "linear")
SELF_DRAW_BONUSES = ("none", "add_base", "add_fan")
DEAL_INS = ("keep", "refund", "transfer")
HUAZHU_PAYERS = ("unwon", "all")
LAST_DISCARD_CLAIMS = ("win_only", "any")
DECLARES = ("none", "sing", "dance", "both")  # both: a ready player may sing or dance (seed 000 lists both)
# Fan of 唱歌/跳舞 when the rule file does not set scoring.extras.sing/dance (docs/rules.md: no seed gives one).
# Filled into the extras only under declare_ready sing/dance/both, so rule sets without it keep their digests.
DECLARE_FAN = {"sing": 1, "dance": 2}


class RulesError(UserError):
    """A rule file or override that cannot be loaded; the message is one line naming file and key."""


NonNeg = Annotated[int, Field(ge=0)]
Fan = Annotated[int, Field(ge=0, le=64)]
Payment = Annotated[int, Field(ge=0, le=10_000)]  # a kong payment, base units

# Log dtypes (simulator/schema.py) that every reachable value must fit: fan columns are int8, money int32.
FAN_LOG_MAX = 127
MONEY_LOG_MAX = 2**31 - 1
MAX_GEN = 4            # 根 of one hand: four kongs plus a pair is the most (seven pairs: three)
MAX_KONGS = 16         # four seats × four melds


class _Frozen(BaseModel):
    # strict: YAML's true is not the integer 1 and 1 is not true; a float field still accepts an integer.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _yaml_off(v: Any) -> Any:
    # YAML 1.1 reads a bare `off` as False; the key's first value is literally called "off".
    return "off" if v is False else v


class ScoringRules(_Frozen):
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


class KongPayment(_Frozen):
    discarder: Payment = 2
    others: Payment = 0


class EachPayment(_Frozen):
    each: Payment


class KongRules(_Frozen):
    discard_kong: KongPayment = KongPayment()
    added_kong: EachPayment = EachPayment(each=1)
    concealed_kong: EachPayment = EachPayment(each=2)
    added_kong_fresh_only: bool = False
    after_kong_deal_in: Literal["keep", "refund", "transfer"] = "transfer"


class SettlementRules(_Frozen):
    refund_kongs_if_not_ready: bool = True
    huazhu_penalty: Annotated[int, Field(ge=0, le=10_000)] | Literal["cap"] = 16
    huazhu_pays: Literal["unwon", "all"] = "unwon"
    chadajiao: bool = True


MAX_ROOM_FACTOR = 1e6  # finite bounds: coins = room_factor · base · score − rake must stay far inside a float's
MAX_RAKE = 1e9         # exact integers (2^53), and .inf / 1e308 are typos, not rooms


class EconomyRules(_Frozen):
    room_factor: Annotated[float, Field(gt=0, le=MAX_ROOM_FACTOR, allow_inf_nan=False)] = 1.0
    rake: Annotated[float, Field(ge=0, le=MAX_RAKE, allow_inf_nan=False)] = 0.0


DEALER_RULES = ("rotate", "first_winner", "feeder_on_multi_ron", "feeder_keeps_on_draw", "dice")
MAX_SESSION_HANDS = 1000


class SessionRules(_Frozen):
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


TUNABLE: dict[str, tuple[float, float, float]] = {  # the expert's parameters `xuezhan tune` searches: (low, high,
    "defence": (0.0, 1.5, 0.01),                     # step); BotSpec below declares each with its default, and
    "ambition": (0.5, 2.0, 0.01),                    # `temperature` stays as the seat sets it (noise, not skill)
    "tempo": (0.0, 0.3, 0.005),
}
TUNED_KEY = "params"  # the mapping of TUNABLE values in a file written by `xuezhan tune` (simulator.tune)


def resolve_tuned_path(ref: str | Path) -> Path:
    """A tuned-parameters file: a path, else relative to configs/ (``tuned/xueliu.yaml``); RulesError if neither."""
    for candidate in (Path(ref), CONFIG_DIR / ref):
        if candidate.is_file():
            return candidate
    raise RulesError(f"params_from {str(ref)!r}: no such file (looked for it as a path and under configs/)")


def read_tuned(ref: str | Path) -> dict[str, float]:
    """The tuned expert parameters of a file written by ``xuezhan tune`` (its ``params`` mapping, a subset of
    ``TUNABLE``, each a number in that key's range); one-line RulesError otherwise."""
    path = resolve_tuned_path(ref)
    data = read_yaml_mapping(path, "a tuned-parameters file")
    params = data.get(TUNED_KEY)
    if not isinstance(params, dict) or not params:
        raise RulesError(f"{path}: not a tuned-parameters file (no `{TUNED_KEY}:` mapping of "
                         f"{', '.join(TUNABLE)}; `xuezhan tune` writes them)")
    out = {}
    for key, val in params.items():
        if key not in TUNABLE:
            raise RulesError(f"{path}: {TUNED_KEY}.{key}: unknown key (tuned keys: {', '.join(TUNABLE)})")
        if isinstance(val, bool) or not isinstance(val, int | float) or not val == val:
            raise RulesError(f"{path}: {TUNED_KEY}.{key}: expected a number, got {_short(repr(val))}")
        lo, hi, _ = TUNABLE[key]
        if not lo <= val <= hi:
            raise RulesError(f"{path}: {TUNED_KEY}.{key}: {val} is outside the tuned range [{lo}, {hi}]")
        out[key] = float(val)
    return out


class BotSpec(_Frozen):
    """One seat's bot and its parameters (unused parameters are ignored by bots that have none).

    - ``decline_below`` (value): decline a discard win worth fewer fan than this ...
    - ``decline_wall`` (value): ... while more than this many tiles remain in the wall.
    - ``defend_wall`` (defensive): start defending once the wall is this short, or as soon as anyone has won.
    - ``steer_shanten`` (value): steer toward 清一色/对对胡/七对 when that shape is within this many shanten.
    - ``defence`` (expert): weight of the expected deal-in loss against the hand's expected gain (0 = never
      folds, 1 = risk-neutral, larger = more cautious).
    - ``ambition`` (expert): multiplier on the value of the big shapes (清一色, 七对, 对对胡) relative to a plain
      hand (0 = plays for the fastest hand only, 1 = their value under the active scoring rules; default 1.15).
    - ``tempo`` (expert): what winning early is worth beyond the points — a player who has won pays nothing
      more — in plain-hand points per opponent still in and own draw left (0, the default = ignores it beyond
      the end rate of the P(win) table; larger = plays faster and declines fewer discard wins).
    - ``temperature`` (expert): softmax noise on discards, in base units of expected value (0 = always the best
      discard; 0.5 or more models a noticeably weaker player).

    ``bot`` is a compiled bot (``BOTS``), a Python bot class ``package.module:ClassName`` or the name of one
    registered under the ``xuezhan.bots`` entry-point group; ``params`` are the keyword arguments it is built with
    (Python bots only). See docs/bots.md.

    ``params_from`` (expert): a tuned-parameters file written by ``xuezhan tune`` (a path, else relative to
    configs/, e.g. ``tuned/xueliu.yaml``); its ``params`` (the ``TUNABLE`` keys) fill the keys the seat does not
    give itself (a key written in the seat wins). The path stays in the rule set (manifests, report), the values
    too, so a recorded rule set re-validates without the file.
    """

    @model_validator(mode="before")
    @classmethod
    def _fill_params_from(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("params_from") is None or not isinstance(data["params_from"], str):
            return data  # no file, or a wrong type that pydantic reports on the key
        if data.get("bot") != "expert":
            raise ValueError(f"params_from is for the expert (the parameters `xuezhan tune` searches), not for "
                             f"bot {data.get('bot', 'greedy')!r}")
        missing = [k for k in TUNABLE if k not in data]
        if not missing:  # every tuned key given (e.g. a recorded rule set): the file adds nothing
            return data
        tuned = read_tuned(data["params_from"])
        return {**{k: tuned[k] for k in missing if k in tuned}, **data}

    @field_validator("bot")
    @classmethod
    def _known_bot(cls, v: str) -> str:
        if v not in BOT_INDEX:
            bot_class(v)  # importable, a class: checked when the rules are loaded, not in a worker
        return v

    @model_validator(mode="after")
    def _params_fit(self) -> BotSpec:
        if self.params is not None:
            if self.bot in BOT_INDEX:
                raise ValueError(f"params are for Python bots; {self.bot!r} takes decline_below, decline_wall,"
                                 " defend_wall, steer_shanten, defence, ambition, temperature, tempo")
            import inspect

            try:
                inspect.signature(bot_class(self.bot)).bind(**self.params)
            except TypeError as e:
                raise ValueError(f"bot {self.bot!r}: params do not fit its constructor: {e}") from None
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # no params key for seats without params: the digests and manifests of existing configs stay the same
        data = handler(self)
        if self.params is None:
            data.pop("params", None)
        if self.params_from is None:
            data.pop("params_from", None)
        return data

    @property
    def is_python(self) -> bool:
        return self.bot not in BOT_INDEX

    def build(self) -> Any:
        """A new instance of this seat's Python bot."""
        return bot_class(self.bot)(**(self.params or {}))

    bot: str = "greedy"
    params: dict[str, Any] | None = None
    params_from: str | None = None
    decline_below: Annotated[int, Field(ge=0, le=16)] = 2
    decline_wall: Annotated[int, Field(ge=0, le=55)] = 24
    defend_wall: Annotated[int, Field(ge=0, le=55)] = 30
    steer_shanten: Annotated[int, Field(ge=0, le=6)] = 2
    defence: Annotated[float, Field(ge=0, le=10)] = 0.3
    ambition: Annotated[float, Field(ge=0, le=10)] = 1.15
    temperature: Annotated[float, Field(ge=0, le=100)] = 0.0
    tempo: Annotated[float, Field(ge=0, le=10)] = 0.0

    def to_row(self) -> np.ndarray:
        milli = [round(x * BOT_MILLI) for x in (self.defence, self.ambition, self.temperature, self.tempo)]
        return np.array([self.decline_below, self.decline_wall, self.defend_wall, self.steer_shanten, *milli],
                        dtype=np.int64)


def bot_class(name: str) -> type:
    """The Python bot class ``package.module:ClassName`` or registered as ``name`` in the ``xuezhan.bots``
    entry-point group; a ValueError naming the problem otherwise."""
    import importlib
    from importlib.metadata import entry_points

    if ":" in name:
        mod, _, attr = name.partition(":")
        try:
            obj: Any = importlib.import_module(mod)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"cannot load bot {name!r}: {e}") from None
    else:
        eps = [ep for ep in entry_points(group=BOT_ENTRY_POINTS) if ep.name == name]
        if not eps:
            raise ValueError(f"unknown bot {name!r}: not one of {', '.join(BOTS)}, not a 'package.module:Class'"
                             f" path and not registered under the {BOT_ENTRY_POINTS!r} entry points")
        try:
            obj = eps[0].load()
        except Exception as e:  # noqa: BLE001 - a broken plug-in is the user's input error, reported in one line
            raise ValueError(f"cannot load bot {name!r} ({eps[0].value}): {e}") from None
    if not isinstance(obj, type) or not callable(getattr(obj, "act", None)):
        raise ValueError(f"bot {name!r} is not a class with an act(obs) method")
    return obj


def _seat(v: Any) -> Any:
    return {"bot": v} if isinstance(v, str) else v


class RuleSet(_Frozen):
    """A complete, validated rule set (RULES.md §2–§6) plus the bots seated at the table."""

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

    _off = field_validator("pass_ron_lock", mode="before")(_yaml_off)

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
            raise ValueError(f"scoring: one hand could move up to {money:,} base units for a seat, more than the"
                             f" logs hold ({MONEY_LOG_MAX:,}); set a lower scoring.cap or lower fans/payments")
        return self

    # -- derived forms ------------------------------------------------------------------------------------
    def resolved(self) -> dict[str, Any]:
        """Plain-data form (what manifests record). Without sessions there is no ``session`` key at all, so the
        manifests and digests of rule sets written before sessions existed are unchanged."""
        data = self.model_dump(mode="json")
        if data["session"] is None:
            del data["session"]
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
        p[P_TABLE_FAN:] = -1
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


def log_bounds(rules: RuleSet) -> tuple[int, int]:
    """``(max fan, max money)``: upper bounds of a hand's uncapped fan and of one seat's score in one hand (base
    units), which validation keeps within the int8 fan and int32 money columns of the logs.

    Conservative: the fan bound adds every pattern and extra as if all could hold at once (with 根 × MAX_GEN and
    the add_fan bonus); the money bound adds 3 wins paid by one seat for three payers each (P + 1, the
    self-draw base bonus included; a 杠上花 feeder pays for everyone), 查大叫 to 3 seats, the 花猪 penalty to 3
    seats, and every kong's payment from 3 seats collected and then moved again (transfer/refund). Under
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
    return fan, money


# ---------------------------------------------------------------------------------------------------------
# Loading: files, inheritance, overrides.

def deep_merge(base: dict, top: dict) -> dict:
    """Mappings merge key by key (``top`` wins); any other value in ``top`` replaces the one in ``base``."""
    out = dict(base)
    for key, val in top.items():
        if isinstance(val, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], val)
        else:
            out[key] = val
    return out


def resolve_config_path(ref: str | Path, relative_to: Path | None = None) -> Path:
    """A rule set reference (a name such as ``chengdu`` or a path) to an existing file."""
    ref_path = Path(ref)
    candidates = [ref_path]
    if relative_to is not None:
        candidates.append(relative_to / ref_path)
    if ref_path.suffix not in (".yaml", ".yml"):
        if relative_to is not None:
            candidates.append(relative_to / f"{ref}.yaml")
        candidates.append(CONFIG_DIR / f"{ref}.yaml")
    for c in candidates:
        if c.is_file():
            return c
    raise RulesError(f"rule set {str(ref)!r} not found (looked for a file or configs/{ref_path.stem}.yaml)")


def read_yaml_mapping(path: Path, what: str = "a rule set") -> dict:
    """The YAML mapping in ``path`` (``{}`` for an empty file); one-line :class:`RulesError` for unreadable,
    non-UTF-8 or malformed files, naming the file (and the line, for YAML errors)."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except UnicodeDecodeError as exc:
        raise RulesError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python converts (4300 digits)
        raise RulesError(f"{path}: unreadable value ({_short(str(exc))})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise RulesError(f"{path}:{where} malformed YAML: {problem}") from None
    except OSError as exc:
        raise RulesError(f"{path}: cannot read ({exc.strerror})") from None
    if data is None:  # an empty file is a mistake (it would run the defaults under the file's name)
        raise RulesError(f"{path}: empty; {what} must be a YAML mapping (write `extends: chengdu` for the defaults)")
    if not isinstance(data, dict):
        raise RulesError(f"{path}: {what} must be a YAML mapping, got {type(data).__name__}")
    return data


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML would keep the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                continue  # unhashable: PyYAML's own error follows
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {str(key)[:40]!r} given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_raw(ref: str | Path, relative_to: Path | None = None, _seen: tuple[Path, ...] = ()) -> dict:
    """Raw merged mapping of a rule file with its ``extends`` chain resolved (not yet validated)."""
    path = resolve_config_path(ref, relative_to).resolve()
    if path in _seen:
        raise RulesError(f"{path}: extends cycle through {' -> '.join(p.name for p in _seen + (path,))}")
    data = read_yaml_mapping(path)
    parent = data.pop("extends", None)
    data.setdefault("name", path.stem)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise RulesError(f"{path}: extends: must be a rule set name or path")
    try:
        resolve_config_path(parent, path.parent)
    except RulesError as exc:
        raise RulesError(f"{path}: extends: {exc}") from None
    return deep_merge(load_raw(parent, path.parent, _seen + (path,)), data)


def flat_keys(data: Any, prefix: str = "", *, lists: bool = True) -> dict[str, Any]:
    """Nested rule data as ``{"scoring.cap": 4, "seats.0.bot": "greedy", ...}`` (the keys ``--set`` takes);
    with ``lists=False`` a list is one value (``{"seats": [...]}``)."""
    if isinstance(data, dict) or (lists and isinstance(data, list)):
        items = data.items() if isinstance(data, dict) else enumerate(data)
        return {k: v for key, val in items for k, v in flat_keys(val, f"{prefix}{key}.", lists=lists).items()}
    return {prefix[:-1]: data}


def parse_override(text: str) -> tuple[list[str], Any]:
    """``scoring.cap=3`` -> (['scoring', 'cap'], 3); the value is read as YAML (null, true, 16, cap, ...)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise RulesError(f"--set {text!r}: expected KEY=VALUE, e.g. scoring.cap=3")
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError:
        raise RulesError(f"--set {_short(text)!r}: value is not valid YAML") from None
    except ValueError:  # an integer literal longer than Python converts (4300 digits)
        raise RulesError(f"--set {_short(key)}=...: value is not a usable number ({len(value)} characters)") from None
    return key.split("."), parsed


def _nest(keys: list[str], value: Any) -> dict:
    """``(['scoring', 'cap'], 3)`` -> ``{'scoring': {'cap': 3}}``."""
    for key in reversed(keys):
        value = {key: value}
    return value


def apply_overrides(data: dict, overrides: list[str] | dict | None) -> dict:
    """Apply overrides on top of raw rule data: ``--set`` strings (``scoring.cap=3``) or a mapping, whose keys
    may be dotted (``{"scoring.cap": 3}``) or nested (``{"scoring": {"cap": 3}}``)."""
    if not overrides:
        return data
    if isinstance(overrides, dict):
        for key, value in overrides.items():
            keys = str(key).split(".")
            if not all(keys):
                raise RulesError(f"override key {key!r} is not a dotted rule key such as scoring.cap")
            data = deep_merge(data, _nest(keys, value))
        return data
    for text in overrides:
        data = deep_merge(data, _nest(*parse_override(text)))
    return data


def _short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters: an error line must stay one readable line whatever the input."""
    return text if len(text) <= limit else f"{text[:limit - 15]}...({len(text)} chars)"


# Segments pydantic adds to an error location for union members and constraints ("constrained-int",
# "literal['cap']", "function-after[...]", "int"): they are not rule keys and mean nothing to a user.
_INTERNAL_LOC = {"int", "str", "float", "bool", "none", "dict", "list", "tuple", "[key]"}


def _is_internal(part: Any) -> bool:
    text = str(part)
    return text in _INTERNAL_LOC or "-" in text or "[" in text


def explain(exc: ValidationError, source: str | Path) -> str:
    """One line naming the source and the dotted key of the first validation error.

    A value that fails every member of a union (``huazhu_penalty: -1``, an integer ≥ 0 or ``cap``) gets one
    message listing what is accepted, not pydantic's per-member reports."""
    errors = exc.errors()
    err = errors[0]
    key = tuple(x for x in err["loc"] if not _is_internal(x))
    loc = ".".join(str(x) for x in key)
    same = [e for e in errors if tuple(x for x in e["loc"] if not _is_internal(x)) == key]
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif len(same) > 1 and len(same) == len(errors):
        expected = " or ".join(e["msg"].removeprefix("Input should be ") for e in same)
        msg = f"got {_short(repr(err.get('input')))}; expected a value {expected}"
        errors = same[:1]
    elif err["type"] == "value_error":  # our own validators' messages are complete sentences
        msg = msg.removeprefix("Value error, ")
    elif err["type"] == "literal_error":
        msg = f"got {_short(repr(err['input']))}; {msg.lower()}"
    elif "input" in err and not isinstance(err["input"], dict | list):
        msg = f"{msg} (got {_short(repr(err['input']))})"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: {loc or '<top>'}: {msg}{more}"


def validate(data: dict, source: str = "<rules>") -> RuleSet:
    """Validate a raw mapping into a frozen :class:`RuleSet`; errors become one-line :class:`RulesError`."""
    try:
        return RuleSet.model_validate(data)
    except ValidationError as exc:
        raise RulesError(explain(exc, source)) from None


def load_rules(ref: str | Path = "chengdu", overrides: list[str] | dict | None = None) -> RuleSet:
    """Load a rule set by name or path, resolve ``extends``, apply overrides and validate."""
    path = resolve_config_path(ref)
    data = apply_overrides(load_raw(ref), overrides)
    # Name the overrides too: an unknown key may come from --set rather than from the file.
    return validate(data, f"{path} (with overrides)" if overrides else str(path))
