"""score_hand: validation (docs/spec.md §8 error codes), split choice, table/additive arithmetic, contexts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import rules as R
from simulator.hands.score import MELD_VALUES, HandError, score_hand
from simulator.kernel import scoring as S
from simulator.kernel import shape as H
from simulator.kernel import state as ST
from simulator.rules import load_rules

CHENGDU = load_rules("chengdu")
QQ = load_rules("qq_sichuan")


def score(hand, win_tile, win="discard", melds=(), context=None, rules=CHENGDU, **kw):
    return score_hand(rules, hand, list(melds), win_tile, win, context, **kw)


def table_rules(hand_types: dict, **scoring) -> R.RuleSet:
    """chengdu with a table of hand types (overrides cannot remove keys, so start from chengdu)."""
    return load_rules("chengdu", {"scoring": {"mode": "table", "hand_types": hand_types, **scoring}})


def test_meld_constants_agree():
    assert MELD_VALUES == {"pung": H.MELD_PUNG, "kong": H.MELD_KONG, "ckong": H.MELD_CKONG}


# ---- errors -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "code", "words"), [
    (("123m456m789m11p2x", "2p"), "invalid_input", "unexpected character"),
    (("123m456m789m11p22p", "2p"), "invalid_input", "13 tiles"),
    (("123m456m789m11p222p", "2p", "discard", ["pung:5p"]), "invalid_input", "17 tiles"),
    (("123m456m789m55p", "5p", "discard", ["pung:5p"]), "invalid_input", "5 times counting melds"),
    (("123m456m789m55p", "5p", "discard", ["kong:5p"]), "invalid_input", "6 times counting melds"),
    (("123m456m789m123p22p", "5p"), "invalid_input", "not in the hand"),
    (("123m456m789m123p22p", "2p", "discard", (), {"after_kong"}), "invalid_input", "needs a self-draw"),
    (("123m456m789m22p", "2p", "self_draw", ["pung:5p"], {"after_kong"}), "invalid_input", "kong set down"),
    (("123m456m789m22p", "2p", "self_draw", ["pung:5p"], {"first_draw"}), "invalid_input", "melds"),
    (("123m456m789m123p22p", "2p", "discard", (), {"first_draw"}), "invalid_input", "self-draw"),
    (("123m456m789m123p22p", "2p", "rob_kong"), "invalid_input", "robbed tile"),
    (("123m456m789m123p22p", "2p", "self_draw", (), {"after_own_kong_discard"}), "invalid_input", "discard"),
    (("123m456m789m123p22p", "1p", "rob_kong", (), {"last_tile"}), "invalid_input", "last tile"),
    (("123m456m789m123p22p", "2p", "self_draw", (), {"first_draw", "last_tile"}), "invalid_input", "both"),
    (("123m456m789m123p22p", "2p", "discard", (), {"lucky"}), "invalid_input", "unknown context"),
    (("123m456m789m123p22p", "2p", "tsumo"), "invalid_input", "win 'tsumo'"),
    (("123m456m789m22p", "2p", "discard", ["chow:5p"]), "invalid_input", "meld kind"),
    (("123m456m789m22p", "2p", "discard", ["5p"]), "invalid_input", "KIND:TILE"),
    (("123m456m789m22p", "2p", "discard", ["pung:55p"]), "invalid_input", "expected one tile"),
    (("123m456m789m123p22s", "2s"), "not_a_winning_hand", "three suits"),
    (("123m456m789m124p22p", "2p"), "not_a_winning_hand", "no split"),
])
def test_errors(args, code, words):
    with pytest.raises(HandError) as info:
        score(*args)
    assert info.value.code == code
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_void_suit_tile_is_not_a_winning_hand():
    with pytest.raises(HandError) as info:
        score("123m456m789m123p22p", "2p", void="p")
    assert info.value.code == "not_a_winning_hand" and "void" in str(info.value)
    assert score("123m456m789m123p22p", "2p", void="s").hand_type == "pinghu"
    with pytest.raises(HandError, match="void 'x'"):
        score("123m456m789m123p22p", "2p", void="x")


def test_context_mapping_and_set_forms_agree():
    a = score("123m456m789m123p22p", "2p", "self_draw", context={"last_tile": True, "dealer": False})
    b = score("123m456m789m123p22p", "2p", "self_draw", context={"last_tile"})
    assert a == b and "haidilaoyue" in a.patterns
    with pytest.raises(HandError, match="true or false"):
        score("123m456m789m123p22p", "2p", "self_draw", context={"last_tile": "yes"})


# ---- split choice ---------------------------------------------------------------------------------------

def test_triplets_versus_terminal_runs_takes_the_better_split():
    # 111222333m: three triplets (对对胡) or three 123m runs (带幺九); 带幺九 is worth more in both configs.
    for rules, fan in ((CHENGDU, 2), (QQ, 3)):
        r = score("111222333m99911p", "1p", rules=rules)
        assert r.hand_type == "daiyaojiu" and r.fan == fan and "duiduihu" not in r.patterns
    # With 对对胡 worth more than 带幺九 the triplets win.
    r = score("111222333m99911p", "1p", rules=load_rules("chengdu", {"scoring": {"patterns": {"duiduihu": 3}}}))
    assert r.hand_type == "duiduihu" and r.fan == 3


def test_seven_pairs_versus_standard():
    r = score("11223344556677m", "7m")  # 清七对 (2 + 2) beats 清一色 runs (2)
    assert r.hand_type == "qingqidui" and r.fan == 4 and "qidui" in r.patterns
    r = score("11223344556677m", "7m", rules=load_rules("chengdu", {"scoring": {"patterns": {"qidui": 0}}}))
    assert r.fan == 2 and r.hand_type == "qingqidui"  # equal fan: the earlier label (清七对 before 清一色)


# ---- additive and table arithmetic --------------------------------------------------------------------

def test_jiangqidui_composite_in_table_and_additive_modes():
    hand = "22225588m225588p"  # seven pairs, all 2/5/8, 2m four times
    rules = table_rules({"pinghu": 1, "longqidui": 5, "jiangqidui": 6})
    r = score(hand, "8p", rules=rules)
    assert r.hand_type == "jiangqidui" and r.gen == 1 and r.fan == 7 and r.capped_fan == 4
    r = score(hand, "8p")
    assert r.hand_type == "jiangqidui"  # additive label order: jiangqidui before longqidui
    assert {"qidui", "longqidui", "zhongzhang", "menqing"} <= set(r.patterns) and r.fan == 2 + 1


def test_long_uses_gen_only_when_the_long_entry_is_paid():
    hand = "11222244p557799m"
    qq = score(hand, "9m", rules=QQ)
    assert qq.hand_type == "longqidui" and qq.gen == 0 and qq.fan == 5
    no_long = table_rules({"pinghu": 1, "qidui": 3}, long_uses_gen=True, cap=None)
    r = score(hand, "9m", rules=no_long)
    assert r.hand_type == "qidui" and r.gen == 1 and r.fan == 3 + 1
    additive = load_rules("chengdu", {"scoring": {"long_uses_gen": True}})
    r = score(hand, "9m", rules=additive)
    assert r.gen == 0 and r.fan == 2  # qidui 2, the 4 of 2p consumed by 龙


def test_tianhu_and_dihu():
    hand = "123m456m789m123p22p"
    r = score(hand, "2p", "self_draw", context={"first_draw", "dealer"}, rules=QQ)
    assert r.hand_type == "tianhu" and r.fan == 6 and r.points_each == 32  # table entry 6, 1-based
    r = score(hand, "2p", "self_draw", context={"first_draw"})
    assert "dihu" in r.patterns and r.hand_type == "pinghu" and r.fan == 2 and r.points_each == 4 + 1
    r = score(hand, "2p", "self_draw", context={"first_draw", "dealer"})
    assert "tianhu" in r.patterns and r.fan == 3 and r.points_each == 8 + 1


def test_situational_extras():
    hand = "123m456m789m123p22p"
    haidi = load_rules("haidilao")
    assert score(hand, "2p", "self_draw", context={"last_tile"}, rules=haidi).fan == 1
    r = score(hand, "2p", "discard", context={"last_tile"}, rules=haidi)
    assert "haidipao" in r.patterns and r.fan == 1 and r.points == 2
    r = score(hand, "2p", "discard", context={"after_own_kong_discard"})
    assert "gangshangpao" in r.patterns and r.fan == 1 and r.points == 2 and r.points_each is None
    r = score("123m456m789m234p55p", "2p", "rob_kong")
    assert "qiangganghu" in r.patterns and r.fan == 1 and r.points == 2 and "zimo" not in r.patterns


def test_menqing_zhongzhang_and_self_draw_bonuses():
    r = score("234m456m678m22p", "2p", melds=["ckong:5p"])
    assert "menqing" in r.patterns and "zhongzhang" in r.patterns
    r = score("234m456m678m22p", "2p", melds=["kong:5p"])
    assert "menqing" not in r.patterns and r.gen == 1
    base = score("123m456m789m123p22p", "2p", "self_draw")
    assert base.points_each == 1 + 1 and base.fan == 0 and "zimo" in base.patterns  # 自摸加底
    add_fan = score("123m456m789m123p22p", "2p", "self_draw", rules=load_rules("zimo_add_fan"))
    assert add_fan.fan == 1 and add_fan.points_each == 2
    none = score("123m456m789m123p22p", "2p", "self_draw", rules=QQ)
    assert none.points_each == 1


def test_cap_linear_and_base():
    hand = "99s"
    melds = ["kong:1s", "kong:3s", "kong:5s", "ckong:7s"]
    r = score(hand, "9s", melds=melds)
    assert r.capped_fan == 4 and r.points == 16 and r.fan == 2 + 1 + 1 + 4
    r = score(hand, "9s", melds=melds, rules=load_rules("chengdu", {"scoring": {"base": 5, "points": "linear"}}))
    assert r.points == 5 * 4
    r = score(hand, "9s", melds=melds, rules=load_rules("uncapped"))
    assert r.capped_fan == r.fan == 8 and r.points == 256


def test_points_of_clamps_exponent():
    p = CHENGDU.to_arrays()
    p[R.SLOT["scoring.cap"]] = R.code("scoring.cap", None)
    assert S.points_of(100, p) == 2**S.MAX_EXPONENT
    p[R.SLOT["scoring.fan_offset"]] = 1
    assert S.points_of(0, p) == 1


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["chengdu", "qq_sichuan", "chengdu_points", "uncapped", "zimo_add_fan"]),
       st.sampled_from(["discard", "self_draw", "rob_kong"]), st.randoms(use_true_random=False))
def test_score_is_independent_of_tile_order(name, win, rnd):
    rules = load_rules(name)
    hand = "123m345m999p66p" if win != "rob_kong" else "123m345m456p99p"
    groups = _split(hand)
    rnd.shuffle(groups)
    shuffled = "".join(d + s for d, s in groups)  # one tile per group: '3m1p2m...'
    melds = [("ckong", "2p")]
    wt = "6p" if win != "rob_kong" else "4p"
    a = score_hand(rules, hand, melds, wt, win, None)
    b = score_hand(rules, shuffled, melds, wt, win, None)
    assert a == b


def _split(hand: str):
    """Single-tile groups of a notation string: '12m3p' -> [('1','m'), ('2','m'), ('3','p')]."""
    out, digits = [], []
    for ch in hand:
        if ch.isdigit():
            digits.append(ch)
        else:
            out += [(d, ch) for d in digits]
            digits = []
    return out


def test_score_result_json_keys():
    d = score("123m456m789m123p22p", "2p").to_dict()
    assert set(d) == {"hand_type", "patterns", "gen", "fan", "capped_fan", "points"}
    d = score("123m456m789m123p22p", "2p", "self_draw").to_dict()
    assert "points_each" in d and "points" not in d
    assert np.all([p in R.FLAGS for p in d["patterns"]])


# ---- bounds: every reachable value fits the log dtypes (issue 8) -------------------------------------------

def _only_pinghu(fan: int) -> dict:
    """Uncapped, every pattern and extra 0 except 平胡 = ``fan``: every win pays exactly 2^fan (+1 自摸加底)."""
    zero = {k: 0 for k in R.SHAPE_PATTERNS}
    return {"scoring": {"cap": None, "patterns": {**zero, "pinghu": fan},
                        "extras": {k: 0 for k in R.EXTRAS}}}


def test_scores_that_could_overflow_the_logs_are_rejected():
    with pytest.raises(R.RulesError, match=r"scoring.*more than the logs hold.*scoring\.cap"):
        load_rules("chengdu", {"scoring": {"cap": None, "patterns": {"qingyise": 31}}})
    with pytest.raises(R.RulesError, match="more than the logs hold"):
        load_rules("chengdu", _only_pinghu(28))
    with pytest.raises(R.RulesError, match="fan"):
        load_rules("chengdu", {"scoring": {"cap": 3, "patterns": dict.fromkeys(R.SHAPE_PATTERNS, 64)}})
    # the same fans under a cap are fine: only the paid (capped) fan makes money
    load_rules("chengdu", {"scoring": {"cap": 10, "patterns": {"qingyise": 31}}})


def test_largest_accepted_scores_are_logged_exactly_and_zero_sum():
    from engine_helpers import play

    rules = load_rules("chengdu", _only_pinghu(27))
    fan, money = R.log_bounds(rules)
    assert fan == 27 and money <= R.MONEY_LOG_MAX
    raw, cols = play(rules, 300)
    p, w = cols["players"], cols["wins"]
    assert set(np.unique(w["points"])) <= {2**27, 2**27 + 1} and len(w["points"]) > 300
    assert (p["score_total"].reshape(-1, 4).sum(axis=1) == 0).all()
    exact = raw.p[:, ST.PL_SCORE:ST.PL_SCORE + ST.N_COMP].sum(axis=1)
    assert np.array_equal(p["score_total"].astype(np.int64), exact)   # no int32 wrap-around
    assert np.abs(exact).max() > 2**28  # within a factor 6 of the int32 limit
