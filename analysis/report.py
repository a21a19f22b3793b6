"""The run report: one self-contained HTML file (figures as base64 PNG) plus a Markdown summary next to it.

:func:`write_report` is what ``xuezhan report`` and ``xuezhan study`` call. The answer comes first: a summary
of each variant's largest practically significant differences (:func:`summary_lines`), then a table of
contents, then every table of ``analysis``, each estimate with its ``n`` (counted in independent units, headed
"hands" or "walls") and an SE or a 95% interval; the run section states the variants' rule sets (digest,
differences from the baseline), seed, hand counts, ``scoring.base`` and economy. Section order is built in
:func:`build_sections`; a "flags" section (e.g. a variant whose rule never fired) goes first, before the
summary. Both files are
written to temporaries and renamed into place only when everything has been computed, so a failure never leaves
a half-written report.
"""

from __future__ import annotations

import base64
import html
import math
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from analysis import compare, economy, ev, fans, plots, risk, sessions, shape, skill
from analysis.load import Run, open_run
from analysis.stats import LEVEL, RARE_UNITS

METHODS = f"""\
Units: every money amount is in base units (the table's 底; multiply by scoring.base for score units). Each
player-hand is one player's net result in one hand.
Independent unit: the hand — or, under duplicate seating, the wall (deal_id): the four seatings of one wall share
every tile, so they are one observation, not four. Every mean, share, paired difference, bootstrap and session
simulation is clustered on that unit, and the n of a table ("hands" or "walls") counts units.
Intervals are two-sided {LEVEL:.0%}. Means: mean ± 1.96·SE with the cluster-robust SE over units (= sd/√n with one
observation per unit). Shares (of hands, wins or player-hands): Wilson score interval at the effective sample
size n_eff = n / design effect (capped at n; the number of units when no variation is seen), so bounds stay in
[0, 1] and are never zero-width. The declined − not difference has the unit-clustered SE of the group
coefficient of an OLS on the group indicator (the two groups share hands).
Quantiles q(p): the smallest observed score with empirical CDF ≥ p. P(loss>x): share of player-hands with score
< −x. CVaR95 loss: mean loss over the worst 5% of player-hands (expected shortfall, boundary observation
weighted fractionally). Risk intervals: percentile bootstrap over units (seeded; all seats of a unit resampled
together). Sessions of K hands for one player of a group: each hand is a uniform draw of a logged hand, then of
one of the group's player-hands in it; K draws summed; intervals from an outer bootstrap over units.
Paired comparisons use common random numbers: the same hand_id was dealt the same wall and bot streams in
every variant; differences are taken hand by hand (joined on hand_id and seat) and clustered by unit.
"differ" = units whose difference is not 0. With {RARE_UNITS} or more differing units: normal interval and test.
With fewer: a conservative gamma (weighted Poisson, Fay–Feuer) interval on the differing units' positive and
negative totals, each at 97.5%, the unseen sign sized by the largest observed difference (marked "few
differing"), and the p-value that inverts it. With none: no interval and no test. p Holm: Holm-adjusted
p-values within a family (all paired rows of one variant; all rows of one variant in the mean-by-seat table);
each caption gives the number of tests. Verdict: significant (Holm p < 0.05) and |diff| ≥ detect;
significant but smaller; not significant with the interval inside ±detect (an effect of that size is ruled
out); inconclusive. hands needed (paired / unpaired per arm): hands to simulate so a two-sided test at
α = 0.05 has 80% power against a true difference of detect, with the SD under that alternative — at least the
observed one, at least what detect implies for an integer-valued difference, and at least detect²/π − detect²
when only a share π of units differ. vrf = unpaired variance / paired variance.
Economy: coins per player per hand = room_factor · base · score_total − rake, charged to every player in every
hand; the house keeps 4·rake per hand."""


@dataclass
class Section:
    """A report section: a title, an optional paragraph, then tables and figures in order."""

    title: str
    text: str = ""
    items: list[tuple[str, str, Any]] = field(default_factory=list)  # ("table"|"figure", caption, object)
    pngs: dict[int, bytes] = field(default_factory=dict)  # item index -> the figure rendered (PNG), if done

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


