"""``xuezhan replay``: one hand from the same compiled engine with its event log, printed for a human."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from simulator.cli import app
from simulator.hands import play_hands
from simulator.kernel import state as S
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
    with pytest.raises(RulesError, match="no_such_rules"):
        runner.invoke(app, ["replay", "no_such_rules", "--seed", "1"], catch_exceptions=False)
    with pytest.raises(ReplayError, match="--seed must be a non-negative integer, got -5"):
        record_hand(load_rules("chengdu"), 0, -5)
    with pytest.raises(ReplayError, match="--hand must be a non-negative integer, got -1"):
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


# ---- replaying a logged hand of a run (--run) -----------------------------------------------------------------

DUP_STUDY = """
name: dupreplay
baseline: {name: greedy, rules: chengdu, set: {scoring.cap: null}}
variants:
  - {name: value, rules: chengdu, set: {seats: [value, greedy, defensive, greedy], exchange_three: random}}
duplicate: true
hands: 16
seed: 7
chunk_size: 8
"""


@pytest.fixture(scope="module")
def dup_run(tmp_path_factory):
    from xuezhan.studies import run_study

    tmp = tmp_path_factory.mktemp("replay")
    (tmp / "dup.yaml").write_text(DUP_STUDY)
    return run_study(tmp / "dup.yaml", out_dir=tmp / "run", jobs=1, report=False, progress=False).out_dir


def test_a_logged_duplicate_hand_replays_with_its_rotated_seats(dup_run):
    import polars as pl

    from simulator.replay import record_logged_hand

    logged = pl.read_parquet(dup_run / "players" / "variant=value" / "*.parquet").filter(pl.col("hand_id") == 6)
    log = record_logged_hand(dup_run, "value", 6)  # deal 1, rotation 2
    assert log.hand["rotation"] == 2 and log.rules.exchange_three == "random"
    assert [p["bot"] for p in log.players] == logged.sort("seat")["bot"].cast(pl.String).to_list()
    assert [p["bot"] for p in log.players] == ["defensive", "greedy", "value", "greedy"]  # seats rotated by 2
    assert [p["score_total"] for p in log.players] == logged.sort("seat")["score_total"].to_list()


def test_replay_is_verified_against_the_logged_result(dup_run):
    from simulator.replay import _logged_rows, verify
    from simulator.run.runner import read_manifest

    vdir = dup_run / "_variants" / "variant=value"
    manifest = read_manifest(vdir)
    rules = load_rules("chengdu", ["seats=[value, greedy, defensive, greedy]", "exchange_three=random"])
    hand = _logged_rows(vdir, manifest, "hands", 6)[0]
    players = _logged_rows(vdir, manifest, "players", 6)
    verify(record_hand(rules, 6, 7, duplicate=True), hand, players)
    with pytest.raises(ReplayError, match="does not replay to its logged result"):
        verify(record_hand(rules, 6, 7), hand, players)  # what a replay without the rotation used to show
    with pytest.raises(ReplayError, match="does not replay"):
        verify(record_hand(rules, 6, 8, duplicate=True), hand, players)


def test_cli_replays_a_run_hand_in_both_languages(dup_run):
    res = runner.invoke(app, ["replay", "--run", str(dup_run), "--hand", "5", "--lang", "en"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("greedy seed 7 hand 5 · deal 1 · dealer = seat 1 · rotation 1")
    for word in ("Deal", "discards", "Settlement", "fan"):
        assert word in res.output
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in res.output.replace("花猪", ""))  # no Chinese in en
    res = runner.invoke(app, ["replay", "--run", str(dup_run), "--variant", "value", "--hand", "5"])
    assert res.exit_code == 0 and "结算" in res.output and "轮转 1" in res.output


@pytest.mark.parametrize(("args", "message"), [
    (["--hand", "16"], "logged hands 0..15"),
    (["--variant", "nope"], "not in"),
    (["--seed", "3"], "drop --seed"),
    (["--lang", "fr"], "'fr' is not one of 'zh', 'en'"),
])
def test_bad_run_replays_are_one_line_errors(dup_run, args, message, capsys):
    from cli_helpers import cli_run

    code, _, err = cli_run(["replay", "--run", str(dup_run), *args], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_run_with_several_variants_and_no_study_needs_variant(dup_run, tmp_path, capsys):
    from cli_helpers import cli_run

    for sub in ("_variants", "hands", "players", "wins"):
        (tmp_path / "r" / sub).mkdir(parents=True)
        for v in ("greedy", "value"):
            (tmp_path / "r" / sub / f"variant={v}").symlink_to(dup_run / sub / f"variant={v}")
    code, _, err = cli_run(["replay", "--run", str(tmp_path / "r"), "--hand", "1"], capsys)
    assert code == 2 and "choose one with --variant" in err
    code, out, _ = cli_run(["replay", "--run", str(tmp_path / "r"), "--variant", "value", "--hand", "1"], capsys)
    assert code == 0 and "value seed 7 hand 1" in out


def test_duplicate_flag_replays_the_rotated_seating():
    res = runner.invoke(app, ["replay", "chengdu", "--seed", "7", "--hand", "6", "--duplicate",
                              "--set", "seats=[value, greedy, defensive, greedy]", "--lang", "en"])
    assert res.exit_code == 0, res.output
    assert "seat 0 (defensive)" in res.output and "seat 2 dealer (value)" not in res.output
    assert "seat 2 (value)" in res.output
