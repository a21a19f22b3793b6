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

import numpy as np
import polars as pl

from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces, Reduce, collect_pieces, summed
from analysis.stats import LEVEL, cluster_means, cluster_share_exprs
from analysis.unit_sums import HandUnits, event_stats, trial_stats
from simulator.rules import FLAGS, HAND_TYPES

FAN_MEASURES = ("fan", "capped_fan", "gen")


def _summed(run: Run, queries: Callable[[Run], Sequence[pl.LazyFrame]], keys: Sequence[Sequence[str]],
            reduce: Reduce | None = None) -> list[pl.DataFrame]:
    """``queries(piece)`` on every piece of the run (``reduce``: applied to each piece's frames, see
    :func:`analysis.pieces.collect_pieces`), each resulting frame summed per group of its ``keys`` (share
    moments, totals and counts of units are additive over pieces of whole units)."""
    return [summed(frames, k) for frames, k in zip(collect_pieces(run, queries, reduce), keys, strict=True)]


_TOTAL_KEYS = (["variant"], ["variant"], ["variant"])


def _totals(run: Run, collected: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """``variant, n_hands, n_wins, n_units`` (hands, wins, independent units played) in variant order, from the
    summed sizes of :func:`_key_shares`."""
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


def _frequencies(run: Run, key: str, keys: tuple[str, ...], level: float) -> pl.DataFrame:
    """Shares of wins (and of hands with such a win) per value of the wins' string column ``key`` (``keys``
    first, in that order, then any other value seen)."""
    code = pl.col(key).replace_strict(list(keys), list(range(len(keys))), default=-1, return_dtype=pl.Int32)

    def keyed(wins: pl.DataFrame) -> dict[str, np.ndarray]:
        codes = wins["_code"].to_numpy()
        out = {keys[c]: codes == c for c in np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(keys)))}
        other = wins["_other"]
        for name in other.drop_nulls().unique().sort().to_list():
            out[name] = (other == name).fill_null(False).to_numpy()
        return out

    counts, totals, hcounts, htotals, *sizes = _summed(
        run, lambda r: _unit_queries(r, [code.alias("_code"), pl.when(code < 0).then(pl.col(key)).alias("_other")]),
        (["variant", key], ["variant"], ["variant", key], ["variant"], *_TOTAL_KEYS),
        lambda frames: _key_shares(run, frames, keyed, key, pl.String))
    return _shares(run, counts, totals, hcounts, htotals, sizes, key, keys, level)


def _unit_queries(r: Run, cols: list[pl.Expr]) -> list[pl.LazyFrame]:
    """Per variant of a piece: its hands (``hand_id`` and the unit column) and the wins' ``hand_id`` and
    ``cols``."""
    ids = list(dict.fromkeys(["hand_id", r.cluster]))
    return [q for v in r.variants for q in (r.hands(v).select(*ids), r.wins(v).select("hand_id", *cols))]


