"""``xuezhan replay``: one hand as a human would follow it, from the event log of the compiled engine.

The engine records events only when asked (``play_hands(..., record=True)``); this module replays them on
plain Python hands (:class:`HandState`), checking as it goes that every event is possible (a discarded tile is
held, nobody acts after winning — under ``mode: xueliu`` a winner plays on, but only with its locked hand —, the
strict 定缺 order holds, tiles are conserved, ...), and prints them with Chinese tile names.
The same :class:`HandState` is what the tests use to audit the engine on samples of hands.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

import numpy as np
import pyarrow.parquet as pq

from simulator import state as S
from simulator.choices import Lang
from simulator.errors import UserError
from simulator.rules import FLAG_BIT, FLAGS, P_FLAG_FAN, P_GEN_FAN, RuleSet, load_rules, validate
from simulator.schema import SCORE_COMPONENTS
from simulator.tiles import SUIT_NAMES_ZH, counts_from_str, format_counts, names_zh, parse_tile, tile_name_zh, tile_str
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


class ReplayError(UserError):
    """A replay that cannot be produced (bad seed, hand id, run directory), or a logged hand that does not
    replay to its logged result."""


class EventLogError(AssertionError):
    """The event log describes something impossible: an engine bug."""


@dataclass
class HandLog:
    """One recorded hand: its rows of the three tables and its events ``(type, seat, tile, amount, a, b)``."""

    rules: RuleSet
    hand_id: int
    seed: int
    hand: dict
    players: list[dict]
    wins: list[dict]
    events: list[tuple[int, int, int, int, int, int]]


def _rows(cols: dict, mask: np.ndarray) -> list[dict]:
    idx = np.flatnonzero(mask)
    return [{k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in cols.items()} for i in idx]


def split_logs(rules: RuleSet, seed: int, out: dict) -> list[HandLog]:
    """The per-hand logs of a recorded :func:`simulator.hands.play_hands` result."""
    ev = out["events"]
    fields = ("type", "seat", "tile", "amount", "a", "b")
    logs = []
    for row, hid in enumerate(out["hands"]["hand_id"].tolist()):
        sel = ev["hand_row"] == row
        events = list(zip(*(ev[f][sel].tolist() for f in fields), strict=True))
        logs.append(HandLog(rules, hid, seed, _rows(out["hands"], out["hands"]["hand_id"] == hid)[0],
                            _rows(out["players"], out["players"]["hand_id"] == hid),
                            _rows(out["wins"], out["wins"]["hand_id"] == hid), events))
    return logs


def record_hand(rules: RuleSet, hand_id: int, seed: int, *, duplicate: bool = False,
                dealer: int | None = None) -> HandLog:
    """Play hand ``hand_id`` of ``seed`` with the event log on; ``dealer``: the dealer seat when it does not
    follow from the hand id (a hand of a session, whose dealer came from the previous hand: read from its log)."""
    from simulator.hands import run_batch
    from simulator.records import event_columns, to_columns

    if seed < 0:
        raise ReplayError(f"--seed must be a non-negative integer, got {seed}")
    if hand_id < 0:
        raise ReplayError(f"--hand must be a non-negative integer, got {hand_id}")
    dealers = None if dealer is None else np.array([dealer], np.int64)
    from simulator.warmup import announce

    announce(rules)
    raw = run_batch(rules, np.array([hand_id], np.int64), seed, duplicate=duplicate, record=True, dealers=dealers)
    out = to_columns(raw)  # hands.play_hands, with the dealer given
    out["events"] = event_columns(raw)
    return split_logs(rules, seed, out)[0]


@dataclass
class HandState:
    """Hands replayed from events, with the checks that make the log an audit of the engine."""

    log: HandLog
    strict_void: bool
    conc: list[np.ndarray] = field(default_factory=list)
    melds: list[list[tuple[str, int]]] = field(default_factory=lambda: [[] for _ in range(4)])
    void: list[int] = field(default_factory=lambda: [-1] * 4)
    won: list[bool] = field(default_factory=lambda: [False] * 4)
    drawn: int = 0
    seen: np.ndarray = field(default_factory=lambda: np.zeros(27, np.int64))  # dealt + drawn, per kind
    last_discard: tuple[int, int] = (-1, -1)
    win_event_tile_taken: bool = False
    event_winners: set[int] = field(default_factory=set)  # winners of the latest win event
    n_wins: int = 0
    declared: list[bool] = field(default_factory=lambda: [False] * 4)  # 唱歌/跳舞: the hand is locked
    # 血流 (mode: xueliu): winners play on (``won`` stays False: it means "out of play"), locked; their winning
    # tiles are set aside. ``pool``: discards (and a robbed kong's tile) on the table, for the tile count.
    xueliu: bool = False
    has_won: list[bool] = field(default_factory=lambda: [False] * 4)
    aside: int = 0
    pool: int = 0
    last_draw: tuple[int, int] = (-1, -1)
    ended: bool = False

    def __post_init__(self) -> None:
        self.conc = [counts_from_str(p["dealt"]).astype(np.int64) for p in self.log.players]
        for c in self.conc:
            self.seen += c
        self.xueliu = self.log.rules.mode == "xueliu"

    def _fail(self, msg: str) -> None:
        raise EventLogError(f"hand {self.log.hand_id}: {msg}")

    def _take(self, seat: int, tile: int, n: int, what: str) -> None:
        if self.conc[seat][tile] < n:
            self._fail(f"seat {seat} {what} {n}× tile {tile} but holds {self.conc[seat][tile]}")
        self.conc[seat][tile] -= n

    def _active(self, seat: int, what: str) -> None:
        if self.won[seat]:
            self._fail(f"seat {seat} {what} after winning")

    def apply(self, ev: tuple[int, ...]) -> None:
        typ, seat, tile, amount, a, b = ev
        if typ == S.EV_EXCHANGE:
            self._take(seat, tile, 1, "passes")
            self.conc[a][tile] += 1
        elif typ == S.EV_VOID:
            self.void[seat] = a
        elif typ == S.EV_DRAW:
            self._active(seat, "draws")
            self.conc[seat][tile] += 1
            self.last_draw = (seat, tile)
            self.drawn += 1
            self.seen[tile] += 1
            self.win_event_tile_taken = False
            self.event_winners = set()
        elif typ == S.EV_DISCARD:
            self._active(seat, "discards")
            v = self.void[seat]
            if self.strict_void and v >= 0 and tile // 9 != v and self.conc[seat][9 * v:9 * v + 9].sum() > 0:
                self._fail(f"seat {seat} discards {tile} while holding tiles of its void suit {v}")
            if self._locked(seat) and self.last_draw != (seat, tile):
                self._fail(f"seat {seat} discards {tile} from its locked hand ({self._locked(seat)}), "
                           "not the tile it drew")
            self._take(seat, tile, 1, "discards")
            self.pool += 1
            self.last_discard = (seat, tile)
            self.win_event_tile_taken = False
            self.event_winners = set()
        elif typ == S.EV_DECLARE:
            self._active(seat, "declares")
            self.declared[seat] = True
        elif typ == S.EV_PUNG:
            self._active(seat, "pungs")
            if self._locked(seat):
                self._fail(f"seat {seat} pungs with its locked hand ({self._locked(seat)})")
            self._check_claim(seat, tile, a)
            self._take(seat, tile, 2, "pungs")
            self.pool -= 1
            self.melds[seat].append(("pung", tile))
        elif typ == S.EV_KONG:
            self._active(seat, "kongs")
            self._check_locked_kong(seat, tile, a)
            if a == 1:
                self._check_claim(seat, tile, b)
                self._take(seat, tile, 3, "konged")
                self.pool -= 1
                self.melds[seat].append(("kong", tile))
            elif a == 2:
                self._take(seat, tile, 1, "added to a kong")
                i = self.melds[seat].index(("pung", tile))
                self.melds[seat][i] = ("kong", tile)
            else:
                self._take(seat, tile, 4, "konged")
                self.melds[seat].append(("ckong", tile))
        elif typ == S.EV_ROBBED:
            self._take(seat, tile, 1, "had robbed")
            self.pool += 1  # on the table until a winner takes it
        elif typ == S.EV_WIN:
            self._win(seat, tile, a, b)
        elif typ == S.EV_PAY:
            self._check_pay(seat, a, b)
        elif typ in (S.EV_DECLINE, S.EV_LOCKED):
            self._active(seat, "declines")
        elif typ == S.EV_END:
            self.ended = True

    def _locked(self, seat: int) -> str:
        """Why the seat's hand is locked ('' when it is not): it declared ready (唱歌/跳舞), or it won under 血流
        and plays on. Either way it only discards the tile it drew and never pungs (engine.locked and the
        declared discard mask); the kongs each allows differ (:meth:`_check_locked_kong`)."""
        if self.declared[seat]:  # a declared 血流 winner: the stricter lock of the two
            return "declared ready"
        return "won, plays on" if self.xueliu and self.has_won[seat] else ""

    def _check_locked_kong(self, seat: int, tile: int, kind: int) -> None:
        """A locked hand's kong: a declared hand only a concealed kong (kind 3) of the tile it drew; a 血流
        winner also an added kong of its draw or an exposed kong of a discard (kind 1), which the engine allows
        when the waits stay the same."""
        why = self._locked(seat)
        if not why:
            return
        declared = bool(self.declared[seat])
        of_draw = self.last_draw == (seat, tile)
        if (of_draw and (kind == 3 or not declared)) or (kind == 1 and not declared):
            self._check_waits_kept(seat, tile, kind, why)
            return
        allowed = ("a concealed kong of the tile it drew" if declared
                   else "a kong of the tile it drew or of a discard")
        self._fail(f"seat {seat} konged {tile} from its locked hand ({why}), which allows only {allowed}")

    def _check_waits_kept(self, seat: int, tile: int, kind: int, why: str) -> None:
        """A locked hand's kong must leave its waits exactly as they were (docs/rules.md): the wait mask of the
        13-tile shape before (without the tile just drawn for a 加杠/暗杠) and after the kong (kind 1 直杠 of a
        discard with three in hand, 2 加杠, 3 暗杠; called before the kong is applied)."""
        from simulator.shape import MELD_CKONG, MELD_KONG, MELD_PUNG, wait_mask
        from simulator.tables import suit_table

        codes = {"pung": MELD_PUNG, "kong": MELD_KONG, "ckong": MELD_CKONG}

        def waits(conc: np.ndarray, melds: list[tuple[str, int]]) -> int:
            mk, mt = np.zeros(4, np.int8), np.zeros(4, np.int8)
            for i, (k, t) in enumerate(melds):
                mk[i], mt[i] = codes[k], t
            void = self.void[seat] if self.log.rules.void_suit != "none" else -1
            return int(wait_mask(suit_table(), conc.astype(np.uint8), mk, mt, len(melds), void))

        before = self.conc[seat].copy()
        if kind != 1:
            before[tile] -= 1  # the tile just drawn
        melds = list(self.melds[seat])
        after = before.copy()
        if kind == 2:
            melds[melds.index(("pung", tile))] = ("kong", tile)
        else:
            after[tile] -= 3
            melds.append(("kong", tile) if kind == 1 else ("ckong", tile))
        old, new = waits(before, self.melds[seat]), waits(after, melds)
        if old != new:
            self._fail(f"seat {seat}'s kong of {tile} (kind {kind}) changed the waits of its locked hand ({why}) "
                       f"from {old:#x} to {new:#x}")

    def _check_claim(self, seat: int, tile: int, src: int) -> None:
        if self.last_discard != (src, tile):
            self._fail(f"seat {seat} claims {tile} from {src}, last discard was {self.last_discard}")
        if self.strict_void and tile // 9 == self.void[seat]:
            self._fail(f"seat {seat} claims a tile of its void suit")

    def _check_pay(self, payer: int, payee: int, comp: int) -> None:
        # A winner collects for its own win (and a 呼叫转移) as it wins. Afterwards only two rules reach a
        # player who has won: 花猪 paid to it under huazhu_pays: all, and kong money returned to whoever paid
        # it (退税, 杠上炮 refund). Nothing else.
        if self.xueliu and self.ended and comp != S.C_REFUND and self._settled_after_winning(payer, payee, comp):
            self._fail(f"seat {payer} → seat {payee} component {comp} at the end, but one of them has won")
        if self.won[payer]:
            self._fail(f"seat {payer} pays after winning")
        if not self.won[payee]:
            return
        ok = ((comp in (S.C_WIN, S.C_TRANSFER) and payee in self.event_winners) or comp == S.C_REFUND
              or (comp == S.C_HUAZHU and self.log.rules.settlement.huazhu_pays == "all"))
        if not ok:
            self._fail(f"seat {payee} collects component {comp} after winning")

    def _settled_after_winning(self, payer: int, payee: int, comp: int) -> bool:
        """血流: a seat that has won is outside the end settlement (docs/rules.md), except as a payee of 花猪 under
        ``huazhu_pays: all``."""
        all_collect = comp == S.C_HUAZHU and self.log.rules.settlement.huazhu_pays == "all"
        return self.has_won[payer] or (self.has_won[payee] and not all_collect)

    def _win(self, seat: int, tile: int, kind: int, idx: int) -> None:
        self._active(seat, "wins")
        row = self.log.wins[idx]
        hand = self.conc[seat].copy()
        if kind != S.WK_SELF_DRAW:
            hand[tile] += 1
            if not self.win_event_tile_taken:  # the physical tile goes to the first winner only; a 一炮多响
                self.pool -= 1                 # partner scores the same tile without holding it
                if self.xueliu:
                    self.aside += 1
                else:
                    self.conc[seat][tile] += 1
                self.win_event_tile_taken = True
        elif self.xueliu:
            self._take(seat, tile, 1, "sets aside")
            self.aside += 1
        if not np.array_equal(hand, counts_from_str(row["hand"])):
            self._fail(f"seat {seat}'s winning hand {row['hand']} differs from the replayed hand")
        melds = ",".join(f"{k}:{tile_str(t)}" for k, t in self.melds[seat])
        if melds != row["melds"]:
            self._fail(f"seat {seat}'s melds {row['melds']!r} differ from the replayed {melds!r}")
        self.won[seat] = not self.xueliu
        self.has_won[seat] = True
        self.event_winners.add(seat)
        self.n_wins += 1

    def tiles_in_hand(self, seat: int) -> int:
        return int(self.conc[seat].sum()) + 3 * len(self.melds[seat])

    def tiles_held(self) -> int:
        """Physical tiles in the seats' hands and melds (a kong is four), set aside, and on the table."""
        melds = sum(4 if k != "pung" else 3 for ms in self.melds for k, _ in ms)
        return int(sum(c.sum() for c in self.conc)) + melds + self.aside + self.pool


