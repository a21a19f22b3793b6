"""Hands needed for a paired comparison: the power of the test the report actually runs.

A paired row is tested with the normal test when at least :data:`analysis.rare.RARE_UNITS` units differ and with
the Student test on ``k − 1`` degrees of freedom below that (:mod:`analysis.rare`); one differing unit never
rejects. A rule that rarely binds is therefore tested, at the block size a plain ``(z_α + z_β)²σ²/d²`` formula
prints, with only a handful of differing units and a much larger critical value — the formula's promise of 80%
power does not hold there. :func:`paired_hands_needed` finds the smallest number of units ``N`` at which the
test that would be run has the requested power, under a model of rare differences:

- a unit differs with probability ``π`` (the number that differ in ``N`` units is Binomial(N, π));
- a differing unit's summed difference ``D`` has mean ``m₁ = m·d/π`` (so that the mean difference per
  observation is the alternative ``d``; ``m`` = observations per unit) and second moment ``m₂``;
- given ``k`` differing units the test statistic is approximately normal with mean ``√k·ρ/√(1 − (k/N)ρ²)`` and
  SD ``√((1 − ρ²)/(1 − (k/N)ρ²))``, ``ρ = |m₁|/√m₂`` (the numerator ``ΣD`` over its self-normalising SE;
  exact when every differing unit has the same difference: ``ρ = 1``, the statistic is ``√k``);
- power = ``Σ_k P(k)·P(|T| > c_k)`` with ``c_k`` the critical value used at ``k`` (:func:`analysis.rare.
  critical_values`); with more than ~200 expected differing units, the normal approximation of that mixture.
- when the row's observed differing-unit sums are given (``sums``: their values and counts, as
  :func:`analysis.compare.paired_comparison` passes them) and ``detect`` is near the effect they show
  (:data:`SHAPE_RHO`), ``P(|T| > c_k | k)`` for ``k ≤`` :data:`MC_UNITS` is
  not the normal approximation but the share of :data:`MC_REPS` draws of ``k`` sums from that observed
  distribution, shifted to the alternative's mean ``m₁`` (its spread and skew kept), whose statistic — the
  production one, ``ΣD·√(N−1)/√(N·ΣD² − (ΣD)²)`` — passes ``c_k``. The normal approximation of ``T`` given
  ``k`` is wrong in both directions at a handful of units: one-signed skewed sums (a cap's savings of 8, 16 or
  24 points) reject far more often than it says (measured on greedy×4 blocks: 93% and 84% where 80% was
  printed), so hands needed was too large there. Draws use a fixed seed: same row, same number.

What the printed number cannot promise: ``π`` and ``m₂`` are the run's own estimates, so the power at the
printed size is 80% only up to their error. At about 7–15 differing units per block the power moves by about
9 points per 10% relative error in ``π`` (the slope of a Poisson tail there), and ``π`` is known to ``±1/√k``
from ``k`` differing units in the run: 80% ± 5 points needs some 300 differing units in the run the number is
read from (the report's caption says so). Measured (tests/test_power.py, 1,500 blocks at the printed size):
76–84% on models with 10–43 differing units a block; greedy×4 blocks (benchmarks/rare_power.py, 240,000 hands,
seed 2028): 80%, 80%, 86%, 83%.

The alternative's parameters come from the observed row, as in :func:`analysis.stats.sigma_alternative`:
``π`` = the observed share of differing units (raised to ``d/max_abs`` when a unit's mean difference cannot
exceed ``max_abs``: a 0/1 share), ``m₂`` = the largest of: what keeps the per-unit variance ``π·m₂ − (m·d)²`` at
least the observed one (``σ̂² = se²·G``, as the plain formula's ``max(σ̂, …)``), ``m₁²`` (Cauchy–Schwarz) and,
for integer-valued sums, ``max(1, |m₁|)``. With no differing unit and no
bound on ``π``, nothing says how rare a difference would be: NaN (never a small number — fewer differing units
never means fewer hands needed).
"""

from __future__ import annotations

import math

import numpy as np

from analysis.rare import RARE_UNITS, critical_values
from analysis.stats import LEVEL, POWER

MAX_UNITS = 1e13
"""Search limit of :func:`units_for_power`: beyond it the answer is NaN (no realistic run has the power)."""

MC_UNITS = 60
"""Up to this many differing units the statistic given ``k`` is drawn from the observed sums (when given)."""

MC_REPS = 2000
"""Draws per ``k`` of :func:`conditional_draws` (Monte Carlo SE of a rejection share ≤ 1.1 points)."""

EXACT_LAMBDA = 200.0
"""Up to this many expected differing units the number that differ is summed over exactly; above it
(where the test is always the normal one) the mixture is approximated by a normal."""


def _phi(x: np.ndarray) -> np.ndarray:
    """Standard normal CDF, vectorised (``erfc`` through ``math``: the arrays here are short)."""
    x = np.asarray(x, dtype=float)
    return np.vectorize(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)), otypes=[float])(x)


