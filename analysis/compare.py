"""Paired comparison of a variant against a baseline on common random numbers.

Hands with the same ``hand_id`` were played on the same wall with the same bot random streams in every
variant, so a rule change is measured hand by hand: ``d = x_variant − x_baseline`` per player-hand (joined on
``hand_id`` + ``seat``) or per hand (hand-level metrics). Only hands present in both variants are used.

For each group (seat, or bot pair ``bot``/``bot_baseline``) and quantity:

- ``diff`` = mean of ``d`` (= difference of the two means); ``se_paired`` = its cluster-robust SE (hands are
  the unit; ``sd(d)/√n`` for one seat); ``ci_lo``/``ci_hi`` = ``diff ± z·se_paired``; ``p_value`` two-sided
  normal;
- ``se_unpaired`` = ``√(se_a² + se_b²)``, the SE the same number of hands would give from independent runs;
- ``vrf`` = ``se_unpaired² / se_paired²``, the variance-reduction factor of pairing (how many times more hands
  an unpaired design needs for the same precision);
- ``hands_paired`` / ``hands_unpaired`` = hands needed to detect a true difference of ``detect`` with a
  two-sided test at 95% and 80% power: ``⌈((z_0.975 + z_0.80)·σ/detect)²⌉`` with ``σ = se·√n`` of the
  respective design (per arm when unpaired). ``detect`` is in the quantity's own unit: :data:`DETECT` base
  units for scores, :data:`HAND_DETECT` per hand metric; every row carries the ``detect`` it used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import NormalDist

import numpy as np
import polars as pl

from analysis.ev import COMPONENTS, group_columns
from analysis.load import Run, as_run
from analysis.stats import LEVEL, POWER, cluster_means, hands_needed, z_value

DETECT = 0.1
"""Default difference to detect: 0.1 base units per hand (score quantities)."""


def _finish(stats: pl.DataFrame, keys: list[str], variant: str, baseline: str, detect: float | Mapping[str, float],
            level: float, power: float) -> pl.DataFrame:
    """From long cluster means of x, x_base, d to one row per key with the paired statistics (``detect``: one
    number, or one per ``metric`` key)."""
    def pick(q: str, names: dict[str, str]) -> pl.DataFrame:
        return stats.filter(pl.col("_q") == q).select(*keys, *[pl.col(a).alias(b) for a, b in names.items()])

    wide = (pick("d", {"n_hands": "n_hands", "n_obs": "n_obs", "mean": "diff", "se": "se_paired"})
            .join(pick("x", {"mean": "mean", "se": "_se_a"}), on=keys)
            .join(pick("x_base", {"mean": "mean_baseline", "se": "_se_b"}), on=keys))
    z = z_value(level)
    wide = wide.with_columns(
        (pl.col("diff") - z * pl.col("se_paired")).alias("ci_lo"),
        (pl.col("diff") + z * pl.col("se_paired")).alias("ci_hi"),
        (pl.col("_se_a") ** 2 + pl.col("_se_b") ** 2).sqrt().alias("se_unpaired"))
    wide = wide.with_columns(
        pl.when(pl.col("se_paired") > 0).then(pl.col("se_unpaired") ** 2 / pl.col("se_paired") ** 2).alias("vrf"))
    n = wide["n_hands"].to_numpy().astype(float)
    se_p = wide["se_paired"].to_numpy().astype(float)
    se_u = wide["se_unpaired"].to_numpy().astype(float)
    diff = wide["diff"].to_numpy().astype(float)
    if isinstance(detect, Mapping):
        d = wide["metric"].replace_strict(dict(detect), return_dtype=pl.Float64).to_numpy()
    else:
        d = np.full(wide.height, float(detect))
    with np.errstate(divide="ignore", invalid="ignore"):
        zstat = np.where(se_p > 0, np.abs(diff) / se_p, np.nan)
    pval = np.array([2 * NormalDist().cdf(-v) if np.isfinite(v) else np.nan for v in zstat])
    extra = pl.DataFrame({
        "p_value": pl.Series(pval, dtype=pl.Float64, nan_to_null=True),
        "detect": pl.Series(d, dtype=pl.Float64),
        "hands_paired": pl.Series(hands_needed(se_p, n, d, level, power), nan_to_null=True),
        "hands_unpaired": pl.Series(hands_needed(se_u, n, d, level, power), nan_to_null=True),
    })
    return (pl.concat([wide, extra], how="horizontal")
            .with_columns(pl.lit(variant).alias("variant"), pl.lit(baseline).alias("baseline"),
                          pl.col("hands_paired", "hands_unpaired").cast(pl.Int64))
            .select("variant", "baseline", *keys, "n_hands", "n_obs", "mean", "mean_baseline", "diff",
                    "se_paired", "ci_lo", "ci_hi", "p_value", "se_unpaired", "vrf", "detect", "hands_paired",
                    "hands_unpaired"))


def _paired_stats(joined: pl.LazyFrame, keys: list[str], variant: str, baseline: str, detect: float,
                  level: float, power: float) -> pl.DataFrame:
    stats = cluster_means(joined.with_columns((pl.col("x") - pl.col("x_base")).alias("d")), keys,
                          ["x", "x_base", "d"], level=level, name="_q")
    return _finish(stats, keys, variant, baseline, detect, level, power)


def _variants(run: Run, variant: str, baseline: str | None) -> tuple[str, str]:
    base = run.check(baseline) if baseline is not None else run.baseline
    return run.check(variant), base


def paired_comparison(run: Run | str, variant: str, baseline: str | None = None, by: str | Sequence[str] = "bot",
                      components: Sequence[str] = ("score_total",), detect: float = DETECT,
                      level: float = LEVEL, power: float = POWER) -> pl.DataFrame:
    """Paired per-player comparison of score quantities (base units), ``variant`` minus ``baseline``.

    ``by="seat"`` groups by seat; ``by="bot"`` by the pair (``bot`` in the variant, ``bot_baseline``), so a
    strategy swap at a seat is compared on the same hands. ``components``: any of
    ``analysis.ev.COMPONENTS``. Columns: see the module docstring."""
    run = as_run(run)
    variant, baseline = _variants(run, variant, baseline)
    cols = group_columns(by)
    bad = [c for c in components if c not in COMPONENTS]
    if bad:
        raise ValueError(f"unknown score component(s) {bad}; expected some of {COMPONENTS}")

    def long(v: str) -> pl.LazyFrame:
        return (run.players(v).select("hand_id", "seat", "bot", *components)
                .unpivot(index=["hand_id", "seat", "bot"], on=list(components), variable_name="component",
                         value_name="x"))

    joined = long(variant).join(long(baseline).rename({"x": "x_base", "bot": "bot_baseline"}),
                                on=["hand_id", "seat", "component"], how="inner")
    keys = [k for c in cols for k in (("bot", "bot_baseline") if c == "bot" else (c,))] + ["component"]
    out = _paired_stats(joined, keys, variant, baseline, detect, level, power)
    corder = {c: i for i, c in enumerate(components)}
    return (out.with_columns(pl.col("component").replace_strict(corder, return_dtype=pl.Int64).alias("_c"))
            .sort([k for k in keys if k != "component"] + ["_c"]).drop("_c"))


HAND_METRICS: dict[str, pl.Expr] = {
    "exhaustive_draw (流局)": pl.col("exhaustive_draw"),
    "winners": pl.col("n_winners"),
    "turns": pl.col("turns"),
    "kongs": pl.col("n_kongs"),
    "huazhu (花猪) any": pl.col("_huazhu"),
    "chadajiao (查大叫) any": pl.col("_cdj"),
    "cap binds (any win)": pl.col("_cap"),
    "points exchanged": pl.col("_moved"),
}
"""Hand-level metrics of :func:`paired_hand_metrics`; ``points exchanged`` = ``Σ|score_total|/2`` over the four
players (base units moved from losers to winners in the hand)."""

HAND_DETECT: dict[str, float] = {
    "exhaustive_draw (流局)": 0.01,
    "winners": 0.05,
    "turns": 0.5,
    "kongs": 0.05,
    "huazhu (花猪) any": 0.01,
    "chadajiao (查大叫) any": 0.01,
    "cap binds (any win)": 0.01,
    "points exchanged": 0.1,
}
"""Default difference to detect per hand metric, in the metric's own unit: one percentage point (0.01) for the
shares, 0.05 winners or kongs per hand, half a turn, and 0.1 base units of points exchanged (as :data:`DETECT`
for scores)."""


def _hand_frame(run: Run, variant: str) -> pl.LazyFrame:
    players = (run.players(variant).group_by("hand_id")
               .agg(pl.col("huazhu").any().alias("_huazhu"), (pl.col("score_chadajiao") != 0).any().alias("_cdj"),
                    (pl.col("score_total").abs().sum() / 2).alias("_moved")))
    caps = run.wins(variant).group_by("hand_id").agg((pl.col("capped_fan") < pl.col("fan")).any().alias("_cap"))
    return (run.hands(variant).join(players, on="hand_id", how="left").join(caps, on="hand_id", how="left")
            .with_columns(pl.col("_cap").fill_null(False))
            .select("hand_id", *[e.cast(pl.Float64).alias(k) for k, e in HAND_METRICS.items()]))


def paired_hand_metrics(run: Run | str, variant: str, baseline: str | None = None,
                        detect: float | Mapping[str, float] | None = None, level: float = LEVEL,
                        power: float = POWER) -> pl.DataFrame:
    """Paired comparison of hand-level metrics (:data:`HAND_METRICS`, shares as 0/1 means): one row per
    ``metric`` with the same statistics as :func:`paired_comparison`. ``detect``, in each metric's own unit:
    None = :data:`HAND_DETECT`; a mapping overrides some metrics' defaults; one number applies to all."""
    run = as_run(run)
    variant, baseline = _variants(run, variant, baseline)
    names = list(HAND_METRICS)
    if detect is None or isinstance(detect, Mapping):
        bad = [k for k in (detect or {}) if k not in HAND_METRICS]
        if bad:
            raise ValueError(f"unknown hand metric(s) {bad} in detect; expected some of {names}")
        detect = {**HAND_DETECT, **(detect or {})}

    def long(v: str) -> pl.LazyFrame:
        return _hand_frame(run, v).unpivot(index="hand_id", on=names, variable_name="metric", value_name="x")

    joined = long(variant).join(long(baseline).rename({"x": "x_base"}), on=["hand_id", "metric"], how="inner")
    out = _paired_stats(joined, ["metric"], variant, baseline, detect, level, power)
    order = {m: i for i, m in enumerate(names)}
    return (out.with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("_m"))
            .sort("_m").drop("_m"))