def audit(log: HandLog) -> HandState:
    """Replay every event with its checks, then the end-of-hand checks: tiles conserved (dealt + drawn + left in
    the wall = 108, no kind seen more than four times), hands of the right size, the right number of wins."""
    st = HandState(log, strict_void=log.rules.void_suit == "declared")
    for ev in log.events:
        st.apply(ev)
    if 53 + st.drawn + log.hand["tiles_left"] != S.N_TILES:
        st._fail(f"53 dealt + {st.drawn} drawn + {log.hand['tiles_left']} left != 108")
    if st.seen.max() > 4:
        st._fail(f"kind {int(st.seen.argmax())} seen {int(st.seen.max())} times")
    if st.tiles_held() != 53 + st.drawn:
        st._fail(f"{st.tiles_held()} tiles in hands, melds, set aside and discards, but {53 + st.drawn} in play")
    for s in range(4):
        if not st.won[s] and st.tiles_in_hand(s) != 13:
            st._fail(f"seat {s} ends with {st.tiles_in_hand(s)} tiles")
    if st.n_wins != len(log.wins):
        st._fail(f"{st.n_wins} win events but {len(log.wins)} win rows")
    return st


# ---------------------------------------------------------------------------------------------------------
# Rendering: every phrase in both languages (``zh`` with Chinese tile names, ``en`` with the tile notation).

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


