"""Figures for the analysis tables (matplotlib, object API: no pyplot state, renders with Agg anywhere).

Every function takes a table produced by ``analysis.*`` and returns a :class:`matplotlib.figure.Figure`; error
bars are the tables' 95% intervals. Each takes ``ax=``: an axes to draw into (a sequence of axes, one per
panel, for the functions that draw several panels), e.g. a subplot of your own figure; the figure returned is
then that axes' figure. Without it the function makes its own figure. Colours: the Okabe–Ito palette (told
apart under the common colour-vision deficiencies). :func:`to_svg` renders a figure to SVG bytes (the HTML
report embeds them), :func:`to_png` to PNG.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from functools import cache

import numpy as np
import polars as pl
from matplotlib.figure import Figure

COLORS = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
"""Okabe–Ito colour-blind-safe palette (blue, vermillion, bluish green, orange, sky blue, reddish purple, yellow,
black)."""


def _axes(ax, n: int, figsize: tuple[float, float], height_ratios: Sequence[float] | None = None
          ) -> tuple[Figure, list, bool]:
    """``(figure, n axes, made here)``: the caller's ``ax`` (one axes, or a sequence of ``n``), else a new
    figure of ``figsize`` with ``n`` stacked panels."""
    if ax is None:
        fig = Figure(figsize=figsize)
        return fig, list(fig.subplots(n, 1, squeeze=False, height_ratios=height_ratios)[:, 0]), True
    axes = list(ax) if isinstance(ax, Sequence | np.ndarray) else [ax]
    if len(axes) != n:
        raise ValueError(f"ax: this figure has {n} panel(s), got {len(axes)} axes")
    return axes[0].figure, axes, False


def to_png(fig: Figure, dpi: int = 100) -> bytes:
    """PNG bytes of a figure (Agg)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def to_svg(fig: Figure) -> bytes:
    """SVG bytes of a figure with its text as text, not as glyph outlines: a third smaller than the PNG (the
    strategies study's report: 391 against 604 KB), sharp at any zoom, searchable, drawn in the reader's fonts
    (matplotlib's family list ends in ``sans-serif``, so a missing font falls back, Chinese included); no date and
    fixed element ids, so the same figure gives the same bytes."""
    import matplotlib as mpl

    buf = io.BytesIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "xuezhan"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


_CJK = re.compile(r"\s*\([^)]*[\u3400-\u9fff][^)]*\)")
_CJK_FAMILIES = ("Noto Sans CJK", "Noto Serif CJK", "Source Han Sans", "Source Han Serif", "WenQuanYi",
                 "SimHei", "SimSun", "Microsoft YaHei", "PingFang", "Heiti", "Hiragino Sans GB", "AR PL",
                 "Droid Sans Fallback", "Arial Unicode")


@cache
def cjk_font() -> str | None:
    """Name of an installed font with Chinese glyphs (matplotlib's font manager), or None: labels then stay
    pinyin only, never a row of missing-glyph boxes."""
    from matplotlib import font_manager

    for font in font_manager.fontManager.ttflist:
        if any(font.name.startswith(f) for f in _CJK_FAMILIES):
            return font.name
    return None


def plain(text: str) -> str:
    """A label for a figure: parenthesised Chinese glosses kept when a CJK font is installed (see
    :func:`cjk_font`), else dropped, e.g. ``huazhu (花猪) any`` → ``huazhu any``."""
    return str(text) if cjk_font() else _CJK.sub("", str(text))


def zh_label(key: str) -> str:
    """A hand type / flag for a figure: ``qingyise 清一色`` with a CJK font, ``qingyise`` without one."""
    if cjk_font() is None:
        return key
    from simulator.vocab import FLAG_ZH, HAND_TYPE_ZH

    zh = {**FLAG_ZH, **HAND_TYPE_ZH}.get(key)
    return f"{key} {zh}" if zh else key


