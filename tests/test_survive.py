"""A run survives what people and file systems do to it (issue 51): links, stray files, forged manifests,
upgrades, reading where a seated bot's module is absent. Each test is one item of the issue and fails without its
fix. A small single-process run (8 hands, 2 chunks) is copied and damaged per test; the misbehaving Python bots
are in tests/test_bot_watchdog.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_run, reference_fixture, snapshot

from analysis.load import RunDirError, open_run
from simulator.logs import layout, rundir, schema
from simulator.logs import manifest as mf
from simulator.run import plan as runplan
from simulator.run import runner
from simulator.run.verify import verify_run

HANDS, CHUNK, SEED = 8, 4, 5
V = "variant=chengdu"
PART = mf.part_name(4, 7)


def run(out: Path, **kw) -> runner.RunSummary:
    spec = runner.RunSpec(hands=HANDS, seed=SEED, jobs=1, chunk_size=CHUNK, progress=False, **kw)
    return runner.simulate(runner.Variant.load("chengdu"), out, spec)


reference = reference_fixture(run)


@pytest.fixture
def copy(reference: Path, tmp_path: Path) -> Path:
    shutil.copytree(reference, tmp_path / "run")
    return tmp_path / "run"


def resume(run_dir: Path, capsys, *extra: str) -> tuple[int, str, str]:
    return cli_run(["simulate", "chengdu", "-n", str(HANDS), "--seed", str(SEED), "--jobs", "1", "--quiet",
                    "--out", str(run_dir), "--resume", *extra], capsys)


def one_line(code: int, err: str) -> None:
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err


def rewrite_manifest(run_dir: Path, edit) -> None:
    """Edit the manifest and its backup alike, checksum recomputed: a consistent forgery."""
    vdir = layout.control_dir(run_dir, "chengdu")
    manifest = json.loads((vdir / mf.MANIFEST).read_text())
    edit(manifest)
    data = mf.manifest_bytes(manifest)
    (vdir / mf.MANIFEST).write_bytes(data)
    (vdir / mf.BACKUP).write_bytes(data)


# ---------------------------------------------------------------------------------------------------------
# 3. reading a run never executes the modules its manifest names

BOT = '''
from pathlib import Path
from simulator.agents import GreedyBot
Path(__file__).with_name("IMPORTED").write_text("the module ran")


class Quiet(GreedyBot):
    pass
'''

READ = """
import sys
from analysis.load import open_run
from simulator.run.verify import verify_run
lines, bad = verify_run(sys.argv[1])
run = open_run(sys.argv[1])
n = run.players().collect().height
bots = sorted(set(run.players().collect()["bot"]))
assert "absentbot" not in sys.modules, "imported"
print(bad, n, bots, run.bots("chengdu")[0])
"""


def test_a_python_bot_run_is_read_without_importing_its_module(tmp_path: Path):
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "absentbot.py").write_text(BOT)
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(bots)}
    proc = subprocess.run([sys.executable, "-m", "simulator.cli", "simulate", "chengdu", "-n", "4", "--chunk-size",
                           "2", "--jobs", "1", "--quiet", "--out", str(out), "--set",
                           "seats=[absentbot:Quiet, greedy, greedy, greedy]"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (bots / "IMPORTED").unlink()
    # the module present and importable: reading must not run it
    got = subprocess.run([sys.executable, "-c", READ, str(out)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split()[:2] == ["0", "16"] and "absentbot:Quiet" in got.stdout
    assert not (bots / "IMPORTED").exists()
    # the module absent: verify calls the intact manifest intact, readers read it
    env.pop("PYTHONPATH")
    got = subprocess.run([sys.executable, "-c", READ, str(out)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600)
    assert got.returncode == 0 and got.stdout.split()[:2] == ["0", "16"], got.stderr
    proc = subprocess.run([sys.executable, "-m", "simulator.cli", "verify", str(out)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0 and proc.stdout.startswith("ok "), proc.stdout + proc.stderr


# ---------------------------------------------------------------------------------------------------------
# 1. symbolic links: refused everywhere with one line, never followed, never moved

def _link_part(run_dir: Path, elsewhere: Path) -> Path:
    """A part file replaced by a link to an identical copy elsewhere."""
    part = run_dir / "players" / V / PART
    shutil.copy(part, elsewhere / PART)
    part.unlink()
    part.symlink_to(elsewhere / PART)
    return part


def _link_partition(run_dir: Path, elsewhere: Path) -> Path:
    """A whole partition moved elsewhere and linked back."""
    part = run_dir / "hands" / V
    shutil.move(part, elsewhere / V)
    part.symlink_to(elsewhere / V, target_is_directory=True)
    return part


@pytest.mark.parametrize("make_link", [_link_part, _link_partition])
def test_a_symlink_in_a_run_is_refused_by_verify_readers_resume_and_repair(copy: Path, tmp_path: Path, capsys,
                                                                          make_link):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = make_link(copy, elsewhere)
    before = {p: p.lstat().st_ino for p in copy.rglob("*")}
    lines, bad = verify_run(copy)
    assert bad == 1 and lines == [f"BAD  {link}: {rundir.LINK_ADVICE}"]
    with pytest.raises(RunDirError, match="a symbolic link"):
        open_run(copy)
    with pytest.raises(RunDirError, match="a symbolic link"):
        open_run(copy, check="sizes")
    code, _, err = resume(copy, capsys)
    one_line(code, err)
    assert f"{link}: a symbolic link" in err
    code, out, err = cli_run(["verify", "--repair", str(copy)], capsys)
    assert code == 1 and f"cannot repair {link}: a symbolic link" in out and "repaired" not in out
    assert {p: p.lstat().st_ino for p in copy.rglob("*")} == before  # nothing moved, nothing written
    # replaced by what it points to, the run is whole again
    link.unlink()
    shutil.move(elsewhere / link.name, link)
    assert verify_run(copy)[1] == 0


def test_a_run_is_never_reported_whole_when_a_listed_file_went_missing(copy: Path, monkeypatch):
    """Whatever broke the run while it was being resumed, success is never reported on it."""
    clean = runner.clean_run

    def and_lose_a_file(out_dir):
        (out_dir / "wins" / V / PART).unlink()
        return clean(out_dir)

    monkeypatch.setattr(runner, "clean_run", and_lose_a_file)
    with pytest.raises(runner.RunError, match=f"not whole after simulating \\(wins/{V}/{PART}: missing\\)"):
        run(copy, resume=True)


# ---------------------------------------------------------------------------------------------------------
# 4. the facts a manifest states are those every file states of itself

@pytest.mark.parametrize("key, value, says", [("seed", 6, "seed '5', the manifest '6'"),
                                             ("duplicate", True, "duplicate 'false', the manifest 'true'")])
def test_an_edited_manifest_with_its_checksum_recomputed_is_caught(copy: Path, capsys, key, value, says):
    rewrite_manifest(copy, lambda m: m.update({key: value}))
    mf.read(copy / "_variants" / V)  # the forgery is consistent: checksum, backup
    lines, bad = verify_run(copy)
    assert bad == 6 and f"hands/{V}/{mf.part_name(0, 3)}: its own metadata says {says}" in "\n".join(lines)
    for check in mf.CHECKS:
        with pytest.raises(RunDirError, match=f"its own metadata says {key}"):
            open_run(copy, check=check)


# ---------------------------------------------------------------------------------------------------------
# 5. the log format: recorded in the manifest and every file, never mixed by a resume

def test_manifest_and_files_record_the_log_format(reference: Path):
    assert json.loads((reference / "_variants" / V / mf.MANIFEST).read_text())["log_format"] == schema.LOG_FORMAT
    for part in (reference / "wins" / V).iterdir():
        assert layout.read_file_metadata(part)["log_format"] == str(schema.LOG_FORMAT)


def test_a_resume_across_log_formats_is_refused(copy: Path, capsys, monkeypatch):
    (copy / "wins" / V / PART).unlink()  # a chunk to redo: it would be written in the new format
    monkeypatch.setattr(runplan, "LOG_FORMAT", schema.LOG_FORMAT + 1)  # an upgrade that changed a dictionary
    before = snapshot(copy)
    code, _, err = resume(copy, capsys)
    one_line(code, err)
    assert (f"holds logs of log format {schema.LOG_FORMAT}, this xuezhan writes format {schema.LOG_FORMAT + 1}"
            in err and "simulate into a new --out" in err)
    assert snapshot(copy) == before


def test_a_manifest_from_before_log_formats_is_read_but_not_resumed(copy: Path, capsys):
    rewrite_manifest(copy, lambda m: m.pop("log_format"))
    lines, bad = verify_run(copy)
    assert bad == 6 and f"its own metadata says log_format '{schema.LOG_FORMAT}', the manifest '0'" in lines[0]
    code, _, err = resume(copy, capsys)
    one_line(code, err)
    assert "holds logs of log format 0" in err


# Each log format's columns, types and dictionaries, pinned: a change to any of them without a new LOG_FORMAT
# (simulator/rules/columns.py) fails here. Add the new format's line when bumping it; never edit an old one.
FORMATS = {1: "e7688a56434b3a5d", 2: "b8a1bdd7559920b4"}


def _log_format_fingerprint() -> str:
    import hashlib

    from simulator.logs.encode import VOCABULARIES

    tables = {name: [(f.name, str(f.type)) for f in sch] for name, sch in schema.tables(True).items()}
    blob = json.dumps({"tables": tables, "dictionaries": VOCABULARIES}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def test_the_log_format_changes_with_any_column_or_dictionary():
    assert FORMATS.get(schema.LOG_FORMAT) == _log_format_fingerprint(), (
        "the log schema or a dictionary changed: bump simulator.logs.schema.LOG_FORMAT and pin the new format in "
        f"FORMATS (fingerprint {_log_format_fingerprint()})")


# ---------------------------------------------------------------------------------------------------------
# 6. another run's part file is moved aside, never deleted; what an OS drops in a directory is ignored

def test_resume_quarantines_a_foreign_part_file(copy: Path, tmp_path: Path, capsys):
    other = tmp_path / "other"
    runner.simulate(runner.Variant.load("chengdu"), other,
                    runner.RunSpec(hands=12, seed=SEED + 1, jobs=1, chunk_size=CHUNK, progress=False))
    foreign = mf.part_name(8, 11)  # not listed in copy's manifest: unlisted, its metadata another seed's
    shutil.copy(other / "hands" / V / foreign, copy / "hands" / V / foreign)
    (copy / "players" / V / mf.part_name(0, 1)).write_bytes(b"not parquet at all")
    assert verify_run(copy)[1] == 2
    summary = run(copy, resume=True)
    assert any(f"hands/{V}/{foreign}: not ours, moved to _variants/{V}/_quarantine/hands/{foreign}" in n
               for n in summary.notes), summary.notes
    kept = copy / "_variants" / V / mf.QUARANTINE / "hands" / foreign
    assert kept.read_bytes() == (other / "hands" / V / foreign).read_bytes()
    assert (copy / "_variants" / V / mf.QUARANTINE / "players" / mf.part_name(0, 1)).read_bytes() == \
        b"not parquet at all"
    assert verify_run(copy)[1] == 0


def test_os_litter_is_ignored_by_verify_readers_resume_and_repair(reference: Path, copy: Path, capsys):
    litter = [copy / "hands" / V / ".DS_Store", copy / "wins" / V / "Thumbs.db", copy / "players" / "desktop.ini",
              copy / "wins" / V / f"._{PART}"]
    for path in litter:
        path.write_bytes(b"\0\0\0\1Bud1")
    (copy / "players" / V / "._x").mkdir()  # a directory named like litter is not litter
    lines, bad = verify_run(copy)
    assert bad == 1 and f"players/{V}/._x: not listed" in lines[0], lines
    (copy / "players" / V / "._x").rmdir()
    lines, bad = verify_run(copy)
    assert bad == 0 and lines[0].startswith("ok ")
    assert open_run(copy).hands().collect().equals(open_run(reference).hands().collect())
    code, out, _ = cli_run(["verify", "--repair", str(copy)], capsys)
    assert code == 0 and "repaired" not in out
    assert run(copy, resume=True).notes == []
    assert all(path.read_bytes() == b"\0\0\0\1Bud1" for path in litter)


# ---------------------------------------------------------------------------------------------------------
# 7. the smaller items

@pytest.mark.parametrize("inside", ["wins/variant=chengdu/nested", "_variants", "hands"])
def test_an_output_inside_a_run_is_refused(copy: Path, capsys, inside):
    before = snapshot(copy)
    code, _, err = cli_run(["simulate", "chengdu", "-n", "4", "--quiet", "--out", str(copy / inside)], capsys)
    one_line(code, err)
    assert f"inside the run directory {copy}" in err
    assert snapshot(copy) == before and not (copy / inside / "nested").exists()


def test_manifest_and_backup_both_damaged_are_rebuilt_by_resume(reference: Path, copy: Path, capsys):
    vdir = copy / "_variants" / V
    for name in (mf.MANIFEST, mf.BACKUP):
        (vdir / name).write_bytes((vdir / name).read_bytes()[:300])
    code, out, err = cli_run(["verify", "--repair", str(copy)], capsys)
    assert code == 1 and out.startswith(f"cannot repair {vdir}: {vdir / mf.MANIFEST}: not valid JSON")
    assert "run the run's own simulate/study command again with --resume, which rebuilds the manifest" in out
    (copy / "wins" / V / PART).write_bytes(b"damaged")  # this chunk is not adopted: re-simulated
    summary = run(copy, resume=True)
    assert "both damaged; rebuilt from the part files' own metadata (1 chunks kept" in summary.notes[0]
    assert summary.hands_run == 4
    assert (vdir / mf.QUARANTINE / "wins" / PART).read_bytes() == b"damaged"  # moved aside, not deleted
    assert {k: v for k, v in snapshot(copy).items() if mf.QUARANTINE not in k} == snapshot(reference)


def test_a_no_op_resume_of_a_finished_run_writes_nothing(reference: Path, copy: Path, monkeypatch):
    def full(*args, **kw):
        raise OSError(28, "No space left on device", str(args[0]))

    monkeypatch.setattr(rundir, "atomic_write", full)
    summary = run(copy, resume=True)
    assert summary.hands_run == 0 and summary.hands == HANDS
    assert snapshot(copy) == snapshot(reference)


def test_repair_names_each_file_once_and_a_failure_as_a_failure(copy: Path, capsys):
    vdir = copy / "_variants" / V
    (vdir / mf.MANIFEST).write_text("{")
    (copy / "hands" / V / "notes.txt").write_text("mine")
    code, out, _ = cli_run(["verify", "--repair", str(copy)], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"repaired  {vdir / mf.MANIFEST}: not valid JSON"), lines
    assert lines[1] == (f"repaired  {copy}/hands/{V}/notes.txt: not ours, moved to _variants/{V}/_quarantine/hands/"
                        "notes.txt")
    (vdir / mf.BACKUP).write_bytes(b"")
    (vdir / mf.MANIFEST).write_bytes(b"")
    code, out, _ = cli_run(["verify", "--repair", str(copy)], capsys)
    assert code == 1 and out.startswith(f"cannot repair {vdir}: ") and "repaired" not in out


def test_a_newline_in_a_directory_name_cannot_forge_an_ok_line(reference: Path, tmp_path: Path, capsys):
    forged = tmp_path / "x\nok   good: 9 files checked (full)"
    shutil.copytree(reference, forged)
    (forged / "hands" / V / PART).write_bytes(b"")
    code, out, err = cli_run(["verify", str(forged)], capsys)
    assert code == 1 and not any(line.startswith("ok") for line in (out + err).splitlines()), out + err
    assert "x\\nok   good" in out


STUDY = """name: survive
baseline: chengdu
variants:
  - name: hz8
    rules: huazhu_8x
