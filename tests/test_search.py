"""The search player (issue 54): its samples of the hidden tiles use public information only, it is deterministic
for a seed, and it is seated by name like every bot."""

from __future__ import annotations

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
import pytest

from simulator import engine
from simulator.agents import GreedyBot
from simulator.hands import run_batch
from simulator.hands.game import play_hands
from simulator.kernel import state
from simulator.kernel.tables import suit_table
from simulator.rules import RulesError, load_rules
from simulator.search import SearchBot
from simulator.search.sample import hidden_count, redeal

FIELDS = tuple(f for f in state.HandState._fields if f != "events")
HIDDEN_PS = (state.PS_WAITS, state.PS_LOCKED, state.PS_LOCK_MASK, state.PS_LOCK_FAN, state.PS_DECLINED, state.PS_DRAWN,
             state.PS_READY, state.PS_START_SH)  # another seat's per-seat scalars it cannot see


def _scramble(st, seat: int, pub, rng: np.random.Generator) -> None:
    """Another hidden world with the same public part: the other seats' concealed tiles and the wall still to draw
    re-dealt among themselves (each seat's count kept; only the searching seat's own draw stays, which it saw —
    on another seat's tile that seat's draw is hidden too), their hidden per-seat scalars, random streams and deals
    changed."""
    head, tail = int(st.g[state.G_HEAD]), int(st.g[state.G_TAIL])
    own = int(pub.pin[0]) if int(pub.pin[2]) == seat else -1
    seats = [q for q in range(4) if pub.sizes[q] >= 0]
    sizes = [int(st.conc[q].sum()) for q in seats]  # a giver without a draw holds its tile besides its sizes
    walls = [w for w in range(head, tail) if w != own]
    tiles = [k for q in seats for k in range(27) for _ in range(int(st.conc[q, k]))] + [int(st.wall[w]) for w in walls]
    rng.shuffle(tiles)
    i = 0
    for q, n in zip(seats, sizes, strict=True):
        st.conc[q] = 0
        for _ in range(n):
            st.conc[q, tiles[i]] += 1
            i += 1
        for col in HIDDEN_PS:
            st.ps[q, col] = rng.integers(0, 1 << 20)
        st.rngs[1 + q] = rng.integers(0, 1 << 62)
    for w in walls:
        st.wall[w] = tiles[i]
        i += 1
    st.rngs[0] = rng.integers(0, 1 << 62)
    st.dealt[[q for q in range(4) if q != seat]] = rng.integers(0, 4, (3, 27))


class _World(NamedTuple):
    """The scrambled world as the search reads a live hand: the step's start, the live wall, play counters and
    per-seat scalars, and the answers given in the step (another seat's hidden ones left out)."""

    snap: state.HandState
    st: SimpleNamespace
    answers: list