def _fonts(ax) -> None:
    """Let the axis' tick labels fall back to the CJK font when there is one."""
    font = cjk_font()
    if font:
        for label in (*ax.get_yticklabels(), *ax.get_xticklabels()):
            label.set_fontfamily(["DejaVu Sans", font])


def _label(row: dict, cols: Sequence[str]) -> str:
    from analysis.ev import POSITION_NAMES

    def one(c: str) -> str:
        if c == "seat":
            return f"seat {row[c]}"
        if c == "position":
            return POSITION_NAMES[row[c]]
        return str(row[c])

    return plain(" / ".join(one(c) for c in cols))


def _variants(df: pl.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["variant"].to_list()))


def _has_interval(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Rows with a real interval: both bounds known and ``hi > lo`` (a zero-width interval is not drawn)."""
    lo, hi = (np.asarray(pl.Series(a, dtype=pl.Float64).fill_null(np.nan), dtype=float) for a in (lo, hi))
    return np.isfinite(lo) & np.isfinite(hi) & (hi > lo)


def _errors(est: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Asymmetric error-bar array from an interval (a null estimate counts as 0; a null bound draws no bar)."""
    est = np.nan_to_num(np.asarray(est, dtype=float), nan=0.0)
    lo, hi = (np.asarray(pl.Series(a, dtype=pl.Float64).fill_null(np.nan), dtype=float) for a in (lo, hi))
    lo, hi = np.where(np.isnan(lo), est, lo), np.where(np.isnan(hi), est, hi)
    return np.vstack([np.clip(est - lo, 0, None), np.clip(hi - est, 0, None)])


def interval_points(ax, x: np.ndarray, y: np.ndarray, lo, hi, color: str, label: str | None = None,
            marker: str = "o"):
    """Points with horizontal 95% intervals; points without a real interval are drawn hollow, with no bar.
    Returns the artist that carries ``label`` (None when nothing was drawn), for a legend in the callers' order
    (matplotlib's own lists plain markers before error bars, whatever the order they were drawn in)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = _has_interval(lo, hi)
    err = _errors(x, lo, hi)
    handle = None
    if ok.any():
        handle = ax.errorbar(x[ok], y[ok], xerr=err[:, ok], fmt=marker, capsize=3, color=color, label=label)
        label = None
    if (~ok).any():
        line, = ax.plot(x[~ok], y[~ok], marker, mfc="none", color=color, label=label)
        handle = handle or line
    return handle


def _grouped_dots(ax, df: pl.DataFrame, key: str, est: str, lo: str, hi: str) -> None:
    """One row per ``key`` value, one dot per variant (offset vertically) with its 95% interval; a share of 0
    (no dot on a log axis) is left out."""
    variants = _variants(df)
    keys = list(dict.fromkeys(df[key].to_list()))
    step = 0.7 / max(len(variants), 1)
    ypos = np.arange(len(keys))
    markers = "osD^v<>p"
    handles = []
    for i, v in enumerate(variants):
        sub = pl.DataFrame({key: keys}).join(df.filter(pl.col("variant") == v), on=key, how="left")
        e = sub[est].fill_null(0).to_numpy().astype(float)
        y = ypos + (i - (len(variants) - 1) / 2) * step
        seen = e > 0
        handles.append(interval_points(ax, e[seen], y[seen], sub[lo].filter(pl.Series(seen)),
                                       sub[hi].filter(pl.Series(seen)), COLORS[i % len(COLORS)], v,
                                       marker=markers[i % len(markers)]))
    ax.set_yticks(ypos, labels=[zh_label(k) for k in keys])
    ax.invert_yaxis()
    ax.legend(handles=[h for h in handles if h is not None], fontsize="small")


def fan_frequency_dots(freq: pl.DataFrame, per: str = "win", drop_zero: bool = True, ax=None) -> Figure:
    """Dot plot of :func:`analysis.fans.hand_type_frequencies` or ``flag_frequencies``: share of wins
    (``per="win"``) or of hands (``per="hand"``) per hand type / flag, one dot per variant with the tables' 95%
    interval, on a **log** axis so a hand type won once in ten thousand wins is as visible as pinghu (a dot's
    position, not a bar's length, carries the value: a bar on a log axis has no meaningful length)."""
    key = "hand_type" if "hand_type" in freq.columns else "flag"
    col = f"p_{per}"
    df = freq
    if drop_zero:
        keep = df.group_by(key).agg(pl.col(f"k_{per}s").sum()).filter(pl.col(f"k_{per}s") > 0)[key]
        df = df.filter(pl.col(key).is_in(keep.implode()))
    n = df[key].n_unique()
    fig, (ax,), _ = _axes(ax, 1, (7, 1.2 + 0.3 * max(n, 1) * max(len(_variants(df)), 1) ** 0.5))
    if df.height:
        _grouped_dots(ax, df, key, col, f"{col}_lo", f"{col}_hi")
        positive = df.filter(pl.col(col) > 0)[col]
        if positive.len():
            ax.set_xscale("log")
            ax.set_xlim(left=float(positive.min()) / 3, right=min(1.5, float(df[f"{col}_hi"].max() or 1) * 1.5))
        _fonts(ax)
    ax.set_xlabel(f"share of {per}s, log scale (95% Wilson interval, clustered)")
    ax.set_title(f"{key.replace('_', ' ')} frequency per {per}")
    return fig


def ev_errorbars(ev: pl.DataFrame, component: str = "score_total", ax=None) -> Figure:
    """Mean score per hand with 95% intervals from :func:`analysis.ev.expected_value`, one point per group and
    variant (base units)."""
    df = ev.filter(pl.col("component") == component)
    cols = [c for c in ("seat", "position", "bot") if c in df.columns]
    groups = list(dict.fromkeys(_label(r, cols) for r in df.iter_rows(named=True)))
    variants = _variants(df)
    fig, (ax,), _ = _axes(ax, 1, (7, 1.2 + 0.45 * max(len(groups), 1)))
    step = 0.6 / max(len(variants), 1)
    handles = []
    for i, v in enumerate(variants):
        sub = df.filter(pl.col("variant") == v)
        y = np.array([groups.index(_label(r, cols)) for r in sub.iter_rows(named=True)], dtype=float)
        y = y + (i - (len(variants) - 1) / 2) * step
        handles.append(interval_points(ax, sub["mean"].to_numpy(), y, sub["ci_lo"], sub["ci_hi"],
                                       COLORS[i % len(COLORS)], v))
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(range(len(groups)), labels=groups)
    ax.invert_yaxis()
    ax.set_xlabel(f"mean {component} per hand, base units (95% CI)")
    ax.legend(handles=[h for h in handles if h is not None], fontsize="small")
    return fig


def component_stack(ev: pl.DataFrame, ax=None) -> Figure:
    """Stacked bars of the score components' mean per hand (base units) per variant and group, from
    :func:`analysis.ev.expected_value` with components; black marks = ``score_total`` with its 95% CI."""
    cols = [c for c in ("seat", "bot") if c in ev.columns]
    total = ev.filter(pl.col("component") == "score_total")
    parts = ev.filter(pl.col("component") != "score_total")
    labels = [f"{r['variant']}: {_label(r, cols)}" for r in total.iter_rows(named=True)]
    comps = list(dict.fromkeys(parts["component"].to_list()))
    fig, (ax,), _ = _axes(ax, 1, (7, 1.5 + 0.4 * max(len(labels), 1)))
    y = np.arange(len(labels))
    pos, neg = np.zeros(len(labels)), np.zeros(len(labels))
    for i, c in enumerate(comps):
        sub = total.select("variant", *cols).join(parts.filter(pl.col("component") == c), on=["variant", *cols],
                                                  how="left", maintain_order="left")
        m = sub["mean"].fill_null(0).to_numpy()
        left = np.where(m >= 0, pos, neg)
        ax.barh(y, m, left=left, color=COLORS[i % len(COLORS)], label=c.removeprefix("score_"))
        pos, neg = pos + np.clip(m, 0, None), neg + np.clip(m, None, 0)
    interval_points(ax, total["mean"].to_numpy(), y, total["ci_lo"], total["ci_hi"], "black", "total", marker="D")
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, labels=labels)
    ax.invert_yaxis()
    ax.set_xlabel("mean score per hand by component, base units")
    ax.legend(fontsize="small", ncol=2)
    return fig


def score_distribution_plot(dist: pl.DataFrame, log: bool = True, ax=None) -> Figure:
    """Per-hand score distribution from :func:`analysis.risk.score_distribution`: one panel per group, one
    marker series per variant (share of player-hands at each observed score, base units)."""
    cols = [c for c in ("seat", "bot") if c in dist.columns]
    groups = list(dict.fromkeys(_label(r, cols) for r in dist.iter_rows(named=True)))
    variants = _variants(dist)
    fig, axes, made = _axes(ax, max(len(groups), 1), (7, 2.2 * max(len(groups), 1)))
    labels = dist.select(pl.struct(cols).map_elements(lambda r: _label(r, cols), return_dtype=pl.String)
                         .alias("_g"))["_g"] if dist.height else pl.Series([], dtype=pl.String)
    df = dist.with_columns(labels.alias("_g"))
    for ax, g in zip(axes, groups, strict=False):
        for i, v in enumerate(variants):
            sub = df.filter((pl.col("_g") == g) & (pl.col("variant") == v))
            ax.plot(sub["score_total"].to_numpy(), sub["p"].to_numpy(), "o", ms=3, alpha=0.7,
                    color=COLORS[i % len(COLORS)], label=v)
        ax.set_title(g, fontsize="small")
        if log:
            ax.set_yscale("log")
        ax.set_ylabel("share")
    axes[-1].set_xlabel("score per hand, base units")
    axes[0].legend(fontsize="small")
    if made:
        fig.tight_layout()
    return fig


def _delta_panel(ax, y: np.ndarray, names: list[str], xlabel: str) -> None:
    """A panel of paired differences: the zero line, one labelled row per difference (top down), the axis label."""
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, labels=names)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    _fonts(ax)


