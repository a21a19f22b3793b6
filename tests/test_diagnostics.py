"""Studies explain themselves: variants that played exactly like the baseline, or whose changed rule never acted,
are flagged (analysis.diagnostics), in the terminal and at the top of the report."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from cli_helpers import cli_run

from analysis.diagnostics import changed_keys, diagnose, differing_hands
from analysis.load import open_run
from xuezhan.studies import run_study

GREEDY_STUDY = """
name: designer
baseline: chengdu
variants:
  - {name: silent, rules: chengdu, set: {settlement.huazhu_penalty: 8, pass_ron_lock: "off"}}
  - {name: cap3, rules: cap3}
  - {name: rake, rules: chengdu, set: {economy.rake: 1, scoring.base: 2}}
  - {name: defend, rules: chengdu, set: {seats: [greedy, {bot: greedy, defend_wall: 10}, greedy, greedy]}}
  - {name: twin, rules: chengdu}
hands: 400
seed: 1
chunk_size: 200
"""

VALUE_STUDY = """
name: lock
baseline: chengdu
variants:
  - {name: "off", rules: chengdu, set: {pass_ron_lock: "off"}}
seats: [value, value, value, value]
hands: 200
seed: 2
"""


@pytest.fixture(scope="module")
def greedy_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("diag")
    (tmp / "designer.yaml").write_text(GREEDY_STUDY)
    result = run_study(tmp / "designer.yaml", out_dir=tmp / "run", jobs=1, report=False, progress=False)
    assert result.out_dir == tmp / "run"
    return result.out_dir


def by_variant(findings) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for f in findings:
        out.setdefault(f.variant, {})[f.key] = f
    return out


def test_rules_that_cannot_bind_are_flagged_with_reason_and_remedy(greedy_run: Path):
    run = open_run(greedy_run)
    players = run.players(["chengdu", "silent"]).collect()
    assert (players["score_huazhu"] == 0).all() and (players["declined_wins"] == 0).all()  # what the logs show
    found = by_variant(diagnose(run))["silent"]
    assert set(found) == {None, "settlement.huazhu_penalty", "pass_ron_lock"}
    assert "exactly as the baseline" in found[None].problem and "400 hands" in found[None].problem
    huazhu = found["settlement.huazhu_penalty"]
    assert "16 → 8" in huazhu.problem and "花猪" in huazhu.problem and "void_suit: none" in huazhu.advice
    assert "declined" in found["pass_ron_lock"].problem and "value bots" in found["pass_ron_lock"].advice
    assert differing_hands(run, "silent", "chengdu") == (0, 400)


def test_a_rule_that_acted_is_not_flagged(greedy_run: Path):
    run = open_run(greedy_run)
    findings = by_variant(diagnose(run))
    above_cap = run.wins("chengdu").filter(pl.col("fan") > 3).select("hand_id").unique().collect()
    assert above_cap.height > 0  # this seed has wins above 3 fan, so the cap binds
    assert "cap3" not in findings
    k, n = differing_hands(run, "cap3", "chengdu", "any")
    assert n == 400 and above_cap.height <= k < n


def test_differing_hands_counts_every_changed_row(greedy_run: Path):
    run = open_run(greedy_run)
    a = run.players("chengdu").drop("variant").sort("hand_id", "seat").collect()
    b = run.players("cap3").drop("variant").sort("hand_id", "seat").collect()
    differ = set(a.filter(pl.any_horizontal([a[c] != b[c] for c in a.columns]))["hand_id"].to_list())
    k, _ = differing_hands(run, "cap3", "chengdu", "any")
    assert k >= len(differ) > 0  # players rows alone already differ on these hands


def test_economy_only_and_same_rules_and_unread_bot_parameters(greedy_run: Path):
    found = by_variant(diagnose(greedy_run))
    assert set(found["rake"]) == {None} and "Economy section" in found["rake"][None].advice
    assert "baseline's rules and seats" in found["twin"][None].problem
    defend = found["defend"]["seats.1.defend_wall"]
    assert "30 → 10" in defend.problem and "greedy" in defend.problem and "defensive" in defend.advice


def test_a_lock_with_declining_bots_acts(tmp_path: Path):
    (tmp_path / "lock.yaml").write_text(VALUE_STUDY)
    result = run_study(tmp_path / "lock.yaml", out_dir=tmp_path / "run", jobs=1, report=False, progress=False)
    run = open_run(result.out_dir)
    assert run.players("chengdu").filter(pl.col("declined_wins") > 0).collect().height > 0
    assert result.findings == [] and diagnose(run) == []
    assert result.differing["off"][0] > 0


def test_changed_keys_flatten_nested_rules_and_seats():
    a = {"name": "x", "scoring": {"cap": 4}, "seats": [{"bot": "greedy"}, {"bot": "value"}]}
    b = {"name": "y", "scoring": {"cap": None}, "seats": [{"bot": "greedy"}, {"bot": "greedy"}]}
    assert changed_keys(a, b) == {"scoring.cap": (4, None), "seats.1.bot": ("value", "greedy")}


def test_terminal_and_report_show_the_findings_first(tmp_path: Path, capsys):
    (tmp_path / "designer.yaml").write_text(GREEDY_STUDY.replace("hands: 400", "hands: 40")
                                            .replace("chunk_size: 200", "chunk_size: 20"))
    code, out, err = cli_run(["study", str(tmp_path / "designer.yaml"), "--out", str(tmp_path / "run"),
                              "--jobs", "1", "--quiet"], capsys)
    assert code == 0, err
    assert "silent: play differs from chengdu on 0 of 40 hands (0.0%)" in out
    warnings = [line for line in err.splitlines() if line.startswith("warning: silent")]
    assert len(warnings) == 3 and any("[pass_ron_lock]" in w for w in warnings)
    md = (tmp_path / "run" / "report.md").read_text()
    first_section = md.split("\n## ")[1]
    assert first_section.startswith("Check first") and "silent [settlement.huazhu_penalty]" in first_section
    assert "What to change" in first_section


SESSION_STUDY = """
name: evenings
baseline: {rules: chengdu, set: {session.hands: 6}}
variants:
  - {name: deep, rules: chengdu, set: {session.hands: 6, session.bankroll: 1000000, session.stop_when_broke: true}}
  - {name: one_hand, rules: chengdu, set: {session.hands: 1, session.dealer: first_winner}}
  - {name: acts, rules: chengdu, set: {session.hands: 6, session.dealer: first_winner, session.bankroll: 10,
                                       session.stop_when_broke: true}}
