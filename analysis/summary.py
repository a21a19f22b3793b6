"""The report's first screen: who wins, how play changes, and the largest differences, in a few lines.

:func:`summary_items` fills the Summary section: a "who wins" table (each variant's change of the
mean score per hand by bot — by seat when one bot holds every seat — with its 95% interval, verdict and the
hands needed when the answer is not yet known), a "how play changes" table (paired hands whose play differs,
:mod:`analysis.play`, and the changes of the hand metrics that describe play), then per comparison its largest
practically significant differences in plain words (:func:`summary_lines`). Numbers are rounded to their
standard error (:func:`analysis.fmt.round_to_se`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from analysis import cells, compare, ev
from analysis.family import COMPONENT_LABELS
from analysis.fmt import UNADJUSTED, fmt, fmt_interval, fmt_p, fmt_se, round_to_se
from analysis.load import Run
from analysis.play import play_sentence
from analysis.populations import Screen, dealer_edge, screen, symmetric_populations
from analysis.report_render import Section
from analysis.screen import MARKS, change, dealer_table, population_items
from simulator.rules import flat_keys


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
    a, b = flat_keys(run.rules(baseline)), flat_keys(run.rules(variant))
    keys = sorted((set(a) | set(b)) - {"name", "description"})
    diffs = [f"{k}: {_value(k, a[k]) if k in a else '—'} → {_value(k, b[k]) if k in b else '—'}"
             for k in keys if a.get(k) != b.get(k) or (k in a) != (k in b)]
    return "; ".join(diffs) if diffs else ("(baseline)" if variant == baseline else "same rules")


def zero_by_construction(df: pl.DataFrame, est: str, se: str) -> bool:
    """Every estimate exactly 0 with SE 0 (or none): e.g. a bot that holds all four seats wins and loses the
    same money (scores are zero-sum), so its mean is 0 by construction, not by measurement."""
    return df.height > 0 and bool(df.select(((pl.col(est) == 0) & (pl.col(se).fill_null(0) == 0)).all()).item())


def _row_words(r: dict, unit: str) -> str:
    """One paired row in plain words: what, how much (with interval and its unit), on how many units."""
    if r.get("metric") is not None:
        what = r["metric"]
    else:
        who = f"seat {r['seat']}" if r.get("seat") is not None else r.get("bot", "")
        if r.get("bot") is not None and r.get("bot_baseline") not in (None, r["bot"]):
            who = f"{r['bot']} (was {r['bot_baseline']})"
        what = f"{who}: {COMPONENT_LABELS.get(r['component'], r['component'])}"
    share = r["measured_in"].startswith("share")
    k, suffix = (100.0, " percentage points") if share else (1.0, f" {r['measured_in']}")
    est, interval = fmt_interval(r["diff"], r["ci_lo"], r["ci_hi"], r["se_paired"], scale=k).split(" ", 1)
    base = fmt_se(r["mean_baseline"] * k, r["se_paired"] * k if r["se_paired"] is not None else None)
    return (f"{what}: {est}{suffix} {interval} (baseline {base}{'%' if share else ''}; "
            f"{fmt(r['n_units'])} {unit}s, {fmt(r['n_differ'])} differ; Holm p {fmt_p(r['p_holm'])})")


def summary_lines(rows: pl.DataFrame, unit: str, top: int = 5) -> list[str]:
    """Up to ``top`` rows of one variant's paired family that are significant (Holm) and at least ``detect``,
    largest ``|diff| / detect`` first, in plain words; else a sentence saying none is, with the largest
    estimate for scale."""
    ranked = rows.with_columns((pl.col("diff").abs() / pl.col("detect")).alias("_size")).sort(
        "_size", descending=True, nulls_last=True, maintain_order=True)
    # the same numbers reached twice (a bot that holds one seat, a component that is the whole difference)
    # are said once: hand metrics first, then scores by seat, by bot, components
    key = pl.concat_str([pl.col(c).round_sig_figs(6).cast(pl.String) for c in ("diff", "ci_lo", "ci_hi")],
                        separator="|", ignore_nulls=True)
    ranked = ranked.with_columns(key.alias("_d")).unique(subset=["_d"], keep="first", maintain_order=True)
    big = ranked.filter(pl.col("verdict") == compare.VERDICTS[0])
    n_tests = int(rows["p_value"].is_not_null().sum())
    if big.height:
        return [_row_words(r, unit) for r in big.head(top).iter_rows(named=True)]
    if not (rows["n_differ"] > 0).any():
        return [f"Nothing differs: on every paired {unit}, every score and hand metric equals the baseline's "
                "(the changed rule never changed an outcome here)."]
    small = int((rows["verdict"] == compare.VERDICTS[1]).sum())
    lines = [f"No difference is both significant (Holm, {n_tests} tests) and at least its practical threshold "
             f"(detect)" + (f"; {small} significant but smaller." if small else ".")]
    moved = ranked.filter(pl.col("n_differ") > 0)
    if moved.height:
        lines.append("Largest estimate, for scale: " + _row_words(moved.row(0, named=True), unit)
                     + f" — {moved['verdict'][0]}.")
    return lines


def _position_line(pos: pl.DataFrame, baseline: str) -> str:
    sub = pos.filter((pl.col("variant") == baseline) & (pl.col("component") == "score_total")).sort("position")
    parts = [f"{ev.POSITION_NAMES[r['position']]} {fmt_interval(r['mean'], r['ci_lo'], r['ci_hi'], r['se'])}"
             for r in sub.iter_rows(named=True)]
    return f"Mean score per hand by position in {baseline} (base units): " + "; ".join(parts) + "."




# ---------------------------------------------------------------------------------------------------------
# The first screen: who wins, how play changes

PLAY_METRICS = ("turns", "wins", "kongs", "huazhu (花猪) any", "exhaustive_draw (流局)", "declined wins",
                "points exchanged")
"""Hand metrics shown in the "how play changes" table (:data:`analysis.compare.HAND_METRICS` labels)."""

def score_rows(fam: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The rows that say who wins: score per hand by bot (total); none when one bot holds every seat in both arms
    (its mean is 0 by construction, and each seat's change is zero by symmetry)."""
    by_bot = fam["by_bot"].filter(pl.col("component") == "score_total")
    if by_bot.height and not zero_by_construction(by_bot, "diff", "se_paired"):
        return by_bot
    return by_bot.clear()


