"""Engine corrections of issue 26, items 1–3: a locked hand's kongs after a claim, the session dealer after a
feeder-paid 杠上花, and the spec decisions (查大叫 of a declared hand, ``declare_ready: both``, 一炮多响 anywhere
in the hand for ``feeder_on_multi_ron``). Each test fails on the code before the correction."""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import logs, play, rules_of

from simulator.agents import DANCE, DECLARE, PASS, Bot
from simulator.hands.sessions import first_win, multi_ron_feeder, next_dealers, run_sessions
from simulator.kernel import state as S
from simulator.kernel.evaluate import CTX_DANCE, CTX_SING, max_ready_points
from simulator.kernel.shape import MELD_CKONG, MELD_KONG, MELD_PUNG, HandTiles
from simulator.kernel.tables import suit_table
from simulator.kernel.tiles import parse_tile
from simulator.replay import EventLogError, ReplayedHand, audit, record_hand
from simulator.rules import load_rules

EXPERTS = ["expert"] * 4
VALUES = ["value"] * 4
MIX = ["greedy", "value", "defensive", "expert"]


# ---- item 1: a locked hand's kong keeps its waits, also right after an exposed kong ------------------------------

def _hand_802():
    return record_hand(load_rules("xueliu", {"seats": EXPERTS}), 802, 12)


def test_hand_802_no_concealed_kong_breaks_the_wait_after_an_exposed_kong():
    """xueliu seed 12 hand 802 (expert×4): seat 1 won, kept 23444678m34999s (waiting 2s/5s), konged 9s from a
    discard and drew 4m. A 暗杠 of 4m would leave 23678m34s with no wait: it must be refused."""
    log = _hand_802()
    audit(log)  # the audit checks that every kong of a locked hand keeps its waits
    m4, s9 = parse_tile("4m"), parse_tile("9s")
    kongs = [(seat, tile, a) for typ, seat, tile, _amount, a, _b in log.events if typ == S.EV_KONG]
    assert (1, s9, 1) in kongs
    assert (1, m4, 3) not in kongs
    assert log.players[1]["ready"] or any(w["winner"] == 1 for w in log.wins)


def test_the_audit_catches_a_kong_that_changes_a_locked_hands_waits():
    """The audit itself: replay hand 802 up to seat 1's draw of 4m after its exposed kong, then a forged 暗杠 of
    4m (what the old engine did) fails with the waits named."""
    log = _hand_802()
    st = ReplayedHand(log, strict_void=True)
    m4, s9 = parse_tile("4m"), parse_tile("9s")
    konged = False
    for ev in log.events:
        st.apply(ev)
        typ, seat, tile = ev[:3]
        konged = konged or (typ == S.EV_KONG and seat == 1 and tile == s9)
        if konged and typ == S.EV_DRAW and seat == 1 and tile == m4:
            break
    else:
        pytest.fail("seat 1 never drew 4m after its kong of 9s")
    with pytest.raises(EventLogError, match="changed the waits"):
        st.apply((S.EV_KONG, 1, m4, 0, 3, -1))


LOCKED = [
    ("xueliu", {"seats": MIX}, 600, 3),
    ("xueliu", {"seats": EXPERTS}, 300, 12),
    ("xueliu", {"seats": VALUES, "declare_ready": "dance"}, 300, 4),
    ("chengdu", {"seats": VALUES, "declare_ready": "sing"}, 600, 5),
    ("chengdu", {"seats": VALUES, "declare_ready": "dance"}, 600, 6),
    ("chengdu", {"seats": VALUES, "declare_ready": "both"}, 600, 7),
]


def test_every_kong_of_a_locked_hand_keeps_its_waits(monkeypatch):
    """Property over 3,000 simulated hands of 血流 and 唱歌/跳舞: replaying each hand's events, every kong made by a
    locked hand (a 血流 winner, a declared hand) leaves the wait mask of its 13 tiles unchanged
    (``ReplayedHand._check_waits_kept``, run by ``audit``); the check ran on many kongs of each kind."""
    checked = {1: 0, 2: 0, 3: 0}
    original = ReplayedHand._check_waits_kept

    def counting(self, seat, tile, kind, why):
        original(self, seat, tile, kind, why)
        checked[kind] += 1

    monkeypatch.setattr(ReplayedHand, "_check_waits_kept", counting)
    for base, over, n, seed in LOCKED:
        rules = load_rules(base, over)
        _, cols = play(rules, n, seed, record=True)
        for log in logs(rules, cols, seed):
            audit(log)
    assert checked[1] > 0 and checked[3] > 0 and sum(checked.values()) > 100, checked


# ---- item 2: the session dealer after a feeder-paid 杠上花 -------------------------------------------------------

def _session_hands(base: str, seed: int, first: int, over: list[str]):
    rules = load_rules(base, ["session.hands=8", "session.dealer=feeder_keeps_on_draw",
                              "kong_bloom_payer=feeder", *over])
    raw = run_sessions(rules, np.arange(first, first + 8, dtype=np.int64), seed)
    return raw


