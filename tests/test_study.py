"""Studies: file validation, common random numbers across variants, duplicate seating, study.json, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import cli_run

from simulator.rules import load_rules
from simulator.runner import RunError
from simulator.study import STUDY_DIR, StudyError, load_study, run_study, study_variants

CRN_STUDY = """
name: crn
baseline: chengdu
variants:
  - {name: cap3, rules: cap3}
  - {name: nolock, rules: chengdu, set: ["pass_ron_lock=off"]}
  - {name: lenient, rules: chengdu, set: {void_suit: declared_lenient, scoring.cap: 5}}
seats: [greedy, value, greedy, defensive]
hands: 200
seed: 11
chunk_size: 100
"""

DUPLICATE_STUDY = """
name: dup
baseline: {name: greedy, rules: chengdu}
variants:
  - {name: value, rules: chengdu, set: {seats: [value, greedy, greedy, greedy]}}
duplicate: true
hands: 48
seed: 3
chunk_size: 24
"""


def write(tmp_path: Path, text: str, name: str = "study.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def players(out: Path, variant: str) -> pl.DataFrame:
    return pl.read_parquet(out / f"variant={variant}" / "players" / "*.parquet").sort("hand_id", "seat")


def test_variants_share_walls_and_seed(tmp_path: Path):
    out = tmp_path / "run"
    summaries, report = run_study(write(tmp_path, CRN_STUDY), out_dir=out, jobs=2, report=False, progress=False)
    assert report is None
    assert [s.name for s in summaries] == ["chengdu", "cap3", "nolock", "lenient"]
    base = players(out, "chengdu")
    assert base.height == 4 * 200
    for name in ("cap3", "nolock", "lenient"):
        other = players(out, name)
        assert other["dealt"].to_list() == base["dealt"].to_list(), name  # same walls, hand by hand
        manifest = json.loads((out / f"variant={name}" / "manifest.json").read_text())
        assert (manifest["seed"], manifest["hands"], manifest["complete"]) == (11, 200, True)
        assert [s["bot"] for s in manifest["rules"]["seats"]] == ["greedy", "value", "greedy", "defensive"]
    assert base["bot"].cast(pl.String).to_list()[:4] == ["greedy", "value", "greedy", "defensive"]
    lenient = json.loads((out / "variant=lenient" / "manifest.json").read_text())["rules"]
    assert lenient["void_suit"] == "declared_lenient" and lenient["scoring"]["cap"] == 5
    record = json.loads((out / "study.json").read_text())
    assert record["name"] == "crn" and record["baseline"] == "chengdu"
    assert [v["name"] for v in record["variants"]] == ["chengdu", "cap3", "nolock", "lenient"]
    assert record["variants"][1]["digest"] == json.loads(
        (out / "variant=cap3" / "manifest.json").read_text())["digest"]
    assert (record["hands"], record["seed"], record["duplicate"]) == (200, 11, False)


def test_duplicate_rotates_the_seating_over_the_same_wall(tmp_path: Path):
    out = tmp_path / "run"
    run_study(write(tmp_path, DUPLICATE_STUDY), out_dir=out, jobs=1, report=False, progress=False)
    hands = pl.read_parquet(out / "variant=value" / "hands" / "*.parquet")
    assert (hands["deal_id"] == hands["hand_id"] // 4).all()
    assert (hands["rotation"].cast(pl.Int64) == hands["hand_id"] % 4).all()
    p = players(out, "value").with_columns(pl.col("bot").cast(pl.String))
    per_deal = p.group_by("deal_id", "seat").agg(pl.col("dealt").n_unique().alias("walls"))
    assert per_deal["walls"].max() == 1  # the four rotations of a deal see the same tiles in every seat
    value_seats = p.filter(pl.col("bot") == "value").group_by("deal_id").agg(pl.col("seat").sort())
    assert all(s == [0, 1, 2, 3] for s in value_seats["seat"].to_list())  # the tested bot sits everywhere
    greedy = players(out, "greedy")
    assert greedy["dealt"].to_list() == players(out, "value")["dealt"].to_list()


def test_duplicate_needs_whole_deals(tmp_path: Path):
    with pytest.raises(RunError, match="multiple of 4"):
        run_study(write(tmp_path, DUPLICATE_STUDY), out_dir=tmp_path / "o", hands=10, report=False,
                  progress=False)
    assert not (tmp_path / "o").exists()


def test_another_study_into_the_same_directory_is_refused(tmp_path: Path):
    out = tmp_path / "run"
    small = CRN_STUDY.replace("hands: 200", "hands: 8").replace("chunk_size: 100", "chunk_size: 4")
    run_study(write(tmp_path, small), out_dir=out, jobs=1, report=False, progress=False)
    other = write(tmp_path, small.replace("name: crn", "name: other"), "other.yaml")
    with pytest.raises(RunError, match="holds study 'crn'"):
        run_study(other, out_dir=out, jobs=1, resume=True, report=False, progress=False)


@pytest.mark.parametrize("path", sorted(STUDY_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_studies_are_valid(path: Path):
    study, _ = load_study(path)
    variants = study_variants(study, path)
    assert len({v.name for v in variants}) == len(variants)
    assert len({v.rules.digest() for v in variants}) == len(variants), "two variants play the same game"


def test_shipped_studies_say_what_they_compare():
    def rules(study: str, variant: str):
        s, p = load_study(study)
        return next(v.rules for v in study_variants(s, p) if v.name == variant)

    assert {rules("huazhu", v).void_suit for v in ("huazhu_16x", "huazhu_8x", "huazhu_32x")} == {"none"}
    assert [rules("huazhu", v).settlement.huazhu_penalty for v in ("huazhu_16x", "huazhu_8x", "huazhu_32x")] == [
        16, 8, 32]
    assert [rules("caps", v).scoring.cap for v in ("cap3", "cap4", "cap5", "uncapped")] == [3, 4, 5, None]
    assert {b.bot for b in rules("pass_lock", "same_tile").seats} == {"value"}
    assert rules("pass_lock", "off").pass_ron_lock == "off"
    assert load_study("strategies")[0].duplicate
    assert rules("quickstart", "chengdu").digest() == load_rules("chengdu").digest()


BAD_STUDIES = [
    (CRN_STUDY + "colour: red\n", "colour: unknown key"),
    (CRN_STUDY.replace("name: crn\n", ""), "name: Field required"),
    (CRN_STUDY.replace("name: crn\n", "name: ../up\n"), "name: String should match pattern"),
    ("name: x\nbaseline: chengdu\nhands: 10\n", "variants: Field required"),
    ("name: x\nbaseline: chengdu\nvariants: []\nhands: 10\n", "variants"),
    ("name: x\nbaseline: chengdu\nvariants: [{rules: cap3}]\nhands: 10\n", "variants.0.name"),
    (CRN_STUDY.replace("hands: 200", "hands: 0"), "hands"),
    (CRN_STUDY.replace("rules: cap3", "rules: no_such_rules"), "no_such_rules"),
    (CRN_STUDY.replace("scoring.cap: 5", "scoring.cap: banana"), "scoring.cap"),
    (CRN_STUDY.replace("name: cap3", "name: chengdu"), "used twice"),
    (CRN_STUDY.replace("seats: [greedy, value, greedy, defensive]", "seats: [greedy]"), "seats"),
    ("name: [unclosed\n", "malformed YAML"),
    ("- just a list\n", "must be a YAML mapping"),
]


@pytest.mark.parametrize(("text", "message"), BAD_STUDIES)
def test_bad_study_files_one_line_and_nothing_written(text, message, tmp_path: Path, capsys):
    path = write(tmp_path, text)
    code, _, err = cli_run(["study", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.yaml"]


def test_missing_study_file(tmp_path: Path, capsys):
    code, _, err = cli_run(["study", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2 and "not found" in err
    with pytest.raises(StudyError):
        load_study("no_such_study")


def test_cli_runs_the_shipped_quickstart(tmp_path: Path, capsys):
    code, out, _ = cli_run(["study", "quickstart", "--hands", "12", "--jobs", "1", "--no-report", "--quiet",
                            "--out", str(tmp_path)], capsys)
    assert code == 0
    assert [line.split(":")[0] for line in out.splitlines()[:3]] == ["chengdu", "cap3", "uncapped"]
    assert out.splitlines()[3].startswith("simulated 36 hands in ")
    assert json.loads((tmp_path / "study.json").read_text())["hands"] == 12


def test_report_is_written_when_available(tmp_path: Path):
    pytest.importorskip("analysis.report")
    small = CRN_STUDY.replace("hands: 200", "hands: 40").replace("chunk_size: 100", "chunk_size: 20")
    _, report = run_study(write(tmp_path, small), out_dir=tmp_path / "run", jobs=1, progress=False)
    assert report is not None and Path(report).is_file()