def who_wins_table(families: dict[tuple[str, str], dict[str, pl.DataFrame]]) -> pl.DataFrame:
    """One row per comparison and bot: baseline mean score per hand, the change with its 95% interval, the
    verdict against ``detect``, Holm p and the paired hands needed to detect ``detect``. A comparison in which
    one bot holds every seat has no rows (:data:`SYMMETRY`)."""
    rows = []
    for (base, v), fam in families.items():
        for r in round_to_se(score_rows(fam)).iter_rows(named=True):
            who = r["bot"] if r["bot_baseline"] == r["bot"] else f"{r['bot']} (was {r['bot_baseline']})"
            rows.append({"comparison": f"{v} − {base}", "who": who, "baseline mean": fmt(r["mean_baseline"]),
                         "change [95% CI]": change(r), "verdict": r["verdict"], "Holm p": fmt_p(r["p_holm"]),
                         "hands needed": fmt(r["hands_paired"])})
    cols = ["comparison", "who", "baseline mean", "change [95% CI]", "verdict", "Holm p", "hands needed"]
    return pl.DataFrame(rows, schema={c: pl.String for c in cols})


def play_changes_table(families: dict[tuple[str, str], dict[str, pl.DataFrame]], play: pl.DataFrame
                       ) -> pl.DataFrame:
    """One row per comparison: paired hands whose play differs (exact count) and the change per hand of the
    hand metrics that describe play (:data:`PLAY_METRICS`; shares in percentage points), each with its 95%
    interval and a mark (:data:`MARKS`)."""
    counts = {(r["baseline"], r["variant"]): r for r in play.iter_rows(named=True)}
    rows = []
    for (base, v), fam in families.items():
        p = counts.get((base, v))
        row = {"comparison": f"{v} − {base}",
               "play differs (hands)": "—" if p is None else
               f"{p['play differs']:,} of {p['hands']:,} ({100 * p['play differs'] / max(p['hands'], 1):.1f}%)"}
        metrics = {r["metric"]: r for r in round_to_se(fam["metrics"]).iter_rows(named=True)}
        for m in PLAY_METRICS:
            r = metrics.get(m)
            share = r is not None and r["measured_in"].startswith("share")
            row[f"{m} (pp)" if share else m] = "—" if r is None else (
                change(r, 100.0 if share else 1.0) + MARKS.get(r["verdict"], ""))
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


SYMMETRY = ("Every seat plays the same bot ({bots}), so each seat's change of the mean score is zero by symmetry "
            "(the seats are exchangeable over the walls; what one seat gains another loses): there is no \"who "
            "wins\" here, only how play and payments change.")
"""The sentence that replaces the "who wins" table when one bot holds every seat."""


def who_wins_data(families: dict[tuple[str, str], dict[str, pl.DataFrame]]) -> pl.DataFrame:
    """The numbers of :func:`who_wins_table`: the paired rows (with their ids) of every comparison."""
    return pl.concat([score_rows(f) for f in families.values()], how="diagonal_relaxed")


