"""The metrics a design targets: stable ids, each computed per wall from the in-memory batch of
:func:`simulator.hands.play_hands`, kept as constant-size sums (no logs written, memory independent of hands).

Every metric is a ratio ``Σ y / Σ x`` over walls (``y``: the numerator, ``x``: the denominator counted in the
metric's unit — hands, wins or player-hands). Per metric the accumulator keeps the number of walls and
``Σy, Σx, Σy², Σx², Σxy`` over walls, which is all the ratio estimator and its wall-clustered (delta-method)
standard error need: ``se² = Σ (y_w − R x_w)² / (W (W − 1) x̄²)``. A wall is the clustering unit: one hand, or
under duplicate seating the four hands played on it. Shares get the Wilson interval at the effective sample
size ``p(1 − p)/se²`` (inside [0, 1], never zero-width), means ``estimate ± 1.96 se``.

The ids, what they measure and their units: :data:`METRICS` (and ``edge:A-B``), listed in docs/design.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from simulator.hands import play_hands
from simulator.rules import RuleSet

Z95 = 1.959963984540054  # two-sided 95% normal quantile
Columns = dict[str, dict[str, np.ndarray]]
PerWall = Callable[[Columns, np.ndarray, int], tuple[np.ndarray, np.ndarray]]  # (cols, wall of each hand, walls)


@dataclass(frozen=True)
class Metric:
    label: str   # the report's label (analysis.shape), or what the metric is
    per: str     # the unit of the denominator: hand, win or player-hand
    unit: str    # the unit of the estimate
    share: bool  # a 0/1 share (Wilson interval) rather than a mean


def _walls(cols: Columns, table: str, wall_of_hand: np.ndarray, first_hand: int) -> np.ndarray:
    return wall_of_hand[np.asarray(cols[table]["hand_id"], dtype=np.int64) - first_hand]


def _sum(w: np.ndarray, values: np.ndarray, walls: int) -> np.ndarray:
    return np.bincount(w, weights=np.asarray(values, dtype=np.float64), minlength=walls)


def _count(w: np.ndarray, walls: int) -> np.ndarray:
    return np.bincount(w, minlength=walls).astype(np.float64)


METRICS: dict[str, Metric] = {
    "huazhu_rate": Metric("huazhu (花猪) rate", "player-hand", "share of player-hands", True),
    "huazhu_any": Metric("huazhu (花猪) any", "hand", "share of hands", True),
    "dealer_edge": Metric("the dealer's mean score per hand", "hand", "base units per hand", False),
    "last_seat_edge": Metric("the last seat's (dealer + 3) mean score per hand", "hand", "base units per hand", False),
    "exhaustive_draw": Metric("exhaustive_draw (流局)", "hand", "share of hands", True),
    "wins_per_hand": Metric("wins per hand", "hand", "wins per hand", False),
    "turns_per_hand": Metric("turns per hand", "hand", "turns per hand", False),
    "points_exchanged": Metric("points exchanged per hand", "hand", "base units per hand", False),
    "wins_2fan_share": Metric("wins ≥ 2 fan", "win", "share of wins", True),
    "cap_binds": Metric("cap binds", "win", "share of wins", True),
    "self_draw_share": Metric("self-draw share", "win", "share of wins", True),
    "deal_in_rate": Metric("deal-in rate", "player-hand", "share of player-hands", True),
}
"""The fixed ids. Besides them, ``edge:A-B`` (A, B bot names seated in the line-up, e.g. ``edge:expert-greedy``):
the mean score per player-hand of the seats played by A minus that of the seats played by B, in the same hands
(base units per player-hand, per hand)."""

EDGE = re.compile(r"^edge:([A-Za-z0-9_.:]+)-([A-Za-z0-9_.:]+)$")


def metric_info(mid: str) -> Metric:
    """The :class:`Metric` of an id; ``KeyError`` for an unknown one."""
    if mid in METRICS:
        return METRICS[mid]
    m = EDGE.match(mid)
    if m is None:
        raise KeyError(mid)
    return Metric(f"{m[1]}'s edge over {m[2]} per player-hand", "hand", "base units per player-hand", False)


def _seat_score(cols: Columns, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """(hand_id, score_total) of the player ``offset`` seats after each hand's dealer."""
    p, h = cols["players"], cols["hands"]
    hand = np.asarray(p["hand_id"], dtype=np.int64)
    dealers = np.repeat(np.asarray(h["dealer"], dtype=np.int64), 4)  # the players table: 4 rows per hand, in order
    mine = np.asarray(p["seat"], dtype=np.int64) == (dealers + offset) % 4
    return hand[mine], np.asarray(p["score_total"], dtype=np.float64)[mine]


