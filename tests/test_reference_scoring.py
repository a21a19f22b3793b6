"""The engine's logged wins against an independent reference scorer (tests/reference_scorer.py, written from
docs/spec.md §3–4/§8 and docs/rules.md, sharing no code with simulator/kernel/evaluate.py or
simulator/kernel/scoring.py), and random complete hands scored by ``xuezhan score``'s path (the same compiled evaluator)
against it.

Hypothesis draws rule variants (additive or table scoring, pattern and extra fans, caps, fan offsets, linear or
exponential points, 根 and long_uses_gen, self-draw bonuses, 唱歌/跳舞, 血流 for more wins per hand) and a seed;
every win of a few dozen hands is re-scored from its logged tiles, melds, tile, kind and context.
"""

from __future__ import annotations

import numpy as np
from engine_helpers import play
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from reference_scorer import LABELS, SHAPE, SITUATIONAL, TABLE_ORDER, Win, check_wins, score

from simulator.hands.score import score_hand
from simulator.kernel.tiles import tile_str
from simulator.rules import RulesError, load_rules

HANDS = 40  # hands per example (血流: about 3 wins a hand)


@st.composite
def variants(draw) -> dict:
    """Overrides of chengdu's rule set: every scoring knob docs/spec.md §4 names."""
    fan = st.integers(0, 4)
    table = draw(st.booleans())
    cap = draw(st.one_of(st.none(), st.integers(1, 8)))
    scoring = {
        "mode": "table" if table else "additive",
        "long_uses_gen": draw(st.booleans()),
        "extras": {k: draw(st.integers(0, 3)) for k in ("gen", *SITUATIONAL)},
        "cap": cap,
        "points": "linear" if cap is None else draw(st.sampled_from(["exponential", "linear"])),
        "fan_offset": draw(st.integers(0, 1)),
        "self_draw_bonus": draw(st.sampled_from(["none", "add_base", "add_fan"])),
    }
    if table:
        listed = draw(st.lists(st.sampled_from(TABLE_ORDER), unique=True, max_size=len(TABLE_ORDER)))
        scoring["hand_types"] = {"pinghu": draw(fan), **{t: draw(st.integers(1, 6)) for t in listed}}
    else:
        scoring["patterns"] = {k: draw(fan) for k in SHAPE if k != "pinghu" and draw(st.booleans())}
    return {"scoring": scoring, "mode": draw(st.sampled_from(["xuezhan", "xueliu", "single"])),
            "declare_ready": draw(st.sampled_from(["none", "sing", "dance"])),
            "exchange_three": draw(st.sampled_from(["none", "random"]))}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=variants(), seed=st.integers(0, 2**31 - 1))
def test_logged_wins_match_the_reference_scorer(variant, seed):
    try:
        rules = load_rules("chengdu", variant)
    except RulesError:
        reject()  # a variant whose money would not fit the logs (rejected by the rule set's own check)
    _, cols = play(rules, HANDS, seed)
    assert check_wins(rules, cols["wins"]) > 0


def test_rare_contexts_match_the_reference_scorer():
    """杠上花, 杠上炮, 抢杠胡, 海底 and the shapes bots reach, from a larger sample of one rule set with fans on every
    pattern and extra (so that each flag moves the fan). Shapes the bots seldom reach (带幺九, 将对, 十八罗汉,
    天胡, 地胡) are covered by the random hands below."""
    rules = load_rules("chengdu", {"mode": "xueliu", "scoring": {
        "patterns": {k: 1 for k in SHAPE if k != "pinghu"}, "cap": None, "points": "linear",
        "extras": {k: 1 for k in ("gen", *SITUATIONAL)}, "long_uses_gen": True}})
    _, cols = play(rules, 3000, 5)
    w = cols["wins"]
    assert check_wins(rules, w) > 5000
    for f in ("gangshanghua", "gangshangpao", "qiangganghu", "haidilaoyue", "haidipao", "menqing", "zhongzhang",
              "qidui", "longqidui", "jingou", "qingyise", "duiduihu"):
        assert np.asarray(w[f]).any(), f  # each situation occurred, so the comparison covered it
    assert {"qingdui", "longqidui", "qidui", "jingou"} <= set(w["hand_type"]) <= set(LABELS)


