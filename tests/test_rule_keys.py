"""The key table (``simulator.rules.keys``): a rule key declared once, and what follows from its row — the rule
set's field (validation, default, JSON Schema), the compiled slot, the digest left unchanged at the default, the
money bound of the logs and docs/rules.md's table. ``settlement.dealer_compensation`` is the key made this way:
the dealer pays each other player at the start of every hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from simulator.rules import N_PARAMS, RulesError, RuleSet, load_rules, log_bounds
from simulator.rules import keys as rule_keys
from simulator.rules.blocks import table_keys
from simulator.rules.vocab import P_KEY_TABLE

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


# ---- settlement.dealer_compensation: the key made this way (one row in rule_keys, settlement.settle_deal) ------
KEY = "settlement.dealer_compensation"


def test_the_compensation_is_validated_and_in_its_slot():
    base, on = load_rules("chengdu"), load_rules("chengdu", [f"{KEY}=7"])
    a, b = base.to_arrays(), on.to_arrays()
    assert a[rule_keys.SLOT[KEY]] == 0 and b[rule_keys.SLOT[KEY]] == 7
    assert np.array_equal(a[:P_KEY_TABLE], b[:P_KEY_TABLE])  # nothing else moves
    for bad in ("-1", "10001", "true", "'5'"):
        with pytest.raises(RulesError, match="settlement.dealer_compensation"):
            load_rules("chengdu", [f"{KEY}={bad}"])


def test_at_its_default_it_leaves_the_digest_and_manifest_rules_unchanged():
    base, on = load_rules("chengdu"), load_rules("chengdu", [f"{KEY}=7"])
    assert "dealer_compensation" not in base.resolved()["settlement"]
    assert on.resolved()["settlement"]["dealer_compensation"] == 7 and on.digest() != base.digest()
    assert load_rules("chengdu", [f"{KEY}=0"]).digest() == base.digest()
    assert RuleSet.model_validate(base.resolved()) == base  # rules recorded without it read back the same


def test_the_money_bound_counts_the_compensation():
    base, on = load_rules("chengdu"), load_rules("chengdu", [f"{KEY}=100"])
    assert log_bounds(on)[1] - log_bounds(base)[1] == 300


def test_the_dealer_pays_each_other_player_at_the_start_of_every_hand():
    from simulator.hands import play_hands

    ids = np.arange(40, dtype=np.int64)
    base = play_hands(load_rules("chengdu"), ids, 5)["players"]
    on = play_hands(load_rules("chengdu", [f"{KEY}=7"]), ids, 5)["players"]
    dealer = (np.repeat(ids, 4) % 4) == np.tile(np.arange(4), len(ids))
    moved = on["score_transfer"].astype(np.int64) - base["score_transfer"]
    assert (moved[dealer] == -21).all() and (moved[~dealer] == 7).all()
    for col in ("score_win", "score_kong", "score_huazhu", "score_chadajiao", "score_refund", "won"):
        assert np.array_equal(on[col], base[col]), col  # the same play: only the compensation moved
    assert (on["score_total"].reshape(-1, 4).sum(axis=1) == 0).all()


def test_a_replayed_hand_with_the_compensation_passes_the_audit():
    from simulator.replay.audit import audit
    from simulator.replay.log import record_hand

    rules = load_rules("chengdu", [f"{KEY}=7"])
    for hand_id in range(4):
        audit(record_hand(rules, hand_id, 5))
