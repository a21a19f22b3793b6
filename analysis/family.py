"""One family of paired tests per comparison, shared by the report and ``xuezhan compare``; stable ids.

:func:`paired_family` computes every paired table of a variant against its baseline (score by bot and
component, score by seat, hand metrics) and adjusts their p-values together (Holm over all rows with a test),
so a row has the same ``p_holm`` and ``verdict`` wherever it is printed. :func:`compare_document` is the
``xuezhan compare --format json`` document: every row carries a stable ``id`` (for scripts) and a display
``label`` (for people), under a :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from analysis import compare, ev
from analysis.ids import HAND_METRIC_IDS, with_id
from analysis.inference import P_MIN
from analysis.load import Run

SCHEMA_VERSION = 1
"""Version of the ``compare --format json`` document (:func:`compare_document`); raised on any change a
script reading it would notice (a key renamed or removed, a meaning changed)."""

COMPONENT_LABELS: dict[str, str] = {
    "score_total": "score per hand", "score_win": "win payments per hand",
    "score_kong": "kong payments per hand", "score_transfer": "kong-rain transfers per hand",
    "score_huazhu": "花猪 penalties per hand", "score_chadajiao": "查大叫 payments per hand",
    "score_refund": "kong refunds per hand"}
"""Display label of each score component (its id is the column name, :data:`analysis.ev.COMPONENTS`)."""

VERDICT_CODES: dict[str, str] = dict(zip(compare.VERDICTS, (
    "significant_large", "significant_small", "negligible", "inconclusive", "no_difference"), strict=True))
"""The ``verdict_code`` of each :data:`analysis.compare.VERDICTS` (the prose ``verdict`` people read), a closed
set for scripts: ``significant_large`` = significant (Holm) and ``|diff| ≥ detect``; ``significant_small`` =
significant, smaller than detect; ``negligible`` = not significant and the whole interval inside ±detect (an
effect of that size is ruled out); ``inconclusive`` = neither; ``no_difference`` = no unit differs (no test)."""


def with_verdict_codes(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with ``verdict_code`` (:data:`VERDICT_CODES`) after its ``verdict`` column (unchanged without one)."""
    if "verdict" not in df.columns:
        return df
    code = pl.col("verdict").replace_strict(VERDICT_CODES, default=None, return_dtype=pl.String)
    at = df.columns.index("verdict") + 1
    return df.with_columns(code.alias("verdict_code")).select(*df.columns[:at], "verdict_code", *df.columns[at:])

def paired_family(run: Run, variant: str, baseline: str, detect: float = compare.DETECT,
                  extra: Mapping[str, pl.DataFrame] | None = None) -> dict[str, pl.DataFrame]:
    """Every paired table of ``variant`` against ``baseline`` — ``by_bot`` (every component), ``by_seat``
    (score_total), ``metrics`` — plus any ``extra`` paired tables (same columns, e.g. seat × other components
    that ``xuezhan compare -c`` asks for), with ``p_holm`` and ``verdict`` recomputed over all of them: one
    family of tests. ``detect``: the score tables' threshold (base units)."""
    parts = {"by_bot": compare.paired_comparison(run, variant, baseline=baseline, by="bot",
                                                 components=ev.COMPONENTS, detect=detect),
             "by_seat": compare.paired_comparison(run, variant, baseline=baseline, by="seat", detect=detect),
             "metrics": compare.paired_hand_metrics(run, variant, baseline=baseline), **(extra or {})}
    return _adjusted(parts)


def _adjusted(parts: Mapping[str, pl.DataFrame], others: Sequence[pl.DataFrame] = ()) -> dict[str, pl.DataFrame]:
    """``parts`` with ``p_holm`` and ``verdict`` recomputed over their rows and the p-values of ``others`` (rows
    of the family that are not shown: :func:`analysis.compare.paired_p_values`)."""
    tagged = pl.concat([df.select(*compare.COLUMNS).with_columns(pl.lit(k).alias("_t"),
                                                                   pl.int_range(pl.len()).alias("_i"))
                        for k, df in parts.items()])
    hidden = [df.select(pl.lit(tagged["variant"][0]).alias("variant"), "p_value", "n_differ", "diff")
              for df in others if tagged.height]
    whole = pl.concat([tagged, *hidden], how="diagonal_relaxed") if hidden else tagged
    adjusted = compare.add_adjusted(whole).filter(pl.col("_t").is_not_null())
    out = {}
    for k, df in parts.items():
        sub = adjusted.filter(pl.col("_t") == k).sort("_i")
        out[k] = df.with_columns(sub["p_holm"].alias("p_holm"), sub["verdict"].alias("verdict"))
    return out


