"""Batch runner: determinism across jobs/backends/chunking, resume after kill -9, refusals, Parquet read-back."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import cli_run, reference_fixture, snapshot, start_paused, wait_paused

from simulator.logs import encode
from simulator.logs.records import Coded
from simulator.logs.schema import NULL_IF_NO_WIN, TABLES
from simulator.rules import choices, load_rules
from simulator.run import runner
from simulator.vocab import WIN_KINDS

HANDS = 6000      # reference run: enough chunks to interleave, and long enough (~1 s) to interrupt
CHUNK = 200
SEED = 7


def make_variant(config: str = "chengdu", name: str | None = None, overrides=None) -> runner.Variant:
    return runner.Variant.load(config, overrides, name)  # as the CLI does, so manifests compare equal


def run(out: Path, *, hands: int = HANDS, chunk: int | None = CHUNK, jobs: int = 1, seed: int = SEED,
        variant: runner.Variant | None = None, **kw) -> runner.RunSummary:
    spec = runner.RunSpec(hands=hands, seed=seed, jobs=jobs, chunk_size=chunk, progress=False, **kw)
    return runner.simulate(variant or make_variant(), out, spec)


reference = reference_fixture(run)  # a clean single-process run


# ---------------------------------------------------------------------------------------------------------
# Plans and encoding

def test_plan_chunks_cover_every_hand_once():
    plan = runner.plan_chunks(1050, 100)
    assert plan[0] == (0, 99) and plan[-1] == (1000, 1049) and len(plan) == 11
    ids = np.concatenate([np.arange(f, last + 1) for f, last in plan])
    assert np.array_equal(ids, np.arange(1050))


def test_part_names_sort_by_hand_id():
    names = [runner.part_name(f, last) for f, last in runner.plan_chunks(250_000, 9_999)]
    assert names == sorted(names)


def test_categorical_outside_vocabulary_is_an_error():
    fld = TABLES["wins"].field("kind")
    with pytest.raises(ValueError, match="'ron'"):
        encode._categorical(np.array(["discard", "ron"], dtype=object), fld, encode.VOCABULARIES["kind"])


def test_categorical_codes_encode_like_their_strings():
    for name, names in (("kind", WIN_KINDS), ("hand_type", encode.VOCABULARIES["hand_type"])):
        fld = TABLES["wins"].field(name)
        codes = np.array([-1, 0, len(names) - 1, 1, -1])
        coded = encode._categorical(Coded(codes, tuple(names)), fld, encode.VOCABULARIES[name])
        strings = encode._categorical(Coded(codes, tuple(names)).strings(), fld, encode.VOCABULARIES[name])
        assert coded.type == fld.type and coded.equals(strings) and coded.null_count == 2
    fld = TABLES["hands"].field("exchange")
    ok = encode._categorical(Coded(np.array([0, 3]), choices("exchange_three")), fld, encode.VOCABULARIES["exchange"])
    assert ok.to_pylist() == ["none", "opposite"] and ok.null_count == 0
    with pytest.raises(ValueError, match="'random'"):
        encode._categorical(Coded(np.array([0, 4]), choices("exchange_three")), fld, encode.VOCABULARIES["exchange"])
    with pytest.raises(ValueError, match="code 5"):
        encode._categorical(Coded(np.array([0, 5]), choices("exchange_three")), fld, encode.VOCABULARIES["exchange"])


def test_integer_overflow_is_an_error_not_a_wrap():
    with pytest.raises(pa.ArrowInvalid, match="200 not in range"):
        encode._column(np.array([200], dtype=np.int64), TABLES["hands"].field("tiles_left"))


# ---------------------------------------------------------------------------------------------------------
# Determinism

V = "variant=chengdu"  # the variant's hive partition in each table directory


def control(run_dir: Path) -> Path:
    """The variant's control directory: manifest, backup, lock."""
    return run_dir / "_variants" / V


def test_layout_and_manifest(reference: Path):
    vdir = control(reference)
    manifest = json.loads((vdir / "_manifest.json").read_text())
    rules = load_rules("chengdu")
    assert manifest["digest"] == rules.digest() and manifest["rules"] == rules.resolved()
    assert (manifest["seed"], manifest["hands"], manifest["hands_done"], manifest["complete"]) == (
        SEED, HANDS, HANDS, True)
    assert [(c["first"], c["last"]) for c in manifest["chunks"]] == runner.plan_chunks(HANDS, CHUNK)
    for table in TABLES:
        files = sorted(p.name for p in (reference / table / V).iterdir())
        assert files == [runner.part_name(f, last) for f, last in runner.plan_chunks(HANDS, CHUNK)]
        for c in manifest["chunks"]:  # size and SHA-256 of every file, as written
            data = (reference / table / V / c["file"]).read_bytes()
            assert (c["size"][table], c["sha256"][table]) == (len(data), hashlib.sha256(data).hexdigest())
            assert c["rows"][table] == pq.read_metadata(reference / table / V / c["file"]).num_rows
    assert manifest["rows"]["hands"] == HANDS and manifest["rows"]["players"] == 4 * HANDS


