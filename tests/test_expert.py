"""The expert bot: public information only, legal and deterministic play, and play that reacts to the rules.

The reaction tests are paired: the same walls and bot streams under two rule variants (common random numbers),
on a few thousand hands at most so that the suite stays fast.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from engine_helpers import finished_hands, play, rules_of

from simulator.bots import laid_down, own_ckongs
from simulator.bots.common import legal_discard_mask, plan_void
from simulator.bots.expert import (
    R_FOLD,
    R_NOISE,
    R_READY,
    R_VALUE,
    R_VOID,
    REASON_SHIFT,
    expert_claim,
    expert_discard,
    expert_takes_win,
    expert_void,
)
from simulator.bots.expert_hand import kong_potential
from simulator.bots.expert_turn import Outlook
from simulator.bots.view import SeatView
from simulator.kernel import state as S
from simulator.kernel.shape import MELD_CKONG, HandTiles, shanten
from simulator.kernel.tables import suit_table
from simulator.kernel.tiles import counts_from_str, parse_tiles
from simulator.replay import lines, record_hand
from simulator.rules import BOT_INDEX, RulesError, load_rules

TABLE = suit_table()
EXPERT = ["expert"] * 4


def bot_row(**kw) -> np.ndarray:
    spec = {"bot": "expert", **kw}
    return load_rules("chengdu", {"seats": [spec, "greedy", "greedy", "greedy"]}).bot_arrays()[1][0]


class EngineState(NamedTuple):
    """What the expert's decisions read of the engine's ``HandState`` (they take the dispatcher's prepared
    arguments, ``simulator.bots.PREPARED_ARGS``): the shanten scratch, the seats' random streams, every seat's
    concealed tiles (a win decision's laid-down hands)."""

    sh_buf: np.ndarray
    rngs: np.ndarray
    conc: np.ndarray


def engine_state(conc=None, sh_buf=None) -> EngineState:
    """An :class:`EngineState`: ``conc`` every seat's concealed tiles (default none), fresh scratch, streams of 1."""
    return EngineState(np.zeros(27, np.int64) if sh_buf is None else sh_buf, np.ones(5, np.uint64),
                       np.zeros((4, 27), np.uint8) if conc is None else conc)


FACE_UP = np.full((4, 4), 1, np.int8)  # every seat's meld kinds: pungs (face up), for the melds the tests set down


def fresh_table_state(tiles_left=40):
    """Public state of a table where nobody has won or set anything down (for unit calls)."""
    ps = np.zeros((4, S.PS_N), np.int64)
    ps[:, S.PS_NDRAWS] = (55 - tiles_left) // 4
    return np.zeros(S.G_N, np.int64), ps, np.zeros((4, 4), np.int8), np.zeros(4, np.int64)


# ---- the visible-tile leak -----------------------------------------------------------------------------

def test_a_concealed_kong_is_not_counted_as_seen():
    """All four copies of a 暗杠 kind are in the kong, face down: nobody can have seen one, so the shared
    ``visible`` count of that kind stays 0 for the whole hand (it used to become 4)."""
    seen = 0
    for st in finished_hands(load_rules("chengdu"), 600, 5):
        visible, mk, mt, nm = st.visible, st.mk, st.mt, st.nm
        for s in range(4):
            for j in range(nm[s]):
                if mk[s, j] == MELD_CKONG:
                    seen += 1
                    assert visible[mt[s, j]] == 0
    assert seen >= 5  # the walls hold enough concealed kongs for the check to bite


def test_the_expert_counts_the_hands_blood_battle_winners_laid_down_once():
    """血战 winners lay their hands down (推倒, public): the expert's dispatchers add them to the seen counts
    (``bots.laid_down``) for its unseen-tile counts, without counting a discard or robbed-kong win's tile twice
    (it is seen face up already) and without leaving out a 一炮多响 partner's copy of the kind (its hand lacks
    the physical tile): at the end of every hand each kind's four copies are exactly the seen ones, the tiles
    still concealed in the other hands or in 暗杠, and the wall's; removing them restores ``visible`` exactly."""
    added = multi = 0
    for i, st in enumerate(finished_hands(load_rules("chengdu"), 300, 6)):
        before = st.visible.copy()
        laid_down(st.visible, st, np.int64(1))
        added += int(st.visible.sum() - before.sum())
        live = sum(st.conc[q].astype(np.int64) for q in range(4) if not st.ps[q, S.PS_WON])
        ckong = np.zeros(27, np.int64)
        for q in range(4):
            for j in range(st.nm[q]):
                if st.mk[q, j] == MELD_CKONG:
                    ckong[st.mt[q, j]] += 4
        wall = np.bincount(st.wall[st.g[S.G_HEAD]:st.g[S.G_TAIL]], minlength=27)
        assert (st.visible + live + ckong + wall == 4).all(), i
        multi += int(np.any(np.bincount(st.wins[:st.g[S.G_NWINS], S.W_ORDER]) > 1))
        laid_down(st.visible, st, np.int64(-1))
        assert (st.visible == before).all()
    assert added >= 300 * 20 and multi >= 5  # ~2.5 winners a hand, some 一炮多响: the check bites


def test_the_deciding_seat_counts_its_own_concealed_kong():
    visible = np.zeros(27, np.int8)
    mk = np.array([MELD_CKONG, 1, 0, 0], np.int8)
    mt = np.array([4, 9, 0, 0], np.int8)
    own_ckongs(visible, mk, mt, 2, 1)
    assert visible[4] == 4 and visible.sum() == 4  # its own 暗杠 only, not its pung
    own_ckongs(visible, mk, mt, 2, -1)
    assert not visible.any()


# ---- parameters and legality ---------------------------------------------------------------------------

def test_expert_parameters_travel_in_thousandths_and_are_validated():
    row = bot_row(defence=0.5, ambition=2, temperature=0.25, tempo=0.05)
    assert list(row) == [500, 2000, 250, 50]  # the expert's own row (simulator.rules.bot_table): its four, in order
    assert BOT_INDEX["expert"] == 4
    with pytest.raises(RulesError, match="defence"):
        load_rules("chengdu", {"seats": [{"bot": "expert", "defence": -1}, "greedy", "greedy", "greedy"]})


def test_expert_discards_a_held_legal_tile_and_leaves_the_hand_as_it_was():
    rng = np.random.default_rng(3)
    g, ps, mt_all, nm_all = fresh_table_state()
    visible = np.zeros(27, np.int8)
    buf = np.zeros(27, np.int64)
    bpar = bot_row()
    params = load_rules("chengdu").to_arrays()
    no = np.zeros(4, np.int8)
    for _ in range(200):
        tiles = rng.permutation(np.repeat(np.arange(27), 4))[:14]
        c = np.bincount(tiles, minlength=27).astype(np.uint8)
        before = c.copy()
        void = plan_void(TABLE, c, no, no.copy(), 0)
        legal = legal_discard_mask(c, void, True)
        code = expert_discard(SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, visible, 0, 40),
                              HandTiles(c, no.copy(), no.copy(), 0, void), engine_state(sh_buf=buf), bpar, void,
                              legal)
        k = code & ((1 << REASON_SHIFT) - 1)
        assert (legal >> k) & 1 and 1 <= code >> REASON_SHIFT <= R_NOISE
        assert np.array_equal(c, before)