hands: 48
seed: 3
chunk_size: 24
"""


def test_session_keys_that_never_acted_are_flagged(tmp_path: Path):
    (tmp_path / "evenings.yaml").write_text(SESSION_STUDY)
    run = open_run(run_study(tmp_path / "evenings.yaml", out_dir=tmp_path / "run", jobs=1, report=False,
                             progress=False).out_dir)
    found = by_variant(diagnose(run))
    deep = found["deep"]
    assert {"session.stop_when_broke", "session.bankroll"} <= set(deep)
    assert "no session stopped early" in deep["session.stop_when_broke"].problem
    assert "8 sessions" in deep["session.stop_when_broke"].problem
    assert "session.bankroll" in deep["session.stop_when_broke"].advice
    assert "ever reached 0" in deep["session.bankroll"].problem and "1000000" in deep["session.bankroll"].problem
    one = found["one_hand"]["session.dealer"]
    assert "first_winner" in one.problem and "rotate" in one.problem and "session.hands" in one.advice
    # the same rules over sessions of 6 hands with a bankroll of 10: sessions stop, dealers follow the winners
    hands = run.hands("acts").collect()
    assert hands.height < 48 and (run.players("acts").filter(pl.col("bankroll") <= 0).collect().height > 0)
    assert not {"session.stop_when_broke", "session.dealer", "session.bankroll"} & set(found.get("acts", {}))


def test_the_reports_one_pass_finds_what_diagnose_and_the_play_table_find(greedy_run: Path, monkeypatch):
    """The report counts play and any-column differences of every comparison in one pass, digesting the columns
    outside play only until a differing hand is found (``report_build.checks``): the same findings and play table
    as ``diagnose`` and ``play_table``, read here in two 200-hand pieces."""
    from analysis.play import pair_differences, play_table
    from analysis.report_build import checks, comparisons, diagnostics_sections

    monkeypatch.setenv("XUEZHAN_PIECE_HANDS", "200")
    run = open_run(greedy_run)
    pairs = comparisons(run, run.baseline)
    sections, table = checks(run, run.baseline)
    assert table.equals(play_table(run, pairs))
    want = diagnostics_sections(run, run.baseline, diagnose(run))
    assert [(s.title, s.text) for s in sections] == [(s.title, s.text) for s in want] and want
    exact, quick = pair_differences(run, pairs), pair_differences(run, pairs, exact=False)
    assert all(exact[p][:3] == quick[p][:3] and (exact[p][3] == 0) == (quick[p][3] == 0) for p in pairs)
    # cap3 changes payments on both pieces: the quick count stopped after the first
    assert 0 < quick[("chengdu", "cap3")][3] < exact[("chengdu", "cap3")][3]
