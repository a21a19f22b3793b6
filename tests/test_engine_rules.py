"""One test per rule key: the key changes what it should and nothing else.

Variants are played on the same hand ids and seed, so walls and bot streams are identical (common random
numbers); where the rule cannot change play (money only), whole columns are compared; where it can, the hands
it cannot have touched are compared.
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import (
    HUAZHU_SEATS,
    RULE_HANDS,
    differing,
    events_of,
    logs,
    per_hand,
    play,
    rule_logs,
    rules_of,
)

from simulator.kernel import state as S
from simulator.kernel.scoring import points_of
from simulator.replay import EventLogError, ReplayedHand, audit

N = RULE_HANDS
MONEY = {"score_win", "score_kong", "score_transfer", "score_huazhu", "score_chadajiao", "score_refund",
         "score_total"}
NO_CHANGE = {"hands": set(), "players": set(), "wins": set()}


def only(diff, hands=(), players=(), wins=(), *, must=()):
    """Columns that differ are within the allowed ones, and include every column of ``must``."""
    allowed = {"hands": set(hands), "players": set(players), "wins": set(wins)}
    for t in diff:
        assert diff[t] <= allowed[t], (t, diff[t] - allowed[t])
    changed = set().union(*diff.values())
    assert set(must) <= changed, set(must) - changed


# ---- scoring (through evaluate) ----------------------------------------------------------------------------

def test_cap_changes_only_capped_fan_points_and_money():
    a, b = rule_logs(), rule_logs(scoring={"cap": 3})
    only(differing(a, b), players=MONEY | {"capped_fan"}, wins={"capped_fan", "points", "received"},
         must={"capped_fan", "points", "score_win"})
    assert np.array_equal(b["wins"]["capped_fan"], np.minimum(a["wins"]["fan"], 3))


def test_extras_and_self_draw_bonus_change_fan_of_the_wins_they_name():
    a = rule_logs()
    b = rule_logs(scoring={"extras": {"haidilaoyue": 1, "haidipao": 1}})
    hd = a["wins"]["haidilaoyue"] | a["wins"]["haidipao"]
    assert hd.any()
    assert np.array_equal(b["wins"]["fan"], a["wins"]["fan"] + hd)
    c = rule_logs(scoring={"self_draw_bonus": "add_fan"})
    zimo = a["wins"]["kind"] == "self_draw"
    assert np.array_equal(c["wins"]["fan"], a["wins"]["fan"] + zimo)
    d = rule_logs(scoring={"self_draw_bonus": "none"})
    assert np.array_equal(d["wins"]["points"], a["wins"]["points"] - zimo)


def test_base_does_not_change_base_unit_logs():
    assert differing(rule_logs(), rule_logs(scoring={"base": 5})) == NO_CHANGE


# ---- kongs --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["discard_kong", "added_kong", "concealed_kong"])
def test_kong_payments_scale_and_touch_only_kong_money(key):
    zero = {"discard_kong": {"discarder": 0, "others": 0}, "added_kong": {"each": 0}, "concealed_kong": {"each": 0}}
    a = rule_logs(kongs=zero)
    for c in ("score_kong", "score_transfer", "score_refund"):
        assert (a["players"][c] == 0).all()
    field = "discarder" if key == "discard_kong" else "each"
    one = rule_logs(kongs={**zero, key: {field: 1}})
    two = rule_logs(kongs={**zero, key: {field: 2}})
    only(differing(a, one), players={"score_kong", "score_transfer", "score_refund", "score_total"},
         must={"score_kong"})
    for c in ("score_kong", "score_refund"):
        assert np.array_equal(two["players"][c], 2 * one["players"][c])
    # a transfer moves the kong's whole income (doubled); split among several winners it is rounded per winner
    moved = [per_hand(np.maximum(x["players"]["score_transfer"], 0)).sum(axis=1) for x in (one, two)]
    assert np.array_equal(moved[1], 2 * moved[0])


def test_discard_kong_others_pay_too():
    cols = rule_logs(600, record=True, kongs={"discard_kong": {"discarder": 2, "others": 1}})
    seen = 0
    for row in range(600):
        ev = events_of(cols, row)
        for i, e in enumerate(ev):
            if e[0] == S.EV_KONG and e[4] == 1:
                pays = {}
                for f in ev[i + 1:]:
                    if f[0] != S.EV_PAY or f[5] != S.C_KONG:
                        break
                    pays[f[1]] = f[3]
                assert pays[e[5]] == 2
                assert all(v == 1 for q, v in pays.items() if q != e[5])
                seen += len(pays) > 1
    assert seen > 0


def test_added_kong_fresh_only():
    for fresh_only in (False, True):
        cols = rule_logs(1500, record=True, kongs={"added_kong_fresh_only": fresh_only})
        stale = fresh = 0
        for row in range(1500):
            ev = events_of(cols, row)
            for i, e in enumerate(ev):
                if e[0] == S.EV_KONG and e[4] == 2:
                    draw = max(j for j in range(i) if ev[j][0] == S.EV_DRAW)  # robbers may decline between
                    just_drawn = ev[draw][1] == e[1] and ev[draw][2] == e[2]
                    paid = 0
                    for f in ev[i + 1:]:  # the kong's own payments follow it directly
                        if f[0] != S.EV_PAY or f[5] != S.C_KONG:
                            break
                        paid += f[3]
                    if just_drawn:
                        fresh += 1
                        assert paid > 0
                    else:
                        stale += 1
                        assert (paid == 0) == fresh_only
        assert fresh > 0 and stale > 0


@pytest.mark.parametrize("mode", ["keep", "refund", "transfer"])
def test_after_kong_deal_in(mode):
    cols = rule_logs(6000, kongs={"after_kong_deal_in": mode})
    p, w, h = cols["players"], cols["wins"], cols["hands"]
    gsp_hands = np.unique(w["hand_id"][w["gangshangpao"]])
    assert len(gsp_hands) > 0
    in_gsp = np.isin(p["hand_id"], gsp_hands)
    not_exh = ~np.repeat(h["exhaustive_draw"], 4)
    if mode == "transfer":
        assert (p["score_transfer"][~in_gsp] == 0).all() and (p["score_transfer"][in_gsp] != 0).any()
        assert (p["score_refund"][not_exh] == 0).all()
    elif mode == "refund":
        assert (p["score_transfer"] == 0).all()
        assert (p["score_refund"][not_exh & ~in_gsp] == 0).all() and (p["score_refund"][in_gsp] != 0).any()
    else:
        assert (p["score_transfer"] == 0).all() and (p["score_refund"][not_exh] == 0).all()
    # transfers go from the discarder of the 杠上炮 to its winners
    gsp = w["gangshangpao"]
    for hid, winner, payer in zip(w["hand_id"][gsp], w["winner"][gsp], w["payer"][gsp], strict=True):
        t = per_hand(p["score_transfer"])[hid]
        if mode == "transfer":
            assert t[winner] >= 0 and t[payer] <= 0


def _paid_at_wins(cols: dict, component: int) -> np.ndarray:
    """Per hand row: the money of ``component`` paid right after a win event (before play goes on)."""
    out = np.zeros(len(cols["hands"]["hand_id"]), np.int64)
    for row in range(len(out)):
        at_win = False
        for typ, _seat, _tile, amount, _a, b in events_of(cols, row):
            at_win = typ == S.EV_WIN or (at_win and typ == S.EV_PAY)
            if at_win and typ == S.EV_PAY and b == component:
                out[row] += amount
    return out


def test_gangshangpao_refund_returns_that_kong_only():
    """Seed 000: 开杠后打出的那一张放炮，这一个杠的刮风下雨收入需要退回 — the kong after which the discard came,
    not the earlier kongs of the same turn; 呼叫转移 moves that same kong's income (seed 001: 刚才所杠牌所得)."""
    refund = rule_logs(6000, record=True, kongs={"after_kong_deal_in": "refund"})
    transfer = rule_logs(6000, record=True, kongs={"after_kong_deal_in": "transfer"})
    back, moved = _paid_at_wins(refund, S.C_REFUND), _paid_at_wins(transfer, S.C_TRANSFER)
    assert moved.sum() > 0 and np.array_equal(back, moved)
    # some 杠上炮 followed a chain of two kongs by the discarder in one turn, so the test can tell the difference
    chains = 0
    for row in np.flatnonzero(moved):
        run_, who, pending = 0, -1, 0  # kongs in a row by seat ``who``; chain length before the last discard
        for typ, seat, _tile, _amount, _a, _b in events_of(transfer, row):
            if typ == S.EV_KONG:
                run_, who = (run_ + 1 if seat == who else 1), seat
            elif typ == S.EV_DISCARD:
                pending, run_, who = (run_ if seat == who else 0), 0, -1
            elif typ == S.EV_WIN:
                chains += pending >= 2
                pending = 0
            elif typ == S.EV_DRAW:
                pending = 0
                if seat != who:
                    run_, who = 0, -1
    assert chains > 0


