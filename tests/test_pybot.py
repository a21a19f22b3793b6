"""Python bots named in rule files: simulate, study (duplicate seating, two workers) and replay."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli_helpers import bot_module, cli_run

from simulator import hands, replay
from simulator.hands.game import IllegalActionError
from simulator.rules import RulesError, load_rules
from xuezhan.studies import run_study

BOT_MODULE = '''
from simulator.agents import PASS, GreedyBot


class NeverPung(GreedyBot):
    """greedy, except that it never claims a discard."""

    def __init__(self, note: str = ""):
        self.note = note

    def claim(self, obs):
        return PASS


class Cheat:
    def act(self, obs):
        return 33 if 33 not in obs.legal_actions else 30  # WIN where it is not legal
'''


@pytest.fixture()
def botdir(tmp_path: Path, monkeypatch):
    yield from bot_module(tmp_path, monkeypatch, "mybots", BOT_MODULE)


def test_a_python_bot_plays_in_a_batch_and_is_logged_by_name(botdir):
    rules = load_rules("chengdu", {"seats": ["mybots:NeverPung", "greedy", "greedy", "greedy"]})
    out = hands.play_hands(rules, np.arange(40), 5, duplicate=True)
    p = out["players"]
    bots = np.array(p["bot"], dtype=object)
    rot = np.repeat(out["hands"]["rotation"], 4)
    seat = p["seat"]
    assert set(bots[(seat + rot) % 4 == 0]) == {"mybots:NeverPung"}  # its name, not "python" (issue 28)
    assert set(bots[(seat + rot) % 4 != 0]) == {"greedy"}
    # it never pungs: no claim by the python seat in the recorded events
    rec = hands.play_hands(rules, np.arange(8), 5, record=True)
    ev = rec["events"]
    py_seats = {i: int(s) for i, s in enumerate(rec["players"]["seat"])
                if rec["players"]["bot"][i] == "mybots:NeverPung"}
    pungs = [(h, s) for h, t, s in zip(ev["hand_row"], ev["type"], ev["seat"], strict=True) if t == 5]
    assert pungs, "the greedy seats do pung"
    assert all(py_seats[4 * h] != s for h, s in pungs if 4 * h in py_seats)


def test_seat_params_go_to_the_constructor_and_bad_ones_are_refused(botdir):
    rules = load_rules("chengdu", {"seats": [{"bot": "mybots:NeverPung", "params": {"note": "x"}}, "greedy",
                                             "greedy", "greedy"]})
    assert rules.seats[0].build().note == "x"
    with pytest.raises(RulesError, match="params do not fit"):
        load_rules("chengdu", {"seats": [{"bot": "mybots:NeverPung", "params": {"nope": 1}}] + ["greedy"] * 3})
    with pytest.raises(RulesError, match="cannot load bot 'mybots:Missing'"):
        load_rules("chengdu", {"seats": ["mybots:Missing", "greedy", "greedy", "greedy"]})
    with pytest.raises(RulesError, match="unknown bot 'mybot'"):
        load_rules("chengdu", {"seats": ["mybot", "greedy", "greedy", "greedy"]})


def test_existing_rule_digests_do_not_change():
    rules = load_rules("chengdu")
    assert "params" not in rules.resolved()["seats"][0]


def test_an_illegal_action_names_hand_seat_decision_and_legal_set(botdir, tmp_path, capsys):
    cfg = tmp_path / "cheat.yaml"
    cfg.write_text("extends: chengdu\nseats: ['mybots:Cheat', greedy, greedy, greedy]\n")
    rules = load_rules(str(cfg))
    with pytest.raises(IllegalActionError, match=r"hand 0: seat 0 answered void with illegal action 33; legal:"
                                                 r" \[27, 28, 29\]"):
        hands.play_hands(rules, np.arange(1), 1)
    cfg.write_text("extends: chengdu\nseats: ['mybots:Cheat', greedy, greedy, greedy]\n")
    code, out, err = cli_run(["simulate", str(cfg), "--hands", "4", "--out", str(tmp_path / "o")], capsys)
    last = err.strip().splitlines()[-1]
    assert code != 0 and last.startswith("error: hand 0: seat 0 answered void with illegal action 33")
    assert "Traceback" not in err


def test_simulate_study_duplicate_with_two_workers_and_replay(botdir, tmp_path, capsys):
    study = tmp_path / "study.yaml"
    study.write_text(textwrap.dedent("""
        name: mine
        baseline: {name: greedy, rules: chengdu}
        variants:
          - {name: mine, rules: chengdu, set: {seats: ['mybots:NeverPung', greedy, greedy, greedy]}}
        duplicate: true
        hands: 64
        seed: 4
        chunk_size: 16
    """))
    out = tmp_path / "run"
    run_study(study, out_dir=out, jobs=2, report=False, progress=False)
    p = pl.read_parquet(out / "players" / "variant=mine" / "*.parquet").sort("hand_id", "seat")
    assert set(p["bot"].cast(pl.String).unique().to_list()) == {"mybots:NeverPung", "greedy"}
    out1 = tmp_path / "run1"
    run_study(study, out_dir=out1, jobs=1, report=False, progress=False)
    p1 = pl.read_parquet(out1 / "players" / "variant=mine" / "*.parquet").sort("hand_id", "seat")
    assert p.equals(p1)  # same seed, same rows, whatever the number of workers
    manifest = json.loads((out / "_variants" / "variant=mine" / "_manifest.json").read_text())
    assert manifest["rules"]["seats"][0]["bot"] == "mybots:NeverPung"
    log = replay.record_logged_hand(out, "mine", 5)  # replays the hand and checks it against the logged rows
    replay.audit(log)
    code, text, err = cli_run(["replay", "--run", str(out), "--variant", "mine", "--hand", "5"], capsys)
    assert code == 0, err
    assert text.strip()


def test_python_random_bot_depends_on_the_hand_only():
    rules = load_rules("chengdu", {"seats": ["simulator.agents:RandomBot", "greedy", "greedy", "greedy"]})
    a = hands.run_batch(rules, np.arange(8, 16), 3)
    b = hands.run_batch(rules, np.arange(0, 16), 3)
    assert np.array_equal(a.p, b.p[32:])
    # and seat 0 really plays at random: not what a compiled greedy bot in that seat would play, and other
    # hands' choices under another seed
    greedy = hands.run_batch(load_rules("chengdu", {"seats": ["greedy"] * 4}), np.arange(0, 16), 3)
    assert not np.array_equal(b.p, greedy.p)
    assert not np.array_equal(b.p, hands.run_batch(rules, np.arange(0, 16), 4).p)


def test_a_bot_registered_under_the_entry_point_group_is_found_by_name(botdir, monkeypatch):
    import importlib.metadata as md

    ep = md.EntryPoint(name="neverpung", value="mybots:NeverPung", group="xuezhan.bots")
    real = md.entry_points
    monkeypatch.setattr(md, "entry_points", lambda **kw: [ep] if kw.get("group") == "xuezhan.bots" else real(**kw))
    rules = load_rules("chengdu", {"seats": ["neverpung", "greedy", "greedy", "greedy"]})
    assert rules.python_seats() == (0,)
    assert type(rules.seats[0].build()).__name__ == "NeverPung"


def test_a_bot_module_put_on_the_path_after_the_workers_started(tmp_path, capsys, request):
    """Workers started by an earlier run (loky reuses them) lack a path added since: the run with a Python bot
    must start fresh ones (the rule set naming the bot is unpickled in the worker before any task code runs)."""
    code, _, err = cli_run(["simulate", "chengdu", "--hands", "8", "--jobs", "2", "--out", str(tmp_path / "g")],
                           capsys)
    assert code == 0, err
    request.getfixturevalue("botdir")  # only now is the bot's module importable
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("extends: chengdu\nseats: ['mybots:NeverPung', greedy, greedy, greedy]\n")
    code, _, err = cli_run(["simulate", str(cfg), "--hands", "8", "--jobs", "2", "--out", str(tmp_path / "o")],
                           capsys)
    assert code == 0, err
    p = pl.read_parquet(tmp_path / "o" / "players")
    assert "mybots:NeverPung" in set(p["bot"].cast(pl.String).to_list())
