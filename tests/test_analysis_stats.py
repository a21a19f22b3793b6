"""analysis.stats against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from analysis.stats import (
    MIN_BOOT,
    cluster_bootstrap_risk,
    cluster_diff_se,
    cluster_means,
    cluster_proportions,
    cluster_share_exprs,
    hands_needed,
    risk_kernel,
    session_risk,
    session_totals,
    share_moments,
    wilson_exprs,
    wilson_interval,
    z_value,
)

Z = 1.959963984540054


def test_z_value():
    assert z_value() == pytest.approx(Z, abs=1e-12)
    assert z_value(0.90) == pytest.approx(1.6448536, abs=1e-6)


def test_wilson_hand_computed():
    # k=3, n=10: p=.3, z²=3.841459; centre=(.3+.192073)/1.384146=.355512;
    # half=z·√(.021+.0096036)/1.384146=.247720
    lo, hi = wilson_interval(3, 10)
    assert lo == pytest.approx(0.1077913, abs=1e-6)
    assert hi == pytest.approx(0.6032219, abs=1e-6)
    # k=0: lo=0, hi=z²/(n+z²); k=n: lo=n/(n+z²), hi=1
    lo, hi = wilson_interval(np.array([0, 7]), np.array([4, 7]))
    assert lo[0] == 0 and hi[0] == pytest.approx(Z**2 / (4 + Z**2))
    assert lo[1] == pytest.approx(7 / (7 + Z**2)) and hi[1] == 1
    lo, hi = wilson_interval(0, 0)
    assert np.isnan(lo) and np.isnan(hi)


def test_wilson_exprs_match_numpy():
    df = pl.DataFrame({"k": [0, 3, 7, 50, 0], "n": [4, 10, 7, 1000, 0]})
    out = df.with_columns(wilson_exprs("k", "n", "p"))
    lo, hi = wilson_interval(df["k"].to_numpy(), df["n"].to_numpy())
    np.testing.assert_allclose(out["p_lo"].to_numpy()[:4], lo[:4], rtol=1e-12)
    np.testing.assert_allclose(out["p_hi"].to_numpy()[:4], hi[:4], rtol=1e-12)
    assert out["p"][1] == 0.3 and out["p"][4] is None and out["p_lo"][4] is None


def test_cluster_means_one_per_hand_is_sd_over_sqrt_n():
    # seat 0 scores 6, -16, -48, 2: mean -14; deviations 20,-2,-34,16 -> SS 1816, var 605.33, se √(605.33/4)
    lf = pl.LazyFrame({"g": ["a"] * 4, "hand_id": [0, 1, 2, 3], "x": [6, -16, -48, 2]})
    row = cluster_means(lf, ["g"], ["x"]).row(0, named=True)
    assert (row["n_hands"], row["n_obs"], row["mean"]) == (4, 4, -14)
    assert row["se"] == pytest.approx(math.sqrt(1816 / 3 / 4))
    assert row["ci_lo"] == pytest.approx(-14 - Z * row["se"])


def test_cluster_means_two_per_hand():
    # two observations per hand, hand sums S = 6, -8, -32, 18 (m = 2): mean = -16/8 = -2;
    # se² = 4/3 · Σ(S + 4)² / 8² = 4/3 · 1384/64 = 173/6
    lf = pl.LazyFrame({"hand_id": [0, 0, 1, 1, 2, 2, 3, 3], "g": ["b"] * 8,
                       "x": [6, 0, -16, 8, -48, 16, 2, 16]})
    row = cluster_means(lf, ["g"], ["x"]).row(0, named=True)
    assert (row["n_hands"], row["n_obs"], row["mean"]) == (4, 8, -2)
    assert row["se"] == pytest.approx(math.sqrt(173 / 6))
    # the same numbers treated as 8 independent players would give a different (wrong) SE
    assert row["se"] != pytest.approx(np.std([6, 0, -16, 8, -48, 16, 2, 16], ddof=1) / math.sqrt(8))


def test_cluster_means_single_hand_has_no_se():
    lf = pl.LazyFrame({"g": [1, 1], "hand_id": [5, 5], "x": [1.0, 3.0]})
    row = cluster_means(lf, ["g"], ["x"]).row(0, named=True)
    assert row["mean"] == 2 and row["se"] is None


def test_cluster_proportions_hand_computed():
    # hands 0..3, two players each; value 16 appears twice in hand 2 (a cluster), once in hands 0 and 1 for "a"
    lf = pl.LazyFrame({"g": ["v"] * 8, "hand_id": [0, 0, 1, 1, 2, 2, 3, 3], "s": [0, -6, 6, 2, 16, 16, 0, -18]})
    out = cluster_proportions(lf, ["g"], "s")
    r16 = out.filter(pl.col("s") == 16).row(0, named=True)
    # p = 2/8; S_h = (0,0,2,0): se² = 4/3 · Σ(S − .5)² / 64 = 4/3 · (3·.25 + 2.25)/64 = 1/16
    assert (r16["k"], r16["n_obs"], r16["n_units"], r16["p"]) == (2, 8, 4, 0.25)
    assert r16["se"] == pytest.approx(0.25)
    # deff = se² / (p(1−p)/n_obs · G/(G−1)) = (1/16) / (3/128 · 4/3) = 2: Wilson at n_eff = 4
    lo, hi = wilson_interval(1.0, 4.0)
    assert (r16["p_lo"], r16["p_hi"]) == pytest.approx((float(lo), float(hi)))
    assert out["p"].sum() == pytest.approx(1.0)
    assert out["k"].sum() == 8


def _shares(trials: pl.LazyFrame, events: pl.LazyFrame, key: str | list[str]) -> pl.DataFrame:
    counts, totals = share_moments(events, trials, ["g"], key)
    return (counts.join(totals, on="g").collect()
            .with_columns(cluster_share_exprs(pl.col("k"), pl.col("_SS"), pl.col("_SM"), pl.col("n_obs"),
                                              pl.col("_MM"), pl.col("n_units"))))


def test_cluster_shares_hand_computed():
    # 3 hands with 2, 3, 1 trials (wins); flag "a" on trials 0.0, 1.0, 1.1, 1.2; flag "b" on every trial
    trials = pl.LazyFrame({"g": ["x"] * 6, "hand_id": [0, 0, 1, 1, 1, 2], "t": range(6)})
    events = pl.LazyFrame({"g": ["x"] * 10, "hand_id": [0, 1, 1, 1, 0, 0, 1, 1, 1, 2],
                           "flag": ["a"] * 4 + ["b"] * 6})
    out = {r["flag"]: r for r in _shares(trials, events, "flag").iter_rows(named=True)}
    a = out["a"]
    # p = 4/6; k − p·m = 1 − 4/3, 3 − 2, 0 − 2/3 = −1/3, 1, −2/3: se² = 3/2 · (14/9) / 36 = 7/108
    assert (a["k"], a["k_units"], a["n_obs"], a["n_units"]) == (4, 2, 6, 3)
    assert a["p"] == pytest.approx(2 / 3) and a["p_se"] == pytest.approx(math.sqrt(7 / 108))
    # design effect (7/108) / (p(1−p)/6 · 3/2 = 1/18) = 7/6: Wilson at n_eff = 6·6/7, inside [0, 1]
    n_eff = 36 / 7
    lo, hi = wilson_interval(2 / 3 * n_eff, n_eff)
    assert (a["p_lo"], a["p_hi"]) == pytest.approx((float(lo), float(hi)))
    assert 0 < a["p_lo"] < a["p"] < a["p_hi"] < 1
    # k = n: SE 0, the design effect is unknown: Wilson with n_eff = the 3 clusters, never zero-width
    b = out["b"]
    assert (b["p"], b["p_se"], b["p_hi"]) == (1, 0, 1)
    assert b["p_lo"] == pytest.approx(3 / (3 + Z**2))
    # one trial per hand: the clustered SE is √(p(1−p)/(n−1)), not Wilson's
    one = _shares(pl.LazyFrame({"g": ["x"] * 4, "hand_id": range(4)}),
                  pl.LazyFrame({"g": ["x"], "hand_id": [2], "flag": ["a"]}), "flag").row(0, named=True)
    assert one["p_se"] == pytest.approx(math.sqrt(0.25 * 0.75 / 3))


def test_cluster_diff_se_matches_ols_sandwich():
    rng = np.random.default_rng(4)
    h = np.repeat(np.arange(60), rng.integers(1, 5, size=60))
    D = rng.random(h.size) < 0.4
    y = rng.normal(size=h.size) + rng.normal(size=60)[h] + D  # a hand effect shared by both groups
    out = cluster_diff_se(pl.LazyFrame({"g": [1] * h.size, "hand_id": h, "d": D, "y": y}), ["g"], "d", "y")
    r = out.row(0, named=True)
    X = np.column_stack([np.ones(h.size), D.astype(float)])
    bread = np.linalg.inv(X.T @ X)
    beta = bread @ X.T @ y
    e = y - X @ beta
    scores = np.stack([X[h == c].T @ e[h == c] for c in np.unique(h)])
    G = scores.shape[0]
    V = G / (G - 1) * bread @ (scores.T @ scores) @ bread
    assert (r["n_units"], r["n_obs"]) == (G, h.size)
    assert r["diff"] == pytest.approx(beta[1]) and r["se"] == pytest.approx(math.sqrt(V[1, 1]))
    # a group with only one side has no row
    assert cluster_diff_se(pl.LazyFrame({"g": [1, 1], "hand_id": [0, 1], "d": [True, True], "y": [1.0, 2.0]}),
                           ["g"], "d", "y").height == 0


def test_hands_needed_hand_computed():
    # σ = se·√n = 12, d = 1: ⌈((1.959964 + 0.841621)·12)²⌉ = ⌈1130.2⌉
    assert hands_needed(6.0, 4, 1.0) == 1131
    assert hands_needed(6.0, 4, -1.0) == 1131
    assert np.isnan(hands_needed(0.0, 4, 1.0))
    # one d per row: d = 2 needs a quarter of the hands (⌈1130.2/4⌉)
    np.testing.assert_array_equal(hands_needed(np.array([6.0, 6.0]), 4, np.array([1.0, 2.0])), [1131, 283])


SAMPLE = np.array([-10.0, -4, -2, 0, 0, 1, 2, 3, 5, 9])


def test_risk_kernel_tiny_sample():
    out = risk_kernel(SAMPLE, np.ones((1, 10)), [0.05, 0.1, 0.11, 0.5, 0.95, 1.0], [0, 2, 3, 100], alpha=0.8)
    assert out["mean"][0] == pytest.approx(0.4)
    assert out["sd"][0] == pytest.approx(np.std(SAMPLE, ddof=1))
    # inverse empirical CDF: q(p) = x_(⌈np⌉)
    assert [out[f"q{p:g}"][0] for p in (0.05, 0.1, 0.11, 0.5, 0.95, 1.0)] == [-10, -10, -4, 0, 9, 9]
    np.testing.assert_array_equal([out[f"q{p:g}"][0] for p in (0.05, 0.5, 0.95)],
                                  np.quantile(SAMPLE, [0.05, 0.5, 0.95], method="inverted_cdf"))
    # P(loss > x) = share with score < -x: three scores below 0, two below -2 (-2 itself is not), none below -100
    assert [out[f"p_loss_gt_{x}"][0] for x in (0, 2, 3, 100)] == [0.3, 0.2, 0.2, 0.0]
    # CVaR80: the worst 20% = 2 of 10 outcomes, losses 10 and 4
    assert out["cvar"][0] == pytest.approx(7.0)


@pytest.mark.parametrize(("alpha", "expected"), [
    (0.95, 10.0),            # k = 0.5: half of the worst outcome
    (0.75, 15 / 2.5),        # k = 2.5: 10 + 4 + 0.5·2
    (0.5, (10 + 4 + 2) / 5),  # k = 5: 10, 4, 2, 0, 0
])
def test_cvar_fractional_boundary(alpha, expected):
    assert risk_kernel(SAMPLE, np.ones((1, 10)), [], [], alpha)["cvar"][0] == pytest.approx(expected)


def test_risk_kernel_weights_equal_repetition():
    w = np.array([[2, 0, 1, 3, 0, 1, 1, 0, 2, 1]], dtype=float)
    rep = np.sort(np.repeat(SAMPLE, w[0].astype(int)))
    a = risk_kernel(SAMPLE, w, [0.05, 0.3, 0.5, 0.9], [0, 3], 0.9)
    b = risk_kernel(rep, np.ones((1, rep.size)), [0.05, 0.3, 0.5, 0.9], [0, 3], 0.9)
    for key in a:
        assert a[key][0] == pytest.approx(b[key][0]), key


def test_bootstrap_reproducible_and_degenerate():
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    kw = {"probs": [0.5], "thresholds": [1.0], "n_boot": 50}
    a = cluster_bootstrap_risk(x, np.arange(200), seed=9, **kw)
    assert a == cluster_bootstrap_risk(x, np.arange(200), seed=9, **kw)
    assert a != cluster_bootstrap_risk(x, np.arange(200), seed=10, **kw)
    const = cluster_bootstrap_risk(np.full(30, 4.0), np.arange(30), **kw)
    assert const["mean"] == (4.0, 4.0, 4.0) and const["sd"] == (0.0, 0.0, 0.0)
    assert const["cvar"] == pytest.approx((-4.0, -4.0, -4.0))
    none = cluster_bootstrap_risk(x, np.arange(200), probs=[], thresholds=[], n_boot=0)
    assert math.isnan(none["mean"][1])


def test_bootstrap_interval_width_and_clustering():
    # N(0,1), n = 4000: percentile CI of the mean ≈ ±1.96/√n. If each value is repeated 4 times within a hand,
    # the cluster bootstrap must keep the width of the 1000 independent hands (≈ ±1.96/√1000), not shrink it.
    rng = np.random.default_rng(11)
    x = rng.normal(size=4000)
    est, lo, hi = cluster_bootstrap_risk(x, np.arange(4000), probs=[], thresholds=[], n_boot=400, seed=1)["mean"]
    assert (hi - lo) / 2 == pytest.approx(Z / math.sqrt(4000), rel=0.15)
    y = np.repeat(rng.normal(size=1000), 4)
    est, lo, hi = cluster_bootstrap_risk(y, np.arange(4000) // 4, probs=[], thresholds=[], n_boot=400, seed=1)["mean"]
    assert (hi - lo) / 2 == pytest.approx(Z / math.sqrt(1000), rel=0.15)


def test_sessions():
    rng = np.random.default_rng(0)
    assert np.all(session_totals(np.full(12, 3.0), np.arange(12) // 4, 40, 100, rng) == 120)
    # one hand = one cluster of values {-1, +1}: a session picks one of them per hand
    tot = session_totals(np.array([-1.0, 1.0]), np.array([0, 0]), 25, 20_000, rng)
    assert set(np.unique(tot)) <= set(range(-25, 26, 2))
    assert tot.mean() == pytest.approx(0, abs=0.15) and tot.std() == pytest.approx(5, rel=0.03)
    x = rng.normal(1.0, 2.0, size=3000)
    out = session_risk(x, np.arange(3000), hands=40, probs=[0.05], thresholds=[0], n_boot=40, seed=5)
    est, lo, hi = out["mean"]
    assert est == pytest.approx(40 * x.mean()) and lo < est < hi  # exact: K·mean
    assert out["sd"][0] == pytest.approx(math.sqrt(40) * x.std(ddof=0))
    assert (hi - lo) / 2 == pytest.approx(Z * 40 * x.std() / math.sqrt(3000), rel=0.3)
    # simulated quantile of the session total vs the normal approximation (40 draws: close to normal)
    q05 = out["q0.05"][0]
    assert q05 == pytest.approx(40 * x.mean() - 1.6449 * math.sqrt(40) * x.std(), rel=0.05)
    assert out == session_risk(x, np.arange(3000), hands=40, probs=[0.05], thresholds=[0], n_boot=40, seed=5)


def test_sessions_weigh_every_hand_once():
    # hand 0: one observation 10; hand 1: three observations −2. A session hand is a hand (1/2 each), then one of
    # its observations: μ = 4, σ² = 52 − 16 = 36 (a uniform draw of the 4 observations would give μ = 1)
    vals, hands = np.array([10.0, -2, -2, -2]), np.array([0, 1, 1, 1])
    out = session_risk(vals, hands, hands=2, probs=[0.5], thresholds=[0], n_sessions=20_000, n_boot=0, seed=2)
    assert out["mean"][0] == 8 and out["sd"][0] == pytest.approx(6 * math.sqrt(2))
    assert out["p_loss_gt_0"][0] == pytest.approx(0.25, abs=0.02)  # −2 twice: 1/4 (not 9/16)
    assert math.isnan(out["mean"][1]) and math.isnan(out["q0.5"][2])  # n_boot = 0: no interval


def test_session_intervals_use_the_replicates_given():
    x = np.random.default_rng(1).normal(size=400)
    a = session_risk(x, np.arange(400), hands=10, probs=[0.05], thresholds=[0], n_boot=MIN_BOOT, boot_sessions=200)
    est, lo, hi = a["mean"]
    assert lo < est < hi and hi - lo > 0.5  # ≈ 2·1.96·10/√400 ≈ 1.96 wide, not a single replicate's point
    assert MIN_BOOT == 100


def test_p_values_below_the_floor_are_shown_as_a_bound_not_as_zero():
    import polars as pl

    from analysis.report import fmt_p, md_table

    assert fmt_p(0.0) == "<0.0001" and fmt_p(3e-300) == "<0.0001"
    assert fmt_p(0.03125) == "0.03125" and fmt_p(None) == "—"
    table = md_table(pl.DataFrame({"mean": [0.0], "p_value": [0.0]}))
    assert table.splitlines()[-1] == "| 0 | <0.0001 |"


# -- multiplicity, few differing units, sample sizes under the alternative ------------------------------------

def test_p_adjust_holm_and_bh():
    from analysis.stats import p_adjust

    p = [0.01, 0.04, float("nan"), 0.03]
    # Holm: sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04 -> running max 0.03, 0.06, 0.06; NaN is no test
    np.testing.assert_allclose(p_adjust(p, "holm"), [0.03, 0.06, np.nan, 0.06])
    # BH: 0.01·3/1, 0.03·3/2, 0.04·3/3 = 0.03, 0.045, 0.04 -> running min from the top: 0.03, 0.04, 0.04
    np.testing.assert_allclose(p_adjust(p, "bh"), [0.03, 0.04, np.nan, 0.04])
    assert p_adjust([0.9, 0.8], "holm").max() == 1.0
    with pytest.raises(ValueError, match="holm"):
        p_adjust(p, "bonferroni")


def test_gamma_quantile_matches_garwood():
    from analysis.rare import gamma_quantile

    # exact Poisson interval for 10 events: Gamma(10) at 2.5%, Gamma(11) at 97.5% (chi² tables: 4.795, 18.390)
    assert gamma_quantile(0.025, 10) == pytest.approx(4.795389, abs=1e-5)
    assert gamma_quantile(0.975, 11) == pytest.approx(18.390356, abs=1e-5)
    assert gamma_quantile(0.9, 1) == pytest.approx(-math.log(0.1))  # Gamma(1) = exponential
    assert gamma_quantile(0.5, 0.3) < 0.3  # small shapes: the median is below the mean


def test_rare_diff_interval_single_size_is_poisson():
    from analysis.rare import gamma_quantile, rare_diff_interval, rare_diff_p

    # five differing units of +8 over 1,000 observations: the positive total's Fay–Feuer bounds reduce to the exact
    # Poisson (Garwood) bounds at 97.5% times 8; the unseen negative side can be as large as the upper 98.75%
    # bound of "0 events" of size 8
    lo, hi = rare_diff_interval(np.array([8.0] * 5 + [0.0] * 3), 1000)
    assert lo == pytest.approx((8 * gamma_quantile(0.0125, 5) - 8 * -math.log(0.0125)) / 1000)
    assert hi == pytest.approx(8 * gamma_quantile(0.9875, 6) / 1000)
    assert lo < 0 < hi and rare_diff_p(np.array([8.0] * 5)) > 0.05  # the 95% interval holds 0
    # many same-signed units: significant, and the p-value agrees with the interval
    d = np.array([8.0] * 25)
    p = rare_diff_p(d)
    assert p < 0.01
    lo_above, _ = rare_diff_interval(d, 1.0, 1 - p * 1.05)  # α a bit above p: the interval excludes 0
    lo_below, _ = rare_diff_interval(d, 1.0, 1 - p * 0.95)  # a bit below: it holds 0
    assert lo_above > 0 >= lo_below
    assert np.isnan(rare_diff_interval(np.zeros(4), 10)[0]) and np.isnan(rare_diff_p(np.zeros(4)))


def test_hands_needed_under_the_alternative():
    zsum2 = (Z + 0.8416212335729143) ** 2
    # a 0/1 share, nothing observed to differ: detecting one percentage point needs Var ≥ 0.01 − 0.0001
    assert hands_needed(0.0, 2000, 0.01, integer=True) == math.ceil(zsum2 * 0.0099 / 0.0001)  # 778
    # a rule that binds on 3 of 2,000 hands: an effect of 0.1 carried by those hands needs Var ≥ 0.01/π − 0.01
    pi = 3 / 2000
    assert hands_needed(0.0, 2000, 0.1, k_differ=3) == math.ceil(zsum2 * (0.01 / pi - 0.01) / 0.01)
    # ... unless each unit's difference is at most 1 (a share): then it must bind more often, π ≥ 0.1
    assert hands_needed(0.0, 2000, 0.1, k_differ=3, max_abs=1.0) == math.ceil(zsum2 * (0.1 - 0.01) / 0.01)
    # the observed SD wins when it is larger
    assert hands_needed(0.0106, 2000, 0.1, k_differ=1500, integer=True) == 177