class _Watcher(SearchBot):
    """Plays the policy's answers; at every decision it could search (claims too), re-deals the hidden tiles of the
    real hand's step and of another hidden world with the same public part, records whether the two re-deals agree,
    and plays both worlds' rollouts of every legal action (their scores must agree too)."""

    def __init__(self, leak: str = ""):
        super().__init__(rollouts=2, wall=55, claims=True)
        self.leak = leak  # a mutation: "tile" keeps one hidden count, "answer" replays another seat's answers
        self.checked = 0
        self.claims_checked = 0
        self.void_tiles = 0
        self.leaks: list[str] = []

    def _prior(self, hand, seat):
        return [a for _, _, a in hand.answers] if self.leak == "answer" else super()._prior(hand, seat)

    def _search(self, hand, obs, legal, policy):
        seat = obs.seat
        pub = self._public(hand, obs)
        if obs.from_seat < 0 and pub.pin[0] >= 0:
            assert hand.st.wall[pub.pin[0]] == pub.pin[1]  # its own draw
        assert int(pub.pool.sum()) == hidden_count(hand.snap, seat, pub)
        dealt, values = [], []
        for world in range(2):
            st = engine.alloc(False, 3)
            engine.copy_state(hand.snap, st)
            st.wall[:] = hand.st.wall
            st.dealt[:] = hand.st.dealt
            view = hand
            if world:  # the search reads the scrambled world as it reads a live hand
                _scramble(st, seat, pub, np.random.default_rng(self.checked))
                live = hand.st.ps.copy()  # the decision's scalars, another seat's hidden ones scrambled
                for q in range(4):
                    if q != seat:
                        live[q, list(HIDDEN_PS)] = st.ps[q, list(HIDDEN_PS)]
                view = _World(_copy(st), SimpleNamespace(wall=st.wall.copy(), pc=hand.st.pc, ps=live),
                              [x for x in hand.answers if x[0] == seat])
            pub_w = self._public(view, obs)
            values.append(self._values(view, seat, pub_w, legal, 2, 99 + self.checked))
            given = st.conc.copy()
            assert redeal(suit_table(), st, seat, pub_w, np.uint64(1234 + self.checked))
            if self.leak == "tile":
                q = next(q for q in range(4) if pub.sizes[q] > 0)
                st.conc[q, int(np.argmax(given[q]))] = given[q].max()
            dealt.append(st)
        a, b = dealt
        for q in range(4):  # a re-dealt seat holds none of its clean suit; every unseen tile is dealt once
            held = a.conc[q].astype(np.int64)
            if pub.pin[0] < 0 and pub.pin[2] == q >= 0 and pub.pin[1] >= 0:
                held[pub.pin[1]] -= 1  # the tile a giver without a draw gives up (its void suit's, may be)
            if pub.clean[q] >= 0 and not self.leak:
                assert held[9 * pub.clean[q]:9 * pub.clean[q] + 9].sum() == 0
            v = int(obs.voids[q])  # under a binding 定缺 none of its declared void (else a 花猪 in the rollouts)
            if q != seat and pub.sizes[q] >= 0 and v >= 0 and obs.rules.void_suit == "declared":
                self.void_tiles += int(held[9 * v:9 * v + 9].sum())
        diff = [f for f in FIELDS if not np.array_equal(getattr(a, f), getattr(b, f))]
        if values[0].tobytes() != values[1].tobytes() or values[0].shape != values[1].shape:
            diff.append("rollout scores")
        if diff:
            self.leaks.append(f"decision {obs.decision} at {obs.tiles_left} left: {diff}")
        self.checked += 1
        self.claims_checked += obs.from_seat >= 0
        return policy


def _copy(st):
    out = engine.alloc(False, 3)
    engine.copy_state(st, out)
    out.wall[:] = st.wall
    return out


@pytest.mark.parametrize("config", ["chengdu", "exchange_three"])
def test_samples_use_public_information_only(config):
    """At every decision the search could search of several hands — its own turns and, with ``claims``, pungs,
    kongs, passes and wins on another seat's discard or 加杠 — the re-deal of the real step and of a scrambled
    hidden world (same public part: the other seats' tiles, the wall and the giver's draw shuffled, another seat's
    answers in the step dropped) are byte-identical, field by field of the state, and so are the rollouts' scores
    of every legal action. A re-deal that kept one hidden tile of the real hand (say, an opponent's count of one
    kind, or one wall position), or a replay of another seat's answer to the same discard, fails here."""
    rules = load_rules(config, ["seats=[search, expert, expert, expert]"])
    bot = _Watcher()
    play_hands(rules, np.arange(8, dtype=np.int64), 5, {0: bot, 1: GreedyBot()}, duplicate=True)
    assert bot.checked > 10 and bot.claims_checked >= 3
    assert not bot.leaks, bot.leaks[:3]
    assert bot.void_tiles == 0


@pytest.mark.parametrize("leak", ["tile", "answer"])
def test_a_leak_is_caught(leak):
    """The same watch over a re-deal that keeps one opponent's count of one kind from the state it was given, and
    over rollouts that replay every answer given in the step (another seat's too, hidden: its decline of a
    self-drawn win, its kong passed)."""
    rules = load_rules("chengdu", ["seats=[search, expert, expert, expert]"])
    bot = _Watcher(leak=leak)
    play_hands(rules, np.arange(8, dtype=np.int64), 5, {0: bot, 1: GreedyBot()}, duplicate=True)
    assert bot.leaks
    if leak == "tile":
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
                                        ({"opponents": "greedy"}, "opponents"), ({"confirm": 1}, "confirm"),
                                        ({"claims": 1}, "claims"),
                                        ({"confirm_max": 5000}, "confirm_max")])
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


