"""The first screen of a study with populations, in words and tables (:func:`population_items`).

Per arm: which kind of player gains and which loses in each mixed population, how play changes, and per headline
metric whether the verdict holds across the populations (:func:`analysis.populations.robustness`); then the
tables behind those lines — the verdicts per population side by side with the interaction test, who wins by kind
of player, the dealer's edge — all adjusted in one Holm family (:func:`analysis.populations.screen`). Numbers
are rounded to their standard error.
"""

from __future__ import annotations

import polars as pl

from analysis import compare
from analysis.fmt import UNADJUSTED, fmt, fmt_interval, fmt_p, fmt_se, round_to_se
from analysis.ids import with_id
from analysis.load import Run
from analysis.populations import ALPHA, Screen, robustness
from analysis.report_render import Section

MARKS = {compare.VERDICTS[0]: " ✓", compare.VERDICTS[1]: " ·"}
"""Mark after a change: significant (Holm) and at least detect; significant but smaller."""


def change(r: dict, scale: float = 1.0) -> str:
    """``+0.12 [0.05, 0.2]``: a paired row's change and interval (× ``scale``), rounded to its SE."""
    if r["n_differ"] == 0:
        return "0 (none differ)"
    return fmt_interval(r["diff"], r["ci_lo"], r["ci_hi"], r.get("se_paired"), scale=scale)


def _scale(r: dict) -> tuple[float, str]:
    share = (r.get("measured_in") or "").startswith("share")
    return (100.0, " pp") if share else (1.0, "")


def _label(pop: str) -> str:
    return pop or "all seats"


def kinds_table(scr: Screen) -> pl.DataFrame:
    """Who wins: per arm, mixed population and bot kind, the change of the mean score per hand (paired on the
    same walls and seats), its interval, verdict, Holm p (the screen's family), the hands needed and the Holm p of
    the test that the kind's change is the same in every mixed population it sits in (— in only one)."""
    across = {(r["arm"], r["kind"]): r["p_holm"] for r in scr.interaction.filter(pl.col("kind").is_not_null())
              .iter_rows(named=True)}
    rows = [{"comparison": r["arm"], "population": _label(r["population"]), "kind": r["who"],
             "baseline mean": fmt_se(r["mean_baseline"], r["se_paired"]), "change [95% CI]": change(r),
             "verdict": r["verdict"],
             "Holm p": fmt_p(r["p_holm"]), "hands needed": fmt(r["hands_paired"]),
             "same in every mixed population? interaction Holm p": fmt_p(across[(r["arm"], r["who"])])
             if (r["arm"], r["who"]) in across else "—"}
            for r in round_to_se(scr.kinds).iter_rows(named=True)]
    cols = ["comparison", "population", "kind", "baseline mean", "change [95% CI]", "verdict", "Holm p",
            "hands needed", "same in every mixed population? interaction Holm p"]
    return pl.DataFrame(rows, schema={c: pl.String for c in cols})


def _inter(scr: Screen, arm: str, metric: str) -> dict | None:
    sub = scr.interaction.filter((pl.col("arm") == arm) & (pl.col("metric") == metric))
    return sub.row(0, named=True) if sub.height else None


def depends_table(scr: Screen) -> pl.DataFrame:
    """Per arm and headline metric: the change in each population side by side (✓ / · as :data:`MARKS`), the
    interaction test's Holm p and the robustness line."""
    head = round_to_se(scr.headline)
    rows = []
    for (arm, metric), sub in head.group_by(["arm", "who"], maintain_order=True):
        by_pop = {r["population"]: r for r in sub.iter_rows(named=True)}
        row = {"comparison": arm, "metric": metric + _scale(sub.row(0, named=True))[1]}
        for p in scr.populations:
            r = by_pop.get(p)
            row[_label(p)] = "—" if r is None else change(r, _scale(r)[0]) + MARKS.get(r["verdict"], "")
        it = _inter(scr, arm, metric)
        row["interaction Holm p"] = "—" if it is None or it["p_holm"] is None else fmt_p(it["p_holm"])
        row["across populations"] = robustness(sub, it, len(scr.populations))
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


