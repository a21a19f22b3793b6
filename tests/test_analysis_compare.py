"""analysis comparisons, economy and the report on the four-hand synthetic run of tests/analysis_synth.py (its
scores and wins are listed in tests/test_analysis_tables.py), against hand-computed numbers.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import polars as pl
import pytest
from analysis_synth import Z, example_run, row

from analysis import compare, economy, ev, fans, risk, shape
from analysis.load import RunDirError, open_run
from analysis.power import units_for_power


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return example_run(tmp_path_factory.mktemp("synth") / "run")


# -- paired comparison -------------------------------------------------------------------------------------------

def test_arms_after_the_variant_are_keyword_only(run_dir):
    """`xuezhan compare RUN A B` names the baseline first; the Python call names the baseline by keyword, so a copied
    order cannot flip the sign silently: the old positional call still works, with a DeprecationWarning."""
    new = compare.paired_comparison(run_dir, "alt", baseline="base", by="seat")
    with pytest.warns(DeprecationWarning, match=r"paired_comparison\(run, 'alt', 'base', \.\.\.\).*baseline='base'"):
        old = compare.paired_comparison(run_dir, "alt", "base", "seat")
    assert old.equals(new) and set(old["baseline"]) == {"base"}
    with pytest.warns(DeprecationWarning, match="baseline='base'"):
        assert compare.paired_hand_metrics(run_dir, "alt", "base").equals(
            compare.paired_hand_metrics(run_dir, "alt", baseline="base"))
    with pytest.raises(TypeError, match="at most 8 positional arguments"):
        compare.paired_comparison(run_dir, "alt", "base", "seat", ["score_total"], 1.0, 0.05, 0.8, "extra")


def test_paired_by_seat_hand_computed(run_dir):
    df = compare.paired_comparison(run_dir, "alt", baseline="base", by="seat", detect=1.0)
    r = row(df, seat=0)
    # d = 0, 0, +24, 0: mean 6, sd 12, paired se 6; unpaired var (605.33 + 205.33)/4 = 202.67
    assert (r["n_units"], r["n_hands"], r["unit"], r["mean"], r["mean_baseline"], r["diff"]) == \
        (4, 4, "hand", -8, -14, 6)
    assert r["se_paired"] == pytest.approx(6.0)
    # one differing hand: not the normal 6 ± 1.96·6 but the gamma interval on that hand's difference, +24 (the
    # positive and negative totals each at 97.5%; Gamma(1) quantiles are −ln(1 − q), and the unseen negative side
    # is sized by the largest |difference|, 24)
    assert (r["n_differ"], r["interval"]) == (1, "few differing")
    assert r["ci_lo"] == pytest.approx((24 * -math.log(1 - 0.0125) - 24 * -math.log(0.0125)) / 4)
    # upper: the positive total's Fay–Feuer bound with y + w = 48, v + w² = 1152: 24 · Gamma(2) quantile 0.9875
    x = 1.0
    for _ in range(200):  # bisection on the Gamma(2) CDF 1 − e^{−x}(1 + x)
        x = x + (1 if 1 - math.exp(-x) * (1 + x) < 0.9875 else -1) * 2 ** -(_ / 8)
    assert r["ci_hi"] == pytest.approx(24 * x / 4, rel=1e-3)
    assert r["p_value"] == 1.0 and r["verdict"] == "inconclusive"
    assert r["se_unpaired"] == pytest.approx(math.sqrt((1816 / 3 + 616 / 3) / 4))
    assert r["vrf"] == pytest.approx((1816 / 3 + 616 / 3) / 4 / 36)
    # ⌈(2.80159·12)²⌉ = 1131 by the plain formula; the power of the test with the number of differing units
    # itself random (Binomial, analysis.power) reaches 80% at 1125
    assert r["hands_paired"] == 1125
    # unpaired, per arm: ⌈((z_0.975 + z_0.80)·σ_u/detect)²⌉ with σ_u² = the two arms' per-hand variances
    # 1816/3 + 616/3 (integer sums, |m·d| = 1: no integer bound above σ̂) = ⌈7.8489 · 810.67⌉ = 6363
    zsum = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.80)
    assert r["hands_unpaired"] == math.ceil(zsum ** 2 * (1816 / 3 + 616 / 3)) == 6363
    assert row(df, seat=3)["diff"] == -2


def test_paired_by_bot_and_components(run_dir):
    df = compare.paired_comparison(run_dir, "alt", baseline="base", by="bot", components=["score_total", "score_huazhu",
                                                                                 "score_win"])
    g = row(df, bot="greedy", component="score_total")
    # per-hand sums of d over the two greedy seats: 0, 0, 16, 0 (m = 2): mean 2, se² = 4/3 · (3·16 + 144)/64 = 4
    assert (g["bot_baseline"], g["n_obs"], g["diff"]) == ("greedy", 8, 2)
    assert g["se_paired"] == pytest.approx(2.0)
    # hands needed with m = 2 observations per hand (detect 0.1): a differing hand's sum has mean
    # m₁ = m·d/π = 2·0.1·4 = 0.8 under the alternative, the observed spread gives m₂ = (se²·n·m² + (m·d)²)·n/k =
    # (4·4·4 + 0.04)·4 = 256.16, ρ = m₁/√m₂; one hand per unit. unpaired: σ_u² = n·se_u² (above m·d < 1 the
    # integer bound (m·d − (m·d)²)/m² = 0.04 is below it)
    assert g["hands_paired"] == units_for_power(1 / 4, 0.8 / math.sqrt(256.16))
    zsum = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.80)
    assert g["hands_unpaired"] == math.ceil(zsum ** 2 * 4 * g["se_unpaired"] ** 2 / 0.1 ** 2)
    assert row(df, bot="greedy", component="score_huazhu")["diff"] == 2
    w = row(df, bot="value", component="score_win")
    assert w["diff"] == 0 and w["se_paired"] == 0 and w["n_differ"] == 0
    # nothing differed: no interval and no test, not a zero-width interval with p = 1
    assert (w["ci_lo"], w["ci_hi"], w["p_value"], w["interval"], w["verdict"]) == \
        (None, None, None, "none", "no unit differs")
    # hands needed: no unit differed and nothing bounds how rarely one would, so there is no number (the old
    # integer-only bound printed 32 here, fewer than with one differing unit: issue 28)
    assert w["hands_paired"] is None


def test_p_values_alone_are_the_full_rows_p_values(run_dir):
    """`xuezhan compare` gathers the p-values of the family's rows it does not print from the differences alone
    (issue 47): they are the full computation's, and so is every printed row's Holm-adjusted p."""
    from analysis import family

    comps = ["score_total", "score_huazhu", "score_win"]
    for by, keys in (("bot", ["bot", "bot_baseline", "component"]), ("seat", ["seat", "component"])):
        full = compare.paired_comparison(run_dir, "alt", baseline="base", by=by, components=comps)
        alone = compare.paired_p_values(run_dir, "alt", baseline="base", by=by, components=comps)
        both = full.join(alone, on=keys, suffix="_alone", nulls_equal=True)
        assert both.height == full.height == alone.height
        for c in ("n_differ", "diff", "se_paired", "p_value"):
            assert both[c].equals(both[f"{c}_alone"]), c
    fam = family.paired_family(open_run(run_dir), "alt", "base")
    for by, table in (("seat", "by_seat"), ("bot", "by_bot")):
        scores, metrics, n = family.compare_rows(open_run(run_dir), "alt", "base", by, ["score_total"])
        want = fam[table].filter(pl.col("component") == "score_total")
        assert scores["p_holm"].equals(want["p_holm"]) and metrics["p_holm"].equals(fam["metrics"]["p_holm"])
        assert n == family.family_tests(fam)


def test_paired_against_itself_is_zero(run_dir):
    df = compare.paired_comparison(run_dir, "base", baseline="base", by="seat")
    assert (df["diff"] == 0).all() and (df["se_paired"] == 0).all()


def test_paired_hand_metrics(run_dir):
    df = compare.paired_hand_metrics(run_dir, "alt")  # baseline defaults to the study's
    assert set(df["baseline"]) == {"base"}
    moved = row(df, metric="points exchanged")
    # Σ|score|/2 per hand: base 6, 16, 48, 18 (mean 22); alt 6, 16, 24, 18: d = 0, 0, -24, 0
    assert moved["mean_baseline"] == 22 and moved["mean"] == 16 and moved["diff"] == -6
    assert moved["se_paired"] == pytest.approx(6.0)
    assert row(df, metric="huazhu (花猪) any")["diff"] == 0
    big, declined = row(df, metric="wins ≥ 2 fan"), row(df, metric="declined wins")
    assert (big["mean_baseline"], big["diff"], big["measured_in"]) == (0.75, 0, "wins per hand")  # 0, 2, 0, 1
    assert (declined["mean_baseline"], declined["diff"]) == (0.25, 0)  # hand 3's one declined win


def test_paired_hand_metrics_detect_per_metric(run_dir):
    df = compare.paired_hand_metrics(run_dir, "alt")
    assert dict(zip(df["metric"], df["detect"], strict=True)) == compare.HAND_DETECT
    assert row(df, metric="turns")["detect"] == 0.5 and row(df, metric="exhaustive_draw (流局)")["detect"] == 0.01
    # points exchanged: se_paired 6 on 4 hands, σ = 12; d = 0.1 base units: ⌈(2.801585·12/0.1)²⌉
    zsum = Z + 0.8416212335729143
    assert row(df, metric="points exchanged")["hands_paired"] == math.ceil((zsum * 12 / 0.1) ** 2)
    over = compare.paired_hand_metrics(run_dir, "alt", detect={"points exchanged": 1.0})
    # 1131 by the plain formula; the power of the test with a Binomial number of differing units (analysis.power)
    assert row(over, metric="points exchanged")["hands_paired"] == 1125 and row(over, metric="turns")["detect"] == 0.5
    assert set(compare.paired_hand_metrics(run_dir, "alt", detect=0.2)["detect"]) == {0.2}
    with pytest.raises(ValueError, match="unknown hand metric"):
        compare.paired_hand_metrics(run_dir, "alt", detect={"turn": 1.0})


def test_rich_table_shows_the_detect_used(run_dir):
    from rich.console import Console

    def text(df: pl.DataFrame, label: list[str]) -> str:
        console = Console(record=True, width=250)
        console.print(compare.rich_table(df, "t", label))
        return console.export_text()

    metrics = text(compare.paired_hand_metrics(run_dir, "alt"), ["metric"])
    header = next(line for line in metrics.splitlines() if "hands p/u" in line)
    assert header.split("┃")[-3].strip() == "d" and "(d=" not in header
    turns = next(line for line in metrics.splitlines() if "turns" in line)
    assert turns.split("│")[-3].strip() == "0.5"
    scores = text(compare.paired_comparison(run_dir, "alt", by="seat", detect=0.25), ["seat"])
    assert "hands p/u (d=0.25)" in scores


def test_compare_unknown_variant(run_dir):
    with pytest.raises(RunDirError, match="no variant 'x'"):
        compare.paired_comparison(run_dir, "x")
    with pytest.raises(ValueError, match="unknown score component"):
        compare.paired_comparison(run_dir, "alt", components=["score_bogus"])


# -- economy ---------------------------------------------------------------------------------------------------

def test_economy_from_manifest_and_override(run_dir):
    df = economy.economy_table(run_dir, "seat")
    r = row(df, variant="alt", seat=0, quantity="coins")
    # alt: N = 2, A = 1: coins = 2·score − 1; seat 0 scores 6, -16, -24, 2
    assert (r["room_factor"], r["rake"], r["house_per_hand"]) == (2, 1, 4)
    assert r["mean"] == 2 * -8 - 1
    assert r["se"] == pytest.approx(2 * math.sqrt(616 / 3 / 4))
    assert row(df, variant="alt", seat=1, quantity="coin_loss")["mean"] == 0.25  # 2·0 − 1 < 0 in hand 0
    base = row(df, variant="base", seat=0, quantity="coins")
    assert base["mean"] == -14 and base["room_factor"] == 1 and base["rake"] == 0
    over = economy.economy_table(run_dir, "bot", room_factor=200, rake=400)
    g = row(over, variant="base", bot="greedy", quantity="coins")
    assert g["mean"] == 200 * -2 - 400 and g["house_per_hand"] == 1600
    # all four players together: the house takes exactly 4·A per hand
    both = over.filter((pl.col("variant") == "base") & (pl.col("quantity") == "coins"))
    assert (both["mean"] * both["n_obs"]).sum() / 4 == pytest.approx(-4 * 400)


def test_analysis_never_imports_the_engine():
    import subprocess
    import sys

    code = ("import sys, analysis.report, analysis.load, analysis.stats; "
            "print(sorted(m for m in sys.modules if m in ('simulator.engine', 'simulator.run.runner', 'numba')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_tables_convert_to_pandas(run_dir):
    tables = [fans.hand_type_frequencies(run_dir), fans.flag_frequencies(run_dir), fans.fan_distribution(run_dir),
              fans.fan_summary(run_dir), ev.expected_value(run_dir, ("seat", "bot")), shape.game_shape(run_dir),
              shape.decline_effect(run_dir), risk.risk_table(run_dir, n_boot=5), risk.score_distribution(run_dir),
              compare.paired_comparison(run_dir, "alt"), compare.paired_hand_metrics(run_dir, "alt"),
              economy.economy_table(run_dir)]
    for df in tables:
        pdf = df.to_pandas()
        assert len(pdf) == df.height > 0 and list(pdf.columns) == df.columns


def test_report_uses_the_stated_replicates(run_dir, monkeypatch):
    from analysis import report

    seen = {}
    for name in ("risk_table", "session_risk_table"):
        def spy(*a, _f=getattr(risk, name), _n=name, **k):
            seen[_n] = k["n_boot"]
            return _f(*a, **k)
        monkeypatch.setattr(risk, name, spy)
    sections = report.build_sections(open_run(run_dir), "base", n_boot=100, session_hands=3)
    assert seen == {"risk_table": 100, "session_risk_table": 100}  # not max(1, n_boot // 2) for sessions
    sec = next(s for s in sections if s.title == "Risk")
    assert "100 replicates" in sec.text and "100 outer resamples" in sec.text
    sess = next(obj for kind, cap, obj in sec.items if kind == "table" and cap.startswith("Session"))
    mean = sess.filter(pl.col("bot") == "greedy", pl.col("statistic") == "mean").row(0, named=True)
    assert mean["ci_lo"] < mean["estimate"] < mean["ci_hi"]


def test_report_without_bootstrap_shows_no_intervals(run_dir):
    from analysis import report

    sec = next(s for s in report.build_sections(open_run(run_dir), "base", n_boot=0, session_hands=3)
               if s.title == "Risk")
    assert "No intervals" in sec.text and "replicates" in sec.text
    tables = [obj for kind, _, obj in sec.items if kind == "table"][:2]
    assert [t["ci_lo"].null_count() for t in tables] == [t.height for t in tables]
    assert "| — | — |" in report.md_table(tables[1])


@pytest.mark.parametrize(("boot", "ok"), [(0, True), (100, True), (1, False), (20, False), (99, False),
                                          (-1, False)])
def test_cli_report_boot(run_dir, tmp_path, boot, ok):
    from typer.testing import CliRunner

    from simulator.cli import app

    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "r.html"), "--boot", str(boot),
                                   "--session-hands", "2"])
    if ok:
        assert res.exit_code == 0, res.output
        md = (tmp_path / "r.md").read_text(encoding="utf-8")
        assert ("No intervals" in md) == (boot == 0) and ("100 outer resamples" in md) == (boot == 100)
    else:
        assert res.exit_code == 2
        assert res.output == f"error: --boot must be 0 (no intervals) or at least 100, got {boot}\n"
        assert not (tmp_path / "r.html").exists()


def test_cli_compare_prints_detect_per_metric(run_dir):
    from typer.testing import CliRunner

    from simulator.cli import app

    res = CliRunner().invoke(app, ["compare", str(run_dir), "base", "alt", "--by", "seat", "--detect", "0.5"],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "hands p/u (d=0.5)" in res.output  # score table: --detect
    turns = next(line for line in res.output.splitlines() if "turns" in line)
    draws = next(line for line in res.output.splitlines() if "exhaustive_draw" in line)
    assert turns.split("│")[-3].strip() == "0.5" and draws.split("│")[-3].strip() == "0.01"


def test_report_on_a_run_without_wins(tmp_path):
    from analysis_synth import player, write_run

    from analysis.report import write_report

    hand = {"hand_id": 0, "exhaustive_draw": True,
            "players": [player(0, score_chadajiao=-3), player(1, ready=True, score_chadajiao=1),
                        player(2, ready=True, score_chadajiao=1), player(3, ready=True, score_chadajiao=1)]}
    run_dir = write_run(tmp_path / "run", {"only": [hand]})
    out = write_report(run_dir, n_boot=5)
    md = out.with_suffix(".md").read_text(encoding="utf-8")
    assert out.is_file() and "## Paired comparisons" not in md and "## Fan frequencies" in md
    assert row(fans.hand_type_frequencies(run_dir), hand_type="pinghu")["n_wins"] == 0
    get = {r["metric"]: r for r in shape.game_shape(run_dir).iter_rows(named=True)}
    assert get["chadajiao (查大叫) any"]["estimate"] == 1.0 and get["winners=0"]["estimate"] == 1.0


# -- report: answer first, readable ----------------------------------------------------------------------------

def test_report_answers_first_and_reads_like_prose(tmp_path):
    """One bot at every seat, an uncapped variant: the summary comes first and names the rule change as people
    write it; the by-bot tables, zero by construction, are one sentence; hand types carry Chinese names."""
    from analysis_synth import _base_hands, write_run

    from analysis.report import write_report

    def one_bot(hands):
        for h in hands:
            for p in h["players"]:
                p["bot"] = "greedy"
        return hands

    run_dir = write_run(tmp_path / "run", {"base": one_bot(_base_hands(16)), "open": one_bot(_base_hands(16))},
                        study={"name": "one", "baseline": "base", "variants": ["base", "open"]},
                        overrides={"base": {"void_suit": "none"},
                                   "open": {"void_suit": "none", "scoring": {"cap": None}}})
    md = write_report(run_dir, n_boot=0, session_hands=2).with_suffix(".md").read_text(encoding="utf-8")
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    # "open" plays exactly like "base" (only an unreachable cap differs): flagged first, then the answer.
    assert heads[0].startswith("## Check first")
    assert heads[1:4] == ["## Summary", "## Contents", "## Run"]
    assert "scoring.cap: 4 → uncapped" in md and "None" not in md and "RULES.md" not in md
    assert "Mean score by bot: not shown — every seat is played by the greedy bot" in md
    assert "**By bot" not in md and "Score by bot and component" not in md
    assert "| pinghu 平胡 |" in md and "| qingyise 清一色 |" in md
    assert "Mean score per hand by position" in md and "dealer+3" in md
    # the unit count is headed by its unit
    assert "| variant | seat | component | hands | n_obs |" in md


def test_economy_counts_the_base_in_score_units(tmp_path):
    """``scoring.base`` = 3: coins = N · 3 · score_total − A (score_total is in base units). Seat 0 of the four
    example hands scores 6, −16, −24, 2 base units (see test_economy_from_manifest_and_override): mean −8, so
    with N = 2, A = 1 coins average 2 · 3 · −8 − 1 = −49."""
    from analysis_synth import _base_hands, write_run

    run = write_run(tmp_path / "run", {"tripled": _base_hands(8)},
                    overrides={"tripled": {"scoring": {"base": 3}, "economy": {"room_factor": 2, "rake": 1}}})
    df = economy.economy_table(run, "seat")
    r = row(df, variant="tripled", seat=0, quantity="coins")
    assert (r["room_factor"], r["rake"]) == (2, 1)
    assert r["mean"] == 2 * 3 * -8 - 1
    assert r["se"] == pytest.approx(2 * 3 * math.sqrt(616 / 3 / 4))