def _lang(lang: str) -> _Lang:
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
        parts.append(t("gen", n=win["gen"], fan=win["gen"] * int(params[P_GEN_FAN])))
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


def describe(log: HandLog, ev: tuple[int, ...], lang: str = "zh") -> str | None:
    """One event as a rich-markup line in ``lang`` (``None`` for events shown elsewhere)."""
    t = _lang(lang)
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
        S.EV_PAY: lambda: t("pay", seat=seat, a=a, amount=amount, comp=(COMP_ZH if t.code == "zh" else COMP_EN)[b]),
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


def _hands(log: HandLog, st: HandState, title: str, t: _Lang) -> Iterator[str]:
    yield f"[underline]{title}[/underline]"
    for s in range(4):
        if not st.won[s]:
            melds = _melds(",".join(f"{k}:{tile_str(m)}" for k, m in st.melds[s]), t)
            yield f"  {_seat(log, s, t)}: {t.tiles(st.conc[s])}{' | ' + melds if melds else ''}"


def lines(log: HandLog, lang: str = "zh") -> Iterator[str]:
    """The hand as rich-markup lines in ``lang`` (``zh`` or ``en``), in order: deal, 换三张, 定缺, the hands in
    play, every turn, the hands left at the end, settlement."""
    t = _lang(lang)
    rotation = log.hand.get("rotation", 0)
    yield t("title", rules=log.rules.name, seed=log.seed, hand=log.hand_id, deal=log.hand["deal_id"],
            dealer=log.hand["dealer"], rotation=t("rotation", r=rotation) if rotation else "")
    yield f"[underline]{t('deal_head')}[/underline]"
    for p in log.players:
        yield f"  {_seat(log, p['seat'], t)}: {t.tiles(counts_from_str(p['dealt']))}"
    st = HandState(log, strict_void=log.rules.void_suit == "declared")
    direction = log.hand["exchange"]
    direction = EXCHANGE_ZH.get(direction, "") if t.code == "zh" else direction
    headers = {S.EV_EXCHANGE: t("exchange_head", direction=direction), S.EV_VOID: t("void_head")}
    started = not any(ev[0] == S.EV_EXCHANGE for ev in log.events)  # hands in play = dealt ones without 换三张
    for ev in log.events:
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
        parts = [f"{comps[i]}{sep}{p[c]:+d}" for i, c in enumerate(SCORE_COMPONENTS) if p[c]]
        yield f"  {_seat(log, p['seat'], t)}: [bold]{p['score_total']:+d}[/bold]  {' '.join(parts)}"


