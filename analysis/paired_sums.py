"""The sufficient statistics of a paired comparison, gathered one piece of the run at a time.

A paired row (:mod:`analysis.compare`) is a function of its group's independent units (hands, or walls under
duplicate seating): each unit's number of paired observations ``_m``, hands ``_h`` and sums ``x`` (variant),
``x_base`` (baseline) and ``d = x − x_base``. Of those it needs the counts, the sums over units of each sum, its
square and its product with ``_m`` (the cluster ratio mean and its SE), the number of units whose ``d`` is not 0,
and how many units have each nonzero ``d`` (the few-differing intervals and the hands-needed pricing). All add up
over disjoint sets of whole units, so :func:`piecewise` gathers them over the pieces of :mod:`analysis.pieces`.

``values`` selects the sums kept: ``("x", "x_base", "d")`` for a row that is shown, ``("d",)`` for a row whose
p-value alone is needed (a Holm family's rows that ``xuezhan compare`` does not print: the same p-value from
the same moments, a third of the sums).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from analysis.load import Run
from analysis.pieces import advance, pieces, summed
from analysis.stats import ratio_mean_exprs
from analysis.unit_sums import group_codes, unit_codes

ALL = ("x", "x_base", "d")
"""Every sum of a unit: what a shown row needs."""

P_ONLY = ("d",)
"""The sums that a row's p-value needs."""

_SUFFIX = {"x": "x", "x_base": "xb", "d": "d"}


def unit_sums(joined: pl.LazyFrame, keys: list[str], cluster: str) -> pl.DataFrame:
    """Per group and independent unit: observations ``_m``, hands ``_h`` and the sums ``x``, ``x_base``, ``d``."""
    return (joined.with_columns((pl.col("x") - pl.col("x_base")).alias("d"))
            .group_by([*keys, cluster])
            .agg(pl.len().cast(pl.Float64).alias("_m"), pl.col("hand_id").n_unique().alias("_h"),
                 *[pl.col(c).cast(pl.Float64).sum() for c in ALL])
            .collect())


def _value_exprs(n: str, values: Sequence[str], summed_: bool) -> list[pl.Expr]:
    exprs = {"x": pl.col(n).cast(pl.Float64), "x_base": pl.col(f"{n}__b").cast(pl.Float64),
             "d": (pl.col(n) - pl.col(f"{n}__b")).cast(pl.Float64)}
    return [(exprs[v].sum() if summed_ else exprs[v]).alias(f"{n}__{_SUFFIX[v]}") for v in values]


def wide_unit_sums(a: pl.LazyFrame, b: pl.LazyFrame, on: list[str], keys: list[str], names: Sequence[str],
                   cluster: str, values: Sequence[str] = ALL) -> pl.DataFrame:
    """Per group of ``keys`` and unit: ``_m``, ``_h`` and, for each quantity ``n`` of ``names``, the sums
    ``n__x``, ``n__xb``, ``n__d`` (those of ``values``). ``a`` (the variant) has one column per quantity, ``b``
    (the baseline) the same columns suffixed ``__b``; the arms are joined once on ``on``. When every unit is one
    joined row (the unit is the hand and ``on`` adds only group keys to it: a seat's hand, a hand) the rows are the
    unit sums and no group-by runs (the same numbers: a sum of one value is that value)."""
    return _units(inner_join(a, b, on).lazy(), on, keys, names, cluster, values)


def _units(joined: pl.LazyFrame, on: list[str], keys: list[str], names: Sequence[str], cluster: str,
           values: Sequence[str]) -> pl.DataFrame:
    """:func:`wide_unit_sums` of the joined arms."""
    if cluster == "hand_id" and set(on) - {"hand_id"} <= set(keys):
        return joined.select(*keys, cluster, pl.lit(1.0).alias("_m"), pl.lit(1, dtype=pl.UInt32).alias("_h"),
                             *[e for n in names for e in _value_exprs(n, values, False)]).collect()
    return (joined.group_by([*keys, cluster])
            .agg(pl.len().cast(pl.Float64).alias("_m"), pl.col("hand_id").n_unique().alias("_h"),
                 *[e for n in names for e in _value_exprs(n, values, True)])
            .collect())


