"""唱歌/跳舞 (``declare_ready``, docs/spec.md §2.10): who declares, what a declaration locks, the extra fan, what
nobody may discard to a dancer, 查大叫 of a declarer, and the Python bot decision."""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import events_of, logs, per_hand, play, rules_of
from reference_scorer import check_wins
from typer.testing import CliRunner

from simulator.agents import DECLARE, PASS, Bot
from simulator.cli import app
from simulator.hands.score import score_hand
from simulator.kernel import state as S
from simulator.kernel.tiles import counts_from_str
from simulator.replay import audit, lines
from simulator.rules import DECLARE_FAN, RulesError, load_rules

N = 300  # hands per variant: value seats declare in about two hands out of three
SEATS = ["value", "value", "value", "value"]


@pytest.fixture(scope="module")
def played():
    """``{mode: (rules, columns with events)}`` of the same N hands under each declare_ready value."""
    out = {}
    for mode in ("none", "sing", "dance"):
        rules = rules_of(declare_ready=mode, seats=SEATS)
        out[mode] = (rules, play(rules, N, seed=5, record=True)[1])
    return out


# ---- the rule keys ---------------------------------------------------------------------------------------------

def test_declare_ready_keys_and_default_fans():
    none = load_rules("chengdu")
    assert none.declare_ready == "none" and "sing" not in none.scoring.extras  # digests of old rule sets unchanged
    for mode in ("sing", "dance"):
        r = load_rules("chengdu", [f"declare_ready={mode}"])
        assert r.declare_ready == mode
        assert {k: r.scoring.extras[k] for k in DECLARE_FAN} == DECLARE_FAN == {"sing": 1, "dance": 2}
        assert r.digest() != none.digest()
    r = load_rules("chengdu", ["declare_ready=sing", "scoring.extras.sing=3"])
    assert r.scoring.extras["sing"] == 3 and r.scoring.extras["dance"] == 2
    with pytest.raises(RulesError, match="declare_ready"):
        load_rules("chengdu", ["declare_ready=shout"])


def test_extra_fans_are_scored():
    rules = load_rules("chengdu", ["declare_ready=dance", "scoring.cap=null"])
    hand = "123456789m11p234p"
    plain = score_hand(rules, hand, win_tile="4p")
    sing = score_hand(rules, hand, win_tile="4p", context={"sing"})
    dance = score_hand(rules, hand, win_tile="4p", win="self_draw", context={"dance"})
    assert "sing" in sing.patterns and sing.fan == plain.fan + 1
    self_draw = score_hand(rules, hand, win_tile="4p", win="self_draw")
    assert "dance" in dance.patterns and dance.fan == self_draw.fan + 2


# ---- play ------------------------------------------------------------------------------------------------------

def test_none_never_declares_and_greedy_never_declares(played):
    _, cols = played["none"]
    assert not cols["players"]["declared"].any()
    assert not (cols["wins"]["sing"].any() or cols["wins"]["dance"].any())
    _, greedy = play(rules_of(declare_ready="dance"), 100, seed=5)
    assert not greedy["players"]["declared"].any()


@pytest.mark.parametrize("mode", ["sing", "dance"])
def test_declarations_happen_are_scored_and_zero_sum(played, mode):
    rules, cols = played[mode]
    p, w = cols["players"], cols["wins"]
    assert p["declared"].sum() > N // 4
    assert (per_hand(p["score_total"]).sum(axis=1) == 0).all()
    flagged = w[mode]
    assert flagged.sum() > 0 and not w["dance" if mode == "sing" else "sing"].any()
    assert all(mode in c.split(",") for c in w["context"][flagged])
    # every declarer's win carries the flag and the extra fan: recompute one from its logged hand
    i = int(np.flatnonzero(flagged)[0])
    melds = [m.replace("ckong", "concealed_kong") for m in w["melds"][i].split(",") if m]
    again = score_hand(rules, w["hand"][i], melds, w["tile"][i], w["kind"][i], set(w["context"][i].split(",")))
    assert again.fan == w["fan"][i]
    without = score_hand(rules, w["hand"][i], melds, w["tile"][i], w["kind"][i],
                         set(w["context"][i].split(",")) - {mode})
    assert again.fan == without.fan + DECLARE_FAN[mode]
    assert check_wins(rules, w) == len(w["hand_id"])  # every win, against the independent reference scorer


