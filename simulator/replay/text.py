"""A recorded hand as text: every event as one rich-markup line (:func:`describe`) and the whole hand in order
(:func:`lines`), every phrase in both languages (``zh`` with Chinese tile names, ``en`` with the tile notation).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import get_args

import numpy as np

from simulator.choices import Lang
from simulator.kernel import state as S
from simulator.kernel.tiles import (
    SUIT_NAMES_ZH,
    counts_from_str,
    format_counts,
    names_zh,
    parse_tile,
    tile_name_zh,
    tile_str,
)
from simulator.logs.schema import SCORE_COMPONENTS
from simulator.replay.audit import ReplayedHand
from simulator.replay.log import HandLog, ReplayError
from simulator.rules import FLAG_BIT, FLAGS, P_FLAG_FAN, SLOT
from simulator.vocab import FLAG_ZH, HAND_TYPE_ZH, MELD_EN, MELD_ZH

KONG_ZH = {1: "直杠", 2: "加杠", 3: "暗杠"}
COMP_ZH = ("胡牌", "刮风下雨", "呼叫转移", "查花猪", "查大叫", "退税")
WIN_ZH = {"discard": "点炮", "self_draw": "自摸", "rob_kong": "抢杠胡"}
EXCHANGE_ZH = {"clockwise": "顺时针", "counterclockwise": "逆时针", "opposite": "对家"}
# The expert's reason for a discard (the code it returned, logged in the discard event's ``a``; see
# simulator.bots.expert.discard_reason), in the order of its R_* codes 1..8
REASON_ZH = ("牌效最优", "做大牌", "保持下叫", "打缺门", "清第三门 (防花猪)", "弃和防守", "同值选安全",
             "随机 (temperature)")
REASON_EN = ("best value", "aiming for a big hand", "keeping 下叫 (ready)", "discarding the void suit",
             "clearing the third suit (花猪)", "folding (deal-in risk)", "the safer of equal-value tiles",
             "noise (temperature)")
LANGS = get_args(Lang)  # ("zh", "en")
SUIT_NAMES_EN = ("characters (m)", "dots (p)", "bamboo (s)")
KONG_EN = {1: "kongs (exposed)", 2: "adds to a kong", 3: "kongs (concealed)"}
COMP_EN = ("win", "kong money", "kong transfer", "flower pig", "not ready", "refund")
WIN_EN = {"discard": "on a discard", "self_draw": "self-draw", "rob_kong": "robbing a kong"}
TEXT = {
    "zh": {
        "seat": "[bold]座{s}[/bold]{dealer}({bot})", "dealer": "庄",
        "exchange": "  {who} → 座{a}: {name}", "void": "  {who} 缺 {suit}",
        "draw": "{who} 摸{after} {name}", "after_kong": "杠后牌", "discard": "{who} 打 [cyan]{name}[/cyan]",
        "pung": "{who} [yellow]碰[/yellow] {name} (座{a})", "kong": "{who} [yellow]{kong}[/yellow] {name}{src}",
        "kong_src": " (座{b})", "robbed": "{who} 的加杠 {name} 被抢", "pay": "    座{seat} → 座{a}: {amount} ({comp})",
        "decline": "{who} 过胡 {name} ({amount}番)", "declare": "{who} [bold green]{kind}[/bold green]{waits}",
        "sing": "唱歌", "dance": "跳舞", "waits": ": 叫 {names}", "locked": "{who} 过水不胡: 不能胡 {name}",
        "huazhu": "{who} [magenta]花猪[/magenta]", "ready": "{who} 下叫 (最大 {amount}分)",
        "end": "[underline]{end}[/underline] 牌墙剩 {amount} 张", "draw_end": "流局", "normal_end": "结束",
        "settle_more": " — 退税 / 查花猪 / 查大叫:",
        "win": "[bold red]{who} 胡 {name} ({kind})[/bold red] {hand}{melds}\n    {breakdown}",
        "breakdown": "{hand_type}: {parts} = {fan}番{capped}, 每家{points}分", "capped": " → 封顶{capped}番",
        "gen": "根×{n}+{fan}", "nth_win": ", 第{n}胡, 胡牌放一边",
        "title": "[bold]{rules}[/bold] seed {seed} hand {hand} · deal {deal} · 庄 = 座{dealer}{rotation}",
        "rotation": " · 轮转 {r}", "deal_head": "配牌", "exchange_head": "换三张 ({direction})", "void_head": "定缺",
        "after_exchange": "换牌后手牌", "left": "剩余手牌", "settlement": "结算",
        "search": "    [dim]· 搜索 ({samples}次推演, 平均得分): {means} → {verdict}[/dim]",
        "search_policy": " (专家)", "search_keep": "从专家", "search_pass": "过", "search_win": "胡",
        "search_kong": "杠", "search_pung": "碰", "search_gain": "{name}, 比专家 {gain:+.2f} ± {se:.2f} ({n}次)",
    },
    "en": {
        "seat": "[bold]seat {s}[/bold]{dealer} ({bot})", "dealer": " dealer",
        "exchange": "  {who} → seat {a}: {name}", "void": "  {who} voids {suit}",
        "draw": "{who} draws{after} {name}", "after_kong": " after a kong",
        "discard": "{who} discards [cyan]{name}[/cyan]",
        "pung": "{who} [yellow]pungs[/yellow] {name} (from seat {a})",
        "kong": "{who} [yellow]{kong}[/yellow] {name}{src}", "kong_src": " (from seat {b})",
        "robbed": "{who}'s added kong {name} is robbed", "pay": "    seat {seat} → seat {a}: {amount} ({comp})",
        "decline": "{who} declines a win on {name} ({amount} fan)",
        "declare": "{who} [bold green]{kind}[/bold green]{waits}", "sing": "sings (declares ready)",
        "dance": "dances (declares ready, shows the waits)", "waits": ": waits on {names}",
        "locked": "{who} may not win on {name} (pass lock)", "huazhu": "{who} is a [magenta]flower pig[/magenta]",
        "ready": "{who} is ready (best {amount} points)",
        "end": "[underline]{end}[/underline], {amount} tiles left in the wall", "draw_end": "Exhaustive draw",
        "normal_end": "End", "settle_more": " — refunds / flower pigs / not-ready penalties:",
        "win": "[bold red]{who} wins on {name} ({kind})[/bold red] {hand}{melds}\n    {breakdown}",
        "breakdown": "{hand_type}: {parts} = {fan} fan{capped}, {points} from each payer",
        "capped": " → capped at {capped} fan", "gen": "gen×{n}+{fan}",
        "nth_win": ", win {n} of this seat, the tile set aside",
        "title": "[bold]{rules}[/bold] seed {seed} hand {hand} · deal {deal} · dealer = seat {dealer}{rotation}",
        "rotation": " · rotation {r}", "deal_head": "Deal", "exchange_head": "Exchange three ({direction})",
        "void_head": "Void suits", "after_exchange": "Hands after the exchange", "left": "Hands left",
        "settlement": "Settlement",
        "search": "    [dim]· search ({samples} rollouts each, mean score): {means} → {verdict}[/dim]",
        "search_policy": " (the expert's)", "search_keep": "the expert's choice", "search_pass": "pass",
        "search_win": "win", "search_kong": "kong ", "search_pung": "pung",
        "search_gain": "{name}, {gain:+.2f} ± {se:.2f} over the expert's ({n} samples)",
    },
}


@dataclass(frozen=True)
class _Lang:
    """The phrases and names of one display language."""

    code: str

    def __call__(self, key: str, **kw) -> str:
        return TEXT[self.code][key].format(**kw)

    def tile(self, k: int) -> str:
        return tile_name_zh(k) if self.code == "zh" else tile_str(k)

    def tiles(self, counts: np.ndarray) -> str:
        kinds = np.repeat(np.arange(27), np.asarray(counts, dtype=np.int64))
        return names_zh(kinds) if self.code == "zh" else format_counts(counts)

    def suit(self, s: int) -> str:
        return SUIT_NAMES_ZH[s] if self.code == "zh" else SUIT_NAMES_EN[s]

    def flag(self, f: str) -> str:
        return FLAG_ZH[f] if self.code == "zh" else f

    def hand_type(self, t: str) -> str:
        return HAND_TYPE_ZH[t] if self.code == "zh" else t

    def meld(self, kind: str, k: int) -> str:
        return f"{MELD_ZH[kind]}{self.tile(k)}" if self.code == "zh" else f"{MELD_EN[kind]} {self.tile(k)}"


def language(lang: str) -> _Lang:
    if lang not in LANGS:
        raise ReplayError(f"--lang {lang!r}: expected one of {', '.join(LANGS)}")
    return _Lang(lang)


def _seat(log: HandLog, s: int, t: _Lang) -> str:
    dealer = t("dealer") if s == log.hand["dealer"] else ""
    return t("seat", s=s, dealer=dealer, bot=log.players[s]["bot"])


def _fan_breakdown(log: HandLog, win: dict, t: _Lang) -> str:
    params = log.rules.to_arrays()
    parts = []
    for f in FLAGS:
        if win[f]:
            fan = int(params[P_FLAG_FAN + FLAG_BIT[f]])
            parts.append(f"{t.flag(f)}{'+' + str(fan) if fan else ''}")
    if win["gen"] > 0:
        parts.append(t("gen", n=win["gen"], fan=win["gen"] * int(params[SLOT["scoring.extras.gen"]])))
    capped = t("capped", capped=win["capped_fan"]) if win["capped_fan"] != win["fan"] else ""
    return t("breakdown", hand_type=t.hand_type(win["hand_type"]), parts=" ".join(parts), fan=win["fan"],
             capped=capped, points=win["points"])


def _melds(melds: str, t: _Lang) -> str:
    return " ".join(t.meld(kind, parse_tile(k)) for kind, k in (m.split(":") for m in melds.split(",") if m))


def _win_text(log: HandLog, seat: int, tile: int, b: int, t: _Lang) -> str:
    win = log.wins[b]
    melds = _melds(win["melds"], t)
    kind = WIN_ZH[win["kind"]] if t.code == "zh" else WIN_EN[win["kind"]]
    if log.rules.mode == "xueliu":  # 血流: which of the seat's wins this is; the tile is set aside
        kind += t("nth_win", n=sum(1 for w in log.wins[:b + 1] if w["winner"] == seat))
    return t("win", who=_seat(log, seat, t), name=t.tile(tile), kind=kind, hand=t.tiles(counts_from_str(win["hand"])),
             melds=" | " + melds if melds else "", breakdown=_fan_breakdown(log, win, t))


def _declare_text(who: str, waits: int, kind: int, t: _Lang) -> str:
    """唱歌 (the waits stay hidden) or 跳舞 (the waits shown to the table)."""
    dance = kind == 2
    names = " ".join(t.tile(k) for k in range(27) if (waits >> k) & 1)
    return t("declare", who=who, kind=t("dance" if dance else "sing"), waits=t("waits", names=names) if dance else "")


def _reason(code: int, t: _Lang) -> str:
    """The expert's reason for a discard as a dim suffix (nothing for other bots, code 0)."""
    if code <= 0:
        return ""
    return f"  [dim]· {(REASON_ZH if t.code == 'zh' else REASON_EN)[code - 1]}[/dim]"


