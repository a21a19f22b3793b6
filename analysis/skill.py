"""Skill vs luck per variant: how much a rule set rewards the stronger of two bots on the same walls.

The design (``configs/studies/skill.yaml``): every arm seats one **test** bot (the bot of seat 0, e.g. ``expert``)
and a **field** bot at the other seats (e.g. ``greedy``) under duplicate seating, so each wall is played four
times with the test bot in every seat once. Per variant (all money in base units; the independent unit is the
wall, ``deal_id``):

- ``edge``: mean score per player-hand of the test bot minus that of the field bot; 95% interval from the
  cluster-robust (by wall) SE of the difference of the two ratio means.
- ``sd``: the luck scale, the standard deviation of one player's score per hand,
  ``√((var_test + var_field)/2)`` (each bot's variance around its own mean, the two bots weighted equally).
- ``skill_luck`` = ``edge / sd`` (dimensionless), percentile interval from a bootstrap over walls.
- ``hands_90``: hands after which the test bot is ahead of one given field player with probability ``target``
  (default 90%): with ``D`` = test score − that opponent's score in one hand (mean ``edge_pair``, SD ``sd_pair``,
  over every test × field pair of player-hands of a hand) and independent hands, the sum over ``n`` hands is
  ahead with probability ``Φ(√n · edge_pair / sd_pair)``, so ``n = (z_target · sd_pair / edge_pair)²``; its
  interval is the bootstrap interval of ``edge_pair / sd_pair`` mapped through that formula (no upper bound when
  the ratio's lower bound is ≤ 0). ``sessions_90 = hands_90 / K`` when the variant has a ``session:`` block of
  ``K`` hands (hands of a session taken as independent).
- ``deal_share``, ``bot_share``, ``play_share``: a variance decomposition of one player's score over walls ×
  seats, ``score = μ_bot + a_(wall, seat) + e``: ``a`` is the deal (the tiles seat ``s`` of wall ``w`` receives,
  random effect, ANOVA method of moments over the (wall, seat) cells, each played once per rotation), ``μ_bot``
  the seat's bot (fixed effect; its variance is ``Σ_b p_b (μ_b − μ̄)²`` with ``p_b`` the bot's share of
  player-hands) and ``e`` the rest (how the four players' decisions play out on that deal). Shares of the sum of
  the three components, percentile intervals from the same bootstrap. Without duplicate seating each cell holds
  one player-hand, so the deal and the play cannot be told apart: the three shares are NaN.

These measure *this pair of bots* under each rule set, not human players (docs/studies.md, "Skill vs luck").
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces
from analysis.stats import LEVEL, z_value

TARGET = 0.9
"""Default probability of being ahead for ``hands_90``."""
N_BOOT = 400
"""Default bootstrap replicates over walls."""
COLUMNS = ("edge", "sd", "skill_luck", "edge_pair", "sd_pair", "deal", "bot", "play")
"""The per-replicate estimates of :func:`_estimates`, in order (``deal``/``bot``/``play``: variance
components in base units², not shares)."""


@dataclass(frozen=True)
class Design:
    """One variant's player-hands as arrays of length N (one row per player-hand): ``wall`` (int64 codes
    0..W−1), ``hand`` (int64 codes 0..H−1), ``cell`` (int64 codes of (wall, seat) 0..C−1), ``test`` (bool: the
    test bot), ``score`` (float64, base units)."""

    wall: np.ndarray
    hand: np.ndarray
    cell: np.ndarray
    test: np.ndarray
    score: np.ndarray

    @classmethod
    def from_frame(cls, df: pl.DataFrame) -> Design:
        """From columns ``deal_id``, ``hand_id``, ``seat``, ``test`` (bool), ``score`` (any numeric)."""
        wall = df["deal_id"].rank("dense").cast(pl.Int64).to_numpy() - 1
        hand = df["hand_id"].rank("dense").cast(pl.Int64).to_numpy() - 1
        cell = (df.select(pl.struct("deal_id", "seat").rank("dense").cast(pl.Int64)).to_series().to_numpy() - 1)
        return cls(wall.astype(np.int64), hand.astype(np.int64), cell.astype(np.int64),
                   df["test"].cast(pl.Boolean).to_numpy().astype(bool),
                   df["score"].cast(pl.Float64).to_numpy().astype(np.float64))

    @property
    def n_walls(self) -> int:
        return int(self.wall.max()) + 1 if self.wall.size else 0


def _group_stats(d: Design, idx: np.ndarray) -> np.ndarray:
    """float64[7, G] per group of rows (``idx``: int64[N] codes 0..G−1, e.g. hands or (wall, seat) cells): the
    group's wall, then count, sum and sum of squares of the test bot's scores, then the same for the field bot."""
    g = int(idx.max()) + 1
    out = np.zeros((7, g), dtype=np.float64)
    out[0, idx] = d.wall
    for k, sel in enumerate((d.test, ~d.test)):
        x = d.score[sel]
        out[1 + 3 * k] = np.bincount(idx[sel], minlength=g)
        out[2 + 3 * k] = np.bincount(idx[sel], weights=x, minlength=g)
        out[3 + 3 * k] = np.bincount(idx[sel], weights=x * x, minlength=g)
    return out


def _estimates(hands: np.ndarray, cells: np.ndarray, wall_weight: np.ndarray) -> np.ndarray:
    """:data:`COLUMNS` from :func:`_group_stats` of the hands and of the (wall, seat) cells, the walls weighted by
    ``wall_weight`` (float64[W]: 1 each for the sample, bootstrap counts for a replicate). Returns
    float64[len(COLUMNS)]."""
    cw = wall_weight[cells[0].astype(np.int64)]
    nT, sT, qT, nF, sF, qF = cells[1:]
    n_t, n_f = (cw * nT).sum(), (cw * nF).sum()
    m_t, m_f = (cw * sT).sum() / n_t, (cw * sF).sum() / n_f
    v_t, v_f = (cw * qT).sum() / n_t - m_t ** 2, (cw * qF).sum() / n_f - m_f ** 2
    edge, sd = m_t - m_f, float(np.sqrt(max((v_t + v_f) / 2.0, 0.0)))
    # test x field pairs within a hand: sum of (x_i - x_j)^2 = n_F*Q_T + n_T*Q_F - 2*S_T*S_F per hand
    hw = wall_weight[hands[0].astype(np.int64)]
    hnT, hsT, hqT, hnF, hsF, hqF = hands[1:]
    pairs = (hw * hnT * hnF).sum()
    edge_pair = (hw * (hnF * hsT - hnT * hsF)).sum() / pairs
    sd_pair = float(np.sqrt(max((hw * (hnF * hqT + hnT * hqF - 2 * hsT * hsF)).sum() / pairs - edge_pair ** 2,
                                0.0)))
    # variance components over (wall, seat) cells of y = score - its bot's mean
    cn = nT + nF
    cs = sT + sF - nT * m_t - nF * m_f
    cq = qT - 2 * m_t * sT + nT * m_t ** 2 + qF - 2 * m_f * sF + nF * m_f ** 2
    keep = (cn > 0) & (cw > 0)
    cw, cn, cs, cq = cw[keep], cn[keep], cs[keep], cq[keep]
    n_tot, n_cells = (cw * cn).sum(), cw.sum()
    within_df = (cw * (cn - 1)).sum()
    play = max((cw * (cq - cs ** 2 / cn)).sum() / within_df, 0.0) if within_df > 0 else np.nan
    grand = (cw * cs).sum() / n_tot
    msb = (cw * cn * (cs / cn - grand) ** 2).sum() / (n_cells - 1)
    n0 = (n_tot - (cw * cn ** 2).sum() / n_tot) / (n_cells - 1)
    deal = max((msb - play) / n0, 0.0)
    p_t = n_t / (n_t + n_f)
    bot = p_t * (1 - p_t) * edge ** 2
    return np.array([edge, sd, edge / sd if sd > 0 else np.nan, edge_pair, sd_pair, deal, bot, play],
                    dtype=np.float64)


def _edge_se(d: Design) -> float:
    """Cluster-robust (by wall) SE of ``edge``, the difference of two ratio means (linearization)."""
    x, t, W = d.score, d.test, d.n_walls
    n_t, n_f = t.sum(), (~t).sum()
    m_t, m_f = x[t].mean(), x[~t].mean()
    infl = (np.bincount(d.wall[t], weights=x[t] - m_t, minlength=W) / n_t
            - np.bincount(d.wall[~t], weights=x[~t] - m_f, minlength=W) / n_f)
    return float(np.sqrt(W / (W - 1) * (infl ** 2).sum())) if W > 1 else float("nan")


def hands_ahead(ratio: np.ndarray | float, target: float = TARGET) -> np.ndarray:
    """Hands ``n`` after which a player whose per-hand advantage has mean/SD ``ratio`` is ahead with
    probability ``target``: ``(Φ⁻¹(target)/ratio)²`` (normal approximation; ``inf`` for ratio ≤ 0, NaN for
    NaN)."""
    r = np.asarray(ratio, dtype=np.float64)
    z = NormalDist().inv_cdf(target)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(r), np.nan, np.where(r > 0, (z / np.where(r > 0, r, 1.0)) ** 2, np.inf))


def p_ahead(ratio: float, hands: np.ndarray | float) -> np.ndarray:
    """P(ahead after ``hands`` hands) = Φ(√hands · ratio), normal approximation (the inverse of
    :func:`hands_ahead`)."""
    h = np.asarray(hands, dtype=np.float64)
    return np.vectorize(NormalDist().cdf, otypes=[np.float64])(np.sqrt(h) * ratio)


def skill_measures(d: Design, *, n_boot: int = N_BOOT, seed: int = 0, target: float = TARGET,
                   level: float = LEVEL) -> dict[str, float]:
    """Every measure of the module docstring for one variant's :class:`Design`: estimates and ``_lo``/``_hi``
    bounds at ``level``; ``walls`` and ``player_hands`` are the sample sizes. ``n_boot`` bootstrap replicates over
    walls (seeded by ``seed``: the same arrays give the same numbers); 0 = no bootstrap (those bounds NaN)."""
    W = d.n_walls
    if W < 2 or d.test.all() or not d.test.any():
        raise ValueError("skill measures need at least 2 walls and both a test and a field bot")
    hands, cells = _group_stats(d, d.hand), _group_stats(d, d.cell)
    rng = np.random.default_rng(seed)
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero SD or no within-cell replicate: inf/NaN
        est = _estimates(hands, cells, np.ones(W, dtype=np.float64))
        reps = np.array([_estimates(hands, cells, np.bincount(rng.integers(0, W, W), minlength=W).astype(
            np.float64)) for _ in range(n_boot)], dtype=np.float64).reshape(n_boot, len(COLUMNS))
        return _summarise(d, est, reps, target, level)


def _summarise(d: Design, est: np.ndarray, reps: np.ndarray, target: float, level: float) -> dict[str, float]:
    """The measures of :func:`skill_measures` from the sample's estimates (float64[len(COLUMNS)]) and the
    bootstrap replicates' (float64[n_boot, len(COLUMNS)])."""
    n_boot = reps.shape[0]
    a = (1 - level) / 2
    zc = z_value(level)
    se = _edge_se(d)
    out: dict[str, float] = {"walls": float(d.n_walls), "player_hands": float(d.score.size),
                             "edge": est[0], "edge_se": se, "edge_lo": est[0] - zc * se, "edge_hi": est[0] + zc * se}

    def interval(name: str, values: np.ndarray, point: float) -> None:
        ok = values[np.isfinite(values)]
        lo, hi = np.quantile(ok, [a, 1 - a]) if ok.size else (np.nan, np.nan)
        out.update({name: float(point), f"{name}_lo": float(lo), f"{name}_hi": float(hi)})

    interval("sd", reps[:, 1], est[1])
    interval("skill_luck", reps[:, 2], est[2])
    out.update({"edge_pair": est[3], "sd_pair": est[4]})
    ratio = reps[:, 3] / reps[:, 4]
    r_lo, r_hi = np.quantile(ratio, [a, 1 - a]) if n_boot else (np.nan, np.nan)
    h = hands_ahead(np.array([est[3] / est[4], r_hi, r_lo]), target)
    out.update({"hands_90": float(h[0]), "hands_90_lo": float(h[1]), "hands_90_hi": float(h[2])})
    comp, comp_reps = est[5:8], reps[:, 5:8]
    for i, name in enumerate(("deal_share", "bot_share", "play_share")):
        interval(name, comp_reps[:, i] / comp_reps.sum(axis=1), comp[i] / comp.sum())
    return out


