"""The CLI's conventions: --version, completion, choices in --help, ``xuezhan list`` and ``xuezhan rules
show | diff | schema`` (each checked against the library it prints)."""

from __future__ import annotations

import json

import pytest
import yaml
from cli_helpers import cli_run

from simulator import __version__
from simulator.rules import BOTS, BotSpec, RuleSet, load_rules
from simulator.run.study import StudyFile


def test_version(capsys):
    assert cli_run(["--version"], capsys)[:2] == (0, f"xuezhan {__version__}\n")


def test_completion_and_choices_are_in_help(capsys):
    code, out, _ = cli_run(["--help"], capsys)
    assert code == 0 and "--install-completion" in out and "--version" in out
    for command in ("list", "rules"):
        assert f"\n  {command} " in out
    _, out, _ = cli_run(["simulate", "--help"], capsys)
    assert "<loky|dask>" in out and "<bool>" not in out
    _, out, _ = cli_run(["replay", "--help"], capsys)
    assert "<zh|en>" in out
    code, _, err = cli_run(["study", "quickstart", "--backend", "spark"], capsys)
    assert code == 2 and err.count("\n") == 1 and "'spark' is not one of 'loky', 'dask'" in err
    assert "Value error" not in err  # typer's choice check words it through pydantic: the prefix is dropped
    code, _, err = cli_run(["rules", "schema", "table"], capsys)
    assert code == 2 and err.startswith("error: Invalid value for 'kind': 'table' is not one of 'rules', 'study'")


def test_list_names_every_rule_set_study_and_bot_parameter(capsys):
    code, out, _ = cli_run(["list"], capsys)
    assert code == 0
    sections = out.split("studies:")
    assert "  cap3" in sections[0] and "extends chengdu: scoring.cap=3" in sections[0]
    assert "  quickstart  Chengdu default vs a 3-fan cap vs no cap" in sections[1]
    bots = out.split("\nbots ")[1]
    assert all(f"  {b} " in bots for b in BOTS)
    default = BotSpec.model_fields["decline_below"].default
    assert f"decline_below={default} (0–16)" in bots and "ambition=1.15 (0–10)" in bots
    assert "  search     rollouts=24, wall=30, policy=expert, z=2.0" in bots  # a registered Python bot
    assert "claims=True" in bots.split("  search ")[1].splitlines()[0]  # its newest parameter, with its default


def test_rules_show_prints_the_resolved_rules_with_overrides(capsys):
    code, out, _ = cli_run(["rules", "show", "cap3", "--set", "settlement.huazhu_penalty=8"], capsys)
    assert code == 0
    rules = load_rules("cap3", ["settlement.huazhu_penalty=8"])
    assert out.splitlines()[0] == f"# digest {rules.digest()}"
    shown = yaml.safe_load(out)
    # extends: resolved, every key present; the description is cap3's own (what it changes), not chengdu's
    assert {**shown, "description": None} == {**rules.resolved(), "description": None} and shown["scoring"]["cap"] == 3
    assert shown["description"] == "extends chengdu: scoring.cap=3"
    assert RuleSet.model_validate(shown).digest() == rules.digest()


def test_rules_diff_lists_exactly_the_keys_that_differ(capsys):
    code, out, _ = cli_run(["rules", "diff", "chengdu", "huazhu_8x"], capsys)
    assert code == 0
    assert out.splitlines() == ["settlement.huazhu_penalty: 16 -> 8", 'void_suit: "declared" -> "none"']
    assert cli_run(["rules", "diff", "chengdu", "chengdu"], capsys)[1] == "chengdu and chengdu play the same rules\n"
    code, _, err = cli_run(["rules", "diff", "chengdu", "no_such_rules"], capsys)
    assert code == 2 and err.startswith("error: rule set 'no_such_rules' not found")


@pytest.mark.parametrize("kind", ["rules", "study"])
def test_rules_schema_is_pydantics_json_schema(kind, capsys):
    code, out, _ = cli_run(["rules", "schema", kind], capsys)
    schema = json.loads(out)
    model = RuleSet if kind == "rules" else StudyFile
    assert code == 0 and schema["properties"].keys() >= model.model_json_schema(by_alias=True)["properties"].keys()
    if kind == "study":
        assert schema["required"] == ["name", "baseline", "hands"]
        assert schema["properties"]["baseline"]  # "set" appears under its alias in RulesRef
        assert "set" in schema["$defs"]["RulesRef"]["properties"]
    else:
        assert "extends" in schema["properties"] and "required" not in schema


@pytest.mark.parametrize("kind", ["rules", "study"])
def test_the_schemas_accept_every_shipped_file_and_refuse_a_bad_one(kind, capsys):
    import jsonschema  # with nbformat in the test extra

    from simulator.rules import CONFIG_DIR

    _, out, _ = cli_run(["rules", "schema", kind], capsys)
    schema = json.loads(out)
    files = sorted((CONFIG_DIR if kind == "rules" else CONFIG_DIR / "studies").glob("*.yaml"))
    assert len(files) >= 10
    for path in files:
        jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), schema)
    bad, why = (({"name": "x", "baseline": "chengdu", "hands": 0}, "0 is less than or equal to the minimum")
                if kind == "study" else ({"seats": ["greedy", 3, "greedy", "greedy"]}, "3 is not valid"))
    with pytest.raises(jsonschema.ValidationError, match=why):
        jsonschema.validate(bad, schema)


def test_the_cache_directory_is_the_platforms(monkeypatch, tmp_path):
    from simulator.kernel import tables

    monkeypatch.delenv("XUEZHAN_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # honoured on Linux, as platformdirs does
    import sys

    if sys.platform.startswith("linux"):
        assert tables.cache_dir() == tmp_path / "xdg" / "xuezhan"
    monkeypatch.setenv("XUEZHAN_CACHE", str(tmp_path / "mine"))
    assert tables.cache_dir() == tmp_path / "mine"
