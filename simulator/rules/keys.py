"""The key table: each rule key declared once — its dotted path, type (integer range, boolean, choices or a
mapping of fans), default, documentation — and in that order its slot in the compiled parameter vector. From the
row follow:

- the field of :class:`simulator.rules.RuleSet` (:mod:`simulator.rules.blocks` builds every block from its rows:
  type, bounds, default, description, nested blocks such as ``kongs.discard_kong``), hence validation,
  ``xuezhan rules schema`` (the JSON Schema) and ``xuezhan rules show``;
- the slot of ``RuleSet.to_arrays()`` (:data:`SLOT`, the keys in table order, then the fan slots) and its value
  there: the integer, 0/1 for a boolean, the index in ``choices`` (the enum integer, :func:`code`) for a choice,
  :data:`SPECIAL` for a ``special`` value (``scoring.cap: null``, ``settlement.huazhu_penalty: cap``);
- the money bound of the logs (:func:`money_bound`, in ``rules.log_bounds``: ``money`` base units per unit of the
  value; the keys of one ``money_group`` count the largest of them, a ``special`` value what ``log_bounds`` says);
- the digest and the manifest: a key at its default is left out of ``RuleSet.resolved()``, so adding a key
  changes no existing rule set's digest, manifest or log file (``recorded`` keys, those from before the table,
  are always written, as they always were);
- docs/rules.md's "Rule keys" (``tests/test_rule_keys.py`` checks it is :func:`reference`'s text).

Plain tuples and integers (no pydantic, no numpy, no numba): compiled modules read a key's slot and enum integers
from here at import (``P_CAP = SLOT["scoring.cap"]``, ``HUAZHU_ALL = code("settlement.huazhu_pays", "all")``),
so editing the Python-only rule modules leaves numba's cache valid. Adding a key: one row here, and the compiled
code that reads it (docs/internals.md, "Files to touch").
"""

from __future__ import annotations

from typing import Any, NamedTuple

from simulator.rules.vocab import EXTRAS, FLAGS, HAND_TYPES, SHAPE_PATTERNS

SPECIAL = -1  # the compiled value of an int key's special value (scoring.cap null, settlement.huazhu_penalty cap)


class Key(NamedTuple):
    """One rule key. ``kind``: ``int`` (``low``..``high``, or one of ``special``), ``bool``, ``choice`` (one of
    ``choices``) or ``fans`` (a mapping of the names in ``choices`` to a fan ``low``..``high``; ``default`` as
    (name, fan) pairs; its fans sit in the fan slots, and each name of ``entries`` also has a slot of its own,
    ``path.name``, 0 when absent)."""

    path: str
    kind: str
    default: Any
    doc: str
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    money: int = 0  # units one seat can pay or receive in a hand per unit of the value (the logs' int32 bound)
    money_group: str = ""  # keys of one group (e.g. the kong payments) bound the money by the largest of them
    special: tuple[Any, ...] = ()  # int keys: other values accepted (None, "cap"), compiled as SPECIAL
    entries: tuple[str, ...] = ()  # fans keys: the names with a slot of their own
    recorded: bool = False  # written into RuleSet.resolved() even at its default (the keys from before the table)

    @property
    def block(self) -> str:
        """The block the key sits in (``""`` = the top level of a rule file; ``kongs.discard_kong`` ...)."""
        return self.path.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.path.rpartition(".")[2]

    @property
    def field_default(self) -> Any:
        """The default as the rule set holds it (a fans key: a dict)."""
        return dict(self.default) if self.kind == "fans" else self.default

    def encode(self, value: Any) -> int:
        """The key's value in the compiled parameter vector (a choice: its index, the enum integer)."""
        if self.kind == "choice":
            return self.choices.index(value)
        return SPECIAL if self.kind == "int" and value in self.special else int(value)