def _value(key: str, value: Any) -> str:
    """A rule value for people: no Python reprs (``None`` → ``uncapped`` for a cap, else ``none``)."""
    if value is None:
        return "uncapped" if key.rsplit(".", 1)[-1] == "cap" else "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def rule_differences(run: Run, variant: str, baseline: str) -> str:
    """``key: baseline → variant`` for every resolved rule key that differs (name/description excluded);
    values as people write them (``cap: 4 → uncapped``, ``on``/``off``), ``—`` for a key one side lacks."""
    a, b = _flatten(run.rules(baseline)), _flatten(run.rules(variant))
    keys = sorted((set(a) | set(b)) - {"name", "description"})
    diffs = [f"{k}: {_value(k, a[k]) if k in a else '—'} → {_value(k, b[k]) if k in b else '—'}"
             for k in keys if a.get(k) != b.get(k) or (k in a) != (k in b)]
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
            "complete": man.get("complete"), "seed": man.get("seed"), "duplicate": run.duplicate,
            "base": run.base(v), "room_factor": eco["room_factor"], "rake": eco["rake"],
            "seats": ", ".join(run.seat_labels(v)),
            "rules vs baseline": rule_differences(run, v, baseline)})
    return pl.DataFrame(rows, infer_schema_length=None)


def glance_table(shape_df: pl.DataFrame, variants: tuple[str, ...], unit: str = "hand") -> pl.DataFrame:
    """Game-shape metrics as rows, variants as columns: ``estimate [ci_lo, ci_hi]`` and the row's count of
    independent units, headed ``hands (variant)`` or ``walls (variant)`` (``unit`` = ``Run.unit``)."""
    cells = shape_df.with_columns(pl.format("{} [{}, {}]", *[pl.col(c).map_elements(fmt, return_dtype=pl.String)
                                                            for c in ("estimate", "ci_lo", "ci_hi")]).alias("cell"))
    out = cells.filter(pl.col("variant") == variants[0]).select("metric", "per")
    for v in variants:
        sub = cells.filter(pl.col("variant") == v).select("metric", pl.col("cell").alias(v),
                                                          pl.col("n_units").alias(f"{unit}s ({v})"))
        out = out.join(sub, on="metric", how="left", maintain_order="left")
    return out


# ---------------------------------------------------------------------------------------------------------
# Presentation: unit names, Chinese names, tables that say nothing


def zh_names() -> dict[str, str]:
    """Chinese names of hand types and pattern flags, by pinyin key."""
    from simulator.vocab import FLAG_ZH, HAND_TYPE_ZH

    return {**FLAG_ZH, **HAND_TYPE_ZH}


def present(df: pl.DataFrame, run: Run) -> pl.DataFrame:
    """A table as the report shows it: the unit count headed ``hands`` or ``walls`` (``n_hands`` dropped when
    every hand is its own unit), pinyin hand types / flags followed by their Chinese names, positions as
    ``dealer``, ``dealer+1``…, and the constant ``unit``/``baseline`` columns of paired tables dropped."""
    out = df.drop([c for c in ("unit", "baseline") if c in df.columns])
    if "n_units" in out.columns:
        if not run.duplicate and "n_hands" in out.columns:
            out = out.drop("n_hands")
        out = out.rename({"n_units": f"{run.unit}s", **({"n_hands": "hands"} if "n_hands" in out.columns else {})})
    for col in ("hand_type", "flag"):
        if col in out.columns:
            names = {k: f"{k} {v}" for k, v in zh_names().items()}
            out = out.with_columns(pl.col(col).replace(names))
    if "position" in out.columns:
        out = out.with_columns(pl.col("position").map_elements(lambda p: ev.POSITION_NAMES[p],
                                                               return_dtype=pl.String))
    return out


def zero_by_construction(df: pl.DataFrame, est: str, se: str) -> bool:
    """Every estimate exactly 0 with SE 0 (or none): e.g. a bot that holds all four seats wins and loses the
    same money (scores are zero-sum), so its mean is 0 by construction, not by measurement."""
    return df.height > 0 and bool(df.select(((pl.col(est) == 0) & (pl.col(se).fill_null(0) == 0)).all()).item())


