"""Statistical building blocks: clustered means and shares, Wilson intervals, few-difference intervals,
multiplicity, sample sizes under the alternative, cluster bootstrap, sessions.

Conventions used throughout ``analysis``:

- Intervals are two-sided at ``LEVEL`` (95%); ``z = Φ⁻¹(0.975) ≈ 1.95996``.
- The **cluster** (``cluster=`` argument; ``Run.cluster`` in the tables) is the independent unit: the hand, or
  the wall (``deal_id``) under duplicate seating. Observations of one cluster may be correlated in any way.
- A mean is the ratio estimator ``ΣS_c / Σm_c`` (``S_c`` = sum of cluster ``c``'s observations, ``m_c`` = their
  number) with the cluster-robust (linearisation) SE
  ``se² = G/(G−1) · Σ_c (S_c − mean·m_c)² / (Σ_c m_c)²`` over the ``G`` clusters (``sd/√n`` with one
  observation per cluster) and the normal interval ``mean ± z·se``.
- A share (the mean of a 0/1 indicator: of hands, wins, player-hands) gets the **Wilson interval at the
  effective sample size** (:func:`share_interval_exprs`): inside [0, 1], never zero-width.
- A paired difference carried by fewer than ``analysis.rare.RARE_UNITS`` differing clusters gets the Student
  interval on (differing clusters − 1) degrees of freedom instead of the normal one (:mod:`analysis.rare`).
- Multiplicity: :func:`p_adjust` (Holm, Benjamini–Hochberg). Sample sizes: :func:`hands_needed` with the SD
  under the alternative (:func:`sigma_alternative`; the paired rows use :mod:`analysis.power`).
- Quantiles are the inverse of the empirical CDF (numpy ``method="inverted_cdf"``): the smallest observed value
  ``x`` with ``F(x) ≥ p``, so a reported quantile is always a score that actually occurred.
- CVaR (expected shortfall) at level ``α`` of the loss ``L = −score`` is the mean of the worst ``(1−α)`` share of
  outcomes, ``CVaR_α = (1/k)·Σ`` of the ``k = (1−α)·n`` largest losses, the boundary observation counted with
  its fractional weight (the coherent Acerbi–Tasche definition).
- Bootstrap intervals are percentile intervals over ``n_boot`` replicates that resample **clusters** with
  replacement (all of a cluster's observations move together), seeded with ``numpy.random.default_rng(seed)``;
  ``n_boot = 0`` gives no interval. The command line accepts 0 or at least :data:`MIN_BOOT` replicates.

Where each part lives: :mod:`analysis.inference` (level, z, Wilson, p-values, multiplicity, sample sizes),
:mod:`analysis.clustered` (clustered means and shares), :mod:`analysis.bootstrap` (tail statistics with a cluster
bootstrap, simulated sessions). This module re-exports their public names, the one place to import them from.
"""

from __future__ import annotations

from analysis.bootstrap import Seed, cluster_bootstrap_risk, risk_kernel, session_risk, session_totals
from analysis.clustered import (
    cluster_diff_se,
    cluster_means,
    cluster_moments,
    cluster_proportions,
    cluster_share_exprs,
    diff_rows,
    diff_sides,
    influence_queries,
    means_from_moments,
    ratio_mean_exprs,
    share_interval_exprs,
    share_moments,
)
from analysis.inference import (
    LEVEL,
    MIN_BOOT,
    POWER,
    hands_needed,
    normal_p,
    p_adjust,
    sigma_alternative,
    wilson_exprs,
    wilson_interval,
    z_value,
)

__all__ = [
    "LEVEL", "MIN_BOOT", "POWER", "Seed", "cluster_bootstrap_risk", "cluster_diff_se", "cluster_means",
    "cluster_moments", "cluster_proportions", "cluster_share_exprs", "diff_rows", "diff_sides", "hands_needed",
    "influence_queries", "means_from_moments",
    "normal_p", "p_adjust", "ratio_mean_exprs", "risk_kernel", "session_risk", "session_totals",
    "share_interval_exprs", "share_moments", "sigma_alternative", "wilson_exprs", "wilson_interval", "z_value",
]