def variant_design(run: Run, variant: str) -> tuple[Design, str, str] | None:
    """The :class:`Design` of one variant with its test bot (seat 0's bot) and field bot names, or None when
    the variant does not seat exactly two distinct bots."""
    labels = run.seat_labels(variant)
    if len(set(labels)) != 2:
        return None
    test = labels[0]
    field = next(b for b in labels if b != test)
    seat_test = pl.DataFrame({"bot_seat": pl.Series(range(4), dtype=pl.Int8),
                              "test": pl.Series([b == test for b in labels], dtype=pl.Boolean)})

    def rows(r: Run) -> pl.LazyFrame:
        rot = r.hands(variant).select("hand_id", "rotation")
        return (r.players(variant).select("hand_id", "deal_id", "seat", pl.col("score_total").alias("score"))
                .join(rot, on="hand_id").with_columns(((pl.col("seat").cast(pl.Int16) + pl.col("rotation")) % 4)
                                                       .cast(pl.Int8).alias("bot_seat"))
                .join(seat_test.lazy(), on="bot_seat").drop("bot_seat"))

    # the bootstrap over walls needs each player-hand's wall, hand, seat, bot and score (a few bytes each); the
    # join that finds the bot is made one piece at a time
    return Design.from_frame(pl.concat(Pieces(run, rows).collect(lambda x: [x])[0])), test, field


