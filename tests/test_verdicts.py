"""p-values, Holm adjustment and the verdicts of paired rows, on hand-worked rows (analysis.stats.normal_p,
analysis.compare.add_adjusted, analysis.ev.add_tests)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analysis.compare import VERDICTS, add_adjusted
from analysis.ev import add_tests
from analysis.stats import normal_p


def test_normal_p_is_two_sided():
    # 2·Φ(−1.959964) = 0.05, 2·Φ(−2.575829) = 0.01, z = 0 gives 1; an SE of 0 or NaN is no test
    p = normal_p(np.array([1.959964, -2.575829, 0.0, 1.0, 1.0]), np.array([1.0, 1.0, 3.0, 0.0, np.nan]))
    np.testing.assert_allclose(p[:3], [0.05, 0.01, 1.0], atol=1e-6)
    assert np.isnan(p[3:]).all()
    assert normal_p(0.5, 0.25) == pytest.approx(0.0455003, abs=1e-6)  # z = 2


def test_each_verdict_on_hand_worked_rows():
    """Family v: four tests (E has no p-value: no unit differs). Holm, sorted p 0.010, 0.012, 0.30, 0.40:
    4·0.010 = 0.04, max(0.04, 3·0.012) = 0.04, max(0.04, 2·0.30) = 0.60, max(0.60, 0.40) = 0.60. Family w: two
    tests p 0.03, 0.04 -> 0.06, 0.06: significant alone, not after adjustment (its interval leaves ±detect, so
    the data cannot tell)."""
    rows = pl.DataFrame({
        "variant": ["v", "v", "v", "v", "v", "w", "w"],
        "p_value": [0.010, 0.012, 0.30, 0.40, None, 0.03, 0.04],
        "diff": [0.5, 0.05, 0.01, 0.2, 0.0, 0.30, 0.01],
        "ci_lo": [0.3, 0.01, -0.05, -0.3, 0.0, 0.02, 0.001],
        "ci_hi": [0.7, 0.09, 0.07, 0.7, 0.0, 0.58, 0.019],
        "detect": [0.1] * 7,
        "n_differ": [50, 50, 50, 50, 0, 50, 50],
    })
    out = add_adjusted(rows)
    np.testing.assert_allclose(out["p_holm"].to_numpy()[[0, 1, 2, 3, 5, 6]], [0.04, 0.04, 0.6, 0.6, 0.06, 0.06])
    assert out["p_holm"][4] is None
    assert out["verdict"].to_list() == [VERDICTS[0], VERDICTS[1], VERDICTS[2], VERDICTS[3], VERDICTS[4],
                                        VERDICTS[3], VERDICTS[2]]
    # one family over both variants: six tests, p 0.010 -> 0.06, nothing is significant any more
    both = add_adjusted(rows.with_columns(pl.lit("all").alias("family")), family=("family",))
    assert both["p_holm"][0] == pytest.approx(0.06) and both["verdict"][0] == VERDICTS[3]
    assert not both["verdict"].str.starts_with("significant").any()


def test_ev_tests_adjust_within_each_family():
    df = pl.DataFrame({"variant": ["a", "a", "a", "b"], "mean": [1.959964, 0.0, 1.0, 1.959964],
                       "se": [1.0, 1.0, 0.0, 1.0]})
    out = add_tests(df)
    np.testing.assert_allclose(out["p_value"].to_numpy()[[0, 1, 3]], [0.05, 1.0, 0.05], atol=1e-6)
    assert out["p_value"][2] is None and out["p_holm"][2] is None  # SE 0: not a test
    # family a: two tests, 0.05 -> 0.10, 1.0 -> 1.0; family b alone keeps 0.05
    np.testing.assert_allclose(out["p_holm"].to_numpy()[[0, 1, 3]], [0.10, 1.0, 0.05], atol=1e-6)