def test_after_kong_deal_in_changes_only_kong_money():
    a, b = rule_logs(kongs={"after_kong_deal_in": "keep"}), rule_logs(kongs={"after_kong_deal_in": "transfer"})
    only(differing(a, b), players={"score_transfer", "score_refund", "score_total"}, must={"score_transfer"})


def test_kong_bloom_payer():
    a = rule_logs(6000)
    b = rule_logs(6000, kong_bloom_payer="feeder")
    assert differing(a, b)["hands"] == set()
    sd = b["wins"]["kind"] == "self_draw"
    fed = sd & (b["wins"]["payer"] >= 0)
    assert fed.any() and (b["wins"]["gangshanghua"][fed]).all()
    assert (a["wins"]["payer"][a["wins"]["kind"] == "self_draw"] == -1).all()
    # the feeder pays the whole self-draw: the same total the winner would have collected
    assert np.array_equal(a["wins"]["received"], b["wins"]["received"])
    wa, wb = per_hand(a["players"]["score_win"]), per_hand(b["players"]["score_win"])
    for hid, payer, winner, rec, pts in zip(b["wins"]["hand_id"][fed], b["wins"]["payer"][fed],
                                            b["wins"]["winner"][fed], b["wins"]["received"][fed],
                                            b["wins"]["points"][fed], strict=True):
        assert wb[hid][winner] == wa[hid][winner]
        assert wb[hid][payer] - wa[hid][payer] == -(rec - pts)  # it also pays the others' shares