@pytest.mark.parametrize(("base", "seed", "hand"), [("chengdu", 34, 157), ("xueliu", 38, 592)])
def test_a_feeder_paid_kong_bloom_gives_the_deal_to_its_winner(base, seed, hand):
    """chengdu seed 34 hand 157 and xueliu seed 38 hand 592 (session.hands=8): the first win is a self-draw 杠上花
    paid in full by the kong's feeder; "a self-draw: its winner" deals the next hand, not the payer."""
    first = hand - hand % 8
    raw = _session_hands(base, seed, first, [])
    row = hand - first
    w = raw.w[raw.w_hand == row]
    win = w[w[:, S.W_ORDER] == 1][0]
    assert win[S.W_KIND] == S.WK_SELF_DRAW and win[S.W_PAYER] >= 0 and win[S.W_PAYER] != win[S.W_WINNER]
    assert raw.h[row + 1, S.H_DEALER] == win[S.W_WINNER]


def test_first_win_reads_the_feeder_from_the_kind():
    # hand 0: seat 3's self-draw paid by seat 0 (杠上花, kong_bloom_payer: feeder); hand 1: seat 2 wins on seat 1
    w = np.zeros((2, S.W_N), np.int64)
    w[:, S.W_ORDER] = 1
    w[0, [S.W_WINNER, S.W_PAYER, S.W_KIND]] = 3, 0, S.WK_SELF_DRAW
    w[1, [S.W_WINNER, S.W_PAYER, S.W_KIND]] = 2, 1, S.WK_DISCARD
    winner, feeder, count = first_win(w, np.array([0, 1]), 2)
    assert winner.tolist() == [3, 2] and feeder.tolist() == [-1, 1] and count.tolist() == [1, 1]
    nxt = next_dealers("feeder_keeps_on_draw", np.array([1, 1]), winner, feeder, count, None)
    assert nxt.tolist() == [3, 1]


# ---- item 3: feeder_on_multi_ron counts any 一炮多响 of the hand ------------------------------------------------

def _wins(rows):
    """Win records ``(hand row, order, winner, payer, kind)`` → ``(w, w_hand)``."""
    w = np.zeros((len(rows), S.W_N), np.int64)
    for i, (_, order, winner, payer, kind) in enumerate(rows):
        w[i, [S.W_ORDER, S.W_WINNER, S.W_PAYER, S.W_KIND]] = order, winner, payer, kind
    return w, np.array([r[0] for r in rows], np.int64)


def test_feeder_on_multi_ron_follows_any_multi_ron_of_the_hand():
    """Seed 000: 如上一局有玩家一炮双响，则放炮玩家为本局庄家 — the whole hand, not only its first win."""
    d, sd = S.WK_DISCARD, S.WK_SELF_DRAW
    w, w_hand = _wins([
        (0, 1, 1, 0, d), (0, 2, 2, 3, d), (0, 2, 0, 3, d),     # hand 0: a single win, then seat 3 feeds two
        (1, 1, 2, -1, sd), (1, 2, 3, 1, d), (1, 2, 0, 1, d),   # hand 1: a self-draw, then seat 1 feeds two
        (1, 3, 2, 0, d), (1, 3, 3, 0, d),                      #         and seat 0 two more: the first decides
        (2, 1, 3, 2, d), (2, 1, 0, 2, d),                      # hand 2: 一炮双响 on the first win (as before)
        (3, 1, 0, 1, d), (3, 2, 3, 2, d),                      # hand 3: no 一炮多响
    ])
    multi = multi_ron_feeder(w, w_hand, 5)
    assert multi.tolist() == [3, 1, 2, -1, -1]
    winner, feeder, count = first_win(w, w_hand, 5)
    nxt = next_dealers("feeder_on_multi_ron", np.array([2, 2, 2, 2, 1]), winner, feeder, count, None, multi)
    assert nxt.tolist() == [3, 1, 2, 0, 1]  # hand 4: nobody won, the dealer stays
    with pytest.raises(ValueError, match="multi"):
        next_dealers("feeder_on_multi_ron", np.array([2]), winner[:1], feeder[:1], count[:1], None)


def test_played_sessions_deal_to_a_later_multi_ron_feeder():
    """Played sessions: after a hand with a 一炮多响 that was not its first win, its discarder deals."""
    rules = load_rules("chengdu", ["session.hands=8", "session.dealer=feeder_on_multi_ron"])
    raw = run_sessions(rules, np.arange(8 * 40, dtype=np.int64), 3)
    n = len(raw.hand_ids)
    multi = multi_ron_feeder(raw.w, raw.w_hand, n)
    winner, _, count = first_win(raw.w, raw.w_hand, n)
    k, dealer = raw.hand_in_session, raw.h[:, S.H_DEALER]
    later = [i for i in range(n - 1) if k[i + 1] > 0 and multi[i] >= 0 and count[i] == 1]
    assert later, "no hand with a 一炮多响 after its first win in the sample"
    for i in range(n - 1):
        if k[i + 1] > 0:
            assert dealer[i + 1] == (multi[i] if multi[i] >= 0 else (winner[i] if count[i] else dealer[i]))