def test_expert_tables_play_whole_hands_deterministically():
    _, a = play(rules_of(seats=EXPERT), 300, seed=4)
    _, b = play(rules_of(seats=EXPERT), 300, seed=4)
    assert np.array_equal(a["players"]["score_total"], b["players"]["score_total"])
    assert (a["players"]["score_total"].reshape(-1, 4).sum(axis=1) == 0).all()
    assert a["hands"]["n_winners"].mean() > 1.8


def test_temperature_adds_noise_from_the_seat_stream():
    _, cold = play(rules_of(seats=EXPERT), 300, seed=4)
    _, warm = play(rules_of(seats=[{"bot": "expert", "temperature": 1.0}] * 4), 300, seed=4)
    _, again = play(rules_of(seats=[{"bot": "expert", "temperature": 1.0}] * 4), 300, seed=4)
    assert not np.array_equal(cold["players"]["score_total"], warm["players"]["score_total"])
    assert np.array_equal(warm["players"]["score_total"], again["players"]["score_total"])


def test_expert_ready_hand_discards_to_stay_ready():
    # 123m456m789m 55p 67p + 1s (its dead suit): throwing 1s keeps the two-sided wait on 5p/8p
    c = counts_from_str("123456789m5567p1s")
    g, ps, mt_all, nm_all = fresh_table_state()
    no = np.zeros(4, np.int8)
    params = load_rules("chengdu").to_arrays()
    k = expert_discard(SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, np.zeros(27, np.int8), 0, 40),
                       HandTiles(c, no.copy(), no.copy(), 0, 2), engine_state(), bot_row(), 2,
                       legal_discard_mask(c, 2, False)) & ((1 << REASON_SHIFT) - 1)
    assert k == parse_tiles("1s")[0]
    c[k] -= 1
    assert shanten(TABLE, c, no, no, 0, 2) == 0