def _reject(mu: np.ndarray, sd: np.ndarray, c: np.ndarray) -> np.ndarray:
    """P(|T| > c) for T ~ Normal(mu, sd) (sd may be 0: a step)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(sd > 0, (mu - c) / sd, np.where(mu > c, np.inf, -np.inf))
        down = np.where(sd > 0, (-mu - c) / sd, np.where(-mu > c, np.inf, -np.inf))
    return _phi(up) + _phi(down)


def conditional_draws(values: np.ndarray, counts: np.ndarray, mean: float,
                      rho: float) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """``(ΣD, ΣD²)`` of :data:`MC_REPS` draws of ``k`` differing-unit sums for ``k = 0 … MC_UNITS``: sums drawn
    from ``values`` with frequencies ``counts`` (the observed nonzero unit sums), standardised and put at the
    alternative's mean ``m₁ = mean`` and second moment ``m₁²/ρ²`` (the model's two moments, the observed
    shape). None when the observed sums are all equal (no shape to keep). Fixed seed: deterministic."""
    v = np.asarray(values, dtype=float)
    w = np.asarray(counts, dtype=float)
    mu = float((v * w).sum() / w.sum())
    sd = math.sqrt(max(float((w * (v - mu) ** 2).sum() / w.sum()), 0.0))
    spread = mean * mean / (rho * rho) - mean * mean
    if not (sd > 0 and spread > 0 and rho > 0):
        return None
    v = mean + (v - mu) / sd * math.sqrt(spread)
    rng = np.random.default_rng(20261206)
    cdf = np.cumsum(w) / w.sum()
    out = [(np.zeros(0), np.zeros(0))]
    for k in range(1, MC_UNITS + 1):
        d = v[np.minimum(np.searchsorted(cdf, rng.random((MC_REPS, k)), side="right"), len(v) - 1)]
        out.append((d.sum(axis=1), (d * d).sum(axis=1)))
    return out


def _reject_drawn(draws: list[tuple[np.ndarray, np.ndarray]], N: float, crit: np.ndarray) -> np.ndarray:
    """``P(|T| > c_k | k)`` for ``k = 0 … MC_UNITS`` from :func:`conditional_draws`, ``N`` units in all."""
    out = np.zeros(len(draws))
    for k in range(2, len(draws)):
        S, S2 = draws[k]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.abs(S) * math.sqrt(N - 1) / np.sqrt(np.clip(N * S2 - S * S, 0.0, None))
        out[k] = float(np.mean(np.nan_to_num(t, nan=0.0, posinf=np.inf) > crit[min(k, RARE_UNITS)]))
    return out


def power_of_test(n_units: float, pi: float, rho: float, level: float = LEVEL,
                  draws: list[tuple[np.ndarray, np.ndarray]] | None = None) -> float:
    """Power of the paired test on ``n_units`` units when each differs with probability ``pi`` and the
    differing units' sums have ``ρ = |E D|/√E D²`` (see the module docstring); ``draws``
    (:func:`conditional_draws`): the statistic given ``k ≤ MC_UNITS`` differing units from those draws."""
    N = float(n_units)
    if N < 2 or pi <= 0:
        return 0.0
    crit = critical_values(level)
    lam = N * pi
    shrink = lambda k: np.clip(1.0 - (k / N) * rho * rho, 1e-12, None)  # noqa: E731
    if lam > EXACT_LAMBDA:
        sd_k = math.sqrt(lam * (1.0 - pi))
        mu = math.sqrt(lam) * rho / math.sqrt(shrink(lam))
        dmu = mu * (0.5 / lam + 0.5 * (rho * rho / N) / shrink(lam))  # d mean / d k at k = λ
        sd = math.sqrt((1.0 - rho * rho) / shrink(lam) + (dmu * sd_k) ** 2)
        return float(_reject(np.array([mu]), np.array([sd]), np.array([crit[-1]]))[0])
    k_max = int(min(N, lam + 12.0 * math.sqrt(lam) + 40))
    k = np.arange(k_max + 1, dtype=float)
    if pi >= 1.0:
        pmf = (k == N).astype(float)
    else:
        j = k[1:]
        steps = np.log((N - j + 1) / j) + math.log(pi) - math.log1p(-pi)
        pmf = np.exp(N * math.log1p(-pi) + np.concatenate([[0.0], np.cumsum(steps)]))
    c = crit[np.minimum(k, RARE_UNITS).astype(int)]
    s = shrink(k)
    mu = np.sqrt(k) * rho / np.sqrt(s)
    sd = np.sqrt(max(1.0 - rho * rho, 0.0) / s)
    ok = np.isfinite(c)
    reject = np.zeros(len(k))
    reject[ok] = _reject(mu[ok], sd[ok], c[ok])
    if draws is not None:
        drawn = _reject_drawn(draws, N, crit)
        top = min(len(drawn), len(k))
        reject[:top] = drawn[:top]
    return float((pmf * reject).sum())


def units_for_power(pi: float, rho: float, level: float = LEVEL, power: float = POWER,
                    draws: list[tuple[np.ndarray, np.ndarray]] | None = None) -> float:
    """Smallest number of units whose paired test has at least ``power`` (:func:`power_of_test`); NaN beyond
    :data:`MAX_UNITS`."""
    if not (pi > 0 and rho > 0):
        return math.nan
    hi = 2.0
    while power_of_test(hi, pi, rho, level, draws) < power:
        hi *= 2.0
        if hi > MAX_UNITS:
            return math.nan
    lo = hi / 2.0 if hi > 2 else 1.0
    while hi - lo > 1 and hi - lo > 1e-4 * hi:  # power(lo) < target ≤ power(hi)
        mid = math.floor((lo + hi) / 2)
        if power_of_test(mid, pi, rho, level, draws) >= power:
            hi = mid
        else:
            lo = mid
    return float(math.ceil(hi))


def alternative(n: float, k: float, se: float, d: float, m: float = 1.0, integer: bool = False,
                max_abs: float = math.inf) -> tuple[float, float]:
    """``(π, ρ)`` of the rare-difference model under the alternative that the true mean difference per
    observation is ``d`` (module docstring); NaN, NaN when nothing bounds ``π``. ``n`` units of ``m``
    observations, ``k`` of them differing; ``se``: the observed SE of the paired estimate."""
    d = abs(d)
    pi = k / n if n > 0 else math.nan
    if math.isfinite(max_abs) and max_abs > 0:
        pi = max(pi if k > 0 else 0.0, d / max_abs)
    if not pi > 0 or d == 0:
        return math.nan, math.nan
    pi = min(pi, 1.0)
    m1 = m * d / pi
    var_all = (se * se * n * m * m) if math.isfinite(se) else 0.0
    # the observed spread around the alternative's mean: π·m₂ − (m·d)² ≥ the observed per-unit variance
    m2_obs = (var_all + (m * d) ** 2) * n / k if k > 0 else 0.0
    m2 = max(m2_obs, m1 * m1, max(1.0, abs(m1)) if integer else 0.0)
    return pi, min(1.0, abs(m1) / math.sqrt(m2))


def paired_hands_needed(n: np.ndarray, k: np.ndarray, se: np.ndarray, d: np.ndarray,
                        m: np.ndarray | float = 1.0, integer: bool = False,
                        max_abs: np.ndarray | float = math.inf, level: float = LEVEL,
                        power: float = POWER,
                        sums: list[tuple[np.ndarray, np.ndarray] | None] | None = None) -> np.ndarray:
    """Units needed (per row) for the paired test to detect a true mean difference ``d`` with ``power``:
    :func:`units_for_power` at the :func:`alternative` of each row. Arrays broadcast; NaN where unknown.
    ``sums`` (1-d rows only): per row the observed nonzero unit sums as ``(values, counts)`` (or None), whose
    shape then decides the test's power at few differing units (:func:`conditional_draws`)."""
    arrs = np.broadcast_arrays(*[np.asarray(x, dtype=float) for x in (n, k, se, d, m, max_abs)])
    out = np.full(arrs[0].shape, np.nan)
    cache: dict[tuple[float, float], float] = {}
    for idx in np.ndindex(out.shape):
        ni, ki, si, dd, mi, ma = (float(a[idx]) for a in arrs)
        pi, rho = alternative(ni, ki, si, dd, mi, integer, ma)
        if math.isnan(pi):
            continue
        observed = sums[idx[0]] if sums is not None and out.ndim == 1 else None
        if observed is not None and len(observed[0]) and rho < 1.0 and _near(observed, rho):
            # the observed shape at the model's two moments (ρ = 1: every sum equal, the normal model is exact)
            m1 = math.copysign(mi * abs(dd) / pi, _mean(observed))
            draws = conditional_draws(observed[0], observed[1], m1, rho)
            if draws is not None:
                out[idx] = units_for_power(pi, rho, level, power, draws)
                continue
        key = (round(pi, 12), round(rho, 12))
        if key not in cache:
            cache[key] = units_for_power(pi, rho, level, power)
        out[idx] = cache[key]
    return out


def _mean(observed: tuple[np.ndarray, np.ndarray]) -> float:
    values, counts = (np.asarray(x, dtype=float) for x in observed)
    return float((values * counts).sum() / counts.sum())


SHAPE_RHO = 1.25
"""The observed shape stands for the alternative's only when the alternative's ``ρ`` is within this factor of
the observed sums' own ``|mean|/√mean square`` (``detect`` near the effect seen): a shape stretched to a far
other mean — a rare large loss against frequent small gains, put at a mean near 0 — is no model of anything."""


def _near(observed: tuple[np.ndarray, np.ndarray], rho: float) -> bool:
    values, counts = (np.asarray(x, dtype=float) for x in observed)
    m2 = float((values * values * counts).sum() / counts.sum())
    rho_obs = abs(_mean(observed)) / math.sqrt(m2) if m2 > 0 else 0.0
    return rho_obs > 0 and 1 / SHAPE_RHO <= rho / rho_obs <= SHAPE_RHO