PAYMENT = 10_000  # the largest kong payment and 花猪 penalty, base units
MAX_KONGS = 16  # kongs in one hand: four seats × four melds
# a kong payment's bound per base unit: every kong of the hand paid to one seat by 3 seats, collected and then moved
# again (杠上炮 transfer, 退税 refund); only the largest of the four payments counts (one kind per kong)
KONG_MONEY = 2 * 3 * MAX_KONGS
KEYS: tuple[Key, ...] = (
    # -- the top level: the flow of a hand (docs/spec.md §2) -----------------------------------------------
    Key("mode", "choice", "xuezhan", "xuezhan (血战到底): a winner leaves play and the others play on until three "
        "have won or the wall is empty; single (标准打法): the first win (with its 一炮多响 partners) ends the "
        "hand; xueliu (血流成河): winners stay in and win again", choices=("xuezhan", "single", "xueliu"),
        recorded=True),
    Key("exchange_three", "choice", "none", "换三张: each player passes 3 tiles of one suit after the deal, in "
        "that direction (random: one of the three, uniformly, once per hand)",
        choices=("none", "clockwise", "counterclockwise", "opposite", "random"), recorded=True),
    Key("void_suit", "choice", "declared", "缺一门/定缺: declared (void tiles must be discarded first, cannot be "
        "claimed or won with); declared_lenient (declared, order not enforced: a void tile held at the end makes "
        "a 花猪); none (no declaration: a win uses at most two suits)",
        choices=("declared", "declared_lenient", "none"), recorded=True),
    Key("multiple_ron", "bool", True, "一炮多响: every player who can and does win on a discard wins (false: only "
        "the first in turn order after the discarder)", recorded=True),
    Key("last_discard_claims", "choice", "win_only", "the final discard (wall empty) may only be won (win_only) "
        "or also punged or konged (any)", choices=("win_only", "any"), recorded=True),
    Key("rob_kong", "bool", True, "抢杠胡: players waiting on an added kong's tile may win on it; the kong is void "
        "and its maker pays as the discarder", recorded=True),
    Key("pass_ron_lock", "choice", "higher_fan", "过水不胡, after declining a win on a discard until one's next "
        "draw: off; same_tile (no win on that tile kind); all_tiles (no win on any discard); higher_fan (only a "
        "win worth strictly more fan)", choices=("off", "same_tile", "all_tiles", "higher_fan"), recorded=True),
    Key("forced_win_last_tiles", "int", 0, "最后N张必胡: with at most this many tiles left in the wall a player who "
        "can win must win; 0 = off", low=0, high=55, recorded=True),
    Key("declare_ready", "choice", "none", "唱歌/跳舞: a ready player may sing (announce), dance (reveal the waits) "
        "or either (both); the extras sing/dance then default to 1 and 2 fan",
        choices=("none", "sing", "dance", "both"), recorded=True),
    Key("kong_bloom_payer", "choice", "self_draw", "杠上花 after a 直杠: paid as a self-draw (self_draw) or by the "
        "player who fed the kong, for everyone (feeder)", choices=("self_draw", "feeder"), recorded=True),
    # -- scoring (docs/spec.md §4) ----------------------------------------------------------------------------
    Key("scoring.mode", "choice", "additive", "additive: fan = the sum of the patterns present; table: fan = the "
        "largest hand_types entry the hand matches", choices=("additive", "table"), recorded=True),
    Key("scoring.patterns", "fans", (("duiduihu", 1), ("qingyise", 2), ("qidui", 2), ("daiyaojiu", 2),
                                     ("jiangdui", 2), ("jingou", 1)),
        "additive mode: the fan of each pattern (a pattern not listed scores 0)", low=0, high=64,
        choices=SHAPE_PATTERNS, recorded=True),
    Key("scoring.hand_types", "fans", (), "table mode: the fan of each hand type listed (must list pinghu)",
        low=0, high=64, choices=HAND_TYPES, recorded=True),
    Key("scoring.long_uses_gen", "bool", False, "龙七对 consumes one 根 (in table mode only when the entry paid is "
        "longqidui or qinglongqidui)", recorded=True),
    Key("scoring.extras", "fans", (("gen", 1), ("gangshanghua", 1), ("gangshangpao", 1), ("qiangganghu", 1),
                                   ("haidilaoyue", 0), ("haidipao", 0), ("tianhu", 3), ("dihu", 2), ("menqing", 0),
                                   ("zhongzhang", 0), ("zimo", 0)),
        "the fan of each extra, added in both modes (gen: per 根; an extra not listed scores 0)", low=0, high=64,
        choices=EXTRAS, entries=("gen",), recorded=True),
    Key("scoring.points", "choice", "exponential", "exponential: points = base · 2^(fan − fan_offset); linear: "
        "points = base · fan", choices=("exponential", "linear"), recorded=True),
    Key("scoring.fan_offset", "int", 0, "subtracted from the fan of exponential points (1 for 1-based tables: "
        "1番 = 1倍)", low=0, high=8, recorded=True),
    Key("scoring.cap", "int", 4, "fan cap (封顶), applied after the extras; null = uncapped", low=1, high=32,
        special=(None,), recorded=True),
    Key("scoring.base", "int", 1, "the 底: base units per point", low=1, high=10_000, recorded=True),
    Key("scoring.self_draw_bonus", "choice", "add_base", "自摸: none; add_base (+1 base unit per payer, after the "
        "cap); add_fan (+1 fan)", choices=("none", "add_base", "add_fan"), recorded=True),
    # -- kongs: paid at once, by players who have not won (docs/spec.md §4) --------------------------------------
    Key("kongs.discard_kong.discarder", "int", 2, "直杠/点杠: base units the discarder pays", low=0, high=PAYMENT,
        money=KONG_MONEY, money_group="kong", recorded=True),
    Key("kongs.discard_kong.others", "int", 0, "直杠/点杠: base units each other player pays (擦挂)", low=0,
        high=PAYMENT, money=KONG_MONEY, money_group="kong", recorded=True),
    Key("kongs.added_kong.each", "int", 1, "加杠: base units each player pays", low=0, high=PAYMENT,
        money=KONG_MONEY, money_group="kong", recorded=True),
    Key("kongs.concealed_kong.each", "int", 2, "暗杠: base units each player pays", low=0, high=PAYMENT,
        money=KONG_MONEY, money_group="kong", recorded=True),
    Key("kongs.added_kong_fresh_only", "bool", False, "an added kong collects nothing unless its fourth tile was "
        "just drawn", recorded=True),
    Key("kongs.after_kong_deal_in", "choice", "transfer", "杠上炮: the kong's income is kept (keep), returned "
        "(refund) or goes to the winner (transfer, 呼叫转移; split evenly among several)",
        choices=("keep", "refund", "transfer"), recorded=True),
    # -- settlement: money at the hand's start and at an exhaustive draw (docs/spec.md §5) -----------------------
    Key("settlement.dealer_compensation", "int", 0,
        "money units (base units unless settlement.money_scale says otherwise) the dealer pays each other player "
        "at the start of every hand, booked as score_transfer; 0 = off", low=0, high=10_000, money=3),
    Key("settlement.money_scale", "int", 1,
        "money units per base unit: every payment of the rules is this many units per base unit in the engine "
        "and the logs' score columns (the analysis divides them back to base units), so dealer_compensation "
        "can be a fraction of a base unit; 1 = the logs count base units", low=1, high=1000),
    Key("settlement.refund_kongs_if_not_ready", "bool", True, "退税: a player not ready at an exhaustive draw "
        "(a 花猪 too) returns all its kong income", recorded=True),
    Key("settlement.huazhu_penalty", "int", 16, "查花猪: base units a 花猪 pays each other eligible player; cap = "
        "the points of a hand of cap fan (uncapped: 2^6)", low=0, high=PAYMENT, special=("cap",), money=3,
        recorded=True),
    Key("settlement.huazhu_pays", "choice", "unwon", "who collects the 花猪 penalty: players still in (unwon) or "
        "also those who already won (all)", choices=("unwon", "all"), recorded=True),
    Key("settlement.chadajiao", "bool", True, "查大叫: every not-ready, non-花猪 player pays every ready player still "
        "in that player's maximum possible points", recorded=True),
)
BY_PATH = {k.path: k for k in KEYS}


