"""Issue 52 item 4, names for machines: every API table has a stable ``id`` column (the JSON's ids), verdict
codes are a closed set, ``compare --format json`` validates against its published JSON Schema (``xuezhan rules
schema compare``) with p-values as full-precision numbers that are never 0, and the report's CSV tables are
named by stable ids and hold numbers, not display strings."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from analysis_golden import RUNS
from cli_helpers import cli_run

import xuezhan
from analysis import compare, family, skill
from analysis.inference import P_MIN, normal_p

ID = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)+$")


def _api_tables(run) -> dict[str, pl.DataFrame]:
    v = run.variants[1]
    return {"hand_type_frequencies": xuezhan.hand_type_frequencies(run), "flags": xuezhan.flag_frequencies(run),
            "fan_distribution": xuezhan.fan_distribution(run), "fan_summary": xuezhan.fans.fan_summary(run),
            "ev seat": xuezhan.expected_value(run, "seat"), "ev position": xuezhan.expected_value(run, "position"),
            "ev bot": xuezhan.expected_value(run, "bot"), "risk": xuezhan.risk_table(run, "bot", n_boot=0),
            "session_risk": xuezhan.session_risk_table(run, "seat", hands=4, n_boot=0, n_sessions=50),
            "score_distribution": xuezhan.risk.score_distribution(run, "bot"), "shape": xuezhan.game_shape(run),
            "economy": xuezhan.economy_table(run, "bot"),
            "paired bot": xuezhan.paired_comparison(run, v, by="bot", components=("score_total", "score_win")),
            "paired seat": xuezhan.paired_comparison(run, v, by="seat"),
            "paired metrics": xuezhan.paired_hand_metrics(run, v), "declines": xuezhan.shape.decline_effect(run),
            **({"session results": xuezhan.sessions.session_results(run, "seat"),
                "session distribution": xuezhan.sessions.session_distribution(run, "seat"),
                "ruin": xuezhan.sessions.ruin_table(run, "seat"), "house take": xuezhan.sessions.house_take(run),
                "session paired": xuezhan.sessions.dealer_rule_effect(run, v, run.baseline)}
               if run.has_sessions else {}),
            **({"skill": skill.skill_table(run, n_boot=0)} if run.duplicate else {})}


@pytest.mark.parametrize("study", ["strategies", "sessions", "skill"])
def test_every_api_table_leads_with_a_unique_stable_id(study):
    run = xuezhan.open_run(RUNS / study)
    for name, df in _api_tables(run).items():
        assert df.columns[0] == "id" and df.height > 0, name
        assert df["id"].null_count() == 0 and all(ID.match(i) for i in df["id"]), (name, df["id"].head(3).to_list())
        assert df.select("variant", "id").is_unique().all(), f"{name}: an id repeats within a variant"
    ev_seat = xuezhan.expected_value(run, "seat")
    assert ev_seat.filter(pl.col("variant") == run.baseline)["id"][0] == "score.score_total.seat0"
    shape = xuezhan.game_shape(run)["id"].to_list()
    assert "shape.hand.cap_binds" in shape and "shape.win.cap_binds" in shape  # one label, two denominators


def test_the_paired_api_ids_are_the_compare_json_ids(capsys):
    run = xuezhan.open_run(RUNS / "strategies")
    a, b = run.baseline, run.variants[1]
    for by in ("bot", "seat"):
        code, out, err = cli_run(["compare", str(RUNS / "strategies"), a, b, "--by", by, "-f", "json"], capsys)
        assert code == 0, err
        doc = json.loads(out)
        api = xuezhan.paired_comparison(run, b, baseline=a, by=by)
        assert [r["id"] for r in doc["scores"]] == api["id"].to_list()
        assert [r["id"] for r in doc["metrics"]] == xuezhan.paired_hand_metrics(run, b, baseline=a)["id"].to_list()
    assert "score.score_total.bot.value.was.greedy" in api["id"].to_list() or by == "seat"


def test_verdict_codes_are_a_closed_set_beside_the_words():
    assert list(family.VERDICT_CODES) == list(compare.VERDICTS)
    assert list(family.VERDICT_CODES.values()) == ["significant_large", "significant_small", "negligible",
                                                   "inconclusive", "no_difference"]
    df = pl.DataFrame({"diff": [1.0, 0.0], "verdict": [compare.VERDICTS[0], compare.VERDICTS[4]], "x": [1, 2]})
    assert family.with_verdict_codes(df).columns == ["diff", "verdict", "verdict_code", "x"]
    assert family.with_verdict_codes(df)["verdict_code"].to_list() == ["significant_large", "no_difference"]


def test_p_values_keep_their_digits_in_the_tail_and_are_never_zero():
    # 2·Φ(−9) = 2.2571768119076845e-19; computed as 1 + erf(−9/√2) it was 0.0 (every digit cancelled)
    assert normal_p(9.0, 1.0) == pytest.approx(2.2571768119076845e-19, rel=1e-12)
    assert normal_p(-8.5, 1.0) == pytest.approx(1.8959069644406714e-17, rel=1e-12)
    assert normal_p(60.0, 1.0) == P_MIN > 0  # below the smallest normal double: that bound, not 0
    scores = pl.DataFrame({"variant": ["b"], "baseline": ["a"], "seat": [0], "component": ["score_total"],
                           "p_value": [0.0], "p_holm": [0.0]})
    doc = family.compare_document(scores, scores.clear().drop("seat", "component").with_columns(
        pl.lit(None, dtype=pl.String).alias("metric")), "a", "b", "seat", 1)
    assert doc["scores"][0]["p_value"] == doc["scores"][0]["p_holm"] == P_MIN
    assert '"p_value": 0.0' not in json.dumps(doc)


@pytest.fixture
def schema(capsys):
    code, out, _ = cli_run(["rules", "schema", "compare"], capsys)  # the published schema, as a user gets it
    assert code == 0
    return json.loads(out)


@pytest.mark.parametrize(("study", "by"), [("strategies", "bot"), ("strategies", "seat"), ("sessions", "seat")])
def test_compare_json_validates_against_the_published_schema(schema, study, by, capsys):
    import jsonschema  # with nbformat in the test extra

    run = xuezhan.open_run(RUNS / study)
    code, out, err = cli_run(["compare", str(RUNS / study), run.baseline, run.variants[1], "--by", by, "-f", "json",
                              "-c", "score_total", "-c", "score_win"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    assert {r["verdict_code"] for r in doc["scores"] + doc["metrics"]} <= set(family.VERDICT_CODES.values())
    # the schema is not vacuous: each of these breaks it
    row = doc["metrics"][0]
    for key, bad in (("p_value", 0.0), ("verdict_code", "maybe"), ("id", "metric.nonesuch"), ("n_units", -1),
                     ("p_holm", "<0.0001")):
        broken = json.loads(out)
        broken["metrics"][0] = {**row, key: bad}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)
    broken = json.loads(out)
    del broken["scores"][0]["id"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_compare_csv_carries_ids_and_verdict_codes(capsys):
    run = xuezhan.open_run(RUNS / "strategies")
    code, out, _ = cli_run(["compare", str(RUNS / "strategies"), run.baseline, run.variants[1], "-f", "csv"], capsys)
    import io

    df = pl.read_csv(io.StringIO(out))
    assert code == 0 and df.columns[:3] == ["table", "id", "label"] and "verdict_code" in df.columns
    assert df["p_value"].dtype == pl.Float64 and set(df["verdict_code"]) <= set(family.VERDICT_CODES.values())


DISPLAY = re.compile(r"^[+\-\u2212]?[\d,]+(\.\d+)?%?( \[.*\])?$|\d \[[\d\u2212-]")
"""A cell holding a number as text (``+0.227``, ``16.00 [14.98, 17.02]``, ``0.2%``): the report's display, not data."""


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, pl.DataFrame]:
    """Each study's report tables: index.csv read, with the directory in column ``dir``."""
    from analysis.report import write_report

    out = {}
    for study in ("strategies", "huazhu"):
        html = write_report(RUNS / study, out=tmp_path_factory.mktemp(study) / "r.html", n_boot=0, session_hands=4)
        tables = html.with_name("r_tables")
        out[study] = pl.read_csv(tables / "index.csv").with_columns(pl.lit(str(tables)).alias("dir"))
    return out