@pytest.mark.parametrize("mode", ["sing", "dance"])
def test_a_locked_hand_only_draws_and_discards_the_drawn_tile(played, mode):
    rules, cols = played[mode]
    locked = 0
    for row in range(N):
        declared, last_draw = [False] * 4, [-1] * 4
        for typ, seat, tile, _amount, a, _b in events_of(cols, row):
            if typ == S.EV_DRAW:
                last_draw[seat] = tile
            elif typ == S.EV_DECLARE:
                assert not declared[seat]  # once per hand
                declared[seat] = True
            elif declared[seat] and typ == S.EV_DISCARD:
                assert tile == last_draw[seat]
                locked += 1
            elif declared[seat] and typ == S.EV_PUNG:
                pytest.fail("a declared hand punged")
            elif declared[seat] and typ == S.EV_KONG:
                assert a == 3 and tile == last_draw[seat]  # concealed, of the drawn tile
    assert locked > 20  # the locked branch was exercised: declared hands discarded after declaring
    for log in logs(rules, cols, seed=5):
        audit(log)  # the replay's audit checks the same locks


@pytest.mark.parametrize("change", ["discard", "pung", "added_kong"])
def test_the_audit_catches_a_declared_hand_that_changes(played, change):
    from simulator.replay import EventLogError, ReplayedHand

    rules, cols = played["sing"]

    def declared_discards(events):  # indexes of discards made by a seat after it declared
        declared = set()
        for j, e in enumerate(events):
            declared |= {e[1]} if e[0] == S.EV_DECLARE else set()
            if e[0] == S.EV_DISCARD and e[1] in declared:
                yield j

    log, i = next((lg, j) for lg in logs(rules, cols, seed=5) for j in declared_discards(lg.events))
    events = list(log.events)
    seat = events[i][1]
    drawn = events[i][2]
    st = ReplayedHand(log, strict_void=False)
    for e in events[:i]:
        st.apply(e)
    held = next(k for k in range(27) if k != drawn and st.conc[seat][k] > 0)
    events[i] = {"discard": (S.EV_DISCARD, seat, held, 0, 0, 0),
                 "pung": (S.EV_PUNG, seat, drawn, 0, (seat + 1) % 4, 0),
                 "added_kong": (S.EV_KONG, seat, drawn, 0, 2, 0)}[change]
    log.events[:] = events
    expected = {"discard": "not the tile it drew", "pung": "pungs",
                "added_kong": "allows only a concealed kong of the tile it drew"}[change]
    with pytest.raises(EventLogError, match=rf"locked hand \(declared ready\).*{expected}|{expected}.*locked hand"
                                            r" \(declared ready\)"):
        audit(log)


def test_a_concealed_kong_of_a_locked_hand_keeps_its_waits(no_numba_cache_writes):
    from simulator.engine import alloc, locked_kong_options
    from simulator.kernel.shape import wait_mask
    from simulator.kernel.tables import suit_table

    table = suit_table()
    st = alloc(False, S.MAX_WINS)
    mk, mt, nm, ps, conc = st.mk, st.mt, st.nm, st.ps, st.conc
    ps[0, S.PS_EVOID] = 2

    def kong_allowed(hand13: str, drawn: str) -> bool:
        conc[0] = counts_from_str(hand13)
        ps[0, S.PS_WAITS] = wait_mask(table, conc[0], mk[0], mt[0], 0, 2)
        k = int(np.flatnonzero(counts_from_str(drawn))[0])
        conc[0, k] += 1
        before = conc[0].copy()
        allowed = locked_kong_options(table, st, 0, k, 1 << k) == 1 << k
        assert np.array_equal(conc[0], before) and nm[0] == 0  # the check leaves the hand as it was
        return allowed

    assert kong_allowed("444789m123p5566p", "4m")        # waits 5p 6p before and after the kong
    assert not kong_allowed("1112345678999m", "1m")      # 九莲: every m before, fewer after
    assert not kong_allowed("444789m123p5566p", "5p")    # not four of the drawn tile: no kong


def _hands_before(cols: dict, row: int):
    """Per event, the concealed hands before it (dealt + exchange, draws, discards, melds)."""
    p = cols["players"]
    conc = [counts_from_str(p["dealt"][4 * row + s]).astype(np.int64) for s in range(4)]
    for ev in events_of(cols, row):
        yield ev, [c.copy() for c in conc]
        typ, seat, tile, _amount, a, _b = ev
        if typ == S.EV_EXCHANGE:
            conc[seat][tile] -= 1
            conc[a][tile] += 1
        elif typ == S.EV_DRAW:
            conc[seat][tile] += 1
        elif typ in (S.EV_DISCARD, S.EV_ROBBED):
            conc[seat][tile] -= 1
        elif typ == S.EV_PUNG:
            conc[seat][tile] -= 2
        elif typ == S.EV_KONG:
            conc[seat][tile] -= {1: 3, 2: 1, 3: 4}[a]
        elif typ == S.EV_WIN and a != S.WK_SELF_DRAW:
            pass  # the tile goes from the discards to the winner, who leaves play


