"""The run report: one self-contained HTML file (figures as base64 PNG) plus a Markdown summary next to it.

:func:`write_report` is what ``xuezhan report`` and ``xuezhan study`` call. Every table of ``analysis`` is
included, each estimate with its ``n`` and an SE or a 95% interval; the header states the variants' rule sets
(digest, differences from the baseline), seed, hand counts, ``scoring.base`` and economy. Both files are
written to temporaries and renamed into place only when everything has been computed, so a failure never leaves
a half-written report.
"""

from __future__ import annotations

import base64
import html
import math
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from analysis import compare, economy, ev, fans, plots, risk, shape
from analysis.load import Run, open_run
from analysis.stats import LEVEL

METHODS = f"""\
Units: every money amount is in base units (the table's 底; multiply by scoring.base for score units). Each
player-hand is one player's net result in one hand.
Intervals are two-sided {LEVEL:.0%}. Hands are the independent unit. Shares of hands (one observation per
hand): Wilson score intervals. Means: normal intervals mean ± 1.96·SE. When a group has several observations
per hand (a bot at several seats, the wins of one hand), mean = Σ values / Σ observations with a
cluster-robust SE over hands (= sd/√n for one observation per hand). Shares of wins (p_win, the fan
distribution, per-win game-shape shares) are such clustered means of 0/1: p ± 1.96·SE clipped to [0, 1], no
interval when the SE is 0. The declined − not difference has the hand-clustered SE of the group coefficient of
an OLS on the group indicator (the two groups share hands).
Quantiles q(p): the smallest observed score with empirical CDF ≥ p. P(loss>x): share of player-hands with score
< −x. CVaR95 loss: mean loss over the worst 5% of player-hands (expected shortfall, boundary observation
weighted fractionally). Risk intervals: percentile bootstrap over hands (seeded; all seats of a hand resampled
together). Sessions of K hands for one player of a group: each hand is a uniform draw of a logged hand, then of
one of the group's player-hands in it (every deal counts once, however many seats the group held); K draws
summed; intervals from an outer bootstrap over hands.
Paired comparisons use common random numbers: the same hand_id was dealt the same wall and bot streams in
every variant; differences are taken hand by hand (joined on hand_id and seat). vrf = unpaired variance /
paired variance; hands_paired / hands_unpaired = hands needed to detect a true difference of `detect` (column
detect, in the quantity's unit) with a two-sided 5% test at 80% power.
Economy (RULES.md §6): coins per player per hand = room_factor · base · score_total − rake, charged to every
player in every hand; the house keeps 4·rake per hand."""


@dataclass
class Section:
    """A report section: a title, an optional paragraph, then tables and figures in order."""

    title: str
    text: str = ""
    items: list[tuple[str, str, Any]] = field(default_factory=list)  # ("table"|"figure", caption, object)

    def table(self, caption: str, df: pl.DataFrame) -> None:
        self.items.append(("table", caption, df))

    def figure(self, caption: str, fig: Figure) -> None:
        self.items.append(("figure", caption, fig))


# ---------------------------------------------------------------------------------------------------------
# Formatting


