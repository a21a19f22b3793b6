"""Paired comparison of a variant against a baseline on common random numbers.

Hands with the same ``hand_id`` were played on the same wall with the same bot random streams in every
variant, so a rule change is measured hand by hand: ``d = x_variant − x_baseline`` per player-hand (joined on
``hand_id`` + ``seat``) or per hand (hand-level metrics). Only hands present in both variants are used.

The independent unit is the hand, or the wall (``deal_id``) under duplicate seating (``Run.cluster``; the
``unit`` column says which): every mean, SE and count below is over units. For each group (seat, or bot pair
``bot``/``bot_baseline``) and quantity:

- ``n_units`` units (``n_hands`` hands, ``n_obs`` paired observations); ``n_differ`` = units whose summed
  difference is not 0 — the only ones that carry information about the effect;
- ``diff`` = mean of ``d`` (= difference of the two means); ``se_paired`` = its cluster-robust SE;
- ``interval`` = how ``ci_lo``/``ci_hi`` and ``p_value`` were made: ``normal`` (``diff ± z·se_paired``,
  two-sided normal p) with at least :data:`analysis.rare.RARE_UNITS` differing units; ``few differing`` — the
  Student interval and test on ``n_differ − 1`` degrees of freedom (:func:`analysis.rare.few_interval`), or
  with one differing unit the gamma interval on its sum (:func:`analysis.rare.rare_diff_interval`); ``none``
  when no unit differs (no interval, no test: the rule did not change this quantity on these hands);
- ``p_holm`` = Holm-adjusted p over the rows of the call (the report and ``xuezhan compare`` adjust over every
  paired row of a comparison, :func:`analysis.family.paired_family`); ``verdict`` (:data:`VERDICTS`) reads
  the row against ``detect``;
- ``se_unpaired`` = ``√(se_a² + se_b²)``, the SE the same units would give from independent runs;
  ``vrf`` = ``se_unpaired² / se_paired²``, the variance-reduction factor of pairing;
- ``hands_paired`` = hands to simulate so that the test run at that size (Student on few differing units,
  normal on many) has 80% power at ``α = 0.05`` against a true difference of ``detect``
  (:func:`analysis.power.paired_hands_needed`), units times the hands per unit; null when no unit differs and
  nothing bounds how rarely one would. ``hands_unpaired`` (per arm) = ``⌈((z_0.975 + z_0.80)·σ/detect)²⌉``
  with ``σ`` the unpaired per-unit SD under the alternative (:func:`analysis.stats.sigma_alternative`).
  ``detect`` and ``measured_in`` are in the quantity's own unit: :data:`DETECT` base units for
  scores, :data:`HAND_DETECT` per hand metric.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from analysis.ev import COMPONENTS, By, group_columns
from analysis.fmt import fmt, fmt_interval, fmt_p
from analysis.ids import HAND_METRIC_IDS, with_id
from analysis.load import Run, as_run
from analysis.paired_sums import ALL, P_ONLY, moments, piecewise, unit_moments, unit_sums, wide_gather
from analysis.power import paired_hands_needed
from analysis.rare import RARE_UNITS, few_interval, rare_diff_interval, rare_diff_p
from analysis.stats import LEVEL, POWER, hands_needed, normal_p, p_adjust, z_value
from analysis.unit_sums import positions

DETECT = 0.1
"""Default difference to detect: 0.1 base units per hand (score quantities)."""

VERDICTS = ("significant, ≥ detect", "significant, < detect", "< detect (not significant)", "inconclusive",
            "no unit differs")
"""The ``verdict`` of a paired row: significant (Holm-adjusted p below ``1 − level``) with ``|diff| ≥ detect``
or below it; not significant with the whole interval inside ``(−detect, detect)`` (an effect of that size is
ruled out); not significant otherwise (the data cannot tell); no unit has a nonzero difference."""

COLUMNS = ("variant", "baseline", "unit", "n_units", "n_hands", "n_obs", "n_differ", "mean", "mean_baseline",
           "diff", "se_paired", "ci_lo", "ci_hi", "interval", "p_value", "p_holm", "verdict", "measured_in",
           "se_unpaired", "vrf", "detect", "hands_paired", "hands_unpaired")


def _intervals(wide: pl.DataFrame, units: pl.DataFrame, keys: list[str], level: float) -> pl.DataFrame:
    """``ci_lo, ci_hi, interval, p_value``: normal with ``RARE_UNITS`` or more differing units; with 2 to
    ``RARE_UNITS − 1`` the Student interval on ``k − 1`` degrees of freedom (:func:`analysis.rare.few_interval`);
    with one, the gamma interval of :func:`analysis.rare.rare_diff_interval` on its sum; none (null) when no
    unit differs."""
    z = z_value(level)
    diff, se = wide["diff"].to_numpy().astype(float), wide["se_paired"].to_numpy().astype(float)
    k = wide["n_differ"].to_numpy()
    lo, hi, pval = diff - z * se, diff + z * se, normal_p(diff, se)
    kind = np.where(k >= RARE_UNITS, "normal", np.where(k > 0, "few differing", "none"))
    for i in np.flatnonzero((k >= 2) & (k < RARE_UNITS)):
        lo[i], hi[i], pval[i] = few_interval(diff[i], se[i], int(k[i]), level)
    single = np.flatnonzero(k == 1)
    if single.size:
        sums = (units.filter(pl.col("d") != 0).join(wide.select(*keys).with_row_index("_row"), on=keys)
                .group_by("_row").agg(pl.col("d")))
        by_row = dict(zip(sums["_row"].to_list(), sums["d"].to_list(), strict=True))
        n_obs = wide["n_obs"].to_numpy().astype(float)
        for i in single:
            d = np.asarray(by_row[i], dtype=float)
            lo[i], hi[i] = rare_diff_interval(d, n_obs[i], level)
            pval[i] = rare_diff_p(d)
    none = k == 0
    lo[none] = hi[none] = pval[none] = np.nan
    return wide.with_columns(pl.Series("ci_lo", lo, nan_to_null=True), pl.Series("ci_hi", hi, nan_to_null=True),
                             pl.Series("interval", kind, dtype=pl.String),
                             pl.Series("p_value", pval, dtype=pl.Float64, nan_to_null=True))


def paired_stats(joined: pl.LazyFrame, keys: Sequence[str], cluster: str = "hand_id",
                 level: float = LEVEL) -> pl.DataFrame:
    """The paired estimates of any frame with columns ``keys…, cluster, hand_id, x, x_base`` (one row per
    paired observation): per group ``n_units, n_hands, n_obs, n_differ, mean, mean_baseline, diff, se_paired,
    ci_lo, ci_hi, interval, p_value`` — the estimator behind :func:`paired_comparison`, for your own paired
    quantities."""
    keys = list(keys)
    units = unit_sums(joined, keys, cluster)
    out = _intervals(moments(unit_moments(units, keys), level), units, keys, level)
    return out.select(*keys, "n_units", "n_hands", "n_obs", "n_differ", "mean", "mean_baseline", "diff",
                      "se_paired", "ci_lo", "ci_hi", "interval", "p_value")


def add_adjusted(df: pl.DataFrame, family: Sequence[str] = ("variant",), level: float = LEVEL) -> pl.DataFrame:
    """Recompute ``p_holm`` (Holm over the rows of each ``family`` group that have a p-value) and ``verdict``
    (:data:`VERDICTS`) of paired rows, e.g. after concatenating every paired table of a variant into one
    family."""
    if df.height == 0:
        return df.with_columns(pl.lit(None, dtype=pl.Float64).alias("p_holm"),
                               pl.lit(None, dtype=pl.String).alias("verdict"))
    out = df.with_columns(pl.int_range(pl.len()).alias("_row"))
    adj = np.full(df.height, np.nan)
    for part in out.partition_by(list(family), maintain_order=True):
        adj[part["_row"].to_numpy()] = p_adjust(part["p_value"].fill_null(np.nan).to_numpy())
    alpha = 1 - level
    sig = pl.col("p_holm") < alpha
    big = pl.col("diff").abs() >= pl.col("detect")
    inside = (pl.col("ci_lo") > -pl.col("detect")) & (pl.col("ci_hi") < pl.col("detect"))
    verdict = (pl.when(pl.col("n_differ") == 0).then(pl.lit(VERDICTS[4]))
               .when(sig & big).then(pl.lit(VERDICTS[0])).when(sig).then(pl.lit(VERDICTS[1]))
               .when(inside).then(pl.lit(VERDICTS[2])).otherwise(pl.lit(VERDICTS[3])))
    return (out.with_columns(pl.Series("p_holm", adj, dtype=pl.Float64, nan_to_null=True))
            .with_columns(verdict.alias("verdict")).drop("_row"))


def _observed_sums(differing: pl.DataFrame, wide: pl.DataFrame, keys: list[str]) -> list:
    """Per row of ``wide``: its nonzero unit sums as ``(values, counts)`` from the counts of
    :func:`analysis.paired_sums.piecewise` (None when none), with which :func:`analysis.power.paired_hands_needed`
    prices the test at few differing units."""
    counts = (differing.join(wide.select(*keys).with_row_index("_row"), on=keys)
              .group_by("_row", "d").agg(pl.col("len").sum()).sort("_row", "d"))
    out: list = [None] * wide.height
    for part in counts.partition_by("_row"):
        out[int(part["_row"][0])] = (part["d"].to_numpy(), part["len"].to_numpy())
    return out


def _paired_stats(sums: tuple[pl.DataFrame, pl.DataFrame], keys: list[str], run: Run, variant: str, baseline: str,
                  detect: float | Mapping[str, float], level: float, power: float,
                  measured_in: str | Mapping[str, str]) -> pl.DataFrame:
    """One row per key with the paired statistics from :func:`analysis.paired_sums.piecewise`'s moments and
    differing units (``detect`` and ``measured_in``: one value, or one per ``metric`` key)."""
    mom, differing = sums
    wide = _intervals(moments(mom, level), differing, keys, level)

    def per_row(value: float | str | Mapping, dtype: pl.DataType) -> pl.Series:
        if isinstance(value, Mapping):
            return wide["metric"].replace_strict(dict(value), return_dtype=dtype)
        return pl.Series([value] * wide.height, dtype=dtype)

    d = per_row(detect, pl.Float64).to_numpy()
    n = wide["n_units"].to_numpy().astype(float)
    m = wide["n_obs"].to_numpy() / np.maximum(n, 1)
    hands_per_unit = wide["n_hands"].to_numpy() / np.maximum(n, 1)
    se_p = wide["se_paired"].to_numpy().astype(float)
    se_u = np.sqrt(wide["_se_a"].to_numpy().astype(float) ** 2 + wide["_se_b"].to_numpy().astype(float) ** 2)
    # a share's unit mean difference is at most 1: a larger effect must bind more often, not bigger
    bounded = per_row(measured_in, pl.String).str.starts_with("share").to_numpy()
    # the power of the test that will be run at that size: Student on few differing units, normal on many
    need_p = paired_hands_needed(n, wide["n_differ"].to_numpy(), se_p, d, m=m, integer=True,
                                 max_abs=np.where(bounded, 1.0, np.inf), level=level, power=power,
                                 sums=_observed_sums(differing, wide, keys))
    # two independent integer-valued arms also differ by an integer: the same bound holds per arm pair
    need_u = hands_needed(se_u, n, d, level, power, m=m, integer=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        vrf = np.where(se_p > 0, se_u ** 2 / se_p ** 2, np.nan)
    out = wide.with_columns(
        pl.lit(variant).alias("variant"), pl.lit(baseline).alias("baseline"), pl.lit(run.unit).alias("unit"),
        per_row(measured_in, pl.String).alias("measured_in"),
        pl.Series("se_unpaired", se_u, nan_to_null=True), pl.Series("vrf", vrf, nan_to_null=True),
        pl.Series("detect", d, dtype=pl.Float64),
        # units needed × hands per unit (4 under duplicate seating): the hands to simulate, per arm if unpaired
        pl.Series("hands_paired", np.ceil(need_p * hands_per_unit), nan_to_null=True).cast(pl.Int64),
        pl.Series("hands_unpaired", np.ceil(need_u * hands_per_unit), nan_to_null=True).cast(pl.Int64))
    out = add_adjusted(out.with_columns(pl.lit(None, dtype=pl.Float64).alias("p_holm")).drop("p_holm"),
                       level=level)
    return out.select(*COLUMNS[:3], *keys, *COLUMNS[3:])


def _variants(run: Run, variant: str, baseline: str | None) -> tuple[str, str]:
    base = run.check(baseline) if baseline is not None else run.baseline
    return run.check(variant), base


def _keywords(func: str, variant: str, old: tuple[Any, ...], **named: Any) -> tuple[Any, ...]:
    """Arguments passed by position after the variant, in their old order, with a DeprecationWarning."""
    if len(old) > len(named):
        raise TypeError(f"{func}() takes at most {len(named) + 2} positional arguments ({len(old) + 2} given)")
    warnings.warn(f"{func}(run, {variant!r}, {old[0]!r}, ...): arguments after the variant by position are "
                  f"deprecated; write baseline={old[0]!r} (and the others) by keyword. `xuezhan compare RUN A B` "
                  "names the baseline first, so a copied order would flip the sign", DeprecationWarning, stacklevel=3)
    return (*old, *list(named.values())[len(old):])


def paired_comparison(run: Run | str, variant: str, *old: Any, baseline: str | None = None, by: By = "bot",
                      components: Sequence[str] = ("score_total",), detect: float = DETECT,
                      level: float = LEVEL, power: float = POWER) -> pl.DataFrame:
    """Paired per-player comparison of score quantities (base units), ``variant`` minus ``baseline`` (the
    study's baseline by default); arguments after ``variant`` are keyword-only (by position: :func:`_keywords`).

    ``by="seat"`` groups by seat; ``by="bot"`` by the pair (``bot`` in the variant, ``bot_baseline``), so a
    strategy swap at a seat is compared on the same hands. ``components``: any of
    ``analysis.ev.COMPONENTS``. Columns: ``id`` (:mod:`analysis.ids`), then the module docstring's."""
    if old:
        baseline, by, components, detect, level, power = _keywords(
            "paired_comparison", variant, old, baseline=baseline, by=by, components=components, detect=detect,
            level=level, power=power)
    run, variant, baseline, keys = _score_setup(run, variant, baseline, by, components)
    out = _paired_stats(piecewise(run, _score_gather(variant, baseline, keys, components, ALL), keys), keys, run,
                        variant, baseline, detect, level, power, "base units")
    corder = {c: i for i, c in enumerate(components)}
    return with_id(out.with_columns(pl.col("component").replace_strict(corder, return_dtype=pl.Int64).alias("_c"))
                   .sort([k for k in keys if k != "component"] + ["_c"]).drop("_c"), "score", ["component"], False)


def paired_p_values(run: Run | str, variant: str, *, baseline: str | None = None, by: By = "bot",
                    components: Sequence[str] = ("score_total",), level: float = LEVEL) -> pl.DataFrame:
    """The p-values of :func:`paired_comparison`'s rows alone (group keys, ``component``, ``n_differ``, ``diff``,
    ``se_paired``, ``p_value``; the same numbers, rows in no set order), gathered from the differences' sums
    only: what a Holm family needs of the rows a caller does not show (``xuezhan compare``)."""
    run, variant, baseline, keys = _score_setup(run, variant, baseline, by, components)
    mom, differing = piecewise(run, _score_gather(variant, baseline, keys, components, P_ONLY), keys)
    out = _intervals(moments(mom, level, P_ONLY), differing, keys, level)
    return out.select(*keys, "n_differ", "diff", "se_paired", "p_value")


def _score_setup(run: Run | str, variant: str, baseline: str | None, by: By,
                 components: Sequence[str]) -> tuple[Run, str, str, list[str]]:
    """The run, the two arms and the row keys (group columns, then ``component``) of a score comparison."""
    run = as_run(run)
    variant, baseline = _variants(run, variant, baseline)
    cols = group_columns(by)
    bad = [c for c in components if c not in COMPONENTS]
    if bad:
        raise ValueError(f"unknown score component(s) {bad}; expected some of {COMPONENTS}")
    if "position" in cols:
        raise ValueError("paired comparisons group by 'seat' or 'bot' (a seat keeps its position on a paired hand)")
    groups = [k for c in cols for k in (("bot", "bot_baseline") if c == "bot" else (c,))]
    return run, variant, baseline, [*groups, "component"]


def _score_gather(variant: str, baseline: str, keys: list[str], components: Sequence[str],
                  values: Sequence[str]) -> Callable[[Run], tuple[pl.DataFrame, pl.DataFrame]]:
    """A piece's moments and differing units of the score components (players joined on hand and seat)."""
    groups = keys[:-1]

    def gather(r: Run) -> tuple[pl.DataFrame, pl.DataFrame]:
        a = r.players(variant).select(*r.id_columns, "seat", "bot", *components)
        b = r.players(baseline).select("hand_id", "seat", pl.col("bot").alias("bot_baseline"),
                                       *[pl.col(c).alias(f"{c}__b") for c in components])
        return wide_gather(a, b, ["hand_id", "seat"], groups, components, r.cluster, "component", values)

    return gather


HAND_METRICS: dict[str, str] = {
    "exhaustive_draw (流局)": "hands.exhaustive_draw",
    "winners": "hands.n_winners",
    "wins": "hands.n_wins",
    "turns": "hands.turns",
    "kongs": "hands.n_kongs",
    "huazhu (花猪) any": "players.huazhu",
    "chadajiao (查大叫) any": "players.score_chadajiao",
    "cap binds (any win)": "wins.capped_fan, wins.fan",
    "wins ≥ 2 fan": "wins.fan",
    "declined wins": "players.declined_wins",
    "points exchanged": "players.score_total",
}
"""Hand-level metrics of :func:`paired_hand_metrics` and the logged columns each is made from (by
:func:`_hand_frame`); ``points exchanged`` = ``Σ|score_total|/2`` over the four
players (base units moved from losers to winners in the hand); ``wins ≥ 2 fan`` = wins of the hand worth at least
2 fan before the cap (清一色, 七对, 对对胡 + 根, …: how often players reach a big hand, whatever the cap pays);
``declined wins`` = wins the four players could have taken and passed (``players.declined_wins`` summed)."""

HAND_DETECT: dict[str, float] = {
    "exhaustive_draw (流局)": 0.01,
    "winners": 0.05,
    "wins": 0.05,
    "turns": 0.5,
    "kongs": 0.05,
    "huazhu (花猪) any": 0.01,
    "chadajiao (查大叫) any": 0.01,
    "cap binds (any win)": 0.01,
    "wins ≥ 2 fan": 0.01,
    "declined wins": 0.01,
    "points exchanged": 0.1,
}
"""Default difference to detect per hand metric, in the metric's own unit: one percentage point (0.01) for the
shares, 0.01 big or declined wins per hand, 0.05 winners or kongs per hand, half a turn, and 0.1 base units of
points exchanged (as :data:`DETECT` for scores)."""

HAND_UNITS: dict[str, str] = {
    "exhaustive_draw (流局)": "share of hands",
    "winners": "winners per hand",
    "wins": "wins per hand",
    "turns": "turns per hand",
    "kongs": "kongs per hand",
    "huazhu (花猪) any": "share of hands",
    "chadajiao (查大叫) any": "share of hands",
    "cap binds (any win)": "share of hands",
    "wins ≥ 2 fan": "wins per hand",
    "declined wins": "wins per hand",
    "points exchanged": "base units",
}
"""What each hand metric is measured in (``measured_in``): plots put one unit per axis."""


def _hand_frame(run: Run, variant: str) -> pl.LazyFrame:
    """One row per hand of ``variant`` (of ``run`` or a piece): the id columns and every :data:`HAND_METRICS`
    value as Float64. The players' and wins' per-hand values are summed by hand position with numpy
    (:func:`analysis.unit_sums.positions`, ``bincount``) instead of group-bys and joins by hand: the same
    numbers (a hand without players or wins has 0 where a join left null, which every sum reads as 0)."""
    hands, players, wins = pl.collect_all([
        run.hands(variant).select(*run.id_columns, *[pl.col(c).cast(pl.Float64).alias(k) for k, c in (
            ("exhaustive_draw (流局)", "exhaustive_draw"), ("winners", "n_winners"), ("wins", "n_wins"),
            ("turns", "turns"), ("kongs", "n_kongs"))]),
        run.players(variant).select("hand_id", pl.col("huazhu").fill_null(False),
                                    (pl.col("score_chadajiao") != 0).fill_null(False).alias("cdj"),
                                    pl.col("score_total").abs().fill_null(0).alias("moved"),
                                    pl.col("declined_wins").fill_null(0)),
        run.wins(variant).select("hand_id", (pl.col("capped_fan") < pl.col("fan")).fill_null(False).alias("cap"),
                                 (pl.col("fan") >= 2).fill_null(False).alias("big"))])
    hid = hands["hand_id"].to_numpy()

    def per_hand(df: pl.DataFrame, col: str) -> np.ndarray:
        pos = positions(hid, df["hand_id"].to_numpy())
        inside = pos >= 0
        return np.bincount(pos[inside], weights=df[col].to_numpy()[inside], minlength=hid.size)

    values = {"huazhu (花猪) any": (per_hand(players, "huazhu") > 0).astype(np.float64),
              "chadajiao (查大叫) any": (per_hand(players, "cdj") > 0).astype(np.float64),
              "cap binds (any win)": (per_hand(wins, "cap") > 0).astype(np.float64),
              "wins ≥ 2 fan": per_hand(wins, "big"), "declined wins": per_hand(players, "declined_wins"),
              "points exchanged": per_hand(players, "moved") / 2}
    return hands.with_columns(pl.Series(k, v, dtype=pl.Float64) for k, v in values.items()).select(
        *run.id_columns, *HAND_METRICS).lazy()


def paired_hand_metrics(run: Run | str, variant: str, *old: Any, baseline: str | None = None,
                        detect: float | Mapping[str, float] | None = None, level: float = LEVEL,
                        power: float = POWER) -> pl.DataFrame:
    """Paired comparison of hand-level metrics (:data:`HAND_METRICS`, shares as 0/1 means): one row per
    ``metric`` with the same statistics as :func:`paired_comparison` (arguments after ``variant`` keyword-only,
    as there). ``detect``, in each metric's own unit: None = :data:`HAND_DETECT`; a mapping overrides some
    metrics' defaults; one number applies to all."""
    if old:
        baseline, detect, level, power = _keywords("paired_hand_metrics", variant, old, baseline=baseline,
                                                   detect=detect, level=level, power=power)
    run = as_run(run)
    variant, baseline = _variants(run, variant, baseline)
    names = list(HAND_METRICS)
    if detect is None or isinstance(detect, Mapping):
        bad = [k for k in (detect or {}) if k not in HAND_METRICS]
        if bad:
            raise ValueError(f"unknown hand metric(s) {bad} in detect; expected some of {names}")
        detect = {**HAND_DETECT, **(detect or {})}


    def gather(r: Run) -> tuple[pl.DataFrame, pl.DataFrame]:
        b = _hand_frame(r, baseline).drop(*r.id_columns[1:]).rename({n: f"{n}__b" for n in names})
        return wide_gather(_hand_frame(r, variant), b, ["hand_id"], [], names, r.cluster, "metric")

    out = _paired_stats(piecewise(run, gather, ["metric"]), ["metric"], run, variant, baseline, detect, level, power,
                        HAND_UNITS)
    order = {m: i for i, m in enumerate(names)}
    return with_id(out.with_columns(pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("_m"))
                   .sort("_m").drop("_m"), "metric", ["metric"], names=HAND_METRIC_IDS)


def rich_table(df: pl.DataFrame, title: str, label: Sequence[str]):
    """A compact :class:`rich.table.Table` of a comparison frame for the terminal: one row per group (the
    ``label`` columns joined; ``bot`` shown as ``B-bot/A-bot`` when the pair differs), ``n`` units (headed
    "walls" or "hands"), ``≠`` differing units, the two means, ``B−A`` with its 95% CI (or why there is none),
    paired SE, p-value raw and Holm-adjusted, the verdict against ``detect``, variance-reduction factor and
    hands needed (paired / unpaired) to detect ``detect`` — named in the header when every row uses the same
    ``detect``, else in a ``d`` column per row."""
    from rich.table import Table

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
    unit = f"{df['unit'][0]}s" if df.height else "units"
    table = Table(title=title, title_justify="left")
    table.add_column("group", no_wrap=True)
    hands = "hands p/u" if per_row else f"hands p/u (d={detect})"
    # a narrow console (e.g. output piped: 80 columns) folds cells onto more lines, never truncates a number
    for c in (unit, "≠", "B", "A", "B−A [95% CI]", "se", "p", "p Holm", "verdict", "vrf",
              *(["d"] if per_row else []), hands):
        table.add_column(c, justify="left" if c == "verdict" else "right", overflow="fold")
    for r in df.iter_rows(named=True):
        table.add_row(name(r), fmt(r["n_units"]), fmt(r["n_differ"]), fmt(r["mean"]), fmt(r["mean_baseline"]),
                      diff_cell(r), fmt(r["se_paired"]), fmt_p(r["p_value"]), fmt_p(r["p_holm"]), r["verdict"],
                      fmt(r["vrf"]), *([fmt(r["detect"])] if per_row else []),
                      f"{fmt(r['hands_paired'])}/{fmt(r['hands_unpaired'])}")
    return table


def diff_cell(r: Mapping) -> str:
    """``diff [lo, hi]`` of a paired row; ``0 (no unit differs)`` when nothing differed; the interval marked
    ``*`` when it comes from few differing units (Student, or gamma for one unit)."""
    if r["n_differ"] == 0:
        return f"{fmt(r['diff'])} (no {r['unit']} differs)"
    star = "*" if r["interval"] == "few differing" else ""
    return f"{fmt_interval(r['diff'], r['ci_lo'], r['ci_hi'], r['se_paired'], signed=False)}{star}"


def footnote(level: float = LEVEL, power: float = POWER, n_tests: int | None = None) -> str:
    """What the columns of :func:`rich_table` mean (printed under the tables by ``xuezhan compare``)."""
    return (f"n = independent units (walls under duplicate seating, else hands); ≠ = units whose difference is "
            f"not 0; * = fewer than {RARE_UNITS} differing units: Student interval on (differing units − 1) "
            f"degrees of freedom (gamma interval for one); "
            f"se = paired SE over units; p = two-sided test, p Holm = Holm-adjusted over "
            + (f"the {n_tests} tests of this comparison (the report's family: score by bot × component, by seat, "
               "hand metrics); " if n_tests is not None else "the rows of the table; ") +
            f"verdict against d; vrf = unpaired / paired variance; hands p/u = hands to simulate to detect d "
            f"(two-sided test at α = {1 - level:.2g}, power {power:.0%} for the test run at that size — Student "
            f"when few units would differ; σ under the alternative), paired / "
            f"unpaired per arm; d = --detect for scores, each hand metric's own default in its own unit "
            f"(analysis.compare.HAND_DETECT). Shares are 0/1 means.")