def one_bot_sentence(run: Run, what: str) -> str:
    bots = sorted({b for v in run.variants for b in run.bots(v)})
    who = f"the {bots[0]} bot" if len(bots) == 1 else "one bot"
    return (f"{what} by bot: not shown — every seat is played by {who} in each variant, so its mean score is 0 "
            "by construction (every payment goes from one seat to another). See the tables by seat and by "
            "dealer position.")


# ---------------------------------------------------------------------------------------------------------
# Summary: the answer first

METRIC_WORDS = {"score_total": "score per hand", "score_win": "win payments per hand",
                "score_kong": "kong payments per hand", "score_transfer": "kong-rain transfers per hand",
                "score_huazhu": "花猪 penalties per hand", "score_chadajiao": "查大叫 payments per hand",
                "score_refund": "kong refunds per hand"}


def _row_words(r: dict, unit: str) -> str:
    """One paired row in plain words: what, how much (with interval and its unit), on how many units."""
    if r.get("metric") is not None:
        what = r["metric"]
    else:
        who = f"seat {r['seat']}" if r.get("seat") is not None else r.get("bot", "")
        if r.get("bot") is not None and r.get("bot_baseline") not in (None, r["bot"]):
            who = f"{r['bot']} (was {r['bot_baseline']})"
        what = f"{who}: {METRIC_WORDS.get(r['component'], r['component'])}"
    share = r["measured_in"].startswith("share")
    k, suffix = (100.0, " percentage points") if share else (1.0, f" {r['measured_in']}")
    sign = "+" if r["diff"] > 0 else ""
    interval = f"[{fmt(r['ci_lo'] * k)}, {fmt(r['ci_hi'] * k)}]"
    return (f"{what}: {sign}{fmt(r['diff'] * k)}{suffix} {interval} (baseline {fmt(r['mean_baseline'] * k)}; "
            f"{fmt(r['n_units'])} {unit}s, {fmt(r['n_differ'])} differ; Holm p {fmt_p(r['p_holm'])})")


def summary_lines(family: pl.DataFrame, unit: str, top: int = 5) -> list[str]:
    """Up to ``top`` rows of one variant's paired family that are significant (Holm) and at least ``detect``,
    largest ``|diff| / detect`` first, in plain words; else a sentence saying none is, with the largest
    estimate for scale."""
    ranked = family.with_columns((pl.col("diff").abs() / pl.col("detect")).alias("_size")).sort(
        "_size", descending=True, nulls_last=True, maintain_order=True)
    # the same numbers reached twice (a bot that holds one seat, a component that is the whole difference)
    # are said once: hand metrics first, then scores by seat, by bot, components
    key = pl.concat_str([pl.col(c).round_sig_figs(6).cast(pl.String) for c in ("diff", "ci_lo", "ci_hi")],
                        separator="|", ignore_nulls=True)
    ranked = ranked.with_columns(key.alias("_d")).unique(subset=["_d"], keep="first", maintain_order=True)
    big = ranked.filter(pl.col("verdict") == compare.VERDICTS[0])
    n_tests = int(family["p_value"].is_not_null().sum())
    if big.height:
        return [_row_words(r, unit) for r in big.head(top).iter_rows(named=True)]
    if not (family["n_differ"] > 0).any():
        return [f"Nothing differs: on every paired {unit}, every score and hand metric equals the baseline's "
                "(the changed rule never changed an outcome here)."]
    small = int((family["verdict"] == compare.VERDICTS[1]).sum())
    lines = [f"No difference is both significant (Holm, {n_tests} tests) and at least its practical threshold "
             f"(detect)" + (f"; {small} significant but smaller." if small else ".")]
    moved = ranked.filter(pl.col("n_differ") > 0)
    if moved.height:
        lines.append("Largest estimate, for scale: " + _row_words(moved.row(0, named=True), unit)
                     + f" — {moved['verdict'][0]}.")
    return lines


def _position_line(pos: pl.DataFrame, baseline: str) -> str:
    sub = pos.filter((pl.col("variant") == baseline) & (pl.col("component") == "score_total")).sort("position")
    parts = [f"{ev.POSITION_NAMES[r['position']]} {'+' if r['mean'] > 0 else ''}{fmt(r['mean'])} "
             f"[{fmt(r['ci_lo'])}, {fmt(r['ci_hi'])}]" for r in sub.iter_rows(named=True)]
    return f"Mean score per hand by position in {baseline} (base units): " + "; ".join(parts) + "."


