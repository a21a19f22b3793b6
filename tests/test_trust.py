"""Trust the whole run (issue 27): the run's metadata — manifests, their backups, study.json, the variant
directories' names — is checked as the chunks are; one study per directory; nothing of the user's deleted.

Each test is one defect of the issue, on a two-arm study (chengdu against huazhu_8x, 40 hands, seed 3); the
property tests damage any file or directory of that run at random.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import polars as pl
import pytest
from cli_helpers import cli_run, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.load import RunDirError, open_run
from simulator.logs import dirlock, rundir
from simulator.logs import manifest as mf
from simulator.run import runner
from simulator.run.verify import verify_run
from xuezhan.studies import run_study

HANDS, CHUNK, SEED = 40, 10, 3
ARMS = ("chengdu", "hz8")
STUDY = f"""name: trust
baseline: chengdu
variants:
  - name: hz8
    rules: huazhu_8x
hands: {HANDS}
seed: {SEED}
chunk_size: {CHUNK}
"""


def study_file(tmp: Path, text: str = STUDY) -> Path:
    path = tmp / "trust.yaml"
    path.write_text(text)
    return path


def study(out: Path, **kw):
    return run_study(study_file(out.parent), out_dir=out, jobs=1, report=False, diagnose=False, progress=False,
                     **kw)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    study(out)
    return out


@pytest.fixture
def copy(reference: Path, tmp_path: Path) -> Path:
    shutil.copytree(reference, tmp_path / "run")
    return tmp_path / "run"


def vdir(run: Path, name: str) -> Path:
    """The variant's control directory: manifest, backup, lock, quarantine."""
    return run / "_variants" / f"variant={name}"


def tdir(run: Path, name: str, table: str) -> Path:
    """The variant's partition of a table directory."""
    return run / table / f"variant={name}"


def flip_bit(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position // 8 % len(data)] ^= 1 << (position % 8)
    path.write_bytes(bytes(data))


def data_files(run: Path) -> dict[str, bytes]:
    """The Parquet parts only (what other work's golden digests are taken of)."""
    return {k: v for k, v in snapshot(run).items() if k.endswith(".parquet") and mf.QUARANTINE not in k}


def outputs(run: Path) -> tuple:
    """Everything a reader takes from a run: variants, manifests, study record and every table's rows."""
    r = open_run(run)
    return (r.variants, r.manifests, r.study, r.baseline,
            *(r.scan(t).collect().to_dicts() for t in mf.TABLES))


def refused_everywhere(run: Path, capsys) -> None:
    lines, bad = verify_run(run)
    assert bad > 0, lines
    with pytest.raises(RunDirError):
        open_run(run)
    code, _, err = cli_run(["compare", str(run), *ARMS, "--format", "csv"], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err


# ---------------------------------------------------------------------------------------------------------
# 1. swapped or renamed variant directories

def test_swapped_variant_directories_are_refused(copy: Path, capsys):
    a, b = vdir(copy, "chengdu"), vdir(copy, "hz8")
    a.rename(copy / "tmp")
    b.rename(a)
    (copy / "tmp").rename(b)
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "it is the manifest of variant 'hz8', found in variant=chengdu" in out
    refused_everywhere(copy, capsys)
    code, _, err = cli_run(["replay", "--run", str(copy), "--variant", "hz8"], capsys)
    assert code == 2 and "swapped or renamed" in err and err.count("\n") == 1


def test_renamed_variant_directory_is_refused(copy: Path, capsys):
    vdir(copy, "hz8").rename(vdir(copy, "other"))
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "found in variant=other" in out and "variant=hz8: missing" in out
    refused_everywhere(copy, capsys)


# ---------------------------------------------------------------------------------------------------------
# 2, 3. the manifest header is checked as the chunks are; verify runs every check a reader runs

def test_edited_manifest_header_is_refused(copy: Path, capsys):
    path = vdir(copy, "hz8") / mf.MANIFEST
    text = path.read_text()
    assert '"huazhu_penalty": 8' in text
    path.write_text(text.replace('"huazhu_penalty": 8', '"huazhu_penalty": 64').replace('"duplicate": false',
                                                                                        '"duplicate": true'))
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "digest" in out
    refused_everywhere(copy, capsys)


def test_a_consistent_forgery_of_the_rules_is_caught_by_the_digest(copy: Path, capsys):
    """Even with the checksum recomputed, rules that are not the recorded digest's are refused."""
    path = vdir(copy, "hz8") / mf.MANIFEST
    manifest = json.loads(path.read_text())
    manifest["rules"]["settlement"]["huazhu_penalty"] = 64
    path.write_bytes(mf.manifest_bytes(manifest))
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "is not that of its rules" in out


def test_verify_refuses_what_readers_refuse(copy: Path, capsys):
    path = vdir(copy, "chengdu") / mf.MANIFEST
    path.write_text(path.read_text().replace('"pass_ron_lock"', '"pass_rkn_lock"'))
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "pass_rkn_lock" in out
    refused_everywhere(copy, capsys)


def test_study_json_is_checked(copy: Path, capsys):
    path = copy / rundir.STUDY_FILE
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "baseline": "hz8"}))  # checksum no longer matches
    refused_everywhere(copy, capsys)
    path.unlink()  # a study's run without its record
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "study.json: missing (the variants were run by study 'trust')" in out
    with pytest.raises(RunDirError, match="study.json: missing"):
        open_run(copy)


