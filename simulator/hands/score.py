"""Score one win from Python, as a user writes it: ``score_hand`` (notation, melds, win kind, context; docs/spec.md
§8), the pattern-by-pattern ``breakdown`` that ``xuezhan score`` prints, and ``check_vectors`` for a file of worked
examples. Raises :class:`HandError` with ``code`` ``invalid_input`` or ``not_a_winning_hand``. The arithmetic is the
engine's own (:mod:`simulator.kernel.evaluate`, :mod:`simulator.kernel.scoring`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

from simulator import rules as R
from simulator.errors import UserError
from simulator.vocab import FLAG_ZH, HAND_TYPE_ZH, MELD_NAMES, WIN_KINDS

INVALID_INPUT = "invalid_input"
NOT_A_WINNING_HAND = "not_a_winning_hand"
CONTEXT_KEYS = ("after_kong", "after_own_kong_discard", "last_tile", "first_draw", "dealer", "sing", "dance")
MELD_VALUES = {name: i for i, name in enumerate(MELD_NAMES) if name}  # name -> shape.MELD_*

class HandError(UserError):
    """A hand that cannot be scored; ``code`` is ``invalid_input`` or ``not_a_winning_hand`` (docs/spec.md §8)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ScoreResult:
    """One scored win, money in score units (base units × ``scoring.base``).

    ``points`` is set for a discard or robbed-kong win (what the discarder / kong maker pays), ``points_each``
    for a self-draw (what each payer pays, bonus included); the other is ``None``.
    """

    hand_type: str
    patterns: list[str]
    gen: int
    fan: int
    capped_fan: int
    points: int | None = None
    points_each: int | None = None

    def to_dict(self) -> dict:
        """JSON form: the keys of ``xuezhan score --json`` (only the points key that applies)."""
        d = asdict(self)
        if self.points is None:
            d.pop("points")
        if self.points_each is None:
            d.pop("points_each")
        return d


@dataclass(frozen=True)
class _Meld:
    kind: int   # MELD_PUNG / MELD_KONG / MELD_CKONG
    tile: int


def _parse_meld(spec) -> _Meld:
    """``"pung:5p"``, ``("kong", "7s")``, ``("kong", "7s", True)`` or ``{kind, tile, concealed}``."""
    concealed = False
    if isinstance(spec, str):
        kind, sep, tile = spec.partition(":")
        if not sep:
            raise HandError(INVALID_INPUT, f"meld {spec!r}: expected KIND:TILE, e.g. pung:5p, kong:7s, ckong:3m")
    elif isinstance(spec, Mapping):
        unknown = set(spec) - {"kind", "tile", "concealed"}
        if unknown or "kind" not in spec or "tile" not in spec:
            raise HandError(INVALID_INPUT, f"meld {dict(spec)!r}: expected keys kind, tile and optional concealed")
        kind, tile, concealed = spec["kind"], spec["tile"], spec.get("concealed", False)
    elif isinstance(spec, tuple | list) and len(spec) in (2, 3):
        kind, tile = spec[0], spec[1]
        concealed = spec[2] if len(spec) == 3 else False
    else:
        raise HandError(INVALID_INPUT, f"meld {spec!r}: expected 'kind:tile', a (kind, tile) pair or a mapping")
    kind = str(kind).strip().lower()
    if kind not in MELD_VALUES:
        raise HandError(INVALID_INPUT, f"meld kind {kind!r}: expected pung, kong or ckong")
    if not isinstance(concealed, bool):
        raise HandError(INVALID_INPUT, f"meld concealed: expected true or false, got {concealed!r}")
    if concealed and kind == "pung":
        raise HandError(INVALID_INPUT, "a pung set down is never concealed (a concealed triplet stays in the hand)")
    if concealed:
        kind = "ckong"
    return _Meld(MELD_VALUES[kind], _tile(str(tile), "meld tile"))


def _tile(text: str, what: str) -> int:
    from simulator.kernel.tiles import TileError, parse_tile

    try:
        return parse_tile(text)
    except TileError as exc:
        raise HandError(INVALID_INPUT, f"{what}: {exc}") from None