def skill_table(run: Run | str, *, n_boot: int = N_BOOT, seed: int = 0, target: float = TARGET,
                level: float = LEVEL) -> pl.DataFrame:
    """One row per variant that seats exactly two distinct bots and played at least 2 walls: ``variant, test,
    field, walls, player_hands``, the measures of :func:`skill_measures` (money in base units per player-hand;
    ``hands_90`` in hands) and, for a variant with a ``session:`` block of K hands, ``session_hands`` = K and
    ``sessions_90`` (= hands_90 / K) with its bounds (null otherwise); an unbounded ``hands_90_hi`` is null.
    Empty when no variant qualifies."""
    run = as_run(run)
    rows = []
    for v in run.variants:
        got = variant_design(run, v)
        if got is None:
            continue
        d, test, field = got
        if d.n_walls < 2:
            continue
        m = skill_measures(d, n_boot=n_boot, seed=seed, target=target, level=level)
        k = (run.session(v) or {}).get("hands")
        m.update({f"sessions_90{s}": (m[f"hands_90{s}"] / k if k else None) for s in ("", "_lo", "_hi")})
        rows.append({"variant": v, "test": test, "field": field, "session_hands": k, **m})
    schema = {"variant": pl.String, "test": pl.String, "field": pl.String, "session_hands": pl.Int64}
    df = pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None) if rows else pl.DataFrame(
        schema=schema)
    counts = ("walls", "player_hands")
    floats = [c for c in df.columns if c not in schema and c not in counts]
    return with_id(df.with_columns([pl.col(c).cast(pl.Float64).replace(float("inf"), None) for c in floats]
                                   + [pl.col(c).cast(pl.Int64) for c in counts if c in df.columns]),
                   "skill", ["test", "field"], slugged=False)