def dealer_table(scr: Screen) -> pl.DataFrame:
    """The dealer's mean score per hand in every cell with its interval, and its paired change against the
    baseline arm of the population (verdict and Holm p in the screen's family)."""
    rows = []
    level = round_to_se(scr.dealer.select("mean", "se", pl.col("mean_lo").alias("ci_lo"),
                                          pl.col("mean_hi").alias("ci_hi")))
    for r, m in zip(round_to_se(scr.dealer).iter_rows(named=True), level.iter_rows(named=True), strict=True):
        rows.append({"arm": r["arm"], "population": _label(r["population"]),
                     "dealer's mean score [95% CI]": fmt_interval(m["mean"], m["ci_lo"], m["ci_hi"], m["se"]),
                     "change [95% CI]": "(baseline)" if r["diff"] is None else change(r),
                     "verdict": r.get("verdict") or "—", "Holm p": fmt_p(r.get("p_holm")),
                     "n": fmt(r["n_units"])})
    return pl.DataFrame(rows, infer_schema_length=None)


def who_words(kinds: pl.DataFrame) -> str:
    """``gains greedy +0.2 [0.1, 0.3]; loses expert −0.1 [...]; no significant change: value`` for one arm and
    population's kind rows (significant = Holm p < 0.05)."""
    sig = kinds.filter(pl.col("p_holm") < ALPHA)
    parts = []
    for word, cond in (("gains", pl.col("diff") > 0), ("loses", pl.col("diff") < 0)):
        sub = sig.filter(cond)
        if sub.height:
            parts.append(f"{word} " + ", ".join(f"{r['who']} {change(r)}" for r in sub.iter_rows(named=True)))
    rest = kinds.join(sig, on="who", how="anti")
    if rest.height:
        parts.append("no significant change: " + ", ".join(rest["who"].to_list()))
    return "; ".join(parts)


def kind_words(scr: Screen, arm: str) -> str:
    """Does who wins depend on the line-up: each kind seated in two or more mixed populations, its interaction
    test's Holm p (the screen's family) and whether its change differs between them; ``""`` without such kinds."""
    rows = scr.interaction.filter((pl.col("arm") == arm) & pl.col("kind").is_not_null())
    if rows.height == 0:
        return ""
    words = [f"{r['kind']} {'differs' if r['p_holm'] is not None and r['p_holm'] < ALPHA else 'no evidence it differs'}"
             f" (interaction Holm p {fmt_p(r['p_holm'])}, {r['populations']} populations)"
             for r in rows.iter_rows(named=True)]
    return "who wins across the mixed populations (each kind's change of the score per hand): " + "; ".join(words)


def arm_lines(scr: Screen, arm: str, rules: str, play: dict[str, tuple[int, int]]) -> list[str]:
    """The lines of one arm: rules, who wins per mixed population, play, each headline metric across populations,
    the dealer's edge."""
    kinds = round_to_se(scr.kinds.filter(pl.col("arm") == arm))
    lines = [f"{arm} ({rules}):"]
    for (pop,), sub in kinds.group_by(["population"], maintain_order=True):
        lines.append(f"  • who wins ({_label(pop)}, score per hand, base units): {who_words(sub)}")
    if (across := kind_words(scr, arm)):
        lines.append(f"  • {across}")
    differ = [f"{_label(p)} {100 * k / max(n, 1):.0f}%" for p, (k, n) in play.items()]
    if differ:
        lines.append("  • play differs (share of paired hands): " + ", ".join(differ))
    head = round_to_se(scr.headline.filter(pl.col("arm") == arm))
    for (metric,), sub in head.group_by(["who"], maintain_order=True):
        k, suffix = _scale(sub.row(0, named=True))
        vals = "; ".join(f"{_label(r['population'])} {change(r, k)}{MARKS.get(r['verdict'], '')}"
                         for r in sub.iter_rows(named=True))
        verdict = robustness(sub, _inter(scr, arm, metric), len(scr.populations))
        lines.append(f"  • {metric}{suffix}: {vals} — {verdict}")
    edge = round_to_se(scr.dealer.filter((pl.col("arm") == arm) & pl.col("diff").is_not_null()))
    if edge.height:
        lines.append("  • dealer's edge: " + "; ".join(f"{_label(r['population'])} {change(r)}"
                                                        + MARKS.get(r.get("verdict"), "")
                                                        for r in edge.iter_rows(named=True)))
    return lines


