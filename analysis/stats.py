"""Statistical building blocks: clustered means and shares, Wilson intervals, few-difference intervals,
multiplicity, sample sizes under the alternative, cluster bootstrap, sessions.

Conventions used throughout ``analysis``:

- Intervals are two-sided at ``LEVEL`` (95%); ``z = Φ⁻¹(0.975) ≈ 1.95996``.
- The **cluster** (``cluster=`` argument; ``Run.cluster`` in the tables) is the independent unit: the hand, or
  the wall (``deal_id``) under duplicate seating. Observations of one cluster may be correlated in any way.
- A mean is the ratio estimator ``ΣS_c / Σm_c`` (``S_c`` = sum of cluster ``c``'s observations, ``m_c`` = their
  number) with the cluster-robust (linearisation) SE
  ``se² = G/(G−1) · Σ_c (S_c − mean·m_c)² / (Σ_c m_c)²`` over the ``G`` clusters (``sd/√n`` with one
  observation per cluster) and the normal interval ``mean ± z·se``.
- A share (the mean of a 0/1 indicator: of hands, wins, player-hands) gets the **Wilson interval at the
  effective sample size** (:func:`share_interval_exprs`): inside [0, 1], never zero-width.
- A paired difference carried by fewer than ``analysis.rare.RARE_UNITS`` differing clusters gets the Student
  interval on (differing clusters − 1) degrees of freedom instead of the normal one (:mod:`analysis.rare`).
- Multiplicity: :func:`p_adjust` (Holm, Benjamini–Hochberg). Sample sizes: :func:`hands_needed` with the SD
  under the alternative (:func:`sigma_alternative`; the paired rows use :mod:`analysis.power`).
- Quantiles are the inverse of the empirical CDF (numpy ``method="inverted_cdf"``): the smallest observed value
  ``x`` with ``F(x) ≥ p``, so a reported quantile is always a score that actually occurred.
- CVaR (expected shortfall) at level ``α`` of the loss ``L = −score`` is the mean of the worst ``(1−α)`` share of
  outcomes, ``CVaR_α = (1/k)·Σ`` of the ``k = (1−α)·n`` largest losses, the boundary observation counted with
  its fractional weight (the coherent Acerbi–Tasche definition).
- Bootstrap intervals are percentile intervals over ``n_boot`` replicates that resample **clusters** with
  replacement (all of a cluster's observations move together), seeded with ``numpy.random.default_rng(seed)``;
  ``n_boot = 0`` gives no interval. The command line accepts 0 or at least :data:`MIN_BOOT` replicates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from statistics import NormalDist

import numpy as np
import polars as pl

LEVEL = 0.95
POWER = 0.80
MIN_BOOT = 100
"""Fewest bootstrap replicates ``xuezhan report --boot`` accepts (0 = no intervals): a 95% percentile interval
reads the 2.5% and 97.5% quantiles of the replicates, which a handful of replicates cannot estimate (with one
replicate both bounds are the same number)."""
Seed = int | np.random.SeedSequence


def z_value(level: float = LEVEL) -> float:
    """Two-sided normal critical value: ``Φ⁻¹((1 + level)/2)`` (1.959964 for 95%)."""
    return NormalDist().inv_cdf((1.0 + level) / 2.0)


# ---------------------------------------------------------------------------------------------------------
# Proportions


def wilson_interval(k: np.ndarray | float, n: np.ndarray | float, level: float = LEVEL
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``k`` successes in ``n`` trials (vectorised; NaN where ``n == 0``)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    z = z_value(level)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = np.where(k > 0, np.clip(centre - half, 0.0, 1.0), 0.0)  # exact bounds at k = 0 and k = n
    hi = np.where(k < n, np.clip(centre + half, 0.0, 1.0), 1.0)
    return np.where(n > 0, lo, np.nan), np.where(n > 0, hi, np.nan)


def wilson_exprs(k: str | pl.Expr, n: str | pl.Expr, prefix: str = "p", level: float = LEVEL) -> list[pl.Expr]:
    """Polars expressions ``prefix`` (= k/n), ``prefix_lo``, ``prefix_hi``: the Wilson interval; null if n = 0."""
    k = pl.col(k) if isinstance(k, str) else k
    n = pl.col(n) if isinstance(n, str) else n
    z2 = z_value(level) ** 2
    kf, nf = k.cast(pl.Float64), n.cast(pl.Float64)
    p = kf / nf
    denom = 1.0 + z2 / nf
    centre = (p + z2 / (2 * nf)) / denom
    half = (z2 ** 0.5) * (p * (1 - p) / nf + z2 / (4 * nf * nf)).sqrt() / denom
    ok = nf > 0
    # k = 0 and k = n have exact bounds 0 and 1 (the formula leaves rounding dust such as 1e-19)
    return [pl.when(ok).then(p).alias(prefix),
            pl.when(ok).then(pl.when(kf > 0).then((centre - half).clip(0.0, 1.0)).otherwise(0.0))
            .alias(f"{prefix}_lo"),
            pl.when(ok).then(pl.when(kf < nf).then((centre + half).clip(0.0, 1.0)).otherwise(1.0))
            .alias(f"{prefix}_hi")]


# ---------------------------------------------------------------------------------------------------------
# Means and shares clustered by an independent unit (hand or wall)


def cluster_moments(lf: pl.LazyFrame, by: Sequence[str], values: Sequence[str],
                    cluster: str = "hand_id") -> pl.LazyFrame:
    """Per group of ``by``: ``n`` clusters, ``n_obs``, ``n_hands`` (distinct ``hand_id`` when the frame has that
    column and the clusters are walls, else ``n``), and for each value column ``v`` the moments
    ``v__T = ΣS``, ``v__SS = ΣS²``, ``v__SM = ΣS·m`` with ``S`` the cluster sum; plus ``_MM = Σm²``."""
    by = list(by)
    count_hands = cluster != "hand_id" and "hand_id" in lf.collect_schema().names()
    per_cluster = lf.group_by([*by, cluster]).agg(
        pl.len().cast(pl.Float64).alias("_m"),
        *([pl.col("hand_id").n_unique().alias("_h")] if count_hands else []),
        *[pl.col(v).cast(pl.Float64).sum().alias(v) for v in values])
    aggs = [pl.len().alias("n"), pl.col("_m").sum().cast(pl.Int64).alias("n_obs"),
            (pl.col("_h").sum() if count_hands else pl.len()).cast(pl.Int64).alias("n_hands"),
            (pl.col("_m") ** 2).sum().alias("_MM")]
    for v in values:
        aggs += [pl.col(v).sum().alias(f"{v}__T"), (pl.col(v) ** 2).sum().alias(f"{v}__SS"),
                 (pl.col(v) * pl.col("_m")).sum().alias(f"{v}__SM")]
    return per_cluster.group_by(by).agg(aggs)


def ratio_mean_exprs(T: pl.Expr, SS: pl.Expr, SM: pl.Expr, M: pl.Expr, MM: pl.Expr, n: pl.Expr,
                     level: float = LEVEL) -> list[pl.Expr]:
    """``mean, se, ci_lo, ci_hi`` of the cluster ratio estimator from its moments (se null when n < 2; no
    interval when the SE is 0 — every unit has the same mean, so there is no variation to measure, and a
    zero-width interval would claim certainty)."""
    mean = T / M
    var = (SS - 2 * mean * SM + mean * mean * MM).clip(lower_bound=0.0) / (M * M) * n / (n - 1)
    se = pl.when(n > 1).then(var.sqrt())
    z = z_value(level)
    has = se > 0
    return [mean.alias("mean"), se.alias("se"), pl.when(has).then(mean - z * se).alias("ci_lo"),
            pl.when(has).then(mean + z * se).alias("ci_hi")]


def cluster_means(lf: pl.LazyFrame, by: Sequence[str], values: Sequence[str], cluster: str = "hand_id",
                  level: float = LEVEL, name: str = "quantity", shares: Sequence[str] = ()) -> pl.DataFrame:
    """Long table ``by…, <name>, n_units, n_hands, n_obs, mean, se, ci_lo, ci_hi``: the mean of each value
    column per group with its cluster-robust SE over the ``n_units`` clusters (``cluster``: hands by default,
    walls under duplicate seating), in ``values`` order. Columns named in ``shares`` are 0/1 indicators: their
    interval is the Wilson interval at the effective sample size (:func:`share_interval_exprs`), never outside
    [0, 1]; the others get ``mean ± z·se``."""
    return means_from_moments(cluster_moments(lf, by, values, cluster).collect(), by, values, level, name, shares)


def means_from_moments(mom: pl.DataFrame, by: Sequence[str], values: Sequence[str], level: float = LEVEL,
                       name: str = "quantity", shares: Sequence[str] = ()) -> pl.DataFrame:
    """:func:`cluster_means` from the collected :func:`cluster_moments` (so that several can be collected
    together with ``polars.collect_all``, which computes their shared inputs once)."""
    by = list(by)
    n, M, MM = pl.col("n").cast(pl.Float64), pl.col("n_obs").cast(pl.Float64), pl.col("_MM")
    frames = []
    for i, v in enumerate(values):
        est = ratio_mean_exprs(pl.col(f"{v}__T"), pl.col(f"{v}__SS"), pl.col(f"{v}__SM"), M, MM, n, level)
        if v in shares:
            lo, hi = share_interval_exprs(est[0], est[1], M, n, level)
            est = [est[0], est[1], lo.alias("ci_lo"), hi.alias("ci_hi")]
        frames.append(mom.select(
            *by, pl.lit(v).alias(name), pl.lit(i).alias("_order"), pl.col("n").cast(pl.Int64).alias("n_units"),
            "n_hands", "n_obs", *est))
    out = pl.concat(frames) if frames else pl.DataFrame()
    return out.sort([*by, "_order"]).drop("_order") if frames else out


def share_moments(events: pl.LazyFrame, trials: pl.LazyFrame, by: Sequence[str], key: str | Sequence[str],
                  cluster: str = "hand_id") -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Moments of the clustered share of trials that have each value of ``key``.

    ``trials`` has one row per trial (e.g. per win) with the ``by`` and ``cluster`` columns; ``events`` one row
    per (trial, key value) that occurred (a trial may have several values, e.g. several flags, or exactly one).
    Returns ``(counts, totals)``: ``counts`` per ``by…, key…``: ``k`` = events, ``k_units`` = clusters with at
    least one, ``_SS = Σk_h²``, ``_SM = Σk_h·m_h``; ``totals`` per ``by…``: ``n_units`` = clusters with at least
    one trial, ``n_obs = Σm_h`` trials, ``_MM = Σm_h²`` (``k_h``, ``m_h``: events and trials of cluster ``h``).
    Feed them to :func:`cluster_share_exprs`; a key value that never occurs has ``k = _SS = _SM = 0``."""
    by, keys = list(by), [key] if isinstance(key, str) else list(key)
    sizes = trials.group_by([*by, cluster]).agg(pl.len().cast(pl.Float64).alias("_m"))
    totals = sizes.group_by(by).agg(pl.len().cast(pl.Int64).alias("n_units"),
                                    pl.col("_m").sum().cast(pl.Int64).alias("n_obs"),
                                    (pl.col("_m") ** 2).sum().alias("_MM"))
    counts = (events.group_by([*by, cluster, *keys]).agg(pl.len().cast(pl.Float64).alias("_c"))
              .join(sizes, on=[*by, cluster], how="inner")
              .group_by([*by, *keys]).agg(pl.col("_c").sum().cast(pl.Int64).alias("k"),
                                          pl.len().cast(pl.Int64).alias("k_units"),
                                          (pl.col("_c") ** 2).sum().alias("_SS"),
                                          (pl.col("_c") * pl.col("_m")).sum().alias("_SM")))
    return counts, totals