def skill_luck_plot(table: pl.DataFrame, ax=None) -> Figure:
    """Skill-to-luck ratio (edge ÷ SD of one player's score per hand, dimensionless) per variant with its 95%
    bootstrap interval, from :func:`skill_table`. Draws on ``ax`` when given, else on a new figure; returns the
    figure."""
    from analysis.plots import interval_points

    if ax is None:
        fig = Figure(figsize=(7, 1.2 + 0.4 * max(table.height, 1)))
        ax = fig.add_subplot()
    fig = ax.figure
    y = np.arange(table.height, dtype=np.float64)
    interval_points(ax, table["skill_luck"].to_numpy(), y, table["skill_luck_lo"], table["skill_luck_hi"], "#1f77b4")
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, labels=[f"{r['variant']}" for r in table.iter_rows(named=True)])
    ax.invert_yaxis()
    pairs = sorted({f"{r['test']} vs {r['field']}" for r in table.iter_rows(named=True)})
    ax.set_xlabel(f"skill-to-luck: edge / SD per hand ({', '.join(pairs)}; 95% CI)")
    return fig


SKILL_TEXT = (
    "The test bot (seat 0's bot) against the field bot (the other seats) on the same walls. edge: test − field "
    "mean score per player-hand, base units, 95% interval clustered by {unit}. sd: SD of one player's score per "
    "hand (the two bots' variances averaged). skill_luck = edge / sd. hands_90: hands after which the test bot is "
    "ahead of one given field opponent with probability 90% (normal approximation from the per-hand difference "
    "test − opponent: mean edge_pair, SD sd_pair; hands independent); sessions_90 = hands_90 / session hands. "
    "deal / bot / play shares: variance components of one player's score over walls × seats (the deal of the "
    "seat, the seat's bot, the rest). Intervals other than edge's: percentile bootstrap over {unit}s ({n_boot} "
    "replicates, seed {seed}); hands_90 has no upper bound (null) when the edge's ratio may be ≤ 0. These figures "
    "measure this pair of bots under each rule set, not human players (docs/studies.md, 'Skill vs luck').")


def skill_section(run: Run, n_boot: int = N_BOOT, seed: int = 0):
    """The report's "Skill" section (``analysis.report_render.Section``) for a run under duplicate seating with at least
    one variant seating exactly two distinct bots; None otherwise (the section is left out)."""
    from analysis.report_render import Section

    if not run.duplicate:
        return None
    table = skill_table(run, n_boot=n_boot, seed=seed)
    if table.height == 0:
        return None
    sec = Section("Skill", SKILL_TEXT.format(unit=run.unit, n_boot=n_boot, seed=seed))
    sec.figure("Skill-to-luck ratio per variant (95% interval)", skill_luck_plot(table))
    if table["session_hands"].is_null().all():
        table = table.drop([c for c in table.columns if c.startswith("sessions_90") or c == "session_hands"])
    sec.table("Skill vs luck per variant", table.drop("edge_pair", "sd_pair", "edge_se"), "skill.per_variant",
              data=table)
    return sec