def rich_table(df: pl.DataFrame, title: str, label: Sequence[str]):
    """A compact :class:`rich.table.Table` of a comparison frame for the terminal: one row per group (the
    ``label`` columns joined; ``bot`` shown as ``B-bot/A-bot`` when the pair differs), ``n`` hands, the two
    means, ``B−A`` with its 95% CI, paired SE, p-value, variance-reduction factor and hands needed (paired /
    unpaired) to detect ``detect`` — named in the header when every row uses the same ``detect``, else in a
    ``d`` column per row."""
    from rich.table import Table

    from analysis.report import fmt, fmt_p

    def name(r: dict) -> str:
        parts = []
        for c in label:
            if c == "bot_baseline":
                continue
            if c == "bot" and r.get("bot_baseline") not in (None, r["bot"]):
                parts.append(f"{r['bot']}/{r['bot_baseline']}")
            else:
                parts.append(f"seat {r[c]}" if c == "seat" else str(r[c]))
        return " ".join(parts)

    per_row = df["detect"].n_unique() > 1
    detect = fmt(df["detect"][0]) if df.height else "—"
    table = Table(title=title, title_justify="left")
    table.add_column("group")
    hands = "hands p/u" if per_row else f"hands p/u (d={detect})"
    for c in ("n", "B", "A", "B−A [95% CI]", "se", "p", "vrf", *(["d"] if per_row else []), hands):
        table.add_column(c, justify="right")
    for r in df.iter_rows(named=True):
        table.add_row(name(r), fmt(r["n_hands"]), fmt(r["mean"]), fmt(r["mean_baseline"]),
                      f"{fmt(r['diff'])} [{fmt(r['ci_lo'])}, {fmt(r['ci_hi'])}]", fmt(r["se_paired"]),
                      fmt_p(r["p_value"]), fmt(r["vrf"]), *([fmt(r["detect"])] if per_row else []),
                      f"{fmt(r['hands_paired'])}/{fmt(r['hands_unpaired'])}")
    return table