def comparison_deltas(cmp: pl.DataFrame, label: Sequence[str] | None = None, ax=None) -> Figure:
    """Paired differences (variant − baseline) with 95% CIs from :mod:`analysis.compare`, one row per line and
    **one panel per unit of measurement** (``measured_in``: base units, share of hands, turns…), so a
    difference in turns never shares an axis with one in base units. Rows whose interval comes from few
    differing units are drawn with squares; rows where no unit differs, hollow at 0 with no bar."""
    if label is None:
        label = [c for c in ("seat", "bot", "bot_baseline", "component", "metric") if c in cmp.columns]
    label = [c for c in label if c in cmp.columns]
    units = list(dict.fromkeys(cmp["measured_in"].to_list())) if "measured_in" in cmp.columns and cmp.height \
        else ["difference"]
    sizes = [max(cmp.filter(pl.col("measured_in") == u).height if "measured_in" in cmp.columns else cmp.height, 1)
             for u in units]
    fig, axes, made = _axes(ax, len(units), (7, 1.0 + 0.35 * sum(sizes) + 0.6 * len(units)), sizes)
    for ax, unit in zip(axes, units, strict=True):
        sub = cmp.filter(pl.col("measured_in") == unit) if "measured_in" in cmp.columns else cmp
        names = [plain(" / ".join(str(r[c]) for c in label if r.get(c) is not None))
                 + f"  [{r['variant']}−{r['baseline']}]" for r in sub.iter_rows(named=True)]
        y = np.arange(len(names), dtype=float)
        if sub.height:
            rare = (sub["interval"] == "few differing").to_numpy() if "interval" in sub.columns \
                else np.zeros(sub.height, dtype=bool)
            d = sub["diff"].to_numpy().astype(float)
            for mask, marker in ((~rare, "o"), (rare, "s")):
                if mask.any():
                    interval_points(ax, d[mask], y[mask], sub["ci_lo"].filter(pl.Series(mask)),
                            sub["ci_hi"].filter(pl.Series(mask)), COLORS[0], marker=marker)
        _delta_panel(ax, y, names, f"variant − baseline, {unit} (95% CI)")
    if made:
        fig.tight_layout()
    return fig


