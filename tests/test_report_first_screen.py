"""Issue 28: what a rule designer reads — play counted as play, the first screen, one Holm family shared with
``xuezhan compare`` (ids, schema, test count), every table as CSV, ordered sweeps, figures into your own axes,
session runs clustered by session."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from analysis_synth import _base_hands, example_run, write_run
from cli_helpers import cli_run
from matplotlib.figure import Figure

from analysis import compare, ev, family, fans, plots, risk, sweep
from analysis.diagnostics import differing_hands
from analysis.fmt import md_table, round_to_se
from analysis.load import open_run
from analysis.play import PLAY, hand_differences
from analysis.report import build_sections, write_report


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    return example_run(tmp_path_factory.mktemp("ex") / "run")


def test_a_payment_only_change_is_not_different_play(example):
    """base and alt differ only in the 花猪 penalty: hand 2's scores differ, nobody's decisions do."""
    run = open_run(example)
    assert differing_hands(run, "alt", "base") == (0, 4)
    assert differing_hands(run, "alt", "base", "any") == (1, 4)


def test_play_differences_are_counted_by_kind(tmp_path):
    alt = copy.deepcopy(_base_hands(16))
    alt[1]["turns"] = 41  # one more discard in hand 1
    alt[3]["players"][1]["declined_wins"] = 2  # a different decline in hand 3
    run = open_run(write_run(tmp_path / "run", {"base": _base_hands(16), "alt": alt}))
    k, n, kinds = hand_differences(run, "alt", "base")
    assert (k, n) == (2, 4) and kinds["discards"] == 1 and kinds["declines / declarations"] == 1
    assert kinds["wins / hand end"] == 0 and set(kinds) == set(PLAY)


def test_first_screen_answers_who_wins_and_how_play_changes(example):
    out = write_report(example, n_boot=0, session_hands=2)
    first = out.with_suffix(".md").read_text(encoding="utf-8").splitlines()[:40]
    text = "\n".join(first)
    assert "Who wins" in text and "How play changes" in text
    assert "| alt − base | greedy |" in text and "| alt − base | value |" in text  # by bot: two bots
    assert "0 of 4 (0.0%)" in text  # play differs on no hand: only payments changed
    html = out.read_text(encoding="utf-8")
    assert "<html lang='en'>" in html and "name='viewport'" in html and "<caption>" in html and "<h4>" not in html


def test_every_table_is_also_a_csv(example, tmp_path):
    out = write_report(example, out=tmp_path / "r.html", n_boot=0, session_hands=2)
    tables = tmp_path / "r_tables"
    index = pl.read_csv(tables / "index.csv")
    sections = build_sections(open_run(example), "base", n_boot=0, session_hands=2)
    expected = [(s.title, *t) for s in sections for t in s.tables()]
    assert index.height == len(expected) and out.exists()
    assert sorted(p.name for p in tables.iterdir()) == sorted(["index.csv", *index["file"]])
    for (title, table_id, cap, obj), row in zip(expected, index.iter_rows(named=True), strict=True):
        assert (row["section"], row["caption"], row["id"], row["file"]) == (title, cap, table_id, f"{table_id}.csv")
        csv = pl.read_csv(tables / row["file"], infer_schema_length=None)
        assert csv.height == obj.height and [c for c in csv.columns if c != "verdict_code"] == obj.columns


def test_p_holm_is_floored_and_paired_tables_are_cut_to_what_a_reader_needs(example):
    assert "<0.0001" in md_table(pl.DataFrame({"p_holm": [5.4e-05], "p_value": [0.5]}))
    assert "5.4e-05" not in md_table(pl.DataFrame({"p_holm": [5.4e-05]}))
    rounded = round_to_se(pl.DataFrame({"mean": [0.123456], "se": [0.0031], "ci_lo": [0.11738], "ci_hi": [0.12953]}))
    assert rounded.row(0) == pytest.approx((0.1235, 0.0031, 0.1174, 0.1295))


def test_compare_json_has_ids_schema_and_the_reports_holm_family(example, capsys):
    code, out, err = cli_run(["compare", str(example), "base", "alt", "--by", "seat", "-f", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    fam = family.paired_family(open_run(example), "alt", "base")
    assert doc["schema_version"] == family.SCHEMA_VERSION == 1 and doc["holm_tests"] == family.family_tests(fam)
    ids = [r["id"] for r in doc["metrics"]]
    assert ids[:2] == ["metric.exhaustive_draw", "metric.winners"] and "metric.huazhu_any" in ids
    assert set(family.HAND_METRIC_IDS) == set(compare.HAND_METRICS)
    assert [r["id"] for r in doc["scores"]] == [f"score.score_total.seat{s}" for s in range(4)]
    assert doc["scores"][0]["label"] == "seat 0: score per hand"
    # the same p_holm as the report's paired section (one family), not a family of the printed rows only
    report_p = fam["by_seat"]["p_holm"].to_list()
    assert [r["p_holm"] for r in doc["scores"]] == report_p
    code, out, _ = cli_run(["compare", str(example), "base", "alt", "--by", "seat"], capsys)
    assert f"the {family.family_tests(fam)} tests of this comparison" in " ".join(out.split())


def _sweep_run(root: Path) -> Path:
    return write_run(root, {"h16": _base_hands(16), "h8": _base_hands(8), "h32": _base_hands(32)},
                     overrides={v: {"void_suit": "none", "settlement": {"huazhu_penalty": p}}
                                for v, p in (("h16", 16), ("h8", 8), ("h32", 32))},
                     study={"name": "sweep", "baseline": "h16", "variants": ["h16", "h8", "h32"], "hands": 4,
                            "seed": 7, "duplicate": False})


def test_an_ordered_sweep_gets_a_dose_response(tmp_path):
    run = open_run(_sweep_run(tmp_path / "run"))
    assert sweep.sweep_rule(run, "h16") == "settlement.huazhu_penalty"
    metrics = {v: compare.paired_hand_metrics(run, v, baseline="h16") for v in ("h8", "h32")}
    dose = sweep.dose_table(run, "h16", "settlement.huazhu_penalty", metrics)
    order = dose.sort("order").unique("value", maintain_order=True)["value"].to_list()
    assert order == ["8", "16", "32"]  # the rule's order, not the variants'
    assert dose.filter(pl.col("baseline"))["diff"].to_list() == [0.0] * dose["metric"].n_unique()
    titles = [s.title for s in build_sections(run, "h16", n_boot=0, session_hands=2)]
    assert titles[titles.index("Summary") + 1] == "Dose–response: settlement.huazhu_penalty"
    assert sweep.sweep_rule(open_run(example_run(tmp_path / "two")), "base") is None  # one variant: no sweep


def test_every_plot_draws_into_given_axes(example):
    run = open_run(example)
    fig = Figure()
    ax = fig.add_subplot()
    ev_seat = ev.expected_value(run, "seat")
    for draw in (lambda a: plots.ev_errorbars(ev_seat, ax=a), lambda a: plots.component_stack(ev_seat, ax=a),
                 lambda a: plots.fan_frequency_dots(fans.hand_type_frequencies(run), ax=a),
                 lambda a: plots.risk_quantiles(risk.risk_table(run, "seat", n_boot=0), ax=a)):
        assert draw(ax) is fig
    cmp = compare.paired_hand_metrics(run, "alt", baseline="base")
    panels = cmp["measured_in"].n_unique()
    axes = Figure().subplots(panels, 1)
    assert plots.comparison_deltas(cmp, ["metric"], ax=list(axes)) is axes[0].figure
    with pytest.raises(ValueError, match="panel"):
        plots.comparison_deltas(cmp, ["metric"], ax=ax)
    assert plots.COLORS[0] == "#0072B2"  # Okabe–Ito


def test_session_runs_cluster_by_session(tmp_path):
    from simulator.run import runner

    spec = runner.RunSpec(hands=4 * 6, seed=3, jobs=1, progress=False)
    runner.run_variants(tmp_path, [runner.Variant.load("chengdu", ["session.hands=6"], "s")], spec)
    run = open_run(tmp_path)
    assert (run.cluster, run.unit) == ("unit_id", "session")
    table = ev.expected_value(run, "seat", components=False)
    assert set(table["n_units"]) == {4} and set(table["n_hands"]) == {24}  # 4 sessions of 6 hands
    wins = run.wins().select("unit_id", "hand_id").collect()
    assert (wins["unit_id"].to_numpy() == wins["hand_id"].to_numpy() // 6).all()
    assert np.all(run.players().select("unit_id").collect()["unit_id"].to_numpy() >= 0)


def _holm(p: list[float]) -> list[float]:
    """Holm's step-down adjustment written out: sort ascending, p_(i)·(m − i), running maximum, at most 1."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, p[i] * (len(p) - rank)))
        out[i] = running
    return out