def inner_join(a: pl.LazyFrame, b: pl.LazyFrame, on: list[str]) -> pl.DataFrame:
    """``a.join(b, on=on, how="inner")``: the arms of a paired comparison log the same hands in the same order
    (hand order, seat order), so when the two arms' key columns are equal row for row the join is the two frames
    side by side (no hash join: the same rows, found in a tenth of the time); otherwise polars' join."""
    da, db = pl.collect_all([a, b])
    if da.height == db.height and all(da[c].equals(db[c]) for c in on):
        return pl.concat([da, db.drop(on)], how="horizontal")
    return da.join(db, on=on, how="inner")


def wide_gather(a: pl.LazyFrame, b: pl.LazyFrame, on: list[str], keys: list[str], names: Sequence[str],
                cluster: str, name: str, values: Sequence[str] = ALL) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`wide_moments` of :func:`wide_unit_sums` (the same two frames, groups in another order) with numpy:
    the joined rows summed per group and unit by ``bincount`` (:mod:`analysis.unit_sums`), the moments and the
    counts of each nonzero unit difference taken from those sums — no group-by by unit, no frame of units."""
    joined = inner_join(a, b, on)
    code, groups = group_codes(joined, keys)
    ucode, C = unit_codes(joined[cluster].to_numpy())
    G = len(groups)
    if joined.height == 0 or 64 * joined.height + 4096 < G * C:  # no rows, or sparse units: polars
        return wide_moments(_units(joined.lazy(), on, keys, names, cluster, values), keys, names, name, values)
    slot = code * C + ucode
    m = np.bincount(slot, minlength=G * C).reshape(G, C).astype(np.float64)
    if cluster == "hand_id":
        n_hands = np.count_nonzero(m, axis=1)
    else:
        hcode, H = unit_codes(joined["hand_id"].to_numpy())
        n_hands = np.count_nonzero(np.bincount(code * H + hcode, minlength=G * H).reshape(G, H), axis=1)
    head = {"n_units": np.count_nonzero(m, axis=1), "n_hands": n_hands, "_M": m.sum(axis=1),
            "_MM": (m * m).sum(axis=1)}
    kcols = {k: [g[i] for g in groups] for i, k in enumerate(keys)}
    kschema = {k: joined.schema[k] for k in keys}
    moms, differing = [], []
    for n in names:
        x, xb = (joined[c].cast(pl.Float64).to_numpy() for c in (n, f"{n}__b"))
        sums = {"x": x, "x_base": xb, "d": (joined[n] - joined[f"{n}__b"]).cast(pl.Float64).to_numpy()}
        per = {v: np.bincount(slot, weights=sums[v], minlength=G * C).reshape(G, C) for v in values}
        d = per["d"]
        cols = {**kcols, name: [n] * G, **head, "n_differ": np.count_nonzero(d, axis=1)}
        for v in values:
            cols.update({f"{v}__T": per[v].sum(axis=1), f"{v}__SS": (per[v] * per[v]).sum(axis=1),
                         f"{v}__SM": (per[v] * m).sum(axis=1)})
        moms.append(pl.DataFrame(cols, schema_overrides={**kschema, name: pl.String, "n_units": pl.Int64,
                                                         "n_hands": pl.Int64, "n_differ": pl.Int64}))
        for g in range(G):
            nz = d[g][d[g] != 0]
            vals, counts = np.unique(nz, return_counts=True)
            differing.append(pl.DataFrame({**{k: [groups[g][i]] * vals.size for i, k in enumerate(keys)},
                                           name: [n] * vals.size, "d": vals, "len": counts},
                                          schema={**kschema, name: pl.String, "d": pl.Float64, "len": pl.Int64}))
    mom = pl.concat(moms)
    return (mom if keys else mom.filter(pl.col("n_units") > 0)), pl.concat(differing)


def _moment_aggs(cols: dict[str, str]) -> list[pl.Expr]:
    """Sums over units of each value column (``cols``: value → column), its square and its product with ``_m``."""
    aggs = []
    for v, c in cols.items():
        aggs += [pl.col(c).sum().alias(f"{v}__T"), (pl.col(c) ** 2).sum().alias(f"{v}__SS"),
                 (pl.col(c) * pl.col("_m")).sum().alias(f"{v}__SM")]
    return aggs


def _count_aggs(d: str) -> list[pl.Expr]:
    return [pl.len().cast(pl.Int64).alias("n_units"), pl.col("_h").sum().cast(pl.Int64).alias("n_hands"),
            pl.col("_m").sum().alias("_M"), (pl.col("_m") ** 2).sum().alias("_MM"),
            (pl.col(d) != 0).sum().cast(pl.Int64).alias("n_differ")]


def _grouped(df: pl.DataFrame, keys: list[str], aggs: list[pl.Expr]) -> pl.DataFrame:
    return df.group_by(keys, maintain_order=True).agg(aggs) if keys else df.select(aggs)


def unit_moments(units: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per group of a long unit frame (:func:`unit_sums`): unit counts, ``n_differ`` and the sums over units of
    ``x``, ``x_base`` and ``d`` (additive over pieces of whole units)."""
    return _grouped(units, keys, _count_aggs("d") + _moment_aggs({v: v for v in ALL}))