# ---------------------------------------------------------------------------------------------------------
# Hands of a logged run: the rules, seed and seating recorded in the manifest, checked against the logged rows.

# Columns a replayed hand must reproduce exactly: the deal, who won, how, and every amount.
VERIFIED_HAND_COLUMNS = ("deal_id", "rotation", "dealer", "exchange", "n_winners", "n_wins", "exhaustive_draw",
                         "tiles_left", "n_kongs", "turns")
VERIFIED_PLAYER_COLUMNS = ("bot", "dealt", "won", "win_kind", "hand_type", "n_kongs", "huazhu", "declined_wins",
                           *SCORE_COMPONENTS, "score_total")


def _run_variant(run_dir: Path, variant: str | None) -> str:
    """The variant to replay: the one named, else the study's baseline, else the run's only variant."""
    if not run_dir.is_dir():
        raise ReplayError(f"--run {run_dir}: directory not found")
    from simulator import layout

    old = layout.old_layout(run_dir)
    if old:
        raise ReplayError(f"--run {old}")
    found = [layout.name_of(p) for p in layout.control_dirs(run_dir)]
    if not found:
        raise ReplayError(f"--run {run_dir}: not a run directory (no {layout.CONTROL}/variant=<name>/ subdirectories)")
    if variant is not None:
        if variant not in found:
            raise ReplayError(f"--variant {variant!r}: not in {run_dir} (has: {', '.join(found)})")
        return variant
    study = run_dir / "study.json"
    if study.is_file():
        try:
            baseline = json.loads(study.read_text(encoding="utf-8")).get("baseline")
        except (OSError, ValueError, AttributeError):
            baseline = None
        if baseline in found:
            return baseline
    if len(found) == 1:
        return found[0]
    raise ReplayError(f"--run {run_dir} holds {len(found)} variants ({', '.join(found)}): choose one with --variant")