VERDICT_COLORS = ("#1a7f37", "#9a6700")  # forest's marked verdicts: green, amber


def forest(rows: pl.DataFrame, marked: Sequence[str] = (), ax=None) -> Figure:
    """The answer at a glance: each paired effect (``diff``, ``ci_lo``, ``ci_hi``; shares in percentage points)
    as a dot with its 95% interval over its own shaded ±``detect`` band (what would matter), one panel per unit
    of measurement; a row coloured when its ``verdict`` is ``marked[0]`` (green) or ``marked[1]`` (amber), e.g.
    significant (Holm) and ≥ detect, significant but smaller. Rows: :mod:`analysis.compare` tables of several
    comparisons (``variant``, ``baseline``, a ``bot`` / ``seat`` / ``metric`` label)."""
    if rows.height == 0:
        fig, axes, _ = _axes(ax, 1, (7, 1.2))
        axes[0].text(0.5, 0.5, "no paired effect to draw", ha="center", va="center", transform=axes[0].transAxes)
        axes[0].set_axis_off()
        return fig
    share = pl.col("measured_in").str.starts_with("share")
    rows = rows.with_columns(*[pl.when(share).then(pl.col(c) * 100).otherwise(pl.col(c)).alias(c)
                               for c in ("diff", "ci_lo", "ci_hi", "detect")],
                             pl.when(share).then(pl.lit("percentage points")).otherwise(pl.col("measured_in"))
                             .alias("measured_in"))
    units = list(dict.fromkeys(rows["measured_in"].to_list()))
    sizes = [rows.filter(pl.col("measured_in") == u).height for u in units]
    fig, axes, made = _axes(ax, len(units), (7.5, 0.9 + 0.32 * sum(sizes) + 0.7 * len(units)), sizes)
    label = [c for c in ("bot", "seat", "metric") if c in rows.columns]
    for ax, unit in zip(axes, units, strict=True):
        sub = rows.filter(pl.col("measured_in") == unit)
        names = [plain(next((str(r[c]) for c in label if r.get(c) is not None), "")) + f"  [{r['variant']}−"
                 f"{r['baseline']}]" for r in sub.iter_rows(named=True)]
        y = np.arange(sub.height, dtype=float)
        for yi, d in zip(y, sub["detect"].to_list(), strict=True):
            if d is not None and np.isfinite(d):
                ax.fill_betweenx([yi - 0.4, yi + 0.4], -d, d, color="#dddddd", lw=0)
        for i, r in enumerate(sub.iter_rows(named=True)):
            color = dict(zip(marked, VERDICT_COLORS, strict=False)).get(r["verdict"], COLORS[0])
            interval_points(ax, np.array([r["diff"]], float), y[i:i + 1], pl.Series([r["ci_lo"]], dtype=pl.Float64),
                            pl.Series([r["ci_hi"]], dtype=pl.Float64), color)
        _delta_panel(ax, y, names, f"variant − baseline, {unit} (95% CI; grey: ±detect)")
    if made:
        fig.tight_layout()
    return fig


