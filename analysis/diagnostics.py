"""Does a comparison compare anything? Flags variants that played exactly like the baseline, or whose changed
rule never had a chance to act, with the reason and what to change (reads the logs only).

First, for every variant, the baseline included: **adapted players that may not fit** — a seated tuned file
(``params_from``) whose weights were tuned on another version of the expert or of the rule set, as the run's own
check recorded it in the manifest (``stale``; key ``seats``: :func:`stale_findings`). Then two checks per variant,
against the baseline, on the hands both logged:

- **identical play**: the ``hands``, ``players`` and ``wins`` rows of every hand equal the baseline's (every
  decision and every amount the same), so every paired difference is exactly zero by construction;
- **rule never fired**: for each rule key that differs from the baseline (from the manifests), a log-based count
  of the occasions on which that rule could act — 花猪 penalties paid, wins declined (the pass lock and 最后N张必胡
  act only after a decline), wins above the lower cap, wins with the 海底 flag, ... — in *either* arm. A count of
  zero means the rule never mattered in these hands, whatever the report's intervals say. Sessions too:
  ``session.stop_when_broke`` with no session cut short, a ``session.dealer`` rule whose dealers all equal
  rotate's, a ``session.bankroll`` that no balance ever exhausted.

:func:`diagnose` returns one :class:`Finding` per problem; :func:`differing_hands` counts the hands on which a
variant's play differs from the baseline's. ``xuezhan study`` prints the findings and the report shows them
first. Keys without a log-based check (``void_suit``, ``exchange_three``, ``mode``, a seat's ``bot``) act in
every hand and are never flagged on their own; a variant that changes only ``economy.*`` or ``scoring.base`` plays
like the baseline by construction (coins and score units only), which its finding says. User guide: ``docs/studies.md``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from analysis.cells import baseline_of
from analysis.load import Run, as_run
from simulator.rules import flat_keys

# Row keys of each log table: what identifies a row across variants.
_VALUE_BOT = "value"
_DEFENSIVE_BOT = "defensive"
_EXPERT_BOT = "expert"
_NAMES_ZH = {"haidilaoyue": "海底捞月", "haidipao": "海底炮", "gangshanghua": "杠上花", "gangshangpao": "杠上炮",
             "qiangganghu": "抢杠胡", "tianhu": "天胡", "dihu": "地胡", "menqing": "门清", "zhongzhang": "中张",
             "zimo": "自摸", "longqidui": "龙七对", "qingyise": "清一色", "duiduihu": "对对胡", "qidui": "七对",
             "daiyaojiu": "带幺九", "jiangdui": "将对", "jingou": "金钩钓", "shibaluohan": "十八罗汉",
             "pinghu": "平胡", "sing": "唱歌", "dance": "跳舞"}
_MORE_HANDS = "it is rare: simulate more hands (--hands) before reading the difference"


@dataclass(frozen=True)
class Finding:
    """One problem with a variant's comparison to the baseline.

    ``key``: the dotted rule key concerned (``None``: the variant as a whole); ``problem``: what the logs show,
    with counts; ``advice``: what to change so that the comparison measures something."""

    variant: str
    key: str | None
    problem: str
    advice: str

    def text(self) -> str:
        """One line: ``variant [key]: problem. What to change: advice.``"""
        where = f"{self.variant} [{self.key}]" if self.key else self.variant
        return f"{where}: {self.problem}. What to change: {self.advice}."


# ---------------------------------------------------------------------------------------------------------
# Changed keys


def changed_keys(base_rules: dict, rules: dict) -> dict[str, tuple[Any, Any]]:
    """``{dotted key: (baseline value, variant value)}`` for every rule key that differs (name and description
    excluded; a key missing on one side counts as ``None``)."""
    a, b = flat_keys(base_rules), flat_keys(rules)
    keys = sorted((a.keys() | b.keys()) - {"name", "description"})
    return {k: (a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)}


# ---------------------------------------------------------------------------------------------------------
# Identical play


def differing_hands(run: Run, variant: str, baseline: str, what: str = "play") -> tuple[int, int]:
    """``(hands that differ, hands logged by both)``. ``what="play"``: the hands on which any decision or its
    outcome differs (:data:`analysis.play.PLAY`: discards, kongs, declines, wins — not payments); ``"any"``:
    any column of any of the hand's rows in ``hands``, ``players`` or ``wins`` (scores included; a session's
    running balance excluded), or a win in only one of them."""
    from analysis.play import PLAY, hand_differences, pair_differences

    if what == "play":
        k, n, _ = hand_differences(run, variant, baseline, PLAY)
    elif what == "any":  # a session's running balance differs after any earlier difference: not this hand's play
        _, n, _, k = pair_differences(run, [(baseline, variant)])[(baseline, variant)]
    else:
        raise ValueError(f"what={what!r}: expected 'play' or 'any'")
    return k, n


# ---------------------------------------------------------------------------------------------------------
# Did a changed rule fire? Each check counts, over both arms, the occasions on which the rule could act.


@dataclass
class _Arms:
    """The two arms of a comparison, with lazily collected, cached columns."""

    run: Run
    variant: str
    baseline: str

    def count(self, table: str, condition: pl.Expr) -> int:
        """Rows of ``table`` meeting ``condition``, the larger count of the two arms."""
        return max(self.run.scan(table, v).filter(condition).select(pl.len()).collect().item()
                   for v in (self.baseline, self.variant))

    def total(self, table: str) -> int:
        return self.run.scan(table, self.variant).select(pl.len()).collect().item()

    def rules(self) -> tuple[dict, dict]:
        return self.run.rules(self.baseline), self.run.rules(self.variant)


@dataclass(frozen=True)
class _Silent:
    """A rule that never acted: ``what`` happened zero times (out of ``n`` ``unit``)."""

    what: str
    n: int
    unit: str
    advice: str


Check = Callable[[_Arms, str, tuple[Any, Any]], _Silent | None]


def _zero(arms: _Arms, table: str, condition: pl.Expr, what: str, advice: str) -> _Silent | None:
    if arms.count(table, condition) > 0:
        return None
    unit = {"players": "player-hands", "wins": "wins", "hands": "hands"}[table]
    return _Silent(what, arms.total(table), unit, advice)


def _huazhu(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    return _zero(arms, "players", pl.col("score_huazhu") != 0, "no 花猪 penalty was paid (查花猪)",
                 "花猪 needs void_suit: none (under declared 定缺 it is all but impossible) and players who keep a "
                 "third suit late: seat defensive bots or experts that err (temperature 0.5), as the populations of "
                 "configs/studies/huazhu.yaml do (greedy bots and experts at temperature 0 almost never end as 花猪)")


_DECLINE_ADVICE = ("only value bots (a win worth fewer than decline_below fan while more than decline_wall tiles "
                   "remain) and expert bots (when waiting for a self-draw or a bigger win is worth more) decline "
                   "wins; seat experts, e.g. --set 'seats=[expert, expert, expert, expert]', as adaptation.yaml does "
                   "and the strong and mixed populations of configs/studies/pass_lock.yaml do")


def _declines(what: str) -> Check:
    def check(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
        return _zero(arms, "players", pl.col("declined_wins") > 0, what, _DECLINE_ADVICE)
    return check


def _cap(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    caps = [c for c in change if c is not None]
    if not caps:
        return None
    low = min(int(c) for c in caps)
    return _zero(arms, "wins", pl.col("fan") > low, f"no win had more than {low} fan, so the cap never bound",
                 "compare caps within the fan distribution (see the report's fan table), or " + _MORE_HANDS)


def _flag(name: str) -> Check:
    zh = _NAMES_ZH.get(name, "")
    def check(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
        if key.startswith("scoring.patterns.") and all(r.get("scoring", {}).get("mode") == "table"
                                                         for r in arms.rules()):
            return _Silent("scoring.patterns is not read in table mode (hand_types is)", 0, "wins",
                           "change scoring.hand_types, or set scoring.mode: additive")
        return _zero(arms, "wins", pl.col(name).fill_null(False), f"no win was {name} {zh}".rstrip(), _MORE_HANDS)
    return check


def _gen(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    return _zero(arms, "wins", pl.col("gen") > 0, "no win had a 根 (gen)", _MORE_HANDS)


def _hand_type(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    if all(r.get("scoring", {}).get("mode") != "table" for r in arms.rules()):
        return _Silent("scoring.hand_types is read only in table mode", 0, "wins",
                       "set scoring.mode: table, or change scoring.patterns instead")
    name = key.split(".")[2]
    return _zero(arms, "wins", pl.col("hand_type") == name, f"no win was a {name}", _MORE_HANDS)


def _kind(kind: str, what: str) -> Check:
    def check(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
        return _zero(arms, "wins", pl.col("kind") == kind, what, _MORE_HANDS)
    return check


def _multiple_ron(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    shared = pl.len().over("hand_id", "win_order") > 1
    return _zero(arms, "wins", shared, "no discard was won by two players at once (一炮多响)", _MORE_HANDS)


def _kongs(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    return _zero(arms, "hands", pl.col("n_kongs") > 0, "no kong was made", "kong payments only matter when bots "
                 "make kongs; check the seats (random bots never kong)")


def _refund(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    unready_kongs = (pl.col("n_kongs") > 0) & ~pl.col("won").fill_null(False) & ~pl.col("ready").fill_null(False)
    return _zero(arms, "players", unready_kongs & (pl.col("score_kong") != 0),
                 "no player who made a kong ended the hand neither won nor ready (退税)", _MORE_HANDS)


def _chadajiao(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    return _zero(arms, "players", pl.col("score_chadajiao") != 0, "no 查大叫 payment was made", _MORE_HANDS)


_DECLARE_ADVICE = ("greedy and random bots never declare; value, defensive and expert bots declare when the extra "
                   "fan is worth the locked hand: seat them, e.g. --set 'seats=[value, value, value, value]', as "
                   "configs/studies/declare.yaml does")


def _declare(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    return _zero(arms, "players", pl.col("declared").fill_null(False),
                 "no player declared ready (唱歌/跳舞)", _DECLARE_ADVICE)


def _declare_fan(kind: str) -> Check:
    flag = _flag(kind)

    def check(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
        if None in change:  # filled in with its default because declare_ready changed: that key's check covers it
            return None
        if all(r.get("declare_ready") not in (kind, "both") for r in arms.rules()):
            return _Silent(f"{key} is read only under declare_ready: {kind} or both", 0, "wins",
                           f"set declare_ready: {kind} (or both) in the variant")
        return flag(arms, key, change)
    return check


def _seat_param(bot: str) -> Check:
    def check(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
        seat = int(key.split(".")[1])
        held = {(r.get("seats") or [{}] * 4)[seat].get("bot") for r in arms.rules()}
        if bot in held:
            return None
        return _Silent(f"seat {seat} holds {' / '.join(sorted(map(str, held)))} in both arms, a bot that does not "
                       f"read {key.split('.')[2]} ({bot} bots do)", 0, "hands",
                       f"seat a {bot} bot there, or change the parameter of a seat that holds one")
    return check


def _session_arms(arms: _Arms, wanted: Callable[[dict], bool]) -> list[tuple[str, dict]]:
    """``(variant, session rules)`` of the arms that play sessions meeting ``wanted``."""
    out = []
    for v in (arms.baseline, arms.variant):
        sess = arms.run.session(v)
        if sess is not None and wanted(sess):
            out.append((v, sess))
    return out


def _stopped_early(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    stopping = _session_arms(arms, lambda s: s.get("stop_when_broke") is True)
    if not stopping:
        return None
    counts = []  # per arm: (sessions cut short, sessions)
    for v, sess in stopping:
        per = (arms.run.hands(v).group_by("session_id").agg(pl.len().alias("n"))
               .select((pl.col("n") < sess["hands"]).sum().alias("short"), pl.len().alias("all")).collect())
        counts.append((int(per["short"].item()), int(per["all"].item())))
    if any(short for short, _ in counts):
        return None
    return _Silent("no session stopped early: no balance reached 0 before a session's last hand",
                   max(n for _, n in counts), "sessions",
                   "lower session.bankroll, lengthen the sessions (session.hands), or play for coins "
                   "(session.money: coins, whose rake drains every balance)")


def _dealer_rule(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    chained = _session_arms(arms, lambda s: s.get("dealer", "rotate") != "rotate")
    if not chained:
        return None
    # rotate's sequence: the session's first dealer (a die, the same under every rule), then the next seat
    first = pl.col("dealer").sort_by("hand_in_session").first().over("session_id")
    off_rotation = pl.col("dealer") != (first + pl.col("hand_in_session")) % 4
    n_off = sum(arms.run.hands(v).filter(off_rotation).select(pl.len()).collect().item() for v, _ in chained)
    if n_off:
        return None
    rules = " / ".join(sorted({s["dealer"] for _, s in chained}))
    return _Silent(f"under {rules} every hand was dealt by the seat that rotate would have chosen",
                   arms.total("hands"), "hands",
                   "the dealer rule only acts from a session's second hand on: play longer sessions "
                   "(session.hands), or " + _MORE_HANDS)


def _bankroll(arms: _Arms, key: str, change: tuple[Any, Any]) -> _Silent | None:
    funded = _session_arms(arms, lambda s: s.get("bankroll") is not None)
    if not funded:
        return None
    if any(arms.run.players(v).filter(pl.col("bankroll") <= 0).select(pl.len()).collect().item()
           for v, _ in funded):
        return None
    rolls = " / ".join(_show(int(b) if float(b).is_integer() else b) for b in (s["bankroll"] for _, s in funded))
    return _Silent(f"no balance starting at {rolls} ever reached 0 (P(ruin) is 0)", arms.total("players"),
                   "player-hands",
                   "lower session.bankroll, or lengthen the sessions (session.hands)")


# First matching pattern wins. Keys matching none have no log-based check.
CHECKS: tuple[tuple[str, Check], ...] = (
    ("settlement.huazhu_*", _huazhu),
    ("pass_ron_lock", _declines("no bot declined a win, so the pass lock (过水不胡) never applied")),
    ("forced_win_last_tiles", _declines("no bot declined a win, so 最后N张必胡 never forced one")),
    ("scoring.cap", _cap),
    ("scoring.extras.gen", _gen),
    ("scoring.long_uses_gen", _flag("longqidui")),
    ("declare_ready", _declare),
    ("scoring.extras.sing", _declare_fan("sing")),
    ("scoring.extras.dance", _declare_fan("dance")),
    *((f"scoring.extras.{f}", _flag(f)) for f in _NAMES_ZH),
    *((f"scoring.patterns.{f}", _flag(f)) for f in _NAMES_ZH),
    ("scoring.hand_types.*", _hand_type),
    ("scoring.self_draw_bonus", _kind("self_draw", "no win was a self-draw (自摸)")),
    ("rob_kong", _kind("rob_kong", "no added kong was robbed (抢杠胡)")),
    ("multiple_ron", _multiple_ron),
    ("kong_bloom_payer", _flag("gangshanghua")),
    ("kongs.after_kong_deal_in", _flag("gangshangpao")),
    ("kongs.*", _kongs),
    ("settlement.refund_kongs_if_not_ready", _refund),
    ("settlement.chadajiao", _chadajiao),
    ("seats.*.decline_*", _seat_param(_VALUE_BOT)),
    ("seats.*.steer_shanten", _seat_param(_VALUE_BOT)),
    ("seats.*.defend_wall", _seat_param(_DEFENSIVE_BOT)),
    *((f"seats.*.{p}", _seat_param(_EXPERT_BOT)) for p in ("defence", "ambition", "temperature", "tempo")),
    ("session.stop_when_broke", _stopped_early),
    ("session.dealer", _dealer_rule),
    ("session.bankroll", _bankroll),
)


def _check_for(key: str) -> Check | None:
    return next((check for pattern, check in CHECKS if fnmatch.fnmatchcase(key, pattern)), None)


def _show(value: Any) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def silent_rules(run: Run, variant: str, baseline: str) -> list[Finding]:
    """One finding per changed rule key whose log-based check counted zero occasions in both arms."""
    arms = _Arms(run, variant, baseline)
    out = []
    for key, change in changed_keys(run.rules(baseline), run.rules(variant)).items():
        check = _check_for(key)
        silent = check(arms, key, change) if check is not None else None
        if silent is not None:
            count = f" in {silent.n:,} {silent.unit} of either arm" if silent.n else ""
            out.append(Finding(variant, key, f"changed {_show(change[0])} → {_show(change[1])} but never acted: "
                                             f"{silent.what}{count}", silent.advice))
    return out


def _identical_advice(run: Run, variant: str, baseline: str, silent: list[Finding]) -> str:
    changed = changed_keys(run.rules(baseline), run.rules(variant))
    if changed and all(k.startswith("economy.") or k == "scoring.base" for k in changed):
        return ("nothing, if intended: economy.* and scoring.base change coins and score units only, never play "
                "or the logged money (base units); read the Economy section and the report's base column")
    if changed and all(k in ("session.bankroll", "session.money") or k.startswith("economy.") for k in changed):
        return ("nothing, if intended: session.bankroll and session.money change the balances (and P(ruin)), "
                "not play; read the Sessions section")
    if silent:
        return f"see below why {', '.join(f.key for f in silent if f.key)} never acted"
    return "make the changed rule reachable (other seats, other rules) or " + _MORE_HANDS


def stale_findings(variant: str, stale: list) -> list[Finding]:
    """One finding (key ``seats``) per :class:`simulator.logs.manifest.Stale` of ``variant``."""
    return [Finding(variant, "seats", st.problem, st.advice) for st in stale]


def diagnose(run: Run | str | Path, baseline: str | None = None,
             counts: Mapping[tuple[str, str], tuple[int, int]] | None = None) -> list[Finding]:
    """Every problem of every variant's comparison with the baseline (default: the run's baseline).

    First the seated tuned files that may not fit (:func:`stale_findings`, every variant). A variant with the
    baseline's rules, or whose every hand played out exactly as the baseline's, gets a finding of its own (``key``
    None); each changed rule that never acted gets one (see the module docstring). ``counts``: ``(hands that
    differ in any column, hands logged by both)`` of some ``(baseline, variant)`` pairs, already computed
    (:func:`analysis.play.pair_differences`: the report counts play and any column in one pass); only whether
    the first is 0 is read, so a lower bound will do (``pair_differences(..., exact=False)``)."""
    run = as_run(run)
    first = run.check(baseline) if baseline is not None else run.baseline
    findings = [f for v in run.variants for f in stale_findings(v, run.stale(v))]
    for v in run.variants:
        base = baseline_of(run, v, first)  # the baseline arm in v's population
        if v == base:
            continue
        known = bool(run.rules(base)) and bool(run.rules(v))  # a manifest without its rule set: play only
        if known and not changed_keys(run.rules(base), run.rules(v)):
            findings.append(Finding(v, None, f"has exactly the baseline's rules and seats ({base})",
                                    "change a rule in the variant's set: or rules file"))
            continue
        silent = silent_rules(run, v, base)
        k, n = (counts or {}).get((base, v)) or differing_hands(run, v, base, "any")
        if n and k == 0:
            findings.append(Finding(v, None, f"played every one of its {n:,} hands exactly as the baseline {base} did "
                                    "(same decisions, same scores): every difference in the report is zero by "
                                    "construction", _identical_advice(run, v, base, silent)))
        findings.extend(silent)
    return findings
