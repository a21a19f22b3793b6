"""What the report says: every table and figure of ``analysis``, grouped into sections in reading order.

:func:`build_sections` computes the tables on :data:`TABLE_THREADS` threads and assembles the sections: a
"flags" section first when a variant's change did not act (:func:`diagnostics_sections`), the summary, the run
(:func:`header_table`: rule sets, seed, hand counts), the methods (:data:`METHODS`), then the details and one
section per paired comparison (:func:`comparisons`). :mod:`analysis.report_render` turns the sections into HTML
and Markdown; :mod:`analysis.report` writes the files.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from analysis import (
    compare,
    economy,
    ev,
    family,
    fans,
    pieces,
    play,
    plots,
    risk,
    sessions,
    shape,
    skill,
    summary,
    sweep,
)
from analysis.cells import baseline_of, comparisons
from analysis.fmt import UNADJUSTED, fmt
from analysis.load import Run
from analysis.rare import INTERVAL_RULES
from analysis.report_render import Section
from analysis.stats import LEVEL
from analysis.summary import rule_differences, zero_by_construction

METHODS = f"""\
Units: every money amount is in base units (the table's 底; multiply by scoring.base for score units). Each
player-hand is one player's net result in one hand.
Independent unit: the hand — or, under duplicate seating, the wall (deal_id): the four seatings of one wall share
every tile, so they are one observation, not four — or, in a run with sessions, the session (its hands are
chained). Every mean, share, paired difference, bootstrap and session simulation is clustered on that unit, and
the n of a table ("hands", "walls" or "sessions") counts units.
Intervals are two-sided {LEVEL:.0%}. Means: mean ± 1.96·SE with the cluster-robust SE over units (= sd/√n with one
observation per unit). Shares (of hands, wins or player-hands): Wilson score interval at the effective sample
size n_eff = n / design effect (capped at n; the number of units when the share is 0 or 1, the number of trials
when every unit has the same share), so bounds stay in [0, 1] and are never zero-width.
The declined − not difference has the unit-clustered SE of the group
coefficient of an OLS on the group indicator (the two groups share hands).
Quantiles q(p): the smallest observed score with empirical CDF ≥ p. P(loss>x): share of player-hands with score
< −x. CVaR95 loss: mean loss over the worst 5% of player-hands (expected shortfall, boundary observation
weighted fractionally). Risk intervals: percentile bootstrap over units (seeded; all seats of a unit resampled
together). Sessions of K hands for one player of a group: each hand is a uniform draw of a logged hand, then of
one of the group's player-hands in it; K draws summed; intervals from an outer bootstrap over units.
Paired comparisons use common random numbers: the same hand_id was dealt the same wall and bot streams in
every variant; differences are taken hand by hand (joined on hand_id and seat) and clustered by unit.
"differ" = units whose difference is not 0. {INTERVAL_RULES}
p Holm: Holm-adjusted p-values within a family (all paired rows of one comparison, the same family
as xuezhan compare; all rows of one variant in the mean-by-seat table); each caption gives the number of tests.
Verdict: significant (Holm p < 0.05) and |diff| ≥ detect;
significant but smaller; not significant with the interval inside ±detect (an effect of that size is ruled
out); inconclusive. hands needed (paired): hands to simulate so that the test run at that size (Student on few
differing units, normal on many) has 80% power at α = 0.05 against a true difference of detect, the number of
differing units being Binomial with the observed share π of units (at least detect for a 0/1 share) and their
spread at least the observed one; none when no unit differs and nothing bounds π. hands needed (unpaired, per
arm): the plain formula with the unpaired SD under the alternative. vrf = unpaired variance / paired variance.
Play differs: paired hands on which any decision or its outcome differs (exchange, 定缺, discards, kongs,
declines, wins) — payments are not play.
Economy: coins per player per hand = room_factor · base · score_total − rake, charged to every player in every
hand; the house keeps 4·rake per hand."""



# ---------------------------------------------------------------------------------------------------------
# Header


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
            "rules vs baseline": rule_differences(run, v, baseline_of(run, v, baseline))})
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


def one_bot_sentence(run: Run, what: str) -> str:
    bots = sorted({b for v in run.variants for b in run.bots(v)})
    who = f"the {bots[0]} bot" if len(bots) == 1 else "one bot"
    return (f"{what} by bot: not shown — every seat is played by {who} in each variant, so its mean score is 0 "
            "by construction (every payment goes from one seat to another). See the tables by seat and by "
            "dealer position.")



# ---------------------------------------------------------------------------------------------------------
# Building and writing


TABLE_THREADS = 2
"""Threads that compute the report's tables. Polars queries and the numpy bootstraps run without the GIL, so
they proceed while the calling thread draws the figures of the tables already done."""


def _submit_tables(pool: ThreadPoolExecutor, run: Run, baseline: str, n_boot: int, session_hands: int,
                   seed: int, findings: list | None) -> dict[str, Future]:
    """Start every table of the report: the longest job first (the checks and play table: every comparison's
    digests, ~a sixth of the report's CPU with four variants), so that the two workers do not end on it, then the
    ones with figures, in the order their figures are drawn. Each table is a pure function of the logs
    (bootstraps seeded), so the order of completion changes nothing."""
    jobs: dict[str, tuple] = {
        "checks": (checks, run, baseline, findings),
        "ht": (fans.hand_type_frequencies, run), "fl": (fans.flag_frequencies, run),
        "ev_seat": (ev.expected_value, run, "seat"), "ev_pos": (ev.expected_value, run, "position"),
        "ev_bot": (ev.expected_value, run, "bot"),
        "hand_risk": (partial(risk.risk_table, run, "bot", n_boot=n_boot, seed=seed),),
        "sess": (partial(risk.session_risk_table, run, "bot", hands=session_hands, n_boot=n_boot, seed=seed),),
        "dist": (risk.score_distribution, run, "bot"),
        **{f"family {base} {v}": (family.paired_family, run, v, base) for base, v in comparisons(run, baseline)},
        "header": (header_table, run, baseline), "shape": (shape.game_shape, run),
        "fan_summary": (fans.fan_summary, run), "fan_dist": (fans.fan_distribution, run),
        "economy": (economy.economy_table, run, "bot"),
        **({"sessions": (sessions_section, run, baseline)} if run.has_sessions else {}),
        "skill": (skill.skill_section, run, n_boot, seed),
        "decline": (shape.decline_effect, run, "bot")}
    return {name: pool.submit(*job) for name, job in jobs.items()}


def build_sections(run: Run, baseline: str, *, n_boot: int = 200, session_hands: int = 40, seed: int = 0,
                   findings: list | None = None, render: bool = False, progress: bool = False) -> list[Section]:
    """Compute every table and figure of the report: the summary first, then the details.

    ``findings``: :func:`analysis.diagnostics.diagnose`'s result when the caller already has it (computed here
    otherwise). ``render``: also render every figure to SVG (``Section.images``) as soon as it is drawn, while the
    remaining tables are computed (:data:`TABLE_THREADS`). ``progress``: a bar of the tables done (on a
    terminal's stderr)."""
    pool = ThreadPoolExecutor(max_workers=TABLE_THREADS, thread_name_prefix="report")
    try:
        tables = _submit_tables(pool, run, baseline, n_boot, session_hands, seed, findings)
        with pieces.progress("report", len(tables), "tables", enabled=progress):
            for f in tables.values():
                f.add_done_callback(lambda _: pieces.advance("tables"))
            return _assemble(run, baseline, {k: f.result for k, f in tables.items()}, n_boot, session_hands,
                             seed, render)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _assemble(run: Run, baseline: str, get: dict[str, Any], n_boot: int, session_hands: int, seed: int,
              render: bool) -> list[Section]:
    """The sections from the tables (``get[name]()`` waits for one), figures drawn in this thread."""
    unit = run.unit

    def figure(sec: Section, caption: str, fig: Figure) -> None:
        sec.figure(caption, fig)
        if render:
            sec.images[len(sec.items) - 1] = plots.to_svg(fig)

    fan = Section("Fan frequencies", f"p_win = share of wins, p_hand = share of hands with at least one such win; "
                  f"both clustered by {unit} with Wilson 95% intervals at the effective sample size. Dots on a "
                  "log scale so rare hands stay visible.")
    ht, fl = get["ht"](), get["fl"]()
    figure(fan, "Hand types (share of wins, log scale)", plots.fan_frequency_dots(ht, "win"))
    figure(fan, "Pattern flags (share of wins, log scale)", plots.fan_frequency_dots(fl, "win"))
    fan.table("Hand types", ht, "fans.hand_types")
    fan.table("Pattern flags", fl, "fans.flags")

    evs = Section("Expected value", f"Mean score per hand in base units, by seat, by position after the dealer and "
                  f"by bot, split by component; clustered by {unit}. p_value tests mean = 0; p_holm is Holm over "
                  "the rows of one variant in that table.")
    ev_seat, ev_pos, ev_bot = get["ev_seat"](), get["ev_pos"](), get["ev_bot"]()
    figure(evs, "Mean score per hand by seat", plots.ev_errorbars(ev_seat))
    figure(evs, "Mean score per hand by dealer position", plots.ev_errorbars(ev_pos))
    evs.table(f"By seat, with components (Holm over {_tests(ev_seat)} seat × component tests per variant)", ev_seat,
              "ev.seat")
    evs.table(f"By dealer position, with components (Holm over {_tests(ev_pos)} tests per variant)", ev_pos,
              "ev.position")
    if zero_by_construction(ev_bot, "mean", "se"):
        evs.text += " " + one_bot_sentence(run, "Mean score")
    else:
        figure(evs, "Mean score per hand by bot", plots.ev_errorbars(ev_bot))
        figure(evs, "Score components by bot", plots.component_stack(ev_bot))
        evs.table(f"By bot, with components (Holm over {_tests(ev_bot)} tests per variant)", ev_bot, "ev.bot")

    rsk = Section("Risk", f"One player's score per hand and over a session of {session_hands} hands, by bot. "
                  + risk_text(n_boot, seed, unit))
    hand_risk, sess, dist = get["hand_risk"](), get["sess"](), get["dist"]()
    figure(rsk, "Per-hand score quantiles", plots.risk_quantiles(hand_risk))
    figure(rsk, f"Session ({session_hands} hands) total quantiles", plots.risk_quantiles(sess))
    figure(rsk, "Per-hand score distribution", plots.score_distribution_plot(dist))
    rsk.table("Per-hand risk", hand_risk, "risk.hand")
    rsk.table(f"Session of {session_hands} hands", sess, "risk.session")
    rsk.table("Per-hand score distribution", dist, "risk.distribution")

    families = {(a, b): get[f"family {a} {b}"]() for a, b in comparisons(run, baseline)}
    paired = [_paired_section(run, v, base, fam, figure) for (base, v), fam in families.items()]
    rule = sweep.sweep_rule(run, baseline)
    dose_section = []
    if rule is not None:
        mains = {v: fam["metrics"] for (base, v), fam in families.items() if base == baseline_of(run, v, baseline)}
        dose = sweep.dose_tables(run, baseline, rule, mains)
        each = (" in each population (line-up), against the baseline arm of the same population (one series "
                "each)") if "population" in dose.columns else ""
        s = Section(f"Dose–response: {rule}", f"The variants sweep one rule, {rule}: each panel is a hand metric's "
                    f"paired change against the baseline at each value{each} (95% interval; the four metrics with "
                    "the largest change relative to their detect).")
        figure(s, f"Paired change against {rule}", plots.dose_response(dose, rule))
        s.table(f"Paired change by {rule}", dose.drop("order"), "dose_response", data=dose)
        dose_section.append(s)

    flags, play_df = get["checks"]()
    first = _summary_section(run, baseline, families, ev_pos, play_df)
    sections = [*flags, first]  # problems with the comparison come first, with or without populations
    sections += dose_section
    head = Section("Run", f"Run directory: {run.path}. Baseline: {baseline}.")
    head.table("Variants: rule set digest, differences from the baseline, seed and hand counts", get["header"](),
               "run.variants")
    incomplete = [v for v in run.variants if run.manifests[v].get("complete") is False]
    if incomplete:
        head.text += (f" Warning: {', '.join(incomplete)} did not finish (see hands_logged); paired comparisons "
                      "use the hands present in both variants.")
    sections += [head, Section("Methods and definitions", METHODS)]

    shape_df = get["shape"]()
    s = Section("Game shape", f"Per hand, per win or per player-hand (column per); n = that denominator, "
                f"{unit}s = independent units.")
    s.table("At a glance: estimate [95% interval]", glance_table(shape_df, run.variants, unit), "shape.glance",
            data=shape_df)
    s.table("Game shape, full table", shape_df, "shape.full")
    fan.table("Fan, capped fan and 根 per win, and wins per hand", get["fan_summary"](), "fans.summary")
    fan.table("Distribution of fan (before the cap), capped fan and 根 over wins", get["fan_dist"](),
              "fans.distribution")
    sections += [s, fan, evs, rsk]

    s = Section("Economy", "Platform coins: coins per player per hand = room_factor · base · score_total − rake, "
                "charged to every player in every hand (流局 included), so the house keeps 4·rake per hand. "
                "room_factor and rake come from each variant's economy settings; with the default 1 and 0, coins "
                "equal the score. coin_loss = share of player-hands with a negative delta.")
    s.table("Coins per player per hand, by bot", get["economy"](), "economy.bot")
    sections.append(s)
    if "sessions" in get:
        sections.append(get["sessions"]())
    if (sk := get["skill"]()) is not None:  # analysis.skill: duplicate runs with a test and a field bot
        sections.append(sk)
    s = Section("Declined wins", decline_text())
    s.table("Decliners vs non-decliners, by bot", get["decline"](), "declines.bot")
    return [*sections, s, *paired]


def _summary_section(run: Run, baseline: str, families: dict[tuple[str, str], dict[str, pl.DataFrame]],
                     ev_pos: pl.DataFrame, play: pl.DataFrame) -> Section:
    """The answer first (:func:`analysis.summary.summary_items`): who wins, how play changes, then each
    comparison's largest practically significant differences in plain words."""
    sec = Section("Summary")
    if families:  # the answer first as a picture too, then the tables
        effects = [pl.concat([summary.score_rows(f), f["metrics"].filter(pl.col("metric").is_in(summary.PLAY_METRICS))],
                             how="diagonal_relaxed") for f in families.values()]
        sec.figure("The answer at a glance: each comparison's change of the mean score per hand by bot and of play "
                   "(shares in percentage points), 95% interval, over its ±detect band (green: significant (Holm) and "
                   "≥ detect; amber: significant but smaller)",
                   plots.forest(pl.concat(effects, how="diagonal_relaxed"), compare.VERDICTS[:2]))
    summary.summary_items(sec, run, baseline, families, ev_pos, play)
    return sec


SESSIONS_TEXT = ("Hands chained into sessions (rule set session:): the dealer of each hand follows from the "
                 "previous one, and each player carries a balance. One session is one independent unit (under "
                 "duplicate seating, the four seatings of one session's walls are one unit). net = change of a "
                 "player's balance over the session in the session's money (base units, or coins: room_factor · "
                 "base · score − rake per hand); points = the session's score in base units; dealt = hands the "
                 "player dealt. P(ruin) = share of player-sessions whose balance reached 0 (any = sessions where "
                 "someone did), Wilson 95% at the effective sample size, clustered by session (by the four "
                 "seatings of a session's walls under duplicate seating). Every other table of a run with "
                 "sessions is clustered by session too (its n counts sessions). Paired rows compare the same "
                 "sessions (same walls) under two rule sets.")


def sessions_section(run: Run, baseline: str) -> Section:
    """The "Sessions" section: only for runs whose rule sets have a session block."""
    s = Section("Sessions", SESSIONS_TEXT)
    by = "bot" if any(len(set(run.bots(v))) > 1 for v in run.variants) else "seat"
    s.table(f"Per-session results by {by}", _per_session(sessions.session_results(run, by)), "sessions.results")
    s.table(f"Distribution of a player's session result (net) by {by}", sessions.session_distribution(run, by),
            "sessions.distribution")
    ruin = sessions.ruin_table(run, "seat")
    if ruin.height:
        s.table("P(ruin) for the session's bankroll, by seat", _per_session(ruin), "sessions.ruin")
    s.table("House take per session", _per_session(sessions.house_take(run)), "sessions.house_take")
    paired = [v for v in sessions.session_variants(run) if v != baseline and run.session(baseline) is not None
              and run.session(v)["hands"] == run.session(baseline)["hands"]]
    for v in paired:
        s.table(f"{v} − {baseline}: session points and hands dealt per seat (paired by session)",
                _per_session(sessions.dealer_rule_effect(run, v, baseline, "seat")), f"sessions.dealer_rule.{v}")
    return s


def _per_session(df: pl.DataFrame) -> pl.DataFrame:
    """Session tables count sessions, not hands: ``n_units`` shown as ``sessions`` (see :func:`present`)."""
    return df.rename({"n_units": "sessions"}) if "n_units" in df.columns else df


def checks(run: Run, baseline: str, findings: list | None = None) -> tuple[list[Section], pl.DataFrame]:
    """``(diagnostics_sections, play table)``: each comparison's hands on which play differs and (without
    ``findings``) any logged column differs are counted in one pass over the logs
    (:func:`analysis.play.pair_differences`), for the play table and for :func:`analysis.diagnostics.diagnose`."""
    pairs = comparisons(run, baseline)
    if findings is not None:  # the study's checks ran already: play alone
        return diagnostics_sections(run, baseline, findings), play.play_table(run, pairs)
    from analysis.diagnostics import diagnose

    counts = play.pair_differences(run, pairs, exact=False)  # diagnose asks only whether any hand differs
    found = diagnose(run, baseline, counts={pair: (c[3], c[1]) for pair, c in counts.items()})
    return diagnostics_sections(run, baseline, found), play.play_table(run, pairs, counts)


def diagnostics_sections(run: Run, baseline: str, findings: list | None = None) -> list[Section]:
    """``[Section]`` listing :func:`analysis.diagnostics.diagnose`'s findings (``findings``: already computed),
    or ``[]`` when there are none."""
    if findings is None:
        from analysis.diagnostics import diagnose

        findings = diagnose(run, baseline)
    text = "\n".join(f"- {f.text()}" for f in findings)
    return [Section("Check first: variants whose changes did not act or whose adapted players may not fit", text)] \
        if findings else []


def _tests(df: pl.DataFrame) -> int:
    """Tests per variant in a table with p-values (the largest family)."""
    if "p_value" not in df.columns or df.height == 0:
        return 0
    return int(df.group_by("variant").agg(pl.col("p_value").is_not_null().sum())["p_value"].max())


def _paired_section(run: Run, variant: str, baseline: str, fam: dict[str, pl.DataFrame],
                    figure: Callable[[Section, str, Figure], None] = Section.figure) -> Section:
    n_tests = family.family_tests(fam)
    unit = run.unit
    s = Section(f"Paired: {variant} − {baseline}",
                f"{variant} minus {baseline} on the same {unit}s ({rule_differences(run, variant, baseline)}). "
                f"{unit}s = paired units, differ = units whose difference is not 0. {INTERVAL_RULES} Intervals: "
                f"{UNADJUSTED.replace('family of tests', f'{n_tests} tests of this section')}. hands_paired / "
                "hands_unpaired: hands to simulate to detect `detect` (α = 0.05, 80% power, SD under the "
                "alternative; paired: the power of the test run at that size, from the observed rate and sizes of "
                "the differing units — the rate is this run's estimate, so with fewer than about 300 differing "
                f"{unit}s in a row the power at that size can be 10 points off 80%).")
    by_bot, by_seat, metrics = fam["by_bot"], fam["by_seat"], fam["metrics"]
    bot_zero = zero_by_construction(by_bot, "diff", "se_paired")
    score_rows = [by_seat.with_columns(pl.format("seat {}", "seat").alias("group")).drop("seat")]
    if not bot_zero:
        score_rows.append(by_bot.filter(pl.col("component") == "score_total").drop("bot_baseline")
                          .rename({"bot": "group"}))
    figure(s, "Paired differences, one panel per unit of measurement",
           plots.comparison_deltas(pl.concat([*score_rows, metrics], how="diagonal_relaxed"),
                                   ["group", "component", "metric"]))
    s.table("Score by seat (base units)", by_seat, f"paired.{variant}.{baseline}.seat")
    if bot_zero:
        s.text += " " + one_bot_sentence(run, "Score differences")
    else:
        s.table("Score by bot and component (base units)", by_bot, f"paired.{variant}.{baseline}.bot")
    s.table("Hand-level metrics (shares as 0/1; detect in each metric's unit)", _one_of_twins(metrics),
            f"paired.{variant}.{baseline}.metrics", data=metrics)
    return s


def _one_of_twins(metrics: pl.DataFrame) -> pl.DataFrame:
    """The hand metrics without ``wins`` when it repeats ``winners`` number for number (every winner wins once
    outside 血流); the paired frames, their CSV and `xuezhan compare` keep both."""
    cols = ["n_differ", "diff", "ci_lo", "ci_hi"]
    rows = {m: metrics.filter(pl.col("metric") == m).select(cols) for m in ("winners", "wins")}
    if all(r.height == 1 for r in rows.values()) and rows["winners"].equals(rows["wins"]):
        return metrics.filter(pl.col("metric") != "wins")
    return metrics


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
