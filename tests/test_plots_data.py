"""What the figures show (issue 33 item 8): each plot of :mod:`analysis.plots` is drawn from a small table written
here, and the drawn data — marker positions, bar lefts and widths, error-bar ends, hollow markers, tick labels,
panels — are read back from the matplotlib artists and checked against the table's numbers."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.container import ErrorbarContainer
from matplotlib.lines import Line2D

from analysis import plots
from analysis.plots import COLORS, zh_label


def marks(ax, color=None) -> list[tuple[float, float, bool, str]]:
    """``(x, y, filled, marker)`` of every marker drawn without a line (dots, hollow dots, squares; not the
    error bars' caps), rounded to 9 decimals."""
    out = []
    for line in ax.lines:
        if line.get_linestyle() != "None" or line.get_marker() in ("None", None, "", "|", "_"):
            continue
        if color is not None and line.get_color() != color:
            continue
        filled = str(line.get_markerfacecolor()).lower() != "none"
        out += [(round(float(x), 9), round(float(y), 9), filled, line.get_marker())
                for x, y in zip(*line.get_data(), strict=True)]
    return sorted(out, key=lambda m: (m[1], m[0]))


def error_segments(ax) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The ends ``((x0, y0), (x1, y1))`` of every error bar, sorted."""
    segs = []
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            for col in c.lines[2]:
                segs += [tuple(tuple(round(float(v), 9) for v in p) for p in s) for s in col.get_segments()]
    return sorted(segs)


def bars(ax) -> list[tuple[float, float, float]]:
    """``(y centre, left, width)`` of every horizontal bar."""
    return [(p.get_y() + p.get_height() / 2, p.get_x(), p.get_width()) for p in ax.patches]


def ticks(ax, axis: str = "y") -> list[str]:
    return [t.get_text() for t in (ax.get_yticklabels() if axis == "y" else ax.get_xticklabels())]


def test_ev_errorbars_plots_each_mean_at_its_group_with_its_interval():
    ev = pl.DataFrame({
        "variant": ["a", "a", "b", "b", "a"], "seat": [0, 1, 0, 1, 0],
        "component": ["score_total"] * 4 + ["score_win"],
        "mean": [1.5, -2.0, 0.5, 0.25, 9.0], "ci_lo": [1.0, -3.0, None, 0.25, 8.0],
        "ci_hi": [2.0, -1.0, None, 0.25, 10.0]})
    ax = plots.ev_errorbars(ev).axes[0]
    assert ticks(ax) == ["seat 0", "seat 1"]
    # two variants: offsets -0.15 / +0.15 around the group's row (step 0.6 / 2); b's rows have no real interval
    assert marks(ax, COLORS[0]) == [(1.5, -0.15, True, "o"), (-2.0, 0.85, True, "o")]
    assert marks(ax, COLORS[1]) == [(0.5, 0.15, False, "o"), (0.25, 1.15, False, "o")]
    assert error_segments(ax) == [((-3.0, 0.85), (-1.0, 0.85)), ((1.0, -0.15), (2.0, -0.15))]
    # in the variants' order, though b (drawn second) has plain markers, which matplotlib lists before error bars
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]


def test_component_stack_stacks_positive_and_negative_parts_apart():
    rows = {"variant": ["v"] * 8, "seat": [0, 1] * 4,
            "component": ["score_total"] * 2 + ["score_win"] * 2 + ["score_kong"] * 2 + ["score_huazhu"] * 2,
            "mean": [4.0, -2.0, 3.0, -2.0, -1.0, 1.0, 2.0, -1.0]}
    ev = pl.DataFrame({**rows, "ci_lo": [3.0, -3.0] + [None] * 6, "ci_hi": [5.0, -1.0] + [None] * 6})
    ax = plots.component_stack(ev).axes[0]
    assert ticks(ax) == ["v: seat 0", "v: seat 1"]
    # win 3 | -2 from 0; kong -1 from 0 (seat 0's negatives) | 1 from 0 (seat 1's positives); huazhu 2 from
    # 3 | -1 from -2
    assert bars(ax) == [(0, 0, 3.0), (1, 0, -2.0), (0, 0, -1.0), (1, 0, 1.0), (0, 3.0, 2.0), (1, -2.0, -1.0)]
    assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == ["win", "kong", "huazhu"]
    assert marks(ax, "black") == [(4.0, 0.0, True, "D"), (-2.0, 1.0, True, "D")]
    assert error_segments(ax) == [((-3.0, 1.0), (-1.0, 1.0)), ((3.0, 0.0), (5.0, 0.0))]


def test_fan_frequency_dots_plot_shares_on_a_log_axis_and_drop_what_never_happened():
    freq = pl.DataFrame({
        "variant": ["a", "b"] * 3, "hand_type": ["pinghu"] * 2 + ["qidui"] * 2 + ["longqidui"] * 2,
        "k_wins": [60, 50, 2, 0, 0, 0], "p_win": [0.6, 0.5, 0.02, 0.0, 0.0, 0.0],
        "p_win_lo": [0.5, 0.4, 0.005, 0.0, 0.0, 0.0], "p_win_hi": [0.7, 0.6, 0.07, 0.04, 0.04, 0.04]})
    ax = plots.fan_frequency_dots(freq).axes[0]
    assert ax.get_xscale() == "log"
    assert ticks(ax) == [zh_label("pinghu"), zh_label("qidui")]  # longqidui: never won
    # a at rows -0.175 (step 0.35), b at +0.175; b's qidui share is 0: no dot on a log axis
    assert [(x, round(y, 3)) for x, y, *_ in marks(ax, COLORS[0])] == [(0.6, -0.175), (0.02, 0.825)]
    assert [(x, round(y, 3)) for x, y, *_ in marks(ax, COLORS[1])] == [(0.5, 0.175)]
    ends = sorted((round(a[0], 3), round(b[0], 3)) for a, b in error_segments(ax))
    assert ends == [(0.005, 0.07), (0.4, 0.6), (0.5, 0.7)]


def test_risk_quantiles_draw_the_box_whiskers_median_and_cvar_of_the_table():
    stats = ["q(0.01)", "q(0.05)", "q(0.5)", "q(0.95)", "q(0.99)", "CVaR95 loss"]
    risk = pl.DataFrame({"variant": ["v"] * 6, "seat": [2] * 6, "statistic": stats,
                         "estimate": [-30.0, -10.0, 1.0, 12.0, 40.0, 25.0], "session_hands": [16] * 6})
    ax = plots.risk_quantiles(risk).axes[0]
    assert ticks(ax) == ["v: seat 2"]
    assert bars(ax) == [(0, -10.0, 22.0)]  # box q05..q95
    drawn = {tuple(line.get_xdata()) for line in ax.lines if isinstance(line, Line2D)}
    assert (-30.0, 40.0) in drawn and (1.0, 1.0) in drawn  # whiskers q01..q99, median tick
    assert marks(ax, COLORS[1]) == [(-25.0, 0.0, True, "v")]  # -CVaR
    assert "over 16 hands" in ax.get_xlabel()


def test_comparison_deltas_one_panel_per_unit_squares_for_few_differing():
    cmp = pl.DataFrame({
        "variant": ["alt"] * 3, "baseline": ["base"] * 3, "metric": ["points", "kongs", "draw rate"],
        "measured_in": ["base units", "base units", "share of hands"], "diff": [0.5, -0.2, 0.03],
        "ci_lo": [0.1, -0.5, 0.01], "ci_hi": [0.9, 0.1, 0.05], "interval": ["", "few differing", ""]})
    fig = plots.comparison_deltas(cmp, ["metric"])
    top, bottom = fig.axes
    assert ticks(top) == ["points  [alt−base]", "kongs  [alt−base]"] and ticks(bottom) == ["draw rate  [alt−base]"]
    assert "base units" in top.get_xlabel() and "share of hands" in bottom.get_xlabel()
    assert marks(top) == [(0.5, 0.0, True, "o"), (-0.2, 1.0, True, "s")]
    assert error_segments(top) == [((-0.5, 1.0), (0.1, 1.0)), ((0.1, 0.0), (0.9, 0.0))]
    assert marks(bottom) == [(0.03, 0.0, True, "o")] and error_segments(bottom) == [((0.01, 0.0), (0.05, 0.0))]


def test_dose_response_follows_the_rules_order_with_the_baseline_hollow_at_zero():
    sweep = pl.DataFrame({
        "value": ["32", "8", "16"], "order": [2, 0, 1], "metric": ["points"] * 3,
        "measured_in": ["base units"] * 3, "diff": [1.2, 0.0, 0.5], "ci_lo": [0.8, None, 0.1],
        "ci_hi": [1.6, None, 0.9], "baseline": [False, True, False]})
    ax = plots.dose_response(sweep, "settlement.huazhu_penalty").axes[0]
    assert ticks(ax, "x") == ["8", "16", "32"]
    assert marks(ax) == [(0.0, 0.0, False, "o"), (1.0, 0.5, True, "o"), (2.0, 1.2, True, "o")]
    assert error_segments(ax) == [((1.0, 0.1), (1.0, 0.9)), ((2.0, 0.8), (2.0, 1.6))]
    trend = [line for line in ax.lines if line.get_linestyle() == "-" and len(line.get_xdata()) == 3]
    assert [list(line.get_ydata()) for line in trend] == [[0.0, 0.5, 1.2]]


def test_score_distribution_one_panel_per_group_one_series_per_variant():
    dist = pl.DataFrame({"variant": ["a", "a", "b", "a"], "seat": [0, 0, 0, 1], "score_total": [-2, 6, -2, 4],
                         "p": [0.7, 0.3, 1.0, 1.0]})
    fig = plots.score_distribution_plot(dist)
    s0, s1 = fig.axes
    assert (s0.get_title(), s1.get_title()) == ("seat 0", "seat 1")
    assert marks(s0, COLORS[0]) == [(6.0, 0.3, True, "o"), (-2.0, 0.7, True, "o")]
    assert marks(s0, COLORS[1]) == [(-2.0, 1.0, True, "o")] and marks(s1, COLORS[0]) == [(4.0, 1.0, True, "o")]
    assert np.isclose(sum(y for _, y, *_ in marks(s0, COLORS[0])), 1.0)