def test_two_jobs_give_identical_bytes(reference: Path, tmp_path: Path):
    run(tmp_path, jobs=2)
    assert snapshot(tmp_path) == snapshot(reference)


def test_dask_backend_gives_identical_bytes(reference: Path, tmp_path: Path):
    run(tmp_path, jobs=2, backend="dask")
    assert snapshot(tmp_path) == snapshot(reference)


def test_chunk_size_changes_files_not_rows(reference: Path, tmp_path: Path):
    run(tmp_path, chunk=300, jobs=2)
    for table in TABLES:
        a = pq.read_table(reference / table / V)
        b = pq.read_table(tmp_path / table / V)
        assert a.num_rows == b.num_rows and a.equals(b), table


def test_seed_changes_the_hands(reference: Path, tmp_path: Path):
    run(tmp_path, hands=CHUNK, seed=SEED + 1)
    a = pq.read_table(reference / "players" / V / runner.part_name(0, CHUNK - 1))
    b = pq.read_table(tmp_path / "players" / V / runner.part_name(0, CHUNK - 1))
    assert not a.column("dealt").equals(b.column("dealt"))


# ---------------------------------------------------------------------------------------------------------
# Interruption and resume

def _start(out: Path, *extra: str) -> subprocess.Popen:
    """``xuezhan simulate`` of the reference run, paused after its first listed chunk (cli_helpers.start_paused):
    killed or interrupted there, it cannot have finished first."""
    args = ["simulate", "chengdu", "--hands", str(HANDS), "--chunk-size", str(CHUNK), "--seed", str(SEED),
            "--out", str(out), "--quiet", *extra]
    # SIGINT back to default in the child: a parent started in the background may ignore it, and Python only
    # installs its KeyboardInterrupt handler when SIGINT is not ignored.
    return start_paused(args, out.parent / f"{out.name}-pause",
                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def mf_hands_done(out: Path) -> int:
    return json.loads((control(out) / "_manifest.json").read_text())["hands_done"]


def _assert_no_debris(out: Path) -> None:
    """Every visible part file is a complete Parquet file; the manifest's done chunks are all on disk."""
    manifest = json.loads((control(out) / "_manifest.json").read_text())
    for table in TABLES:
        for p in (out / table / V).glob("part-*.parquet"):
            pq.read_metadata(p)  # raises on a truncated file
    for c in manifest["chunks"]:  # only finished chunks are listed
        assert all((out / t / V / c["file"]).is_file() for t in TABLES)


def test_resume_after_kill_9_is_byte_identical(reference: Path, tmp_path: Path):
    out = tmp_path / "run"
    proc = _start(out, "--jobs", "1")
    done = wait_paused(proc, tmp_path / "run-pause")
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert 0 < done < HANDS
    _assert_no_debris(out)
    with pytest.raises(runner.RunError, match="--resume"):
        run(out)
    summary = run(out, resume=True, jobs=2)
    assert 0 < summary.hands_run < HANDS
    assert not list(out.rglob("*.tmp"))
    assert snapshot(out) == snapshot(reference)


def test_ctrl_c_exits_cleanly_and_resumes(reference: Path, tmp_path: Path):
    out = tmp_path / "run"
    proc = _start(out, "--jobs", "2")
    assert wait_paused(proc, tmp_path / "run-pause") < HANDS
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1].startswith("error: interrupted")
    assert not list(out.rglob("*.tmp"))
    _assert_no_debris(out)
    assert 0 < mf_hands_done(out) < HANDS  # interrupted for real: resume has work to do
    run(out, resume=True, jobs=1)
    assert snapshot(out) == snapshot(reference)


def test_resume_with_more_hands_extends_the_run(tmp_path: Path):
    small, more, fresh = tmp_path / "small", tmp_path / "more", tmp_path / "fresh"
    run(small, hands=10, chunk=4)
    assert run(small, hands=18, chunk=None, resume=True).hands_run == 10  # redoes the partial chunk 8-9
    run(fresh, hands=18, chunk=4)
    assert snapshot(small) == snapshot(fresh)
    run(more, hands=18, chunk=4)
    with pytest.raises(runner.RunError, match="would drop"):
        run(more, hands=10, chunk=4, resume=True)


