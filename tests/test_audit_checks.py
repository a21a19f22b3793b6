"""Each failure check of the replay audit (simulator.replay) fires on a log corrupted for it: real recorded hands,
one event, row or dealt hand changed, and the audit names what is wrong. (The locked-hand checks are shown to
fire in tests/test_declare.py and tests/test_xueliu.py.)"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from engine_helpers import logs, play, rules_of

from simulator.kernel import state as S
from simulator.kernel.tiles import counts_from_str, format_counts
from simulator.replay import EventLogError, ReplayedHand, audit

SEED = 7


@pytest.fixture(scope="module")
def hands():
    """Recorded hands of chengdu (strict 定缺) and of 血流."""
    out = {}
    for name, rules in (("chengdu", rules_of()), ("xueliu", rules_of(mode="xueliu"))):
        _, cols = play(rules, 120, SEED, record=True)
        out[name] = logs(rules, cols, SEED)
    return out


def _fresh(log):
    return copy.deepcopy(log)


def _states(log):
    """(index, event, state before it) along a log."""
    st = ReplayedHand(log, strict_void=log.rules.void_suit == "declared")
    for i, ev in enumerate(log.events):
        yield i, ev, st
        st.apply(ev)


def _first(hand_logs, find):
    """The first (log copy, found) with ``find(log)`` not None."""
    for log in hand_logs:
        found = find(log)
        if found is not None:
            return _fresh(log), found
    raise AssertionError("no hand has the situation")


def _fails(log, message: str) -> None:
    with pytest.raises(EventLogError, match=message):
        audit(log)


def test_the_logs_pass_before_corruption(hands):
    for hand_logs in hands.values():
        for log in hand_logs:
            audit(log)


def test_discarding_a_tile_not_held(hands):
    log, i = _first(hands["chengdu"], lambda lg: next((j for j, e in enumerate(lg.events)
                                                       if e[0] == S.EV_DISCARD), None))
    seat = log.events[i][1]
    st = next(st for j, _, st in _states(log) if j == i)
    missing = next(k for k in range(27) if st.conc[seat][k] == 0)
    log.events[i] = (S.EV_DISCARD, seat, missing, *log.events[i][3:])
    _fails(log, rf"seat {seat} discards 1× tile {missing} but holds 0")


def test_drawing_after_winning(hands):
    def win_then_draw(lg):
        return next((j for j, e in enumerate(lg.events) if e[0] == S.EV_WIN), None)
    log, i = _first(hands["chengdu"], win_then_draw)
    seat = log.events[i][1]
    log.events.insert(i + 1, (S.EV_DRAW, seat, 0, 0, 0, 0))
    _fails(log, rf"seat {seat} draws after winning")


def test_discarding_outside_the_void_suit_while_holding_it(hands):
    def situation(lg):
        for j, ev, st in _states(lg):
            seat, v = ev[1], st.void[ev[1]] if ev[0] == S.EV_DISCARD else -1
            if ev[0] == S.EV_DISCARD and v >= 0 and ev[2] // 9 == v:
                other = next((k for k in range(27) if k // 9 != v and st.conc[seat][k] > 0), None)
                if other is not None:
                    return j, other
        return None
    log, (i, other) = _first(hands["chengdu"], situation)
    seat = log.events[i][1]
    log.events[i] = (S.EV_DISCARD, seat, other, *log.events[i][3:])
    _fails(log, rf"seat {seat} discards {other} while holding tiles of its void suit")


def test_claiming_from_the_wrong_seat(hands):
    log, i = _first(hands["chengdu"], lambda lg: next((j for j, e in enumerate(lg.events)
                                                       if e[0] == S.EV_PUNG), None))
    typ, seat, tile, amount, src, b = log.events[i]
    wrong = next(q for q in range(4) if q not in (seat, src))
    log.events[i] = (typ, seat, tile, amount, wrong, b)
    _fails(log, rf"seat {seat} claims {tile} from {wrong}, last discard was \({src}, {tile}\)")


def test_claiming_a_tile_of_the_void_suit(hands):
    log, i = _first(hands["chengdu"], lambda lg: next((j for j, e in enumerate(lg.events)
                                                       if e[0] == S.EV_PUNG), None))
    seat, tile = log.events[i][1], log.events[i][2]
    st = next(st for j, _, st in _states(log) if j == i)
    st.void[seat] = tile // 9  # as if it had declared that suit void
    with pytest.raises(EventLogError, match=rf"seat {seat} claims a tile of its void suit"):
        st.apply(log.events[i])


def test_paying_or_collecting_after_winning(hands):
    log, i = _first(hands["chengdu"], lambda lg: next((j for j, e in enumerate(lg.events) if e[0] == S.EV_WIN
                                                       and j + 1 < len(lg.events)), None))
    winner = log.events[i][1]
    other = next(q for q in range(4) if q != winner)
    pays = _fresh(log)
    pays.events.insert(i + 1, (S.EV_DRAW, other, 0, 0, 0, 0))  # a later turn: the win event is over
    pays.events.insert(i + 2, (S.EV_PAY, winner, -1, 1, other, S.C_KONG))
    with pytest.raises(EventLogError, match=rf"seat {winner} pays after winning"):
        st = next(st for j, _, st in _states(pays) if j == i + 2)
        st.apply(pays.events[i + 2])
    st = next(st for j, _, st in _states(pays) if j == i + 2)
    with pytest.raises(EventLogError, match=rf"seat {winner} collects component {S.C_KONG} after winning"):
        st.apply((S.EV_PAY, other, -1, 1, winner, S.C_KONG))


def test_xueliu_end_settlement_leaves_out_winners(hands):
    def ended_with_a_winner(lg):
        end = next((j for j, e in enumerate(lg.events) if e[0] == S.EV_END), None)
        won = {e[1] for e in lg.events if e[0] == S.EV_WIN}
        return (end, min(won)) if end is not None and won and len(won) < 4 else None
    log, (end, winner) = _first(hands["xueliu"], ended_with_a_winner)
    st = next(st for j, _, st in _states(log) if j == end)
    st.apply(log.events[end])
    payee = next(q for q in range(4) if q != winner and not st.has_won[q])
    with pytest.raises(EventLogError, match=rf"seat {winner} → seat {payee} component {S.C_CHADAJIAO} at the end"):
        st.apply((S.EV_PAY, winner, -1, 1, payee, S.C_CHADAJIAO))


def test_a_win_row_that_differs_from_the_replay(hands):
    log, w = _first(hands["chengdu"], lambda lg: 0 if lg.wins else None)
    hand = log.wins[w]["hand"]
    log.wins[w] = {**log.wins[w], "hand": hand[:-2] + ("1" if hand[-2] != "1" else "2") + hand[-1]}
    _fails(log, r"winning hand .* differs from the replayed hand")
    log, w = _first(hands["chengdu"], lambda lg: 0 if lg.wins else None)
    log.wins[w] = {**log.wins[w], "melds": log.wins[w]["melds"] + ",pung:9s"}
    _fails(log, r"melds .* differ from the replayed")
    log, _ = _first(hands["chengdu"], lambda lg: 0 if lg.wins else None)
    log.wins.append(dict(log.wins[0]))
    _fails(log, rf"{len(log.wins) - 1} win events but {len(log.wins)} win rows")


def test_the_wall_count(hands):
    log = _fresh(hands["chengdu"][0])
    log.hand = {**log.hand, "tiles_left": log.hand["tiles_left"] + 1}
    _fails(log, r"53 dealt \+ \d+ drawn \+ \d+ left != 108")


def _final(log):
    st = ReplayedHand(log, strict_void=log.rules.void_suit == "declared")
    for ev in log.events:
        st.apply(ev)
    return st


def test_a_fifth_copy_of_a_kind(hands):
    """A drawn tile thrown at once (nobody claims it) becomes a kind of the seat's void suit already seen four
    times."""
    def situation(lg):
        st = _final(lg)
        full = [k for k in range(27) if st.seen[k] == 4]
        for j in range(len(lg.events) - 2):
            (t1, s1, k1, *_), (t2, s2, k2, *_), nxt = lg.events[j], lg.events[j + 1], lg.events[j + 2]
            if t1 == S.EV_DRAW and t2 == S.EV_DISCARD and (s1, k1) == (s2, k2) and nxt[0] == S.EV_DRAW:
                other = [k for k in full if k // 9 == st.void[s1] and k != k1]  # a void tile: always discardable
                if other:
                    return j, other[0]
        return None
    log, (j, kind) = _first(hands["chengdu"], situation)
    for i in (j, j + 1):
        log.events[i] = (log.events[i][0], log.events[i][1], kind, *log.events[i][3:])
    _fails(log, rf"kind {kind} seen 5 times")


def test_tiles_appear_or_vanish(hands):
    """One more tile dealt to a seat than the deal has (of a kind seen at most three times, outside its void)."""
    def situation(lg):
        st = _final(lg)
        seat = next(s for s in range(4) if not st.won[s]) if not all(st.won) else 0
        kind = next((k for k in range(27) if st.seen[k] < 4 and k // 9 != st.void[seat]), None)
        return None if kind is None else (seat, kind)

    log, (seat, kind) = next((lg, sk) for lg in map(_fresh, hands["chengdu"]) if (sk := situation(lg)) is not None)
    players = [dict(p) for p in log.players]
    dealt = counts_from_str(players[seat]["dealt"]).astype(np.int64)
    dealt[kind] += 1
    players[seat]["dealt"] = format_counts(dealt)
    log.players = players
    _fails(log, r"\d+ tiles in hands, melds, set aside and discards, but \d+ in play")


def test_a_hand_of_the_wrong_size(hands):
    """A tile moved between two seats' deals that neither touches again: tiles conserved, one hand short."""
    def situation(lg):
        st = _final(lg)
        for a in range(4):
            for b in range(4):
                if a == b or st.won[a] or st.won[b]:
                    continue
                dealt_a = counts_from_str(lg.players[a]["dealt"])
                for k in range(27):
                    if dealt_a[k] and st.conc[a][k] and k // 9 != st.void[b] and st.void[b] >= 0:
                        return a, b, k
        return None
    log, (a, b, k) = _first(hands["chengdu"], situation)
    players = [dict(p) for p in log.players]
    for seat, step in ((a, -1), (b, 1)):
        counts = counts_from_str(players[seat]["dealt"]).astype(np.int64)
        counts[k] += step
        players[seat]["dealt"] = format_counts(counts)
    log.players = players
    _fails(log, rf"seat {a} ends with 12 tiles")