def risk_quantiles(risk: pl.DataFrame, ax=None) -> Figure:
    """Quantiles of the score (per hand or per session) from :mod:`analysis.risk` as a box of q(0.05)–q(0.95),
    whiskers q(0.01)–q(0.99), median tick and CVaR mark, per variant and group (parts whose quantiles were
    not computed are left out)."""
    cols = [c for c in ("seat", "bot") if c in risk.columns]
    keys = risk.select("variant", *cols).unique(maintain_order=True)
    fig, (ax,), _ = _axes(ax, 1, (7, 1.2 + 0.45 * max(keys.height, 1)))
    for y, row in enumerate(keys.iter_rows(named=True)):
        sub = risk.join(pl.DataFrame([row]).cast({c: risk.schema[c] for c in row}), on=list(row))
        est = dict(zip(sub["statistic"], sub["estimate"], strict=True))
        cvar = next((v for k, v in est.items() if k.startswith("CVaR")), None)
        if "q(0.01)" in est and "q(0.99)" in est:
            ax.plot([est["q(0.01)"], est["q(0.99)"]], [y, y], color="grey", lw=1)
        if "q(0.05)" in est and "q(0.95)" in est:
            ax.barh(y, est["q(0.95)"] - est["q(0.05)"], left=est["q(0.05)"], height=0.5, color=COLORS[0], alpha=0.5)
        if "q(0.5)" in est:
            ax.plot([est["q(0.5)"]] * 2, [y - 0.25, y + 0.25], color="black")
        if cvar is not None:
            ax.plot(-cvar, y, "v", color=COLORS[1], label="−CVaR" if y == 0 else None)
    ax.set_yticks(range(keys.height), labels=[f"{r['variant']}: {_label(r, cols)}" for r in keys.iter_rows(named=True)])
    ax.invert_yaxis()
    ax.axvline(0, color="grey", lw=0.8)
    hands = risk["session_hands"][0] if "session_hands" in risk.columns and risk.height else 1
    ax.set_xlabel(f"score over {hands} hand{'s' if hands != 1 else ''}, base units: box q05–q95, whiskers q01–q99")
    if keys.height:
        ax.legend(fontsize="small")
    return fig