def test_the_holm_family_is_every_paired_table_once():
    """The family built here from the three paired tables a comparison prints (score by bot × every component,
    score by seat, hand metrics: each computed on its own) and adjusted by Holm written out, against the
    report's family and ``xuezhan compare --format json``: a table dropped or counted twice changes the size
    and the adjusted p-values."""
    run = open_run(Path(__file__).parent / "data" / "analysis_golden" / "huazhu")
    base = run.baseline
    parts = [compare.paired_comparison(run, "huazhu_8x", baseline=base, by="bot", components=ev.COMPONENTS),
             compare.paired_comparison(run, "huazhu_8x", baseline=base, by="seat"),
             compare.paired_hand_metrics(run, "huazhu_8x", baseline=base)]
    raw = [p for df in parts for p in df["p_value"].to_list() if p is not None]
    want = iter(_holm(raw))
    expected = [[next(want) if p is not None else None for p in df["p_value"].to_list()] for df in parts]
    fam = family.paired_family(run, "huazhu_8x", base)
    assert family.family_tests(fam) == len(raw) > 10
    assert sum(0 < p < 1 for p in _holm(raw)) >= 3  # adjusted p-values below 1: the family size shows
    for got, want_p in zip((fam["by_bot"], fam["by_seat"], fam["metrics"]), expected, strict=True):
        got_p = got["p_holm"].to_list()
        assert [g is None for g in got_p] == [w is None for w in want_p]
        assert [g for g in got_p if g is not None] == pytest.approx([w for w in want_p if w is not None], rel=1e-12)


def test_figures_are_embedded_as_svg_with_text_smaller_than_png(example, tmp_path):
    """Issue 52 item 9: the report's figures are SVG (text as text: sharp, searchable, smaller than the PNG it
    replaced), embedded in the one file, the same bytes for the same figure."""
    import base64
    import re
    import xml.etree.ElementTree as ET

    page = write_report(example, out=tmp_path / "r.html", n_boot=0, session_hands=2).read_text(encoding="utf-8")
    srcs = re.findall(r"<img alt='[^']*' src='([^']*)'>", page)
    assert len(srcs) >= 5 and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)
    assert "image/png" not in page
    for src in srcs:
        root = ET.fromstring(base64.b64decode(src.split(",", 1)[1]))
        assert root.tag.endswith("svg") and any(e.tag.endswith("text") for e in root.iter())
    figs = [obj for s in build_sections(open_run(example), "base", n_boot=0, session_hands=2)
            for kind, _, obj in s.items if kind == "figure"]
    assert plots.to_svg(figs[0]) == plots.to_svg(figs[0])  # no date, fixed ids
    assert sum(len(plots.to_svg(f)) for f in figs) < sum(len(plots.to_png(f)) for f in figs)