def _logged_rows(vdir: Path, manifest: dict, table: str, hand_id: int) -> list[dict]:
    """The rows of ``hand_id`` in its chunk of ``table`` (``[]`` when the chunk is not finished: the manifest lists
    finished chunks only). The file is checked against the manifest's size and SHA-256 before it is read."""
    from simulator.layout import run_of, table_dir
    from simulator.manifest import sha256_file

    for chunk in manifest["chunks"]:
        if chunk["first"] <= hand_id <= chunk["last"]:
            path = table_dir(vdir, table) / chunk["file"]
            if not path.is_file() or sha256_file(path) != chunk["sha256"][table]:
                raise ReplayError(f"{path}: missing or damaged (run `xuezhan verify {run_of(vdir)}`)")
            return pq.read_table(path, filters=[("hand_id", "==", hand_id)]).to_pylist()
    return []


def verify(log: HandLog, hand_row: dict, player_rows: list[dict]) -> None:
    """Raise :class:`ReplayError` unless the replayed hand reproduces the logged rows (see ``VERIFIED_*``)."""
    mismatches = [f"{c}: logged {hand_row[c]!r}, replayed {log.hand[c]!r}"
                  for c in VERIFIED_HAND_COLUMNS if c in hand_row and hand_row[c] != log.hand[c]]
    for row in sorted(player_rows, key=lambda r: r["seat"]):
        mine = log.players[row["seat"]]
        mismatches += [f"seat {row['seat']} {c}: logged {row[c]!r}, replayed {mine[c]!r}"
                       for c in VERIFIED_PLAYER_COLUMNS if c in row and row[c] != mine[c]]
    if len(player_rows) != len(log.players):
        mismatches.append(f"{len(player_rows)} logged player rows, {len(log.players)} replayed")
    if mismatches:
        raise ReplayError(f"hand {log.hand_id} does not replay to its logged result ({mismatches[0]}"
                          f"{f'; +{len(mismatches) - 1} more' if len(mismatches) > 1 else ''}): the run was made "
                          "by another version of the engine")