def test_resume_of_a_complete_run_does_nothing(tmp_path: Path):
    run(tmp_path, hands=8, chunk=4)
    before = snapshot(tmp_path)
    assert run(tmp_path, hands=8, chunk=4, resume=True).hands_run == 0
    assert snapshot(tmp_path) == before


# ---------------------------------------------------------------------------------------------------------
# Refusals: mixing runs, bad arguments

def test_refuses_to_mix_rule_sets_seeds_and_chunking(tmp_path: Path):
    run(tmp_path, hands=8, chunk=4)
    before = snapshot(tmp_path)
    other = make_variant("cap3", name="chengdu")
    digests = (load_rules("chengdu").digest()[:12], other.rules.digest()[:12])
    for kw in ({}, {"resume": True}):
        with pytest.raises(runner.RunError) as exc:
            run(tmp_path, hands=8, chunk=4, variant=other, **kw)
        assert all(d in str(exc.value) for d in digests)
    with pytest.raises(runner.RunError, match="seed 7, not 8"):
        run(tmp_path, hands=8, chunk=4, seed=8, resume=True)
    with pytest.raises(runner.RunError, match="chunks of 4"):
        run(tmp_path, hands=8, chunk=2, resume=True)
    with pytest.raises(runner.RunError, match="pass --resume"):
        run(tmp_path, hands=8, chunk=4)
    assert snapshot(tmp_path) == before


def test_refuses_a_foreign_non_empty_directory(tmp_path: Path):
    for vdir in (control(tmp_path), tmp_path / "hands" / V):  # the control or a partition directory
        vdir.mkdir(parents=True)
        (vdir / "notes.txt").write_text("mine")
        with pytest.raises(runner.RunError, match="no _manifest.json"):
            run(tmp_path, hands=8, chunk=4)
        assert [p.name for p in vdir.iterdir()] == ["notes.txt"]
        (vdir / "notes.txt").unlink()


def test_debris_of_a_run_killed_before_its_manifest_is_cleaned(tmp_path: Path):
    vdir = control(tmp_path)
    vdir.mkdir(parents=True)
    (tmp_path / "hands" / V).mkdir(parents=True)
    (vdir / runner.LOCK_NAME).touch()
    debris = vdir / f".hands.{runner.part_name(0, 3)}.999.tmp"
    debris.write_bytes(b"half a file")
    run(tmp_path, hands=8, chunk=4)
    assert not debris.exists()
    assert runner.read_manifest(vdir)["complete"]


def test_unreadable_manifest_is_refused(tmp_path: Path):
    vdir = control(tmp_path)
    vdir.mkdir(parents=True)
    (vdir / "_manifest.json").write_text("{")
    with pytest.raises(runner.RunError, match="not valid JSON"):
        run(tmp_path, hands=8, chunk=4, resume=True)
    (vdir / "_manifest.json").write_text('{"format": 3}')
    with pytest.raises(runner.RunError, match="no 'package'"):
        run(tmp_path, hands=8, chunk=4, resume=True)
    assert sorted(p.name for p in vdir.iterdir()) == ["_manifest.json"]  # nothing of the user deleted


BAD_ARGS = [
    (["--hands", "0"], "--hands must be positive"),
    (["--hands", "10000000001"], "above the limit of 10,000,000,000"),
    (["--hands", "1000000000000000"], "above the limit"),
    (["--hands", "100000000", "--chunk-size", "10"], "raise --chunk-size"),
    (["--hands", "8", "--chunk-size", "1000000"], "--chunk-size must be in 1..200,000"),
    (["--hands", "8", "--name", "x" * 300], "at most 200"),
    (["--hands", "8", "--set", "scoring.cap=true"], "scoring.cap: Input should be a valid integer (got True)"),
    (["--hands", "-5"], "--hands must be positive"),
    (["--hands", "8", "--jobs", "0"], "--jobs must be in 1..4096"),
    (["--hands", "8", "--backend", "spark"], "'spark' is not one of 'loky', 'dask'"),
    (["--hands", "8", "--scheduler", "tcp://127.0.0.1:1"], "needs --backend dask"),
    (["--hands", "8", "--chunk-size", "0"], "--chunk-size"),
    (["--hands", "8", "--seed", "-1"], "--seed"),
    (["--hands", "8", "--set", "scoring.cap=banana"], "scoring.cap"),
    (["--hands", "8", "--set", "nonsense"], "KEY=VALUE"),
    (["--hands", "8", "--set", "no_such_rule=1"], "unknown key"),
    (["--hands", "8", "--name", "../escape"], "variant name"),
]