@pytest.mark.parametrize(("their_void", "wait"), [("m", "5m"), ("p", "5p")])
def test_the_expert_waits_on_a_suit_an_opponent_must_throw(their_void, wait):
    # 111m789m5m 111p789p5p: either 5 goes, leaving a single wait on the other, equally wide and worth the same.
    # An opponent whose declared void is that wait's suit has to discard every copy it draws: wait there.
    c = counts_from_str("1117895m1117895p")
    g, ps, mt_all, nm_all = fresh_table_state()
    ps[:, S.PS_VOID] = 2
    ps[1, S.PS_VOID] = "mps".index(their_void)
    no = np.zeros(4, np.int8)
    params = load_rules("chengdu").to_arrays()
    k = expert_discard(SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, np.zeros(27, np.int8), 0, 40),
                       HandTiles(c, no.copy(), no.copy(), 0, 2), engine_state(), bot_row(), 2,
                       legal_discard_mask(c, 2, False)) & ((1 << REASON_SHIFT) - 1)
    other = {"5m": "5p", "5p": "5m"}[wait]
    assert k == parse_tiles(other)[0]


# ---- reactions to the rules (paired: same walls) ------------------------------------------------------

def big_share(cols) -> float:
    return float((cols["wins"]["fan"] >= 2).mean())


def test_a_fan_cap_of_one_makes_the_expert_chase_fewer_big_hands():
    """Under cap 1 a 清一色 pays no more than a plain hand, so the expert stops steering toward it."""
    _, capped = play(rules_of(seats=EXPERT, scoring={"cap": 1}), 2500, seed=6)
    _, open_ = play(rules_of(seats=EXPERT, scoring={"cap": None}), 2500, seed=6)
    assert big_share(capped) < big_share(open_) - 0.005
    steered = {n: float((c["wins"]["qingyise"] | c["wins"]["qidui"]).mean()) for n, c in (("cap", capped),
                                                                                       ("open", open_))}
    assert steered["cap"] < 0.7 * steered["open"]
    # greedy ignores the rules: the same walls give the same fans under both caps
    _, g1 = play(rules_of(scoring={"cap": 1}), 300, seed=6)
    _, g2 = play(rules_of(scoring={"cap": None}), 300, seed=6)
    assert np.array_equal(g1["wins"]["fan"], g2["wins"]["fan"])


def test_a_larger_huazhu_penalty_clears_the_third_suit():
    """Under void_suit none, erring experts (temperature 0.5) end as 花猪 far less often at 64× than at 8×."""
    seats = [{"bot": "expert", "temperature": 0.5}] * 4
    _, low = play(rules_of(seats=seats, void_suit="none", settlement={"huazhu_penalty": 8}), 600, seed=8)
    _, high = play(rules_of(seats=seats, void_suit="none", settlement={"huazhu_penalty": 64}), 600, seed=8)
    n_low, n_high = int(low["players"]["huazhu"].sum()), int(high["players"]["huazhu"].sum())
    assert n_low >= 20 and n_high * 4 < n_low


