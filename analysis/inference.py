"""Normal-theory inference: the confidence level, the normal critical value, Wilson intervals of a proportion,
normal p-values and their multiplicity adjustment (Holm, Benjamini–Hochberg), and the units needed to detect a
difference under the alternative.

The conventions these serve are in :mod:`analysis.stats`, which re-exports every public name here.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
import polars as pl

LEVEL = 0.95
POWER = 0.80
MIN_BOOT = 100
"""Fewest bootstrap replicates ``xuezhan report --boot`` accepts (0 = no intervals): a 95% percentile interval
reads the 2.5% and 97.5% quantiles of the replicates, which a handful of replicates cannot estimate (with one
replicate both bounds are the same number)."""


def z_value(level: float = LEVEL) -> float:
    """Two-sided normal critical value: ``Φ⁻¹((1 + level)/2)`` (1.959964 for 95%)."""
    return NormalDist().inv_cdf((1.0 + level) / 2.0)


# ---------------------------------------------------------------------------------------------------------
# Proportions


def wilson_interval(k: np.ndarray | float, n: np.ndarray | float, level: float = LEVEL
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``k`` successes in ``n`` trials (vectorised; NaN where ``n == 0``)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    z = z_value(level)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = np.where(k > 0, np.clip(centre - half, 0.0, 1.0), 0.0)  # exact bounds at k = 0 and k = n
    hi = np.where(k < n, np.clip(centre + half, 0.0, 1.0), 1.0)
    return np.where(n > 0, lo, np.nan), np.where(n > 0, hi, np.nan)


def wilson_exprs(k: str | pl.Expr, n: str | pl.Expr, prefix: str = "p", level: float = LEVEL) -> list[pl.Expr]:
    """Polars expressions ``prefix`` (= k/n), ``prefix_lo``, ``prefix_hi``: the Wilson interval; null if n = 0."""
    k = pl.col(k) if isinstance(k, str) else k
    n = pl.col(n) if isinstance(n, str) else n
    z2 = z_value(level) ** 2
    kf, nf = k.cast(pl.Float64), n.cast(pl.Float64)
    p = kf / nf
    denom = 1.0 + z2 / nf
    centre = (p + z2 / (2 * nf)) / denom
    half = (z2 ** 0.5) * (p * (1 - p) / nf + z2 / (4 * nf * nf)).sqrt() / denom
    ok = nf > 0
    # k = 0 and k = n have exact bounds 0 and 1 (the formula leaves rounding dust such as 1e-19)
    return [pl.when(ok).then(p).alias(prefix),
            pl.when(ok).then(pl.when(kf > 0).then((centre - half).clip(0.0, 1.0)).otherwise(0.0))
            .alias(f"{prefix}_lo"),
            pl.when(ok).then(pl.when(kf < nf).then((centre + half).clip(0.0, 1.0)).otherwise(1.0))
            .alias(f"{prefix}_hi")]


# ---------------------------------------------------------------------------------------------------------
# Tests: normal p-values, multiplicity


P_MIN = sys.float_info.min
"""The smallest p-value reported (2.2e-308, the smallest normal double): a normal p below it (|z| > 37.5) is given
as this bound, never as 0."""


def normal_p(diff: np.ndarray | float, se: np.ndarray | float) -> np.ndarray:
    """Two-sided normal p-value of ``diff/se`` (NaN when ``se`` is 0 or unknown), to full relative precision in
    the tail (``erfc``: ``2·Φ(−z)`` computed as ``1 + erf`` is 0 beyond z ≈ 8.3), at least :data:`P_MIN`."""
    diff, se = np.asarray(diff, dtype=float), np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        zs = np.where(se > 0, np.abs(diff) / se, np.nan)
    return np.array([max(math.erfc(v / math.sqrt(2.0)), P_MIN) if np.isfinite(v) else np.nan
                     for v in np.ravel(zs)]).reshape(zs.shape)


def p_adjust(p: np.ndarray | Sequence[float], method: str = "holm") -> np.ndarray:
    """Multiplicity-adjusted p-values over one family: ``"holm"`` (Holm's step-down, controls the
    family-wise error rate under any dependence) or ``"bh"`` (Benjamini–Hochberg, false discovery rate).
    NaN entries are not tests: they stay NaN and do not count in the family size."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    ps = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ps))
    elif method == "bh":
        adj = np.minimum.accumulate(np.minimum(1.0, m / np.arange(1, m + 1) * ps)[::-1])[::-1]
    else:
        raise ValueError(f"method {method!r}: expected 'holm' or 'bh'")
    out[order] = adj
    return out


