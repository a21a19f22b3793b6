"""``mode: xueliu`` (血流成河): winners set the winning tile aside and play on with a locked hand until the wall is
empty (docs/rules.md, "血流成河"). The invariants of tests/test_engine.py also run over configs/xueliu.yaml."""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import logs, per_hand, play, rules_of
from typer.testing import CliRunner

from simulator import agents, engine, hands
from simulator.cli import app
from simulator.errors import UserError
from simulator.hands import game
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_PUNG, wait_mask
from simulator.kernel.tables import suit_table
from simulator.kernel.tiles import SUITS, counts_from_str
from simulator.replay import EventLogError, audit
from simulator.rules import load_rules, log_bounds

SEED = 5
N = 300
MIX = ["greedy", "value", "defensive", "expert"]


@pytest.fixture(scope="module")
def xl():
    """``(rules, raw, columns with events)`` of 300 xueliu hands with every compiled bot at the table."""
    rules = load_rules("xueliu", {"seats": MIX})
    raw, cols = play(rules, N, SEED, record=True)
    return rules, raw, cols


def _seat_events(cols, row):
    ev = cols["events"]
    sel = ev["hand_row"] == row
    return list(zip(*(ev[f][sel].tolist() for f in ("type", "seat", "tile", "amount", "a", "b")), strict=True))


def test_winners_play_on_and_win_again(xl):
    _, _, cols = xl
    h, w = cols["hands"], cols["wins"]
    assert h["exhaustive_draw"].all() and (h["tiles_left"] == 0).all()  # only the wall ends a hand
    pairs = list(zip(w["hand_id"].tolist(), w["winner"].tolist(), strict=True))
    repeat = len(pairs) - len(set(pairs))
    assert repeat > N  # many seats win more than once
    assert h["n_wins"].mean() > 2 * h["n_winners"].mean()
    assert (h["n_winners"] == 4).any()  # all four can win in one hand


def test_a_winner_only_discards_the_tile_it_drew_and_never_pungs(xl):
    _, _, cols = xl
    checked = 0
    for row in range(N):
        won = [False] * 4
        last_draw = {}
        for typ, seat, tile, _amount, a, _b in _seat_events(cols, row):
            if typ == S.EV_DRAW:
                last_draw[seat] = tile
            elif typ == S.EV_WIN:
                won[seat] = True
            elif typ == S.EV_DISCARD and won[seat]:
                assert tile == last_draw[seat]
                checked += 1
            elif typ == S.EV_PUNG:
                assert not won[seat]
            elif typ == S.EV_KONG and won[seat] and a != 1:
                assert tile == last_draw[seat]
    assert checked > 5 * N


def test_money_is_zero_sum_and_self_draws_are_paid_by_all_three(xl):
    _, _, cols = xl
    p, w = cols["players"], cols["wins"]
    assert (per_hand(p["score_total"]).sum(axis=1) == 0).all()
    selfd = w["kind"] == "self_draw"
    assert selfd.any() and (w["n_payers"][selfd] == 3).all()
    # every win is paid when it happens: a winner's win money is the sum of its rows, minus what it paid
    received = np.zeros((N, 4), np.int64)
    np.add.at(received, (np.searchsorted(cols["hands"]["hand_id"], w["hand_id"]), w["winner"]), w["received"])
    assert (per_hand(p["score_win"]) <= received).all()
    assert (per_hand(p["score_win"]) < received).any()  # winners also pay for others' later wins


def test_end_settlement_leaves_out_players_who_have_won(xl):
    rules, _, cols = xl
    p = cols["players"]
    won = p["won"]
    assert (p["score_chadajiao"][won] == 0).all() and not p["ready"][won].any()
    assert (p["score_huazhu"][won] == 0).all()  # huazhu_pays: unwon
    assert (p["score_chadajiao"][~won] != 0).any()  # 查大叫 still settles among the others
    assert rules.settlement.huazhu_pays == "unwon"


def test_every_hand_passes_the_event_audit_with_set_aside_tiles_counted(xl):
    rules, _, cols = xl
    for log in logs(rules, cols, SEED):
        st = audit(log)
        assert st.aside == len({w["win_order"] for w in log.wins})  # one physical tile per win event
        assert all(st.tiles_in_hand(s) == 13 for s in range(4))