def _takes(lock: str, tiles_left: int, ambition: float, config: str = "chengdu", tempo: float = 0.0) -> bool:
    """The expert's decision (``tempo`` 0 unless given) on a 3p discard for 111m222m333m444p5p (3p/6p plain,
    5p 对对胡)."""
    params = load_rules(config, {"pass_ron_lock": lock}).to_arrays()
    _, ps, mt_all, nm_all = fresh_table_state(tiles_left)
    conc = counts_from_str("111222333m4445p")
    no = np.zeros(4, np.int8)
    rows = seat_rows(conc)
    return expert_takes_win(SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, np.zeros(27, np.int8), 0, tiles_left),
                            HandTiles(rows[0], no.copy(), no.copy(), 0, 2), engine_state(rows),
                            bot_row(ambition=ambition, tempo=tempo), 2, parse_tiles("3p")[0], 0, False)


def seat_rows(conc, seat=0):
    """uint8[4, 27]: every seat's concealed counts, ``conc`` at ``seat`` and empty hands elsewhere."""
    out = np.zeros((4, 27), np.uint8)
    out[seat] = conc
    return out


def _decline_threshold(lock: str, tiles_left: int, config: str = "chengdu", tempo: float = 0.0) -> float:
    """The smallest ``ambition`` at which the expert declines that win (bisection; decisions are monotone)."""
    lo, hi = 0.0, 5.0
    assert _takes(lock, tiles_left, lo, config, tempo) and not _takes(lock, tiles_left, hi, config, tempo)
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _takes(lock, tiles_left, mid, config, tempo) else (lo, mid)
    return hi


def test_under_xueliu_every_discard_win_is_taken():
    """Under 血流成河 a winner plays on with the same waits, so declining gives up the points and keeps nothing the
    win does not (measured +0.054 ± 0.005 base units per player-hand against declining as under 血战): a discard
    win 血战 declines is taken under 血流 at any ``ambition``."""
    for left in (10, 30):
        a = _decline_threshold("off", left, "chengdu")
        assert not _takes("off", left, a, "chengdu")
        assert all(_takes("off", left, x, "xueliu") for x in (a, 5.0, 10.0))


def test_tempo_is_what_winning_now_is_worth_beyond_the_points():
    """``tempo`` (the seat parameter, through the rule set's parameter row): the more an early win is worth, the
    more ambition it takes to decline the same discard win; a seat that declines it at tempo 0 takes it at 0.05.
    Held at any one value (the parameter ignored), the thresholds would be equal."""
    for left in (10, 30):
        t0, t1, t2 = (_decline_threshold("off", left, tempo=t) for t in (0.0, 0.02, 0.05))
        assert t0 < t1 < t2
        assert not _takes("off", left, (t0 + t1) / 2, tempo=0.0) and _takes("off", left, (t0 + t1) / 2, tempo=0.05)


def test_the_pass_lock_in_force_changes_whether_a_small_discard_win_is_taken():
    """Waiting on a bigger win is worth less when the lock forbids discard wins after a decline, so it takes
    more ambition to decline: off < all_tiles, with higher_fan in between (it still allows the bigger 5p)."""
    for left in (10, 30):
        off, higher, every = (_decline_threshold(x, left) for x in ("off", "higher_fan", "all_tiles"))
        assert off <= higher <= every
        assert off < every


def test_experts_decline_more_discard_wins_without_a_pass_lock():
    """Experts decline discard wins to wait for a self-draw; with no pass lock waiting is worth more, so they
    decline more than under all_tiles."""
    seats = ["expert"] * 4
    _, off = play(rules_of(seats=seats, pass_ron_lock="off"), 1200, seed=9)
    _, every = play(rules_of(seats=seats, pass_ron_lock="all_tiles"), 1200, seed=9)
    n_off, n_all = int(off["players"]["declined_wins"].sum()), int(every["players"]["declined_wins"].sum())
    assert n_all > 100 and n_off > n_all


def test_the_expert_always_takes_a_self_draw():
    params = load_rules("chengdu").to_arrays()
    _, ps, mt_all, nm_all = fresh_table_state(50)
    no = np.zeros(4, np.int8)
    conc = counts_from_str("111222333m4445p")
    rows = seat_rows(conc)
    assert expert_takes_win(SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, np.zeros(27, np.int8), 0, 50),
                            HandTiles(rows[0], no.copy(), no.copy(), 0, 2), engine_state(rows), bot_row(ambition=10),
                            2, parse_tiles("3p")[0], 0, True)