# ---------------------------------------------------------------------------------------------------------
# Building and writing


def comparisons(run: Run, baseline: str) -> list[tuple[str, str]]:
    """The report's paired comparisons ``(A, B)``, each shown as B − A: every variant against the baseline,
    then the study's ``contrasts`` (pairs of two other variants, e.g. cap 1 against uncapped)."""
    pairs = [(baseline, v) for v in run.variants if v != baseline]
    return pairs + [c for c in run.contrasts if c not in pairs and baseline not in c]


def paired_family(run: Run, variant: str, baseline: str) -> dict[str, pl.DataFrame]:
    """Every paired table of one variant against the baseline (by bot and component, by seat, hand
    metrics), with ``p_holm`` and ``verdict`` recomputed over all of them together: one family of tests."""
    parts = {"by_bot": compare.paired_comparison(run, variant, baseline, "bot", ev.COMPONENTS),
             "by_seat": compare.paired_comparison(run, variant, baseline, "seat"),
             "metrics": compare.paired_hand_metrics(run, variant, baseline)}
    tagged = pl.concat([df.select(*compare.COLUMNS).with_columns(pl.lit(k).alias("_t"),
                                                                   pl.int_range(pl.len()).alias("_i"))
                        for k, df in parts.items()])
    adjusted = compare.add_adjusted(tagged)
    out = {}
    for k, df in parts.items():
        sub = adjusted.filter(pl.col("_t") == k).sort("_i")
        out[k] = df.with_columns(sub["p_holm"].alias("p_holm"), sub["verdict"].alias("verdict"))
    return out


TABLE_THREADS = 2
"""Threads that compute the report's tables. Polars queries and the numpy bootstraps run without the GIL, so
they proceed while the calling thread draws the figures of the tables already done."""


def _submit_tables(pool: ThreadPoolExecutor, run: Run, baseline: str, n_boot: int, session_hands: int,
                   seed: int, findings: list | None) -> dict[str, Future]:
    """Start every table of the report; the ones with figures first, in the order their figures are drawn.
    Each table is a pure function of the logs (bootstraps seeded), so the order of completion changes nothing."""
    jobs: dict[str, tuple] = {
        "ht": (fans.hand_type_frequencies, run), "fl": (fans.flag_frequencies, run),
        "ev_seat": (ev.expected_value, run, "seat"), "ev_pos": (ev.expected_value, run, "position"),
        "ev_bot": (ev.expected_value, run, "bot"),
        "hand_risk": (partial(risk.risk_table, run, "bot", n_boot=n_boot, seed=seed),),
        "sess": (partial(risk.session_risk_table, run, "bot", hands=session_hands, n_boot=n_boot, seed=seed),),
        "dist": (risk.score_distribution, run, "bot"),
        **{f"family {base} {v}": (paired_family, run, v, base) for base, v in comparisons(run, baseline)},
        "diagnostics": (diagnostics_sections, run, baseline, findings),
        "header": (header_table, run, baseline), "shape": (shape.game_shape, run),
        "fan_summary": (fans.fan_summary, run), "fan_dist": (fans.fan_distribution, run),
        "economy": (economy.economy_table, run, "bot"),
        **({"sessions": (sessions_section, run, baseline)} if run.has_sessions else {}),
        "skill": (skill.skill_section, run, n_boot, seed),
        "decline": (shape.decline_effect, run, "bot")}
    return {name: pool.submit(*job) for name, job in jobs.items()}