# ---------------------------------------------------------------------------------------------------------
# Sample sizes under the alternative


def sigma_alternative(se: np.ndarray | float, n: np.ndarray | float, d: np.ndarray | float,
                      k_differ: np.ndarray | float | None = None, m: np.ndarray | float = 1.0,
                      integer: bool = False, max_abs: np.ndarray | float | None = None) -> np.ndarray:
    """Per-unit SD of a paired difference under the alternative that its true mean is ``d``.

    The observed ``σ̂ = se·√n`` (``n`` units) describes the data under the effect that happened, which may be
    none; a true effect ``d`` forces more spread, so ``σ = max(σ̂, bounds)``:

    - ``k_differ`` units of ``n`` differ (share ``π = k/n > 0``): a unit mean that is 0 outside an event of
      probability ``π`` and has mean ``d`` has ``Var ≥ d²/π − d²`` (Cauchy–Schwarz). A rule that rarely binds
      needs about ``(z_α + z_β)²/π`` binding units, not the few hands the observed σ̂ suggests. When a unit's
      mean difference cannot exceed ``max_abs`` (1 for a 0/1 share), an effect ``d`` needs ``π ≥ d/max_abs``,
      so ``π`` is raised to that (the alternative is then "it binds more often", not "each binding is
      bigger than possible").
    - ``integer``: each unit's sum of differences over its ``m`` observations is an integer (scores in base
      units, counts, 0/1 shares), so ``Var(sum) ≥ |m·d| − (m·d)²`` when ``|m·d| < 1`` (``E[X²] ≥ E|X|``).

    NaN where nothing bounds σ and ``σ̂`` is 0 or unknown."""
    n = np.asarray(n, dtype=float)
    d = np.abs(np.asarray(d, dtype=float))
    var = (np.asarray(se, dtype=float) ** 2) * n
    var = np.where(np.isfinite(var), var, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if k_differ is not None:
            pi = np.asarray(k_differ, dtype=float) / n
            if max_abs is not None:
                pi = np.maximum(pi, d / np.asarray(max_abs, dtype=float))
            var = np.maximum(var, np.where(pi > 0, d * d / pi - d * d, 0.0))
        if integer:
            md = np.asarray(m, dtype=float) * d
            var = np.maximum(var, np.where(md < 1, (md - md * md) / np.asarray(m, dtype=float) ** 2, 0.0))
    sigma = np.sqrt(var)
    return np.where(sigma > 0, sigma, np.nan)


def hands_needed(se: np.ndarray | float, n: np.ndarray | float, d: np.ndarray | float, level: float = LEVEL,
                 power: float = POWER, *, k_differ: np.ndarray | float | None = None,
                 m: np.ndarray | float = 1.0, integer: bool = False,
                 max_abs: np.ndarray | float | None = None) -> np.ndarray:
    """Units (hands, or walls under duplicate seating) needed to detect a true mean difference ``d``: a
    two-sided test at ``α = 1 − level`` with the given ``power``, ``⌈((z_{1−α/2} + z_power) · σ / d)²⌉`` with
    ``σ`` the per-unit SD under the alternative (:func:`sigma_alternative`; ``se``, ``n``: the observed SE
    over ``n`` units). NaN when σ is unknown."""
    sigma = sigma_alternative(se, n, d, k_differ, m, integer, max_abs)
    zsum = z_value(level) + NormalDist().inv_cdf(power)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.ceil((zsum * sigma / np.abs(np.asarray(d, dtype=float))) ** 2)
    return np.where(np.isfinite(need), need, np.nan)