def _slotted() -> list[str]:
    paths: list[str] = []
    for k in KEYS:
        paths += [f"{k.path}.{e}" for e in k.entries] if k.kind == "fans" else [k.path]
    return paths


SLOT = {path: i for i, path in enumerate(_slotted())}  # the keys' slots, in table order
P_FLAG_FAN = len(SLOT)                     # P_FLAG_FAN + FLAG_BIT[flag]: fan of a flag (additive + extras)
P_TABLE_FAN = P_FLAG_FAN + len(FLAGS)      # P_TABLE_FAN + HAND_TYPE_INDEX[t]: table fan, -1 = not listed
N_PARAMS = P_TABLE_FAN + len(HAND_TYPES)   # length of RuleSet.to_arrays()


def code(path: str, value: Any) -> int:
    """The compiled integer of one value of a key (a choice's enum integer, a special value's SPECIAL)."""
    key = BY_PATH[path]
    if key.kind == "choice" and value not in key.choices or key.kind == "int" and value not in key.special:
        raise ValueError(f"{path}: {value!r} is not one of its choices or special values")
    return key.encode(value)


def choices(path: str) -> tuple[str, ...]:
    """A choice key's values in enum order (the integer stored is the index)."""
    return BY_PATH[path].choices


def value_of(rules: object, path: str) -> Any:
    """The value of a key (or of a fans key's entry) in a rule set (``RuleSet`` or any object with the blocks as
    attributes); an entry absent from its mapping is 0."""
    value: Any = rules
    for part in path.split("."):
        value = value.get(part, 0) if isinstance(value, dict) else getattr(value, part)
    return value


