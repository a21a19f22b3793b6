"""Paired differences carried by few differing units (fewer than :data:`RARE_UNITS`).

A rule that rarely changes an outcome leaves most paired units with a difference of exactly 0; the ``k``
units that differ carry all the information. With ``k`` small the normal interval ``diff ± z·se`` is too short
(its SE is estimated from ``k`` nonzero values), so:

- ``2 ≤ k < RARE_UNITS``: the **Student interval with k − 1 degrees of freedom** on the usual cluster-robust SE,
  ``diff ± t_{k−1, 0.975}·se`` and its two-sided p-value (:func:`few_interval`) — the SE is an average of ``k``
  squared unit sums, so it has about ``k − 1`` degrees of freedom, not the ``G − 1`` of all units. Its coverage
  and power on models of rare differences (one-signed, symmetric, skewed) are checked in
  ``tests/test_power.py``; it is not guaranteed when a mean-zero difference is made of frequent small gains and
  rare large losses none of which was seen (no method that uses only the observed units can be).
- ``k = 1``: one nonzero unit cannot estimate a spread: the gamma (weighted Poisson, Fay–Feuer) interval of
  :func:`rare_diff_interval`, which sizes the unseen sign by the observed difference (never significant at 5%).

The Student distribution (CDF and quantile) is computed here from the regularised incomplete beta function
(no scipy).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from analysis.stats import LEVEL, z_value

RARE_UNITS = 30
"""Fewer differing units than this and a paired difference gets :func:`few_interval` (or, with one differing
unit, :func:`rare_diff_interval`), not the normal one."""

INTERVAL_RULES = (f"With {RARE_UNITS} or more differing units: normal interval and test (zero-width only when every "
                  f"unit differs by the same amount). With 2 to {RARE_UNITS - 1} (\"few differing\"): the Student "
                  "interval and test on (differing units − 1) degrees of freedom. With one: the gamma (weighted "
                  "Poisson, Fay–Feuer) interval on its difference, the unseen sign sized by it (never significant). "
                  "With none: no interval and no test.")
"""How a paired row's interval and test are made, in the words the report's Methods and every paired section use
(one text, so the two cannot disagree)."""


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def beta_inc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta ``I_x(a, b)`` (``a, b > 0``, ``0 ≤ x ≤ 1``)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail ``P(|T| ≥ |t|)`` of Student's t with ``df`` degrees of freedom."""
    if not math.isfinite(t):
        return 0.0 if not math.isnan(t) else math.nan
    return beta_inc(df / 2.0, 0.5, df / (df + t * t))


@lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """Quantile ``q`` (> 0.5) of Student's t with ``df`` degrees of freedom (bisection on :func:`t_sf2`)."""
    target = 2.0 * (1.0 - q)
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2


def few_interval(diff: float, se: float, k: int, level: float = LEVEL) -> tuple[float, float, float]:
    """``(lo, hi, p)`` for a paired mean difference ``diff`` with cluster-robust SE ``se`` carried by ``k ≥ 2``
    differing units: ``diff ± t_{k−1}·se`` and the two-sided Student p-value of ``diff/se`` on ``k − 1``
    degrees of freedom (NaN without a positive SE)."""
    if k < 2 or not se > 0:
        return math.nan, math.nan, math.nan
    t = t_quantile((1 + level) / 2, k - 1)
    return diff - t * se, diff + t * se, t_sf2(abs(diff) / se, k - 1)


def critical_values(level: float = LEVEL) -> np.ndarray:
    """Critical value of the paired test by number of differing units ``k = 0 … RARE_UNITS``: infinite for
    ``k ≤ 1`` (one unit never rejects), ``t_{k−1, (1+level)/2}`` below :data:`RARE_UNITS`, the normal ``z``
    from there on (the last entry)."""


    c = np.full(RARE_UNITS + 1, np.inf)
    for k in range(2, RARE_UNITS):
        c[k] = t_quantile((1 + level) / 2, k - 1)
    c[RARE_UNITS] = z_value(level)
    return c


# ---------------------------------------------------------------------------------------------------------
# One differing unit: a gamma (weighted Poisson) interval


