"""The published JSON Schema of ``xuezhan compare --format json`` (:func:`analysis.family.compare_document`).

``xuezhan rules schema compare`` prints it; tests/test_compare_schema.py validates the command's output against
it. It states what a script may rely on: every row's stable ``id`` (:mod:`analysis.ids`), the closed set of
``verdict_code`` values (:data:`analysis.family.VERDICT_CODES`), p-values as numbers in ``(0, 1]`` at full
precision (never 0: a p-value below the smallest normal double is given as that bound,
:data:`analysis.inference.P_MIN`), and null wherever a quantity does not exist (no interval when no unit differs).
"""

from __future__ import annotations

from typing import Any

from analysis import compare, ev
from analysis.family import SCHEMA_VERSION, VERDICT_CODES
from analysis.ids import HAND_METRIC_IDS

_NUMBER = {"type": ["number", "null"]}
_COUNT = {"type": "integer", "minimum": 0}
_P = {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1}


def _row(kind: str) -> dict[str, Any]:
    """One row of ``scores`` (``kind`` "score") or ``metrics`` ("metric")."""
    if kind == "metric":
        keys = {"id": {"enum": [f"metric.{i}" for i in HAND_METRIC_IDS.values()]},
                "metric": {"enum": list(compare.HAND_METRICS), "description": "display label of the metric"}}
    else:
        keys = {"id": {"type": "string", "pattern": r"^score\.[a-z_]+\.(seat[0-3]|bot\.[^.]+(\.was\.[^.]+)?)$"},
                "component": {"enum": list(ev.COMPONENTS)},
                "seat": {"type": "integer", "minimum": 0, "maximum": 3},
                "bot": {"type": "string"}, "bot_baseline": {"type": "string"}}
    props: dict[str, Any] = {
        **keys,
        "label": {"type": "string", "description": "what the row measures, for people"},
        "variant": {"type": "string"}, "baseline": {"type": "string"},
        "unit": {"enum": ["hand", "wall", "session"], "description": "the independent unit counted by n_units"},
        "n_units": _COUNT, "n_hands": _COUNT, "n_obs": _COUNT,
        "n_differ": {**_COUNT, "description": "units whose difference is not 0"},
        "mean": _NUMBER, "mean_baseline": _NUMBER,
        "diff": {**_NUMBER, "description": "variant − baseline, in measured_in"},
        "se_paired": _NUMBER, "ci_lo": _NUMBER, "ci_hi": _NUMBER,
        "interval": {"enum": ["normal", "few differing", "none"],
                     "description": "how ci_lo, ci_hi and p_value were made (docs/analysis.md, Methods)"},
        "p_value": {**_P, "description": "two-sided, unadjusted; null when no unit differs"},
        "p_holm": {**_P, "description": "Holm-adjusted over the holm_tests tests of the comparison"},
        "verdict": {"enum": list(compare.VERDICTS), "description": "the verdict in words"},
        "verdict_code": {"enum": list(VERDICT_CODES.values()),
                         "description": "significant_large, significant_small, negligible, inconclusive, "
                                        "no_difference (docs/analysis.md, 'Verdict codes')"},
        "measured_in": {"type": "string"}, "se_unpaired": _NUMBER, "vrf": _NUMBER,
        "detect": {"type": "number", "exclusiveMinimum": 0},
        "hands_paired": {"type": ["integer", "null"], "minimum": 0},
        "hands_unpaired": {"type": ["integer", "null"], "minimum": 0},
    }
    required = [k for k in props if k not in ("seat", "bot", "bot_baseline")]
    row: dict[str, Any] = {"type": "object", "properties": props, "required": required,
                           "additionalProperties": False}
    if kind == "score":
        row["oneOf"] = [{"required": ["seat"]}, {"required": ["bot", "bot_baseline"]}]
    return row


def compare_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the ``xuezhan compare --format json`` document."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "xuezhan compare --format json",
        "description": "A paired comparison of variant against baseline on common random numbers (docs/analysis.md, "
                       "'xuezhan compare').",
        "type": "object",
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "baseline": {"type": "string"}, "variant": {"type": "string"},
            "by": {"enum": ["bot", "seat"]},
            "holm_tests": {**_COUNT, "description": "tests in the Holm family the p_holm values were adjusted in"},
            "scores": {"type": "array", "items": {"$ref": "#/$defs/score"}},
            "metrics": {"type": "array", "items": {"$ref": "#/$defs/metric"}},
        },
        "required": ["schema_version", "baseline", "variant", "by", "holm_tests", "scores", "metrics"],
        "additionalProperties": False,
        "$defs": {"score": _row("score"), "metric": _row("metric")},
    }
