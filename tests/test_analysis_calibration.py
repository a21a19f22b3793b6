"""Calibration: do the 95% intervals of ``analysis`` cover the truth 95% of the time?

Each test simulates ``R`` independent synthetic data sets with a known true value, stacked in one frame with a
``rep`` column so the production estimator computes all ``R`` intervals in one call, and checks the share that
covers the truth against 95% within Monte Carlo error (``3·√(0.95·0.05/R)``). The data are clustered like
the logs (several correlated observations per hand or wall), so an estimator that treated observations as
independent would fail here. Families: rate (share of units' observations), per-win share (clusters of varying
size), mean, paired mean (many differing units) and paired mean with few differing units (the Student interval
on differing units − 1 degrees of freedom: coverage at least 95%, and the plain normal interval shown to fall
short).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from analysis.compare import paired_stats
from analysis.rare import RARE_UNITS
from analysis.stats import cluster_means, cluster_share_exprs, share_moments

R = 800
MC = 3 * math.sqrt(0.95 * 0.05 / R)  # three Monte Carlo standard errors of a coverage estimate (≈ 0.023)


def _covered(df: pl.DataFrame, truth: float, lo: str = "ci_lo", hi: str = "ci_hi") -> float:
    assert df.height == R and df[lo].null_count() == 0
    return float(((df[lo] <= truth) & (truth <= df[hi])).mean())


def _clustered_bernoulli(rng: np.random.Generator, units: int, m: int, p: float, icc: float) -> np.ndarray:
    """``(R, units, m)`` 0/1 draws sharing a unit-level probability: Beta with mean ``p`` and intra-class
    correlation ``icc``."""
    a = p * (1 - icc) / icc
    b = (1 - p) * (1 - icc) / icc
    pu = rng.beta(a, b, size=(R, units, 1))
    return (rng.random((R, units, m)) < pu).astype(float)


def _frame(values: np.ndarray, **extra: np.ndarray) -> pl.LazyFrame:
    r, u, m = values.shape
    return pl.LazyFrame({"rep": np.repeat(np.arange(r), u * m), "unit": np.tile(np.repeat(np.arange(u), m), r),
                         "x": values.ravel(), **{k: v.ravel() for k, v in extra.items()}})


@pytest.mark.parametrize(("p", "units", "icc"), [(0.2, 150, 0.3), (0.01, 600, 0.2)])
def test_rate_coverage(p, units, icc):
    """A rate over player-hands (4 per unit, correlated within the unit): effective-n Wilson."""
    x = _clustered_bernoulli(np.random.default_rng(1), units, 4, p, icc)
    out = cluster_means(_frame(x), ["rep"], ["x"], cluster="unit", shares=["x"])
    assert ((out["ci_lo"] >= 0) & (out["ci_hi"] <= 1) & (out["ci_hi"] > out["ci_lo"])).all()
    cover = _covered(out, p)
    assert abs(cover - 0.95) < MC + 0.01, cover  # + 0.01: Wilson is approximate at a handful of events
    # what treating the 4·units observations as independent trials gives: too short under correlation
    k = x.sum(axis=(1, 2))
    n = x.shape[1] * x.shape[2]
    from analysis.stats import wilson_interval

    lo, hi = wilson_interval(k, n)
    assert ((lo <= p) & (p <= hi)).mean() < cover - 0.04


def test_per_win_share_coverage():
    """A share of wins: units hold 0-4 wins (varying cluster sizes), the property correlated within a unit."""
    rng = np.random.default_rng(2)
    units, p = 300, 0.15
    x = _clustered_bernoulli(rng, units, 4, p, 0.25)
    wins = rng.integers(0, 5, size=(R, units, 1)) > np.arange(4)  # the first m_u slots of a unit are its wins
    frame = _frame(x, win=wins.repeat(1, axis=2)).filter(pl.col("win"))
    counts, totals = share_moments(frame.filter(pl.col("x") == 1).with_columns(pl.lit("a").alias("key")),
                                   frame, ["rep"], "key", cluster="unit")
    out = (totals.join(counts, on="rep", how="left").collect()
           .with_columns(pl.col("k", "_SS", "_SM").fill_null(0))
           .with_columns(cluster_share_exprs(pl.col("k"), pl.col("_SS"), pl.col("_SM"), pl.col("n_obs"),
                                             pl.col("_MM"), pl.col("n_units"))))
    cover = _covered(out, p, "p_lo", "p_hi")
    assert abs(cover - 0.95) < MC + 0.01, cover


def test_mean_coverage():
    """A mean score per player-hand: skewed integer scores, zero-sum-like negative correlation inside a hand
    (one winner collects from three payers)."""
    rng = np.random.default_rng(3)
    units = 250
    win = rng.integers(0, 4, size=(R, units))
    size = rng.choice([1, 2, 4, 8, 16, 32], p=[0.3, 0.3, 0.2, 0.1, 0.07, 0.03], size=(R, units))
    bonus = rng.poisson(0.5, size=(R, units, 4))  # a seat's own extra payments (kongs), mean 0.5
    x = np.where(np.arange(4) == win[..., None], 3 * size[..., None], -size[..., None]) + bonus
    out = cluster_means(_frame(x.astype(float)), ["rep"], ["x"], cluster="unit")
    cover = _covered(out, 0.5)  # the win payments sum to 0 over the four seats; truth = the bonus mean
    assert abs(cover - 0.95) < MC, cover


def _paired(rng: np.random.Generator, units: int, pi: float, sizes: tuple[float, ...] = (8.0, -16.0),
            probs: tuple[float, ...] = (0.7, 0.3)) -> tuple[pl.LazyFrame, float]:
    """Baseline scores and a variant that differs on a share ``pi`` of units for one of its two observations,
    by one of ``sizes`` (with ``probs``): truth = pi · Σ size·prob / 2 per observation."""
    base = rng.normal(0, 6, size=(R, units, 2)).round()
    differs = rng.random((R, units, 1)) < pi
    jump = rng.choice(np.asarray(sizes), p=np.asarray(probs), size=(R, units, 1)) * differs
    x = base + np.concatenate([jump, np.zeros_like(jump)], axis=2)
    frame = _frame(x, x_base=base, hand_id=np.broadcast_to(np.arange(units)[None, :, None], x.shape).copy())
    return frame, pi * float(np.dot(sizes, probs)) / 2


def test_paired_mean_coverage():
    frame, truth = _paired(np.random.default_rng(4), 400, 0.3)
    out = paired_stats(frame, ["rep"], cluster="unit")
    assert (out["interval"] == "normal").all()
    cover = _covered(out, truth)
    assert abs(cover - 0.95) < MC, cover


def test_rare_difference_paired_coverage():
    """About 4 differing units of 2,000, skewed differences like a cap that rarely binds (+16 mostly, +64
    sometimes, −32 rarely): the few-differing (Student) interval covers at least 95% and is never zero-width; the
    plain normal interval covers far less."""
    frame, truth = _paired(np.random.default_rng(5), 2000, 0.002, (16.0, 64.0, -32.0), (0.8, 0.15, 0.05))
    out = paired_stats(frame, ["rep"], cluster="unit").filter(pl.col("n_differ") > 0)
    assert (out["n_differ"] < RARE_UNITS).all() and (out["interval"] == "few differing").all()
    reps = out.height
    assert reps > 0.95 * R  # P(no unit differs) = e^-4: those rows have no interval at all
    cover = float(((out["ci_lo"] <= truth) & (truth <= out["ci_hi"])).mean())
    assert cover >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), cover
    assert (out["ci_hi"] > out["ci_lo"]).all()
    z = 1.959963984540054
    normal = float(((out["diff"] - z * out["se_paired"] <= truth)
                    & (truth <= out["diff"] + z * out["se_paired"])).mean())
    assert normal < 0.92 and cover > normal + 0.03, (normal, cover)