# ---- 定缺 and 换三张 by value ----------------------------------------------------------------------------------

def random_hands(n, seed, size=13):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield np.bincount(rng.permutation(np.repeat(np.arange(27), 4))[:size], minlength=27).astype(np.uint8)


def test_the_expert_declares_its_void_by_hand_value_under_the_active_rules():
    """定缺 by value, not by shanten alone: never a suit that leaves a hand two steps slower, and it differs from
    greedy's shanten-only choice on some hands; under declared_lenient the expected 花猪 cost of the void tiles
    held changes it on some hands, and so does a higher ambition (big shapes count for more)."""
    no = np.zeros(4, np.int8)
    strict, lenient = (load_rules("chengdu", {"void_suit": v}).to_arrays() for v in ("declared", "declared_lenient"))
    bpar, bold = bot_row(), bot_row(ambition=3)
    n = differs_greedy = differs_lenient = differs_bold = 0
    for size in (13, 14):
        for c in random_hands(150, 5 + size, size):
            v = expert_void(TABLE, strict, c, no, no, 0, bpar)
            g = plan_void(TABLE, c, no, no, 0)
            assert shanten(TABLE, c, no, no, 0, v) <= shanten(TABLE, c, no, no, 0, g) + 1
            differs_greedy += v != g
            differs_lenient += v != expert_void(TABLE, lenient, c, no, no, 0, bpar)
            differs_bold += v != expert_void(TABLE, strict, c, no, no, 0, bold)
            n += 1
    assert differs_greedy >= 0.03 * n and differs_lenient >= 2 and differs_bold >= 0.02 * n


# ---- the reason of each discard --------------------------------------------------------------------------

def _decide(conc, void, tiles_left, ps, nm_all, mt_all, **kw):
    params = load_rules("chengdu").to_arrays()
    no = np.zeros(4, np.int8)
    code = expert_discard(SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, np.zeros(27, np.int8), 0, tiles_left),
                          HandTiles(conc, no.copy(), no.copy(), 0, void), engine_state(), bot_row(**kw), void,
                          legal_discard_mask(conc, void, True))
    return code & ((1 << REASON_SHIFT) - 1), code >> REASON_SHIFT


def test_the_reason_says_what_decided_the_discard():
    """Keeping 下叫 when the best-value tile leaves the hand ready; folding when the deal-in risk moves the
    choice off it (a table where an opponent shows a 清一色 in 饼 with three kongs and every 万 is 现物); the
    void suit's tile under strict 定缺."""
    c = counts_from_str("123456789m5567p9p")
    _, ps, mt_all, nm_all = fresh_table_state(20)
    k, why = _decide(c.copy(), 2, 20, ps, nm_all, mt_all, defence=0)
    assert why == R_READY and k in parse_tiles("5p9p")
    nm_all[1] = 3
    mt_all[1, :3] = parse_tiles("1p2p3p")
    ps[:, S.PS_NDRAWS] = 12
    ps[1, S.PS_NKONGS] = 3  # its three melds are kongs: a 清一色 with three 根, capped at 4 fan
    ps[1:, S.PS_SAFE] = sum(1 << t for t in range(9))  # every 万 was discarded since their last draw
    k, why = _decide(c.copy(), 2, 20, ps, nm_all, mt_all, defence=10)
    assert why == R_FOLD and k // 9 == 0
    k, why = _decide(counts_from_str("123456789m5567p1s"), 2, 20, ps, nm_all, mt_all, defence=10)
    assert why == R_VOID and k == parse_tiles("1s")[0]


def test_every_expert_discard_is_logged_with_its_reason_and_replay_shows_it():
    rules = rules_of(seats=["expert", "greedy", {"bot": "expert", "temperature": 0.3}, "greedy"])
    _, cols = play(rules, 60, seed=3, record=True)
    ev = cols["events"]
    disc = ev["type"] == S.EV_DISCARD
    seat, why = ev["seat"][disc], ev["a"][disc]
    expert = (seat == 0) | (seat == 2)
    assert (why[~expert] == 0).all() and (why[expert] >= 1).all() and (why[expert] <= R_NOISE).all()
    assert {R_VALUE, R_READY, R_VOID, R_NOISE} <= set(why[expert].tolist())
    assert R_NOISE not in set(why[seat == 0].tolist())  # temperature 0: no noise
    text = "\n".join(lines(record_hand(rules, 0, 3), "en"))
    assert "· discarding the void suit" in text