def _key_shares(run: Run, frames: list[pl.DataFrame], keyed: Callable[[pl.DataFrame], dict],
                key: str | tuple[str, ...], dtype: pl.DataType) -> list[pl.DataFrame]:
    """One piece's share moments of wins and of hands per key value (``keyed(wins)``: ``{value: mask over the
    wins}``, values that occur; ``key`` a pair ``(outer, inner)`` when the values are pairs), then the totals
    and sizes (hands, wins and units per variant), from the frames of :func:`_unit_queries`, with numpy
    (:class:`analysis.unit_sums.HandUnits`): the frames :func:`analysis.stats.share_moments` gives, without a
    polars group-by or join by hand or unit."""
    keys = (key,) if isinstance(key, str) else key
    counts, hcounts, totals, htotals, sizes = [], [], [], [], []
    for i, v in enumerate(run.variants):
        hands, wins = frames[2 * i], frames[2 * i + 1]
        units = HandUnits(hands, run.cluster, wins["hand_id"].to_numpy())
        for value, mask in keyed(wins).items():
            c_wins, c_hands = units.events(mask)
            if c_wins.any():
                named = dict(zip(keys, value if len(keys) > 1 else (value,), strict=True))
                counts.append({"variant": v, **named, **event_stats(c_wins, units.wins_per_unit)})
                hcounts.append({"variant": v, **named, **event_stats(c_hands, units.hands_per_unit)})
        totals.append({"variant": v, **trial_stats(units.wins_per_unit)})
        htotals.append({"variant": v, **trial_stats(units.hands_per_unit)})
        sizes.append((v, hands.height, wins.height, int(np.count_nonzero(units.hands_per_unit))))
    kschema = {"variant": pl.String, **dict(zip(keys, (pl.String,) * (len(keys) - 1) + (dtype,), strict=True))}
    cschema = {**kschema, "k": pl.Int64, "k_units": pl.Int64, "_SS": pl.Float64, "_SM": pl.Float64}
    tschema = {"variant": pl.String, "n_units": pl.Int64, "n_obs": pl.Int64, "_MM": pl.Float64}
    return [pl.DataFrame(counts, schema=cschema), pl.DataFrame(totals, schema=tschema),
            pl.DataFrame(hcounts, schema=cschema), pl.DataFrame(htotals, schema=tschema),
            *[pl.DataFrame({"variant": [r[0] for r in sizes], name: [r[j] for r in sizes]},
                           schema={"variant": pl.String, name: pl.Int64})
              for j, name in ((1, "n_hands"), (2, "n_wins"), (3, "n_units"))]]


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
    return with_id(_frequencies(run, "hand_type", HAND_TYPES, level), "hand_type", ["hand_type"])


def flag_frequencies(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Per variant and pattern flag (``simulator.rules.FLAGS`` order): same columns as
    :func:`hand_type_frequencies` with ``flag`` as the key (a win counts once for every flag it has)."""
    run = as_run(run)
    return with_id(_wide_frequencies(run, "flag", {f: pl.col(f) for f in FLAGS}, level), "flag", ["flag"])


def _wide_frequencies(run: Run, key: str, events: dict[str, pl.Expr], level: float) -> pl.DataFrame:
    """:func:`_frequencies` for keys given by ``events``: for each key value whether a win has it (a win may
    have several: the flags)."""
    names = list(events)

    def keyed(wins: pl.DataFrame) -> dict[str, np.ndarray]:
        return {n: wins[f"{n}:"].to_numpy() for n in names}

    counts, totals, hcounts, htotals, *sizes = _summed(
        run, lambda r: _unit_queries(r, [e.fill_null(False).alias(f"{n}:") for n, e in events.items()]),
        (["variant", key], ["variant"], ["variant", key], ["variant"], *_TOTAL_KEYS),
        lambda frames: _key_shares(run, frames, keyed, key, pl.String))
    return _shares(run, counts, totals, hcounts, htotals, sizes, key, tuple(names), level)


def fan_distribution(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Distribution over wins of ``fan`` (before the cap), ``capped_fan`` and ``gen`` (根, as scored):
    ``variant, measure, value, k, n_wins, n_units, p, se, p_lo, p_hi``, every value from 0 to the largest seen.
    ``p`` is a share of wins, clustered by ``run.cluster`` like ``p_win`` (cluster-robust SE, effective-n
    Wilson interval)."""
    run = as_run(run)

    def keyed(wins: pl.DataFrame) -> dict[tuple[str, int], np.ndarray]:
        out = {}
        for m in FAN_MEASURES:
            values = wins[m].fill_null(-1).to_numpy()
            for x in np.flatnonzero(np.bincount(values[values >= 0])):
                out[(m, int(x))] = values == x
        return out

    counts, totals, _, _, *sizes = _summed(
        run, lambda r: _unit_queries(r, [pl.col(m).cast(pl.Int64) for m in FAN_MEASURES]),
        (["variant", "measure", "value"], ["variant"], ["variant", "measure", "value"], ["variant"], *_TOTAL_KEYS),
        lambda frames: _key_shares(run, frames, keyed, ("measure", "value"), pl.Int64))
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