def _parse_context(context) -> set[str]:
    if context is None:
        return set()
    if isinstance(context, Mapping):
        bad = [k for k, v in context.items() if not isinstance(v, bool)]
        if bad:
            raise HandError(INVALID_INPUT, f"context {bad[0]!r}: expected true or false")
        names = {str(k) for k, v in context.items() if v}
        keys = {str(k) for k in context}
    elif isinstance(context, Iterable) and not isinstance(context, str | bytes):
        names = keys = {str(k) for k in context}
    else:
        raise HandError(INVALID_INPUT, f"context {context!r}: expected a mapping or a set of names")
    unknown = sorted(keys - set(CONTEXT_KEYS))
    if unknown:
        raise HandError(INVALID_INPUT, f"unknown context {unknown[0]!r}; expected one of {', '.join(CONTEXT_KEYS)}")
    return names


def _check_context(ctx: set[str], win: str, melds: list[_Meld], conc: np.ndarray, win_tile: int) -> None:
    """Reject contexts that cannot happen (docs/spec.md §8 invalid_input)."""
    bad = None
    has_kong = any(m.kind != MELD_VALUES["pung"] for m in melds)
    if "after_kong" in ctx and win != "self_draw":
        bad = "after_kong (杠上花) needs a self-draw"
    elif "after_kong" in ctx and not has_kong:
        bad = "after_kong (杠上花) needs a kong set down"
    elif "after_own_kong_discard" in ctx and win != "discard":
        bad = "after_own_kong_discard (杠上炮) needs a win on a discard"
    elif "first_draw" in ctx and win != "self_draw":
        bad = "first_draw (天胡/地胡) needs a self-draw"
    elif "first_draw" in ctx and melds:
        bad = "first_draw (天胡/地胡) cannot have melds set down"
    elif "sing" in ctx and "dance" in ctx:
        bad = "sing and dance cannot both hold (a player declares one of them)"
    elif "first_draw" in ctx and ("sing" in ctx or "dance" in ctx):
        bad = "first_draw (天胡/地胡) comes before any declaration"
    elif "first_draw" in ctx and "last_tile" in ctx:
        bad = "first_draw and last_tile cannot both hold"
    elif win == "rob_kong" and "last_tile" in ctx:
        bad = "no kong can be made (or robbed) after the last tile"
    elif win == "rob_kong" and (conc[win_tile] > 1 or any(m.tile == win_tile for m in melds)):
        bad = "rob_kong: the kong maker holds the other three copies of the robbed tile"
    if bad:
        raise HandError(INVALID_INPUT, f"impossible context: {bad}")


def _check_counts(conc: np.ndarray, melds: list[_Meld], win_tile: int, hand: str) -> None:
    """Tile count 14 with kongs as three, no fifth copy, the winning tile in the hand."""
    from simulator.kernel.tiles import format_tiles

    if len(melds) > 4:
        raise HandError(INVALID_INPUT, f"{len(melds)} melds: at most 4")
    total = int(conc.sum()) + 3 * len(melds)
    if total != 14:
        raise HandError(INVALID_INPUT, f"hand {hand!r} has {total} tiles counting melds (kongs as three); need 14")
    held = conc.astype(np.int64)
    for m in melds:
        held[m.tile] += 3 if m.kind == MELD_VALUES["pung"] else 4
    over = np.flatnonzero(held > 4)
    if over.size:
        k = int(over[0])
        raise HandError(INVALID_INPUT, f"{format_tiles([k])} appears {int(held[k])} times counting melds (at most 4)")
    if conc[win_tile] == 0:
        raise HandError(INVALID_INPUT, f"winning tile {format_tiles([win_tile])} is not in the hand {hand!r}")


def _parse_hand(hand: str) -> np.ndarray:
    from simulator.kernel.tiles import TileError, counts_from_str

    try:
        return counts_from_str(hand)
    except TileError as exc:
        raise HandError(INVALID_INPUT, f"hand {hand!r}: {exc}") from None