def wide_moments(wide: pl.DataFrame, keys: list[str], names: Sequence[str], name: str,
                 values: Sequence[str] = ALL) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(moments, differing)`` of a :func:`wide_unit_sums` frame, one block of rows per quantity (column
    ``name``): the moments of :func:`unit_moments` (those of ``values``) and the count ``len`` of units with
    each nonzero ``d`` per group (``keys…, name, d, len``)."""
    moms, differing = [], []
    for n in names:
        d = f"{n}__d"
        aggs = _count_aggs(d) + _moment_aggs({v: f"{n}__{_SUFFIX[v]}" for v in values})
        mom = _grouped(wide, keys, aggs)
        moms.append((mom if keys else mom.filter(pl.col("n_units") > 0))  # no unit: no row, as with keys
                    .select(*keys, pl.lit(n).alias(name), pl.exclude(keys)))
        differing.append(wide.filter(pl.col(d) != 0).group_by(*keys, d).agg(pl.len().cast(pl.Int64))
                         .select(*keys, pl.lit(n).alias(name), pl.col(d).alias("d"), "len"))
    return pl.concat(moms), pl.concat(differing)


def moments(mom: pl.DataFrame, level: float, values: Sequence[str] = ALL) -> pl.DataFrame:
    """Cluster ratio means and SEs per group from :func:`unit_moments` / :func:`wide_moments`: ``mean``,
    ``_se_a`` (of ``x``), ``mean_baseline``, ``_se_b`` (of ``x_base``), ``diff``, ``se_paired`` (of ``d``) —
    those of ``values`` — and ``n_obs``."""
    n, M, MM = pl.col("n_units").cast(pl.Float64), pl.col("_M"), pl.col("_MM")
    names = {"x": ("mean", "_se_a"), "x_base": ("mean_baseline", "_se_b"), "d": ("diff", "se_paired")}
    cols = []
    for v in values:
        m, e, _, _ = ratio_mean_exprs(pl.col(f"{v}__T"), pl.col(f"{v}__SS"), pl.col(f"{v}__SM"), M, MM, n, level)
        cols += [m.alias(names[v][0]), e.alias(names[v][1])]
    return mom.with_columns(*cols, pl.col("_M").cast(pl.Int64).alias("n_obs"))


def piecewise(run: Run, gather: Callable[[Run], tuple[pl.DataFrame, pl.DataFrame]],
              keys: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(moments, differing)``: ``gather(piece)`` (:func:`wide_moments` of a piece's units) summed over the run's
    pieces: all that the intervals and the hands needed read of the units, a few distinct sums a group however
    many units the run has."""
    moms, differing = [], []
    for piece in pieces(run):
        mom, diff = gather(piece)
        moms.append(mom)
        differing.append(diff)
        advance()
    return summed(moms, keys), summed(differing, [*keys, "d"])