SEARCH_SHOWN = 4  # candidates shown per searched decision (best first; the policy's answer always)


def _action(a: int, t: _Lang) -> str:
    if S.A_TILE0 <= a < S.A_TILE0 + S.N_KINDS:
        return t.tile(a - S.A_TILE0)
    return {S.A_PASS: t("search_pass"), S.A_WIN: t("search_win"), S.A_DECLARE: t("sing"),
            S.A_DANCE: t("dance"), S.A_PUNG: t("search_pung"), S.A_KONG: t("search_kong").strip()}.get(a, str(a))


def search_note(note: tuple, t: _Lang) -> str:
    """A searched decision (``simulator.search.NOTE_FIELDS``): the candidates' mean rollout scores and the verdict."""
    _ev, _seat, decision, _left, samples, means, policy, chosen, gain, se, n = note
    kong = t("search_kong") if decision == "self_kong" else ""

    def name(a: int) -> str:
        return (kong if S.A_TILE0 <= a < S.A_TILE0 + S.N_KINDS else "") + _action(a, t)

    shown = [m for i, m in enumerate(means) if i < SEARCH_SHOWN or m[0] == policy]
    text = ", ".join(f"{name(a)} {v:+.2f}{t('search_policy') if a == policy else ''}" for a, v in shown)
    verdict = (t("search_keep") if chosen == policy else
               t("search_gain", name=name(chosen), gain=gain, se=se, n=n))
    return t("search", samples=samples, means=text, verdict=verdict)