def _gamma_p(a: float, x: float) -> float:
    """Regularised lower incomplete gamma ``P(a, x)``: series below ``a + 1``, continued fraction above."""
    if x <= 0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        k = a
        for _ in range(10_000):
            k += 1
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return min(1.0, total * math.exp(log_front))
    # Q(a, x) by the modified Lentz continued fraction
    tiny = 1e-300
    b = x + 1 - a
    c, dd = 1 / tiny, 1 / b
    h = dd
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        dd = an * dd + b
        dd = tiny if abs(dd) < tiny else dd
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        dd = 1 / dd
        delta = dd * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return max(0.0, 1.0 - math.exp(log_front) * h)


def gamma_quantile(q: float, shape: float) -> float:
    """Quantile of the Gamma(shape, scale 1) distribution (bisection on :func:`_gamma_p`; shape > 0)."""
    if q <= 0:
        return 0.0
    lo, hi = 0.0, shape + 10 * math.sqrt(shape) + 50
    while _gamma_p(shape, hi) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _gamma_p(shape, mid) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(hi, 1e-300):
            break
    return (lo + hi) / 2


def _weighted_poisson(w: np.ndarray, w_max: float, alpha: float) -> tuple[float, float]:
    """Fay–Feuer gamma interval (two-sided ``1 − alpha``) for the mean of ``Y = Σ w_i`` over events of a
    Poisson process with positive marks ``w`` (the observed ones); ``w_max`` = the largest mark thought
    possible (used for the upper bound, also when no event was seen)."""
    y, v = float(w.sum()), float((w * w).sum())
    lo = v / y * gamma_quantile(alpha / 2, y * y / v) if y > 0 else 0.0
    yu, vu = y + w_max, v + w_max * w_max
    hi = vu / yu * gamma_quantile(1 - alpha / 2, yu * yu / vu)
    return lo, hi


def rare_diff_interval(unit_sums: np.ndarray, n_obs: float, level: float = LEVEL) -> tuple[float, float]:
    """Interval for a mean paired difference carried by few differing units.

    ``unit_sums``: the nonzero per-unit sums ``D`` of the differences (units whose sum is 0 add nothing);
    ``n_obs``: the observations of all units (the estimate is ``ΣD / n_obs``). The positive and the negative
    sums are each treated as a compound Poisson total (a unit differs rarely and independently) and get the
    Fay–Feuer gamma interval at level ``1 − α/2``; the difference of the two ranges is the interval (union
    bound: coverage at least ``level``). The largest observed ``|D|`` stands for the size of a difference of
    the sign not seen, so "every observed difference is positive" is not read as "no negative ones exist".
    Conservative by construction; exact for a single possible size of difference."""
    d = np.asarray(unit_sums, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return math.nan, math.nan
    alpha = (1 - level) / 2
    w_max = float(np.abs(d).max())
    p_lo, p_hi = _weighted_poisson(d[d > 0], w_max, alpha)
    n_lo, n_hi = _weighted_poisson(-d[d < 0], w_max, alpha)
    return (p_lo - n_hi) / n_obs, (p_hi - n_lo) / n_obs


def rare_diff_p(unit_sums: np.ndarray, tol: float = 1e-4) -> float:
    """Two-sided p-value matching :func:`rare_diff_interval`: the largest ``α`` whose interval still holds 0
    (bisection; 1 when the 0%-level interval holds 0, NaN without a differing unit)."""
    d = np.asarray(unit_sums, dtype=float)
    if not (d != 0).any():
        return math.nan

    def holds_zero(alpha: float) -> bool:
        lo, hi = rare_diff_interval(d, 1.0, 1.0 - alpha)
        return lo <= 0 <= hi

    if holds_zero(1.0 - 1e-9):
        return 1.0
    lo, hi = 1e-12, 1.0 - 1e-9  # holds_zero(lo) is True unless p is below 1e-12
    if not holds_zero(lo):
        return lo
    while hi - lo > tol * lo:
        mid = math.sqrt(lo * hi) if hi / lo > 10 else (lo + hi) / 2
        if holds_zero(mid):
            lo = mid
        else:
            hi = mid
    return hi


