"""Statistical building blocks: Wilson intervals, clustered means, paired-design sizes, cluster bootstrap.

Conventions used throughout ``analysis``:

- Intervals are two-sided at ``LEVEL`` (95%); ``z = Φ⁻¹(0.975) ≈ 1.95996``.
- A proportion of independent trials (one per hand: shares of hands) gets a **Wilson score interval**.
- A share of trials that are not independent (wins: several per hand) is the ratio estimator
  ``p = Σ_h k_h / Σ_h m_h`` (``k_h`` successes among the hand's ``m_h`` trials) with the cluster-robust SE
  below and the interval ``p ± z·se`` clipped to [0, 1]; no interval (null) when that SE is 0 or unknown
  (``k = 0`` or ``k = n``: the data show no variation to measure). See :func:`cluster_share_exprs`.
- A mean gets a normal-approximation interval ``mean ± z·se``. When several observations come from the same
  hand (e.g. every seat played by one bot), the hand is the independent unit: the mean is the ratio estimator
  ``ΣS_h / Σm_h`` (``S_h`` = sum of the hand's observations, ``m_h`` = their number) and its standard error is
  the cluster-robust (linearisation) one,
  ``se² = n/(n−1) · Σ_h (S_h − mean·m_h)² / (Σ_h m_h)²`` over the ``n`` hands. With one observation per hand
  this is exactly ``sd/√n`` (sample SD, ddof 1).
- Quantiles are the inverse of the empirical CDF (numpy ``method="inverted_cdf"``): the smallest observed value
  ``x`` with ``F(x) ≥ p``, so a reported quantile is always a score that actually occurred.
- CVaR (expected shortfall) at level ``α`` of the loss ``L = −score`` is the mean of the worst ``(1−α)`` share of
  outcomes, ``CVaR_α = (1/k)·Σ`` of the ``k = (1−α)·n`` largest losses, the boundary observation counted with
  its fractional weight (the coherent Acerbi–Tasche definition).
- Bootstrap intervals are percentile intervals over ``n_boot`` replicates that resample **hands** with
  replacement (all of a hand's observations move together), seeded with ``numpy.random.default_rng(seed)``;
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
# Means clustered by hand


def cluster_moments(lf: pl.LazyFrame, by: Sequence[str], values: Sequence[str],
                    cluster: str = "hand_id") -> pl.LazyFrame:
    """Per group of ``by``: ``n`` clusters, ``n_obs``, and for each value column ``v`` the moments
    ``v__T = ΣS``, ``v__SS = ΣS²``, ``v__SM = ΣS·m`` with ``S`` the cluster sum; plus ``_MM = Σm²``."""
    by = list(by)
    per_cluster = lf.group_by([*by, cluster]).agg(pl.len().cast(pl.Float64).alias("_m"),
                                                  *[pl.col(v).cast(pl.Float64).sum().alias(v) for v in values])
    aggs = [pl.len().alias("n"), pl.col("_m").sum().cast(pl.Int64).alias("n_obs"),
            (pl.col("_m") ** 2).sum().alias("_MM")]
    for v in values:
        aggs += [pl.col(v).sum().alias(f"{v}__T"), (pl.col(v) ** 2).sum().alias(f"{v}__SS"),
                 (pl.col(v) * pl.col("_m")).sum().alias(f"{v}__SM")]
    return per_cluster.group_by(by).agg(aggs)


def ratio_mean_exprs(T: pl.Expr, SS: pl.Expr, SM: pl.Expr, M: pl.Expr, MM: pl.Expr, n: pl.Expr,
                     level: float = LEVEL) -> list[pl.Expr]:
    """``mean, se, ci_lo, ci_hi`` of the cluster ratio estimator from its moments (se null when n < 2)."""
    mean = T / M
    var = (SS - 2 * mean * SM + mean * mean * MM).clip(lower_bound=0.0) / (M * M) * n / (n - 1)
    se = pl.when(n > 1).then(var.sqrt())
    z = z_value(level)
    return [mean.alias("mean"), se.alias("se"), (mean - z * se).alias("ci_lo"), (mean + z * se).alias("ci_hi")]


def cluster_means(lf: pl.LazyFrame, by: Sequence[str], values: Sequence[str], cluster: str = "hand_id",
                  level: float = LEVEL, name: str = "quantity") -> pl.DataFrame:
    """Long table ``by…, <name>, n_hands, n_obs, mean, se, ci_lo, ci_hi``: the mean of each value column per
    group with its cluster-robust SE (clusters = ``cluster``, hands by default), in ``values`` order."""
    mom = cluster_moments(lf, by, values, cluster).collect()
    n, M, MM = pl.col("n").cast(pl.Float64), pl.col("n_obs").cast(pl.Float64), pl.col("_MM")
    frames = []
    for i, v in enumerate(values):
        frames.append(mom.select(
            *by, pl.lit(v).alias(name), pl.lit(i).alias("_order"), pl.col("n").cast(pl.Int64).alias("n_hands"),
            "n_obs", *ratio_mean_exprs(pl.col(f"{v}__T"), pl.col(f"{v}__SS"), pl.col(f"{v}__SM"), M, MM, n,
                                       level)))
    out = pl.concat(frames) if frames else pl.DataFrame()
    return out.sort([*by, "_order"]).drop("_order") if frames else out


def share_moments(events: pl.LazyFrame, trials: pl.LazyFrame, by: Sequence[str], key: str | Sequence[str],
                  cluster: str = "hand_id") -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Moments of the clustered share of trials that have each value of ``key``.

    ``trials`` has one row per trial (e.g. per win) with the ``by`` and ``cluster`` columns; ``events`` one row
    per (trial, key value) that occurred (a trial may have several values, e.g. several flags, or exactly one).
    Returns ``(counts, totals)``: ``counts`` per ``by…, key…``: ``k`` = events, ``k_hands`` = clusters with at
    least one, ``_SS = Σk_h²``, ``_SM = Σk_h·m_h``; ``totals`` per ``by…``: ``n_hands`` = clusters with at least
    one trial, ``n_obs = Σm_h`` trials, ``_MM = Σm_h²`` (``k_h``, ``m_h``: events and trials of cluster ``h``).
    Feed them to :func:`cluster_share_exprs`; a key value that never occurs has ``k = _SS = _SM = 0``."""
    by, keys = list(by), [key] if isinstance(key, str) else list(key)
    sizes = trials.group_by([*by, cluster]).agg(pl.len().cast(pl.Float64).alias("_m"))
    totals = sizes.group_by(by).agg(pl.len().cast(pl.Int64).alias("n_hands"),
                                    pl.col("_m").sum().cast(pl.Int64).alias("n_obs"),
                                    (pl.col("_m") ** 2).sum().alias("_MM"))
    counts = (events.group_by([*by, cluster, *keys]).agg(pl.len().cast(pl.Float64).alias("_c"))
              .join(sizes, on=[*by, cluster], how="inner")
              .group_by([*by, *keys]).agg(pl.col("_c").sum().cast(pl.Int64).alias("k"),
                                          pl.len().cast(pl.Int64).alias("k_hands"),
                                          (pl.col("_c") ** 2).sum().alias("_SS"),
                                          (pl.col("_c") * pl.col("_m")).sum().alias("_SM")))
    return counts, totals


