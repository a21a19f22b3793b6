"""Means and shares clustered by an independent unit (the hand, the wall under duplicate seating, the session):
the ratio estimator with its cluster-robust SE, shares with the Wilson interval at the effective sample size,
distributions of a discrete column, and the SE of a difference of two groups that share clusters.

The conventions are in :mod:`analysis.stats`, which re-exports every public name here.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.inference import LEVEL, z_value
from analysis.pieces import Pieces, collect_each, summed
from analysis.unit_sums import seat_proportion_sums

Frame = pl.LazyFrame | Pieces
"""What the estimators read: a lazy frame, or :class:`analysis.pieces.Pieces` (a run read one hand-id range at a
time; the estimators sum their per-unit statistics over the pieces, so memory follows the piece)."""


def cluster_moments(lf: pl.LazyFrame, by: Sequence[str], values: Sequence[str],
                    cluster: str = "hand_id", one_row: bool = False) -> pl.LazyFrame:
    """Per group of ``by``: ``n`` clusters, ``n_obs``, ``n_hands`` (distinct ``hand_id`` when the frame has that
    column and the clusters are walls, else ``n``), and for each value column ``v`` the moments
    ``v__T = ΣS``, ``v__SS = ΣS²``, ``v__SM = ΣS·m`` with ``S`` the cluster sum; plus ``_MM = Σm²``.

    ``one_row``: the caller knows that each row is a cluster of its group (the cluster is the hand and the frame
    has one row per hand and group: the hands table, the players table by seat or dealer position); the rows
    are then the cluster sums and no group-by by cluster runs (the same numbers: a sum of one value is that
    value; a fifth of the time)."""
    by = list(by)
    count_hands = cluster != "hand_id" and "hand_id" in lf.collect_schema().names()
    if one_row and cluster == "hand_id":
        per_cluster = lf.select(*by, pl.lit(1.0).alias("_m"), *[pl.col(v).cast(pl.Float64).alias(v) for v in values])
    else:
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


def collected_moments(lf: Frame, by: Sequence[str], values: Sequence[str], cluster: str = "hand_id",
                      one_row: bool = False) -> pl.DataFrame:
    """:func:`cluster_moments` collected (summed over the pieces of a :class:`~analysis.pieces.Pieces`)."""
    return summed(collect_each(lf, lambda x: [cluster_moments(x, by, values, cluster, one_row)])[0], by)


def cluster_means(lf: Frame, by: Sequence[str], values: Sequence[str], cluster: str = "hand_id",
                  level: float = LEVEL, name: str = "quantity", shares: Sequence[str] = (),
                  one_row: bool = False) -> pl.DataFrame:
    """Long table ``by…, <name>, n_units, n_hands, n_obs, mean, se, ci_lo, ci_hi``: the mean of each value
    column per group with its cluster-robust SE over the ``n_units`` clusters (``cluster``: hands by default,
    walls under duplicate seating), in ``values`` order. Columns named in ``shares`` are 0/1 indicators: their
    interval is the Wilson interval at the effective sample size (:func:`share_interval_exprs`), never outside
    [0, 1]; the others get ``mean ± z·se``."""
    return means_from_moments(collected_moments(lf, by, values, cluster, one_row), by, values, level, name, shares)


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


def cluster_proportions(lf: Frame, by: Sequence[str], value: str, cluster: str = "hand_id",
                        level: float = LEVEL) -> pl.DataFrame:
    """Distribution of a discrete column per group: ``by…, value, k, n_obs, n_units, p, se, p_lo, p_hi``.

    ``p`` = share of the group's observations taking that value; its SE is cluster-robust (``cluster`` is the
    independent unit) and the interval is the effective-n Wilson one of :func:`share_interval_exprs`."""
    by = list(by)

    def queries(x: pl.LazyFrame) -> list[pl.LazyFrame]:
        sizes = x.group_by([*by, cluster]).agg(pl.len().cast(pl.Float64).alias("_m"))
        totals = sizes.group_by(by).agg(pl.len().alias("n_units"), pl.col("_m").sum().alias("_M"),
                                        (pl.col("_m") ** 2).sum().alias("_MM"))
        counts = (x.group_by([*by, cluster, value]).agg(pl.len().cast(pl.Float64).alias("_c"))
                  .join(sizes, on=[*by, cluster], how="inner")
                  .group_by([*by, value]).agg(pl.col("_c").sum().alias("_T"),
                                              (pl.col("_c") ** 2).sum().alias("_SS"),
                                              (pl.col("_c") * pl.col("_m")).sum().alias("_SM")))
        return [counts, totals]

    def reduce(frames: list[pl.DataFrame]) -> list[pl.DataFrame]:
        rows = frames[-1]
        fast = seat_proportion_sums(rows, by, value, cluster) if rows.height else None
        return list(fast) if fast is not None else list(pl.collect_all(queries(rows.lazy())))

    counts, totals = collect_each(lf, lambda x: [x.select(*dict.fromkeys([*by, cluster, value]))], reduce)
    est = cluster_share_exprs(pl.col("_T"), pl.col("_SS"), pl.col("_SM"), pl.col("_M"), pl.col("_MM"),
                              pl.col("n_units"), "p", level)
    return (summed(counts, [*by, value]).join(summed(totals, by), on=by, how="inner")
            .with_columns(est)
            .select(*by, value, pl.col("_T").cast(pl.Int64).alias("k"), pl.col("_M").cast(pl.Int64).alias("n_obs"),
                    pl.col("n_units").cast(pl.Int64), "p", pl.col("p_se").alias("se"), "p_lo", "p_hi")
            .sort([*by, value]))


def cluster_diff_se(lf: Frame, by: Sequence[str], group: str, value: str,
                    cluster: str = "hand_id") -> pl.DataFrame:
    """Cluster-robust SE of ``mean(value | group) − mean(value | not group)`` when both groups share clusters.

    This is the SE of the coefficient ``b`` of the OLS ``value = a + b·group`` (``b`` = the difference of the
    two group means over observations), clustered by ``cluster``: with ``e`` = value − its group's mean,
    ``A_h = Σ e`` over cluster ``h``'s observations in the group, ``B_h`` the same outside it, and ``N₁``,
    ``N₀`` the two groups' observation counts, ``se² = G/(G−1) · Σ_h (A_h/N₁ − B_h/N₀)²`` over the ``G``
    clusters with an observation in either group (the sandwich estimator, with the ``G/(G−1)`` factor of
    :func:`ratio_mean_exprs`). A cluster holding observations of both groups enters once, so their covariance
    counts. Returns ``by…, n_units (G), n_obs, diff, se`` for the groups where both sides have observations
    (``se`` null when ``G < 2``). Two passes over the frame: the group means, then the clusters' terms."""
    by = list(by)
    sides = summed(collect_each(lf, lambda x: [
        _per_unit(x, by, group, [value], cluster).group_by([*by, group])
        .agg(pl.col("_m").sum().alias("_N"), pl.col("_s0").sum().alias("_T"))])[0], [*by, group])
    infl = summed(collect_each(lf, lambda x: influence_queries(x, by, group, [value], [sides], cluster))[0], by)
    return diff_rows(sides, infl, by, group)