def record_logged_hand(run_dir: str | Path, variant: str | None, hand_id: int) -> HandLog:
    """Replay hand ``hand_id`` of a run directory exactly as it was played — the variant's resolved rules
    (overrides included), seed and seating (rotated under duplicate seating) from its manifest — and verify it
    against the logged rows."""
    from simulator.runner import read_manifest, variant_dir

    run_dir = Path(run_dir)
    name = _run_variant(run_dir, variant)
    vdir = variant_dir(run_dir, name)
    manifest = read_manifest(vdir)
    if not 0 <= hand_id < int(manifest["hands"]):
        raise ReplayError(f"--hand {hand_id}: {vdir} logged hands 0..{int(manifest['hands']) - 1}")
    hands = _logged_rows(vdir, manifest, "hands", hand_id)
    if not hands and any(c["first"] <= hand_id <= c["last"] for c in manifest["chunks"]):
        raise ReplayError(f"--hand {hand_id}: not played in {vdir} (its session stopped earlier, a player broke)")
    if not hands:
        raise ReplayError(f"--hand {hand_id}: its chunk in {vdir} is not finished (rerun the simulation with --resume)")
    rules = validate({**manifest["rules"], "name": name}, f"{vdir} manifest")  # the name is not part of the game
    dealer = int(hands[0]["dealer"]) if rules.session is not None else None  # chained from the previous hand
    log = record_hand(rules, hand_id, int(manifest["seed"]), duplicate=bool(manifest["duplicate"]), dealer=dealer)
    verify(log, hands[0], _logged_rows(vdir, manifest, "players", hand_id))
    return log


def show(log: HandLog, lang: str = "zh") -> None:
    """Print a hand's lines on the terminal."""
    from rich.console import Console

    _lang(lang)
    console = Console(highlight=False, soft_wrap=True)
    for line in lines(log, lang):
        console.print(line)


def replay(config: str, seed: int, hand_id: int = 0, overrides: list[str] | None = None, *,
           duplicate: bool = False, lang: str = "zh") -> None:
    """Print hand ``hand_id`` of ``seed`` under rule set ``config`` (name or path); ``duplicate``: the seating
    of duplicate play (hand_id = 4·deal_id + rotation)."""
    _lang(lang)
    show(record_hand(load_rules(config, overrides), hand_id, seed, duplicate=duplicate), lang)