def cluster_share_exprs(k: pl.Expr, SS: pl.Expr, SM: pl.Expr, n_obs: pl.Expr, MM: pl.Expr, n_hands: pl.Expr,
                        prefix: str = "p", level: float = LEVEL) -> list[pl.Expr]:
    """``prefix, prefix_se, prefix_lo, prefix_hi`` of a share of clustered trials (moments of
    :func:`share_moments`): ``p = k / n_obs`` (null when there are no trials), the cluster-robust SE over the
    ``n_hands`` clusters (null when fewer than 2), and ``p ± z·se`` clipped to [0, 1] — null when the SE is 0
    or null (``k = 0`` or ``k = n_obs``: no variation to measure, so no interval rather than a zero-width one)."""
    kf, M, n = k.cast(pl.Float64), n_obs.cast(pl.Float64), n_hands.cast(pl.Float64)
    p, se, lo, hi = ratio_mean_exprs(kf, SS, SM, M, MM, n, level)
    ok = M > 0
    has = ok & (se > 0)
    return [pl.when(ok).then(p).alias(prefix), pl.when(ok).then(se).alias(f"{prefix}_se"),
            pl.when(has).then(lo.clip(0.0, 1.0)).alias(f"{prefix}_lo"),
            pl.when(has).then(hi.clip(0.0, 1.0)).alias(f"{prefix}_hi")]