def share_interval_exprs(p: pl.Expr, se: pl.Expr, n_obs: pl.Expr, n_units: pl.Expr,
                         level: float = LEVEL) -> tuple[pl.Expr, pl.Expr]:
    """``(lo, hi)``: Wilson interval of a share of clustered trials at its effective sample size.

    ``p`` = share, ``se`` = its cluster-robust SE over ``n_units`` clusters, ``n_obs`` = trials. The design
    effect ``deff = se² / (p(1−p)/n_obs · G/(G−1))`` (``G`` = clusters; exactly 1 with one trial per cluster)
    gives ``n_eff = n_obs / deff``, capped at ``n_obs`` (never more information than independent trials); the
    interval is Wilson's at ``(p, n_eff)``, so it stays inside [0, 1]. When ``p`` = 0 or 1 the design effect
    cannot be estimated: ``n_eff = G`` — the Wilson bound for "no cluster had one" bounds the chance of a trial
    having one, whatever the correlation inside clusters. When ``0 < p < 1`` but ``se`` = 0 (every cluster has
    the same share) there is no between-cluster variation to inflate it: ``n_eff = n_obs`` (the trials). Null when
    there are no trials or fewer than 2 clusters."""
    pf, se, M, G = p.cast(pl.Float64), se.cast(pl.Float64), n_obs.cast(pl.Float64), n_units.cast(pl.Float64)
    binom = pf * (1 - pf) / M * G / (G - 1)
    varies = (pf > 0) & (pf < 1) & (se > 0)
    n_eff = (pl.when(varies).then((binom / (se * se) * M).clip(upper_bound=M))
             .when((pf > 0) & (pf < 1)).then(M).otherwise(G))
    z2 = z_value(level) ** 2
    denom = 1.0 + z2 / n_eff
    centre = (pf + z2 / (2 * n_eff)) / denom
    half = (z2 ** 0.5) * (pf * (1 - pf) / n_eff + z2 / (4 * n_eff * n_eff)).sqrt() / denom
    ok = (M > 0) & (G > 1)
    lo = pl.when(ok).then(pl.when(pf > 0).then((centre - half).clip(0.0, 1.0)).otherwise(0.0))
    hi = pl.when(ok).then(pl.when(pf < 1).then((centre + half).clip(0.0, 1.0)).otherwise(1.0))
    return lo, hi