def test_the_audit_catches_a_locked_hand_that_changes(xl):
    rules, _, cols = xl
    log = next(lg for lg in logs(rules, cols, SEED) if len(lg.wins) >= 2)
    events = list(log.events)
    win = next(i for i, e in enumerate(events) if e[0] == S.EV_WIN)
    seat = events[win][1]
    void = SUITS.index(log.players[seat]["void_suit"])
    # a later discard of the winner (not of its void suit, which strict 定缺 forces): make it another held tile
    i = next(j for j in range(win, len(events))
             if events[j][0] == S.EV_DISCARD and events[j][1] == seat and events[j][2] // 9 != void)
    held = next(k for k in range(27) if k != events[i][2] and audit_hand_before(log, events, i, seat)[k] > 0)
    events[i] = (S.EV_DISCARD, seat, held, 0, 0, 0)
    log.events[:] = events
    with pytest.raises(EventLogError, match="locked hand"):
        audit(log)


def audit_hand_before(log, events, i, seat):
    """The seat's concealed tiles just before event ``i`` (replayed)."""
    from simulator.replay import ReplayedHand

    st = ReplayedHand(log, strict_void=False)
    for e in events[:i]:
        st.apply(e)
    return st.conc[seat]


def test_first_wins_are_those_of_xuezhan_on_the_same_walls():
    """Until the first win nothing differs, so the first win event of every hand is the same under both modes."""
    a = play(rules_of("chengdu"), 200, SEED)[1]["wins"]
    b = play(rules_of("xueliu"), 200, SEED)[1]["wins"]
    for cols in (a, b):
        cols["_first"] = cols["win_order"] == 1
    for c in ("hand_id", "winner", "tile", "kind", "fan", "points", "turn"):
        assert np.array_equal(a[c][a["_first"]], b[c][b["_first"]]), c


def test_locked_kongs_keep_the_waits(no_numba_cache_writes):
    """A locked winner may kong only the tile it drew, and a concealed kong only when its waits stay the same."""
    table = suit_table()
    st = engine.alloc(False, S.MAX_WINS)
    ps, conc, mk, mt, nm = st.ps, st.conc, st.mk, st.mt, st.nm
    ps[0, S.PS_EVOID] = 2
    # 111m 234m 567p 88p 45p: ready on 3p/6p; it draws the fourth 1m
    conc[0] = counts_from_str("111m234m567p88p45p")
    ps[0, S.PS_WAITS] = wait_mask(table, conc[0], mk[0], mt[0], 0, 2)
    assert ps[0, S.PS_WAITS] == (1 << 11) | (1 << 14)
    conc[0, 0] += 1  # draws 1m: the kong keeps 3p/6p
    opts = 1 << 0
    assert engine.locked_kongs(table, st, 0, 0, opts) == 1
    assert engine.locked_kongs(table, st, 0, -1, opts) == 0  # not the drawn tile
    # 111m 23m 567p 888p 99p waits on 1m/4m and (as 11m 123m … 99p) on 9p: a kong of 1m loses the 9p wait
    conc[0] = counts_from_str("111m23m567p888p99p")
    ps[0, S.PS_WAITS] = wait_mask(table, conc[0], mk[0], mt[0], 0, 2)
    assert (ps[0, S.PS_WAITS] >> 17) & 1
    conc[0, 0] += 1
    assert engine.locked_kongs(table, st, 0, 0, opts) == 0
    assert conc[0, 0] == 4 and nm[0] == 0  # the hand is restored
    # an added kong of the drawn tile never changes the concealed tiles
    conc[0] = counts_from_str("234m567p88p45p")
    mk[0, 0], mt[0, 0], nm[0] = MELD_PUNG, 0, 1
    conc[0, 0] = 1  # the drawn 1m
    assert engine.locked_kongs(table, st, 0, 0, opts) == 1


def test_win_buffers_regrow_without_changing_a_byte(monkeypatch):
    rules = load_rules("xueliu")
    ids = np.arange(40)
    ref = hands.run_batch(rules, ids, SEED)
    monkeypatch.setattr(engine.buffers, "XUELIU_ROWS_PER_HAND", 1)
    small = hands.run_batch(rules, ids, SEED)
    step = game.play_hands(rules, ids[:12], SEED, {0: agents.GreedyBot()})  # a Python seat: the step path
    for key in ("h", "p", "w", "w_hand", "wconc", "wmk", "wmt"):
        assert np.array_equal(getattr(ref, key), getattr(small, key)), key
        rows = 12 if key in ("h",) else 48 if key == "p" else int((ref.w_hand < 12).sum())
        assert np.array_equal(getattr(ref, key)[:rows], getattr(step, key)), key


def test_money_bound_counts_repeated_wins():
    _, money = log_bounds(load_rules("uncapped"))
    _, money_xl = log_bounds(load_rules("uncapped", {"mode": "xueliu"}))
    assert money_xl > 30 * money // 2
    # a table that fits the logs under 血战 can overflow them under 血流, and is then rejected with one line
    load_rules("uncapped", ["scoring.patterns.qingyise=5"])
    with pytest.raises(UserError, match="scoring: one hand could move"):
        load_rules("uncapped", ["scoring.patterns.qingyise=5", "mode=xueliu"])


def test_replay_shows_each_repeated_win():
    runner = CliRunner()
    res = runner.invoke(app, ["replay", "xueliu", "--seed", str(SEED), "--hand", "0", "--lang", "en"])
    assert res.exit_code == 0, res.output
    assert "win 1 of this seat" in res.output
    hand = next(h for h in range(20) if "win 2 of this seat" in runner.invoke(
        app, ["replay", "xueliu", "--seed", str(SEED), "--hand", str(h), "--lang", "en"]).output)
    zh = runner.invoke(app, ["replay", "xueliu", "--seed", str(SEED), "--hand", str(hand)]).output
    assert "第2胡" in zh and "胡牌放一边" in zh
