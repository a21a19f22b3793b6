"""The search player (issue 54): its samples of the hidden tiles use public information only, it is deterministic
for a seed, and it is seated by name like every bot."""

from __future__ import annotations

import numpy as np
import pytest

from simulator import engine
from simulator.hands import run_batch
from simulator.hands.game import play_hands
from simulator.kernel import state
from simulator.kernel.tables import suit_table
from simulator.rules import RulesError, load_rules
from simulator.search import SearchBot, public_of
from simulator.search.sample import hidden_count, redeal

FIELDS = tuple(f for f in state.HandState._fields if f != "events")


def _scramble(st, seat: int, pub, rng: np.random.Generator) -> None:
    """Another hidden world with the same public part: the other seats' concealed tiles and the wall still to draw
    re-dealt among themselves (sizes kept, the seat's own pinned draw kept), their hidden per-seat scalars, random
    streams and deals changed."""
    head, tail, pin = int(st.g[state.G_HEAD]), int(st.g[state.G_TAIL]), int(pub.pin[0])
    seats = [q for q in range(4) if pub.sizes[q] >= 0]
    walls = [w for w in range(head, tail) if w != pin]
    tiles = [k for q in seats for k in range(27) for _ in range(int(st.conc[q, k]))] + [int(st.wall[w]) for w in walls]
    rng.shuffle(tiles)
    i = 0
    for q in seats:
        st.conc[q] = 0
        for _ in range(int(pub.sizes[q])):
            st.conc[q, tiles[i]] += 1
            i += 1
        for col in (state.PS_WAITS, state.PS_LOCKED, state.PS_LOCK_MASK, state.PS_LOCK_FAN, state.PS_DECLINED,
                    state.PS_DRAWN, state.PS_READY, state.PS_START_SH):
            st.ps[q, col] = rng.integers(0, 1 << 20)
        st.rngs[1 + q] = rng.integers(0, 1 << 62)
    for w in walls:
        st.wall[w] = tiles[i]
        i += 1
    st.rngs[0] = rng.integers(0, 1 << 62)
    st.dealt[[q for q in range(4) if q != seat]] = rng.integers(0, 4, (3, 27))


class _Watcher(SearchBot):
    """Plays the policy's answers; at every decision it could search, re-deals the hidden tiles of the real hand's
    step and of another hidden world with the same public part, and records whether the two re-deals agree."""

    def __init__(self, leak: bool = False):
        super().__init__(rollouts=2, wall=55)
        self.leak = leak  # the mutation: the re-deal keeps one hidden count of the state it was given
        self.checked = 0
        self.void_tiles = 0
        self.leaks: list[str] = []

    def _search(self, hand, obs, legal, policy):
        seat, pc = obs.seat, hand.st.pc
        pin = (-1, -1)
        if pc[state.PC_DREW]:
            at = hand.snap.g[state.G_TAIL] - 1 if pc[state.PC_FROM_TAIL] else hand.snap.g[state.G_HEAD]
            pin = (int(at), int(hand.st.ps[seat, state.PS_DRAWN]))
            assert hand.st.wall[at] == pin[1]
        pub = public_of(obs, pin)
        assert int(pub.pool.sum()) == hidden_count(hand.snap, seat, pub)
        dealt = []
        for world in range(2):
            st = engine.alloc(False, 3)
            engine.copy_state(hand.snap, st)
            st.wall[:] = hand.st.wall
            st.dealt[:] = hand.st.dealt
            if world:
                _scramble(st, seat, pub, np.random.default_rng(self.checked))
            given = st.conc.copy()
            assert redeal(suit_table(), st, seat, pub, np.uint64(1234 + self.checked))
            if self.leak:
                q = next(q for q in range(4) if pub.sizes[q] > 0)
                st.conc[q, int(np.argmax(given[q]))] = given[q].max()
            dealt.append(st)
        a, b = dealt
        for q in range(4):  # a re-dealt seat holds none of its clean suit; every unseen tile is dealt once
            if pub.clean[q] >= 0:
                assert a.conc[q, 9 * pub.clean[q]:9 * pub.clean[q] + 9].sum() == 0
            v = int(obs.voids[q])  # under a binding 定缺 none of its declared void (else a 花猪 in the rollouts)
            if q != seat and pub.sizes[q] >= 0 and v >= 0 and obs.rules.void_suit == "declared":
                self.void_tiles += int(a.conc[q, 9 * v:9 * v + 9].sum())
        diff = [f for f in FIELDS if not np.array_equal(getattr(a, f), getattr(b, f))]
        if diff:
            self.leaks.append(f"decision {obs.decision} at {obs.tiles_left} left: {diff}")
        self.checked += 1
        return policy