def cluster_share_exprs(k: pl.Expr, SS: pl.Expr, SM: pl.Expr, n_obs: pl.Expr, MM: pl.Expr, n_units: pl.Expr,
                        prefix: str = "p", level: float = LEVEL) -> list[pl.Expr]:
    """``prefix, prefix_se, prefix_lo, prefix_hi`` of a share of clustered trials (moments of
    :func:`share_moments`): ``p = k / n_obs`` (null when there are no trials), the cluster-robust SE over the
    ``n_units`` clusters (null when fewer than 2), and the Wilson interval at the effective sample size
    (:func:`share_interval_exprs`): inside [0, 1], and never zero-width."""
    kf, M, n = k.cast(pl.Float64), n_obs.cast(pl.Float64), n_units.cast(pl.Float64)
    p, se, _, _ = ratio_mean_exprs(kf, SS, SM, M, MM, n, level)
    lo, hi = share_interval_exprs(p, se, M, n, level)
    ok = M > 0
    return [pl.when(ok).then(p).alias(prefix), pl.when(ok).then(se).alias(f"{prefix}_se"),
            lo.alias(f"{prefix}_lo"), hi.alias(f"{prefix}_hi")]


def cluster_proportions(lf: pl.LazyFrame, by: Sequence[str], value: str, cluster: str = "hand_id",
                        level: float = LEVEL) -> pl.DataFrame:
    """Distribution of a discrete column per group: ``by…, value, k, n_obs, n_units, p, se, p_lo, p_hi``.

    ``p`` = share of the group's observations taking that value; its SE is cluster-robust (``cluster`` is the
    independent unit) and the interval is the effective-n Wilson one of :func:`share_interval_exprs`."""
    by = list(by)
    sizes = lf.group_by([*by, cluster]).agg(pl.len().cast(pl.Float64).alias("_m"))
    totals = sizes.group_by(by).agg(pl.len().alias("n_units"), pl.col("_m").sum().alias("_M"),
                                    (pl.col("_m") ** 2).sum().alias("_MM"))
    counts = (lf.group_by([*by, cluster, value]).agg(pl.len().cast(pl.Float64).alias("_c"))
              .join(sizes, on=[*by, cluster], how="inner")
              .group_by([*by, value]).agg(pl.col("_c").sum().alias("_T"), (pl.col("_c") ** 2).sum().alias("_SS"),
                                          (pl.col("_c") * pl.col("_m")).sum().alias("_SM")))
    est = cluster_share_exprs(pl.col("_T"), pl.col("_SS"), pl.col("_SM"), pl.col("_M"), pl.col("_MM"),
                              pl.col("n_units"), "p", level)
    out = (counts.join(totals, on=by, how="inner")
           .with_columns(est)
           .select(*by, value, pl.col("_T").cast(pl.Int64).alias("k"), pl.col("_M").cast(pl.Int64).alias("n_obs"),
                   pl.col("n_units").cast(pl.Int64), "p", pl.col("p_se").alias("se"), "p_lo", "p_hi")
           .sort([*by, value]))
    return out.collect()