RANKS = {"any": range(9), "terminal": (0, 6, 8), "258": (1, 4, 7)}  # kinds a drawn group starts at (rare shapes)


@st.composite
def winning_hands(draw) -> tuple[Win, str]:
    """A complete hand with at most two suits: melds set down, then groups and a pair (or seven pairs) drawn
    from one or two suits and, for some hands, from terminal or 2/5/8 ranks only; the winning tile, the win
    kind and a context that can happen (docs/rules.md, contexts). Returns the win and its tile notation."""
    suits = draw(st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True))
    style = draw(st.sampled_from([*RANKS, "mixed"]))  # mixed: each meld, group and pair leans its own way
    pools = {name: st.sampled_from([s * 9 + r for s in suits for r in ranks]) for name, ranks in RANKS.items()}

    class _Kinds:
        @staticmethod
        def filter(ok):
            return pools[draw(st.sampled_from(list(RANKS))) if style == "mixed" else style].filter(ok)

    kind_of = _Kinds
    counts, melds = [0] * 27, []
    if draw(st.integers(0, 5)) == 0:  # seven pairs
        for _ in range(7):
            k = draw(kind_of.filter(lambda k: counts[k] <= 2))
            counts[k] += 2
    else:
        for _ in range(draw(st.integers(0, 4))):
            name = draw(st.sampled_from(["pung", "kong", "ckong"]))
            k = draw(kind_of.filter(lambda k: counts[k] == 0 and all(m != k for _, m in melds)))
            melds.append((name, k))
        used = {k: 3 if n == "pung" else 4 for n, k in melds}
        for _ in range(4 - len(melds)):
            if draw(st.booleans()):
                k = draw(kind_of.filter(lambda k: counts[k] + used.get(k, 0) <= 1))
                counts[k] += 3
            else:
                k = draw(kind_of.filter(lambda k: k % 9 <= 6 and all(counts[j] + used.get(j, 0) < 4
                                                                      for j in (k, k + 1, k + 2))))
                for j in (k, k + 1, k + 2):
                    counts[j] += 1
        k = draw(kind_of.filter(lambda k: counts[k] + used.get(k, 0) <= 2))
        counts[k] += 2
    tile = draw(st.sampled_from([k for k in range(27) if counts[k]]))
    kind = draw(st.sampled_from(["discard", "self_draw", "rob_kong"]))
    if kind == "rob_kong" and (counts[tile] != 1 or any(m == tile for _, m in melds)):
        kind = "discard"
    context = set()
    if kind == "self_draw":
        if any(n != "pung" for n, _ in melds) and draw(st.booleans()):
            context.add("after_kong")
        if not melds and draw(st.integers(0, 3)) == 0:
            context |= {"first_draw"} | ({"dealer"} if draw(st.booleans()) else set())
    if kind == "discard" and draw(st.booleans()):
        context.add("after_own_kong_discard")
    if kind != "rob_kong" and "first_draw" not in context and draw(st.booleans()):
        context.add("last_tile")
    if "first_draw" not in context:
        context |= set(draw(st.sampled_from([(), (), ("sing",), ("dance",)])))
    win = Win(tuple(counts), tuple(melds), tile, kind, frozenset(context))
    hand = "".join("".join(str(k % 9 + 1) * counts[k] for k in range(9 * s, 9 * s + 9)) + "mps"[s]
                   for s in range(3) if any(counts[9 * s:9 * s + 9]))
    return win, hand


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(variant=variants(), drawn=winning_hands())
def test_random_hands_score_as_the_reference_says(variant, drawn):
    """Random complete hands (rare shapes and contexts included: 带幺九, 将对, 十八罗汉, 天胡 …) scored by the
    Python path of ``xuezhan score`` (the engine's compiled evaluator) and by the reference."""
    try:
        rules = load_rules("chengdu", variant)
    except RulesError:
        reject()
    win, hand = drawn
    melds = [f"{n}:{tile_str(k)}" for n, k in win.melds]
    got = score_hand(rules, hand, melds, tile_str(win.tile), win.kind, sorted(win.context))
    ref = score(rules, win)
    money = got.points if got.points is not None else got.points_each
    assert (got.fan, got.capped_fan, money, got.hand_type, got.gen, frozenset(got.patterns)) == \
        (ref.fan, ref.capped_fan, ref.points * rules.scoring.base, ref.hand_type, ref.gen, ref.flags)