@pytest.mark.parametrize("config", ["chengdu", "exchange_three"])
def test_samples_use_public_information_only(config):
    """At every own-turn decision of several hands the re-deal of the real step and of a scrambled hidden world
    (same public part) are byte-identical, field by field of the state. A re-deal that kept one hidden tile of the
    real hand (say, an opponent's count of one kind, or one wall position) fails here."""
    rules = load_rules(config, ["seats=[search, expert, expert, expert]"])
    bot = _Watcher()
    play_hands(rules, np.arange(4, dtype=np.int64), 5, {0: bot}, duplicate=True)
    assert bot.checked > 10
    assert not bot.leaks, bot.leaks[:3]
    assert bot.void_tiles == 0


def test_a_leak_of_one_hidden_count_is_caught():
    """The same watch over a re-deal that keeps one opponent's count of one kind from the state it was given."""
    rules = load_rules("chengdu", ["seats=[search, expert, expert, expert]"])
    bot = _Watcher(leak=True)
    play_hands(rules, np.arange(1, dtype=np.int64), 5, {0: bot}, duplicate=True)
    assert len(bot.leaks) > bot.checked // 2


def _search_rules(**params):
    spec = "{bot: search, params: {" + ", ".join(f"{k}: {v}" for k, v in params.items()) + "}}"
    return load_rules("chengdu", [f"seats=[{spec}, expert, expert, expert]"])


def test_search_is_deterministic_and_logged_by_name():
    rules = _search_rules(rollouts=3, wall=6)
    ids = np.arange(4, dtype=np.int64)
    a, b = run_batch(rules, ids, 11, duplicate=True), run_batch(rules, ids, 11, duplicate=True)
    for f in ("h", "p", "w"):
        assert np.array_equal(getattr(a, f), getattr(b, f))
    assert "search" in a.bot_labels


@pytest.mark.parametrize("params,msg", [({"rollouts": 1}, "rollouts"), ({"wall": 70}, "wall"),
                                        ({"policy": "random"}, "policy"), ({"depth": 2}, "params do not fit"),
                                        ({"opponents": "greedy"}, "opponents"), ({"confirm": 1}, "confirm")])
def test_bad_parameters_are_one_clear_error(params, msg):
    with pytest.raises(RulesError, match=msg) if msg == "params do not fit" else pytest.raises(ValueError, match=msg):
        rules = _search_rules(**params)
        rules.seats[0].build()


def test_replay_shows_the_search_reasons_before_what_it_played():
    """`xuezhan replay` of a hand with a search seat: before each of its searched decisions the candidates' mean
    rollout scores, and the discard, kong or pass that follows is the answer the note names (z 0: it departs
    from the expert whenever a candidate's mean is higher, so both verdicts occur)."""
    from simulator.replay import lines, record_hand
    from simulator.replay.text import language, search_note

    rules = _search_rules(rollouts=2, wall=55, z=0)
    notes, departed = 0, 0
    for hand_id in range(3):
        log = record_hand(rules, hand_id, 4)
        assert log.notes
        text = list(lines(log, "en"))
        for note in log.notes:
            event, seat, decision, chosen = note[0], note[1], note[2], note[7]
            assert search_note(note, language("en")) in text
            if decision == "discard":
                typ, ev_seat, tile = log.events[event][:3]
                assert (typ, ev_seat, tile + state.A_TILE0) == (state.EV_DISCARD, seat, chosen)
                notes += 1
                departed += chosen != note[6]
    assert notes > 10 and 0 < departed < notes


def test_the_rollouts_seat_the_bots_at_the_table():
    """Each other seat is played in the rollouts by the compiled bot seated there (the seating is public): against
    three greedy bots the rollouts seat greedy; against the policy's own bot, `opponents: policy` plays the same."""
    from simulator.rules import BOT_INDEX

    ids = np.arange(8, dtype=np.int64)
    bot = SearchBot(rollouts=3, z=1)
    play_hands(load_rules("chengdu", ["seats=[search, greedy, greedy, greedy]"]), ids, 3, {0: bot}, duplicate=True)
    bots = list(bot._ro.game.bots)
    assert sorted(bots) == sorted([BOT_INDEX["expert"]] + [BOT_INDEX["greedy"]] * 3)
    rules = load_rules("chengdu", ["seats=[search, expert, expert, expert]"])
    a, b = (play_hands(rules, ids, 3, {0: SearchBot(rollouts=3, z=1, opponents=o)}, duplicate=True)
            for o in ("seated", "policy"))
    assert np.array_equal(a.p, b.p)