def fmt(value: Any) -> str:
    """A cell: integers as is, floats to 4 significant digits (thousands separated), null/NaN as '—'."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "—"
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.4g}"
    return str(value)


P_FLOOR = 1e-4


def fmt_p(value: Any) -> str:
    """A p-value: below 1e-4 it is shown as a bound, never as a (misleading) 0 or a spurious 1e-300."""
    if isinstance(value, float) and not math.isnan(value) and value < P_FLOOR:
        return f"<{P_FLOOR:g}"
    return fmt(value)


def _formatters(df: pl.DataFrame) -> list:
    return [fmt_p if c.startswith("p_value") else fmt for c in df.columns]


def html_table(df: pl.DataFrame) -> str:
    """An HTML table of a frame (numbers right-aligned)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in df.columns)
    numeric = [dt.is_numeric() for dt in df.dtypes]
    formatters = _formatters(df)
    rows = []
    for row in df.iter_rows():
        cells = "".join(f'<td class="{"n" if num else "s"}">{html.escape(f(v))}</td>'
                        for v, num, f in zip(row, numeric, formatters, strict=True))
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def md_table(df: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a frame."""
    formatters = _formatters(df)
    numeric = [dt.is_numeric() for dt in df.dtypes]
    lines = ["| " + " | ".join(df.columns) + " |",
             "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(f(v).replace("|", "\\|") for v, f in zip(row, formatters, strict=True)) + " |"
              for row in df.iter_rows()]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# Header


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    if isinstance(data, list):
        out = {}
        for i, v in enumerate(data):
            out.update(_flatten(v, f"{prefix}{i}."))
        return out
    return {prefix[:-1]: data}


def rule_differences(run: Run, variant: str, baseline: str) -> str:
    """``key: baseline → variant`` for every resolved rule key that differs (name/description excluded)."""
    a, b = _flatten(run.rules(baseline)), _flatten(run.rules(variant))
    keys = sorted((set(a) | set(b)) - {"name", "description"})
    diffs = [f"{k}: {a.get(k, '—')} → {b.get(k, '—')}" for k in keys if a.get(k) != b.get(k)]
    return "; ".join(diffs) if diffs else ("(baseline)" if variant == baseline else "same rules")


def header_table(run: Run, baseline: str) -> pl.DataFrame:
    """One row per variant: rule digest, differences from the baseline, seed, hands, base and economy."""
    counts = dict(run.hand_counts().iter_rows())
    rows = []
    for v in run.variants:
        man = run.manifests[v]
        eco = run.economy(v)
        rows.append({
            "variant": v, "role": "baseline" if v == baseline else "variant", "digest": run.digest(v)[:12],
            "hands_logged": counts.get(v, 0), "hands_planned": man.get("hands"),
            "complete": man.get("complete"), "seed": man.get("seed"), "duplicate": man.get("duplicate"),
            "base": run.base(v), "room_factor": eco["room_factor"], "rake": eco["rake"],
            "seats": ", ".join(run.bots(v)),
            "rules vs baseline": rule_differences(run, v, baseline)})
    return pl.DataFrame(rows, infer_schema_length=None)


def glance_table(shape_df: pl.DataFrame, variants: tuple[str, ...]) -> pl.DataFrame:
    """Game-shape metrics as rows, variants as columns: ``estimate [ci_lo, ci_hi]`` and the row's ``n``."""
    cells = shape_df.with_columns(pl.format("{} [{}, {}]", *[pl.col(c).map_elements(fmt, return_dtype=pl.String)
                                                            for c in ("estimate", "ci_lo", "ci_hi")]).alias("cell"))
    out = cells.filter(pl.col("variant") == variants[0]).select("metric", "per")
    for v in variants:
        sub = cells.filter(pl.col("variant") == v).select("metric", pl.col("cell").alias(v),
                                                          pl.col("n").alias(f"n ({v})"))
        out = out.join(sub, on="metric", how="left", maintain_order="left")
    return out


# ---------------------------------------------------------------------------------------------------------
# Building and writing


def build_sections(run: Run, baseline: str, *, n_boot: int = 200, session_hands: int = 40,
                   seed: int = 0) -> list[Section]:
    """Compute every table and figure of the report."""
    sections = diagnostics_sections(run, baseline)  # problems with the comparison come first
    head = Section("Run", f"Run directory: {run.path}. Baseline: {baseline}.")
    head.table("Variants: rule set digest, differences from the baseline, seed and hand counts",
               header_table(run, baseline))
    incomplete = [v for v in run.variants if run.manifests[v].get("complete") is False]
    if incomplete:
        head.text += (f" Warning: {', '.join(incomplete)} did not finish (see hands_logged); paired comparisons "
                      "use the hands present in both variants.")
    sections.append(head)
    sections.append(Section("Methods and definitions", METHODS))

    shape_df = shape.game_shape(run)
    s = Section("Game shape", "Per hand, per win or per player-hand (column per); n = denominator.")
    s.table("At a glance: estimate [95% interval]", glance_table(shape_df, run.variants))
    s.table("Game shape, full table", shape_df)
    sections.append(s)

    s = Section("Fan frequencies", "p_win = share of wins (clustered by hand: p ± 1.96·SE, no interval when "
                "SE = 0), p_hand = share of hands with at least one such win (Wilson 95%).")
    ht, fl = fans.hand_type_frequencies(run), fans.flag_frequencies(run)
    s.figure("Hand types (share of wins)", plots.fan_frequency_bars(ht, "win"))
    s.figure("Pattern flags (share of wins)", plots.fan_frequency_bars(fl, "win"))
    s.table("Hand types", ht)
    s.table("Pattern flags", fl)
    s.table("Fan, capped fan and 根 per win, and wins per hand", fans.fan_summary(run))
    s.table("Distribution of fan (before the cap), capped fan and 根 over wins", fans.fan_distribution(run))
    sections.append(s)

    s = Section("Expected value", "Mean score per hand in base units, by seat and by bot, split by component.")
    ev_seat, ev_bot = ev.expected_value(run, "seat"), ev.expected_value(run, "bot")
    s.figure("Mean score per hand by seat", plots.ev_errorbars(ev_seat))
    s.figure("Mean score per hand by bot", plots.ev_errorbars(ev_bot))
    s.figure("Score components by bot", plots.component_stack(ev_bot))
    s.table("By bot, with components", ev_bot)
    s.table("By seat, with components", ev_seat)
    sections.append(s)

    s = Section("Risk", f"One player's score per hand and over a session of {session_hands} hands, by bot. "
                + risk_text(n_boot, seed))
    hand_risk = risk.risk_table(run, "bot", n_boot=n_boot, seed=seed)
    sess = risk.session_risk_table(run, "bot", hands=session_hands, n_boot=n_boot, seed=seed)
    dist = risk.score_distribution(run, "bot")
    s.figure("Per-hand score quantiles", plots.risk_quantiles(hand_risk))
    s.figure(f"Session ({session_hands} hands) total quantiles", plots.risk_quantiles(sess))
    s.figure("Per-hand score distribution", plots.score_distribution_plot(dist))
    s.table("Per-hand risk", hand_risk)
    s.table(f"Session of {session_hands} hands", sess)
    s.table("Per-hand score distribution", dist)
    sections.append(s)

    s = Section("Economy", "Platform coins (RULES.md §6): coins per player per hand = room_factor · base · "
                "score_total − rake, charged to every player in every hand (流局 included), so the house keeps "
                "4·rake per hand. room_factor and rake come from each variant's manifest (economy); with the "
                "default 1 and 0, coins equal the score. coin_loss = share of player-hands with a negative "
                "delta.")
    s.table("Coins per player per hand, by bot", economy.economy_table(run, "bot"))
    sections.append(s)

    s = Section("Declined wins", decline_text())
    s.table("Decliners vs non-decliners, by bot", shape.decline_effect(run, "bot"))
    sections.append(s)

    others = [v for v in run.variants if v != baseline]
    if others:
        s = Section("Paired comparisons", f"Each variant minus the baseline {baseline} on the same hands.")
        by_bot = pl.concat([compare.paired_comparison(run, v, baseline, "bot", ev.COMPONENTS) for v in others])
        by_seat = pl.concat([compare.paired_comparison(run, v, baseline, "seat") for v in others])
        metrics = pl.concat([compare.paired_hand_metrics(run, v, baseline) for v in others])
        s.figure("Mean score per hand, by bot and seat: paired differences",
                 plots.comparison_deltas(pl.concat([by_bot.filter(pl.col("component") == "score_total")
                                                    .drop("bot_baseline").rename({"bot": "group"}),
                                                    by_seat.with_columns(pl.format("seat {}", "seat").alias("group"))
                                                    .drop("seat")], how="diagonal_relaxed"),
                                         ["group", "component"]))
        s.figure("Hand-level metrics: paired differences", plots.comparison_deltas(metrics, ["metric"]))
        s.table("Score by bot and component (base units)", by_bot)
        s.table("Score by seat (base units)", by_seat)
        s.table("Hand-level metrics (shares as 0/1; detect in each metric's unit)", metrics)
        sections.append(s)
    return sections


def diagnostics_sections(run: Run, baseline: str) -> list[Section]:
    """``[Section]`` listing :func:`analysis.diagnostics.diagnose`'s findings, or ``[]`` when there are none."""
    from analysis.diagnostics import diagnose

    findings = diagnose(run, baseline)
    text = "\n".join(f"- {f.text()}" for f in findings)
    return [Section("Check first: variants whose changes did not act", text)] if findings else []


def risk_text(n_boot: int, seed: int) -> str:
    """What the risk tables' intervals are, for ``n_boot`` replicates (0: none)."""
    if n_boot == 0:
        return "No intervals (bootstrap off: 0 replicates); ci_lo and ci_hi are empty."
    return (f"Intervals: percentile bootstrap over hands with {n_boot} replicates, seed {seed} — per hand, "
            f"{n_boot} resamples of the hands; per session, {n_boot} outer resamples of the hands, each simulating "
            f"{risk.BOOT_SESSIONS:,} sessions.")


def decline_text() -> str:
    return ("Players whose bot declined at least one win they could have taken, against players who declined "
            "none: win rate, capped fan of the eventual win and score per hand (observational, see "
            "analysis.shape.decline_effect).")


def render_html(title: str, sections: list[Section], subtitle: str) -> str:
    css = ("body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;margin:.5em 0 "
           "1.5em;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}th{background:#f0f0f0}td.n{text-align:"
           "right;font-variant-numeric:tabular-nums}p.m{white-space:pre-wrap;font-size:13px}figure{margin:0 0 1em}"
           "figcaption,caption{font-weight:bold;font-size:13px}img{max-width:100%}")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{css}</style></head><body><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p>"]
    for sec in sections:
        parts.append(f"<h2>{html.escape(sec.title)}</h2>")
        if sec.text:
            parts.append(f"<p class='m'>{html.escape(sec.text)}</p>")
        for kind, caption, obj in sec.items:
            if kind == "table":
                parts.append(f"<h4>{html.escape(caption)}</h4>{html_table(obj)}")
            else:
                data = base64.b64encode(plots.to_png(obj)).decode()
                parts.append(f"<figure><figcaption>{html.escape(caption)}</figcaption>"
                             f"<img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def render_markdown(title: str, sections: list[Section], subtitle: str, html_name: str) -> str:
    out = [f"# {title}", "", subtitle, "", f"Figures: see `{html_name}`.", ""]
    for sec in sections:
        out += [f"## {sec.title}", ""]
        if sec.text:
            out += [sec.text, ""]
        for kind, caption, obj in sec.items:
            if kind == "table":
                out += [f"**{caption}**", "", md_table(obj), ""]
    return "\n".join(out)


def _atomic_write_text(path: Path, text: str) -> Path:
    """Write to a temporary file in the target directory; the caller renames it into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a report is an ordinary file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_report(run_dir: Path, baseline: str | None = None, out: Path | None = None, *, n_boot: int = 200,
                 session_hands: int = 40, seed: int = 0) -> Path:
    """Write ``out`` (default ``run_dir/report.html``) and the Markdown summary beside it (``report.md`` for
    the default name, else ``out`` with the suffix ``.md``); return the HTML path.

    ``baseline``: a variant name (default: ``study.json``'s baseline, else the first variant). A bad run
    directory or unknown variant raises :class:`analysis.load.RunDirError` before anything is written."""
    run = open_run(run_dir)
    base = run.check(baseline) if baseline is not None else run.baseline
    out = Path(out) if out is not None else run.path / "report.html"
    if out.suffix.lower() not in (".html", ".htm"):
        out = out.with_suffix(".html")
    if not out.parent.is_dir():
        from analysis.load import RunDirError

        raise RunDirError(f"--out {out}: directory {out.parent} does not exist")
    sections = build_sections(run, base, n_boot=n_boot, session_hands=session_hands, seed=seed)
    name = (run.study or {}).get("name") or run.path.name
    title = f"xuezhan report: {name}"
    from simulator import __version__

    subtitle = (f"{len(run.variants)} variant(s): {', '.join(run.variants)}; baseline {base}. "
                f"Generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} by xuezhan {__version__}.")
    md_path = out.with_suffix(".md")
    tmp_html = _atomic_write_text(out, render_html(title, sections, subtitle))
    try:
        tmp_md = _atomic_write_text(md_path, render_markdown(title, sections, subtitle, out.name))
    except BaseException:
        tmp_html.unlink(missing_ok=True)
        raise
    os.replace(tmp_md, md_path)
    os.replace(tmp_html, out)
    return out