def money_bound(rules: object, special: dict[str, int]) -> int:
    """What the money keys (``Key.money``) can move for one seat in one hand, in base units (before
    ``settlement.money_scale``): each key's ``money`` × its value, the largest of them for keys sharing a
    ``money_group``, and for a ``special`` value (``huazhu_penalty: cap``) ``special[path]`` as the value."""
    groups: dict[str, int] = {}
    for key in KEYS:
        if key.money:
            value = value_of(rules, key.path)
            units = special[key.path] if value in key.special else int(value)
            group = key.money_group or key.path
            groups[group] = max(groups.get(group, 0), key.money * units)
    return sum(groups.values())


def compiled(rules: object) -> list[int]:
    """The keys' part of the compiled parameter vector (slots ``0..P_FLAG_FAN - 1``) for a rule set."""
    return [BY_PATH[path].encode(value_of(rules, path)) if path in BY_PATH else int(value_of(rules, path))
            for path in SLOT]


def in_block(block: str) -> tuple[Key, ...]:
    """The table's keys of one block, in table order."""
    return tuple(k for k in KEYS if k.block == block)


def sub_blocks(block: str) -> tuple[str, ...]:
    """The blocks nested directly in ``block`` that hold table keys, in table order (``kongs`` → its payments)."""
    depth = block.count(".") + 1 if block else 0
    found = dict.fromkeys(".".join(k.path.split(".")[:depth + 1]) for k in KEYS
                          if k.block.startswith(f"{block}." if block else "") and k.block.count(".") >= depth)
    return tuple(b for b in found if b != block and b.count(".") == depth)


def _yaml(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):  # a fans default
        return "{" + ", ".join(f"{n}: {f}" for n, f in value) + "}"
    return "null" if value is None else str(value)


def _values(k: Key) -> str:
    if k.kind == "choice":
        return " / ".join(f"`{c}`" for c in k.choices)
    if k.kind == "bool":
        return "`true` / `false`"
    if k.kind == "fans":
        return f"fan {k.low}–{k.high} for any of: " + ", ".join(k.choices)
    return " or ".join([f"integer {k.low}–{k.high:,}", *(f"`{_yaml(s)}`" for s in k.special)])


def reference() -> str:
    """docs/rules.md's table of every rule key (generated; a test compares)."""
    lines = ["| key | values | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{k.path}` | {_values(k)} | `{_yaml(k.default)}` | {k.doc} |" for k in KEYS]
    return "\n".join(lines) + "\n"
