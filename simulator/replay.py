"""``xuezhan replay``: one hand as a human would follow it, from the event log of the compiled engine.

The engine records events only when asked (``play_hands(..., record=True)``); this module replays them on
plain Python hands (:class:`HandState`), checking as it goes that every event is possible (a discarded tile is
held, nobody acts after winning, the strict 定缺 order holds, ...), and prints them with Chinese tile names.
The same :class:`HandState` is what the tests use to audit the engine on samples of hands.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from simulator import state as S
from simulator.errors import UserError
from simulator.rules import FLAG_BIT, FLAGS, P_FLAG_FAN, P_GEN_FAN, RuleSet, load_rules
from simulator.schema import SCORE_COMPONENTS
from simulator.scoring import FLAG_ZH, HAND_TYPE_ZH
from simulator.tiles import SUIT_NAMES_ZH, counts_from_str, names_zh, parse_tile, tile_name_zh, tile_str

KONG_ZH = {1: "直杠", 2: "加杠", 3: "暗杠"}
MELD_ZH = {"pung": "碰", "kong": "明杠", "ckong": "暗杠"}
COMP_ZH = ("胡牌", "刮风下雨", "呼叫转移", "查花猪", "查大叫", "退税")
WIN_ZH = {"discard": "点炮", "self_draw": "自摸", "rob_kong": "抢杠胡"}
EXCHANGE_ZH = {"clockwise": "顺时针", "counterclockwise": "逆时针", "opposite": "对家"}


class ReplayError(UserError):
    """A replay that cannot be produced (bad seed or hand id)."""


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
    """The per-hand logs of a recorded :func:`simulator.engine.play_hands` result."""
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


def record_hand(rules: RuleSet, hand_id: int, seed: int, *, duplicate: bool = False) -> HandLog:
    """Play hand ``hand_id`` of ``seed`` with the event log on."""
    from simulator.engine import play_hands

    if seed < 0:
        raise ReplayError(f"--seed must be a non-negative integer, got {seed}")
    if hand_id < 0:
        raise ReplayError(f"--hand must be a non-negative integer, got {hand_id}")
    out = play_hands(rules, np.array([hand_id], np.int64), seed, duplicate=duplicate, record=True)
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

    def __post_init__(self) -> None:
        self.conc = [counts_from_str(p["dealt"]).astype(np.int64) for p in self.log.players]
        for c in self.conc:
            self.seen += c

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
            self.drawn += 1
            self.seen[tile] += 1
            self.win_event_tile_taken = False
            self.event_winners = set()
        elif typ == S.EV_DISCARD:
            self._active(seat, "discards")
            v = self.void[seat]
            if self.strict_void and v >= 0 and tile // 9 != v and self.conc[seat][9 * v:9 * v + 9].sum() > 0:
                self._fail(f"seat {seat} discards {tile} while holding tiles of its void suit {v}")
            self._take(seat, tile, 1, "discards")
            self.last_discard = (seat, tile)
            self.win_event_tile_taken = False
            self.event_winners = set()
        elif typ == S.EV_PUNG:
            self._active(seat, "pungs")
            self._check_claim(seat, tile, a)
            self._take(seat, tile, 2, "pungs")
            self.melds[seat].append(("pung", tile))
        elif typ == S.EV_KONG:
            self._active(seat, "kongs")
            if a == 1:
                self._check_claim(seat, tile, b)
                self._take(seat, tile, 3, "konged")
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
        elif typ == S.EV_WIN:
            self._win(seat, tile, a, b)
        elif typ == S.EV_PAY:
            self._check_pay(seat, a, b)
        elif typ in (S.EV_DECLINE, S.EV_LOCKED):
            self._active(seat, "declines")

    def _check_claim(self, seat: int, tile: int, src: int) -> None:
        if self.last_discard != (src, tile):
            self._fail(f"seat {seat} claims {tile} from {src}, last discard was {self.last_discard}")
        if self.strict_void and tile // 9 == self.void[seat]:
            self._fail(f"seat {seat} claims a tile of its void suit")

    def _check_pay(self, payer: int, payee: int, comp: int) -> None:
        # A winner collects for its own win (and a 呼叫转移) as it wins. Afterwards only two rules reach a
        # player who has won: 花猪 paid to it under huazhu_pays: all, and kong money returned to whoever paid
        # it (退税, 杠上炮 refund). Nothing else.
        if self.won[payer]:
            self._fail(f"seat {payer} pays after winning")
        if not self.won[payee]:
            return
        ok = ((comp in (S.C_WIN, S.C_TRANSFER) and payee in self.event_winners) or comp == S.C_REFUND
              or (comp == S.C_HUAZHU and self.log.rules.settlement.huazhu_pays == "all"))
        if not ok:
            self._fail(f"seat {payee} collects component {comp} after winning")

    def _win(self, seat: int, tile: int, kind: int, idx: int) -> None:
        self._active(seat, "wins")
        row = self.log.wins[idx]
        hand = self.conc[seat].copy()
        if kind != S.WK_SELF_DRAW:
            hand[tile] += 1
            if not self.win_event_tile_taken:  # the physical tile goes to the first winner only; a 一炮多响
                self.conc[seat][tile] += 1    # partner scores the same tile without holding it
                self.win_event_tile_taken = True
        if not np.array_equal(hand, counts_from_str(row["hand"])):
            self._fail(f"seat {seat}'s winning hand {row['hand']} differs from the replayed hand")
        melds = ",".join(f"{k}:{tile_str(t)}" for k, t in self.melds[seat])
        if melds != row["melds"]:
            self._fail(f"seat {seat}'s melds {row['melds']!r} differ from the replayed {melds!r}")
        self.won[seat] = True
        self.event_winners.add(seat)
        self.n_wins += 1

    def tiles_in_hand(self, seat: int) -> int:
        return int(self.conc[seat].sum()) + 3 * len(self.melds[seat])


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
    for s in range(4):
        if not st.won[s] and st.tiles_in_hand(s) != 13:
            st._fail(f"seat {s} ends with {st.tiles_in_hand(s)} tiles")
    if st.n_wins != len(log.wins):
        st._fail(f"{st.n_wins} win events but {len(log.wins)} win rows")
    return st


# ---------------------------------------------------------------------------------------------------------
# Rendering

def _seat(log: HandLog, s: int) -> str:
    dealer = "庄" if s == log.hand["dealer"] else ""
    return f"[bold]座{s}[/bold]{dealer}({log.players[s]['bot']})"


def _fan_breakdown(log: HandLog, win: dict) -> str:
    params = log.rules.to_arrays()
    parts = []
    for f in FLAGS:
        if win[f]:
            fan = int(params[P_FLAG_FAN + FLAG_BIT[f]])
            parts.append(f"{FLAG_ZH[f]}{'+' + str(fan) if fan else ''}")
    if win["gen"] > 0:
        parts.append(f"根×{win['gen']}+{win['gen'] * int(params[P_GEN_FAN])}")
    capped = f" → 封顶{win['capped_fan']}番" if win["capped_fan"] != win["fan"] else ""
    return (f"{HAND_TYPE_ZH[win['hand_type']]}: {' '.join(parts)} = {win['fan']}番{capped}, "
            f"每家{win['points']}分")


def _names(counts: np.ndarray) -> str:
    return names_zh(np.repeat(np.arange(27), np.asarray(counts, dtype=np.int64)))


def _melds_zh(melds: str) -> str:
    return " ".join(f"{MELD_ZH[kind]}{tile_name_zh(parse_tile(t))}"
                    for kind, t in (m.split(":") for m in melds.split(",") if m))


def _win_text(log: HandLog, seat: int, tile: int, b: int) -> str:
    win = log.wins[b]
    melds = _melds_zh(win["melds"])
    return (f"[bold red]{_seat(log, seat)} 胡 {tile_name_zh(tile)} ({WIN_ZH[win['kind']]})[/bold red] "
            f"{_names(counts_from_str(win['hand']))}{' | ' + melds if melds else ''}\n"
            f"    {_fan_breakdown(log, win)}")


def describe(log: HandLog, ev: tuple[int, ...]) -> str | None:
    """One event as a rich-markup line (``None`` for events shown elsewhere)."""
    typ, seat, tile, amount, a, b = ev
    who = _seat(log, seat) if seat >= 0 else ""
    name = tile_name_zh(tile) if tile >= 0 else ""
    texts = {
        S.EV_EXCHANGE: lambda: f"  {who} → 座{a}: {name}",
        S.EV_VOID: lambda: f"  {who} 缺 {SUIT_NAMES_ZH[a]}",
        S.EV_DRAW: lambda: f"{who} 摸{'杠后牌' if a else ''} {name}",
        S.EV_DISCARD: lambda: f"{who} 打 [cyan]{name}[/cyan]",
        S.EV_PUNG: lambda: f"{who} [yellow]碰[/yellow] {name} (座{a})",
        S.EV_KONG: lambda: f"{who} [yellow]{KONG_ZH[a]}[/yellow] {name}{f' (座{b})' if a == 1 else ''}",
        S.EV_ROBBED: lambda: f"{who} 的加杠 {name} 被抢",
        S.EV_PAY: lambda: f"    座{seat} → 座{a}: {amount} ({COMP_ZH[b]})",
        S.EV_WIN: lambda: _win_text(log, seat, tile, b),
        S.EV_DECLINE: lambda: f"{who} 过胡 {name} ({amount}番)",
        S.EV_LOCKED: lambda: f"{who} 过水不胡: 不能胡 {name}",
        S.EV_HUAZHU: lambda: f"{who} [magenta]花猪[/magenta]",
        S.EV_READY: lambda: f"{who} 下叫 (最大 {amount}分)",
        S.EV_END: lambda: (f"[underline]{'流局' if a else '结束'}[/underline] 牌墙剩 {amount} 张"
                           + (" — 退税 / 查花猪 / 查大叫:" if a else "")),
    }
    text = texts.get(typ)
    return text() if text is not None else None


def _hands(log: HandLog, st: HandState, title: str) -> Iterator[str]:
    yield f"[underline]{title}[/underline]"
    for s in range(4):
        if not st.won[s]:
            melds = _melds_zh(",".join(f"{k}:{tile_str(t)}" for k, t in st.melds[s]))
            yield f"  {_seat(log, s)}: {_names(st.conc[s])}{' | ' + melds if melds else ''}"


def lines(log: HandLog) -> Iterator[str]:
    """The hand as rich-markup lines, in order: deal, 换三张, 定缺, the hands in play, every turn, the hands
    left at the end, settlement."""
    yield (f"[bold]{log.rules.name}[/bold] seed {log.seed} hand {log.hand_id} · deal {log.hand['deal_id']} · "
           f"庄 = 座{log.hand['dealer']}")
    yield "[underline]配牌[/underline]"
    for p in log.players:
        yield f"  {_seat(log, p['seat'])}: {_names(counts_from_str(p['dealt']))}"
    st = HandState(log, strict_void=log.rules.void_suit == "declared")
    headers = {S.EV_EXCHANGE: f"换三张 ({EXCHANGE_ZH.get(log.hand['exchange'], '')})", S.EV_VOID: "定缺"}
    started = not any(ev[0] == S.EV_EXCHANGE for ev in log.events)  # hands in play = dealt ones without 换三张
    for ev in log.events:
        if ev[0] in headers:
            yield f"[underline]{headers.pop(ev[0])}[/underline]"
        if not started and ev[0] in (S.EV_DRAW, S.EV_DISCARD, S.EV_KONG, S.EV_WIN):
            started = True
            yield from _hands(log, st, "换牌后手牌")
        if ev[0] == S.EV_END:
            yield from _hands(log, st, "剩余手牌")
        st.apply(ev)
        text = describe(log, ev)
        if text is not None:
            yield text
    yield "[underline]结算[/underline]"
    for p in log.players:
        parts = [f"{COMP_ZH[i]}{p[c]:+d}" for i, c in enumerate(SCORE_COMPONENTS) if p[c]]
        yield f"  {_seat(log, p['seat'])}: [bold]{p['score_total']:+d}[/bold]  {' '.join(parts)}"


def replay(config: str, seed: int, hand_id: int = 0, overrides: list[str] | None = None) -> None:
    """Print hand ``hand_id`` of ``seed`` under rule set ``config`` (name or path)."""
    from rich.console import Console

    rules = load_rules(config, overrides)
    log = record_hand(rules, hand_id, seed)
    console = Console(highlight=False, soft_wrap=True)
    for line in lines(log):
        console.print(line)