def cluster_proportions(lf: pl.LazyFrame, by: Sequence[str], value: str, cluster: str = "hand_id",
                        level: float = LEVEL) -> pl.DataFrame:
    """Distribution of a discrete column per group: ``by…, value, k, n_obs, n_hands, p, se, p_lo, p_hi``.

    ``p`` = share of the group's observations taking that value; its SE is cluster-robust (hands are the
    independent unit) and the interval is ``p ± z·se`` clipped to [0, 1]."""
    by = list(by)
    sizes = lf.group_by([*by, cluster]).agg(pl.len().cast(pl.Float64).alias("_m"))
    totals = sizes.group_by(by).agg(pl.len().alias("n_hands"), pl.col("_m").sum().alias("_M"),
                                    (pl.col("_m") ** 2).sum().alias("_MM"))
    counts = (lf.group_by([*by, cluster, value]).agg(pl.len().cast(pl.Float64).alias("_c"))
              .join(sizes, on=[*by, cluster], how="inner")
              .group_by([*by, value]).agg(pl.col("_c").sum().alias("_T"), (pl.col("_c") ** 2).sum().alias("_SS"),
                                          (pl.col("_c") * pl.col("_m")).sum().alias("_SM")))
    n = pl.col("n_hands").cast(pl.Float64)
    est = ratio_mean_exprs(pl.col("_T"), pl.col("_SS"), pl.col("_SM"), pl.col("_M"), pl.col("_MM"), n, level)
    out = (counts.join(totals, on=by, how="inner")
           .with_columns(est)
           .select(*by, value, pl.col("_T").cast(pl.Int64).alias("k"), pl.col("_M").cast(pl.Int64).alias("n_obs"),
                   pl.col("n_hands").cast(pl.Int64), pl.col("mean").alias("p"), "se",
                   pl.col("ci_lo").clip(0.0, 1.0).alias("p_lo"), pl.col("ci_hi").clip(0.0, 1.0).alias("p_hi"))
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
    counts. Returns ``by…, n_hands (G), n_obs, diff, se`` for the groups where both sides have observations
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
            .group_by(by).agg(pl.len().cast(pl.Int64).alias("n_hands"), (pl.col("_u") ** 2).sum().alias("_U")))
    g = pl.col("n_hands").cast(pl.Float64)
    return (both.join(infl, on=by)
            .select(*by, "n_hands", "n_obs", (pl.col("_mean1") - pl.col("_mean0")).alias("diff"),
                    pl.when(g > 1).then((g / (g - 1) * pl.col("_U")).sqrt()).alias("se"))
            .collect())


