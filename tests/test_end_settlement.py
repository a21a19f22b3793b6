"""End-of-hand money on built positions, derived independently (issue 53 item 3).

Each position sets every seat's 13 tiles (and melds) and the wall order, then plays the hand through the step API
with every seat played from here: a seat discards the tile it drew, passes every claim and win, and makes only the
declarations, kongs and wins the position scripts. So the hands at the exhaustive draw are the built ones, and
the engine's 退税, 查花猪 and 查大叫 amounts (``st.score``) are compared, seat by seat, with
``reference_scorer.end_settlement`` — readiness, waits and each ready hand's best discard win re-derived from
docs/spec.md by the reference scorer, which shares no code with the engine (it never calls ``max_ready_points``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from engine_helpers import rules_of
from reference_scorer import EndSeat, chadajiao_points, end_settlement, is_huazhu, parse_tiles, waits

from simulator.hands.compiled_rules import CompiledTable
from simulator.hands.game import Hand
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_PUNG

SUIT = {"m": 0, "p": 1, "s": 2, None: None}
COMPONENTS = {"refund": S.C_REFUND, "huazhu": S.C_HUAZHU, "chadajiao": S.C_CHADAJIAO}


@dataclass
class Position:
    """A built hand: ``hands`` each seat's 13 tiles (``123m55p`` notation), ``extra`` the dealer's 14th (its
    first discard), ``voids`` the suit each seat declares (``None`` under ``void_suit: none``), ``pungs`` melds set
    down before the deal ends (seat → kinds), ``draws`` the first tiles of the wall in draw order; ``declare``,
    ``kong`` and ``win`` the seats that declare at their first chance, make the first kong offered, accept the
    first self-draw offered."""
    over: dict
    hands: list[str]
    extra: str
    voids: list[str | None]
    dealer: int = 0
    pungs: dict[int, str] = field(default_factory=dict)
    draws: str = ""
    declare: tuple[int, ...] = ()
    kong: tuple[int, ...] = ()
    win: tuple[int, ...] = ()


def _counts(text: str) -> np.ndarray:
    c = np.zeros(27, np.int64)
    for k in parse_tiles(text):
        c[k] += 1
    return c


def play_built(pos: Position):
    """Play ``pos`` to its end; returns ``(rules, final HandState, the reference's seats)``."""
    rules = rules_of(**pos.over)
    hand = Hand(CompiledTable.of(rules), external=range(4), record=False)
    hand.deal(1, 1, pos.dealer)
    st = hand.st
    kept = [_counts(h) for h in pos.hands]
    pungs = {s: parse_tiles(t) for s, t in pos.pungs.items()}
    used = sum(kept) + _counts(pos.extra) + _counts(pos.draws)
    for ks in pungs.values():
        for k in ks:
            used[k] += 3
    assert all(sum(c) == 13 - 3 * len(pungs.get(s, ())) for s, c in enumerate(kept)), "13 tiles a seat"
    assert used.max() <= 4, "more than four of a kind"
    rest = np.repeat(np.arange(27), 4 - used)
    np.random.default_rng(0).shuffle(rest)
    held = [kept[s] + sum((3 * _counts(t) for t in pos.pungs.get(s, "").split()), np.zeros(27, np.int64))
            for s in range(4)]  # what each seat was dealt, a pung's tiles included
    dealt = [k for i in range(4) for k in np.repeat(np.arange(27), held[(pos.dealer + i) % 4])]
    st.wall[:] = [*dealt, *parse_tiles(pos.extra), *parse_tiles(pos.draws), *rest][:S.N_TILES]
    for s in range(4):
        st.conc[s] = kept[s] + (_counts(pos.extra) if s == pos.dealer else 0)
        st.dealt[s] = st.conc[s]
        for i, k in enumerate(pungs.get(s, ())):
            st.mk[s, i], st.mt[s, i] = MELD_PUNG, k
        st.nm[s] = len(pungs.get(s, ()))
    won, kongs, ckongs = set(), {s: [] for s in range(4)}, {s: [] for s in range(4)}
    while (d := hand.advance()) is not None:
        s = d.seat
        if d.kind == "void":
            action = S.A_VOID0 + SUIT[pos.voids[s]]
        elif d.kind == "discard":
            drawn = np.flatnonzero(st.conc[s] > kept[s])
            assert len(drawn) == 1, (s, st.conc[s], kept[s])
            action = S.A_TILE0 + int(drawn[0])
        elif d.kind == "declare":
            action = S.A_DECLARE if s in pos.declare else S.A_PASS
        elif d.kind == "self_kong" and s in pos.kong and not kongs[s]:
            k = next(a for a in d.legal_actions if a < 27)
            kept[s] = st.conc[s].astype(np.int64)  # the kong's four tiles leave the hand, the tile drawn stays
            kept[s][k] = 0
            ckongs[s].append(k)
            payers = [q for q in range(4) if q != s and (q not in won or rules.mode == "xueliu")]  # 血流: all pay
            kongs[s].append(dict.fromkeys(payers, rules.kongs.concealed_kong.each))
            action = S.A_TILE0 + k
        elif d.kind == "take_win" and s in pos.win and s not in won and d.from_seat < 0:
            won.add(s)
            action = S.A_WIN
        else:
            action = S.A_PASS
        hand.apply(action)
    melds = [tuple(("pung", k) for k in pungs.get(s, ())) + tuple(("ckong", k) for k in ckongs[s]) for s in range(4)]
    seats = [EndSeat(tuple(int(x) for x in kept[s]), melds[s], SUIT[pos.voids[s]], s in won,
                     "sing" if s in pos.declare else None, tuple(kongs[s])) for s in range(4)]
    for s in range(4):
        assert st.conc[s].tolist() == list(seats[s].counts), f"seat {s} does not hold its built hand"
    return rules, st, seats


# Waits and amounts are re-derived by the reference in the test; the comments say what each position is for.
POSITIONS = {
    # 唱歌: a nine-gates 清一色 that sings collects its best wait (1m: 清一色 + 根) with the singing fan, 16 (cap 4)
    # rather than 8; a plain ready hand collects 1; two not-ready hands pay both
    "sing": Position({"declare_ready": "sing"},
                     ["1112345678999m", "123456789p5566s", "2468m2468p13579p", "1359m147s258s369s"], "7s",
                     ["s", "m", "s", "p"], declare=(0,)),
    # void_suit none: a 花猪 pays 16 to each other player and no 查大叫; a not-ready kong maker returns its 暗杠's
    # income (退税) and pays 查大叫 to a 对对胡 hand with a pung set down and to a plain ready hand
    "huazhu_refund": Position({"void_suit": "none"},
                              ["1469m1469p25s58s8s", "555p888p22m55m", "777s1359s124689m", "123456789p1133m"],
                              "3s", [None] * 4, dealer=1, pungs={1: "2p"}, draws="7s", kong=(2,)),
    # 血流: seat 1 wins on its first draw and plays on; at the end it neither pays nor collects, though its hand is
    # ready and others are not; seat 0 makes a 暗杠 and stays ready, so keeps its income (no 退税)
    "xueliu": Position({"mode": "xueliu"},
                       ["1112345678999m", "123456789p5566s", "2468m2468p13579p", "2359m147s258s369s"], "7s",
                       ["s", "m", "s", "p"], draws="6s3p3p1m", win=(1,), kong=(0,)),
}


@pytest.mark.parametrize("name", POSITIONS)
def test_end_settlement_of_a_built_position_matches_the_reference(name):
    rules, st, seats = play_built(POSITIONS[name])
    want = end_settlement(rules, seats)
    got = {c: st.score[:, i].tolist() for c, i in COMPONENTS.items()}
    assert got == want
    assert st.g[S.G_EXHAUSTIVE] and sum(map(sum, want.values())) == 0


def test_the_positions_are_what_they_claim():
    """What each position was built to show holds by the reference (so none of them passes trivially)."""
    r_sing, _, sing = play_built(POSITIONS["sing"])
    assert [bool(waits(s)) for s in sing] == [True, True, False, False]
    plain = EndSeat(sing[0].counts, void=sing[0].void)
    assert (chadajiao_points(r_sing, sing[0]), chadajiao_points(r_sing, plain), chadajiao_points(r_sing, sing[1])) \
        == (16, 8, 1)
    r_hz, _, hz = play_built(POSITIONS["huazhu_refund"])
    assert [is_huazhu(s) for s in hz] == [True, False, False, False] and hz[2].kongs and not waits(hz[2])
    assert hz[1].melds == (("pung", 10),) and waits(hz[1]) and chadajiao_points(r_hz, hz[1]) > 1
    _, _, xl = play_built(POSITIONS["xueliu"])
    assert [s.won for s in xl] == [False, True, False, False] and waits(xl[1]) and waits(xl[0]) and xl[0].kongs
