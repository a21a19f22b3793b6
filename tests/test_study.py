"""Studies: file validation, common random numbers across variants, duplicate seating, study.json, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import cli_run

from simulator.rules import load_rules
from simulator.run.runner import RunError
from simulator.run.study import STUDY_DIR, StudyError, load_study, study_variants
from xuezhan.studies import run_study

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
    return pl.read_parquet(out / "players" / f"variant={variant}" / "*.parquet").sort("hand_id", "seat")


def test_variants_share_walls_and_seed(tmp_path: Path):
    out = tmp_path / "run"
    result = run_study(write(tmp_path, CRN_STUDY), out_dir=out, jobs=2, report=False, progress=False)
    summaries = result.summaries
    assert result.report is None and result.out_dir == out
    assert [s.name for s in summaries] == ["chengdu", "cap3", "nolock", "lenient"]
    base = players(out, "chengdu")
    assert base.height == 4 * 200
    for name in ("cap3", "nolock", "lenient"):
        other = players(out, name)
        assert other["dealt"].to_list() == base["dealt"].to_list(), name  # same walls, hand by hand
        manifest = json.loads((out / "_variants" / f"variant={name}" / "_manifest.json").read_text())
        assert (manifest["seed"], manifest["hands"], manifest["complete"]) == (11, 200, True)
        assert [s["bot"] for s in manifest["rules"]["seats"]] == ["greedy", "value", "greedy", "defensive"]
    assert base["bot"].cast(pl.String).to_list()[:4] == ["greedy", "value", "greedy", "defensive"]
    lenient = json.loads((out / "_variants" / "variant=lenient" / "_manifest.json").read_text())["rules"]
    assert lenient["void_suit"] == "declared_lenient" and lenient["scoring"]["cap"] == 5
    record = json.loads((out / "study.json").read_text())
    assert record["name"] == "crn" and record["baseline"] == "chengdu"
    assert [v["name"] for v in record["variants"]] == ["chengdu", "cap3", "nolock", "lenient"]
    assert record["variants"][1]["digest"] == json.loads(
        (out / "_variants" / "variant=cap3" / "_manifest.json").read_text())["digest"]
    assert (record["hands"], record["seed"], record["duplicate"]) == (200, 11, False)


def test_duplicate_rotates_the_seating_over_the_same_wall(tmp_path: Path):
    out = tmp_path / "run"
    run_study(write(tmp_path, DUPLICATE_STUDY), out_dir=out, jobs=1, report=False, progress=False)
    hands = pl.read_parquet(out / "hands" / "variant=value" / "*.parquet")
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

    assert {rules("huazhu", f"{v}.{p}").void_suit for v in ("huazhu_16x", "huazhu_8x", "huazhu_32x")
            for p in ("erring", "defensive")} == {"none"}
    assert [rules("huazhu", f"{v}.casual").settlement.huazhu_penalty
            for v in ("huazhu_16x", "huazhu_8x", "huazhu_32x")] == [16, 8, 32]
    assert [rules("caps", f"{v}.mixed").scoring.cap for v in ("cap3", "cap4", "cap5", "uncapped")] == [3, 4, 5, None]
    assert {b.bot for b in rules("pass_lock", "same_tile.strong").seats} == {"expert"}
    assert {(b.bot, b.temperature) for b in rules("huazhu", "huazhu_8x.casual").seats} == {
        ("expert", 0.5), ("greedy", 0.0), ("value", 0.0)}  # the players who end as 花猪, and experts that err
    assert rules("pass_lock", "off.greedy").pass_ron_lock == "off"
    for name in ("huazhu", "caps", "haidilao", "pass_lock"):  # rule questions: asked of every kind of player
        study = load_study(name)[0]
        assert study.duplicate and (study.populations == "default" or len(study.populations) == 4)
    # 花猪 is paid by defensive bots and experts that err: huazhu's populations are where it happens
    assert {b.bot for b in rules("huazhu", "huazhu_8x.defensive").seats} == {"defensive"}
    assert load_study("strategies")[0].duplicate
    quick = rules("quickstart", "chengdu")  # the default rules, played by experts (they react to the cap)
    assert {b.bot for b in quick.seats} == {"expert"}
    assert quick.model_copy(update={"seats": load_rules("chengdu").seats}).digest() == load_rules("chengdu").digest()


BAD_STUDIES = [
    (CRN_STUDY + "colour: red\n", "colour: unknown key"),
    (CRN_STUDY.replace("name: crn\n", ""), "name: Field required"),
    (CRN_STUDY.replace("name: crn\n", "name: ../up\n"), "name: String should match pattern"),
    ("name: x\nbaseline: chengdu\nvariants: {cap3: cap3}\nhands: 10\n", "variants"),
    ("name: x\nbaseline: chengdu\nvariants: [{rules: cap3}]\nhands: 10\n", "variants.0.name"),
    (CRN_STUDY.replace("hands: 200", "hands: 0"), "hands"),
    (CRN_STUDY.replace("rules: cap3", "rules: no_such_rules"), "no_such_rules"),
    (CRN_STUDY.replace("scoring.cap: 5", "scoring.cap: banana"), "scoring.cap"),
    (CRN_STUDY.replace("name: cap3", "name: chengdu"), "used twice"),
    (CRN_STUDY.replace("seats: [greedy, value, greedy, defensive]", "seats: [greedy]"), "seats"),
    (CRN_STUDY + "contrasts: [[cap3, capp3]]\n", "contrasts: [cap3, capp3]: no arm named 'capp3'"),
    (CRN_STUDY + "contrasts: [[chengdu, cap3]]\n", "other than the baseline (chengdu)"),
    (CRN_STUDY + "contrasts: [[cap3, cap3]]\n", "two different arms"),
    (CRN_STUDY + "contrasts: [[cap3, nolock], [cap3, nolock]]\n", "contrasts: the same pair is listed twice"),
    (CRN_STUDY + "contrasts: [[cap3]]\n", "contrasts.0"),
    ("name: [unclosed\n", "malformed YAML"),
    ("- just a list\n", "must be a YAML mapping"),
]


@pytest.mark.parametrize(("text", "message"), BAD_STUDIES)
def test_bad_study_files_one_line_and_nothing_written(text, message, tmp_path: Path, capsys):
    path = write(tmp_path, text)
    code, _, err = cli_run(["study", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.yaml"]


def test_a_non_utf8_study_file_is_one_error_line(tmp_path: Path, capsys):
    path = tmp_path / "study.yaml"
    path.write_bytes(b"name: caf\xe9\nhands: 8\n")  # Latin-1, as an old editor would save it
    code, _, err = cli_run(["study", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "not UTF-8" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.yaml"]


def test_missing_study_file(tmp_path: Path, capsys):
    code, _, err = cli_run(["study", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2 and "not found" in err
    with pytest.raises(StudyError, match="study 'no_such_study' not found"):
        load_study("no_such_study")


def test_cli_runs_the_shipped_quickstart(tmp_path: Path, capsys):
    code, out, _ = cli_run(["study", "quickstart", "--hands", "12", "--jobs", "1", "--no-report", "--quiet",
                            "--out", str(tmp_path)], capsys)
    assert code == 0
    assert [line.split(":")[0] for line in out.splitlines()[:3]] == ["chengdu", "cap3", "uncapped"]
    assert out.splitlines()[3].startswith("simulated 36 hands in ")
    assert json.loads((tmp_path / "study.json").read_text())["hands"] == 12


def test_report_is_written_when_available(tmp_path: Path):
    small = CRN_STUDY.replace("hands: 200", "hands: 40").replace("chunk_size: 100", "chunk_size: 20")
    report = run_study(write(tmp_path, small), out_dir=tmp_path / "run", jobs=1, progress=False).report
    assert report is not None and Path(report).is_file()


def test_contrasts_add_paired_sections_between_two_variants(tmp_path: Path):
    """A study's ``contrasts`` compare two variants directly (B − A on the same hands), besides each against the
    baseline: recorded in study.json, in the summary and as their own paired section with the hand metrics."""
    small = (CRN_STUDY.replace("hands: 200", "hands: 40").replace("chunk_size: 100", "chunk_size: 20")
             + "contrasts: [[cap3, lenient]]\n")
    report = run_study(write(tmp_path, small), out_dir=tmp_path / "run", jobs=1, progress=False).report
    assert json.loads((tmp_path / "run" / "study.json").read_text())["contrasts"] == [["cap3", "lenient"]]
    md = Path(report).with_suffix(".md").read_text()
    assert "\nlenient − cap3 (scoring.cap: 3 → 5; void_suit: declared → declared_lenient); play differs on" in md
    section = md.split("## Paired: lenient − cap3\n", 1)[1]
    assert "lenient minus cap3 on the same hands" in section.split("\n\n")[0]
    assert "\n| wins ≥ 2 fan | 40 |" in section and "\n| declined wins | 40 |" in section  # its hand metrics
    assert md.count("## Paired: ") == 4  # three variants against the baseline, then the contrast


def test_a_baseline_only_study_runs(tmp_path: Path):
    path = write(tmp_path, "name: solo\nbaseline: qq_sichuan\nhands: 8\nseed: 5\n")
    result = run_study(path, out_dir=tmp_path / "run", jobs=1, report=False, progress=False)
    assert [s.name for s in result.summaries] == ["qq_sichuan"] and result.findings == []
    assert json.loads((tmp_path / "run" / "study.json").read_text())["variants"][0]["name"] == "qq_sichuan"


def test_cli_set_and_seed_apply_to_every_arm(tmp_path: Path, capsys):
    small = CRN_STUDY.replace("hands: 200", "hands: 8").replace("chunk_size: 100", "chunk_size: 4")
    path = write(tmp_path, small)
    code, _, err = cli_run(["study", str(path), "--out", str(tmp_path / "run"), "--seed", "9", "--jobs", "1",
                            "--set", "settlement.huazhu_penalty=4", "--set", "seats=[value, value, value, value]",
                            "--no-report", "--quiet"], capsys)
    assert code == 0, err
    for name in ("chengdu", "cap3", "nolock", "lenient"):
        manifest = json.loads((tmp_path / "run" / "_variants" / f"variant={name}" / "_manifest.json").read_text())
        assert manifest["seed"] == 9 and manifest["rules"]["settlement"]["huazhu_penalty"] == 4
        assert {s["bot"] for s in manifest["rules"]["seats"]} == {"value"}
    assert json.loads((tmp_path / "run" / "_variants" / "variant=cap3" / "_manifest.json").read_text())[
        "rules"]["scoring"][
        "cap"] == 3  # the variant's own change survives
    record = json.loads((tmp_path / "run" / "study.json").read_text())
    assert record["seed"] == 9 and record["set"] == ["settlement.huazhu_penalty=4",
                                                     "seats=[value, value, value, value]"]
    assert set(players(tmp_path / "run", "cap3")["bot"].cast(pl.String)) == {"value"}


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "scoring.cap=5"], "arms differ in scoring.cap"),
    (["--set", "scoring=1"], "arms differ in scoring.cap"),
    (["--set", "scoring.cap=banana"], "scoring.cap"),
    (["--set", "nonsense"], "expected KEY=VALUE"),
    (["--seed", "-1"], "--seed must be a non-negative integer"),
])
def test_bad_cli_set_or_seed_is_one_line_and_writes_nothing(args, message, tmp_path: Path, capsys):
    path = write(tmp_path, CRN_STUDY)
    code, _, err = cli_run(["study", str(path), "--out", str(tmp_path / "out"), *args], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_simulate_duplicate_rotates_seats_without_a_study(tmp_path: Path, capsys):
    code, _, err = cli_run(["simulate", "chengdu", "--hands", "8", "--duplicate", "--jobs", "1", "--quiet",
                            "--set", "seats=[value, greedy, greedy, greedy]", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "_variants" / "variant=chengdu" / "_manifest.json").read_text())
    assert manifest["duplicate"] is True
    p = players(tmp_path, "chengdu").with_columns(pl.col("bot").cast(pl.String))
    assert sorted(p.filter(pl.col("bot") == "value")["seat"].to_list()) == [0, 0, 1, 1, 2, 2, 3, 3]
    code, _, err = cli_run(["simulate", "chengdu", "--hands", "6", "--duplicate", "--out", str(tmp_path / "x")],
                           capsys)
    assert code == 2 and "multiple of 4" in err


@pytest.fixture(scope="module")
def small_study(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("cmp")
    small = CRN_STUDY.replace("hands: 200", "hands: 60").replace("chunk_size: 100", "chunk_size: 30")
    (tmp / "s.yaml").write_text(small)
    return run_study(tmp / "s.yaml", out_dir=tmp / "run", jobs=1, report=False, progress=False).out_dir


def test_compare_piped_never_truncates(small_study: Path, capsys):
    from analysis.compare import paired_comparison
    from analysis.fmt import fmt, fmt_interval

    code, out, err = cli_run(["compare", str(small_study), "chengdu", "lenient", "--by", "seat"], capsys)
    assert code == 0, err
    assert "…" not in out
    expected = paired_comparison(small_study, "lenient", baseline="chengdu", by="seat")
    for row in expected.iter_rows(named=True):  # every row, with all its numbers, on one line
        line = next(x for x in out.splitlines() if f"│ seat {row['seat']} " in x)
        # the estimate and interval at the precision of its paired SE (analysis.fmt), never cut by the terminal
        assert fmt_interval(row["diff"], row["ci_lo"], row["ci_hi"], row["se_paired"], signed=False) in line, line
        assert f"/{fmt(row['hands_unpaired'])}" in line


def test_compare_csv_and_json_carry_full_precision(small_study: Path, capsys):
    import io

    from analysis.compare import paired_comparison, paired_hand_metrics

    scores = paired_comparison(small_study, "cap3", baseline="chengdu", by="bot")
    metrics = paired_hand_metrics(small_study, "cap3", baseline="chengdu")
    code, out, err = cli_run(["compare", str(small_study), "chengdu", "cap3", "--by", "bot", "--format", "csv"],
                             capsys)
    assert code == 0, err
    table = pl.read_csv(io.StringIO(out))
    assert table["table"].to_list() == ["score"] * scores.height + ["hand_metric"] * metrics.height
    assert table.filter(pl.col("table") == "score")["mean"].to_list() == scores["mean"].to_list()
    assert table.filter(pl.col("table") == "hand_metric")["metric"].to_list() == metrics["metric"].to_list()
    code, out, err = cli_run(["compare", str(small_study), "chengdu", "cap3", "--by", "bot", "-f", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["baseline"], doc["variant"], doc["by"]) == ("chengdu", "cap3", "bot")
    assert [r["ci_hi"] for r in doc["scores"]] == scores["ci_hi"].to_list()
    assert len(doc["metrics"]) == metrics.height
    code, _, err = cli_run(["compare", str(small_study), "chengdu", "cap3", "--format", "xml"], capsys)
    assert code == 2 and "--format" in err and "'xml'" in err and err.count("\n") == 1


def test_an_interrupted_study_resumes_to_the_same_bytes(tmp_path: Path, monkeypatch):
    """Ctrl-C after five of the study's chunks (in the second variant): study.json is already there (it is written
    first, so the directory belongs to this study), a plain rerun is refused, ``resume`` finishes it and every file
    equals an uninterrupted run's."""
    from cli_helpers import snapshot

    from simulator.run import runner

    small = CRN_STUDY.replace("hands: 200", "hands: 24").replace("chunk_size: 100", "chunk_size: 8")
    path = write(tmp_path, small)
    clean, cut = tmp_path / "clean", tmp_path / "cut"
    run_study(path, out_dir=clean, jobs=1, report=False, progress=False)
    commit, done = runner.OpenRun.commit, []

    def interrupted(self, res):
        if len(done) == 5:
            raise KeyboardInterrupt
        done.append(res.variant)
        commit(self, res)
    monkeypatch.setattr(runner.OpenRun, "commit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_study(path, out_dir=cut, jobs=1, report=False, progress=False)
    monkeypatch.undo()
    assert len(set(done)) >= 2 and (cut / "study.json").exists()
    with pytest.raises(RunError, match="--resume"):
        run_study(path, out_dir=cut, jobs=1, report=False, progress=False)
    run_study(path, out_dir=cut, jobs=1, resume=True, report=False, progress=False)
    assert snapshot(cut) == snapshot(clean)