# ---------------------------------------------------------------------------------------------------------
# 4. one study per directory

OTHER = STUDY.replace("name: hz8\n    rules: huazhu_8x", "name: cap3\n    rules: cap3")


def test_a_second_study_cannot_enter_a_running_one(tmp_path: Path, monkeypatch):
    out = tmp_path / "run"
    other = tmp_path / "other"
    other.mkdir()
    errors = []

    def hook(point: str, path: Path) -> None:
        if point == "locked" and path == out and not errors:
            with pytest.raises(runner.RunError) as exc:
                run_study(study_file(other, OTHER), out_dir=out, jobs=1, report=False, diagnose=False,
                          progress=False)
            errors.append(str(exc.value))
    monkeypatch.setattr(dirlock, "CHECKPOINT", hook)
    study(out)
    assert "another xuezhan run is writing there" in errors[0]
    assert sorted(p.name for p in (out / "_variants").glob("variant=*")) == ["variant=chengdu", "variant=hz8"]


def test_a_directory_holds_one_study(reference: Path, copy: Path, tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(runner.RunError, match="holds study 'trust'.*arms.*one study per directory"):
        run_study(study_file(other, OTHER), out_dir=copy, jobs=1, report=False, diagnose=False, progress=False)
    with pytest.raises(runner.RunError, match="holds a study"):
        runner.simulate(runner.Variant.load("cap3"), copy, runner.RunSpec(hands=HANDS, seed=SEED, jobs=1,
                                                                           progress=False))
    assert snapshot(copy) == snapshot(reference)
    vdir(copy, "stray").mkdir()  # a directory of another run
    with pytest.raises(runner.RunError, match="variant=stray, not an arm"):
        study(copy, resume=True)


# ---------------------------------------------------------------------------------------------------------
# 5. --resume moves what is not ours aside, never deletes it

def test_resume_quarantines_foreign_entries_and_fixes_the_run(reference: Path, copy: Path, capsys):
    v = vdir(copy, "chengdu")
    (tdir(copy, "chengdu", "hands") / "NOTES.txt").write_text("mine")
    (tdir(copy, "chengdu", "players") / "mine").mkdir()
    (tdir(copy, "chengdu", "players") / "mine" / "x.csv").write_text("1")
    part = mf.part_name(10, 19)
    (tdir(copy, "chengdu", "wins") / part).unlink()
    (tdir(copy, "chengdu", "wins") / part).mkdir()  # a part file that became a directory
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "hands/variant=chengdu/NOTES.txt: not listed" in out
    assert "players/variant=chengdu/mine: not listed" in out
    result = study(copy, resume=True)
    notes = result.summaries[0].notes
    assert any("hands/variant=chengdu/NOTES.txt: not ours, moved to _variants/variant=chengdu/_quarantine/hands/"
               "NOTES.txt" in n for n in notes), notes
    assert (v / mf.QUARANTINE / "hands" / "NOTES.txt").read_text() == "mine"
    assert (v / mf.QUARANTINE / "players" / "mine" / "x.csv").read_text() == "1"
    assert (v / mf.QUARANTINE / "wins" / part).is_dir()
    assert verify_run(copy)[1] == 0
    assert data_files(copy) == data_files(reference)


# ---------------------------------------------------------------------------------------------------------
# 6. a damaged manifest is restored from its backup

@pytest.mark.parametrize("how", ["resume", "repair"])
def test_a_damaged_manifest_is_restored(reference: Path, copy: Path, capsys, how):
    path = vdir(copy, "hz8") / mf.MANIFEST
    flip_bit(path, 8 * 200 + 1)
    refused_everywhere(copy, capsys)
    if how == "resume":
        result = study(copy, resume=True)
        assert any(f"restored from {mf.BACKUP}" in n for n in result.summaries[1].notes)
        assert result.summaries[1].hands_run == 0
    else:
        code, out, _ = cli_run(["verify", "--repair", str(copy)], capsys)
        assert code == 0 and f"restored from {mf.BACKUP}" in out
    assert snapshot(copy) == snapshot(reference)
    path.unlink()  # gone altogether: the backup still holds the run
    code, out, _ = cli_run(["verify", "--repair", str(copy)], capsys)
    assert code == 0 and snapshot(copy) == snapshot(reference)


def test_a_damaged_backup_is_reported_and_rewritten(reference: Path, copy: Path, capsys):
    flip_bit(vdir(copy, "chengdu") / mf.BACKUP, 8 * 300)
    assert outputs(copy) == outputs(reference)  # readers do not use it
    code, out, _ = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and f"{mf.BACKUP}:" in out
    code, out, _ = cli_run(["verify", "--repair", str(copy)], capsys)
    assert code == 0 and snapshot(copy) == snapshot(reference)


# ---------------------------------------------------------------------------------------------------------
# 8. readers and a live writer

def test_readers_see_a_writer_at_work(copy: Path, capsys):
    lock = runner.DirLock(vdir(copy, "hz8"))
    lock.acquire()  # what a running --resume holds
    try:
        with pytest.raises(RunDirError, match="run in progress .*hz8 40 of 40 hands.*--partial"):
            open_run(copy)
        code, _, err = cli_run(["report", str(copy), "--boot", "0"], capsys)
        assert code == 2 and "run in progress" in err and "damaged" not in err
        code, out, _ = cli_run(["verify", str(copy)], capsys)
        assert code == 1 and out.startswith("BUSY ")
        (tdir(copy, "hz8", "hands") / mf.part_name(40, 49)).write_bytes(b"being written")
        assert open_run(copy, partial=True).hand_counts()["n_hands"].to_list() == [HANDS, HANDS]
        code, out, _ = cli_run(["compare", str(copy), *ARMS, "--partial", "--format", "csv"], capsys)
        assert code == 0 and out.startswith("table,")
    finally:
        lock.release()


# ---------------------------------------------------------------------------------------------------------
# Property tests: any single corruption of any file or directory of the run

def _files(run: Path) -> list[str]:
    return sorted(str(p.relative_to(run)) for p in run.rglob("*") if p.is_file())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(0, 10**6), op=st.sampled_from(["flip", "truncate", "append", "overwrite", "delete",
                                                        "swap_dirs", "rename_dir", "swap_tables", "swap_parts"]),
       where=st.integers(0, 10**9), payload=st.binary(min_size=1, max_size=8))
