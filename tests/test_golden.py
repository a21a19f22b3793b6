"""Golden playthroughs and logs: digests committed in tests/data/golden_engine.json and golden_expert.json.

A refactor or a speed-up must leave them identical (same seed, same code behaviour ⇒ same digests). A change that
means to alter play (a rule correction, a bot change) regenerates the group it changes, and its commit says why:

    python benchmarks/same_play.py --golden expert    # a change to the expert: only the cases that seat one
    python benchmarks/same_play.py --golden engine    # the engine, the rules, the logs, the other bots

Each file holds the digests of every array the engine returns for 200 hands per play case (the compiled batch,
the step API with Python agents, sessions under every dealer rule, 血流, 唱歌/跳舞, void_suit none, 换三张) and
the digests of the logs of small studies (decoded columns and the project's metadata, not the Parquet bytes, so
a pyarrow release that writes the same data passes). ``benchmarks/same_play.py`` lists the cases.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _same_play():
    spec = importlib.util.spec_from_file_location("same_play", ROOT / "benchmarks" / "same_play.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SP = _same_play()
COMMITTED = {g: json.loads(SP.golden_path(g).read_text()) for g in SP.GROUPS}
PLAY_CASES = [(g, case) for g in SP.GROUPS for case in sorted(COMMITTED[g]["play"])]


@pytest.fixture(scope="module")
def played() -> dict:
    return {g: SP.run(COMMITTED[g]["hands"], COMMITTED[g]["seed"], g) for g in SP.GROUPS}


@pytest.mark.parametrize("group", SP.GROUPS)
def test_every_case_has_a_committed_digest(played, group):
    assert set(COMMITTED[group]["play"]) == set(played[group])
    assert COMMITTED[group]["hands"] == SP.GOLDEN_HANDS


@pytest.mark.parametrize(("group", "case"), PLAY_CASES)
def test_play_is_unchanged(played, group, case):
    assert played[group][case] == COMMITTED[group]["play"][case], (
        f"{case}: play changed. If the change is meant to alter play, regenerate with "
        f"`python benchmarks/same_play.py --golden {group}` and say why in the commit message.")


@pytest.mark.parametrize("group", SP.GROUPS)
def test_the_logs_of_the_small_studies_are_unchanged(group):
    """The logs the runner writes for the small studies of the group, file by file: the engine, the log encoding
    and the chunking together. The files' ``xuezhan.*`` metadata holds the xuezhan version, so a version bump
    regenerates both groups."""
    ref = COMMITTED[group]["runs"]
    got = SP.run_studies(COMMITTED[group]["seed"], group)
    changed = sorted(k for k in set(ref) | set(got) if ref.get(k) != got.get(k))
    assert not changed, (f"these log files changed: {changed}; if meant, regenerate with "
                         f"`python benchmarks/same_play.py --golden {group}`")


def _seated_bots(config: str, overrides: list[str]) -> set[str]:
    from simulator.rules import load_rules

    return {s.bot for s in load_rules(config, overrides).seats}


def test_only_cases_with_an_expert_seat_are_in_the_expert_file():
    """The split an expert change relies on, read from the rules each case loads (not from its text): every
    engine case seats no expert, every expert case seats one; both groups play 换三张, 血流 and sessions."""
    cases = {**SP.CASES, **SP.STEP_CASES, **SP.SESSION_CASES}
    for group, ref in COMMITTED.items():
        for name in ref["play"]:
            config, overrides = cases[name][:2]
            assert ("expert" in _seated_bots(config, overrides)) == (group == "expert"), name
        rules = [SP.load_rules(*cases[n][:2]) for n in ref["play"]]
        assert any(r.exchange_three != "none" for r in rules), group
        assert any(r.mode == "xueliu" for r in rules), group
        assert any(n.startswith(("session_", "plain_session_")) for n in ref["play"]), group
    assert any(k.startswith("exchange/") for k in COMMITTED["engine"]["runs"])
    assert all(k.split("/")[0] in ("quickstart", "xueliu") for k in COMMITTED["expert"]["runs"])


def test_a_changed_array_changes_the_digest():
    """The digest covers the bytes, dtype and shape of every array, nested dicts included."""
    import numpy as np

    raw = {"p": np.arange(8, dtype=np.int64).reshape(4, 2), "nested": {"w": np.zeros(3, np.int8)}}
    base = SP.digest(raw)
    raw["nested"]["w"][1] = 1
    assert SP.digest(raw) != base
    raw["nested"]["w"][1] = 0
    assert SP.digest(raw) == base
    assert SP.digest({**raw, "p": raw["p"].astype(np.int32)}) != base
    assert SP.digest({**raw, "p": raw["p"].reshape(2, 4)}) != base


def _log_file(tmp_path: Path, name: str, values: list[int], meta: dict[bytes, bytes], **options) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from simulator.logs.encode import PARQUET_OPTIONS

    table = pa.table({"hand_id": pa.array(values, pa.int64()),
                      "bot": pa.array(["greedy", "value", "greedy"][:len(values)]).dictionary_encode()})
    path = tmp_path / name
    pq.write_table(table.replace_schema_metadata(meta), path, **{**PARQUET_OPTIONS, **options})
    return path


def test_log_digest_reads_the_data_not_the_writer(tmp_path):
    """Another pyarrow writes another ``created_by`` and may choose other encodings and page versions: the log
    digest stays; a changed value, dictionary or xuezhan metadata changes it."""
    meta = {b"xuezhan.table": b"hands", b"xuezhan.version": b"1.0"}
    path = _log_file(tmp_path, "a.parquet", [1, 2, 3], meta)
    raw = path.read_bytes()
    writer = next(w for w in (b"parquet-cpp-arrow version ", b"parquet-cpp version ") if w in raw)
    start = raw.index(writer) + len(writer)
    end = start + next(i for i, c in enumerate(raw[start:]) if not chr(c).isdigit() and chr(c) != ".")
    other = (b"9" * (end - start - 2) + b".0")
    assert len(other) == end - start
    patched = tmp_path / "b.parquet"
    patched.write_bytes(raw[:start] + other + raw[end:])  # the same file from a "newer" writer
    assert hashlib.sha256(patched.read_bytes()).hexdigest() != hashlib.sha256(raw).hexdigest()
    base = SP.log_digest(path)
    assert SP.log_digest(patched) == base
    assert SP.log_digest(_log_file(tmp_path, "c.parquet", [1, 2, 3], meta, data_page_version="2.0",
                                   use_dictionary=False)) == base
    assert SP.log_digest(_log_file(tmp_path, "d.parquet", [1, 2, 4], meta)) != base
    assert SP.log_digest(_log_file(tmp_path, "e.parquet", [1, 2, 3], {**meta, b"xuezhan.version": b"1.1"})) != base
    assert SP.log_digest(_log_file(tmp_path, "f.parquet", [1, 2, 3], meta, compression="snappy",
                                   compression_level=None)) != base
    assert SP.log_digest(_log_file(tmp_path, "g.parquet", [1, 2, 3], meta, row_group_size=2)) != base
