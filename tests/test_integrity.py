"""Data integrity (issue 8): checksummed chunks, verification before reading, lock-first, clean failures.

Each test is one defect a careful user found: a flipped bit, a deleted or truncated chunk, two runs racing
for one directory, bad input that used to print a traceback (a lost worker and a killed parent:
tests/test_workers.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow.dataset as ds
import pytest
from cli_helpers import cli_run, reference_fixture, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.load import RunDirError, open_run
from simulator.logs import dirlock, layout
from simulator.logs import manifest as mf
from simulator.run import runner

HANDS, CHUNK, SEED = 40, 10, 3
XUEZHAN = Path(sys.executable).parent / "xuezhan"


def run(out: Path, *, hands: int = HANDS, chunk: int | None = CHUNK, **kw) -> runner.RunSummary:
    spec = runner.RunSpec(hands=hands, seed=SEED, jobs=1, chunk_size=chunk, progress=False, **kw)
    return runner.simulate(runner.Variant.load("chengdu"), out, spec)


reference = reference_fixture(run)  # a clean single-process run


@pytest.fixture
def copy(reference: Path, tmp_path: Path) -> Path:
    """A fresh copy of the reference run to damage."""
    shutil.copytree(reference, tmp_path / "run")
    return tmp_path / "run"


V = "variant=chengdu"          # the hive partition of the variant in each table directory
VDIR = f"_variants/{V}"       # its control directory: manifest, backup, lock
PART = mf.part_name(10, 19)


def flip_bit(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position // 8 % len(data)] ^= 1 << (position % 8)
    path.write_bytes(bytes(data))


def verify(run_dir: Path, capsys, *extra: str) -> tuple[int, str, str]:
    return cli_run(["verify", str(run_dir), *extra], capsys)


# ---------------------------------------------------------------------------------------------------------
# The three faults that gave wrong results with exit code 0

def test_flipped_bit_is_detected_named_and_resimulated(reference: Path, copy: Path, capsys):
    bad = copy / "players" / V / PART
    flip_bit(bad, 8 * 2000 + 3)  # inside the data pages, where a flip used to read back as other numbers
    code, out, err = verify(copy, capsys)
    assert code == 1 and f"BAD  {bad}: SHA-256 differs" in out and err.startswith("error: 1 problem(s)")
    with pytest.raises(RunDirError, match=f"players/{V}/{PART}: SHA-256 differs"):
        open_run(copy)
    code, _, err = cli_run(["report", str(copy), "--boot", "0"], capsys)
    assert code == 2 and err.count("\n") == 1 and PART in err and not (copy / "report.html").exists()
    summary = run(copy, resume=True)
    assert summary.hands_run == CHUNK and summary.redone == [f"players/{V}/{PART}: SHA-256 differs from the manifest "
                                                             "(corrupted)"]
    assert snapshot(copy) == snapshot(reference)


def test_deleted_wins_file_is_an_error_not_fewer_wins(reference: Path, copy: Path, capsys):
    (copy / "wins" / V / PART).unlink()
    with pytest.raises(RunDirError, match=f"wins/{V}/{PART}: missing"):
        open_run(copy, check="sizes")
    code, out, _ = verify(copy, capsys, "--check", "sizes")
    assert code == 1 and f"wins/{V}/{PART}: missing" in out
    code, _, err = cli_run(["compare", str(copy), "chengdu", "chengdu"], capsys)
    assert code == 2 and f"wins/{V}/{PART}: missing" in err and err.count("\n") == 1
    assert run(copy, resume=True).redone == [f"wins/{V}/{PART}: missing"]
    assert snapshot(copy) == snapshot(reference)


def test_truncated_chunk_fails_resume_check_and_report_names_it(reference: Path, copy: Path, capsys):
    bad = copy / "hands" / V / PART
    bad.write_bytes(bad.read_bytes()[:-100])
    code, _, err = cli_run(["report", str(copy), "--boot", "0", "--check", "sizes"], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and f"hands/{V}/{PART}" in err
    assert "truncated" in err
    summary = run(copy, resume=True)
    assert summary.hands_run == CHUNK and len(summary.redone) == 1
    assert snapshot(copy) == snapshot(reference)


def test_stray_part_file_is_named_and_removed_by_resume(reference: Path, copy: Path, capsys):
    stray = copy / "hands" / V / mf.part_name(40, 49)
    shutil.copy(copy / "hands" / V / PART, stray)
    code, out, _ = verify(copy, capsys)
    assert code == 1 and f"hands/{V}/{stray.name}: not listed" in out
    with pytest.raises(RunDirError, match="not listed"):
        open_run(copy)
    assert run(copy, resume=True).hands_run == 0 and not stray.exists()
    assert snapshot(copy) == snapshot(reference)


def test_verify_clean_run(reference: Path, capsys):
    code, out, _ = verify(reference, capsys)
    assert code == 0 and f"ok   {reference / VDIR}: 12 files checked (full), 40/40 hands, complete" in out
    code, out, _ = verify(reference / VDIR, capsys, "--check", "sizes")
    assert code == 0 and "(sizes)" in out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=st.sampled_from(mf.TABLES), chunk=st.integers(0, HANDS // CHUNK - 1),
       op=st.sampled_from(["flip", "truncate", "append", "overwrite"]), where=st.integers(0, 10**9),
       payload=st.binary(min_size=1, max_size=16))
def test_any_corruption_of_any_chunk_file_is_detected_or_harmless(reference: Path, table, chunk, op, where,
                                                                  payload):
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "run"
        shutil.copytree(reference, copy)
        path = copy / table / V / mf.part_name(chunk * CHUNK, chunk * CHUNK + CHUNK - 1)
        data = path.read_bytes()
        if op == "flip":
            flip_bit(path, where)
        elif op == "truncate":
            path.write_bytes(data[:where % len(data)])
        elif op == "append":
            path.write_bytes(data + payload)
        else:
            at = where % len(data)
            path.write_bytes(data[:at] + payload + data[at + len(payload):])
        changed = path.read_bytes() != data
        found = mf.problems(copy / VDIR, mf.read(copy / VDIR), "full")
        if changed:  # detected, naming exactly that file
            assert len(found) == 1 and found[0].startswith(f"{table}/{V}/{path.name}: ")
            with pytest.raises(RunDirError, match=path.name):
                open_run(copy)
        else:  # harmless: the bytes are the original ones, so is every row read
            assert found == []
            assert open_run(copy).scan(table).collect().equals(open_run(reference).scan(table).collect())


# ---------------------------------------------------------------------------------------------------------
# Manifests: garbled, wrong-typed, debris only, old format; bounded size

@pytest.mark.parametrize(("edit", "words"), [
    (lambda m: m.update(hands="40"), "'hands' is str"),
    (lambda m: m.update(seed=True), "'seed' is bool"),
    (lambda m: m["chunks"][1].update(first=11), "not a chunk of the plan"),
    (lambda m: m["chunks"][1]["rows"].update(wins=-1), "non-negative"),
    (lambda m: m["chunks"][0]["sha256"].update(hands="x"), "64 lowercase hex"),
    (lambda m: m.update(hands_done=30), "totals"),
    (lambda m: m["rules"]["scoring"].update(base="x"), "scoring.base"),
    (lambda m: m.update(stale=[{"ref": "t.yaml", "problem": 3, "advice": "a"}]), "'stale' must be a list of"),
    (lambda m: m.update(stale={"ref": "t.yaml"}), "'stale' must be a list of"),
])
def test_wrong_typed_manifest_fields_are_one_error_line(copy: Path, capsys, edit, words):
    path = copy / VDIR / mf.MANIFEST
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    code, _, err = cli_run(["report", str(copy), "--boot", "0"], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and words in err, err
    assert not (copy / "report.html").exists()


def test_garbled_debris_only_and_old_runs_are_refused(copy: Path, tmp_path: Path, capsys):
    (copy / VDIR / mf.MANIFEST).write_bytes(b"\x00\xff garbage")
    code, _, err = cli_run(["report", str(copy)], capsys)
    assert code == 2 and "not valid JSON" in err and err.count("\n") == 1
    debris = tmp_path / "debris" / VDIR
    debris.mkdir(parents=True)
    (debris / runner.LOCK_NAME).touch()
    code, _, err = cli_run(["report", str(debris.parent.parent)], capsys)
    assert code == 2 and "no _manifest.json" in err
    old = tmp_path / "old" / V  # the variant-first layout of earlier versions
    shutil.copytree(copy / "hands" / V, old / "hands")
    (old / mf.LEGACY_MANIFEST).write_text('{"format": 1}')
    code, _, err = cli_run(["report", str(old.parent)], capsys)
    assert code == 2 and "older xuezhan" in err and "re-simulate" in err
    with pytest.raises(runner.RunError, match="older xuezhan"):
        run(old.parent, resume=True)


def test_manifest_lists_finished_chunks_only(tmp_path: Path, monkeypatch):
    """A run planned at the 10^10-hand limit writes a manifest of a few KB after its first chunk (it used to
    write every pending chunk, 251 MB, and rewrite it after each chunk)."""
    commit = runner.OpenRun.commit

    def stop_after_one(self, res):
        commit(self, res)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.OpenRun, "commit", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "huge", hands=mf.MAX_HANDS, chunk=5000)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "small", hands=10_000, chunk=5000)
    path = tmp_path / "huge" / VDIR / mf.MANIFEST
    manifest = mf.read(tmp_path / "huge" / VDIR)
    assert manifest["hands"] == 10**10 and len(manifest["chunks"]) == 1 and manifest["hands_done"] == 5000
    # the size does not grow with the plan: a 10,000-hand plan's manifest after the same chunk is as large, but
    # for the digits of its numbers (no timing: the old bound "under 120 s" held on any machine for any size)
    small = (tmp_path / "small" / VDIR / mf.MANIFEST).stat().st_size
    assert path.stat().st_size < 8000 and abs(path.stat().st_size - small) < 64


# ---------------------------------------------------------------------------------------------------------
# Lock first: two runs racing for one fresh directory, made deterministic with the runner's checkpoint hook

def test_a_run_finishing_before_another_takes_the_lock_is_not_deleted(reference: Path, tmp_path: Path,
                                                                      monkeypatch):
    """B pauses just before taking the lock; A runs to completion meanwhile. B then inspects under the lock,
    sees A's run and refuses: nothing of A's is deleted (B used to inspect first and clean A's files)."""
    calls = []

    def hook(point: str, vdir: Path) -> None:
        if point == "before_lock" and not calls:
            calls.append(point)
            run(tmp_path)  # A, complete
    monkeypatch.setattr(dirlock, "CHECKPOINT", hook)
    with pytest.raises(runner.RunError, match="pass --resume"):
        run(tmp_path)  # B
    assert snapshot(tmp_path) == snapshot(reference)


def test_a_run_cannot_enter_a_locked_directory(reference: Path, tmp_path: Path, monkeypatch):
    """A holds the lock (paused right after taking it); B is refused at once and deletes nothing; A then
    finishes normally."""
    errors: list[str] = []

    def hook(point: str, vdir: Path) -> None:
        if point == "locked" and not errors:
            with pytest.raises(runner.RunError) as exc:
                run(tmp_path)  # B
            errors.append(str(exc.value))
            assert sorted(p.name for p in vdir.iterdir()) == [runner.LOCK_NAME]
    monkeypatch.setattr(dirlock, "CHECKPOINT", hook)
    run(tmp_path)  # A
    assert "another xuezhan run is writing there" in errors[0]
    assert snapshot(tmp_path) == snapshot(reference)


def test_two_processes_race_for_a_fresh_directory(reference: Path, tmp_path: Path):
    """Both start at once; whatever the timing, exactly one writes the run and it equals the reference."""
    args = [str(XUEZHAN), "simulate", "chengdu", "-n", str(HANDS), "--chunk-size", str(CHUNK), "--seed", str(SEED),
            "--jobs", "1", "--quiet", "--out", str(tmp_path)]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=600) + (p.returncode,) for p in procs]
    codes = sorted(r[2] for r in results)
    assert codes[0] == 0 and codes[1] in (0, 2)
    for _, err, code in results:
        if code == 2:
            assert "another xuezhan run" in err or "pass --resume" in err
    assert snapshot(tmp_path) == snapshot(reference)