def test_no_undeclared_player_feeds_a_dancer_unless_forced(played):
    _, cols = played["dance"]
    voids = per_hand(cols["players"]["void_suit"])
    fed = 0
    for row in range(N):
        shown, won, declared = [0] * 4, [False] * 4, [False] * 4
        for (typ, seat, tile, amount, _a, _b), conc in _hands_before(cols, row):
            if typ == S.EV_DECLARE:
                shown[seat], declared[seat] = amount, True
            elif typ == S.EV_WIN:
                won[seat] = True
            elif typ == S.EV_DISCARD and not declared[seat]:
                blocked = 0
                for q in range(4):
                    if q != seat and not won[q]:
                        blocked |= shown[q]
                if not (blocked >> tile) & 1:
                    continue
                fed += 1
                void = "mps".index(voids[row, seat])
                held = [k for k in range(27) if conc[seat][k] > 0]
                legal = [k for k in held if k // 9 == void] or held  # strict 定缺: void tiles first
                assert all((blocked >> k) & 1 for k in legal), (row, seat, tile)
    assert fed > 0  # the forced case occurred, so the check above ran (feeding is otherwise never seen)


@pytest.mark.parametrize("mode", ["sing", "dance"])
def test_a_declarer_is_always_ready_at_the_end(played, mode):
    _, cols = played[mode]
    p = cols["players"]
    left = p["declared"] & ~p["won"]
    assert left.sum() > 0
    assert p["ready"][left].all()


# ---- Python bots, replay ---------------------------------------------------------------------------------------

class AlwaysDance(Bot):
    """Declares at every chance; records what it saw."""

    seen: list = []

    def declare(self, obs):
        AlwaysDance.seen.append((obs.decision, obs.legal_actions, int(obs.declared[obs.seat])))
        return DECLARE


def test_a_python_bot_declares_and_value_bot_objects_match_compiled_seats(monkeypatch):
    import simulator.agents as agents

    monkeypatch.setattr(agents, "AlwaysDance", AlwaysDance, raising=False)
    AlwaysDance.seen = []
    rules = rules_of(declare_ready="dance", seats=["simulator.agents:AlwaysDance", "value", "value", "value"])
    _, cols = play(rules, 30, seed=2)
    assert AlwaysDance.seen and all(s == ("declare", (PASS, DECLARE), 0) for s in AlwaysDance.seen)
    p = cols["players"]
    assert p["declared"][p["seat"] == 0].sum() == len(AlwaysDance.seen)  # every chance taken, once per hand
    compiled = play(rules_of(declare_ready="sing", seats=SEATS), 30, seed=2)[1]
    objects = play(rules_of(declare_ready="sing", seats=["simulator.agents:ValueBot"] + SEATS[1:]), 30, seed=2)[1]
    for table in ("players", "wins"):
        for c in compiled[table]:
            assert np.array_equal(compiled[table][c], objects[table][c]), (table, c)
    # the comparison covers declarations: the value bots sang in some of these hands
    assert compiled["players"]["declared"].sum() > 0


def test_replay_shows_the_declaration(played):
    rules, cols = played["dance"]
    row = next(r for r in range(N) if any(e[0] == S.EV_DECLARE for e in events_of(cols, r)))
    text = "\n".join(lines(logs(rules, cols, seed=5)[row]))
    assert "跳舞[/bold green]: 叫" in text
    res = CliRunner().invoke(app, ["replay", "chengdu", "--seed", "5", "--hand", str(row), "--lang", "en", "--set",
                                   "declare_ready=dance", "--set", "seats=[value, value, value, value]"])
    assert res.exit_code == 0, res.output
    assert "dances (declares ready, shows the waits): waits on" in res.output


def test_the_shipped_study_fires_and_a_greedy_table_is_flagged(tmp_path):
    from xuezhan.studies import run_study

    res = run_study("declare", hands=120, out_dir=tmp_path / "value", jobs=1, report=False, progress=False)
    assert not [f for f in res.findings if f.key and ("declare" in f.key or "extras" in f.key)], res.findings
    greedy = run_study("declare", hands=60, out_dir=tmp_path / "greedy", jobs=1, report=False, progress=False,
                       overrides=["seats=[greedy, greedy, greedy, greedy]"])
    flagged = {(f.variant, f.key) for f in greedy.findings}
    assert {("sing", "declare_ready"), ("dance", "declare_ready")} <= flagged
    assert all("no player declared" in f.problem for f in greedy.findings if f.key == "declare_ready")
