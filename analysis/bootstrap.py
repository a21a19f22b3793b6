"""Tail statistics of a score sample (mean, SD, quantiles, loss probabilities, CVaR) with a cluster bootstrap,
and sessions of K hands simulated from the logged hands.

The conventions (quantiles, CVaR, percentile bootstrap) are in :mod:`analysis.stats`, which re-exports every
public name here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from analysis.inference import LEVEL

Seed = int | np.random.SeedSequence
"""A bootstrap's seed: what ``numpy.random.default_rng`` accepts."""


def risk_kernel(v: np.ndarray, w: np.ndarray, probs: Sequence[float], thresholds: Sequence[float],
                alpha: float) -> dict[str, np.ndarray]:
    """Weighted risk statistics of samples sorted ascending along the last axis, one row per replicate.

    ``v``: values sorted ascending, shape ``(n,)`` (shared) or ``(r, n)``; ``w``: non-negative weights
    ``(r, n)`` (ones = the plain sample, bootstrap counts = a resample). Returns arrays of length ``r``:
    ``mean``, ``sd`` (ddof 1 on total weight), ``q<p>`` (inverse empirical CDF), ``p_loss_gt_<x>``
    (share of weight with ``v < −x``) and ``cvar`` (mean loss ``−v`` of the worst ``(1−α)`` of the weight)."""
    w = np.asarray(w, dtype=float)
    v = np.broadcast_to(np.asarray(v, dtype=float), w.shape)
    tot = w.sum(axis=1)
    mean = (w * v).sum(axis=1) / tot
    with np.errstate(invalid="ignore", divide="ignore"):
        var = ((w * (v - mean[:, None]) ** 2).sum(axis=1)) / (tot - 1)
    cum = np.cumsum(w, axis=1)
    out: dict[str, np.ndarray] = {"mean": mean, "sd": np.sqrt(var)}
    probs_a = np.asarray(probs, dtype=float)
    neg_x = -np.asarray(thresholds, dtype=float)
    quant = np.empty((w.shape[0], probs_a.size))
    below = np.empty((w.shape[0], neg_x.size))
    for i in range(w.shape[0]):  # rows are few (a chunk of replicates); each search is O(log n)
        # inverse empirical CDF: first position whose cumulative weight reaches p·total (float tolerance)
        idx = np.searchsorted(cum[i], probs_a * tot[i] - 1e-9 * tot[i], side="left")
        quant[i] = v[i, np.minimum(idx, v.shape[1] - 1)]
        j = np.searchsorted(v[i], neg_x, side="left")  # values < -x are the first j (sorted ascending)
        below[i] = np.where(j > 0, cum[i, np.maximum(j - 1, 0)], 0.0) / tot[i]
    for c, p in enumerate(probs_a):
        out[f"q{p:g}"] = quant[:, c]
    for c, x in enumerate(thresholds):
        out[f"p_loss_gt_{x:g}"] = below[:, c]
    k = (1.0 - alpha) * tot
    part = np.clip(k[:, None] - (cum - w), 0.0, w)
    out["cvar"] = (part * -v).sum(axis=1) / k
    return out


def _chunks(total: int, size: int) -> Iterator[int]:
    while total > 0:
        step = min(size, total)
        yield step
        total -= step


def _value_pairs(v: np.ndarray, codes: np.ndarray, n_cl: int) -> tuple[np.ndarray, ...]:
    """The sample ``v`` (sorted ascending; ``codes``: the cluster of each value, ``0..n_cl−1``) as distinct
    (value, cluster) pairs: ``(distinct values ascending, cluster of each pair, multiplicity of each pair,
    index of each distinct value's first pair)``, pairs ordered by value.

    A replicate's weight of distinct value ``j`` is then ``Σ count[cluster]·multiplicity`` over its pairs,
    and :func:`risk_kernel` on (distinct values, those weights) gives the statistics of the whole resample:
    scores take a few hundred values, so the kernel runs on hundreds of columns instead of every
    observation."""
    distinct, value_index = np.unique(v, return_inverse=True)
    keys, mult = np.unique(value_index.astype(np.int64) * max(n_cl, 1) + codes, return_counts=True)
    pair_value, pair_cluster = np.divmod(keys, max(n_cl, 1))
    starts = np.flatnonzero(np.r_[True, pair_value[1:] != pair_value[:-1]]) if keys.size else keys
    # int32 halves the memory traffic of the replicates' gather; a weight is at most n_cl·(largest multiplicity)
    small = keys.size == 0 or n_cl * int(mult.max()) < 2**31
    return distinct, pair_cluster, mult.astype(np.int32 if small else np.int64), starts


