"""An independent, slow reference scorer of one win, written from docs/spec.md §3–4 and §8 and docs/rules.md
("Scoring conventions"). It shares no code with simulator/kernel/evaluate.py or simulator/kernel/scoring.py: it
enumerates every split of the concealed tiles by brute force and reads the rule set's ``scoring`` block directly, so
that the engine's logged wins can be checked against something other than the engine's own evaluator.

Tiles are kinds 0..26 (suit ``k // 9`` in m, p, s order; rank ``k % 9 + 1``). Money is in base units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SPEC = Path(__file__).resolve().parents[1] / "docs" / "spec.md"


def spec_section(number: str) -> str:
    """The text of docs/spec.md §``number`` (its heading to the next), whitespace collapsed."""
    text = SPEC.read_text(encoding="utf-8")
    start = text.index(f"\n## §{number} ")
    end = text.find("\n## ", start + 1)
    return " ".join(text[start:end if end > 0 else None].split())


def _names(pattern: str) -> tuple[str, ...]:
    found = re.search(pattern, spec_section("3"))
    assert found, f"docs/spec.md §3 no longer says {pattern!r}"
    return tuple(n.strip() for n in found.group(1).replace(" and ", ", ").split(","))


SUITS = "mps"
# docs/spec.md §3: the flags of a win
SHAPE = ("pinghu", "duiduihu", "qingyise", "qidui", "longqidui", "daiyaojiu", "jiangdui", "jingou", "shibaluohan")
SITUATIONAL = ("menqing", "zhongzhang", "tianhu", "dihu", "gangshanghua", "gangshangpao", "qiangganghu",
               "haidilaoyue", "haidipao", "zimo", "sing", "dance")
# docs/spec.md §3's words, read from the page (not from the code this scorer checks): the additive label order
# and the table mode's tie order
LABELS = _names(r"in additive mode the first that applies of ([a-z, ]+)\.")
TABLE_ORDER = _names(r"go to the earlier one of ([a-z, ]+?) and then that same order") + LABELS


@dataclass(frozen=True)
class Win:
    """One win as logged: concealed tiles (counts[27], winning tile included), melds set down
    (``(name, kind)``, name pung | kong | ckong), the winning tile, the win kind, the context names."""
    counts: tuple[int, ...]
    melds: tuple[tuple[str, int], ...]
    tile: int
    kind: str
    context: frozenset[str]


@dataclass(frozen=True)
class Score:
    fan: int
    capped_fan: int
    points: int  # base units per payer, self-draw add_base included
    hand_type: str
    gen: int
    flags: frozenset[str]


def parse_tiles(text: str) -> list[int]:
    """``123m55p`` -> kinds."""
    out, ranks = [], []
    for ch in text:
        if ch.isdigit():
            ranks.append(int(ch) - 1)
        else:
            out += [SUITS.index(ch) * 9 + r for r in ranks]
            ranks = []
    assert not ranks, text
    return out


def win_of(hand: str, melds: str, tile: str, kind: str, context: str) -> Win:
    """A :class:`Win` from the wins table's strings (``melds`` like ``pung:5p,ckong:3m``)."""
    counts = [0] * 27
    for k in parse_tiles(hand):
        counts[k] += 1
    ms = tuple((m.split(":")[0], parse_tiles(m.split(":")[1])[0]) for m in melds.split(",") if m)
    return Win(tuple(counts), ms, parse_tiles(tile)[0], kind, frozenset(c for c in context.split(",") if c))


