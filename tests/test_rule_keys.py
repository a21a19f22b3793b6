"""The key table (``simulator.rule_keys``): a rule key declared once, and what follows from its row — the rule
set's field (validation, default, JSON Schema), the compiled slot, the digest left unchanged at the default, the
money bound of the logs and docs/rules.md's table."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from simulator import rule_keys
from simulator.rules import N_PARAMS, RuleSet
from simulator.rules_blocks import table_keys
from simulator.rules_vocab import P_KEY_TABLE

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_docs_rules_md_shows_the_generated_key_reference():
    assert rule_keys.reference() in DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize("key", rule_keys.KEYS, ids=lambda k: k.path)
def test_each_key_is_a_validated_field_with_its_default_doc_and_schema(key):
    block = RuleSet.model_fields[key.block].annotation if key.block else RuleSet
    field = block.model_fields[key.name]
    assert field.default == key.default and field.description == key.doc
    schema = block.model_json_schema()["properties"][key.name]
    assert schema["default"] == key.default and schema["description"] == key.doc
    if key.kind == "int":
        assert (schema["minimum"], schema["maximum"]) == (key.low, key.high)


def test_the_slots_follow_the_vocabulary_vector():
    assert sorted(rule_keys.SLOT.values()) == list(range(P_KEY_TABLE, N_PARAMS))
    assert len(RuleSet().to_arrays()) == N_PARAMS


@pytest.mark.parametrize("row", [
    rule_keys.Key("demo.count", "int", 2, "a count", low=0, high=5),
    rule_keys.Key("demo.flag", "bool", False, "a switch"),
    rule_keys.Key("demo.pick", "choice", "b", "a choice", choices=("a", "b", "c")),
])
def test_a_row_becomes_a_strict_field_and_an_integer(row, monkeypatch):
    """What a new row gives, shown on rows of each kind in a block of their own."""
    monkeypatch.setattr(rule_keys, "KEYS", (row,))
    model = table_keys("demo")
    assert getattr(model(), row.name) == row.default
    good = {"int": 5, "bool": True, "choice": "c"}[row.kind]
    assert row.encode(getattr(model(**{row.name: good}), row.name)) == {"int": 5, "bool": 1, "choice": 2}[row.kind]
    for bad in ({"int": 6, "bool": 1, "choice": "d"}[row.kind], "x"):
        with pytest.raises(ValidationError):
            model(**{row.name: bad})
    assert model.model_json_schema()["properties"][row.name]["description"] == row.doc