def build_sections(run: Run, baseline: str, *, n_boot: int = 200, session_hands: int = 40, seed: int = 0,
                   findings: list | None = None, render: bool = False) -> list[Section]:
    """Compute every table and figure of the report: the summary first, then the details.

    ``findings``: :func:`analysis.diagnostics.diagnose`'s result when the caller already has it (computed here
    otherwise). ``render``: also render every figure to PNG (``Section.pngs``) as soon as it is drawn, while the
    remaining tables are computed (:data:`TABLE_THREADS`)."""
    pool = ThreadPoolExecutor(max_workers=TABLE_THREADS, thread_name_prefix="report")
    try:
        tables = _submit_tables(pool, run, baseline, n_boot, session_hands, seed, findings)
        return _assemble(run, baseline, {k: f.result for k, f in tables.items()}, n_boot, session_hands, seed,
                         render)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _assemble(run: Run, baseline: str, get: dict[str, Any], n_boot: int, session_hands: int, seed: int,
              render: bool) -> list[Section]:
    """The sections from the tables (``get[name]()`` waits for one), figures drawn in this thread."""
    unit = run.unit

    def figure(sec: Section, caption: str, fig: Figure) -> None:
        sec.figure(caption, fig)
        if render:
            sec.pngs[len(sec.items) - 1] = plots.to_png(fig)

    fan = Section("Fan frequencies", f"p_win = share of wins, p_hand = share of hands with at least one such win; "
                  f"both clustered by {unit} with Wilson 95% intervals at the effective sample size. Bars on a "
                  "log scale so rare hands stay visible.")
    ht, fl = get["ht"](), get["fl"]()
    figure(fan, "Hand types (share of wins, log scale)", plots.fan_frequency_bars(ht, "win"))
    figure(fan, "Pattern flags (share of wins, log scale)", plots.fan_frequency_bars(fl, "win"))
    fan.table("Hand types", ht)
    fan.table("Pattern flags", fl)

    evs = Section("Expected value", f"Mean score per hand in base units, by seat, by position after the dealer and "
                  f"by bot, split by component; clustered by {unit}. p_value tests mean = 0; p_holm is Holm over "
                  "the rows of one variant in that table.")
    ev_seat, ev_pos, ev_bot = get["ev_seat"](), get["ev_pos"](), get["ev_bot"]()
    figure(evs, "Mean score per hand by seat", plots.ev_errorbars(ev_seat))
    figure(evs, "Mean score per hand by dealer position", plots.ev_errorbars(ev_pos))
    evs.table(f"By seat, with components (Holm over {_tests(ev_seat)} seat × component tests per variant)", ev_seat)
    evs.table(f"By dealer position, with components (Holm over {_tests(ev_pos)} tests per variant)", ev_pos)
    if zero_by_construction(ev_bot, "mean", "se"):
        evs.text += " " + one_bot_sentence(run, "Mean score")
    else:
        figure(evs, "Mean score per hand by bot", plots.ev_errorbars(ev_bot))
        figure(evs, "Score components by bot", plots.component_stack(ev_bot))
        evs.table(f"By bot, with components (Holm over {_tests(ev_bot)} tests per variant)", ev_bot)

    rsk = Section("Risk", f"One player's score per hand and over a session of {session_hands} hands, by bot. "
                  + risk_text(n_boot, seed, unit))
    hand_risk, sess, dist = get["hand_risk"](), get["sess"](), get["dist"]()
    figure(rsk, "Per-hand score quantiles", plots.risk_quantiles(hand_risk))
    figure(rsk, f"Session ({session_hands} hands) total quantiles", plots.risk_quantiles(sess))
    figure(rsk, "Per-hand score distribution", plots.score_distribution_plot(dist))
    rsk.table("Per-hand risk", hand_risk)
    rsk.table(f"Session of {session_hands} hands", sess)
    rsk.table("Per-hand score distribution", dist)

    families = {(a, b): get[f"family {a} {b}"]() for a, b in comparisons(run, baseline)}
    paired = [_paired_section(run, v, base, fam, figure) for (base, v), fam in families.items()]

    sections = get["diagnostics"]()  # problems with the comparison come first
    sections.append(_summary_section(run, baseline, families, ev_pos))
    head = Section("Run", f"Run directory: {run.path}. Baseline: {baseline}.")
    head.table("Variants: rule set digest, differences from the baseline, seed and hand counts", get["header"]())
    incomplete = [v for v in run.variants if run.manifests[v].get("complete") is False]
    if incomplete:
        head.text += (f" Warning: {', '.join(incomplete)} did not finish (see hands_logged); paired comparisons "
                      "use the hands present in both variants.")
    sections += [head, Section("Methods and definitions", METHODS)]

    shape_df = get["shape"]()
    s = Section("Game shape", f"Per hand, per win or per player-hand (column per); n = that denominator, "
                f"{unit}s = independent units.")
    s.table("At a glance: estimate [95% interval]", glance_table(shape_df, run.variants, unit))
    s.table("Game shape, full table", shape_df)
    fan.table("Fan, capped fan and 根 per win, and wins per hand", get["fan_summary"]())
    fan.table("Distribution of fan (before the cap), capped fan and 根 over wins", get["fan_dist"]())
    sections += [s, fan, evs, rsk]

    s = Section("Economy", "Platform coins: coins per player per hand = room_factor · base · score_total − rake, "
                "charged to every player in every hand (流局 included), so the house keeps 4·rake per hand. "
                "room_factor and rake come from each variant's economy settings; with the default 1 and 0, coins "
                "equal the score. coin_loss = share of player-hands with a negative delta.")
    s.table("Coins per player per hand, by bot", get["economy"]())
    sections.append(s)
    if "sessions" in get:
        sections.append(get["sessions"]())
    if (sk := get["skill"]()) is not None:  # analysis.skill: duplicate runs with a test and a field bot
        sections.append(sk)
    s = Section("Declined wins", decline_text())
    s.table("Decliners vs non-decliners, by bot", get["decline"]())
    return [*sections, s, *paired]


