"""analysis on real simulated runs (``xuezhan study`` through the CLI): internal consistency of the logs and of
every table, CRN pairing, the report written by the study, and the report/compare commands."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from analysis import compare, economy, ev, fans, risk, shape
from analysis.load import open_run
from analysis.report import write_report
from simulator import cli
from simulator.logs.schema import SCORE_COMPONENTS

pytestmark = pytest.mark.slow


STUDY = """\
name: analysis_check
baseline: huazhu_16x
variants:
  - {name: huazhu_8x, rules: huazhu_8x}
  - {name: cap3, rules: huazhu_16x, set: {scoring.cap: 3}}
seats: [greedy, value, defensive, defensive]
hands: 1000
seed: 11
"""

DUPLICATE = """\
name: analysis_dup
baseline: {name: greedy, rules: chengdu}
variants:
  - {name: value, rules: chengdu, set: {seats: [value, greedy, greedy, greedy]}}
seats: [greedy, greedy, greedy, greedy]
duplicate: true
hands: 400
seed: 12
"""


def xuezhan(*args: str) -> subprocess.CompletedProcess:
    """``xuezhan *args`` through the console entry point (``cli.main``) in this process, as a finished process:
    exit code, stdout, stderr (no interpreter start and imports per command)."""
    out, err, old = io.StringIO(), io.StringIO(), sys.argv
    sys.argv = ["xuezhan", *map(str, args)]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old
    return subprocess.CompletedProcess(["xuezhan", *map(str, args)], code, out.getvalue(), err.getvalue())


def study(tmp: Path, text: str) -> Path:
    (tmp / "study.yaml").write_text(text)
    res = xuezhan("study", tmp / "study.yaml", "--out", tmp / "run", "-j", "2", "-q")
    assert res.returncode == 0, res.stderr
    return tmp / "run"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return study(tmp_path_factory.mktemp("real"), STUDY)


@pytest.fixture(scope="module")
def dup_dir(tmp_path_factory):
    return study(tmp_path_factory.mktemp("dup"), DUPLICATE)


def test_logs_are_consistent(run_dir):
    run = open_run(run_dir)
    assert run.variants == ("huazhu_16x", "huazhu_8x", "cap3") and run.baseline == "huazhu_16x"
    assert run.hand_counts()["n_hands"].to_list() == [1000] * 3
    players = run.players().collect()
    assert (players.select(pl.sum_horizontal(SCORE_COMPONENTS) == pl.col("score_total")).to_series().all())
    per_hand = players.group_by("variant", "hand_id").agg(pl.col("score_total").sum(), pl.len())
    assert (per_hand["score_total"] == 0).all() and (per_hand["len"] == 4).all()
    # common random numbers: the same hand_id was dealt the same tiles to the same seat in every variant
    dealt = players.pivot(on="variant", index=["hand_id", "seat"], values="dealt")
    assert (dealt["huazhu_16x"] == dealt["huazhu_8x"]).all() and (dealt["huazhu_16x"] == dealt["cap3"]).all()


def test_frequencies_add_up(run_dir):
    run = open_run(run_dir)
    won = run.players().filter(pl.col("won")).group_by("variant").len().collect()
    n_wins = dict(won.iter_rows())
    ht = fans.hand_type_frequencies(run)
    totals = ht.group_by("variant").agg(pl.col("k_wins").sum(), pl.col("n_wins").first())
    for v, k, n in totals.iter_rows():
        assert k == n == n_wins[v]
    fl = fans.flag_frequencies(run).filter(pl.col("flag") == "pinghu")
    assert (fl["k_wins"] == fl["n_wins"]).all()  # every win is at least pinghu
    dist = fans.fan_distribution(run).group_by("variant", "measure").agg(pl.col("p").sum(), pl.col("k").sum())
    assert ((dist["p"] - 1).abs() < 1e-9).all()
    wph = fans.fan_summary(run).filter(pl.col("quantity") == "wins_per_hand")
    assert {v: m * 1000 for v, m in wph.select("variant", "mean").iter_rows()} == pytest.approx(n_wins)


def test_ev_components_and_zero_sum(run_dir):
    df = ev.expected_value(run_dir, "bot")
    for _, part in df.group_by("variant", "bot"):
        total = part.filter(pl.col("component") == "score_total")["mean"].item()
        assert part.filter(pl.col("component") != "score_total")["mean"].sum() == pytest.approx(total)
    totals = df.filter(pl.col("component") == "score_total")
    zero = totals.group_by("variant").agg((pl.col("mean") * pl.col("n_obs")).sum())
    assert (zero["mean"].abs() < 1e-6).all()
    assert totals["se"].is_not_null().all() and (totals["n_hands"] == 1000).all()


def test_shape_and_risk_match_direct_counts(run_dir):
    run = open_run(run_dir)
    players = run.players("huazhu_16x").collect()
    sh = shape.game_shape(run).filter(pl.col("variant") == "huazhu_16x")
    get = dict(zip(sh["metric"], sh["estimate"], strict=True))
    assert get["winners per hand"] == pytest.approx(players["won"].sum() / 1000)
    assert get["self-draw share"] + get["discard-win share"] + get["rob-kong share"] == pytest.approx(1.0)
    assert sum(get[f"winners={k}"] for k in range(4)) == pytest.approx(1.0)
    assert get["huazhu (花猪) rate"] == pytest.approx(players["huazhu"].mean())
    rk = risk.risk_table(run, "bot", n_boot=20)
    sub = rk.filter((pl.col("variant") == "huazhu_16x") & (pl.col("bot") == "defensive"))
    est = dict(zip(sub["statistic"], sub["estimate"], strict=True))
    scores = players.filter(pl.col("bot") == "defensive")["score_total"]
    assert est["P(loss>0)"] == pytest.approx((scores < 0).mean())
    assert est["mean"] == pytest.approx(scores.mean())
    assert (sub["n_obs"] == 2000).all() and (sub["n_hands"] == 1000).all()


def test_paired_comparisons(run_dir):
    run = open_run(run_dir)
    same = compare.paired_comparison(run, "huazhu_16x", baseline="huazhu_16x", by="seat")
    assert (same["diff"] == 0).all()
    cap = compare.paired_comparison(run, "cap3", by="seat", components=["score_total"])
    assert (cap["n_hands"] == 1000).all()
    varying = cap.filter(pl.col("se_paired") > 0)
    assert varying.height == 4  # the cap changes some seat's score in every seat: no row is left out
    assert (varying["vrf"] > 1).all()  # same walls: pairing removes variance
    hz = compare.paired_comparison(run, "huazhu_8x", by="bot", components=list(SCORE_COMPONENTS))
    assert set(zip(hz["bot"], hz["bot_baseline"], strict=True)) == {("greedy", "greedy"), ("value", "value"),
                                                                    ("defensive", "defensive")}
    metrics = compare.paired_hand_metrics(run, "huazhu_8x")
    assert metrics["n_hands"].to_list() == [1000] * metrics.height


def test_economy_house_take(run_dir):
    df = economy.economy_table(run_dir, "seat", room_factor=3, rake=2)
    coins = df.filter((pl.col("variant") == "cap3") & (pl.col("quantity") == "coins"))
    assert (coins["mean"] * coins["n_obs"]).sum() == pytest.approx(-4 * 2 * 1000)


def test_study_wrote_the_report(run_dir):
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    run = open_run(run_dir)
    for v in run.variants:
        assert run.digest(v)[:12] in html and run.digest(v)[:12] in md
    assert html.count("data:image/svg+xml;base64,") >= 10
    for heading in ("Summary", "Contents", "Game shape", "Fan frequencies", "Expected value", "Risk", "Economy",
                    "Paired: huazhu_8x − huazhu_16x", "Paired: cap3 − huazhu_16x"):
        assert f"## {heading}" in md and f">{heading}</h2>" in html
    assert md.index("## Summary") < md.index("## Contents") < md.index("## Run")
    assert "<a href='#paired-cap3--huazhu_16x'>" in html and "(#paired-cap3--huazhu_16x)" in md
    assert "settlement.huazhu_penalty: 16 → 8" in md
    assert not list(run_dir.glob(".report*"))  # no temporaries left


def test_duplicate_strategy_pairs(dup_dir):
    df = compare.paired_comparison(dup_dir, "value", by="bot")
    pairs = {(r["bot"], r["bot_baseline"]): r for r in df.iter_rows(named=True)}
    assert set(pairs) == {("value", "greedy"), ("greedy", "greedy")}
    assert pairs[("value", "greedy")]["n_obs"] == 400 and pairs[("greedy", "greedy")]["n_obs"] == 1200
    assert pairs[("value", "greedy")]["n_hands"] == 400
    # duplicate seating: the 400 hands are 100 walls, the independent unit
    assert {r["n_units"] for r in pairs.values()} == {100} and set(df["unit"]) == {"wall"}
    # the rest of the table loses what the test bot gains, hand by hand
    v, g = pairs[("value", "greedy")], pairs[("greedy", "greedy")]
    assert v["diff"] * 400 + g["diff"] * 1200 == pytest.approx(0, abs=1e-6)
    ev_bot = ev.expected_value(dup_dir, "bot", components=False).filter(pl.col("variant") == "value")
    assert set(ev_bot["bot"]) == {"value", "greedy"}


def test_cli_report_and_compare(run_dir, tmp_path):
    res = xuezhan("compare", run_dir, "huazhu_16x", "huazhu_8x", "--by", "seat")
    assert res.returncode == 0, res.stderr
    assert "huazhu_8x − huazhu_16x" in res.stdout and "seat 0" in res.stdout
    out = tmp_path / "r.html"
    res = xuezhan("report", run_dir, "--baseline", "cap3", "--out", out, "--boot", "0")  # intervals: the study's
    assert res.returncode == 0, res.stderr
    assert out.is_file() and (tmp_path / "r.md").is_file()
    assert "baseline cap3" in (tmp_path / "r.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("args", "message"), [
    (["report", "{missing}"], "run directory not found"),
    (["report", "{run}", "--baseline", "nope", "--out", "{tmp}/x.html"], "no variant 'nope'"),
    (["compare", "{run}", "huazhu_16x", "nope"], "no variant 'nope'"),
    (["compare", "{run}", "huazhu_16x", "cap3", "--by", "table"], "'table' is not one of 'bot', 'seat'"),
    (["compare", "{run}", "huazhu_16x", "cap3", "-c", "score_bogus"], "--component 'score_bogus'"),
    (["report", "{run}", "--boot", "20", "--out", "{tmp}/x.html"], "--boot must be 0 (no intervals) or at least 100"),
])
def test_cli_errors_are_one_line(run_dir, tmp_path, args, message):
    fill = {"missing": tmp_path / "missing", "run": run_dir, "tmp": tmp_path}
    res = xuezhan(*[a.format(**fill) for a in args])
    assert res.returncode == 2
    assert res.stderr.startswith("error: ") and message in res.stderr and res.stderr.count("\n") == 1
    assert not list(tmp_path.glob("*.html")) and not list(tmp_path.glob(".*"))


def test_write_report_failure_leaves_nothing(run_dir, tmp_path, monkeypatch):
    import analysis.report as report

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(report, "render_markdown", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        write_report(run_dir, out=tmp_path / "report.html", n_boot=5)
    assert list(tmp_path.iterdir()) == []