hands: 8
seed: 5
chunk_size: 4
"""


def test_study_resume_refuses_a_symlinked_partition_before_writing(tmp_path: Path, capsys):
    (tmp_path / "s.yaml").write_text(STUDY)
    out = tmp_path / "run"
    argv = ["study", str(tmp_path / "s.yaml"), "--out", str(out), "--jobs", "1", "--quiet", "--no-report"]
    code, _, err = cli_run(argv, capsys)
    assert code == 0, err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = _link_partition(out, elsewhere)
    before = {p: (p.lstat().st_ino, p.lstat().st_mtime_ns) for p in out.rglob("*")}
    for extra in ([], ["--hands", "12"]):  # as it was, or extended (a new study.json)
        code, _, err = cli_run([*argv, "--resume", *extra], capsys)
        one_line(code, err)
        assert f"{link}: a symbolic link" in err
    assert {p: (p.lstat().st_ino, p.lstat().st_mtime_ns) for p in out.rglob("*")} == before


def test_verify_suggests_only_the_fix_that_applies(copy: Path, capsys):
    (copy / "hands" / V / "notes.txt").write_text("mine")
    code, _, err = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "--repair` (or --resume) moves stray entries" in err and "re-simulates" not in err
    (copy / "hands" / V / "notes.txt").unlink()
    (copy / "wins" / V / PART).write_bytes(b"")
    code, _, err = cli_run(["verify", str(copy)], capsys)
    assert code == 1 and "--resume` re-simulates the damaged chunks" in err and "--repair" not in err
