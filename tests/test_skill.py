"""analysis.skill: skill-vs-luck measures on hand-worked and synthetic data with known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis import skill


def _frame(scores: list[tuple[int, int, int, bool, float]]) -> pl.DataFrame:
    deal, hand, seat, test, score = zip(*scores, strict=True)
    return pl.DataFrame({"deal_id": pl.Series(deal, dtype=pl.Int64), "hand_id": pl.Series(hand, dtype=pl.Int64),
                         "seat": pl.Series(seat, dtype=pl.Int8), "test": pl.Series(test, dtype=pl.Boolean),
                         "score": pl.Series(score, dtype=pl.Float64)})


# A two-seat toy under duplicate seating: 2 walls x 2 rotations; rotation r seats the test bot at seat r.
TOY = _frame([
    (0, 0, 0, True, 3), (0, 0, 1, False, -1), (0, 1, 0, False, 1), (0, 1, 1, True, 1),
    (1, 2, 0, True, 0), (1, 2, 1, False, -2), (1, 3, 0, False, -2), (1, 3, 1, True, 4),
])


def test_hand_worked_toy():
    """Worked by hand: test scores 3, 1, 0, 4 (mean 2, variance 2.5), field −1, 1, −2, −2 (mean −1, variance
    1.5): edge 3, sd √2; per-wall edges 2 and 4 give SE 1; per-hand differences 4, 0, 2, 6 (mean 3, variance 5);
    cells (wall, seat) after removing bot means: (1, 2), (0, −1), (−2, −1), (−1, 2) → within variance 6/4 = 1.5,
    MSB = 2·(2.25 + 0.25 + 2.25 + 0.25)/3 = 10/3, n0 = 2 → deal (10/3 − 1.5)/2 = 11/12; bot ¼·¾·3² = 2.25."""
    m = skill.skill_measures(skill.Design.from_frame(TOY), n_boot=50, seed=1)
    assert m["walls"] == 2 and m["player_hands"] == 8
    assert m["edge"] == pytest.approx(3.0)
    assert m["edge_se"] == pytest.approx(1.0)
    assert m["edge_lo"] == pytest.approx(3.0 - 1.959964, abs=1e-5)
    assert m["sd"] == pytest.approx(np.sqrt(2.0))
    assert m["skill_luck"] == pytest.approx(3.0 / np.sqrt(2.0))
    assert m["edge_pair"] == pytest.approx(3.0) and m["sd_pair"] == pytest.approx(np.sqrt(5.0))
    assert m["hands_90"] == pytest.approx((1.2815516 * np.sqrt(5.0) / 3.0) ** 2, rel=1e-6)
    total = 11 / 12 + 2.25 + 1.5
    assert m["deal_share"] == pytest.approx(11 / 12 / total)
    assert m["bot_share"] == pytest.approx(2.25 / total)
    assert m["play_share"] == pytest.approx(1.5 / total)


def test_seeded_and_no_bootstrap():
    d = skill.Design.from_frame(TOY)
    assert skill.skill_measures(d, n_boot=30, seed=4) == skill.skill_measures(d, n_boot=30, seed=4)
    m = skill.skill_measures(d, n_boot=0)
    assert np.isnan(m["skill_luck_lo"]) and np.isnan(m["hands_90_hi"]) and m["edge"] == pytest.approx(3.0)


def _synthetic(walls: int, seed: int, mu_test: float, mu_field: float, sd_deal: float, sd_play: float):
    """score = μ_bot + a(wall, seat) + e: 4 seats, 4 rotations per wall, the test bot at seat (4 − r) % 4 of
    rotation r (seat s is played by seats[(s + r) % 4], the test bot being seats[0])."""
    rng = np.random.default_rng(seed)
    w, r, s = np.meshgrid(np.arange(walls), np.arange(4), np.arange(4), indexing="ij")
    w, r, s = w.ravel(), r.ravel(), s.ravel()
    test = (s + r) % 4 == 0
    a = rng.normal(0, sd_deal, (walls, 4))[w, s]
    score = np.where(test, mu_test, mu_field) + a + rng.normal(0, sd_play, w.size)
    return pl.DataFrame({"deal_id": w.astype(np.int64), "hand_id": (4 * w + r).astype(np.int64),
                         "seat": s.astype(np.int8), "test": test, "score": score})


def test_synthetic_known_components_and_hands():
    """Truth: edge 0.8; deal variance 4, play 1, bot ¼·¾·0.64 = 0.12; a test − field difference in one hand has
    variance 2·4 + 2·1 = 10, so hands_90 = (1.2816·√10/0.8)² = 25.66. Every interval covers its truth."""
    m = skill.skill_measures(skill.Design.from_frame(_synthetic(3000, 7, 0.6, -0.2, 2.0, 1.0)), n_boot=200, seed=2)
    total = 4 + 1 + 0.12
    truth = {"edge": 0.8, "deal_share": 4 / total, "bot_share": 0.12 / total, "play_share": 1 / total,
             "hands_90": (1.2815516 * np.sqrt(10) / 0.8) ** 2,
             "skill_luck": 0.8 / np.sqrt(4 + 1)}
    for k, v in truth.items():
        assert m[f"{k}_lo"] <= v <= m[f"{k}_hi"], (k, v, m[f"{k}_lo"], m[f"{k}_hi"])
    assert m["sd_pair"] == pytest.approx(np.sqrt(10), rel=0.03)
    assert m["deal_share"] == pytest.approx(4 / total, abs=0.02)


def test_deal_only_scores_have_no_edge_and_no_horizon():
    """Scores that depend on the deal only (no bot effect, no play noise): every wall's test and field means are
    equal, so the edge is 0 in the sample and in every replicate, the whole variance is the deal's, and no number
    of hands puts the test bot ahead."""
    m = skill.skill_measures(skill.Design.from_frame(_synthetic(300, 3, 0.0, 0.0, 1.0, 0.0)), n_boot=100, seed=0)
    assert m["edge"] == pytest.approx(0.0, abs=1e-12) and m["edge_se"] == pytest.approx(0.0, abs=1e-12)
    assert m["hands_90"] == np.inf and m["hands_90_hi"] == np.inf
    assert m["deal_share"] == pytest.approx(1.0) and m["play_share"] == pytest.approx(0.0, abs=1e-12)


def test_hands_ahead_inverts_p_ahead():
    for ratio in (0.05, 0.3, 1.0):
        n = skill.hands_ahead(ratio)
        assert skill.p_ahead(ratio, n) == pytest.approx(0.9)
    assert skill.hands_ahead(-0.1) == np.inf


def test_needs_both_bots():
    df = TOY.with_columns(pl.lit(True).alias("test"))
    with pytest.raises(ValueError, match="both a test and a field bot"):
        skill.skill_measures(skill.Design.from_frame(df))


SMALL_STUDY = """
name: skill_small
baseline: {name: chengdu, rules: chengdu}
variants:
  - {name: single, rules: single}
  - {name: sess, rules: chengdu, set: {session.hands: 4}}