def describe(log: HandLog, ev: tuple[int, ...], lang: str = "zh") -> str | None:
    """One event as a rich-markup line in ``lang`` (``None`` for events shown elsewhere)."""
    t = language(lang)
    typ, seat, tile, amount, a, b = ev
    who = _seat(log, seat, t) if seat >= 0 else ""
    name = t.tile(tile) if tile >= 0 else ""
    texts = {
        S.EV_EXCHANGE: lambda: t("exchange", who=who, a=a, name=name),
        S.EV_VOID: lambda: t("void", who=who, suit=t.suit(a)),
        S.EV_DRAW: lambda: t("draw", who=who, after=t("after_kong") if a else "", name=name),
        S.EV_DISCARD: lambda: t("discard", who=who, name=name) + _reason(a, t),
        S.EV_PUNG: lambda: t("pung", who=who, name=name, a=a),
        S.EV_KONG: lambda: t("kong", who=who, kong=KONG_ZH[a] if t.code == "zh" else KONG_EN[a], name=name,
                             src=t("kong_src", b=b) if a == 1 else ""),
        S.EV_ROBBED: lambda: t("robbed", who=who, name=name),
        S.EV_PAY: lambda: t("pay", seat=seat, a=a, amount=_money(log, amount, ""),
                            comp=(COMP_ZH if t.code == "zh" else COMP_EN)[b]),
        S.EV_WIN: lambda: _win_text(log, seat, tile, b, t),
        S.EV_DECLINE: lambda: t("decline", who=who, name=name, amount=amount),
        S.EV_LOCKED: lambda: t("locked", who=who, name=name),
        S.EV_DECLARE: lambda: _declare_text(who, amount, a, t),
        S.EV_HUAZHU: lambda: t("huazhu", who=who),
        S.EV_READY: lambda: t("ready", who=who, amount=amount),
        S.EV_END: lambda: (t("end", end=t("draw_end") if a else t("normal_end"), amount=amount)
                           + (t("settle_more") if a else "")),
    }
    text = texts.get(typ)
    return text() if text is not None else None