def _per_unit(x: pl.LazyFrame, by: list[str], group: str, values: Sequence[str], cluster: str) -> pl.LazyFrame:
    """Per group, side and unit: observations ``_m`` and the sum ``_s<i>`` of each value."""
    return (x.group_by([*by, cluster, group])
            .agg(pl.len().cast(pl.Float64).alias("_m"),
                 *[pl.col(v).cast(pl.Float64).sum().alias(f"_s{i}") for i, v in enumerate(values)]))


def diff_sides(mom: pl.DataFrame, keys: Sequence[str], value: str) -> pl.DataFrame:
    """The two sides' observations ``_N`` and sums ``_T`` of ``value`` (what :func:`cluster_diff_se`'s first pass
    gathers) from :func:`cluster_moments` collected by ``keys`` (the groups and the side): the same sums."""
    return mom.select(*keys, pl.col("n_obs").cast(pl.Float64).alias("_N"), pl.col(f"{value}__T").alias("_T"))


def influence_queries(x: pl.LazyFrame, by: Sequence[str], group: str, values: Sequence[str],
                      sides: Sequence[pl.DataFrame], cluster: str) -> list[pl.LazyFrame]:
    """:func:`cluster_diff_se`'s second pass for several values of one frame at once (one group-by by unit):
    per group ``n_units`` and ``_U = Σ_h u_h²``, one query per value (``sides[i]``: the summed sides of
    ``values[i]``)."""
    by = list(by)
    per = _per_unit(x, by, group, values, cluster)
    return [per.select(*by, cluster, group, "_m", pl.col(f"_s{i}").alias("_s")).join(side.lazy(), on=[*by, group])
            .with_columns(((pl.col("_s") - pl.col("_T") / pl.col("_N") * pl.col("_m")) / pl.col("_N")
                           * pl.when(pl.col(group)).then(1.0).otherwise(-1.0)).alias("_u"))
            .group_by([*by, cluster]).agg(pl.col("_u").sum())
            .group_by(by).agg(pl.len().cast(pl.Int64).alias("n_units"), (pl.col("_u") ** 2).sum().alias("_U"))
            for i, side in enumerate(sides)]


def diff_rows(sides: pl.DataFrame, infl: pl.DataFrame, by: Sequence[str], group: str) -> pl.DataFrame:
    """``by…, n_units, n_obs, diff, se`` of :func:`cluster_diff_se` from the summed sides and influence terms."""
    by = list(by)
    both = (sides.group_by(by).agg(pl.len().alias("_sides"),
                                   (pl.col("_T") / pl.col("_N")).filter(pl.col(group)).first().alias("_mean1"),
                                   (pl.col("_T") / pl.col("_N")).filter(~pl.col(group)).first().alias("_mean0"),
                                   pl.col("_N").sum().cast(pl.Int64).alias("n_obs"))
            .filter(pl.col("_sides") == 2))
    g = pl.col("n_units").cast(pl.Float64)
    return (both.join(infl, on=by)
            .select(*by, "n_units", "n_obs", (pl.col("_mean1") - pl.col("_mean0")).alias("diff"),
                    pl.when(g > 1).then((g / (g - 1) * pl.col("_U")).sqrt()).alias("se")))