def play_changes_data(families: dict[tuple[str, str], dict[str, pl.DataFrame]], play: pl.DataFrame) -> pl.DataFrame:
    """The numbers of :func:`play_changes_table`: the paired rows of :data:`PLAY_METRICS` of every comparison with
    its paired hands (``play_hands``) and those whose play differs (``play_differs``)."""
    rows = pl.concat([f["metrics"].filter(pl.col("metric").is_in(PLAY_METRICS)) for f in families.values()],
                     how="diagonal_relaxed")
    counts = play.select("variant", "baseline", pl.col("hands").alias("play_hands"),
                         pl.col("play differs").alias("play_differs"))
    return rows.join(counts, on=["variant", "baseline"], how="left", maintain_order="left")


def _dealer_item(sec: Section, run: Run, baseline: str) -> None:
    edge = dealer_edge(run, baseline)
    adj = compare.add_adjusted(edge.filter(pl.col("diff").is_not_null())
                               .with_columns(pl.lit(compare.DETECT).alias("detect"), pl.lit(0).alias("_f")), ("_f",))
    edge = edge.join(adj.select("variant", "p_holm", "verdict"), on="variant", how="left", maintain_order="left")
    scr = Screen(edge.clear(), edge.clear(), edge.clear(), edge, [], [""], int(adj.height))
    sec.table(f"Position advantage: the dealer's (first mover's) mean score per hand (base units) and its change "
              f"against the baseline, {UNADJUSTED} (Holm over the {adj.height} changes)", dealer_table(scr),
              "summary.dealer", data=edge.select(pl.lit("score.score_total.position0").alias("id"), pl.all()))


def summary_items(sec: Section, run: Run, baseline: str, families: dict[tuple[str, str], dict[str, pl.DataFrame]],
                  ev_pos: pl.DataFrame, play: pl.DataFrame) -> None:
    """Append the Summary section's items to ``sec``, the answer first. A study with populations opens with
    :func:`analysis.screen.population_items`."""
    unit = run.unit
    if not families:
        sec.text_item(f"One variant ({baseline}): nothing to compare; the tables below describe it.\n"
                      + _position_line(ev_pos, baseline))
        return
    detect = next(iter(families.values()))["by_seat"]["detect"]
    d = fmt(detect[0]) if detect.len() else "—"

    def play_item() -> None:
        sec.table("How play changes: paired hands whose play differs (discards, kongs, declines, wins — not "
                  f"payments) and the change per hand, {UNADJUSTED} (pp = percentage points; ✓ significant (Holm, "
                  "per comparison) and ≥ detect, · significant but smaller)", play_changes_table(families, play),
                  "summary.play_changes", data=play_changes_data(families, play))

    if cells.populations(run):
        scr = screen(run, baseline, families)
        rules = {cells.cell_map(run)[v][0]: rule_differences(run, v, cells.baseline_of(run, v, baseline))
                 for v in run.variants}
        seats = {p: ", ".join(cells.seat_words(s)) for p, s in cells.populations(run).items()}
        population_items(sec, run, scr, rules, play, seats)
        play_item()
    else:
        who = who_wins_table(families)
        if who.height:
            sec.table(f"Who wins: change of the mean score per hand (base units), variant − baseline on the same "
                      f"{unit}s, {UNADJUSTED}; verdict against ±{d}; hands needed to detect {d} (80% power)", who,
                      "summary.who_wins", data=who_wins_data(families))
        if symmetric_populations(run):
            bots = sorted({b for v in run.variants for b in run.bots(v)})
            sec.text_item(SYMMETRY.format(bots=", ".join(bots)))
        play_item()
        _dealer_item(sec, run, baseline)
    lines = []
    counts = {(r["baseline"], r["variant"]): r for r in play.iter_rows(named=True)}
    for (base, v), fam in families.items():
        allrows = pl.concat([df.select(*compare.COLUMNS[:2], *compare.COLUMNS[3:], *(
            [c for c in ("seat", "bot", "bot_baseline", "component", "metric") if c in df.columns]))
            for df in (fam["metrics"], fam["by_seat"], fam["by_bot"])], how="diagonal_relaxed")
        lines.append(f"{v} − {base} ({rule_differences(run, v, base)})"
                     + (f"; {play_sentence(counts[(base, v)], unit)}" if (base, v) in counts else "") + ":")
        lines += [f"  • {x}" for x in summary_lines(allrows, unit)]
    lines.append(_position_line(ev_pos, baseline))
    lines.append(f"Independent unit: the {unit}" + (" (duplicate seating: the four seatings of a wall count once)"
                                                     if run.duplicate else "") + ". Intervals are 95%.")
    sec.text_item("\n".join(lines))