def splits(counts: list[int], n_groups: int):
    """Every way to split ``counts`` into ``n_groups`` triplets/runs and one pair: lists of
    ``("trip" | "run" | "pair", first kind)``."""
    counts = list(counts)

    def groups(start: int, left: int):
        k = next((i for i in range(start, 27) if counts[i]), None)
        if k is None:
            if left == 0:
                yield []
            return
        if left == 0:
            return
        if counts[k] >= 3:
            counts[k] -= 3
            for rest in groups(k, left - 1):
                yield [("trip", k), *rest]
            counts[k] += 3
        if k % 9 <= 6 and counts[k + 1] and counts[k + 2]:
            for j in (k, k + 1, k + 2):
                counts[j] -= 1
            for rest in groups(k, left - 1):
                yield [("run", k), *rest]
            for j in (k, k + 1, k + 2):
                counts[j] += 1

    for p in range(27):
        if counts[p] >= 2:
            counts[p] -= 2
            for rest in groups(0, n_groups):
                yield [("pair", p), *rest]
            counts[p] += 2


def _group_kinds(group: tuple[str, int]) -> list[int]:
    what, k = group
    return [k, k + 1, k + 2] if what == "run" else [k]


def _forms(win: Win):
    """Every reading of the hand: ``("standard", groups)`` or ``("qidui", None)``."""
    if not win.melds and sum(win.counts) == 14 and all(c % 2 == 0 for c in win.counts):
        yield "qidui", None
    for groups in splits(list(win.counts), 4 - len(win.melds)):
        yield "standard", groups