def _summary_section(run: Run, baseline: str, families: dict[tuple[str, str], dict[str, pl.DataFrame]],
                     ev_pos: pl.DataFrame) -> Section:
    """The answer first: each comparison's largest practically significant differences in plain words."""
    unit = run.unit
    lines = []
    for (base, v), fam in families.items():
        allrows = pl.concat([df.select(*compare.COLUMNS[:2], *compare.COLUMNS[3:], *(
            [c for c in ("seat", "bot", "bot_baseline", "component", "metric") if c in df.columns]))
            for df in (fam["metrics"], fam["by_seat"], fam["by_bot"])], how="diagonal_relaxed")
        lines.append(f"{v} − {base} ({rule_differences(run, v, base)}):")
        lines += [f"  • {x}" for x in summary_lines(allrows, unit)]
    if not families:
        lines.append(f"One variant ({baseline}): nothing to compare; the tables below describe it.")
    lines.append(_position_line(ev_pos, baseline))
    lines.append(f"Independent unit: the {unit}" + (" (duplicate seating: the four seatings of a wall count once)"
                                                     if run.duplicate else "") + ". Intervals are 95%.")
    return Section("Summary", "\n".join(lines))


SESSIONS_TEXT = ("Hands chained into sessions (rule set session:): the dealer of each hand follows from the "
                 "previous one, and each player carries a balance. One session is one independent unit (under "
                 "duplicate seating, the four seatings of one session's walls are one unit). net = change of a "
                 "player's balance over the session in the session's money (base units, or coins: room_factor · "
                 "base · score − rake per hand); points = the session's score in base units; dealt = hands the "
                 "player dealt. P(ruin) = share of player-sessions whose balance reached 0 (any = sessions where "
                 "someone did), Wilson 95%. Paired rows compare the same sessions (same walls) under two rule sets.")


def sessions_section(run: Run, baseline: str) -> Section:
    """The "Sessions" section: only for runs whose rule sets have a session block."""
    s = Section("Sessions", SESSIONS_TEXT)
    by = "bot" if any(len(set(run.bots(v))) > 1 for v in run.variants) else "seat"
    s.table(f"Per-session results by {by}", _per_session(sessions.session_results(run, by)))
    s.table(f"Distribution of a player's session result (net) by {by}", sessions.session_distribution(run, by))
    ruin = sessions.ruin_table(run, "seat")
    if ruin.height:
        s.table("P(ruin) for the session's bankroll, by seat", _per_session(ruin))
    s.table("House take per session", _per_session(sessions.house_take(run)))
    paired = [v for v in sessions.session_variants(run) if v != baseline and run.session(baseline) is not None
              and run.session(v)["hands"] == run.session(baseline)["hands"]]
    for v in paired:
        s.table(f"{v} − {baseline}: session points and hands dealt per seat (paired by session)",
                _per_session(sessions.dealer_rule_effect(run, v, baseline, "seat")))
    return s