def test_rob_kong():
    a = rule_logs(6000, record=False)
    b = rule_logs(6000, rob_kong=False)
    assert (a["wins"]["kind"] == "rob_kong").any() and a["wins"]["qiangganghu"].any()
    assert not (b["wins"]["kind"] == "rob_kong").any() and not b["wins"]["qiangganghu"].any()
    rob = a["wins"]["kind"] == "rob_kong"
    assert (a["wins"]["n_payers"][rob] == 1).all() and (a["wins"]["payer"][rob] >= 0).all()


# ---- flow -----------------------------------------------------------------------------------------------

def test_multiple_ron():
    a, b = rule_logs(6000), rule_logs(6000, multiple_ron=False)
    for cols, many in ((a, True), (b, False)):
        key = cols["wins"]["hand_id"] * 8 + cols["wins"]["win_order"]
        shared = np.unique(key, return_counts=True)[1].max()
        assert (shared > 1) == many


def test_single_mode_ends_at_the_first_win_event():
    cols = rule_logs(1000, record=True, mode="single")
    h, w = cols["hands"], cols["wins"]
    assert (w["win_order"] == 1).all()
    assert (h["n_winners"] >= 1).sum() > 900
    for row in range(200):
        ev = events_of(cols, row)
        wins = [i for i, e in enumerate(ev) if e[0] == S.EV_WIN]
        if wins:
            after = {e[0] for e in ev[wins[-1] + 1:]}
            assert after <= {S.EV_PAY, S.EV_END}