def test_any_single_corruption_is_detected_and_refused_or_harmless(reference: Path, capsys, pick, op, where,
                                                                   payload):
    expected = outputs(reference)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        shutil.copytree(reference, run)
        files = _files(run)
        path = run / files[pick % len(files)]
        data = path.read_bytes()
        if not data and op in ("flip", "truncate", "overwrite"):
            path.write_bytes(payload)  # an empty file (a lock): corrupt it the only way there is
        elif op == "flip":
            flip_bit(path, where)
        elif op == "truncate":
            path.write_bytes(data[:where % max(len(data), 1)])
        elif op == "append":
            path.write_bytes(data + payload)
        elif op == "overwrite":
            at = where % max(len(data), 1)
            path.write_bytes(data[:at] + payload + data[at + len(payload):])
        elif op == "delete":
            path.unlink()
        elif op == "swap_dirs":
            a, b = vdir(run, ARMS[0]), vdir(run, ARMS[1])
            a.rename(run / "x")
            b.rename(a)
            (run / "x").rename(b)
        elif op == "rename_dir":
            vdir(run, ARMS[where % 2]).rename(vdir(run, f"v{where % 7}"))
        elif op == "swap_tables":  # one variant's hands and players partitions
            a, b = tdir(run, ARMS[where % 2], "hands"), tdir(run, ARMS[where % 2], "players")
            a.rename(run / "x")
            b.rename(a)
            (run / "x").rename(b)
        else:  # two variants' partitions of one table
            a, b = tdir(run, ARMS[0], mf.TABLES[where % 3]), tdir(run, ARMS[1], mf.TABLES[where % 3])
            a.rename(run / "x")
            b.rename(a)
            (run / "x").rename(b)
        try:
            got = outputs(run)
        except RunDirError:
            assert verify_run(run)[1] > 0  # refused by the reader: verify names a problem too
            return
        assert got == expected  # read: exactly what the intact run gives
        if verify_run(run)[1] == 0:
            assert not op.endswith("dirs") and op not in ("rename_dir", "swap_tables", "swap_parts")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arm=st.sampled_from(ARMS), position=st.integers(0, 10**7))
def test_manifest_bit_flips_never_change_output_silently(reference: Path, arm, position):
    """The 500-flip benchmark (benchmarks/manifest_flips.py) in small: every flip is refused or harmless."""
    expected = outputs(reference)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        shutil.copytree(reference, run)
        flip_bit(vdir(run, arm) / mf.MANIFEST, position)
        try:
            got = outputs(run)
        except RunDirError:
            assert verify_run(run)[1] > 0
            return
        assert got == expected


def test_manifests_and_backups_are_written_alike(reference: Path):
    for name in ARMS:
        v = vdir(reference, name)
        assert (v / mf.MANIFEST).read_bytes() == (v / mf.BACKUP).read_bytes()
        manifest = json.loads((v / mf.MANIFEST).read_text())
        assert manifest[mf.CHECKSUM] == mf.canonical_checksum(manifest)
    assert pl.read_parquet(reference / "hands")["variant"].unique().sort().to_list() == sorted(ARMS)
    assert not os.path.exists(reference / mf.QUARANTINE)
