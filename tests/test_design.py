"""``xuezhan design`` (simulator.run.design): a tiny design run end to end, the same seed writing the same bytes, a
resumed search ending where an uninterrupted one does, an infeasible design naming the failed target and the
closest candidate, and the metrics' per-wall sums against a direct computation.

Toy sizes (greedy seats, a few hundred walls): what is tested is the machinery, not the designed values.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from cli_helpers import cli_run

from simulator.hands import play_hands
from simulator.rules import load_rules
from simulator.run import design as dz
from simulator.run import design_report as dr
from simulator.run.design_metrics import Moments, measure, per_wall

pytest.importorskip("optuna")

# greedy seats on chengdu: the rule set closest to the baseline (血战, ~2.8 wins per hand) with at least 3 wins
# per hand is 血流 (~6.3; single-winner hands have 1); the cap is searched too and changes nothing for greedy
TINY = {
    "name": "tiny", "baseline": "chengdu", "populations": {"greedy": ["greedy"] * 4},
    "search": {"mode": {"choices": ["single", "xuezhan", "xueliu"]}, "scoring.cap": {"low": 3, "high": 4}},
    "targets": [{"metric": "wins_per_hand", "at_least": 3}],
    "objective": "closest", "budget": 6, "walls": 60, "blocks": 2, "fresh_walls": 80, "seed": 5,
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    return out, dz.design(TINY, out)


def test_tiny_design_writes_a_rule_file_that_extends_the_baseline_with_the_changed_key_only(tiny):
    out, res = tiny
    assert res.met and res.rules == out / "tiny.yaml"
    data = yaml.safe_load(res.rules.read_text(encoding="utf-8"))
    assert data == {"extends": "chengdu", "name": "tiny", "mode": "xueliu"}  # the cap stays the baseline's 4
    rules = load_rules(str(res.rules))  # a rule file the simulator plays
    assert rules.mode == "xueliu" and rules.model_copy(update={"mode": "xuezhan", "name": "chengdu"}) == \
        load_rules("chengdu")
    target = res.document["chosen"]["targets"][0]
    assert target["ci95"][0] >= 3 and target["walls"] == 80 and target["met"]
    assert "wins_per_hand ≥ 3" in res.rules.read_text(encoding="utf-8")  # the comment says what it meets
    # the space is a grid of 6 = the budget: every point played once, in order; only 血流 meets the target
    hist = res.document["search"]["history"]
    assert [(h["params"]["mode"], h["params"]["scoring.cap"]) for h in hist] == [
        (m, c) for m in ("single", "xuezhan", "xueliu") for c in (3, 4)]
    assert [h["met"] for h in hist] == [False, False, False, False, True, True]
    report = (out / "tiny.md").read_text(encoding="utf-8")
    assert "## Result: every target met" in report and "mode = xueliu, scoring.cap = 4" in report
    assert (out / "tiny.png").stat().st_size > 0


def test_the_report_draws_the_pareto_front_and_states_the_confirmation_bound(tiny):
    out, res = tiny
    report = (out / "tiny.md").read_text(encoding="utf-8")
    assert res.document["confirmed"] and all("excess" in h for h in res.document["search"]["history"])
    k = len(res.document["confirmed"])
    assert f"at most {k} × 2.5% = {2.5 * k:g}%" in report and "Pareto front" in report
    # 血流 meets the target (excess 0); among the others the excess falls as the objective grows: the front
    hist = res.document["search"]["history"]
    pts = [(h["objective"], h["excess"]) for h in hist]
    idx = dr.front(pts)
    assert all(hist[i]["excess"] == 0 for i in idx[-1:]) and [pts[i][0] for i in idx] == sorted(pts[i][0] for i in idx)
    for i, (o, e) in enumerate(pts):  # every trial off the front is matched or dominated by one on it
        assert i in idx or any(pts[j][0] <= o and pts[j][1] <= e for j in idx)


def test_the_pareto_front_keeps_only_non_dominated_points():
    pts = [(0.0, 3.0), (0.5, 1.0), (0.5, 2.0), (1.0, 1.0), (2.0, 0.0), (3.0, 0.0)]
    assert dr.front(pts) == [0, 1, 4]
    assert "at most 3 × 2.5% = 7.5%" in dr.bound_text(3, 1, True)
    assert "at least 90%" in dr.bound_text(1, 2, True) and "nothing was reported as met" in dr.bound_text(2, 1, False)


def test_the_same_seed_and_file_write_the_same_bytes_and_a_resumed_search_ends_the_same(tiny, tmp_path):
    out, _ = tiny
    again = dz.design(TINY, tmp_path / "again")
    for suffix in ("yaml", "json"):
        assert (tmp_path / "again" / f"tiny.{suffix}").read_bytes() == (out / f"tiny.{suffix}").read_bytes()
    part = dz.design(TINY, tmp_path / "resumed", budget=3)  # stopped after three trials, then continued
    assert part.document["search"]["trials"] == 3
    resumed = dz.design(TINY, tmp_path / "resumed")
    assert resumed.trials_run == 3 and again.trials_run == 6
    assert (tmp_path / "resumed" / "tiny.yaml").read_bytes() == (out / "tiny.yaml").read_bytes()


def test_an_infeasible_design_names_the_failed_target_and_the_closest_candidate(tmp_path, capsys):
    bad = {**TINY, "name": "never", "targets": [{"metric": "wins_per_hand", "at_least": 8},
                                                 {"metric": "huazhu_rate", "at_most": 0.5}]}
    path = tmp_path / "never.yaml"
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    code, out, err = cli_run(["design", str(path), "--out", str(tmp_path / "o"), "-q"], capsys)
    assert code == 1
    assert "no candidate met every target" in err and "wins_per_hand ≥ 8" in err and "closest: mode = xueliu" in err
    doc = json.loads((tmp_path / "o" / "never.json").read_text(encoding="utf-8"))
    failed = doc["closest"]["failed"]
    assert [f["target"] for f in failed] == ["wins_per_hand ≥ 8"]  # 花猪 never happens with greedy: met
    assert failed[0]["misses_by"] == pytest.approx(8 - failed[0]["ci95"][0], abs=1e-5) and failed[0]["misses_by"] > 1
    assert not (tmp_path / "o" / "never.yaml").exists()
    assert "## Result: not met" in (tmp_path / "o" / "never.md").read_text(encoding="utf-8")


def test_metric_sums_match_a_direct_computation():
    rules = load_rules("chengdu", {"seats": ["greedy"] * 4})
    acc = measure(rules, True, 0, 30, 9, ["dealer_edge", "huazhu_rate", "wins_2fan_share", "edge:greedy-greedy",
                                          "self_draw_share", "deal_in_rate", "last_seat_edge"], batch=7)
    cols = play_hands(rules, np.arange(120), 9, duplicate=True)
    p = cols["players"]
    dealer_rows = p["seat"] == np.repeat(cols["hands"]["dealer"], 4)
    y = np.bincount(p["deal_id"][dealer_rows], weights=p["score_total"][dealer_rows].astype(float))
    e = acc["dealer_edge"].estimate(False)
    assert e.value == pytest.approx(y.sum() / 120) and e.walls == 30 and e.n == 120
    r = y.sum() / 120
    assert e.se == pytest.approx(np.sqrt(((y - 4 * r) ** 2).sum() / (30 * 29)) / 4)  # clustered by wall
    fan = cols["wins"]["fan"]
    assert acc["wins_2fan_share"].estimate(True).value == pytest.approx((fan >= 2).mean())
    assert acc["edge:greedy-greedy"].estimate(False).value == 0
    w = cols["wins"]
    assert acc["self_draw_share"].estimate(True).value == pytest.approx((w["kind"] == "self_draw").mean())
    fed = {(h, q) for h, q, k in zip(w["hand_id"], w["payer"], w["kind"], strict=True)
           if k in ("discard", "rob_kong") and q >= 0}
    assert acc["deal_in_rate"].estimate(True).value == pytest.approx(len(fed) / 480)
    last = p["seat"] == (np.repeat(cols["hands"]["dealer"], 4) + 3) % 4
    assert acc["last_seat_edge"].estimate(False).value == pytest.approx(p["score_total"][last].sum() / 120)
    # one batch or seven: the same sums
    whole = Moments()
    whole.add(*per_wall("dealer_edge", cols, np.arange(120) // 4, 0, 30))
    assert whole.estimate(False).value == pytest.approx(e.value)
