"""One-line reads of a whole run (issue 31 item 4): the table-first hive layout ``RUN/<table>/variant=<name>/``.

A user reads one table across every variant of a study, with a ``variant`` column, in one line from each of
pandas, pyarrow.dataset, polars and DuckDB (the lines of docs/logs.md), and gets the rows xuezhan itself reads;
every Parquet file says in its key-value metadata which variant, rules, seed and version it belongs to; runs of
the earlier variant-first layout are refused in one line; variant names are safe hive values.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow.dataset as ds
import pytest
from cli_helpers import cli_run

from analysis.load import RunDirError, open_run
from simulator import __version__
from simulator.logs import layout
from simulator.logs import manifest as mf
from simulator.logs.schema import LOG_FORMAT
from xuezhan.studies import run_study

ARMS = ("chengdu", "cap3", "no.exchange")  # a dot: hive values are any name the runner accepts
STUDY = {"name": "hive", "baseline": {"name": "chengdu", "rules": "chengdu"},
         "variants": [{"name": "cap3", "rules": "cap3"},
                      {"name": "no.exchange", "rules": "chengdu", "set": ["exchange_three=none"]}],
         "hands": 24, "seed": 5, "chunk_size": 12}


@pytest.fixture(scope="module")
def study_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hive") / "run"
    run_study(STUDY, out_dir=out, jobs=1, report=False, progress=False, diagnose=False)
    (out / "report.html").write_text("<html></html>")  # what `xuezhan report` leaves beside the tables
    return out


def one_liners(run: Path, table: str) -> dict[str, object]:
    """The four one-liners of docs/logs.md, verbatim but for the path."""
    return {
        "pandas": pd.read_parquet(run / table, dtype_backend="numpy_nullable"),
        "pyarrow": ds.dataset(run / table, partitioning="hive").to_table(),
        "polars": pl.read_parquet(run / table / "**/*.parquet", hive_partitioning=True),
        "duckdb": duckdb.sql(f"select * from read_parquet('{run}/{table}/*/*.parquet', hive_partitioning=true)"),
    }


def as_polars(frame: object, target: dict[str, pl.DataType]) -> pl.DataFrame:
    """A reader's result in xuezhan's column order and row order. Types must already be the target's, except
    categoricals (pandas' ``category``, Arrow dictionaries), which become strings."""
    if isinstance(frame, pd.DataFrame):
        df = pl.from_pandas(frame)
    elif isinstance(frame, duckdb.DuckDBPyRelation):
        df = frame.pl()
    else:
        df = frame if isinstance(frame, pl.DataFrame) else pl.from_arrow(frame)
    assert isinstance(df, pl.DataFrame) and set(df.columns) == set(target)
    for col, dtype in target.items():
        have = df.schema[col]
        assert have == dtype or (dtype == pl.String and have == pl.Categorical), (col, have)
    keys = [k for k in ("variant", "hand_id", "seat", "win_order", "winner") if k in target]
    return df.select([pl.col(c).cast(t) for c, t in target.items()]).sort(keys)


@pytest.mark.parametrize("table", mf.TABLES)
def test_four_readers_read_one_table_across_all_variants(study_run: Path, table: str):
    expected = open_run(study_run).scan(table).collect()
    assert expected["variant"].unique().sort().to_list() == sorted(ARMS) and expected.height > 0
    target = dict(expected.schema)
    expected = expected.sort([k for k in ("variant", "hand_id", "seat", "win_order", "winner") if k in target])
    for reader, frame in one_liners(study_run, table).items():
        got = as_polars(frame, target)
        assert got.equals(expected), reader


def test_variant_dtypes_and_pandas_nullable_integers(study_run: Path):
    plain = pd.read_parquet(study_run / "players")  # the bare one-liner
    assert isinstance(plain["variant"].dtype, pd.CategoricalDtype)
    assert sorted(plain["variant"].cat.categories) == sorted(ARMS)
    assert str(plain["fan"].dtype) == "float64"  # numpy dtypes: an integer column with nulls becomes float + NaN
    nullable = pd.read_parquet(study_run / "players", dtype_backend="numpy_nullable")
    assert str(nullable["fan"].dtype) == "Int8" and nullable["fan"].isna().any()
    assert ds.dataset(study_run / "players", partitioning="hive").schema.field("variant").type == "string"
    assert pl.scan_parquet(study_run / "players").collect_schema()["variant"] == pl.String


def test_table_directories_hold_only_partitions_of_parts(study_run: Path):
    assert sorted(p.name for p in study_run.iterdir() if not p.name.startswith(".")) == sorted(
        ["_variants", "report.html", "study.json", *mf.TABLES])
    for table in mf.TABLES:
        assert sorted(p.name for p in (study_run / table).iterdir()) == sorted(f"variant={a}" for a in ARMS)
        assert all(mf.is_part_name(p.name) for p in (study_run / table).glob("*/*"))


def test_every_file_carries_its_variant_rules_seed_and_version(study_run: Path):
    run = open_run(study_run)
    for variant in ARMS:
        manifest = run.manifests[variant]
        for table in mf.TABLES:
            parts = run.parts(variant, table)
            assert len(parts) == 2
            for part in parts:
                assert layout.read_file_metadata(part) == {
                    "table": table, "variant": variant, "digest": manifest["digest"], "seed": "5",
                    "duplicate": "false", "version": __version__, "log_format": str(LOG_FORMAT)}
        assert run.file_metadata(variant, "wins")["digest"] == run.digest(variant)
    assert run.file_metadata("cap3") != run.file_metadata("chengdu")


# ---------------------------------------------------------------------------------------------------------
# Runs of the earlier layout, strays beside the partitions, unsafe names

def _old_layout(study_run: Path, old: Path) -> Path:
    """The study moved into the variant-first layout of earlier versions: ``old/variant=<v>/<table>/``."""
    for arm in ARMS:
        vdir = old / f"variant={arm}"
        shutil.copytree(layout.control_dir(study_run, arm), vdir)
        for table in mf.TABLES:
            shutil.copytree(study_run / table / f"variant={arm}", vdir / table)
    shutil.copy(study_run / "study.json", old / "study.json")
    return old


@pytest.mark.parametrize("argv", [["verify", "{old}"], ["report", "{old}", "--boot", "0"],
                                  ["compare", "{old}", "chengdu", "cap3"], ["replay", "--run", "{old}", "--hand", "1"],
                                  ["verify", "{old}/variant=cap3"],
                                  ["simulate", "chengdu", "--hands", "4", "--out", "{old}"],
                                  ["study", "quickstart", "--hands", "4", "--out", "{old}"]])
def test_an_old_layout_run_is_refused_in_one_line(study_run: Path, tmp_path: Path, capsys, argv):
    old = _old_layout(study_run, tmp_path / "old")
    before = sorted(p.relative_to(old) for p in old.rglob("*"))
    code, _, err = cli_run([a.format(old=old) for a in argv], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: {'--run ' if argv[0] == 'replay' else ''}{old}: written by an older xuezhan")
    assert "re-simulate it into a new directory" in err
    assert sorted(p.relative_to(old) for p in old.rglob("*")) == before  # nothing written or moved
    with pytest.raises(RunDirError, match="older xuezhan.*re-simulate"):
        open_run(old)


def test_strays_in_a_table_directory_are_named_and_moved_aside(study_run: Path, tmp_path: Path, capsys):
    run = tmp_path / "run"
    shutil.copytree(study_run, run)
    (run / "players" / "notes.txt").write_text("mine")
    shutil.copytree(run / "hands" / "variant=cap3", run / "hands" / "variant=ghost")  # no such variant
    code, out, _ = cli_run(["verify", str(run)], capsys)
    assert code == 1 and f"BAD  {run / 'players' / 'notes.txt'}: not a variant=<name> directory" in out
    assert f"BAD  {run / 'hands' / 'variant=ghost'}: not a variant=<name> directory" in out
    with pytest.raises(RunDirError, match="variant=ghost: not a variant=<name> directory.*[(][+]1 more[)]"):
        open_run(run)
    with pytest.raises(Exception):  # noqa: B017 - what a stray does to a user's one-liner (pyarrow's own error)
        pd.read_parquet(run / "players")
    code, out, _ = cli_run(["verify", "--repair", str(run)], capsys)
    assert code == 0 and f"{run}/players/notes.txt: not ours, moved to _quarantine/players/notes.txt" in out
    assert (run / "_quarantine" / "players" / "notes.txt").read_text() == "mine"
    assert (run / "_quarantine" / "hands" / "variant=ghost").is_dir()
    assert cli_run(["verify", str(run)], capsys)[0] == 0
    assert len(pd.read_parquet(run / "players")) == len(pd.read_parquet(study_run / "players"))


def test_resume_moves_strays_of_the_table_directories_aside(study_run: Path, tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(study_run, run)
    (run / "wins" / "notes.txt").write_text("mine")
    result = run_study(STUDY, out_dir=run, jobs=1, report=False, progress=False, diagnose=False, resume=True)
    assert "wins/notes.txt: not ours, moved to _quarantine/wins/notes.txt" in result.summaries[0].notes
    assert (run / "_quarantine" / "wins" / "notes.txt").read_text() == "mine"
    assert open_run(run).wins().collect().equals(open_run(study_run).wins().collect())


@pytest.mark.parametrize(("name", "words"), [("2024", "a letter first"), ("true", "take it for a value"),
                                              ("Infinity", "take it for a value"), ("a%20b", "a letter first"),
                                              ("a=b", "a letter first")])
def test_variant_names_must_be_safe_hive_values(tmp_path: Path, capsys, name, words):
    code, _, err = cli_run(["simulate", "chengdu", "--hands", "4", "--name", name, "--out", str(tmp_path / "o")],
                           capsys)
    assert code == 2 and err.count("\n") == 1 and f"variant name {name!r}" in err and words in err, err
    assert not (tmp_path / "o").exists()


def test_a_study_with_an_unsafe_arm_name_writes_nothing(tmp_path: Path):
    from simulator.run.runner import RunError

    study = json.loads(json.dumps(STUDY))
    study["variants"][0]["name"] = "False"
    with pytest.raises(RunError, match="variant name 'False'"):
        run_study(study, out_dir=tmp_path / "o", jobs=1, report=False, progress=False, diagnose=False)
    assert not (tmp_path / "o").exists()
