"""The 唱歌/跳舞 decision on built positions (issue 53 item 4): ``declare_by_value``, asked through the engine's own
dispatcher (``bots.bot_declares``) for a ready seat 0, against what simulator/bots/declare.py's docstring says it
weighs — computed here from the reference scorer (tests/reference_scorer.py, no engine code): per live wait ``k``
with ``u`` unseen copies, the self-draw and discard points without declaring (S0, D0), sung (S1, D1) and danced (S2,
D2); not declaring ``n·(S0 + D0)``, 唱歌 ``n·(S1 + D1)·(1 − FLEX_COST)``, 跳舞 ``(n·S2 + m·D2)·(1 − FLEX_COST)``
(``n`` opponents still in, ``m`` of them declared; ``FLEX_COST`` read from docs/rules.md); the largest wins,
the earlier on a tie.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from engine_helpers import decision
from reference_scorer import EndSeat, Win, parse_tiles, score, waits

from simulator.bots import BOT_VALUE, bot_declares
from simulator.kernel import state as S
from simulator.rules import load_rules

VOID = 2  # seat 0 has declared 索 void and holds none
RULES_MD = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")
# docs/rules.md, 唱歌/跳舞 "Bots": the declared income "less 20% for the flexibility it gives up"
FLEX_COST = int(re.search(r"less (\d+)% for the flexibility", " ".join(RULES_MD.split())).group(1)) / 100
KINDS = {0: "nothing", 1: "sing", 2: "dance"}


def counts(text: str) -> list[int]:
    c = [0] * 27
    for k in parse_tiles(text):
        c[k] += 1
    return c


def expected(rules, hand: str, seen: str, won: int, declared: int) -> tuple[str, dict]:
    """What the documented weighing chooses for seat 0 holding ``hand`` (13 tiles), ``seen`` tiles face up, ``won``
    opponents out and ``declared`` of the others declared."""
    conc, visible = counts(hand), counts(seen)
    n, m = 3 - won, declared
    rule = rules.declare_ready
    income = dict.fromkeys(("S0", "D0", "S1", "D1", "S2", "D2"), 0.0)
    for k in waits(EndSeat(tuple(conc), (), VOID)):
        u = 4 - conc[k] - visible[k]
        if u <= 0:
            continue
        won = list(conc)
        won[k] += 1
        for i, ctx in enumerate(((), ("sing",), ("dance",))):
            for key, kind in (("S", "self_draw"), ("D", "discard")):
                income[f"{key}{i}"] += u * score(rules, Win(tuple(won), (), k, kind, frozenset(ctx))).points
    value = {"nothing": n * (income["S0"] + income["D0"])}
    if rule in ("sing", "both"):
        value["sing"] = n * (income["S1"] + income["D1"]) * (1 - FLEX_COST)
    if rule in ("dance", "both"):
        value["dance"] = (n * income["S2"] + m * income["D2"]) * (1 - FLEX_COST)
    best = max(value, key=lambda c: (value[c], c == "nothing"))  # strictly larger to declare
    return best, value


def asked(rules, hand: str, seen: str, won: int, declared: int) -> str:
    """What the value bot declares for seat 0 through the engine's dispatcher; ``won``/``declared``: how many of
    seats 1, 2, 3 (in that order) have won, and then how many of the rest have declared."""
    conc = np.array(counts(hand), np.uint8)
    g, ps = np.zeros(S.G_N, np.int64), np.zeros((4, S.PS_N), np.int64)
    ps[:, S.PS_VOID] = VOID
    for q in range(1, 1 + won):
        ps[q, S.PS_WON] = ps[q, S.PS_NWINS] = 1
    for q in range(1 + won, 1 + won + declared):
        ps[q, S.PS_DECLARED] = 1
    mask = sum(1 << k for k in waits(EndSeat(tuple(counts(hand)), (), VOID)))
    row = rules.bot_arrays()[1][0]
    game, st = decision(BOT_VALUE, rules.to_arrays(), conc=conc, g=g, ps=ps, mk=np.zeros((4, 4), np.int8),
                        mt=np.zeros((4, 4), np.int8), nm=np.zeros(4, np.int64), visible=np.array(counts(seen), np.int8),
                        tiles_left=40)
    return KINDS[int(bot_declares(game, st, row, 0, VOID, mask))]

RULES = {name: load_rules("chengdu", {"declare_ready": rule, "seats": ["value"] * 4})
         for name, rule in (("sing", "sing"), ("dance", "dance"), ("both", "both"))}
# (rule set, seat 0's hand, tiles seen, opponents won, opponents declared) -> what the weighing must choose
POSITIONS = {
    "cheap_sings": (("sing", "123456789p1122m", "", 0, 0), "sing"),  # 1 point: 唱歌 doubles it
    "big_sings": (("sing", "1112345678999m", "", 0, 0), "sing"),  # nine gates 清一色: below the cap
    # many waits near the cap: the sung income is 24% larger, less than the 25% FLEX_COST asks
    "flexibility_keeps": (("sing", "1122334455667m", "", 0, 0), "nothing"),
    "dead_waits_keep": (("sing", "123456789p1122m", "1m1m2m2m", 0, 0), "nothing"),  # every wait seen: no live wait
    "half_seen_sings": (("sing", "123456789p1122m", "1m1m", 0, 0), "sing"),
    "dance_alone": (("dance", "123456789p1122m", "", 0, 0), "dance"),
    # under both, with nobody declared a dance is worth exactly a song (its second fan doubles the self-draws, but
    # nobody undeclared may feed it): on the tie the bot sings (a declaration must be strictly better)
    "both_nobody_declared_sings": (("both", "123456789p1122m", "", 0, 0), "sing"),
    # 清一色 对对胡 (3 fan, cap 4): the cap eats 跳舞's second fan, so even with two opponents declared it sings
    "both_capped_sings": (("both", "1112224447799m", "", 0, 2), "sing"),
    "both_one_declared_dances": (("both", "123456789p1122m", "", 0, 1), "dance"),
    "both_one_won_one_declared_dances": (("both", "123456789p1122m", "", 1, 1), "dance"),
}


@pytest.mark.parametrize("name", POSITIONS)
def test_declare_by_value_chooses_what_its_documented_weighing_chooses(name, no_numba_cache_writes):
    (rule, *position), want = POSITIONS[name]
    choice, value = expected(RULES[rule], *position)
    assert choice == want, value  # the position is what its name says
    assert asked(RULES[rule], *position) == want, value
