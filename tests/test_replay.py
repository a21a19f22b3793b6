"""``xuezhan replay``: one hand from the same compiled engine with its event log, printed for a human."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from simulator import state as S
from simulator.cli import app
from simulator.engine import play_hands
from simulator.replay import ReplayError, audit, lines, record_hand
from simulator.rules import RulesError, load_rules

runner = CliRunner()


def test_replay_prints_the_whole_hand():
    res = runner.invoke(app, ["replay", "chengdu", "--seed", "3", "--hand", "2"])
    assert res.exit_code == 0, res.output
    out = res.output
    for word in ("配牌", "定缺", "摸", "打", "胡", "结算", "番"):
        assert word in out, word
    assert out.count("座") > 50
    assert "三" in out and ("万" in out or "筒" in out or "条" in out)


def test_replay_shows_exchange_kongs_and_payments():
    rules = load_rules("exchange_three")
    for hand in range(40):
        log = record_hand(rules, hand, 1)
        if any(e[0] == S.EV_KONG for e in log.events):
            break
    text = "\n".join(lines(log))
    assert "换三张" in text and "杠" in text and "刮风下雨" in text


def test_recording_does_not_change_the_hand_and_totals_match():
    rules = load_rules("chengdu")
    plain = play_hands(rules, np.array([7]), 11)
    log = record_hand(rules, 7, 11)
    assert [p["score_total"] for p in log.players] == list(plain["players"]["score_total"])
    assert [p["dealt"] for p in log.players] == list(plain["players"]["dealt"])
    audit(log)
    paid = np.zeros(4, np.int64)
    for typ, seat, _tile, amount, a, _b in log.events:
        if typ == S.EV_PAY:
            paid[seat] -= amount
            paid[a] += amount
    assert list(paid) == [p["score_total"] for p in log.players]
    text = "\n".join(lines(log))
    for p in log.players:
        assert f"{p['score_total']:+d}" in text


def test_bad_arguments_are_user_errors():
    with pytest.raises(RulesError):
        runner.invoke(app, ["replay", "no_such_rules", "--seed", "1"], catch_exceptions=False)
    with pytest.raises(ReplayError):
        record_hand(load_rules("chengdu"), 0, -5)
    with pytest.raises(ReplayError):
        record_hand(load_rules("chengdu"), -1, 5)


def test_console_entry_prints_one_line_errors():
    code = "import sys; from simulator.cli import main; sys.argv = ['xuezhan', *sys.argv[1:]]; main()"
    proc = subprocess.run([sys.executable, "-c", code, "replay", "chengdu", "--seed", "-3"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error:") and len(proc.stderr.strip().splitlines()) == 1
    proc = subprocess.run([sys.executable, "-c", code, "replay", "chengdu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2  # --seed is required