@pytest.mark.parametrize(("args", "message"), BAD_ARGS)
def test_bad_arguments_one_line_and_nothing_written(args, message, tmp_path: Path, capsys):
    code, out, err = cli_run(["simulate", "chengdu", "--out", str(tmp_path / "out"), *args], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_unknown_config_and_bad_out_dir(tmp_path: Path, capsys):
    code, _, err = cli_run(["simulate", "no_such_rules", "--hands", "8", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and err.startswith("error: ") and "no_such_rules" in err and err.count("\n") == 1
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    code, _, err = cli_run(["simulate", "chengdu", "--hands", "8", "--out", str(blocker / "run")], capsys)
    assert code == 2 and "not a directory" in err and err.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]
    if Path("/proc/self").is_dir():  # a directory nobody, not even root, can create entries in
        code, _, err = cli_run(["simulate", "chengdu", "--hands", "8", "--out", "/proc/xuezhan-test"], capsys)
        assert code == 2 and "cannot create /proc/xuezhan-test" in err and err.count("\n") == 1


def test_cli_simulate_writes_and_summarises(tmp_path: Path, capsys):
    code, out, _ = cli_run(["simulate", "cap3", "--hands", "8", "--chunk-size", "4", "--jobs", "1", "--quiet",
                            "--set", "scoring.cap=5", "--name", "cap5ish", "--out", str(tmp_path)], capsys)
    assert code == 0 and "cap5ish: 8 hands" in out
    manifest = json.loads((tmp_path / "_variants" / "variant=cap5ish" / "_manifest.json").read_text())
    assert manifest["rules"]["scoring"]["cap"] == 5 and manifest["source"]["set"] == ["scoring.cap=5"]


# ---------------------------------------------------------------------------------------------------------
# Reading the logs back

EXPECTED_PANDAS = {pa.int8(): "int8", pa.int16(): "int16", pa.int32(): "int32", pa.int64(): "int64",
                   pa.bool_(): "bool"}
EXPECTED_POLARS = {pa.int8(): pl.Int8, pa.int16(): pl.Int16, pa.int32(): pl.Int32, pa.int64(): pl.Int64,
                   pa.bool_(): pl.Boolean, pa.string(): pl.String}


@pytest.mark.parametrize("table", list(TABLES))
def test_parquet_reads_back_with_the_documented_schema(reference: Path, table: str):
    tdir = reference / table / V
    schema = TABLES[table]
    arrow = pq.read_table(tdir)
    assert arrow.schema.equals(schema, check_metadata=False)
    frame = pd.read_parquet(tdir)
    lazy = pl.scan_parquet(str(tdir / "*.parquet"))
    pl_schema = lazy.collect_schema()
    for fld in schema:
        if pa.types.is_dictionary(fld.type):
            assert isinstance(frame[fld.name].dtype, pd.CategoricalDtype), fld.name
            assert pl_schema[fld.name] == pl.Categorical, fld.name
        elif pa.types.is_string(fld.type):  # object before pandas 3, the str dtype from pandas 3 on
            assert pd.api.types.is_string_dtype(frame[fld.name].dtype), fld.name
        elif fld.name in NULL_IF_NO_WIN[table]:  # null when no win: pandas' numpy dtypes make that float + NaN
            assert str(frame[fld.name].dtype) == "float64", fld.name
            assert pl_schema[fld.name] == EXPECTED_POLARS[fld.type], fld.name
        else:
            assert str(frame[fld.name].dtype) == EXPECTED_PANDAS[fld.type], fld.name
            assert pl_schema[fld.name] == EXPECTED_POLARS[fld.type], fld.name
    df = lazy.collect()
    assert df.height == json.loads((control(reference) / "_manifest.json").read_text())["rows"][table]
    assert "variant" not in df.columns  # the partition is the path's, not the file's
    assert df["hand_id"].is_sorted()  # files in name order are in hand-id order


def test_tables_are_consistent(reference: Path):
    hands = pl.read_parquet(reference / "hands" / V / "*.parquet")
    players = pl.read_parquet(reference / "players" / V / "*.parquet")
    wins = pl.read_parquet(reference / "wins" / V / "*.parquet")
    assert hands["hand_id"].to_list() == list(range(HANDS))
    assert players.group_by("hand_id").len()["len"].unique().to_list() == [4]
    assert wins.height == hands["n_winners"].cast(pl.Int64).sum()
    assert players["score_total"].cast(pl.Int64).sum() == 0  # money only moves between players