def _money(log: HandLog, units: int, sign: str = "+") -> str:
    """An amount of money units (payments, scores) in base units, as the analysis shows them: ``+4``, or ``+0.09``
    under ``settlement.money_scale``."""
    v = float(log.rules.base_units(units))
    return format(int(v) if v.is_integer() else v, sign)


def _hands(log: HandLog, st: ReplayedHand, title: str, t: _Lang) -> Iterator[str]:
    yield f"[underline]{title}[/underline]"
    for s in range(4):
        if not st.won[s]:
            melds = _melds(",".join(f"{k}:{tile_str(m)}" for k, m in st.melds[s]), t)
            yield f"  {_seat(log, s, t)}: {t.tiles(st.conc[s])}{' | ' + melds if melds else ''}"


def lines(log: HandLog, lang: str = "zh") -> Iterator[str]:
    """The hand as rich-markup lines in ``lang`` (``zh`` or ``en``), in order: deal, 换三张, 定缺, the hands in
    play, every turn, the hands left at the end, settlement."""
    t = language(lang)
    rotation = log.hand.get("rotation", 0)
    yield t("title", rules=log.rules.name, seed=log.seed, hand=log.hand_id, deal=log.hand["deal_id"],
            dealer=log.hand["dealer"], rotation=t("rotation", r=rotation) if rotation else "")
    yield f"[underline]{t('deal_head')}[/underline]"
    for p in log.players:
        yield f"  {_seat(log, p['seat'], t)}: {t.tiles(counts_from_str(p['dealt']))}"
    st = ReplayedHand(log, strict_void=log.rules.void_suit == "declared")
    direction = log.hand["exchange"]
    direction = EXCHANGE_ZH.get(direction, "") if t.code == "zh" else direction
    headers = {S.EV_EXCHANGE: t("exchange_head", direction=direction), S.EV_VOID: t("void_head")}
    started = not any(ev[0] == S.EV_EXCHANGE for ev in log.events)  # hands in play = dealt ones without 换三张
    notes = list(log.notes)  # shown before the event their decision led to
    for i, ev in enumerate(log.events):
        while notes and notes[0][0] <= i:
            yield search_note(notes.pop(0), t)
        if ev[0] in headers:
            yield f"[underline]{headers.pop(ev[0])}[/underline]"
        if not started and ev[0] in (S.EV_DRAW, S.EV_DISCARD, S.EV_KONG, S.EV_WIN):
            started = True
            yield from _hands(log, st, t("after_exchange"), t)
        if ev[0] == S.EV_END:
            yield from _hands(log, st, t("left"), t)
        st.apply(ev)
        text = describe(log, ev, lang)
        if text is not None:
            yield text
    yield f"[underline]{t('settlement')}[/underline]"
    comps = COMP_ZH if t.code == "zh" else COMP_EN
    for p in log.players:
        sep = "" if t.code == "zh" else " "
        parts = [f"{comps[i]}{sep}{_money(log, p[c])}" for i, c in enumerate(SCORE_COMPONENTS) if p[c]]
        yield f"  {_seat(log, p['seat'], t)}: [bold]{_money(log, p['score_total'])}[/bold]  {' '.join(parts)}"