def hands_needed(se: np.ndarray | float, n: np.ndarray | float, d: np.ndarray | float, level: float = LEVEL,
                 power: float = POWER) -> np.ndarray:
    """Hands needed to detect a true mean difference ``d`` (two-sided test at ``level``, given ``power``; ``d``
    one number or one per row):
    ``⌈((z_{(1+level)/2} + z_power) · σ / d)²⌉`` with the per-hand SD ``σ = se·√n`` estimated from the data;
    NaN when ``σ`` is 0 or unknown (no variation observed: the question has no answer from these data)."""
    sigma = np.asarray(se, dtype=float) * np.sqrt(np.asarray(n, dtype=float))
    zsum = z_value(level) + NormalDist().inv_cdf(power)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.ceil((zsum * sigma / np.abs(np.asarray(d, dtype=float))) ** 2)
    return np.where(np.isfinite(need) & (sigma > 0), need, np.nan)


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
    for r in _chunks(n_boot if n_cl else 0, max(1, budget // max(v.size, n_cl, 1))):
        draws = rng.integers(0, n_cl, size=(r, n_cl)) + (np.arange(r) * n_cl)[:, None]
        counts = np.bincount(draws.ravel(), minlength=r * n_cl).reshape(r, n_cl)
        for key, val in risk_kernel(v, counts[:, codes], probs, thresholds, alpha).items():
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


def _by_hand(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, ...]:
    """Values grouped by hand: (values in hand order, start, size, per-hand mean, per-hand mean of squares)."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(np.asarray(clusters), kind="stable")
    vals = values[order]
    _, start, size = np.unique(np.asarray(clusters)[order], return_index=True, return_counts=True)
    mean = np.add.reduceat(vals, start) / size
    mean2 = np.add.reduceat(vals * vals, start) / size
    return vals, start, size, mean, mean2


def _sessions(tab: tuple[np.ndarray, ...], hands: int, n_sessions: int, rng: np.random.Generator,
              resample_hands: bool) -> tuple[np.ndarray, float, float]:
    """Simulated session totals plus the exact mean and SD of a session total under the same draw."""
    vals, start, size, hmean, hmean2 = tab
    n_cl = start.size
    pool = rng.integers(0, n_cl, size=n_cl) if resample_hands else np.arange(n_cl)
    pick = pool[rng.integers(0, n_cl, size=(n_sessions, hands))]
    obs = start[pick] + np.floor(rng.random((n_sessions, hands)) * size[pick]).astype(np.int64)
    # one draw = a uniform hand of the pool, then a uniform observation of that hand
    m1, m2 = hmean[pool].mean(), hmean2[pool].mean()
    return vals[obs].sum(axis=1), hands * m1, float(np.sqrt(max(hands * (m2 - m1 * m1), 0.0)))


def session_totals(values: np.ndarray, clusters: np.ndarray, hands: int, n_sessions: int,
                   rng: np.random.Generator, resample_hands: bool = False) -> np.ndarray:
    """Totals of ``n_sessions`` simulated sessions of ``hands`` hands for one player.

    Each hand of a session is an independent draw of a logged hand (uniform), then of one of that hand's
    observations (uniform), i.e. one player's score in that hand. With ``resample_hands`` the logged hands are
    first resampled with replacement (one outer bootstrap replicate)."""
    return _sessions(_by_hand(values, clusters), hands, n_sessions, rng, resample_hands)[0]


def session_risk(values: np.ndarray, clusters: np.ndarray, *, hands: int, probs: Sequence[float],
                 thresholds: Sequence[float], alpha: float = LEVEL, n_sessions: int = 20_000,
                 n_boot: int = 100, boot_sessions: int = 2_000, seed: Seed = 0, level: float = LEVEL
                 ) -> dict[str, tuple[float, float, float]]:
    """Risk statistics of the total over a session of ``hands`` hands: ``{stat: (estimate, lo, hi)}``.

    One hand of a session is a uniform draw of a logged hand (``clusters``), then of one of that hand's
    observations (:func:`session_totals`), so every hand weighs the same however many observations it has.
    ``mean`` and ``sd`` are exact for the session model (``K·μ`` and ``√K·σ`` of one draw, σ with ddof 0);
    the other statistics use ``n_sessions`` simulated sessions. Intervals: percentile interval over ``n_boot``
    outer replicates that resample the logged hands (and simulate ``boot_sessions`` sessions each, so the
    interval includes the simulation error); ``lo``/``hi`` are NaN when ``n_boot == 0``."""
    rng = np.random.default_rng(seed)
    tab = _by_hand(values, clusters)
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
