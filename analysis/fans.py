"""Fan frequencies: how often each hand type and each pattern flag is won, and how fan / capped fan / 根 fall.

Read from the ``wins`` table (one row per win). Per variant:

- ``p_win`` = share of wins that have the hand type / flag (``k_wins`` of ``n_wins``);
- ``p_hand`` = share of hands with at least one such win (``k_hands`` of ``n_hands``, all hands played,
  including 流局 without a win).

Wins are not independent trials (血战到底 has several wins per hand; the hand — the wall under duplicate
seating, ``Run.cluster`` — is the independent unit), so ``p_win`` is the ratio estimator ``Σ_h k_h / Σ_h m_h``
over the units with at least one win, with the cluster-robust SE ``p_win_se`` and the Wilson interval at the
effective sample size (:func:`analysis.stats.share_interval_exprs`: inside [0, 1], never zero-width).
``p_hand`` is a share of hands with the same treatment (plain Wilson when every hand is its own unit).
``n_units`` = independent units played. :func:`fan_distribution` treats its shares of wins like ``p_win``.
Every hand type of ``simulator.rules.HAND_TYPES`` and every flag of ``simulator.rules.FLAGS`` gets a
row per variant, zeros included, in that canonical order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces, collect_pieces, summed
from analysis.stats import LEVEL, cluster_means, cluster_share_exprs, share_moments
from simulator.rules import FLAGS, HAND_TYPES

FAN_MEASURES = ("fan", "capped_fan", "gen")


def _totals_queries(run: Run) -> list[pl.LazyFrame]:
    """The queries of :func:`_totals` (hands, wins and units per variant), to collect with others."""
    return [run.hands().group_by("variant").agg(pl.len().cast(pl.Int64).alias("n_hands")),
            run.wins().group_by("variant").agg(pl.len().cast(pl.Int64).alias("n_wins")),
            run.hands().group_by("variant").agg(pl.col(run.cluster).n_unique().cast(pl.Int64).alias("n_units"))]


def _summed(run: Run, queries: Callable[[Run], Sequence[pl.LazyFrame]],
            keys: Sequence[Sequence[str]]) -> list[pl.DataFrame]:
    """``queries(piece)`` on every piece of the run, each query's frames summed per group of its ``keys``
    (share moments, totals and counts of units are additive over pieces of whole units)."""
    return [summed(frames, k) for frames, k in zip(collect_pieces(run, queries), keys, strict=True)]


_TOTAL_KEYS = (["variant"], ["variant"], ["variant"])


def _totals(run: Run, collected: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """``variant, n_hands, n_wins, n_units`` (hands, wins, independent units played) in variant order, from the
    collected :func:`_totals_queries`."""
    hands, wins, units = collected
    return (pl.DataFrame({"variant": list(run.variants)}).join(hands, on="variant", how="left")
            .join(wins, on="variant", how="left").join(units, on="variant", how="left")
            .with_columns(pl.col("n_hands", "n_wins", "n_units").fill_null(0)))


def _win_shares(grid: pl.DataFrame, counts: pl.DataFrame, totals: pl.DataFrame, on: list[str], k: str,
                prefix: str, level: float, n: str = "n_wins") -> pl.DataFrame:
    """Join the :func:`analysis.stats.share_moments` of wins (or hands) onto ``grid`` (zeros where nothing
    occurred) and add ``prefix, prefix_se, prefix_lo, prefix_hi`` (trials: the ``n`` column of ``grid``)."""
    out = (grid.join(counts.rename({"k": k}).drop("k_units"), on=on, how="left")
           .join(totals.select("variant", pl.col("n_units").alias("_nc"), "_MM"), on="variant", how="left")
           .with_columns(pl.col(k).fill_null(0), pl.col("_SS", "_SM", "_MM", "_nc").fill_null(0)))
    return (out.with_columns(cluster_share_exprs(pl.col(k), pl.col("_SS"), pl.col("_SM"), pl.col(n),
                                                 pl.col("_MM"), pl.col("_nc"), prefix, level))
            .drop("_SS", "_SM", "_MM", "_nc"))


def _frequencies(run: Run, long: Callable[[Run], pl.LazyFrame], key: str, keys: tuple[str, ...],
                 level: float) -> pl.DataFrame:
    """``long(run or a piece)`` has one row per (win, key value): columns variant, hand_id, deal_id, <key>."""
    cl = run.cluster
    ids = run.id_columns

    def queries(r: Run) -> list[pl.LazyFrame]:  # shared scans computed once
        events = long(r)
        return [*share_moments(events, r.wins().select("variant", *ids), ["variant"], key, cluster=cl),
                *share_moments(events.select("variant", *ids, key).unique(),
                               r.hands().select("variant", *ids), ["variant"], key, cluster=cl),
                *_totals_queries(r)]

    counts, totals, hcounts, htotals, *sizes = _summed(
        run, queries, (["variant", key], ["variant"], ["variant", key], ["variant"], *_TOTAL_KEYS))
    return _shares(run, counts, totals, hcounts, htotals, sizes, key, keys, level)


def _shares(run: Run, counts: pl.DataFrame, totals: pl.DataFrame, hcounts: pl.DataFrame, htotals: pl.DataFrame,
            sizes: Sequence[pl.DataFrame], key: str, keys: tuple[str, ...], level: float) -> pl.DataFrame:
    """The table of :func:`_frequencies` from the summed share moments of wins and of hands."""
    extra = sorted(set(counts[key].drop_nulls().to_list()) - set(keys))
    grid = _totals(run, sizes).join(pl.DataFrame({key: list(keys) + extra,
                                           "_order": range(len(keys) + len(extra))}), how="cross")
    vorder = pl.DataFrame({"variant": list(run.variants), "_vorder": range(len(run.variants))})
    wins = _win_shares(grid, counts, totals, ["variant", key], "k_wins", "p_win", level)
    return (_win_shares(wins, hcounts, htotals, ["variant", key], "k_hands", "p_hand", level, n="n_hands")
            .join(vorder, on="variant").sort("_vorder", "_order")
            .select("variant", key, "k_wins", "n_wins", "p_win", "p_win_se", "p_win_lo", "p_win_hi",
                    "k_hands", "n_hands", "p_hand", "p_hand_lo", "p_hand_hi", "n_units"))


def hand_type_frequencies(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Per variant and hand type (``simulator.rules.HAND_TYPES`` order): ``k_wins, n_wins, p_win(_se/_lo/_hi),
    k_hands, n_hands, p_hand(_lo/_hi), n_units`` — share of wins with that label and share of hands with such a
    win, both clustered by ``run.cluster`` with effective-n Wilson intervals."""
    run = as_run(run)
    return with_id(_frequencies(run, lambda r: r.wins().select("variant", *r.id_columns, "hand_type"),
                                "hand_type", HAND_TYPES, level), "hand_type", ["hand_type"])


