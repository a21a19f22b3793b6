"""The key table (``simulator.rules.keys``): every rule key declared once, and what follows from its row — the
rule set's field (validation, default, JSON Schema), the compiled slot and enum integers, the digest (a newer key
left out at its default, the keys from before the table always recorded), the money bound of the logs and
docs/rules.md's table. ``settlement.dealer_compensation`` is a key made this way: the dealer pays each other
player at the start of every hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from simulator.rules import N_PARAMS, P_FLAG_FAN, SPECIAL, RulesError, RuleSet, load_rules, log_bounds, validate
from simulator.rules import keys as rule_keys
from simulator.rules.blocks import table_block

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def _model_of(block: str) -> type:
    model: type = RuleSet
    for part in filter(None, block.split(".")):
        model = model.model_fields[part].annotation
    return model


def test_docs_rules_md_shows_the_generated_key_reference():
    assert rule_keys.reference() in DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize("key", rule_keys.KEYS, ids=lambda k: k.path)
def test_each_key_is_a_validated_field_with_its_default_doc_and_schema(key):
    block = _model_of(key.block)
    field = block.model_fields[key.name]
    assert field.default == key.field_default and field.description == key.doc
    schema = block.model_json_schema()["properties"][key.name]
    assert schema["default"] == key.field_default and schema["description"] == key.doc
    if key.kind == "int" and not key.special:
        assert (schema["minimum"], schema["maximum"]) == (key.low, key.high)
    assert rule_keys.value_of(RuleSet(), key.path) == key.field_default  # the default rule set holds it


def test_every_slot_is_a_key_s_and_the_fans_follow():
    assert sorted(rule_keys.SLOT.values()) == list(range(P_FLAG_FAN))
    assert len(RuleSet().to_arrays()) == N_PARAMS
    assert set(rule_keys.SLOT) == {k.path for k in rule_keys.KEYS if k.kind != "fans"} | {"scoring.extras.gen"}


def test_the_manifests_written_before_read_back_to_the_same_rules_and_digest():
    """The committed runs' manifests (tests/data, written before the key table held the older keys): their rules
    validate and resolve to the same text, key order included, and the same digest — the older keys are still
    recorded at their defaults (``Key.recorded``; mutation: exchange_three not recorded -> this fails), a newer key
    at its default is not."""
    manifests = sorted((DOCS.parents[1] / "tests" / "data").rglob("_manifest.json"))
    assert len(manifests) >= 10
    for path in manifests:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        rules = validate(manifest["rules"], str(path), recorded=True)
        assert json.dumps(rules.resolved()) == json.dumps(manifest["rules"]), path
        assert rules.digest() == manifest["digest"], path
    recorded = RuleSet().resolved()
    assert "money_scale" not in recorded["settlement"] and recorded["exchange_three"] == "none"


@pytest.mark.parametrize("row", [
    rule_keys.Key("demo.count", "int", 2, "a count", low=0, high=5),
    rule_keys.Key("demo.flag", "bool", False, "a switch"),
    rule_keys.Key("demo.pick", "choice", "b", "a choice", choices=("a", "b", "c")),
])
def test_a_row_becomes_a_strict_field_and_an_integer(row, monkeypatch):
    """What a new row gives, shown on rows of each kind in a block of their own."""
    monkeypatch.setattr(rule_keys, "KEYS", (row,))
    model = table_block("demo")
    assert getattr(model(), row.name) == row.default
    good = {"int": 5, "bool": True, "choice": "c"}[row.kind]
    assert row.encode(getattr(model(**{row.name: good}), row.name)) == {"int": 5, "bool": 1, "choice": 2}[row.kind]
    for bad in ({"int": 6, "bool": 1, "choice": "d"}[row.kind], "x"):
        with pytest.raises(ValidationError):
            model(**{row.name: bad})
    assert model.model_json_schema()["properties"][row.name]["description"] == row.doc


def test_the_special_kinds():
    """An int or a special value compiled as SPECIAL (scoring.cap null, settlement.huazhu_penalty cap); a nested
    block (kongs.discard_kong); a fans mapping whose entry has a slot (scoring.extras.gen, 0 when absent); YAML's
    bare off for a choice named off."""
    slot = rule_keys.SLOT
    rules = load_rules("chengdu", ["scoring.cap=null", "settlement.huazhu_penalty=cap", "pass_ron_lock=off",
                                   "kongs.discard_kong.others=3"])
    p = rules.to_arrays()
    assert p[slot["scoring.cap"]] == p[slot["settlement.huazhu_penalty"]] == SPECIAL
    assert p[slot["pass_ron_lock"]] == rule_keys.code("pass_ron_lock", "off") == 0
    assert p[slot["kongs.discard_kong.others"]] == 3 and p[slot["kongs.discard_kong.discarder"]] == 2
    assert p[slot["scoring.extras.gen"]] == 1
    no_gen = RuleSet.model_validate({"scoring": {"extras": {"zimo": 1}}}).to_arrays()  # a mapping replaced whole
    assert no_gen[slot["scoring.extras.gen"]] == 0  # absent from the mapping
    assert load_rules("chengdu", ["scoring.cap=7"]).to_arrays()[slot["scoring.cap"]] == 7
    for bad, where in (("scoring.cap=cap", "scoring.cap"), ("settlement.huazhu_penalty=null", "huazhu_penalty"),
                       ("kongs.added_kong.each=-1", "kongs.added_kong.each"), ("pass_ron_lock=on", "pass_ron_lock"),
                       ("scoring.extras={sing: 65}", "scoring.extras.sing")):
        with pytest.raises(RulesError, match=where):
            load_rules("chengdu", [bad])


def test_enum_integers_are_the_choices_order():
    assert [rule_keys.code("mode", m) for m in ("xuezhan", "single", "xueliu")] == [0, 1, 2]
    assert rule_keys.choices("exchange_three")[rule_keys.code("exchange_three", "random")] == "random"
    with pytest.raises(ValueError, match="mode"):
        rule_keys.code("mode", "riichi")


# ---- settlement.dealer_compensation: the key made this way (one row in rule_keys, settlement.settle_deal) ------
KEY = "settlement.dealer_compensation"


def test_the_compensation_is_validated_and_in_its_slot():
    base, on = load_rules("chengdu"), load_rules("chengdu", [f"{KEY}=7"])
    a, b = base.to_arrays(), on.to_arrays()
    assert a[rule_keys.SLOT[KEY]] == 0 and b[rule_keys.SLOT[KEY]] == 7
    a[rule_keys.SLOT[KEY]] = 7
    assert np.array_equal(a, b)  # nothing else moves
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


KONGS = ("kongs.discard_kong.discarder", "kongs.discard_kong.others", "kongs.added_kong.each",
         "kongs.concealed_kong.each")


def test_the_kong_payments_bound_the_money_by_the_largest_of_them():
    """Each kong is paid one way, so the bound counts the largest of the four payments (their ``money_group``; a
    per-key sum would loosen it four-fold): raising a smaller payment leaves the bound, raising the largest moves
    it by ``KONG_MONEY`` per base unit."""
    def bound(**kw):
        return log_bounds(load_rules("chengdu", [f"{path}={kw.get(path.split('.')[1], 0)}" for path in KONGS]))[1]

    top = bound(concealed_kong=500)
    assert bound(concealed_kong=500, added_kong=400, discard_kong=300) == top
    assert bound(concealed_kong=600, added_kong=400) - top == 100 * rule_keys.KONG_MONEY
    assert bound(added_kong=500) == top == bound(discard_kong=500)


def test_no_seat_moves_more_money_in_a_hand_than_the_bound():
    """Played hands with the largest kong payments and 花猪 penalty (and small wins): no seat's score of a hand
    exceeds the money bound, and the kongs take scores past what it would be without them (so its kong term is
    what holds: with ``KONG_MONEY`` 1 instead of 96 the bound fails here)."""
    from engine_helpers import play

    rest = ["settlement.huazhu_penalty=10000", "scoring.cap=1", "seats=[greedy, greedy, random, greedy]"]
    rules = load_rules("chengdu", [*(f"{path}=10000" for path in KONGS), *rest])
    cols = play(rules, 200)[1]
    worst = int(np.abs(cols["players"]["score_total"].astype(np.int64)).max())
    without_kongs = log_bounds(load_rules("chengdu", [*(f"{path}=0" for path in KONGS), *rest]))[1]
    assert without_kongs < worst <= log_bounds(rules)[1]


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