seats: [expert, greedy, greedy, greedy]
duplicate: true
hands: 80
seed: 5
"""


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    from xuezhan.studies import run_study

    tmp = tmp_path_factory.mktemp("skill")
    (tmp / "s.yaml").write_text(SMALL_STUDY)
    return run_study(tmp / "s.yaml", out_dir=tmp / "run", jobs=1, progress=False)


def test_real_run_table_matches_the_logs(small_run):
    """On a real duplicate study: one row per arm, the expert (seat 0's bot) against greedy; the edge is the
    difference of the two bots' mean score_total in the logs; sessions_90 = hands_90 / session.hands."""
    from analysis.load import open_run

    run = open_run(small_run.out_dir)
    t = skill.skill_table(run, n_boot=50)
    assert t["variant"].to_list() == ["chengdu", "single", "sess"]
    assert set(t["test"]) == {"expert"} and set(t["field"]) == {"greedy"}
    assert t["walls"].to_list() == [20, 20, 20] and t["player_hands"].to_list() == [320, 320, 320]
    for row in t.iter_rows(named=True):
        p = run.players(row["variant"]).collect()
        means = dict(p.group_by("bot").agg(pl.col("score_total").cast(pl.Float64).mean()).iter_rows())
        assert row["edge"] == pytest.approx(means["expert"] - means["greedy"])
        assert row["edge_lo"] < row["edge"] < row["edge_hi"]
    sess = t.row(2, named=True)
    assert sess["session_hands"] == 4 and sess["sessions_90"] == pytest.approx(sess["hands_90"] / 4)
    assert t.row(0, named=True)["sessions_90"] is None


def test_report_has_the_skill_section(small_run):
    md = Path(small_run.report).with_suffix(".md").read_text()
    section = md.split("## Skill\n", 1)[1].split("\n## ", 1)[0]
    assert "not human players" in section
    assert "| chengdu | expert | greedy |" in section and "| sess | expert | greedy |" in section


def test_no_skill_section_without_two_bots_in_duplicate(tmp_path):
    from analysis.load import open_run
    from xuezhan.studies import run_study

    (tmp_path / "s.yaml").write_text("name: one\nbaseline: chengdu\nhands: 8\nseed: 1\nduplicate: true\n")
    run = open_run(run_study(tmp_path / "s.yaml", out_dir=tmp_path / "run", jobs=1, report=False,
                             progress=False).out_dir)
    assert skill.skill_table(run).height == 0 and skill.skill_section(run) is None


def test_shipped_skill_study_measures_expert_against_greedy():
    """configs/studies/skill.yaml: the issue's eight rule sets, one expert among three greedy, duplicate walls."""
    from simulator.run.study import load_study, study_variants

    study, path = load_study("skill")
    arms = {v.name: v.rules for v in study_variants(study, path)}
    assert study.duplicate and list(arms) == ["chengdu", "cap3", "uncapped", "huazhu_8x", "xueliu", "single",
                                              "exchange_three", "chengdu_points"]
    assert {tuple(b.bot for b in r.seats) for r in arms.values()} == {("expert", "greedy", "greedy", "greedy")}
    assert arms["huazhu_8x"].void_suit == "none" and arms["huazhu_8x"].settlement.huazhu_penalty == 8


def test_plot_draws_on_a_given_axis():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    table = pl.DataFrame({"variant": ["a", "b"], "test": ["expert"] * 2, "field": ["greedy"] * 2,
                          "skill_luck": [0.1, 0.05], "skill_luck_lo": [0.07, 0.02], "skill_luck_hi": [0.13, 0.08]})
    assert skill.skill_luck_plot(table, ax=ax) is fig
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert "expert vs greedy" in ax.get_xlabel()