def flag_frequencies(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Per variant and pattern flag (``simulator.rules.FLAGS`` order): same columns as
    :func:`hand_type_frequencies` with ``flag`` as the key (a win counts once for every flag it has)."""
    run = as_run(run)
    return with_id(_wide_frequencies(run, "flag", {f: pl.col(f) for f in FLAGS}, level), "flag", ["flag"])


def _wide_frequencies(run: Run, key: str, events: dict[str, pl.Expr], level: float) -> pl.DataFrame:
    """:func:`_frequencies` without a row per (win, key value): ``events`` gives for each key value whether a win
    has it (every value listed: the flags); each unit's count of wins with it and of hands with one are summed
    per variant (the same sums: units without it add zeros)."""
    cl = run.cluster
    names = list(events)

    def queries(r: Run) -> list[pl.LazyFrame]:
        ids = ["hand_id"] if cl == "hand_id" else list(r.id_columns)
        per_hand = r.wins().group_by("variant", *ids).agg(
            pl.len().alias("_w"), *[e.cast(pl.Int64).sum().alias(f"{n}:") for n, e in events.items()])
        if cl == "hand_id":  # the hand is the unit: per hand = per unit
            wins = per_hand.select("variant", cl, pl.col("_w").cast(pl.Float64).alias("_m"),
                                   *[pl.col(f"{n}:") for n in names], *[(pl.col(f"{n}:") > 0).cast(pl.UInt32)
                                                                          .alias(f"{n}:h") for n in names])
            hands = r.hands().select("variant", cl, pl.lit(1.0).alias("_m"))
        else:
            wins = per_hand.group_by("variant", cl).agg(
                pl.col("_w").sum().cast(pl.Float64).alias("_m"), *[pl.col(f"{n}:").sum() for n in names],
                *[(pl.col(f"{n}:") > 0).sum().alias(f"{n}:h") for n in names])
            hands = r.hands().group_by("variant", cl).agg(pl.len().cast(pl.Float64).alias("_m"))
        hands = hands.join(wins.drop("_m"), on=["variant", cl], how="left")
        return [*_wide_moments(wins, names, ":"), *_wide_moments(hands, names, ":h"), *_totals_queries(r)]

    counts, totals, hcounts, htotals, *sizes = _summed(
        run, queries, (["variant"], ["variant"], ["variant"], ["variant"], *_TOTAL_KEYS))
    return _shares(run, _long(counts, names, key), totals, _long(hcounts, names, key), htotals, sizes, key,
                   tuple(names), level)


def _wide_moments(units: pl.LazyFrame, names: list[str], suffix: str) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """:func:`analysis.stats.share_moments`' ``(counts, totals)`` per variant, wide: for each key value ``n`` the
    columns ``n:k``, ``n:k_units``, ``n:_SS``, ``n:_SM`` from ``units`` (one row per unit: trials ``_m``, events
    ``n<suffix>``; a unit without a trial has ``_m`` 0 or null and no events)."""
    counts = units.group_by("variant").agg(*[e for n in names for e in (
        pl.col(n + suffix).fill_null(0).sum().cast(pl.Int64).alias(f"{n}:k"),
        (pl.col(n + suffix) > 0).sum().cast(pl.Int64).alias(f"{n}:k_units"),
        (pl.col(n + suffix).cast(pl.Float64) ** 2).sum().alias(f"{n}:_SS"),
        (pl.col(n + suffix).cast(pl.Float64) * pl.col("_m")).sum().alias(f"{n}:_SM"))])
    totals = units.group_by("variant").agg(pl.len().cast(pl.Int64).alias("n_units"),
                                           pl.col("_m").sum().cast(pl.Int64).alias("n_obs"),
                                           (pl.col("_m") ** 2).sum().alias("_MM"))
    return counts, totals


def _long(wide: pl.DataFrame, names: list[str], key: str) -> pl.DataFrame:
    """The wide counts of :func:`_wide_moments` as :func:`analysis.stats.share_moments` gives them: one row per
    variant and key value that occurred."""
    return pl.concat([wide.select("variant", pl.lit(n).alias(key),
                                  *[pl.col(f"{n}:{c}").alias(c) for c in ("k", "k_units", "_SS", "_SM")])
                      for n in names]).filter(pl.col("k") > 0)


def fan_distribution(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Distribution over wins of ``fan`` (before the cap), ``capped_fan`` and ``gen`` (根, as scored):
    ``variant, measure, value, k, n_wins, n_units, p, se, p_lo, p_hi``, every value from 0 to the largest seen.
    ``p`` is a share of wins, clustered by ``run.cluster`` like ``p_win`` (cluster-robust SE, effective-n
    Wilson interval)."""
    run = as_run(run)

    def queries(r: Run) -> list[pl.LazyFrame]:  # each measure on its own: no long copy, no string key
        trials = r.wins().select("variant", r.cluster)
        each = [share_moments(r.wins().select("variant", r.cluster, pl.col(m).cast(pl.Int64).alias("value")), trials,
                              ["variant"], "value", cluster=r.cluster) for m in FAN_MEASURES]
        counts = pl.concat([c.select("variant", pl.lit(m).alias("measure"), pl.exclude("variant"))
                            for (c, _), m in zip(each, FAN_MEASURES, strict=True)])
        return [counts, each[0][1], *_totals_queries(r)]

    counts, totals, *sizes = _summed(run, queries, (["variant", "measure", "value"], ["variant"], *_TOTAL_KEYS))
    top = counts["value"].max()
    top = int(top) if top is not None else 0
    grid = (_totals(run, sizes).select("variant", "n_wins", "n_units")
            .join(pl.DataFrame({"measure": list(FAN_MEASURES), "_m": range(len(FAN_MEASURES))}), how="cross")
            .join(pl.DataFrame({"value": range(0, top + 1)}, schema={"value": pl.Int64}), how="cross"))
    vorder = pl.DataFrame({"variant": list(run.variants), "_vorder": range(len(run.variants))})
    return with_id(_win_shares(grid, counts, totals, ["variant", "measure", "value"], "k", "p", level)
                   .rename({"p_se": "se"})
                   .join(vorder, on="variant")
                   .sort("_vorder", "_m", "value")
                   .select("variant", "measure", "value", "k", "n_wins", "n_units", "p", "se", "p_lo", "p_hi"),
                   "distribution", ["measure", "value"])


def fan_summary(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Mean ``fan``, ``capped_fan``, ``gen`` per win and ``wins`` per hand, per variant: ``variant, quantity,
    n_units, n_hands, n_obs, mean, se, ci_lo, ci_hi`` (clustered by ``run.cluster``; ``n_obs`` = wins, or hands
    for ``wins_per_hand``)."""
    run = as_run(run)
    per_win = cluster_means(Pieces(run, lambda r: r.wins()), ["variant"], list(FAN_MEASURES), cluster=run.cluster,
                            level=level)
    per_hand = cluster_means(Pieces(run, lambda r: r.hands().with_columns(pl.col("n_wins").alias("wins_per_hand"))),
                             ["variant"], ["wins_per_hand"], cluster=run.cluster, level=level, one_row=True)
    vorder = pl.DataFrame({"variant": list(run.variants), "_vorder": range(len(run.variants))})
    return with_id(pl.concat([per_win, per_hand]).with_row_index("_i").join(vorder, on="variant")
                   .sort("_vorder", "_i").drop("_vorder", "_i"), "fan_summary", ["quantity"])