def _ctx_bits(ctx: set[str], win: str) -> int:
    from simulator.kernel import evaluate as E

    bits = {"self_draw": E.CTX_SELF_DRAW, "rob_kong": E.CTX_ROB_KONG, "discard": 0}[win]
    names = {"after_kong": E.CTX_AFTER_KONG, "after_own_kong_discard": E.CTX_KONG_DISCARD,
             "last_tile": E.CTX_LAST_TILE, "first_draw": E.CTX_FIRST_DRAW, "dealer": E.CTX_DEALER,
             "sing": E.CTX_SING, "dance": E.CTX_DANCE}
    for name in ctx:
        bits |= names[name]
    return bits


def _why_not_winning(conc: np.ndarray, melds: list[_Meld], void: int) -> str:
    suits = {k // 9 for k in np.flatnonzero(conc)} | {m.tile // 9 for m in melds}
    if len(suits) == 3:
        return "three suits (缺一门: a win holds at most two)"
    if void in suits:
        return f"holds tiles of the void suit {'mps'[void]}"
    return "no split into four melds and a pair, and not seven pairs"


def score_hand(rules: R.RuleSet, hand: str, melds: Iterable = (), win_tile: str = "", win: str = "discard",
               context: Mapping | Iterable | None = None, *, void: str | None = None) -> ScoreResult:
    """Score one win as a user writes it (docs/spec.md §8); money in score units.

    ``hand``: every concealed tile including the winning tile, e.g. ``"123m456m789m11p22p"``; ``melds``: melds
    set down (``"pung:5p"``, ``("kong", "7s", concealed)``, ``{kind, tile, concealed}``); ``win``: discard |
    self_draw | rob_kong; ``context``: names of docs/spec.md §8 (a set, or a mapping name -> bool); ``void``: the
    declared void suit letter, if any. Raises :class:`HandError`.
    """
    from simulator.kernel import evaluate as E
    from simulator.kernel.shape import HandTiles
    from simulator.kernel.tables import suit_table

    if win not in WIN_KINDS:
        raise HandError(INVALID_INPUT, f"win {win!r}: expected one of {', '.join(WIN_KINDS)}")
    if void is not None and (not isinstance(void, str) or void not in ("m", "p", "s")):
        raise HandError(INVALID_INPUT, f"void {void!r}: expected m, p or s")
    void_i = -1 if void is None else "mps".index(void)
    conc = _parse_hand(hand)
    parsed = [_parse_meld(m) for m in melds]
    wt = _tile(str(win_tile), "win tile")
    ctx = _parse_context(context)
    _check_counts(conc, parsed, wt, hand)
    _check_context(ctx, win, parsed, conc, wt)

    meld_kind = np.zeros(4, dtype=np.int8)
    meld_tile = np.zeros(4, dtype=np.int8)
    for i, m in enumerate(parsed):
        meld_kind[i], meld_tile[i] = m.kind, m.tile
    played = HandTiles(conc, meld_kind, meld_tile, len(parsed), void_i)
    fan, capped, flags, gen, ht, pts = E.evaluate_win(suit_table(), played, wt, _ctx_bits(ctx, win), rules.to_arrays())
    if fan < 0:
        raise HandError(NOT_A_WINNING_HAND, f"not a winning hand: {_why_not_winning(conc, parsed, void_i)}")
    money = int(pts) * rules.scoring.base
    return ScoreResult(
        hand_type=R.HAND_TYPES[int(ht)],
        patterns=[f for f in R.FLAGS if (int(flags) >> R.FLAG_BIT[f]) & 1],
        gen=int(gen), fan=int(fan), capped_fan=int(capped),
        points=None if win == "self_draw" else money,
        points_each=money if win == "self_draw" else None,
    )


# ---- readable breakdown (xuezhan score) -------------------------------------------------------------------

def _pattern_fan(s: R.ScoringRules, name: str) -> int | None:
    """Fan a reported pattern adds; None for a shape in table mode (it counts through the hand type)."""
    if name in R.EXTRA_FLAGS:
        return s.extras.get(name, 0)
    return None if s.mode == "table" else s.patterns.get(name, 0)


def breakdown(rules: R.RuleSet, result: ScoreResult, win: str) -> list[str]:
    """Human-readable lines: hand type, each pattern with the fan it contributes, 根, fan, cap, points."""
    s = rules.scoring
    table = s.mode == "table"
    lines = [f"hand type: {result.hand_type} {HAND_TYPE_ZH[result.hand_type]}"
             + (f"  ({s.hand_types[result.hand_type]} fan, table)" if table else "")]
    for name in result.patterns:
        fan = _pattern_fan(s, name)
        counted = "in hand type" if fan is None else f"{fan} fan"
        lines.append(f"  {name} {FLAG_ZH[name]}: {counted}")
    gen_fan = s.extras.get("gen", 0)
    lines.append(f"  gen 根: {result.gen} × {gen_fan} fan")
    if win == "self_draw" and s.self_draw_bonus == "add_fan":
        lines.append("  self-draw bonus 自摸加番: 1 fan")
    cap = "uncapped" if s.cap is None else f"cap {s.cap}"
    lines.append(f"fan: {result.fan}   capped fan: {result.capped_fan} ({cap}, {s.points} points)")
    if result.points_each is not None:
        bonus = ", 自摸加底 included" if s.self_draw_bonus == "add_base" else ""
        lines.append(f"points: {result.points_each} from each player still in{bonus}")
    else:
        payer = "the kong maker" if win == "rob_kong" else "the discarder"
        lines.append(f"points: {result.points} from {payer}")
    return lines


# ---- vectors files (xuezhan score --vectors) --------------------------------------------------------------

VECTOR_KEYS = {"id", "rules", "overrides", "hand", "melds", "win_tile", "win", "context", "void", "note", "expect"}
EXPECT_KEYS = {"hand_type", "patterns", "gen", "fan", "capped_fan", "points", "points_each", "error"}


class VectorsError(UserError):
    """A vectors file that cannot be read: missing, malformed YAML, or a vector of the wrong shape."""


def load_vectors(path) -> list[dict]:
    """Read and shape-check a vectors file (the format of ``tests/data/scoring_vectors.yaml``)."""
    from pathlib import Path

    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise VectorsError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        raise VectorsError(f"{path}:{where} malformed YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, list):
        raise VectorsError(f"{path}: a vectors file is a YAML list of vectors")
    for i, v in enumerate(data):
        where = f"{path}: vector {i + 1}"
        if not isinstance(v, dict):
            raise VectorsError(f"{where}: expected a mapping")
        missing = sorted({"id", "hand", "win_tile", "expect"} - set(v))
        unknown = sorted(set(v) - VECTOR_KEYS)
        if missing or unknown:
            what = f"missing key {missing[0]!r}" if missing else f"unknown key {unknown[0]!r}"
            raise VectorsError(f"{where} ({v.get('id', '?')}): {what}")
        expect = v["expect"]
        if not isinstance(expect, dict) or not expect or set(expect) - EXPECT_KEYS:
            raise VectorsError(f"{where} ({v['id']}): expect must map some of {', '.join(sorted(EXPECT_KEYS))}")
    return data


def _vector_result(v: dict) -> dict:
    """Score one vector: the result's JSON form, or ``{"error": code, "message": ...}``."""
    rules = R.load_rules(v.get("rules", "chengdu"), v.get("overrides"))
    try:
        res = score_hand(rules, str(v["hand"]), v.get("melds") or [], str(v["win_tile"]),
                         v.get("win", "discard"), v.get("context"), void=v.get("void"))
    except HandError as exc:
        return {"error": exc.code, "message": str(exc)}
    return res.to_dict()


def _matches(expect: dict, got: dict) -> bool:
    for key, want in expect.items():
        if key == "patterns":
            if "error" in got or not set(want) <= set(got["patterns"]):
                return False
        elif got.get(key) != want:
            return False
    return "error" not in got or "error" in expect


def check_vectors(path) -> list[dict]:
    """Run every vector of a file: one ``{"id", "ok"[, "expected", "got"]}`` dict per vector, in file order."""
    out = []
    for v in load_vectors(path):
        try:
            got = _vector_result(v)
        except R.RulesError as exc:
            raise VectorsError(f"vector {v['id']}: {exc}") from None
        line = {"id": v["id"], "ok": _matches(v["expect"], got)}
        if not line["ok"]:
            line["expected"] = v["expect"]
            line["got"] = got
        out.append(line)
    return out