# ---- item 3: 查大叫 of a declared hand includes the declaration's fan ------------------------------------------

@pytest.mark.parametrize("mode", ["sing", "dance", "both"])
def test_chadajiao_pays_a_declared_hand_its_declaration_fan(mode):
    """Seed 001 (and 000), 查大叫: 没听牌的玩家（花猪不用）赔给听牌的玩家最大的可能番 — a declared hand's most
    possible fan includes its 唱歌/跳舞. Every logged 查大叫 amount equals max_ready_points of the final hand with
    the declaration's context, and for some declared hands that is more than without it."""
    rules = rules_of(declare_ready=mode, seats=VALUES)
    _, cols = play(rules, 400, seed=9, record=True)
    table, params = suit_table(), rules.to_arrays()
    raised = checked = 0
    for log in logs(rules, cols, seed=9):
        st = audit(log)
        kinds = {seat: a for typ, seat, _t, _amt, a, _b in log.events if typ == S.EV_DECLARE}
        for typ, seat, _tile, amount, _a, _b in log.events:
            if typ != S.EV_READY:
                continue
            mk, mt = np.zeros(4, np.int8), np.zeros(4, np.int8)
            codes = {"pung": MELD_PUNG, "kong": MELD_KONG, "ckong": MELD_CKONG}
            for i, (kind, t) in enumerate(st.melds[seat]):
                mk[i], mt[i] = codes[kind], t
            conc = st.conc[seat].astype(np.uint8)
            void = st.void[seat]
            ctx = {0: 0, 1: CTX_SING, 2: CTX_DANCE}[kinds.get(seat, 0)]
            hand = HandTiles(conc, mk, mt, len(st.melds[seat]), int(void))
            want = max_ready_points(table, hand, np.int64(ctx), params)
            plain = max_ready_points(table, hand, np.int64(0), params)
            assert amount == want, (log.hand_id, seat)
            checked += 1
            raised += want > plain
    assert checked > 0 and raised > 0, (checked, raised)


# ---- item 3: declare_ready: both ------------------------------------------------------------------------------

def test_both_lets_each_player_sing_or_dance():
    rules = rules_of(declare_ready="both", seats=VALUES)
    assert rules.scoring.extras["sing"] == 1 and rules.scoring.extras["dance"] == 2
    _, cols = play(rules, 600, seed=7, record=True)
    ev = cols["events"]
    kinds = ev["a"][ev["type"] == S.EV_DECLARE]
    assert (kinds == 1).sum() > 0 and (kinds == 2).sum() > 0, np.bincount(kinds)
    w = cols["wins"]
    assert w["sing"].any() and w["dance"].any() and not (w["sing"] & w["dance"]).any()


def test_both_keeps_sing_and_dance_alone_as_they_were():
    """Under sing (dance) alone nobody dances (sings): the single-kind rule sets are unchanged."""
    for mode, kind in (("sing", 1), ("dance", 2)):
        _, cols = play(rules_of(declare_ready=mode, seats=VALUES), 200, seed=7, record=True)
        ev = cols["events"]
        assert set(ev["a"][ev["type"] == S.EV_DECLARE].tolist()) == {kind}


class Chooser(Bot):
    """Sings, then dances, alternately at every chance; records the legal actions and its answers."""

    seen: list = []

    def declare(self, obs):
        a = DANCE if len(Chooser.seen) % 2 and DANCE in obs.legal_actions else DECLARE
        Chooser.seen.append((obs.legal_actions, a))
        return a


def test_a_python_seat_chooses_sing_or_dance_under_both(monkeypatch):
    """A Python seat is offered DECLARE (唱歌), DANCE (跳舞) and PASS under both, and gets what it answers."""
    import simulator.agents as agents

    monkeypatch.setattr(agents, "Chooser", Chooser, raising=False)
    Chooser.seen = []
    rules = rules_of(declare_ready="both", seats=["simulator.agents:Chooser", "value", "value", "value"])
    _, cols = play(rules, 30, seed=2, record=True)
    assert len(Chooser.seen) >= 2
    assert all(legal == (PASS, DECLARE, DANCE) for legal, _ in Chooser.seen)
    ev = cols["events"]
    mine = ev["a"][(ev["type"] == S.EV_DECLARE) & (ev["seat"] == 0)].tolist()
    assert mine == [1 if a == DECLARE else 2 for _, a in Chooser.seen]
    sing = rules_of(declare_ready="sing", seats=["simulator.agents:Chooser", "value", "value", "value"])
    Chooser.seen = []
    play(sing, 10, seed=2)
    assert Chooser.seen and all(legal == (PASS, DECLARE) for legal, _ in Chooser.seen)
