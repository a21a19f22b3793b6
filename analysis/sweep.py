"""Ordered sweeps: a study whose variants differ from the baseline in one and the same numeric rule (花猪 8× /
16× / 32×, cap 1 / 3 / 4 / 5 / none) gets a dose–response figure, each metric's paired change against the
rule's value.

:func:`sweep_rule` says whether a run is such a sweep (the dotted rule key, or None); :func:`dose_table` lays
the paired hand metrics of every variant against the baseline out by the rule's value, the baseline included at
0, for :func:`analysis.plots.dose_response`. In a study with populations (:mod:`analysis.cells`) the arms are
the sweep, one line-up at a time: every population's arms against that population's baseline arm
(:func:`dose_tables`, one table with a ``population`` column; the line-ups' seats differ, their rules do not).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import polars as pl

from analysis import cells
from analysis.load import Run
from simulator.rules import flat_keys

UNBOUNDED = (None, "none")
"""Values of a swept rule that mean "no limit" (an uncapped cap): placed after every number."""


def _line_up(run: Run, baseline: str) -> list[str]:
    """The variants that play with ``baseline``'s seats: its population's cells (every variant without
    populations), in run order."""
    cmap = cells.cell_map(run)
    if baseline not in cmap:
        return list(run.variants)
    return [v for v in run.variants if v in cmap and cmap[v][1] == cmap[baseline][1]]


def sweep_rule(run: Run, baseline: str) -> str | None:
    """The dotted rule key every variant changes (and nothing else), with numeric values (or no limit), when
    there are at least two variants besides the baseline; else None. With populations, the variants of the
    baseline's line-up (every line-up plays the same arms)."""
    variants = _line_up(run, baseline)
    others = [v for v in variants if v != baseline]
    if len(others) < 2:
        return None
    base = flat_keys(run.rules(baseline), lists=False)
    keys = set()
    for v in others:
        rules = flat_keys(run.rules(v), lists=False)
        changed = {k for k in set(base) | set(rules) if k not in ("name", "description")
                   and base.get(k) != rules.get(k)}
        if len(changed) != 1:
            return None
        keys |= changed
    if len(keys) != 1:
        return None
    key = keys.pop()
    values = [flat_keys(run.rules(v), lists=False).get(key) for v in variants]
    ok = all(isinstance(x, int | float) and not isinstance(x, bool) or x in UNBOUNDED for x in values)
    return key if ok else None


def _chosen(allm: pl.DataFrame, top: int, always: Sequence[str]) -> list[str]:
    """``always``, then the metrics with the largest ``max |diff| / detect``, ``max(top, len(always))`` in all."""
    ranked = (allm.group_by("metric", maintain_order=True).agg((pl.col("diff").abs() / pl.col("detect")).max()
                                                               .alias("_s"))
              .sort("_s", descending=True, nulls_last=True)["metric"].to_list())
    return list(dict.fromkeys([*always, *ranked]))[: max(top, len(always))]


def _order(value: object) -> float:
    return math.inf if value in UNBOUNDED else float(value)  # type: ignore[arg-type]


def dose_table(run: Run, baseline: str, key: str, metrics: Mapping[str, pl.DataFrame],
               top: int = 4, always: Sequence[str] = ()) -> pl.DataFrame:
    """``value, order, metric, measured_in, diff, ci_lo, ci_hi, baseline``: the paired change of each hand
    metric (``metrics``: variant → its :func:`analysis.compare.paired_hand_metrics` table against
    ``baseline``) at each value of ``key``, the baseline at 0. Metrics: ``always`` plus the ``top`` with the
    largest ``max |diff| / detect`` over the sweep. With populations, ``baseline``'s line-up only."""
    allm = pl.concat([df.with_columns(pl.lit(v).alias("_v")) for v, df in metrics.items()])
    chosen = _chosen(allm, top, always)
    rows = []
    for v in _line_up(run, baseline):
        value = flat_keys(run.rules(v), lists=False).get(key)
        label = "none" if value in UNBOUNDED else (str(int(value)) if float(value).is_integer() else str(value))
        for m in chosen:
            if v == baseline:
                unit = allm.filter(pl.col("metric") == m)["measured_in"][0]
                rows.append({"value": label, "order": _order(value), "metric": m, "measured_in": unit,
                             "diff": 0.0, "ci_lo": None, "ci_hi": None, "baseline": True})
                continue
            r = metrics[v].filter(pl.col("metric") == m).row(0, named=True)
            rows.append({"value": label, "order": _order(value), "metric": m, "measured_in": r["measured_in"],
                         "diff": r["diff"], "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "baseline": False})
    schema = {"value": pl.String, "order": pl.Float64, "metric": pl.String, "measured_in": pl.String,
              "diff": pl.Float64, "ci_lo": pl.Float64, "ci_hi": pl.Float64, "baseline": pl.Boolean}
    out = pl.DataFrame(rows, schema=schema)
    # positions 0, 1, 2… in the rule's order ("none" last), so the axis keeps the order, not the spacing
    ranks = {o: float(i) for i, o in enumerate(sorted(set(out["order"].to_list())))}
    return out.with_columns(pl.col("order").replace_strict(ranks, return_dtype=pl.Float64))


def dose_tables(run: Run, baseline: str, key: str, metrics: Mapping[str, pl.DataFrame], top: int = 4,
                always: Sequence[str] = ()) -> pl.DataFrame:
    """:func:`dose_table` for every line-up: without populations that table; with populations, each population's
    arms against its own baseline arm (``metrics``: every cell → its paired table against that baseline), the same
    metrics in every population (ranked over all of them), stacked with a ``population`` column first."""
    pops = cells.populations(run)
    if not pops or baseline not in cells.cell_map(run):
        return dose_table(run, baseline, key, metrics, top, always)
    chosen = _chosen(pl.concat(list(metrics.values())), top, always)
    arm = cells.cell_map(run)[baseline][0]
    parts = []
    for p in pops:
        base = cells.cell(run, arm, p)
        mine = {v: m for v, m in metrics.items() if v in _line_up(run, base)} if base else {}
        if mine:
            parts.append(dose_table(run, base, key, mine, len(chosen), chosen)
                         .select(pl.lit(p).alias("population"), pl.all()))
    return pl.concat(parts)