def dose_response(sweep: pl.DataFrame, rule: str, ax=None) -> Figure:
    """An ordered sweep of one rule (:func:`analysis.sweep.dose_table`): for each metric, one panel with the
    paired change against the baseline (95% interval) at each value of ``rule``, in the rule's order, the
    baseline at 0 (hollow, no interval). Columns: ``value`` (label), ``order``, ``metric``, ``measured_in``,
    ``diff``, ``ci_lo``, ``ci_hi``, ``baseline`` (bool); with a ``population`` column
    (:func:`analysis.sweep.dose_tables`), one series per population, side by side at each value, and a legend."""
    metrics = list(dict.fromkeys(sweep["metric"].to_list())) or ["(none)"]
    pops = list(dict.fromkeys(sweep["population"].to_list())) if "population" in sweep.columns else [None]
    fig, axes, made = _axes(ax, len(metrics), (7, 1.0 + 2.0 * len(metrics)))
    for ax_, m in zip(axes, metrics, strict=True):
        for i, pop in enumerate(pops):
            sub = sweep.filter(pl.col("metric") == m)
            sub = (sub if pop is None else sub.filter(pl.col("population") == pop)).sort("order")
            x = sub["order"].to_numpy().astype(float)
            shift = 0.0 if pop is None else 0.1 * (i - (len(pops) - 1) / 2)
            d = sub["diff"].fill_null(0).to_numpy().astype(float)
            ok = _has_interval(sub["ci_lo"], sub["ci_hi"])
            color = COLORS[i % len(COLORS)]
            if ok.any():
                err = _errors(d, sub["ci_lo"], sub["ci_hi"])
                ax_.errorbar(x[ok] + shift, d[ok], yerr=err[:, ok], fmt="o", capsize=3, color=color)
            ax_.plot(x[~ok] + shift, d[~ok], "o", mfc="none", color=color)
            ax_.plot(x + shift, d, "-", color=color, alpha=0.4, label=pop)
            if i == 0:
                ax_.set_xticks(x, labels=sub["value"].to_list())
                unit = sub["measured_in"][0] if sub.height else ""
        ax_.axhline(0, color="grey", lw=0.8)
        ax_.set_ylabel(f"change, {unit}", fontsize="small")
        ax_.set_title(plain(m), fontsize="small")
        if pops != [None]:
            ax_.legend(fontsize="x-small", title="population", title_fontsize="x-small")
    axes[-1].set_xlabel(f"{rule} (baseline hollow at 0; 95% CI)")
    if made:
        fig.tight_layout()
    return fig