def test_report_csvs_are_named_by_stable_id_and_hold_numbers(reports):
    from pathlib import Path

    for study, index in reports.items():
        assert index["id"].is_unique().all() and (index["file"] == index["id"] + ".csv").all()
        assert "summary.play_changes" in index["id"].to_list() and "ev.seat" in index["id"].to_list()
        for row in index.iter_rows(named=True):
            df = pl.read_csv(Path(row["dir"]) / row["file"], infer_schema_length=None)
            for col in df.columns:
                if df[col].dtype == pl.String:
                    shown = [v for v in df[col].drop_nulls() if DISPLAY.search(v)]
                    assert not shown, f"{study} {row['file']}.{col} holds display text: {shown[:3]}"
            if "verdict" in df.columns:
                assert set(df["verdict_code"].drop_nulls()) <= set(family.VERDICT_CODES.values()), row["file"]
    # the first screen's tables keep their names whatever precedes them (a flags section, populations)
    who = pl.read_csv(Path(reports["strategies"]["dir"][0]) / "summary.who_wins.csv")
    run = xuezhan.open_run(RUNS / "strategies")
    api = xuezhan.paired_comparison(run, run.variants[1], by="bot")
    assert set(api["id"]) <= set(who["id"]) and who["diff"].dtype == who["ci_lo"].dtype == pl.Float64
    dealer = pl.read_csv(Path(reports["huazhu"]["dir"][0]) / "summary.dealer.csv")
    assert (dealer["id"] == "score.score_total.position0").all() and dealer["mean"].dtype == pl.Float64


def test_a_label_slugs_to_one_id_part():
    from analysis.ids import slug

    # a score under settlement.money_scale is a float: its point must not split the id into two parts
    assert [slug(x) for x in (-12, -12.0, -0.087, "q(0.05)", "P(loss>16)", "winners=2", "huazhu (花猪) any",
                              "cap binds (any win)", "wins ≥ 2 fan", "CVaR95 loss")] == [
        "-12", "-12", "-0_087", "q_0_05", "p_loss_gt_16", "winners_2", "huazhu_any", "cap_binds", "wins_2fan",
        "cvar95_loss"]
