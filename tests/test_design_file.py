"""Design files (simulator.run.design_file): a bad file is one line naming the file and the key, exit status 2, and
nothing written; the JSON Schema (``xuezhan rules schema design``) describes the format; the shipped examples load.
"""

from __future__ import annotations

import json

import pytest
import yaml
from cli_helpers import cli_run

from simulator.run.design_file import DESIGN_DIR, DesignError, load_design

GOOD = {"name": "d", "baseline": "chengdu", "search": {"settlement.huazhu_penalty": {"low": 8, "high": 32}},
        "targets": [{"metric": "huazhu_rate", "at_most": 0.01}], "objective": {"minimize": "settlement.huazhu_penalty"}}

BAD = [  # (what is wrong, the file's changes, what the error line names)
    ("unknown key", {"search": {"settlement.huazhu_penalti": {"low": 8, "high": 32}}},
     "search.settlement.huazhu_penalti: unknown rule key"),
    ("unknown metric id", {"targets": [{"metric": "huazhu_share", "at_most": 0.01}]},
     "targets.0: unknown metric id 'huazhu_share'"),
    ("empty range", {"search": {"settlement.huazhu_penalty": {"low": 32, "high": 8}}},
     "search.settlement.huazhu_penalty: empty range: low (32) must be below high (8)"),
    ("a range outside the key's values", {"search": {"settlement.huazhu_penalty": {"low": 8, "high": 20000}}},
     "search.settlement.huazhu_penalty: 20000 is not an allowed value"),
    ("a choice outside the key's values", {"search": {"void_suit": {"choices": ["declared", "loose"]}}},
     "search.void_suit: 'loose' is not an allowed value"),
    ("no choices", {"search": {"void_suit": {"choices": []}}}, "search.void_suit: empty choices"),
    ("an edge over a bot nobody plays", {"targets": [{"metric": "edge:expert-greedy", "at_least": 0}]},
     "targets.0: edge:expert-greedy needs a seat played by expert in line-up 'chengdu'"),
    ("a target without a band", {"targets": [{"metric": "huazhu_rate"}]}, "a target needs at_most, at_least"),
    ("an unknown population", {"populations": ["strong", "sharks"]}, "populations: no population named 'sharks'"),
    ("a target in no line-up", {"targets": [{"metric": "huazhu_rate", "at_most": 0.01, "population": "strong"}]},
     "targets.0.population: no line-up named 'strong'"),
    ("an unknown objective metric", {"objective": {"maximize": "fun"}}, "objective: unknown metric id 'fun'"),
]


@pytest.mark.parametrize(("what", "change", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_design_file_is_one_line_and_writes_nothing(what, change, message, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**GOOD, **change}, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, err = cli_run(["design", str(path), "--out", str(out), "-q"], capsys)
    assert code == 2 and stdout == ""
    assert err.startswith(f"error: {path}: ") and message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_a_good_file_loads_and_an_api_mapping_is_checked_the_same_way():
    d = load_design(GOOD)
    assert d.baseline_values() == {"settlement.huazhu_penalty": 16} and d.ids() == ["huazhu_rate"]
    with pytest.raises(DesignError, match="unknown rule key"):
        load_design({**GOOD, "search": {"scoring.capp": {"choices": [3]}}})


def test_populations_by_name_from_the_studies_defaults_with_duplicate_seating():
    d = load_design({**GOOD, "populations": ["greedy", "mixed"], "duplicate": True,
                     "targets": [{"metric": "edge:expert-greedy", "at_least": 0, "population": "mixed"}]})
    assert {k: ([s.bot for s in r.seats], dup) for k, (r, dup) in d.populations.items()} == {
        "greedy": (["greedy"] * 4, True), "mixed": (["expert", "greedy", "value", "defensive"], True)}
    one = load_design({**GOOD, "populations": {"solo": {"seats": ["greedy"] * 4, "duplicate": False}}})
    assert one.populations["solo"][1] is False


def test_the_shipped_examples_load_and_the_schema_describes_design_files(capsys):
    names = sorted(p.stem for p in DESIGN_DIR.glob("*.yaml"))
    assert names == ["dealer_fair", "huazhu_floor"]
    for name in names:
        assert load_design(name).file.name == name
    code, out, _ = cli_run(["rules", "schema", "design"], capsys)
    schema = json.loads(out)
    assert code == 0 and schema["title"] == "xuezhan design file"
    assert {"baseline", "search", "targets", "objective", "populations"} <= set(schema["properties"])