def test_claims_are_searched_and_replayed_only_when_asked():
    """With ``claims: true`` the search also decides pungs, exposed kongs and passes on another seat's discard, and
    wins or declines on it: `xuezhan replay` shows the candidates and verdict before what followed, and the pung,
    kong, pass or win that follows is the answer the note names; with ``claims: false`` no such decision is
    searched."""
    from simulator.replay import lines, record_hand
    from simulator.replay.text import language, search_note

    seen: dict[str, int] = {}
    for claims in (True, False):
        rules = _search_rules(rollouts=2, wall=55, z=0, claims=str(claims).lower())
        for hand_id in range(30 if claims else 10):  # with claims: until both kinds were seen
            if claims and _both(seen):
                break
            log = record_hand(rules, hand_id, 4)
            text = list(lines(log, "en"))
            for note in log.notes:
                event, seat, decision, chosen = note[0], note[1], note[2], note[7]
                prev = log.events[event - 1]  # the discard (or 加杠) decided on, for a decision on another seat's tile
                if decision not in ("claim", "take_win") or prev[1] == seat:
                    continue
                assert claims, "a claim searched with claims: false"
                assert search_note(note, language("en")) in text
                nxt = log.events[event]
                if chosen == state.A_PUNG:
                    assert (nxt[0], nxt[1]) == (state.EV_PUNG, seat)
                elif chosen == state.A_KONG:
                    assert (nxt[0], nxt[1]) == (state.EV_KONG, seat)
                elif chosen == state.A_WIN:
                    assert any(e[0] == state.EV_WIN and e[1] == seat for e in log.events[event:event + 8])
                else:
                    assert not (nxt[0] in (state.EV_PUNG, state.EV_KONG) and nxt[1] == seat)
                key = f"{decision} {'pass' if chosen == state.A_PASS else 'take'}"
                seen[key] = seen.get(key, 0) + 1
    assert _both(seen), seen


def _both(seen: dict[str, int]) -> bool:
    """Two or more claim decisions and a win-or-decline on another seat's discard among the searched ones."""
    return (seen.get("claim pass", 0) + seen.get("claim take", 0) >= 2
            and seen.get("take_win pass", 0) + seen.get("take_win take", 0) >= 1)


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


@pytest.mark.parametrize("cap,gains,played", [
    (96, [2.0], 1),  # confirm only (confirm_max 0): the first batch decides, undecided or not
    (384, [2.0, 4.0], 2),  # undecided (1.5 < 2 ≤ 3 SEs): a second batch, then decided
    (384, [2.0, 2.0, 2.0, 2.0, 2.0], 4),  # never decided: stops at confirm_max (4 batches)
    (384, [1.0], 1),  # below the screen: decided against at once
    (384, [4.0], 1),  # above z: decided for at once
])
def test_an_undecided_confirmation_plays_more_fresh_samples(cap, gains, played):
    """confirm_max: while the confirmation's gain passes `screen` of its SEs but not `z`, `confirm` more fresh
    samples (a stream of their own) are played and pooled, up to confirm_max; a decided one stops there."""
    bot = SearchBot(confirm=96, confirm_max=0 if cap == 96 else cap, screen=1.5, z=3)
    seeds = []

    def values(hand, seat, pub, cands, n, seed):
        """Batch b: paired gains of unit SD and mean gains[b] SEs of the samples pooled so far."""
        seeds.append(seed)
        b = len(seeds) - 1
        d = np.random.default_rng(b).standard_normal(n)
        d = (d - d.mean()) / d.std(ddof=1)
        out = np.zeros((n, 2))
        pooled = n * len(seeds)
        out[:, 1] = d + gains[b] / np.sqrt(pooled)
        return out

    bot._values = values
    gain, se, samples = bot._confirm(None, 0, None, (0, 1), 12345)
    assert len(seeds) == played and len(set(seeds)) == played and samples == 96 * played
    if played < 4 and cap > 96:
        assert not 1.5 * se < gain <= 3 * se  # it stopped because it was decided