def cluster_diff_se(lf: pl.LazyFrame, by: Sequence[str], group: str, value: str,
                    cluster: str = "hand_id") -> pl.DataFrame:
    """Cluster-robust SE of ``mean(value | group) − mean(value | not group)`` when both groups share clusters.

    This is the SE of the coefficient ``b`` of the OLS ``value = a + b·group`` (``b`` = the difference of the
    two group means over observations), clustered by ``cluster``: with ``e`` = value − its group's mean,
    ``A_h = Σ e`` over cluster ``h``'s observations in the group, ``B_h`` the same outside it, and ``N₁``,
    ``N₀`` the two groups' observation counts, ``se² = G/(G−1) · Σ_h (A_h/N₁ − B_h/N₀)²`` over the ``G``
    clusters with an observation in either group (the sandwich estimator, with the ``G/(G−1)`` factor of
    :func:`ratio_mean_exprs`). A cluster holding observations of both groups enters once, so their covariance
    counts. Returns ``by…, n_units (G), n_obs, diff, se`` for the groups where both sides have observations
    (``se`` null when ``G < 2``)."""
    by = list(by)
    per = (lf.group_by([*by, cluster, group])
           .agg(pl.len().cast(pl.Float64).alias("_m"), pl.col(value).cast(pl.Float64).sum().alias("_s")))
    sides = per.group_by([*by, group]).agg(pl.col("_m").sum().alias("_N"), pl.col("_s").sum().alias("_T"))
    both = (sides.group_by(by).agg(pl.len().alias("_sides"),
                                   (pl.col("_T") / pl.col("_N")).filter(pl.col(group)).first().alias("_mean1"),
                                   (pl.col("_T") / pl.col("_N")).filter(~pl.col(group)).first().alias("_mean0"),
                                   pl.col("_N").sum().cast(pl.Int64).alias("n_obs"))
            .filter(pl.col("_sides") == 2))
    infl = (per.join(sides, on=[*by, group])
            .with_columns(((pl.col("_s") - pl.col("_T") / pl.col("_N") * pl.col("_m")) / pl.col("_N")
                           * pl.when(pl.col(group)).then(1.0).otherwise(-1.0)).alias("_u"))
            .group_by([*by, cluster]).agg(pl.col("_u").sum())
            .group_by(by).agg(pl.len().cast(pl.Int64).alias("n_units"), (pl.col("_u") ** 2).sum().alias("_U")))
    g = pl.col("n_units").cast(pl.Float64)
    return (both.join(infl, on=by)
            .select(*by, "n_units", "n_obs", (pl.col("_mean1") - pl.col("_mean0")).alias("diff"),
                    pl.when(g > 1).then((g / (g - 1) * pl.col("_U")).sqrt()).alias("se"))
            .collect())