@pytest.mark.parametrize("direction", ["clockwise", "counterclockwise", "opposite"])
def test_exchange_three(direction):
    rules = rules_of(exchange_three=direction)
    _, cols = play(rules, 300, record=True)
    base = rule_logs(300)
    assert np.array_equal(cols["players"]["dealt"], base["players"]["dealt"])
    assert (cols["hands"]["exchange"] == direction).all()
    assert not np.array_equal(cols["players"]["start_shanten"], base["players"]["start_shanten"])
    off = {"clockwise": 3, "counterclockwise": 1, "opposite": 2}[direction]
    for row, log in enumerate(logs(rules, cols)):
        audit(log)  # tiles conserved
        given = [e for e in events_of(cols, row) if e[0] == S.EV_EXCHANGE]
        assert len(given) == 12
        for s in range(4):
            tiles = [e[2] for e in given if e[1] == s]
            assert len(tiles) == 3 and len({t // 9 for t in tiles}) == 1
            assert all(e[4] == (s + off) % 4 for e in given if e[1] == s)


def test_exchange_random_is_uniform_and_depends_on_the_deal_only():
    a = rule_logs(3000, exchange_three="random")
    b = rule_logs(3000, exchange_three="random", scoring={"cap": 3}, seats=["value"] * 4)
    assert np.array_equal(a["hands"]["exchange"], b["hands"]["exchange"])
    _, counts = np.unique(a["hands"]["exchange"].astype(str), return_counts=True)
    assert len(counts) == 3 and (abs(counts / 3000 - 1 / 3) < 0.04).all()
    assert (rule_logs(50)["hands"]["exchange"] == "none").all()


def test_void_suit_modes():
    strict = rule_logs(400, record=True)
    lenient = rule_logs(400, void_suit="declared_lenient")
    none = rule_logs(400, void_suit="none")
    assert all(v in "mps" for v in strict["players"]["void_suit"])
    assert all(v in "mps" for v in lenient["players"]["void_suit"])
    assert all(v is None for v in none["players"]["void_suit"])
    # strict: the audit replays the discard order and claims (simulator.replay checks both)
    for log in logs(rules_of(), strict):
        audit(log)
    # strict forbids discarding off-void with void tiles held; random seats under lenient do it
    rules = rules_of(void_suit="declared_lenient", seats=["random"] * 4)
    _, cols = play(rules, 200, record=True)
    breaks = 0
    for log in logs(rules, cols):
        st = ReplayedHand(log, strict_void=True)
        try:
            for e in log.events:
                st.apply(e)
        except EventLogError:
            breaks += 1
    assert breaks > 0


def test_huazhu_penalty_changes_only_huazhu_money():
    a = rule_logs(4000, void_suit="none", seats=HUAZHU_SEATS)
    b = rule_logs(4000, void_suit="none", seats=HUAZHU_SEATS, settlement={"huazhu_penalty": 8})
    assert a["players"]["huazhu"].sum() > 20
    only(differing(a, b), players={"score_huazhu", "score_total"}, must={"score_huazhu"})
    assert np.array_equal(a["players"]["score_huazhu"], 2 * b["players"]["score_huazhu"])
    hz = np.repeat(per_hand(a["players"]["huazhu"]).any(axis=1), 4)
    assert (a["players"]["score_huazhu"][~hz] == 0).all()
    cap = rule_logs(4000, void_suit="none", seats=HUAZHU_SEATS, settlement={"huazhu_penalty": "cap"},
              scoring={"cap": 3})
    eight = rule_logs(4000, void_suit="none", seats=HUAZHU_SEATS, settlement={"huazhu_penalty": 8}, scoring={"cap": 3})
    assert np.array_equal(cap["players"]["score_huazhu"], eight["players"]["score_huazhu"])
    rules = rules_of(scoring={"cap": None}, settlement={"huazhu_penalty": "cap"})
    assert points_of(6, rules.to_arrays()) == 64


def test_huazhu_pays():
    a = rule_logs(4000, void_suit="none", seats=HUAZHU_SEATS)
    b = rule_logs(4000, void_suit="none", seats=HUAZHU_SEATS, settlement={"huazhu_pays": "all"})
    only(differing(a, b), players={"score_huazhu", "score_total"}, must={"score_huazhu"})
    won = a["players"]["won"]
    assert (a["players"]["score_huazhu"][won] == 0).all()
    assert (b["players"]["score_huazhu"][won] > 0).any() and (b["players"]["score_huazhu"][won] >= 0).all()


def test_chadajiao():
    a, b = rule_logs(4000), rule_logs(4000, settlement={"chadajiao": False})
    only(differing(a, b), players={"score_chadajiao", "score_total"}, must={"score_chadajiao"})
    assert (b["players"]["score_chadajiao"] == 0).all()
    p = a["players"]
    assert (p["score_chadajiao"][p["ready"]] >= 0).all() and (p["score_chadajiao"][p["ready"]] > 0).any()
    assert (p["score_chadajiao"][~p["ready"]] <= 0).all()


def test_refund_kongs_if_not_ready():
    a, b = rule_logs(4000), rule_logs(4000, settlement={"refund_kongs_if_not_ready": False})
    only(differing(a, b), players={"score_refund", "score_total"}, must={"score_refund"})
    assert (b["players"]["score_refund"] == 0).all()  # under transfer, refunds only come from 退税
    p = a["players"]
    unready = ~p["won"] & ~p["ready"] & np.repeat(a["hands"]["exhaustive_draw"], 4)
    assert (p["score_refund"][unready] < 0).any()
    assert (p["score_refund"][~unready] >= 0).all()  # only not-ready players still in give money back


def test_kong_rain_transfer_moves_that_kongs_income_to_its_winners():
    """呼叫转移 in amounts, from the event log alone (docs/rules.md, Payments): the income of the discarder's last
    kong before the 杠上炮 (every kong payment logged right after it) leaves the discarder and is split among the
    winners of that discard by integer division, the remainder one unit each to the first winners in turn order
    from the discarder."""
    n = 3000
    cols = rule_logs(n, record=True, kongs={"after_kong_deal_in": "transfer"})
    p, w = cols["players"], cols["wins"]
    transfer = per_hand(p["score_transfer"])
    checked = 0
    for hid in np.unique(w["hand_id"][w["gangshangpao"]]).tolist():
        sel = (w["hand_id"] == hid) & w["gangshangpao"]
        payers = set(w["payer"][sel].tolist())
        if len(set(w["win_order"][sel].tolist())) > 1:  # two 杠上炮 in one hand: the hand's sums mix them
            continue
        payer = payers.pop()
        winners = sorted(w["winner"][sel].tolist(), key=lambda s: (s - payer) % 4)
        ev = events_of(cols, hid)
        won_at = next(i for i, e in enumerate(ev) if e[0] == S.EV_WIN and e[1] in winners)
        kong_at = max(i for i in range(won_at) if ev[i][0] == S.EV_KONG and ev[i][1] == payer)
        income = 0
        for f in ev[kong_at + 1:]:
            if f[0] != S.EV_PAY or f[5] != S.C_KONG:
                break
            income += f[3]
        share, extra = divmod(income, len(winners))
        want = [0] * 4
        want[payer] = -income
        for rank, s in enumerate(winners):
            want[s] = share + (rank < extra)
        assert transfer[hid].tolist() == want, (hid, winners, income)
        checked += 1
    assert checked >= 20 and (p["score_transfer"] != 0).any()


@pytest.mark.parametrize(("pays", "mode"), [("default", "xuezhan"), ("all", "xuezhan"), ("default", "xueliu")])
def test_huazhu_money_seat_by_seat(pays, mode):
    """查花猪 derived seat by seat from the players table (docs/rules.md, exhaustive draw item 3): at a 流局 each
    花猪 pays the penalty (16) to each non-花猪 player still in (under huazhu_pays: all, also to those who won);
    花猪 do not pay each other; no other hand moves 花猪 money. Under 血流 (every hand ends in a 流局) "still in" is
    "never won"."""
    over = {} if pays == "default" else {"huazhu_pays": "all"}
    cols = rule_logs(2000, void_suit="none", seats=HUAZHU_SEATS, settlement={"huazhu_penalty": 16, **over},
                     mode=mode)
    hz, won = per_hand(cols["players"]["huazhu"]), per_hand(cols["players"]["won"])
    got = per_hand(cols["players"]["score_huazhu"])
    exhaustive = cols["hands"]["exhaustive_draw"]
    seen = 0
    for h in range(len(exhaustive)):
        want = [0] * 4
        if exhaustive[h]:
            pigs = [s for s in range(4) if hz[h, s] and not won[h, s]]
            paid = [s for s in range(4) if not hz[h, s] and (pays == "all" or not won[h, s])]
            for s in pigs:
                want[s] -= 16 * len(paid)
            for s in paid:
                want[s] += 16 * len(pigs)
            seen += len(pigs) > 0 and any(won[h, s] for s in paid)
        assert got[h].tolist() == want, (h, hz[h].tolist(), won[h].tolist())
    if pays == "all":
        assert seen > 0  # some 花猪 paid a player who had won
    assert (got != 0).any()