def per_wall(mid: str, cols: Columns, wall_of_hand: np.ndarray, first_hand: int,
             walls: int) -> tuple[np.ndarray, np.ndarray]:
    """``(y, x)``: float64[walls] numerator and denominator of metric ``mid`` on each wall of one batch."""
    p, h, w = cols["players"], cols["hands"], cols["wins"]
    hw, pw, ww = (_walls(cols, t, wall_of_hand, first_hand) for t in ("hands", "players", "wins"))
    hands, players, wins = _count(hw, walls), _count(pw, walls), _count(ww, walls)
    kinds = np.asarray(w["kind"])  # strings (object arrays), as the logs hold them
    if mid == "huazhu_rate":
        return _sum(pw, p["huazhu"], walls), players
    if mid == "huazhu_any":
        any_h = np.bincount(np.asarray(p["hand_id"], dtype=np.int64) - first_hand,
                            weights=np.asarray(p["huazhu"], dtype=np.float64), minlength=wall_of_hand.size) > 0
        return _sum(wall_of_hand, any_h, walls), hands
    if mid in ("dealer_edge", "last_seat_edge"):
        hand, score = _seat_score(cols, 0 if mid == "dealer_edge" else 3)
        return _sum(wall_of_hand[hand - first_hand], score, walls), hands
    if mid == "exhaustive_draw":
        return _sum(hw, h["exhaustive_draw"], walls), hands
    if mid == "wins_per_hand":
        return _sum(hw, h["n_wins"], walls), hands
    if mid == "turns_per_hand":
        return _sum(hw, h["turns"], walls), hands
    if mid == "points_exchanged":
        return _sum(pw, np.abs(np.asarray(p["score_total"], dtype=np.float64)) / 2, walls), hands
    if mid == "wins_2fan_share":
        return _sum(ww, np.asarray(w["fan"]) >= 2, walls), wins
    if mid == "cap_binds":
        return _sum(ww, np.asarray(w["capped_fan"]) < np.asarray(w["fan"]), walls), wins
    if mid == "self_draw_share":
        return _sum(ww, kinds == "self_draw", walls), wins
    if mid == "deal_in_rate":
        fed = ((kinds == "discard") | (kinds == "rob_kong")) & (np.asarray(w["payer"]) >= 0)
        pairs = np.unique(np.asarray(w["hand_id"], dtype=np.int64)[fed] * 4 + np.asarray(w["payer"])[fed])
        return _sum(wall_of_hand[pairs // 4 - first_hand], np.ones(pairs.size), walls), players
    m = EDGE.match(mid)
    if m is None:
        raise KeyError(mid)
    bots = np.asarray(p["bot"])
    hand = np.asarray(p["hand_id"], dtype=np.int64) - first_hand
    score = np.asarray(p["score_total"], dtype=np.float64)
    n = wall_of_hand.size
    mean = [np.bincount(hand[bots == b], weights=score[bots == b], minlength=n)
            / np.maximum(np.bincount(hand[bots == b], minlength=n), 1) for b in (m[1], m[2])]
    return _sum(wall_of_hand, mean[0] - mean[1], walls), hands


@dataclass(frozen=True)
class Estimate:
    """A metric on a set of walls: estimate, wall-clustered SE, 95% interval, observations and walls."""

    value: float
    se: float
    lo: float
    hi: float
    n: int
    walls: int

    def record(self) -> dict:
        r = lambda x: float(round(x, 6))  # noqa: E731
        return {"estimate": r(self.value), "se": r(self.se), "ci95": [r(self.lo), r(self.hi)], "n": self.n,
                "walls": self.walls}


def wilson(p: float, n_eff: float) -> tuple[float, float]:
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n_eff)) / (1 + z2 / n_eff)
    half = Z95 * math.sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff * n_eff)) / (1 + z2 / n_eff)
    return max(0.0, centre - half), min(1.0, centre + half)


class Moments:
    """Constant-size sums over walls of one metric's per-wall ``(y, x)``."""

    def __init__(self) -> None:
        self.s = np.zeros(6)  # walls, Σy, Σx, Σy², Σx², Σxy

    def add(self, y: np.ndarray, x: np.ndarray) -> None:
        self.s += (y.size, y.sum(), x.sum(), (y * y).sum(), (x * x).sum(), (x * y).sum())

    def estimate(self, share: bool) -> Estimate:
        w, sy, sx, syy, sxx, sxy = self.s.tolist()
        if sx <= 0:
            return Estimate(math.nan, math.nan, math.nan, math.nan, 0, int(w))
        r = sy / sx
        ss = max(syy - 2 * r * sxy + r * r * sxx, 0.0)
        se = math.sqrt(ss / (w * (w - 1))) / (sx / w) if w > 1 else math.nan
        if share:
            p = min(max(r, 0.0), 1.0)
            n_eff = p * (1 - p) / (se * se) if se > 0 else sx
            lo, hi = wilson(p, max(n_eff, 1.0))
        else:
            lo, hi = r - Z95 * se, r + Z95 * se
        return Estimate(r, se, lo, hi, int(round(sx)), int(w))


def measure(rules: RuleSet, duplicate: bool, first: int, walls: int, seed: int, ids: list[str],
            acc: dict[str, Moments] | None = None, batch: int = 500) -> dict[str, Moments]:
    """Play walls ``first..first+walls−1`` of ``seed`` (each four times under ``duplicate``) in batches of at most
    ``batch`` walls and add every metric of ``ids`` to ``acc`` (new accumulators when None)."""
    acc = acc if acc is not None else {mid: Moments() for mid in ids}
    per = 4 if duplicate else 1
    for start in range(first, first + walls, batch):
        n = min(batch, first + walls - start)
        hand_ids = np.arange(per * start, per * (start + n), dtype=np.int64)
        cols = play_hands(rules, hand_ids, seed, duplicate=duplicate)
        cols["players"] = {k: rules.base_units(v) if k.startswith("score_") else v  # as analysis.load does
                           for k, v in cols["players"].items()}
        wall_of_hand = np.arange(n * per, dtype=np.int64) // per
        for mid in ids:
            acc[mid].add(*per_wall(mid, cols, wall_of_hand, per * start, n))
    return acc