def sigma_alternative(se: np.ndarray | float, n: np.ndarray | float, d: np.ndarray | float,
                      k_differ: np.ndarray | float | None = None, m: np.ndarray | float = 1.0,
                      integer: bool = False, max_abs: np.ndarray | float | None = None) -> np.ndarray:
    """Per-unit SD of a paired difference under the alternative that its true mean is ``d``.

    The observed ``σ̂ = se·√n`` (``n`` units) describes the data under the effect that happened, which may be
    none; a true effect ``d`` forces more spread, so ``σ = max(σ̂, bounds)``:

    - ``k_differ`` units of ``n`` differ (share ``π = k/n > 0``): a unit mean that is 0 outside an event of
      probability ``π`` and has mean ``d`` has ``Var ≥ d²/π − d²`` (Cauchy–Schwarz). A rule that rarely binds
      needs about ``(z_α + z_β)²/π`` binding units, not the few hands the observed σ̂ suggests. When a unit's
      mean difference cannot exceed ``max_abs`` (1 for a 0/1 share), an effect ``d`` needs ``π ≥ d/max_abs``,
      so ``π`` is raised to that (the alternative is then "it binds more often", not "each binding is
      bigger than possible").
    - ``integer``: each unit's sum of differences over its ``m`` observations is an integer (scores in base
      units, counts, 0/1 shares), so ``Var(sum) ≥ |m·d| − (m·d)²`` when ``|m·d| < 1`` (``E[X²] ≥ E|X|``).

    NaN where nothing bounds σ and ``σ̂`` is 0 or unknown."""
    n = np.asarray(n, dtype=float)
    d = np.abs(np.asarray(d, dtype=float))
    var = (np.asarray(se, dtype=float) ** 2) * n
    var = np.where(np.isfinite(var), var, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if k_differ is not None:
            pi = np.asarray(k_differ, dtype=float) / n
            if max_abs is not None:
                pi = np.maximum(pi, d / np.asarray(max_abs, dtype=float))
            var = np.maximum(var, np.where(pi > 0, d * d / pi - d * d, 0.0))
        if integer:
            md = np.asarray(m, dtype=float) * d
            var = np.maximum(var, np.where(md < 1, (md - md * md) / np.asarray(m, dtype=float) ** 2, 0.0))
    sigma = np.sqrt(var)
    return np.where(sigma > 0, sigma, np.nan)


def hands_needed(se: np.ndarray | float, n: np.ndarray | float, d: np.ndarray | float, level: float = LEVEL,
                 power: float = POWER, *, k_differ: np.ndarray | float | None = None,
                 m: np.ndarray | float = 1.0, integer: bool = False,
                 max_abs: np.ndarray | float | None = None) -> np.ndarray:
    """Units (hands, or walls under duplicate seating) needed to detect a true mean difference ``d``: a
    two-sided test at ``α = 1 − level`` with the given ``power``, ``⌈((z_{1−α/2} + z_power) · σ / d)²⌉`` with
    ``σ`` the per-unit SD under the alternative (:func:`sigma_alternative`; ``se``, ``n``: the observed SE
    over ``n`` units). NaN when σ is unknown."""
    sigma = sigma_alternative(se, n, d, k_differ, m, integer, max_abs)
    zsum = z_value(level) + NormalDist().inv_cdf(power)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.ceil((zsum * sigma / np.abs(np.asarray(d, dtype=float))) ** 2)
    return np.where(np.isfinite(need), need, np.nan)


# ---------------------------------------------------------------------------------------------------------
# Tests: normal p-values, multiplicity


def normal_p(diff: np.ndarray | float, se: np.ndarray | float) -> np.ndarray:
    """Two-sided normal p-value of ``diff/se`` (NaN when ``se`` is 0 or unknown)."""
    diff, se = np.asarray(diff, dtype=float), np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        zs = np.where(se > 0, np.abs(diff) / se, np.nan)
    return np.array([2 * NormalDist().cdf(-v) if np.isfinite(v) else np.nan for v in np.ravel(zs)]
                    ).reshape(zs.shape)


def p_adjust(p: np.ndarray | Sequence[float], method: str = "holm") -> np.ndarray:
    """Multiplicity-adjusted p-values over one family: ``"holm"`` (Holm's step-down, controls the
    family-wise error rate under any dependence) or ``"bh"`` (Benjamini–Hochberg, false discovery rate).
    NaN entries are not tests: they stay NaN and do not count in the family size."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    ps = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ps))
    elif method == "bh":
        adj = np.minimum.accumulate(np.minimum(1.0, m / np.arange(1, m + 1) * ps)[::-1])[::-1]
    else:
        raise ValueError(f"method {method!r}: expected 'holm' or 'bh'")
    out[order] = adj
    return out


# ---------------------------------------------------------------------------------------------------------
# Tail statistics of a score sample, with a cluster bootstrap


def risk_kernel(v: np.ndarray, w: np.ndarray, probs: Sequence[float], thresholds: Sequence[float],
                alpha: float) -> dict[str, np.ndarray]:
    """Weighted risk statistics of samples sorted ascending along the last axis, one row per replicate.

    ``v``: values sorted ascending, shape ``(n,)`` (shared) or ``(r, n)``; ``w``: non-negative weights
    ``(r, n)`` (ones = the plain sample, bootstrap counts = a resample). Returns arrays of length ``r``:
    ``mean``, ``sd`` (ddof 1 on total weight), ``q<p>`` (inverse empirical CDF), ``p_loss_gt_<x>``
    (share of weight with ``v < −x``) and ``cvar`` (mean loss ``−v`` of the worst ``(1−α)`` of the weight)."""
    w = np.asarray(w, dtype=float)
    v = np.broadcast_to(np.asarray(v, dtype=float), w.shape)
    tot = w.sum(axis=1)
    mean = (w * v).sum(axis=1) / tot
    with np.errstate(invalid="ignore", divide="ignore"):
        var = ((w * (v - mean[:, None]) ** 2).sum(axis=1)) / (tot - 1)
    cum = np.cumsum(w, axis=1)
    out: dict[str, np.ndarray] = {"mean": mean, "sd": np.sqrt(var)}
    probs_a = np.asarray(probs, dtype=float)
    neg_x = -np.asarray(thresholds, dtype=float)
    quant = np.empty((w.shape[0], probs_a.size))
    below = np.empty((w.shape[0], neg_x.size))
    for i in range(w.shape[0]):  # rows are few (a chunk of replicates); each search is O(log n)
        # inverse empirical CDF: first position whose cumulative weight reaches p·total (float tolerance)
        idx = np.searchsorted(cum[i], probs_a * tot[i] - 1e-9 * tot[i], side="left")
        quant[i] = v[i, np.minimum(idx, v.shape[1] - 1)]
        j = np.searchsorted(v[i], neg_x, side="left")  # values < -x are the first j (sorted ascending)
        below[i] = np.where(j > 0, cum[i, np.maximum(j - 1, 0)], 0.0) / tot[i]
    for c, p in enumerate(probs_a):
        out[f"q{p:g}"] = quant[:, c]
    for c, x in enumerate(thresholds):
        out[f"p_loss_gt_{x:g}"] = below[:, c]
    k = (1.0 - alpha) * tot
    part = np.clip(k[:, None] - (cum - w), 0.0, w)
    out["cvar"] = (part * -v).sum(axis=1) / k
    return out


def _chunks(total: int, size: int) -> Iterator[int]:
    while total > 0:
        step = min(size, total)
        yield step
        total -= step


def _value_pairs(v: np.ndarray, codes: np.ndarray, n_cl: int) -> tuple[np.ndarray, ...]:
    """The sample ``v`` (sorted ascending; ``codes``: the cluster of each value, ``0..n_cl−1``) as distinct
    (value, cluster) pairs: ``(distinct values ascending, cluster of each pair, multiplicity of each pair,
    index of each distinct value's first pair)``, pairs ordered by value.

    A replicate's weight of distinct value ``j`` is then ``Σ count[cluster]·multiplicity`` over its pairs,
    and :func:`risk_kernel` on (distinct values, those weights) gives the statistics of the whole resample:
    scores take a few hundred values, so the kernel runs on hundreds of columns instead of every
    observation."""
    distinct, value_index = np.unique(v, return_inverse=True)
    keys, mult = np.unique(value_index.astype(np.int64) * max(n_cl, 1) + codes, return_counts=True)
    pair_value, pair_cluster = np.divmod(keys, max(n_cl, 1))
    starts = np.flatnonzero(np.r_[True, pair_value[1:] != pair_value[:-1]]) if keys.size else keys
    # int32 halves the memory traffic of the replicates' gather; a weight is at most n_cl·(largest multiplicity)
    small = keys.size == 0 or n_cl * int(mult.max()) < 2**31
    return distinct, pair_cluster, mult.astype(np.int32 if small else np.int64), starts


def cluster_bootstrap_risk(values: np.ndarray, clusters: np.ndarray, *, probs: Sequence[float],
                           thresholds: Sequence[float], alpha: float = LEVEL, n_boot: int = 200, seed: Seed = 0,
                           level: float = LEVEL, budget: int = 4_000_000) -> dict[str, tuple[float, float, float]]:
    """Risk statistics of ``values`` (see :func:`risk_kernel`) with percentile-bootstrap intervals.

    ``clusters``: the hand of each value (any integer labels); a replicate draws as many hands as there are,
    with replacement, and keeps all of each drawn hand's values. Returns ``{stat: (estimate, lo, hi)}``;
    ``lo``/``hi`` are NaN when ``n_boot == 0``. ``budget`` bounds the replicate×observation matrix size."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    v = values[order]
    _, codes = np.unique(np.asarray(clusters)[order], return_inverse=True)
    n_cl = int(codes.max()) + 1 if codes.size else 0
    point = risk_kernel(v, np.ones((1, v.size)), probs, thresholds, alpha)
    reps: dict[str, list[np.ndarray]] = {key: [] for key in point}
    rng = np.random.default_rng(seed)
    distinct, pair_cluster, pair_mult, starts = _value_pairs(v, codes, n_cl)
    for r in _chunks(n_boot if n_cl else 0, max(1, budget // max(v.size, n_cl, 1))):
        draws = rng.integers(0, n_cl, size=(r, n_cl)) + (np.arange(r) * n_cl)[:, None]
        counts = np.bincount(draws.ravel(), minlength=r * n_cl).reshape(r, n_cl).astype(pair_mult.dtype)
        # a replicate's weight of each distinct value (integer counts: exact in any order of summation)
        weights = np.add.reduceat(counts[:, pair_cluster] * pair_mult, starts, axis=1)
        for key, val in risk_kernel(distinct, weights, probs, thresholds, alpha).items():
            reps[key].append(val)
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    out = {}
    for key, est in point.items():
        if reps[key]:
            sample = np.concatenate(reps[key])
            lo, hi = np.nanquantile(sample, [lo_q, hi_q])
        else:
            lo = hi = np.nan
        out[key] = (float(est[0]), float(lo), float(hi))
    return out


def _by_hand(values: np.ndarray, clusters: np.ndarray, units: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Values grouped by hand: (values in hand order, start, size, per-hand mean, per-hand mean of squares,
    hands grouped by independent unit: hand order, unit start, unit size). ``units`` (e.g. the wall of each
    value) defaults to the hand itself."""
    values = np.asarray(values, dtype=float)
    clusters = np.asarray(clusters)
    order = np.argsort(clusters, kind="stable")
    vals = values[order]
    _, start, size = np.unique(clusters[order], return_index=True, return_counts=True)
    mean = np.add.reduceat(vals, start) / size
    mean2 = np.add.reduceat(vals * vals, start) / size
    unit_of_hand = np.asarray(units)[order][start] if units is not None else np.arange(start.size)
    horder = np.argsort(unit_of_hand, kind="stable")
    _, ustart, usize = np.unique(unit_of_hand[horder], return_index=True, return_counts=True)
    return vals, start, size, mean, mean2, horder, ustart, usize


def _resample_units(tab: tuple[np.ndarray, ...], rng: np.random.Generator) -> np.ndarray:
    """Hand indices of one cluster-bootstrap replicate: units drawn with replacement, all their hands kept."""
    horder, ustart, usize = tab[5:]
    pick = rng.integers(0, ustart.size, size=ustart.size)
    if usize.size and usize[-1] == 1 and usize.max() == 1:  # one hand per unit (no duplicate seating)
        return horder[pick]
    sizes = usize[pick]
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return horder[np.repeat(ustart[pick], sizes) + offsets]


def _sessions(tab: tuple[np.ndarray, ...], hands: int, n_sessions: int, rng: np.random.Generator,
              resample_hands: bool) -> tuple[np.ndarray, float, float]:
    """Simulated session totals plus the exact mean and SD of a session total under the same draw."""
    vals, start, size, hmean, hmean2 = tab[:5]
    n_cl = start.size
    pool = _resample_units(tab, rng) if resample_hands else np.arange(n_cl)
    pick = pool[rng.integers(0, pool.size, size=(n_sessions, hands))]
    u = rng.random((n_sessions, hands))
    if size.size and size.min() == size.max():  # every hand has s observations (by seat: 1, one bot: 4)
        s = int(size[0])
        obs = pick * s + (u * s).astype(np.int64) if s > 1 else pick  # start[h] = s·h; u·s ≥ 0 truncates
    else:
        obs = start[pick] + np.floor(u * size[pick]).astype(np.int64)
    # one draw = a uniform hand of the pool, then a uniform observation of that hand
    m1, m2 = hmean[pool].mean(), hmean2[pool].mean()
    return vals[obs].sum(axis=1), hands * m1, float(np.sqrt(max(hands * (m2 - m1 * m1), 0.0)))


def session_totals(values: np.ndarray, clusters: np.ndarray, hands: int, n_sessions: int,
                   rng: np.random.Generator, resample_hands: bool = False,
                   units: np.ndarray | None = None) -> np.ndarray:
    """Totals of ``n_sessions`` simulated sessions of ``hands`` hands for one player.

    Each hand of a session is an independent draw of a logged hand (``clusters``: the hand of each value;
    uniform), then of one of that hand's observations (uniform), i.e. one player's score in that hand. With
    ``resample_hands`` the logged hands are first resampled (one outer bootstrap replicate): by independent
    unit when ``units`` (the wall of each value, duplicate seating) is given — all hands of a drawn wall
    together — else hand by hand."""
    return _sessions(_by_hand(values, clusters, units), hands, n_sessions, rng, resample_hands)[0]


def session_risk(values: np.ndarray, clusters: np.ndarray, *, hands: int, probs: Sequence[float],
                 thresholds: Sequence[float], alpha: float = LEVEL, n_sessions: int = 20_000,
                 n_boot: int = 100, boot_sessions: int = 2_000, seed: Seed = 0, level: float = LEVEL,
                 units: np.ndarray | None = None) -> dict[str, tuple[float, float, float]]:
    """Risk statistics of the total over a session of ``hands`` hands: ``{stat: (estimate, lo, hi)}``.

    One hand of a session is a uniform draw of a logged hand (``clusters``), then of one of that hand's
    observations (:func:`session_totals`), so every hand weighs the same however many observations it has.
    ``mean`` and ``sd`` are exact for the session model (``K·μ`` and ``√K·σ`` of one draw, σ with ddof 0);
    the other statistics use ``n_sessions`` simulated sessions. Intervals: percentile interval over ``n_boot``
    outer replicates that resample the logged hands — by wall when ``units`` gives each value's wall (duplicate
    seating) — and simulate ``boot_sessions`` sessions each, so the interval includes the simulation error;
    ``lo``/``hi`` are NaN when ``n_boot == 0``."""
    rng = np.random.default_rng(seed)
    tab = _by_hand(values, clusters, units)
    tot, mean, sd = _sessions(tab, hands, n_sessions, rng, False)
    tot = np.sort(tot)
    point = risk_kernel(tot, np.ones((1, tot.size)), probs, thresholds, alpha)
    point["mean"], point["sd"] = np.array([mean]), np.array([sd])
    reps = [_sessions(tab, hands, boot_sessions, rng, True) for _ in range(n_boot)]
    if reps:
        mat = np.sort(np.stack([r[0] for r in reps]), axis=1)
        boot = risk_kernel(mat, np.ones_like(mat), probs, thresholds, alpha)
        boot["mean"], boot["sd"] = np.array([r[1] for r in reps]), np.array([r[2] for r in reps])
    out = {}
    for key, est in point.items():
        lo, hi = (np.nanquantile(boot[key], [(1 - level) / 2, (1 + level) / 2]) if reps else (np.nan, np.nan))
        out[key] = (float(est[0]), float(lo), float(hi))
    return out
