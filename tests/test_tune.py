"""``xuezhan tune`` (simulator.run.tune) and tuned seats (``params_from``, simulator.rules).

Toy budgets (a few trials of a few walls): what is tested is the machinery — the same seed writes the same
bytes, a search interrupted (between or inside trials) and rerun ends where an uninterrupted one does, the
score is the candidate's own, the gain is measured on fresh walls — not the tuned values themselves.
"""

from __future__ import annotations

import json

import numpy as np
import optuna  # the test extra installs the tune extra: a missing optuna fails, never skips
import pytest
import yaml
from cli_helpers import cli_run

from simulator.hands import play_hands
from simulator.rules import TUNABLE, BotSpec, RulesError, load_rules, validate
from simulator.run import tune as tn

TOY = tn.TuneSpec(budget=8, walls=9, blocks=3, fresh_walls=6, seed=3)  # pruning from the 6th trial on


def _tune(out, spec=TOY, field=None, name="toy"):
    return tn.tune(load_rules("chengdu"), None, field, spec, out, name)


def _trials(out, name="toy"):

    study = optuna.load_study(study_name=name, storage=f"sqlite:///{out / f'{name}.db'}")
    return [(t.params, t.value, t.state.name) for t in study.get_trials() if t.state.name in ("COMPLETE", "PRUNED")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref")
    return out, _tune(out)


def test_same_seed_same_bytes_and_an_honest_document(reference, tmp_path):
    out, res = reference
    again = _tune(tmp_path)
    assert again.path.read_bytes() == res.path.read_bytes()
    doc = yaml.safe_load(res.path.read_text())
    assert set(doc["params"]) == set(TUNABLE) and doc["search"]["trials"] == TOY.budget
    fresh = doc["fresh"]
    assert fresh["walls"] == TOY.fresh_walls and fresh["seed"] == TOY.seed + 1 and fresh["se"] >= 0
    assert fresh["gain"] == pytest.approx(fresh["searched_ev"] - fresh["default_ev"], abs=1e-5)
    kept = fresh["ci95"][0] <= 0
    assert doc["verdict"].startswith("defaults kept" if kept else "tuned")
    assert doc["params"] == ({k: tn.DEFAULTS[k] for k in TUNABLE} if kept else doc["searched"])
    # the first trial is the defaults, and the search's best score is not what the file calls the gain
    assert _trials(out)[0][0] == tn.DEFAULTS
    assert res.best_search_score == max(v for _, v, s in _trials(out) if s == "COMPLETE")


def test_a_stopped_search_resumes_to_the_same_result(reference, tmp_path):
    out, res = reference
    _tune(tmp_path, tn.TuneSpec(**{**TOY.__dict__, "budget": 2}))
    assert len(_trials(tmp_path)) == 2
    resumed = _tune(tmp_path)
    assert resumed.trials_run == TOY.budget - 2
    assert _trials(tmp_path) == _trials(out)
    assert resumed.path.read_bytes() == res.path.read_bytes()


def test_ctrl_c_inside_a_trial_resumes_to_the_same_result(reference, tmp_path, monkeypatch):
    out, res = reference
    real, calls = tn.seat0_per_wall, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3 * tn.PRUNE_AFTER + 3:  # the 6th trial's third block, after its pruning check
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(tn, "seat0_per_wall", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _tune(tmp_path)
    monkeypatch.setattr(tn, "seat0_per_wall", real)

    cut = [t for t in optuna.load_study(study_name="toy", storage=f"sqlite:///{tmp_path / 'toy.db'}").get_trials()
           if t.state.name == "FAIL"]
    assert len(cut) == 1 and "completed_rung_0" in cut[0].system_attrs  # a rung value the resume must not use
    resumed = _tune(tmp_path)
    assert _trials(tmp_path) == _trials(out)
    assert resumed.path.read_bytes() == res.path.read_bytes()


def test_other_settings_in_the_same_directory_are_refused(reference, tmp_path):
    _tune(tmp_path, tn.TuneSpec(**{**TOY.__dict__, "budget": 1}))
    with pytest.raises(tn.TuneError, match="other settings.*walls"):
        _tune(tmp_path, tn.TuneSpec(**{**TOY.__dict__, "walls": 10}))


def test_the_score_is_seat_spec_zero_on_every_seat():
    """Duplicate seating puts spec 0 at each table seat once: a greedy candidate among three experts loses what
    the experts win (zero sum), and the per-wall mean is its own score."""
    rules = tn.lineup(load_rules("chengdu"), {"bot": "greedy"}, ["expert"] * 3)
    per_wall = tn.seat0_per_wall(rules, 2, 5, 1)
    p = play_hands(rules, np.arange(8, 28), 1, duplicate=True)["players"]
    mine = np.asarray(p["bot"]).astype(str) == "greedy"
    assert per_wall.shape == (5,) and mine.sum() == 20
    expect = np.bincount(np.asarray(p["deal_id"])[mine] - 2, weights=np.asarray(p["score_total"])[mine]) / 4
    assert np.array_equal(per_wall, expect)


def _write(path, params):
    path.write_text(yaml.safe_dump({"params": params}))
    return path


def test_params_from_loads_and_changes_play(tmp_path):
    f = _write(tmp_path / "t.yaml", {"defence": 1.0, "ambition": 2.0, "tempo": 0.1})
    seat = f"seats=[{{bot: expert, params_from: {f}}}, expert, expert, expert]"
    tuned = load_rules("chengdu", [seat])
    assert (tuned.seats[0].defence, tuned.seats[0].ambition, tuned.seats[0].tempo) == (1.0, 2.0, 0.1)
    assert tuned.resolved()["seats"][0]["params_from"] == str(f) and "params_from" not in tuned.resolved()["seats"][1]
    plain = load_rules("chengdu", ["seats=[expert, expert, expert, expert]"])
    ids = np.arange(40)
    a = play_hands(tuned, ids, 5)["players"]["score_total"]
    b = play_hands(plain, ids, 5)["players"]["score_total"]
    assert not np.array_equal(a, b)
    # a key written in the seat wins over the file; a recorded rule set re-validates without the file
    own = load_rules("chengdu", [f"seats=[{{bot: expert, params_from: {f}, tempo: 0.02}}, expert, expert, expert]"])
    assert own.seats[0].tempo == 0.02 and own.seats[0].ambition == 2.0
    f.unlink()
    assert validate(tuned.resolved()) == tuned


def test_a_tune_file_is_usable_as_params_from(reference):
    _, res = reference
    rules = load_rules("chengdu", [f"seats=[{{bot: expert, params_from: {res.path}}}, greedy, greedy, greedy]"])
    assert {k: getattr(rules.seats[0], k) for k in TUNABLE} == res.document["params"]


@pytest.mark.parametrize("content,words", [
    (None, "no such file"),
    ("name: chengdu\n", "not a tuned-parameters file"),
    ("params: {defence: 0.5, speed: 2}\n", "params.speed: unknown key"),
    ("params: {ambition: 9}\n", "outside the tuned range"),
    ("params: {tempo: yes}\n", "expected a number"),
    ("params: [1, 2\n", "malformed YAML"),
])
def test_bad_params_from_is_a_one_line_error(tmp_path, capsys, content, words):
    f = tmp_path / "t.yaml"
    if content is not None:
        f.write_text(content)
    seat = f"seats=[{{bot: expert, params_from: {f}}}, greedy, greedy, greedy]"
    with pytest.raises(RulesError, match=words):
        load_rules("chengdu", [seat])
    code, out, err = cli_run(["simulate", "chengdu", "-n", "4", "-q", "-o", str(tmp_path / "run"), "--set", seat],
                             capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err and "seats.0" in err
    assert not (tmp_path / "run").exists()


def test_params_from_is_for_the_expert(tmp_path):
    f = _write(tmp_path / "t.yaml", {"defence": 0.5})
    with pytest.raises(RulesError, match="params_from is for the expert"):
        load_rules("chengdu", [f"seats=[{{bot: value, params_from: {f}}}, greedy, greedy, greedy]"])


@pytest.mark.parametrize("args,words", [
    (["--budget", "0"], "--budget must be at least 1"),
    (["--walls", "2", "--blocks", "4"], "must be at least --blocks"),
    (["--fresh-seed", "0"], "must differ from --seed"),
    (["--field", "[expert, greedy]"], "expected one seat spec or a list of 3"),
    (["--field", "[expert, nobot, greedy]"], "unknown bot 'nobot'"),
    (["--field", "{bot: expert, defence: -1}"], "defence"),
    (["--set", "scoring.cap=-3"], "scoring.cap"),
    (["--name", "../x"], "not a path"),
])
def test_tune_cli_bad_input(tmp_path, capsys, args, words):
    code, out, err = cli_run(["tune", "chengdu", "-q", "-o", str(tmp_path / "t"), *args], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "t").exists()


def test_tune_cli_without_optuna_names_the_extra(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "optuna", None)
    for quiet in (["-q"], []):  # the one line only: no progress bar drawn before it
        code, _, err = cli_run(["tune", "chengdu", *quiet, "-o", str(tmp_path)], capsys)
        assert code == 2 and err.strip() == "error: xuezhan tune needs optuna: pip install 'xuezhan[tune]'"


def test_tune_cli_writes_and_reports(tmp_path, capsys):
    code, out, err = cli_run(["tune", "chengdu", "-q", "-o", str(tmp_path), "--budget", "3", "--walls", "4",
                              "--blocks", "2", "--fresh-walls", "4", "--field", "greedy", "--name", "g"], capsys)
    assert code == 0, err
    doc = yaml.safe_load((tmp_path / "g.yaml").read_text())
    assert doc["field"][0]["bot"] == "greedy" and doc["rules"]["digest"]
    assert "not the gain" in out and f"± {doc['fresh']['se']:.4f}" in out and "n = 4 walls × 4" in out


def test_report_names_adapted_seats(tmp_path):
    from analysis.load import open_run
    from simulator.run import runner

    f = _write(tmp_path / "t.yaml", {"defence": 0.5, "ambition": 1.15})
    seats = f"seats=[{{bot: expert, params_from: {f}}}, expert, greedy, greedy]"
    spec = runner.RunSpec(hands=4, seed=1, jobs=1, progress=False)
    runner.run_variants(tmp_path / "r", [runner.Variant.load("chengdu", [seats], "adapted")], spec)
    labels = open_run(tmp_path / "r").seat_labels("adapted")
    assert labels == [f"expert (adapted, {f}: defence 0.5)", "expert", "greedy", "greedy"]
    assert BotSpec().params_from is None


def test_shipped_tuned_files_resolve_under_configs_and_keep_the_honesty_rule():
    from simulator.rules import CONFIG_DIR

    files = sorted((CONFIG_DIR / "tuned").glob("*.yaml"))
    assert files
    for f in files:
        doc = yaml.safe_load(f.read_text())
        rules = load_rules("chengdu", [f"seats=[{{bot: expert, params_from: tuned/{f.name}}}, expert, expert, expert]"])
        assert {k: getattr(rules.seats[0], k) for k in TUNABLE} == doc["params"]
        tuned = doc["fresh"]["ci95"][0] > 0
        assert doc["params"] == (doc["searched"] if tuned else tn.DEFAULTS) and doc["fresh"]["walls"] >= 1000
        assert len(doc["fingerprint"]["sha256"]) == 64  # written by the tune command of today's code


def _tuned_copy(res, tmp_path, params, **changes):
    """The reference tune's file with other (non-default) weights, its fingerprint recomputed for them unless
    ``changes`` alter the document afterwards (a fingerprint or rule-set digest of another expert / rule set)."""
    from simulator.run.tuned import fingerprint_record

    doc = yaml.safe_load(res.path.read_text())
    doc["params"] = params
    doc["fingerprint"] = fingerprint_record(load_rules("chengdu"), params, doc["field"])
    for key, value in changes.items():
        doc[key] = {**doc[key], **value}
    path = tmp_path / "adapted.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("changes,words", [
    ({}, None),
    ({"fingerprint": {"sha256": "0" * 64}}, "tuned on another version of the expert"),
    ({"rules": {"digest": "0" * 64}}, "the rule set 'chengdu' has changed since it was tuned"),
])
def test_a_run_says_when_an_adapted_players_weights_were_tuned_on_another_expert(reference, tmp_path, capsys,
                                                                                   changes, words):
    """A tuned file carries the fingerprint of the expert it was tuned on (its seat and field on fixed hands);
    a run seating it warns, per variant and naming the file, when those hands play differently now (the
    expert changed: its measured gain may not hold) or the tuned rule set changed — and only then."""
    _, res = reference
    doc = yaml.safe_load(res.path.read_text())
    fp = doc["fingerprint"]
    assert fp["hands"] == 32 and fp["duplicate"] and len(fp["sha256"]) == 64  # every tune writes one
    f = _tuned_copy(res, tmp_path, {"defence": 0.9, "ambition": 1.6, "tempo": 0.05}, **changes)
    seats = f"seats=[{{bot: expert, params_from: {f}}}, expert, expert, expert]"
    code, _, err = cli_run(["simulate", "chengdu", "--hands", "8", "--jobs", "1", "--set", seats,
                            "--out", str(tmp_path / "run"), "--quiet"], capsys)
    assert code == 0, err
    warned = [line for line in err.splitlines() if "params_from" in line]
    if words is None:
        assert not warned
    else:
        assert len(warned) == 1 and words in warned[0] and str(f) in warned[0] and warned[0].startswith("warning:")
    # the run keeps what it found: its manifest records it, and a report written later lists it first
    manifest = json.loads((tmp_path / "run" / "_variants" / "variant=chengdu" / "_manifest.json").read_text())
    assert [e["ref"] for e in manifest.get("stale", [])] == ([] if words is None else [str(f)])
    assert ("stale" in manifest) == (words is not None)  # absent, not empty, when nothing is stale
    code, _, err = cli_run(["report", str(tmp_path / "run"), "--boot", "0"], capsys)
    assert code == 0, err
    first = (tmp_path / "run" / "report.md").read_text().split("\n## ")[1]
    if words is None:
        assert not first.startswith("Check first")
    else:
        assert first.startswith("Check first") and words in first and str(f) in first


def test_a_study_reports_an_adapted_player_tuned_on_another_expert(reference, tmp_path):
    """In a study the same check is a finding: returned by run_study and listed first in the report, naming the
    variant and the file; the baseline, seating no tuned file, has none."""
    from xuezhan import run_study

    _, res = reference
    f = _tuned_copy(res, tmp_path, {"defence": 0.9, "ambition": 1.6, "tempo": 0.05},
                    fingerprint={"sha256": "0" * 64})
    study = {"name": "stale", "baseline": {"name": "fixed", "rules": "chengdu"},
             "variants": [{"name": "adapted", "rules": "chengdu",
                           "set": {"seats": [{"bot": "expert", "params_from": str(f)}, "expert", "expert", "expert"]}}],
             "seats": ["expert"] * 4, "hands": 8, "seed": 3}
    result = run_study(study, out_dir=tmp_path / "study", jobs=1, progress=False)
    stale = [x for x in result.findings if x.key == "seats"]
    assert [x.variant for x in stale] == ["adapted"] and str(f) in stale[0].problem
    assert "rerun xuezhan tune chengdu" in stale[0].advice
    report = result.report.with_suffix(".md").read_text()
    first = report.split("\n## ")[1]  # the first section after the title block
    assert first.startswith("Check first") and "adapted [seats]: params_from" in first