def cluster_bootstrap_risk(values: np.ndarray, clusters: np.ndarray, *, probs: Sequence[float],
                           thresholds: Sequence[float], alpha: float = LEVEL, n_boot: int = 200, seed: Seed = 0,
                           level: float = LEVEL, budget: int = 4_000_000) -> dict[str, tuple[float, float, float]]:
    """Risk statistics of ``values`` (see :func:`risk_kernel`) with percentile-bootstrap intervals.

    ``clusters``: the hand of each value (any integer labels); a replicate draws as many hands as there are,
    with replacement, and keeps all of each drawn hand's values. Returns ``{stat: (estimate, lo, hi)}``;
    ``lo``/``hi`` are NaN when ``n_boot == 0``. ``budget`` bounds the replicate×observation matrix size."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    v = values[order]
    _, codes = np.unique(np.asarray(clusters)[order], return_inverse=True)
    n_cl = int(codes.max()) + 1 if codes.size else 0
    point = risk_kernel(v, np.ones((1, v.size)), probs, thresholds, alpha)
    reps: dict[str, list[np.ndarray]] = {key: [] for key in point}
    rng = np.random.default_rng(seed)
    distinct, pair_cluster, pair_mult, starts = _value_pairs(v, codes, n_cl)
    for r in _chunks(n_boot if n_cl else 0, max(1, budget // max(v.size, n_cl, 1))):
        draws = rng.integers(0, n_cl, size=(r, n_cl)) + (np.arange(r) * n_cl)[:, None]
        counts = np.bincount(draws.ravel(), minlength=r * n_cl).reshape(r, n_cl).astype(pair_mult.dtype)
        # a replicate's weight of each distinct value (integer counts: exact in any order of summation)
        weights = np.add.reduceat(counts[:, pair_cluster] * pair_mult, starts, axis=1)
        for key, val in risk_kernel(distinct, weights, probs, thresholds, alpha).items():
            reps[key].append(val)
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    out = {}
    for key, est in point.items():
        if reps[key]:
            sample = np.concatenate(reps[key])
            lo, hi = np.nanquantile(sample, [lo_q, hi_q])
        else:
            lo = hi = np.nan
        out[key] = (float(est[0]), float(lo), float(hi))
    return out


def _by_hand(values: np.ndarray, clusters: np.ndarray, units: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Values grouped by hand: (values in hand order, start, size, per-hand mean, per-hand mean of squares,
    hands grouped by independent unit: hand order, unit start, unit size). ``units`` (e.g. the wall of each
    value) defaults to the hand itself."""
    values = np.asarray(values, dtype=float)
    clusters = np.asarray(clusters)
    if clusters.size and bool((clusters[1:] >= clusters[:-1]).all()):  # logs are in hand order: no sort, no copy
        order, vals, grouped = None, values, clusters
    else:
        order = np.argsort(clusters, kind="stable")
        vals, grouped = values[order], clusters[order]
    start = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]]) if grouped.size else np.zeros(0, np.int64)
    size = np.diff(np.r_[start, grouped.size])
    mean = np.add.reduceat(vals, start) / size if start.size else np.zeros(0)
    mean2 = np.add.reduceat(vals * vals, start) / size if start.size else np.zeros(0)
    if units is None:
        unit_of_hand = np.arange(start.size)
    else:
        unit_of_hand = (np.asarray(units) if order is None else np.asarray(units)[order])[start]
    horder = np.argsort(unit_of_hand, kind="stable")
    _, ustart, usize = np.unique(unit_of_hand[horder], return_index=True, return_counts=True)
    return vals, start, size, mean, mean2, horder, ustart, usize


def _resample_units(tab: tuple[np.ndarray, ...], rng: np.random.Generator) -> np.ndarray:
    """Hand indices of one cluster-bootstrap replicate: units drawn with replacement, all their hands kept."""
    horder, ustart, usize = tab[5:]
    pick = rng.integers(0, ustart.size, size=ustart.size)
    if usize.size and usize[-1] == 1 and usize.max() == 1:  # one hand per unit (no duplicate seating)
        return horder[pick]
    sizes = usize[pick]
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return horder[np.repeat(ustart[pick], sizes) + offsets]


def _sessions(tab: tuple[np.ndarray, ...], hands: int, n_sessions: int, rng: np.random.Generator,
              resample_hands: bool) -> tuple[np.ndarray, float, float]:
    """Simulated session totals plus the exact mean and SD of a session total under the same draw."""
    vals, start, size, hmean, hmean2 = tab[:5]
    pool = _resample_units(tab, rng) if resample_hands else np.arange(start.size)
    obs = session_draws(start, size, pool, hands, n_sessions, rng)
    # one draw = a uniform hand of the pool, then a uniform observation of that hand
    m1, m2 = hmean[pool].mean(), hmean2[pool].mean()
    return vals[obs].sum(axis=1), hands * m1, float(np.sqrt(max(hands * (m2 - m1 * m1), 0.0)))