def compare_rows(run: Run, variant: str, baseline: str, by: str, components: Sequence[str],
                 detect: float = compare.DETECT) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """``(scores, metrics, tests)`` for ``xuezhan compare``: the score rows grouped ``by`` "bot" or "seat" for
    ``components`` and the hand metrics, adjusted in the report's family (:func:`paired_family`) — extended by
    the seat × component rows the report does not show when those are asked for — and the family's size.

    Only the rows asked for are computed in full; of the family's other rows (by bot when grouped by seat, by
    seat and the other components when grouped by bot) only the p-values, from the differences' sums
    (:func:`analysis.compare.paired_p_values`): the same ``p_holm`` as the report's, a fraction of the work."""
    comps = list(dict.fromkeys(components))
    score_total = "score_total" in comps
    hidden: list[pl.DataFrame] = []
    if by == "seat":
        parts = {"by_seat": compare.paired_comparison(run, variant, baseline=baseline, by="seat", components=comps,
                                                      detect=detect)}
        if not score_total:
            hidden.append(compare.paired_p_values(run, variant, baseline=baseline, by="seat"))
        hidden.append(compare.paired_p_values(run, variant, baseline=baseline, by="bot", components=ev.COMPONENTS))
    else:
        parts = {"by_bot": compare.paired_comparison(run, variant, baseline=baseline, by="bot", components=comps,
                                                     detect=detect)}
        rest = [c for c in ev.COMPONENTS if c not in comps]
        if rest:
            hidden.append(compare.paired_p_values(run, variant, baseline=baseline, by="bot", components=rest))
        hidden.append(compare.paired_p_values(run, variant, baseline=baseline, by="seat"))
    parts["metrics"] = compare.paired_hand_metrics(run, variant, baseline=baseline)
    fam = _adjusted(parts, hidden)
    keys = ["bot", "bot_baseline"] if by == "bot" else ["seat"]
    order = {c: i for i, c in enumerate(components)}
    scores = (fam[f"by_{by}"].with_columns(pl.col("component").replace_strict(order, return_dtype=pl.Int64)
                                          .alias("_c"))
              .sort([*keys, "_c"], maintain_order=True).drop("_c"))
    tests = family_tests(parts) + sum(int(df["p_value"].is_not_null().sum()) for df in hidden)
    return scores, fam["metrics"], tests


def family_tests(family: Mapping[str, pl.DataFrame]) -> int:
    """Tests in a family: rows with a p-value (rows where no unit differs are not tests)."""
    return sum(int(df["p_value"].is_not_null().sum()) for df in family.values())


def with_ids(df: pl.DataFrame) -> pl.DataFrame:
    """A paired table with its stable ``id`` (:mod:`analysis.ids`: ``metric.<id>`` for hand metrics,
    ``score.<component>.seat<k>`` or ``score.<component>.bot.<bot>[.was.<bot>]`` for scores) and a display
    ``label`` first."""
    if "metric" in df.columns:
        return with_id(df, "metric", ["metric"], names=HAND_METRIC_IDS).select(
            "id", pl.col("metric").alias("label"), pl.exclude("id"))
    comp = pl.col("component")
    if "seat" in df.columns:
        who_label = pl.format("seat {}", "seat")
    else:
        who_label = pl.concat_str(pl.col("bot"), pl.when(pl.col("bot_baseline") != pl.col("bot"))
                                  .then(pl.format(" (was {})", "bot_baseline")).otherwise(pl.lit("")))
    label = pl.concat_str(who_label, pl.lit(": "), comp.replace_strict(COMPONENT_LABELS, return_dtype=pl.String))
    return with_id(df, "score", ["component"], slugged=False).select("id", label.alias("label"), pl.exclude("id"))


def compare_document(scores: pl.DataFrame, metrics: pl.DataFrame, baseline: str, variant: str, by: str,
                     n_tests: int) -> dict[str, Any]:
    """The ``compare --format json`` document (its JSON Schema: :func:`analysis.compare_schema.compare_schema`):
    ``schema_version``, the two arms, ``by``, ``holm_tests`` (the size of the Holm family the ``p_holm`` values
    were adjusted in) and the rows of ``scores`` and ``metrics``, each led by ``id`` and ``label``
    (:func:`with_ids`), with ``verdict_code`` (:data:`VERDICT_CODES`); NaN and infinities as null, a p-value
    never 0 (at least :data:`analysis.inference.P_MIN`)."""
    import math

    def clean(rows: Sequence[dict]) -> list[dict]:
        return [{k: None if isinstance(v, float) and not math.isfinite(v) else
                 max(v, P_MIN) if k in ("p_value", "p_holm") and v is not None else v for k, v in r.items()}
                for r in rows]

    return {"schema_version": SCHEMA_VERSION, "baseline": baseline, "variant": variant, "by": by,
            "holm_tests": n_tests, "scores": clean(with_verdict_codes(with_ids(scores)).to_dicts()),
            "metrics": clean(with_verdict_codes(with_ids(metrics)).to_dicts())}