# ---- kong income still to come ---------------------------------------------------------------------------

def _claims_2p(visible_2p: int = 1, **kongs) -> int:
    """The expert's claim on a discarded 2p holding 1m 456m 888m 22p 456p 9p (the pung leaves it ready, as
    does passing after one more useful draw); ``visible_2p`` copies of 2p are seen (the discard included)."""
    params = load_rules("chengdu", {"kongs": kongs} if kongs else None).to_arrays()
    _, ps, mt_all, nm_all = fresh_table_state(40)
    ps[:, S.PS_VOID] = 2
    conc = counts_from_str("1456888m224569p")
    visible = np.zeros(27, np.int8)
    visible[parse_tiles("2p")[0]] = visible_2p
    no = np.zeros(4, np.int8)
    view = SeatView(TABLE, params, ps, FACE_UP, mt_all, nm_all, visible, 0, 40)
    return expert_claim(view, HandTiles(conc, no.copy(), no.copy(), 0, 2), engine_state(), bot_row(), 2,
                        parse_tiles("2p")[0], True, False)


def test_a_pung_is_worth_the_added_kong_it_may_become():
    """An exposed pung becomes a 加杠 when its fourth copy is drawn: with 加杠 paying 1 from each player still
    in (chengdu) the expert pungs this 2p; when 加杠 pays nothing, or the fourth 2p has been seen, it does
    not."""
    assert _claims_2p() == 1
    assert _claims_2p(added_kong={"each": 0}) == 0
    assert _claims_2p(visible_2p=2) == 0


def _triplet_kong_income(visible_8m: int = 0, void: int = 2, **kongs) -> float:
    """Kong income still to come of 1m 456m 888m 22p 456p 9p (one concealed triplet, 888m) at 40 tiles left,
    three opponents in, under chengdu with ``kongs`` overridden; ``visible_8m`` copies of 8m are seen."""
    params = load_rules("chengdu", {"kongs": kongs} if kongs else None).to_arrays()
    conc = counts_from_str("1456888m22456p9p")
    visible = np.zeros(27, np.int8)
    visible[parse_tiles("8m")[0]] = visible_8m
    no = np.zeros(4, np.int8)
    ronw = np.full(3, 0.5)
    look = Outlook(TABLE, params, visible, 60.0, 10, 3, np.zeros(6), 0.0, np.full(6, -1.0), ronw)
    return kong_potential(look, HandTiles(conc, no.copy(), no.copy(), 0, void))


def test_a_concealed_triplet_is_worth_the_kongs_it_may_become_under_the_active_payments():
    """A concealed triplet whose fourth copy is unseen is priced as a 暗杠 (if drawn) or a 直杠 (if thrown),
    each at what the rule set pays for it: nothing when neither pays, the 暗杠 share growing with
    ``concealed_kong.each``, the 直杠 share with ``discard_kong``; nothing once the fourth copy is seen or
    when the triplet is in the void suit (it must be discarded)."""
    chengdu = _triplet_kong_income()
    assert chengdu > 0.0
    assert _triplet_kong_income(concealed_kong={"each": 0}, discard_kong={"discarder": 0, "others": 0}) == 0.0
    only_concealed = _triplet_kong_income(discard_kong={"discarder": 0, "others": 0})
    only_direct = _triplet_kong_income(concealed_kong={"each": 0})
    assert only_concealed > 0.0 and only_direct > 0.0
    assert only_concealed + only_direct == pytest.approx(chengdu)
    assert _triplet_kong_income(discard_kong={"discarder": 0, "others": 0}, concealed_kong={"each": 4}) \
        == pytest.approx(2 * only_concealed)
    assert _triplet_kong_income(concealed_kong={"each": 0}, discard_kong={"discarder": 2, "others": 1}) \
        > only_direct  # the other two opponents' share of a 直杠 counts too
    assert _triplet_kong_income(visible_8m=1) == 0.0
    assert _triplet_kong_income(void=0) == 0.0