def _per_session(df: pl.DataFrame) -> pl.DataFrame:
    """Session tables count sessions, not hands: ``n_units`` shown as ``sessions`` (see :func:`present`)."""
    return df.rename({"n_units": "sessions"}) if "n_units" in df.columns else df


def diagnostics_sections(run: Run, baseline: str, findings: list | None = None) -> list[Section]:
    """``[Section]`` listing :func:`analysis.diagnostics.diagnose`'s findings (``findings``: already computed),
    or ``[]`` when there are none."""
    if findings is None:
        from analysis.diagnostics import diagnose

        findings = diagnose(run, baseline)
    text = "\n".join(f"- {f.text()}" for f in findings)
    return [Section("Check first: variants whose changes did not act", text)] if findings else []


def _tests(df: pl.DataFrame) -> int:
    """Tests per variant in a table with p-values (the largest family)."""
    if "p_value" not in df.columns or df.height == 0:
        return 0
    return int(df.group_by("variant").agg(pl.col("p_value").is_not_null().sum())["p_value"].max())


def _paired_section(run: Run, variant: str, baseline: str, fam: dict[str, pl.DataFrame],
                    figure: Callable[[Section, str, Figure], None] = Section.figure) -> Section:
    n_tests = sum(int(df["p_value"].is_not_null().sum()) for df in fam.values())
    unit = run.unit
    s = Section(f"Paired: {variant} − {baseline}",
                f"{variant} minus {baseline} on the same {unit}s ({rule_differences(run, variant, baseline)}). "
                f"{unit}s = paired units, differ = units whose difference is not 0; interval 'few differing' = "
                f"fewer than {RARE_UNITS} differing units (conservative gamma interval), 'none' = no unit differs "
                f"(no interval, no test). p_holm: Holm over the {n_tests} tests of this section. hands_paired / "
                "hands_unpaired: hands to simulate to detect `detect` (α = 0.05, 80% power, SD under the "
                "alternative).")
    by_bot, by_seat, metrics = fam["by_bot"], fam["by_seat"], fam["metrics"]
    bot_zero = zero_by_construction(by_bot, "diff", "se_paired")
    score_rows = [by_seat.with_columns(pl.format("seat {}", "seat").alias("group")).drop("seat")]
    if not bot_zero:
        score_rows.append(by_bot.filter(pl.col("component") == "score_total").drop("bot_baseline")
                          .rename({"bot": "group"}))
    figure(s, "Paired differences, one panel per unit of measurement",
           plots.comparison_deltas(pl.concat([*score_rows, metrics], how="diagonal_relaxed"),
                                   ["group", "component", "metric"]))
    s.table("Score by seat (base units)", by_seat)
    if bot_zero:
        s.text += " " + one_bot_sentence(run, "Score differences")
    else:
        s.table("Score by bot and component (base units)", by_bot)
    s.table("Hand-level metrics (shares as 0/1; detect in each metric's unit)", metrics)
    return s


def risk_text(n_boot: int, seed: int, unit: str = "hand") -> str:
    """What the risk tables' intervals are, for ``n_boot`` replicates (0: none)."""
    if n_boot == 0:
        return "No intervals (bootstrap off: 0 replicates); ci_lo and ci_hi are empty."
    return (f"Intervals: percentile bootstrap over {unit}s with {n_boot} replicates, seed {seed} — per hand, "
            f"{n_boot} resamples of the {unit}s; per session, {n_boot} outer resamples of the {unit}s, each "
            f"simulating {risk.BOOT_SESSIONS:,} sessions.")


def decline_text() -> str:
    return ("Players whose bot declined at least one win they could have taken, against players who declined "
            "none: win rate, capped fan of the eventual win and score per hand. Observational: a player who "
            "declined held a winnable hand, so this is not the effect of declining.")