def _numbers(scr: Screen) -> dict[str, pl.DataFrame]:
    """The numbers behind the screen's tables, each row with a stable id (:mod:`analysis.ids`): the headline
    metrics (with the interaction test's Holm p), who wins by kind, the dealer's edge."""
    def inter(by: str) -> pl.DataFrame:  # the interaction tests of metrics, or of kinds across populations
        rows = scr.interaction.filter(pl.col("kind").is_null() if by == "metric" else pl.col("kind").is_not_null())
        return rows.select("arm", pl.col(by).alias("who"), pl.col("p_holm").alias("interaction_p_holm"))

    head = with_id(scr.headline, "metric", ["who"]).join(inter("metric"), on=["arm", "who"], how="left",
                                                         maintain_order="left")
    kinds = scr.kinds.select(pl.format("score.score_total.bot.{}", "who").alias("id"), pl.all()).join(
        inter("kind"), on=["arm", "who"], how="left", maintain_order="left")
    dealer = scr.dealer.select(pl.lit("score.score_total.position0").alias("id"), pl.all())
    return {"depends": head, "kinds": kinds, "dealer": dealer}


def population_items(sec: Section, run: Run, scr: Screen, rules: dict[str, str], play: pl.DataFrame,
                     seats: dict[str, str]) -> None:
    """Append the first screen of a study with populations to ``sec``: the words per arm, then the side-by-side
    verdicts, who wins by kind, the dealer's edge. ``rules``: arm → its rule differences; ``seats``: population
    → its seating."""
    unit = run.unit
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for r in play.iter_rows(named=True):
        row = scr.dealer.filter(pl.col("variant") == r["variant"])
        if row.height:
            counts.setdefault(row["arm"][0], {})[row["population"][0]] = (r["play differs"], r["hands"])
    pops = "; ".join(f"{_label(p)} = {seats.get(p, '')}" for p in scr.populations)
    lines = [f"Populations, each on the same {unit}s: {pops}. ✓ significant (Holm over the {scr.tests} tests "
             f"of this screen) and ≥ detect, · significant but smaller; each {UNADJUSTED}."]
    if scr.symmetric:
        lines.append(f"In {', '.join(_label(p) for p in scr.symmetric)} every seat plays the same bot, so every "
                     "seat's change of the mean score is zero by symmetry: there is no \"who wins\" there, only how "
                     "play and payments change.")
    for arm in dict.fromkeys(scr.dealer.filter(pl.col("diff").is_not_null())["arm"].to_list()):
        lines += arm_lines(scr, arm, rules.get(arm, ""), counts.get(arm, {}))
    sec.text_item("\n".join(lines))
    data = _numbers(scr)
    if len(scr.populations) > 1:
        sec.table("Does it depend on who plays? Change per hand, variant − baseline in each population on "
                  f"the same {unit}s, {UNADJUSTED} (pp = percentage points); interaction = Hotelling's T² test that "
                  "the change is the same in every population", depends_table(scr), "summary.depends",
                  data=data["depends"])
    kinds = kinds_table(scr)
    if kinds.height:
        sec.table("Who wins, by kind of player: change of the mean score per hand (base units), paired on the "
                  f"same {unit}s and seats, {UNADJUSTED}; verdict against ±{fmt(compare.DETECT)}; hands needed to "
                  "detect it (80% power)", kinds, "summary.who_wins_by_kind", data=data["kinds"])
    sec.table("Position advantage: the dealer's (first mover's) mean score per hand (base units) and its change "
              f"against the baseline of the same population, {UNADJUSTED}", dealer_table(scr), "summary.dealer",
              data=data["dealer"])