# ---------------------------------------------------------------------------------------------------------
# Clean failures

def test_over_long_names_are_one_line_and_leave_nothing(tmp_path: Path, capsys):
    long_out = tmp_path / ("d" * 300) / "run"
    code, _, err = cli_run(["simulate", "chengdu", "-n", "8", "--out", str(long_out)], capsys)
    assert code == 2 and err.count("\n") == 1 and "255" in err
    code, _, err = cli_run(["simulate", "chengdu", "-n", "8", "--name", "n" * 250, "--out", str(tmp_path / "o")],
                           capsys)
    assert code == 2 and err.count("\n") == 1 and "at most 200" in err
    assert list(tmp_path.iterdir()) == []


def test_non_utf8_rule_file_is_one_line(tmp_path: Path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"extends: chengdu\ndescription: \xff\xfe\n")
    code, _, err = cli_run(["simulate", str(bad), "-n", "8", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and err == f"error: {bad}: not UTF-8 text (byte 0xff at offset 30)\n"
    assert not (tmp_path / "o").exists()


def test_report_into_an_unwritable_directory(reference: Path, tmp_path: Path, capsys):
    ro = tmp_path / "ro"
    if os.geteuid() == 0:  # root writes into any directory: a regular file in the directory's place refuses it
        ro.write_text("")
    else:
        ro.mkdir()
        ro.chmod(0o500)
    target = ro / "r.html"
    code, _, err = cli_run(["report", str(reference), "--boot", "0", "--out", str(target)], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["ro"]  # no partial report or temporary anywhere


def test_usage_errors_are_one_line(capsys):
    code, _, err = cli_run(["replay", "chengdu", "--seed", "1", "--hand", "1e20"], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "--hand" in err
    code, _, err = cli_run(["simulate", "chengdu", "-n", "8", "--no-such-option"], capsys)
    assert code == 2 and err.startswith("error: No such option") and err.count("\n") == 1


# ---------------------------------------------------------------------------------------------------------
# Logs safe to query: four readers, nulls for "no win", manifests outside the table directories

def test_four_readers_read_every_table(reference: Path):
    vdir = reference / VDIR
    manifest = mf.read(vdir)
    assert sorted(p.name for p in vdir.iterdir() if not p.name.startswith(".")) == [mf.MANIFEST]
    for table in mf.TABLES:
        tdir = reference / table / V
        rows = manifest["rows"][table]
        assert all(mf.is_part_name(p.name) for p in tdir.iterdir())  # nothing else for a reader to trip on
        assert len(pd.read_parquet(tdir)) == rows
        assert ds.dataset(tdir, format="parquet").count_rows() == rows
        assert pl.scan_parquet(tdir).select(pl.len()).collect().item() == rows
        assert duckdb.sql(f"select count(*) from read_parquet('{tdir}/*.parquet')").fetchall()[0][0] == rows
    players = pl.read_parquet(reference / "players" / V)
    losers = players.filter(~pl.col("won"))
    for col in ("win_order", "win_turn", "gen", "fan", "capped_fan"):
        assert losers[col].null_count() == losers.height and players.filter(pl.col("won"))[col].null_count() == 0
    fan = pd.read_parquet(reference / "players" / V, columns=["fan", "won"])
    assert fan["fan"].mean() == pytest.approx(fan.loc[fan["won"], "fan"].astype(float).mean())  # means over wins
    assert duckdb.sql(f"select min(fan) from read_parquet('{reference}/players/{V}/*.parquet')").fetchall()[0][0] >= 0


def test_sizes_only_check_still_fails_cleanly_on_flipped_bits(copy: Path, capsys):
    """--check sizes cannot see bits flipped in place; a file that then cannot be decoded is one error line
    pointing to `xuezhan verify`, not a polars traceback naming no file."""
    path = copy / "hands" / V / PART
    data = bytearray(path.read_bytes())
    data[-6] ^= 0x7F  # the footer length: the file no longer decodes, its size is unchanged
    path.write_bytes(bytes(data))
    code, _, err = cli_run(["report", str(copy), "--boot", "0", "--check", "sizes"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"xuezhan verify {copy}" in err, err
    assert not (copy / "report.html").exists()
    code, _, err = cli_run(["report", str(copy), "--boot", "0"], capsys)
    assert code == 2 and f"hands/{V}/{PART}: SHA-256 differs" in err


def test_every_variant_of_a_run_gets_its_own_chunks(tmp_path: Path):
    """Several variants interleave their chunks; each chunk is simulated under its own variant's rules."""
    variants = [runner.Variant.load("chengdu"), runner.Variant.load("cap3")]
    spec = runner.RunSpec(hands=20, seed=SEED, jobs=1, chunk_size=10, progress=False)
    runner.run_variants(tmp_path, variants, spec)
    for v in variants:
        manifest = mf.read(tmp_path / "_variants" / f"variant={v.name}")
        assert [c["first"] for c in manifest["chunks"]] == [0, 10] and manifest["digest"] == v.rules.digest()
        for part in (tmp_path / "hands" / f"variant={v.name}").iterdir():
            meta = layout.read_file_metadata(part)
            assert (meta["variant"], meta["digest"]) == (v.name, v.rules.digest())
