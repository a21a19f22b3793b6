"""Rule sets: every shipped config loads, inheritance and overrides, strict one-line errors, the array form."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simulator import rules as R
from simulator.rules import RulesError, load_rules

CONFIGS = sorted(R.CONFIG_DIR.glob("*.yaml"))


def test_configs_exist():
    names = {p.stem for p in CONFIGS}
    assert {"chengdu", "qq_sichuan", "chengdu_points", "huazhu_8x", "huazhu_cap", "cap3", "cap5", "uncapped",
            "no_pass_lock", "haidilao", "exchange_three", "single", "forced_last_four", "kong_refund",
            "zimo_add_fan"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_every_config_loads(path):
    rules = load_rules(path.stem)
    assert rules.name == path.stem
    params = rules.to_arrays()
    assert params.dtype == np.int64 and params.shape == (R.N_PARAMS,)
    assert len(rules.digest()) == 64


def test_named_sets_follow_rules_md():
    qq = load_rules("qq_sichuan")
    assert qq.scoring.mode == "table" and qq.scoring.fan_offset == 1 and qq.scoring.cap is None
    assert qq.scoring.hand_types["qinglongqidui"] == 6 and qq.void_suit == "none"
    assert qq.kongs.discard_kong.discarder == 1 and qq.forced_win_last_tiles == 4
    pts = load_rules("chengdu_points")
    assert pts.scoring.points == "linear" and pts.scoring.hand_types["tianhu"] == 8
    assert pts.scoring.extras["gangshanghua"] == 2


def test_extends_deep_merges(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("extends: chengdu\nscoring: {extras: {haidipao: 1}}\n", encoding="utf-8")
    rules = load_rules(str(child))
    assert rules.scoring.extras["haidipao"] == 1
    assert rules.scoring.extras["tianhu"] == 3  # sibling keys of the merged mapping are kept
    assert rules.scoring.cap == 4 and rules.name == "child"
    grandchild = tmp_path / "grandchild.yaml"
    grandchild.write_text("extends: child\nscoring: {cap: 2}\n", encoding="utf-8")  # relative to its own folder
    g = load_rules(str(grandchild))
    assert g.scoring.cap == 2 and g.scoring.extras["haidipao"] == 1


def test_set_overrides():
    rules = load_rules("chengdu", ["scoring.cap=null", "settlement.huazhu_penalty=cap", "pass_ron_lock=off"])
    assert rules.scoring.cap is None and rules.settlement.huazhu_penalty == "cap" and rules.pass_ron_lock == "off"
    p = rules.to_arrays()
    assert p[R.SLOT["scoring.cap"]] == p[R.SLOT["settlement.huazhu_penalty"]] == R.SPECIAL
    assert load_rules("chengdu", {"scoring": {"cap": 3}}).scoring.cap == 3


def test_to_arrays_slots():
    p = load_rules("chengdu").to_arrays()
    assert p[R.P_FLAG_FAN + R.FLAG_BIT["qingyise"]] == 2 and p[R.P_FLAG_FAN + R.FLAG_BIT["tianhu"]] == 3
    assert p[R.SLOT["scoring.extras.gen"]] == 1 and p[R.SLOT["scoring.base"]] == 1
    assert (p[R.P_TABLE_FAN:R.N_PARAMS] == -1).all()  # additive: no table
    q = load_rules("qq_sichuan").to_arrays()
    assert q[R.P_TABLE_FAN + R.HAND_TYPE_INDEX["pinghu"]] == 1
    assert q[R.P_TABLE_FAN + R.HAND_TYPE_INDEX["jingou"]] == -1  # not listed
    assert q[R.P_FLAG_FAN + R.FLAG_BIT["qingyise"]] == 0  # table mode: shapes count through the table only


def _error(ref, overrides=None) -> str:
    with pytest.raises(RulesError) as info:
        load_rules(ref, overrides)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("content", "words"), [
    ("extends: chengdu\nscoring: {caps: 3}\n", "scoring.caps: unknown key"),
    ("extends: chengdu\nscoring: {cap: three}\n", "scoring.cap"),
    ("extends: chengdu\nscoring: {cap: 99}\n", "scoring.cap"),
    ("extends: chengdu\nmode: [xuezhan\n", "malformed YAML"),
    ("- a list\n", "must be a YAML mapping"),
    ("extends: nosuch\n", "'nosuch' not found"),
    ("extends: chengdu\nscoring: {mode: table, hand_types: {qidui: 3}}\n", "pinghu"),
])
def test_bad_rule_files_name_file_and_key(tmp_path, content, words):
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    message = _error(str(path))
    assert words in message
    if "not found" not in message:
        assert "bad.yaml" in message


def test_missing_file_and_bad_overrides():
    assert "not found" in _error("/nonexistent/rules.yaml")
    assert "KEY=VALUE" in _error("chengdu", ["scoring.cap"])
    assert "scoring.cap" in _error("chengdu", ["scoring.cap=0"])
    assert "chengdu.yaml" in _error("chengdu", ["void_suit=sometimes"])


def test_extends_cycle(tmp_path):
    (tmp_path / "a.yaml").write_text("extends: b\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("extends: a\n", encoding="utf-8")
    assert "cycle" in _error(str(Path(tmp_path / "a.yaml")))


# ---------------------------------------------------------------------------------------------------------
# Strict values and readable errors (issue 8)

@pytest.mark.parametrize(("override", "key"), [
    ("scoring.cap=true", "scoring.cap"),             # YAML true is not the integer 1
    ("multiple_ron=1", "multiple_ron"),               # and 1 is not true
    ("settlement.huazhu_penalty=true", "settlement.huazhu_penalty"),
    ("scoring.patterns.qingyise=false", "scoring.patterns.qingyise"),
    ("seats=[{bot: value, decline_below: yes}, greedy, greedy, greedy]", "seats.0.decline_below"),
])
def test_a_bool_is_not_an_int_and_an_int_is_not_a_bool(override, key):
    message = _error("chengdu", [override])
    assert key in message and ("integer" in message or "boolean" in message), message


def test_numbers_stay_numbers():
    rules = load_rules("chengdu", ["economy.room_factor=2", "scoring.cap=3", "seats=[greedy, value, greedy, value]"])
    assert rules.economy.room_factor == 2.0 and rules.scoring.cap == 3 and rules.seats[1].bot == "value"


def test_negative_penalty_names_what_is_accepted(tmp_path):
    path = tmp_path / "neg.yaml"
    path.write_text("extends: chengdu\nsettlement: {huazhu_penalty: -1}\n", encoding="utf-8")
    message = _error(str(path))
    assert message == f"{path}: settlement.huazhu_penalty: got -1; expected a value greater than or equal to 0 " \
                      "or 'cap'"
    assert "constrained" not in message and "pydantic" not in message


def test_huge_numbers_are_one_short_line():
    assert "not a usable number" in _error("chengdu", ["scoring.cap=" + "9" * 5000])
    message = _error("chengdu", ["scoring.cap=" + "9" * 4000])
    assert "scoring.cap" in message and len(message) < 300


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes("extends: chengdu\ndescription: 'caf\u00e9'\n".encode("latin-1"))
    message = _error(str(path))
    assert message.startswith(f"{path}: not UTF-8") and "0xe9" in message


def test_missing_parent_names_the_file_that_extends_it(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("extends: no_such_parent\n", encoding="utf-8")
    message = _error(str(child))
    assert message.startswith(f"{child.resolve()}: extends:") and "no_such_parent" in message
