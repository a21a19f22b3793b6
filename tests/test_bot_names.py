"""Python bots are logged by name (issue 28): two different Python bots are never pooled as ``python``.

The ``players.bot`` column carries each Python seat's ``bot`` as the rule set gives it (``package.module:Class``
or an entry-point name); the by-bot tables keep them apart. Runs without Python bots write the same bytes as
before (the fixed label dictionary is unchanged).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli_helpers import bot_module

from analysis import ev
from analysis.load import open_run
from simulator import hands
from simulator.rules import BOT_LABELS, PYTHON_BOT, load_rules
from xuezhan.studies import run_study

TWO_BOTS = '''
from simulator.agents import Bot, PASS


class Passive(Bot):
    def claim(self, obs):
        return PASS


class Eager(Bot):
    pass
'''


@pytest.fixture()
def two_bots(tmp_path: Path, monkeypatch):
    yield from bot_module(tmp_path, monkeypatch, "twobots", TWO_BOTS)


def test_two_python_bots_are_logged_apart(two_bots):
    rules = load_rules("chengdu", {"seats": ["twobots:Passive", "twobots:Eager", "greedy", "twobots:Passive"]})
    out = hands.play_hands(rules, np.arange(12), 3, duplicate=True)
    p = out["players"]
    bots = np.array(p["bot"], dtype=object)
    b = (np.asarray(p["seat"]) + np.repeat(out["hands"]["rotation"], 4)) % 4
    assert set(bots[b == 0]) == set(bots[b == 3]) == {"twobots:Passive"}
    assert set(bots[b == 1]) == {"twobots:Eager"} and set(bots[b == 2]) == {"greedy"}
    assert "python" not in set(bots)


def test_by_bot_tables_keep_them_apart(two_bots, tmp_path):
    study = tmp_path / "s.yaml"
    study.write_text(textwrap.dedent("""
        name: two
        baseline: {name: base, rules: chengdu}
        variants:
          - {name: alt, rules: chengdu, set: {scoring.cap: 3}}
        seats: ['twobots:Passive', 'twobots:Eager', greedy, greedy]
        hands: 24
        seed: 9
    """))
    run = open_run(run_study(study, out_dir=tmp_path / "run", jobs=1, report=False, progress=False).out_dir)
    table = ev.expected_value(run, "bot", components=False).filter(pl.col("variant") == "base")
    assert set(table["bot"]) == {"twobots:Passive", "twobots:Eager", "greedy"}
    assert set(run.bots("base")) >= {"twobots:Passive", "twobots:Eager"}  # the rule set's names = the logged ones


def test_runs_without_python_bots_keep_the_fixed_dictionary():
    rules = load_rules("chengdu")
    raw = hands.run_batch(rules, np.arange(4), 1)
    assert raw.bot_labels is None  # records then encode with BOT_LABELS, as before
    assert BOT_LABELS[PYTHON_BOT] == "python"  # its id fixed; bots added since come after it
    # (simulator.rules.bot_table)