def _shape_flags(win: Win, form: str, groups) -> set[str]:
    meld_counts = [0] * 27
    for name, k in win.melds:
        meld_counts[k] += 3 if name == "pung" else 4
    every = [win.counts[k] + meld_counts[k] for k in range(27)]
    held = [k for k in range(27) if every[k]]
    ranks = {k % 9 + 1 for k in held}
    flags = {"pinghu"}
    if len({k // 9 for k in held}) == 1:
        flags.add("qingyise")
    if not ranks & {1, 9}:
        flags.add("zhongzhang")
    if not any(name in ("pung", "kong") for name, _ in win.melds):
        flags.add("menqing")
    if form == "qidui":
        flags.add("qidui")
        if 4 in win.counts:
            flags.add("longqidui")
        return flags
    if all(what != "run" for what, _ in groups):
        flags.add("duiduihu")
        if ranks <= {2, 5, 8}:
            flags.add("jiangdui")
    terminal = [any(x % 9 in (0, 8) for x in _group_kinds(g)) for g in groups]
    if all(terminal) and all(k % 9 in (0, 8) for _, k in win.melds):
        flags.add("daiyaojiu")
    if len(win.melds) == 4:
        flags.add("jingou")
        if all(name != "pung" for name, _ in win.melds):
            flags.add("shibaluohan")
    return flags


def _situational(win: Win) -> set[str]:
    c, self_draw, discard = win.context, win.kind == "self_draw", win.kind == "discard"
    out = set()
    if self_draw:
        out.add("zimo")
        if "after_kong" in c:
            out.add("gangshanghua")
        if "last_tile" in c:
            out.add("haidilaoyue")
        if "first_draw" in c:
            out.add("tianhu" if "dealer" in c else "dihu")
    if discard and "after_own_kong_discard" in c:
        out.add("gangshangpao")
    if discard and "last_tile" in c:
        out.add("haidipao")
    if win.kind == "rob_kong":
        out.add("qiangganghu")
    return out | (c & {"sing", "dance"})


def _types(flags: set[str], every_258: bool) -> list[str]:
    """The hand types (flags and composites) a win with these flags matches."""
    composite = {"qingdui": "duiduihu", "qingqidui": "qidui", "qinglongqidui": "longqidui",
                 "qingyaojiu": "daiyaojiu", "qingjingou": "jingou", "qingshibaluohan": "shibaluohan"}
    out = [t for t in TABLE_ORDER if t in flags]
    if "qingyise" in flags:
        out += [c for c, f in composite.items() if f in flags]
    if "qidui" in flags and every_258:
        out.append("jiangqidui")
    return out


def score(rules, win: Win) -> Score:
    """The best reading of ``win`` under ``rules`` (a RuleSet; its ``scoring`` block is read): most fan, then
    most points, then the hand type first in the label order (table: in TABLE_ORDER), then the first reading of
    all triplets, 带幺九, a plain split, seven pairs."""
    sc = rules.scoring
    extras = dict(sc.extras)
    gen_all = sum(1 for k in range(27)
                  if win.counts[k] + sum(3 if n == "pung" else 4 for n, m in win.melds if m == k) == 4)
    situational = _situational(win)
    ranks_258 = all((k % 9 + 1) in (2, 5, 8) for k in range(27) if win.counts[k]) and \
        all((k % 9 + 1) in (2, 5, 8) for _, k in win.melds)
    best = None
    for form, groups in _forms(win):
        flags = _shape_flags(win, form, groups) | situational
        types = _types(flags, ranks_258)
        gen = gen_all
        if sc.mode == "table":
            listed = [t for t in TABLE_ORDER if t in types and t in sc.hand_types]
            if not listed:
                continue
            hand_type = max(listed, key=lambda t: (sc.hand_types[t], -TABLE_ORDER.index(t)))
            base = sc.hand_types[hand_type]
            long_paid = hand_type in ("longqidui", "qinglongqidui")
        else:
            hand_type = next(t for t in LABELS if t in types)
            base = sum(v for f, v in sc.patterns.items() if f in flags)
            long_paid = "longqidui" in flags
        if sc.long_uses_gen and long_paid and gen > 0:
            gen -= 1
        fan = base + sum(extras.get(f, 0) for f in SITUATIONAL if f in flags) + gen * extras.get("gen", 0)
        self_draw = win.kind == "self_draw"
        if self_draw and sc.self_draw_bonus == "add_fan":
            fan += 1
        capped = fan if sc.cap is None else min(fan, sc.cap)
        points = capped if sc.points == "linear" else 2 ** min(62, max(0, capped - sc.fan_offset))
        if self_draw and sc.self_draw_bonus == "add_base":
            points += 1
        order = TABLE_ORDER if sc.mode == "table" else LABELS
        reading = 3 if form == "qidui" else 0 if "duiduihu" in flags else 1 if "daiyaojiu" in flags else 2
        rank = (fan, points, -order.index(hand_type), -reading)  # full ties: docs/rules.md "Which split"
        if best is None or rank > best[0]:
            best = rank, Score(fan, capped, points, hand_type, gen, frozenset(flags))
    assert best is not None, f"not a winning hand: {win}"
    return best[1]


def check_wins(rules, wins: dict, rows=None) -> int:
    """Assert that every logged win (or those of ``rows``) equals the reference's score: fan, capped fan, points
    in base units, hand type, 根 and the set of flags. Returns the number of wins checked."""
    flags = [f for f in ("pinghu", *SHAPE[1:], *SITUATIONAL) if f in wins]
    assert len(flags) == len(SHAPE) + len(SITUATIONAL)  # the log has a column for every flag docs/spec.md names
    rows = range(len(wins["hand_id"])) if rows is None else rows
    for i in rows:
        win = win_of(wins["hand"][i], wins["melds"][i], wins["tile"][i], wins["kind"][i], wins["context"][i])
        ref = score(rules, win)
        got = (int(wins["fan"][i]), int(wins["capped_fan"][i]), int(wins["points"][i]), wins["hand_type"][i],
               int(wins["gen"][i]), frozenset(f for f in flags if wins[f][i]))
        assert got == (ref.fan, ref.capped_fan, ref.points, ref.hand_type, ref.gen, ref.flags), (i, win)
    return len(rows)


# ---- end of a hand: readiness, 退税, 查花猪, 查大叫 (docs/spec.md §2.2, §3, §5; docs/rules.md "Exhaustive draw") ----

@dataclass(frozen=True)
class EndSeat:
    """A seat at the end of a hand: concealed tiles (counts[27]) and melds as in :class:`Win`; ``void`` its declared
    void suit (0–2, ``None`` under ``void_suit: none``); ``won`` whether it has won in this hand; ``declared``
    ``"sing"``, ``"dance"`` or ``None``; ``kongs`` the income of its kongs still live, one ``{payer: amount}`` each."""
    counts: tuple[int, ...]
    melds: tuple[tuple[str, int], ...] = ()
    void: int | None = None
    won: bool = False
    declared: str | None = None
    kongs: tuple[dict[int, int], ...] = ()


def _all_kinds(seat: EndSeat) -> list[int]:
    every = list(seat.counts)
    for name, k in seat.melds:
        every[k] += 3 if name == "pung" else 4
    return every


def _suits(seat: EndSeat) -> set[int]:
    return {k // 9 for k, c in enumerate(_all_kinds(seat)) if c}


def is_huazhu(seat: EndSeat) -> bool:
    """docs/spec.md §5: tiles of all three suits (``void_suit: none``) or any tile of the declared void suit."""
    return len(_suits(seat)) == 3 if seat.void is None else seat.void in _suits(seat)


def is_winning(counts, melds, void: int | None) -> bool:
    """docs/spec.md §3: the 14 tiles (concealed ``counts`` and ``melds``) are a standard hand or seven pairs, with at
    most two suits and none of the void suit."""
    whole = EndSeat(tuple(counts), tuple(melds), void)
    win = Win(tuple(counts), tuple(melds), -1, "discard", frozenset())
    return len(_suits(whole)) <= 2 and not is_huazhu(whole) and next(_forms(win), None) is not None


def waits(seat: EndSeat) -> list[int]:
    """Kinds that complete the 13-tile hand (:func:`is_winning`), leaving out kinds the seat already holds four of,
    counting its melds (docs/spec.md §5)."""
    out = []
    for k in range(27):
        counts = list(seat.counts)
        counts[k] += 1
        if _all_kinds(seat)[k] < 4 and is_winning(counts, seat.melds, seat.void):
            out.append(k)
    return out


def chadajiao_points(rules, seat: EndSeat) -> int:
    """The most a ready hand can score (docs/spec.md §5, docs/rules.md "Shanten, waits, 查大叫"): its best wait
    as a discard win with no situational context but its 唱歌/跳舞, capped, in base units (as the engine keeps
    money); 0 when not ready."""
    context = frozenset({seat.declared} if seat.declared else ())
    best = 0
    for k in waits(seat):
        counts = list(seat.counts)
        counts[k] += 1
        best = max(best, score(rules, Win(tuple(counts), seat.melds, k, "discard", context)).points)
    return best


def end_settlement(rules, seats: list[EndSeat]) -> dict[str, list[int]]:
    """Each seat's 退税 (``refund``), 查花猪 (``huazhu``) and 查大叫 (``chadajiao``) money in base units at an
    exhaustive draw, in the order docs/spec.md §2.11 gives, among the players still in (docs/rules.md: under 血战
    and 血流 alike, those who have not won; 花猪 collected by winners only under ``huazhu_pays: all``)."""
    st = rules.settlement
    money = {"refund": [0] * 4, "huazhu": [0] * 4, "chadajiao": [0] * 4}
    pig = [not s.won and is_huazhu(s) for s in seats]
    ready = [not s.won and not pig[i] and bool(waits(s)) for i, s in enumerate(seats)]
    if st.refund_kongs_if_not_ready:
        for i, s in enumerate(seats):
            if not s.won and not ready[i]:
                for kong in s.kongs:
                    for payer, amount in kong.items():
                        money["refund"][i] -= amount
                        money["refund"][payer] += amount
    penalty = st.huazhu_penalty
    assert isinstance(penalty, int), "huazhu_penalty: cap is not modelled here"
    for p in (i for i in range(4) if pig[i]):
        for q in range(4):
            if q != p and not pig[q] and (st.huazhu_pays == "all" or not seats[q].won):
                money["huazhu"][p] -= penalty
                money["huazhu"][q] += penalty
    if st.chadajiao:
        for r in (i for i in range(4) if ready[i]):
            points = chadajiao_points(rules, seats[r])
            for q in range(4):
                if q != r and not seats[q].won and not ready[q] and not pig[q]:
                    money["chadajiao"][q] -= points
                    money["chadajiao"][r] += points
    return money