def slug(title: str) -> str:
    """GitHub-style anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    keep = "".join(ch for ch in title.lower() if ch.isalnum() or ch in " -_")
    return keep.strip().replace(" ", "-")


def _contents_at(sections: list[Section]) -> int:
    """Index before which the table of contents goes: right after the summary (the answer comes first, and
    any flags before it), else after the first section."""
    titles = [sec.title for sec in sections]
    return titles.index("Summary") + 1 if "Summary" in titles else min(1, len(sections))


def render_html(title: str, sections: list[Section], subtitle: str, run: Run | None = None) -> str:
    css = ("body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;margin:.5em 0 "
           "1.5em;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}th{background:#f0f0f0}td.n{text-align:"
           "right;font-variant-numeric:tabular-nums}p.m{white-space:pre-wrap;font-size:13px}figure{margin:0 0 1em}"
           "figcaption,caption{font-weight:bold;font-size:13px}img{max-width:100%}")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{css}</style></head><body><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p>"]
    at = _contents_at(sections)
    for i, sec in enumerate(sections):
        if i == at:
            parts.append("<h2>Contents</h2><ol>" + "".join(
                f"<li><a href='#{slug(x.title)}'>{html.escape(x.title)}</a></li>" for x in sections) + "</ol>")
        parts.append(f"<h2 id='{slug(sec.title)}'>{html.escape(sec.title)}</h2>")
        if sec.text:
            parts.append(f"<p class='m'>{html.escape(sec.text)}</p>")
        for j, (kind, caption, obj) in enumerate(sec.items):
            if kind == "table":
                table = present(obj, run) if run is not None else obj
                parts.append(f"<h4>{html.escape(caption)}</h4>{html_table(table)}")
            else:
                data = base64.b64encode(sec.pngs.get(j) or plots.to_png(obj)).decode()
                parts.append(f"<figure><figcaption>{html.escape(caption)}</figcaption>"
                             f"<img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def render_markdown(title: str, sections: list[Section], subtitle: str, html_name: str,
                    run: Run | None = None) -> str:
    out = [f"# {title}", "", subtitle, "", f"Figures: see `{html_name}`.", ""]
    at = _contents_at(sections)
    for i, sec in enumerate(sections):
        if i == at:
            out += ["## Contents", "", *[f"{j + 1}. [{x.title}](#{slug(x.title)})" for j, x in enumerate(sections)],
                    ""]
        out += [f"## {sec.title}", ""]
        if sec.text:
            out += [sec.text.replace("\n", "  \n"), ""]
        for kind, caption, obj in sec.items:
            if kind == "table":
                table = present(obj, run) if run is not None else obj
                out += [f"**{caption}**", "", md_table(table), ""]
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


def write_report(run_dir: Path | Run, baseline: str | None = None, out: Path | None = None, *, n_boot: int = 200,
                 session_hands: int = 40, seed: int = 0, findings: list | None = None) -> Path:
    """Write ``out`` (default ``run_dir/report.html``) and the Markdown summary beside it (``report.md`` for
    the default name, else ``out`` with the suffix ``.md``); return the HTML path.

    ``baseline``: a variant name (default: ``study.json``'s baseline, else the first variant). ``findings``:
    :func:`analysis.diagnostics.diagnose` of this run and baseline when the caller has it already (``xuezhan
    study``). A bad run directory or unknown variant raises :class:`analysis.load.RunDirError` before anything
    is written."""
    run = run_dir if isinstance(run_dir, Run) else open_run(run_dir)
    base = run.check(baseline) if baseline is not None else run.baseline
    out = Path(out) if out is not None else run.path / "report.html"
    if out.suffix.lower() not in (".html", ".htm"):
        out = out.with_suffix(".html")
    if not out.parent.is_dir():
        from analysis.load import RunDirError

        raise RunDirError(f"--out {out}: directory {out.parent} does not exist")
    sections = build_sections(run, base, n_boot=n_boot, session_hands=session_hands, seed=seed, findings=findings,
                              render=True)
    name = (run.study or {}).get("name") or run.path.name
    title = f"xuezhan report: {name}"
    from simulator import __version__

    subtitle = (f"{len(run.variants)} variant(s): {', '.join(run.variants)}; baseline {base}. "
                f"Generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} by xuezhan {__version__}.")
    md_path = out.with_suffix(".md")
    tmp_html = _atomic_write_text(out, render_html(title, sections, subtitle, run))
    try:
        tmp_md = _atomic_write_text(md_path, render_markdown(title, sections, subtitle, out.name, run))
    except BaseException:
        tmp_html.unlink(missing_ok=True)
        raise
    os.replace(tmp_md, md_path)
    os.replace(tmp_html, out)
    return out