def session_draws(start: np.ndarray, size: np.ndarray, pool: np.ndarray, hands: int, n_sessions: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Positions ``(n_sessions, hands)`` of the drawn observations among the values in hand order (hand ``h``
    holds positions ``start[h] … start[h] + size[h] − 1``): each a uniform hand of ``pool``, then a uniform
    observation of that hand."""
    pick = pool[rng.integers(0, pool.size, size=(n_sessions, hands))]
    u = rng.random((n_sessions, hands))
    if size.size and size.min() == size.max():  # every hand has s observations (by seat: 1, one bot: 4)
        s = int(size[0])
        return pick * s + (u * s).astype(np.int64) if s > 1 else pick  # start[h] = s·h; u·s ≥ 0 truncates
    return start[pick] + np.floor(u * size[pick]).astype(np.int64)


def session_totals(values: np.ndarray, clusters: np.ndarray, hands: int, n_sessions: int,
                   rng: np.random.Generator, resample_hands: bool = False,
                   units: np.ndarray | None = None) -> np.ndarray:
    """Totals of ``n_sessions`` simulated sessions of ``hands`` hands for one player.

    Each hand of a session is an independent draw of a logged hand (``clusters``: the hand of each value;
    uniform), then of one of that hand's observations (uniform), i.e. one player's score in that hand. With
    ``resample_hands`` the logged hands are first resampled (one outer bootstrap replicate): by independent
    unit when ``units`` (the wall of each value, duplicate seating) is given — all hands of a drawn wall
    together — else hand by hand."""
    return _sessions(_by_hand(values, clusters, units), hands, n_sessions, rng, resample_hands)[0]


def session_risk(values: np.ndarray, clusters: np.ndarray, *, hands: int, probs: Sequence[float],
                 thresholds: Sequence[float], alpha: float = LEVEL, n_sessions: int = 20_000,
                 n_boot: int = 100, boot_sessions: int = 2_000, seed: Seed = 0, level: float = LEVEL,
                 units: np.ndarray | None = None) -> dict[str, tuple[float, float, float]]:
    """Risk statistics of the total over a session of ``hands`` hands: ``{stat: (estimate, lo, hi)}``.

    One hand of a session is a uniform draw of a logged hand (``clusters``), then of one of that hand's
    observations (:func:`session_totals`), so every hand weighs the same however many observations it has.
    ``mean`` and ``sd`` are exact for the session model (``K·μ`` and ``√K·σ`` of one draw, σ with ddof 0);
    the other statistics use ``n_sessions`` simulated sessions. Intervals: percentile interval over ``n_boot``
    outer replicates that resample the logged hands — by wall when ``units`` gives each value's wall (duplicate
    seating) — and simulate ``boot_sessions`` sessions each, so the interval includes the simulation error;
    ``lo``/``hi`` are NaN when ``n_boot == 0``."""
    rng = np.random.default_rng(seed)
    tab = _by_hand(values, clusters, units)
    point = session_point(*_sessions(tab, hands, n_sessions, rng, False), probs, thresholds, alpha)
    reps = [_sessions(tab, hands, boot_sessions, rng, True) for _ in range(n_boot)]
    if reps:
        mat = np.sort(np.stack([r[0] for r in reps]), axis=1)
        boot = risk_kernel(mat, np.ones_like(mat), probs, thresholds, alpha)
        boot["mean"], boot["sd"] = np.array([r[1] for r in reps]), np.array([r[2] for r in reps])
    out = {}
    for key, est in point.items():
        lo, hi = (np.nanquantile(boot[key], [(1 - level) / 2, (1 + level) / 2]) if reps else (np.nan, np.nan))
        out[key] = (float(est[0]), float(lo), float(hi))
    return out


def session_point(tot: np.ndarray, mean: float, sd: float, probs: Sequence[float], thresholds: Sequence[float],
                  alpha: float) -> dict[str, np.ndarray]:
    """The risk statistics of simulated session totals ``tot``, with the session model's exact ``mean`` and
    ``sd`` (:func:`session_risk`'s estimates)."""
    tot = np.sort(tot)
    point = risk_kernel(tot, np.ones((1, tot.size)), probs, thresholds, alpha)
    point["mean"], point["sd"] = np.array([mean]), np.array([sd])
    return point
