"""``search``: a player that looks ahead by rollouts (issue 54), a ceiling for the expert.

At each of its own-turn decisions (discard, kong, self-draw win, 唱歌/跳舞) with at most ``wall`` tiles left —
and with ``claims`` also at its decisions on another seat's tile (pung, exposed kong or pass on a discard; win or
decline on a discard or a robbed 加杠) — it samples the hidden tiles from its observation only
(:func:`public_of` → :mod:`simulator.search.sample`), plays
the hand out ``rollouts`` times per legal action on the compiled engine with the rollout ``policy`` at every seat
(:mod:`simulator.search.rollout`; every action of a sample sees the same re-deal) and takes the action with the best
mean final score under the active rules, when it beats the policy's own choice by more than ``z`` standard errors
of the paired difference; otherwise, and at every other decision, it answers as the policy does. Seated by name
(``seats: [search, …]``, with ``params: {rollouts: 32}``); it is a Python bot on the step path, which hands it
the live hand (:meth:`SearchBot.bind_hand`) to copy for its rollouts. ``SearchBot.decisions`` keeps, per searched
decision where it left the policy's choice, ``(decision, tiles left, mean gain over the policy's choice, SE, how)``
(:func:`departure`).
"""

from __future__ import annotations

import numpy as np

from simulator import engine
from simulator.agents import Bot, GreedyBot
from simulator.hands.compiled_rules import CompiledTable
from simulator.hands.observation import Observation
from simulator.kernel import state
from simulator.kernel.shape import shanten
from simulator.rules import BOT_INDEX, BotSpec
from simulator.search.rollout import (
    FAILED,
    J_ANS0,
    J_DECL,
    J_GIVER,
    J_NCAND,
    J_NPRIOR,
    J_ROB,
    J_ROLLS,
    J_SEAT,
    J_SEED,
    J_TILE,
    Rollout,
    answer_at,
    search_values,
)
from simulator.search.sample import Public, hidden_count

SEARCHED = ("discard", "self_kong", "take_win", "declare")  # decisions of the seat's own step
CLAIMS = ("claim", "take_win")  # decisions on another seat's discard or 加杠 (searched with claims: True)
OPPONENTS = ("seated", "policy")  # who plays the other seats in the rollouts (SearchBot)
COMPILED_IDS = frozenset(BOT_INDEX.values())
CONFIRM_SALT = 0x5DEECE66D  # the confirmation's samples: a stream apart from the screen's
# SearchBot.replay_notes, one per searched decision (shown by xuezhan replay): the event count at the decision, the
# seat, the decision, tiles left, samples, (action, mean final score) per candidate best first, the policy's answer,
# the answer given, the gain over the policy's answer of the best candidate and its SE, the samples they rest on.
NOTE_FIELDS = ("event", "seat", "decision", "tiles_left", "samples", "means", "policy", "chosen", "gain", "se",
               "gain_samples")
ACTION_NAMES = {state.A_PASS: "pass", state.A_WIN: "win", state.A_DECLARE: "declare", state.A_DANCE: "dance",
                state.A_PUNG: "pung", state.A_KONG: "kong"}
# The re-deal's profile of an opponent (simulator.search.deal), measured on expert and greedy tables by
# benchmarks/search_profile.py (docs/bots.md, "The search player"): the weight on holding a kind the seat discarded,
# per discard one and two ranks away; the chance a seat is ready, by its melds and discards.
DISCARD_WEIGHT = 0.55
NEAR_WEIGHT = (0.84, 0.92)
READY = (  # by melds set down (0, 1, 2 or more), then by discards made (capped at the last)
    (0.0, 0.0, 0.0, 0.01, 0.03, 0.08, 0.13, 0.22, 0.31, 0.38, 0.46, 0.56, 0.62, 0.67, 0.7, 0.78, 0.8, 0.83),
    (0.0, 0.0, 0.01, 0.02, 0.08, 0.13, 0.2, 0.25, 0.33, 0.4, 0.49, 0.59, 0.66, 0.73, 0.77, 0.79, 0.83, 0.85),
    (0.05, 0.08, 0.1, 0.11, 0.12, 0.24, 0.37, 0.44, 0.51, 0.56, 0.6, 0.66, 0.7, 0.75, 0.81, 0.83, 0.85, 0.9),
)


def public_of(obs: Observation, pin: tuple[int, int, int] = (-1, -1, -1)) -> Public:
    """What ``obs``'s seat knows of the hidden tiles (:class:`~simulator.search.sample.Public`), from the
    observation alone; ``pin``: the wall position, tile and seat of the draw pinned in this step
    (:func:`step_pin`). On another seat's tile (``obs.from_seat``) a 加杠's tile is seen too, and the giver's
    hand is dealt by its profile before this discard (the hand it kept is the one it held since its last one)."""
    pool = 4 - obs.hand.astype(np.int64) - obs.visible.astype(np.int64) - obs.laid_down.astype(np.int64).sum(axis=0)
    giver, discards = obs.from_seat, obs.discards
    if giver >= 0:
        if robbing(obs):
            pool[obs.tile] -= 1  # the 加杠's tile, on the table
        else:
            discards = discards[:-1]
    xueliu = obs.rules.mode == "xueliu"
    strict = obs.rules.void_suit == "declared"
    sizes = np.full(state.N_SEATS, -1, np.int64)
    clean = np.full(state.N_SEATS, -1, np.int64)
    weight = np.ones((state.N_SEATS, state.N_KINDS), np.float64)
    ready = np.zeros(state.N_SEATS, np.float64)
    passed = np.zeros(state.N_SEATS, np.int64)
    for q in range(state.N_SEATS):
        if q == obs.seat or (obs.won[q] >= 0 and not xueliu):
            continue
        sizes[q] = 13 - 3 * len(obs.melds[q])
        pond = obs.ponds[q]
        if strict and obs.voids[q] >= 0:  # its void suit goes first: held only between a draw and its discard
            clean[q] = obs.voids[q]
        weight[q] = discard_weights(pond, obs.voids[q])
        ready[q] = ready_chance(len(pond), len(obs.melds[q]))
        passed[q] = passed_kinds(discards, q)
    return Public(pool, sizes, clean, np.array(pin, np.int64), weight, ready, passed)


def robbing(obs: Observation) -> bool:
    """A decision on another seat's 加杠 (robbing the kong), not on its discard: the tile is not its last discard
    (four copies: a seat that discarded a kind cannot later add the fourth to a pung of it)."""
    return obs.from_seat >= 0 and (not obs.discards or obs.discards[-1] != (obs.from_seat, obs.tile))


def step_pin(hand, obs: Observation) -> tuple[int, int, int]:
    """The draw pinned in the live hand's step (:class:`~simulator.search.sample.Public`): the searching seat's own
    draw (it saw the tile), or −1 −1 −1; on another seat's tile, that tile in the giver's draw (the wall position
    it drew from: public), or in its hand in a step without a draw."""
    if obs.from_seat < 0:
        return own_draw(hand, obs.seat)
    return (draw_at(hand), int(obs.tile), int(obs.from_seat))


def draw_at(hand) -> int:
    """The wall position drawn from in the live hand's step (head or tail: public), or −1 in a step without a draw."""
    pc, snap = hand.st.pc, hand.snap
    if not pc[state.PC_DREW]:
        return -1
    return int(snap.g[state.G_TAIL] - 1 if pc[state.PC_FROM_TAIL] else snap.g[state.G_HEAD])


def own_draw(hand, seat: int) -> tuple[int, int, int]:
    """The wall position, tile and seat of ``seat``'s own draw in the live hand's step (it knows the tile), or −1
    −1 −1."""
    at = draw_at(hand)
    return (at, int(hand.st.ps[seat, state.PS_DRAWN]), seat) if at >= 0 else (-1, -1, -1)


def giver_declare(obs: Observation) -> int:
    """The giver's answer to 唱歌/跳舞 after the discard on offer, as the table saw it (``obs.declared``)."""
    d = int(obs.declared[obs.from_seat]) if obs.from_seat >= 0 else 0
    if d == 0:
        return state.A_PASS
    return state.A_DANCE if d == 2 and obs.rules.declare_ready == "both" else state.A_DECLARE


def discard_weights(pond, void: int) -> np.ndarray:
    """A seat's weight on holding each kind: ``NEAR_WEIGHT[d - 1]`` per discard at distance d in the same suit (a
    tile that would have made a run with it), ``DISCARD_WEIGHT`` for a kind it discarded (once for any number of
    copies); discards of its void suit (which it must throw anyway) are not read."""
    near = np.ones(state.N_KINDS, np.float64)
    discarded = np.zeros(state.N_KINDS, np.bool_)
    for d in pond:
        k = d.tile
        if k // 9 == void:
            continue
        discarded[k] = True
        for dist, f in enumerate(NEAR_WEIGHT, 1):
            for j in (k - dist, k + dist):
                if 0 <= j < state.N_KINDS and j // 9 == k // 9:
                    near[j] *= f
    return np.where(discarded, DISCARD_WEIGHT, near)


def ready_chance(discards: int, melds: int) -> float:
    """The chance a seat still in is ready, by the discards it has made and the melds it has set down."""
    row = READY[min(melds, len(READY) - 1)]
    return row[min(discards, len(row) - 1)]


def passed_kinds(discards, q: int) -> int:
    """The kinds other seats discarded after seat q's last discard (q let them pass: it would have won on a wait)."""
    last = max((i for i, (s, _) in enumerate(discards) if s == q), default=-1)
    mask = 0
    for s, t in discards[last + 1:]:
        if s != q:
            mask |= 1 << t
    return mask


class SearchBot(Bot):
    """Rollout search over the compiled engine. ``rollouts``: samples per legal action; ``wall``: search only with
    at most this many tiles left (0–55); ``policy``: the compiled bot that plays every seat in the rollouts and
    answers the decisions not searched; ``z``: how many standard errors of the paired difference the best action
    must beat the policy's choice by (0 = the best mean always); ``confirm``: when more than 0, a best action that
    passes ``screen`` standard errors on the ``rollouts`` samples is played against the policy's choice on
    ``confirm`` fresh samples, which ``z`` then reads (the screen's best of several means is biased up);
    ``confirm_max``: when above ``confirm``, a confirmation still undecided (its gain passes ``screen`` of its SEs
    but not ``z``) plays ``confirm`` more fresh samples, up to ``confirm_max`` in all (``confirm`` or less: none);
    ``opponents``: ``seated`` (each other seat played in the rollouts by the compiled bot seated there) or
    ``policy`` (every seat by the policy); ``claims``: also search the decisions on another seat's discard or
    加杠 (pung, exposed kong, pass, win or decline), the giver's step replayed with its tile pinned (default: on;
    ``false`` plays as the search did before it)."""

    def __init__(self, rollouts: int = 24, wall: int = 30, policy: str = "expert", z: float = 2.0,
                 confirm: int = 96, screen: float = 1.5, opponents: str = "seated", claims: bool = True,
                 confirm_max: int = 384):
        if not isinstance(rollouts, int) or rollouts < 2:
            raise ValueError(f"rollouts must be an integer ≥ 2, got {rollouts!r}")
        if not isinstance(wall, int) or not 0 <= wall <= 55:
            raise ValueError(f"wall must be an integer in 0–55, got {wall!r}")
        if policy not in BOT_INDEX or policy == "random":
            raise ValueError(f"policy must be a compiled bot other than random ({', '.join(BOT_INDEX)}), "
                             f"got {policy!r}")
        for name, v in (("z", z), ("screen", screen)):
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < 10:
                raise ValueError(f"{name} must be a number in [0, 10), got {v!r}")
        if not isinstance(confirm, int) or confirm == 1 or not 0 <= confirm <= 1000:
            raise ValueError(f"confirm must be 0 (no confirmation) or an integer in 2–1000, got {confirm!r}")
        if isinstance(confirm_max, bool) or not isinstance(confirm_max, int) or not 0 <= confirm_max <= 4000:
            raise ValueError(f"confirm_max must be an integer in 0–4000 (at most confirm: no more samples), "
                             f"got {confirm_max!r}")
        self.rollouts, self.wall, self.policy, self.z = rollouts, wall, policy, float(z)
        self.confirm_max = max(confirm_max, confirm)
        if opponents not in OPPONENTS:
            raise ValueError(f"opponents must be one of {', '.join(OPPONENTS)}, got {opponents!r}")
        self.confirm, self.screen, self.opponents = confirm, float(screen), opponents
        if not isinstance(claims, bool):
            raise ValueError(f"claims must be true or false, got {claims!r}")
        self.claims = claims
        self._giver = (-1, -1, 0, 0)  # the searched decision's giver, tile, 加杠, declare answer (_public)
        self.decisions: list[tuple[str, int, float, float, str]] = []
        self.replay_notes: list[tuple] = []  # this hand's searched decisions, for the replay (NOTE_FIELDS)
        self._hand = None
        self._ro: Rollout | None = None
        self._rules = None
        self._seed = 0
        self._n = 0

    def new_hand(self, seed: int) -> None:
        self._seed, self._n = int(seed), 0
        self.replay_notes = []

    def bind_hand(self, hand) -> None:
        """The live :class:`simulator.hands.game.Hand` (called by the step path after each deal): copied, with every
        hidden tile re-dealt from the observation, for the rollouts; the policy's answers read the seat's public
        view of it, as the compiled bots do."""
        self._hand = hand
        if self._ro is None or self._rules != hand.rules:
            self._ro, self._rules = self._rollout_records(hand), hand.rules
            self._warm_up(hand)

    def _warm_up(self, hand) -> None:
        """Compile the rollouts here, before any decision (whose time limit a cold compile would exceed): a decision
        point of no kind, a search of no sample."""
        ro = self._ro
        ro.game.io[:] = 0
        ro.game.io[state.DP_KIND] = -1
        answer_at(ro, hand.st, hand.st.wall, hand.st.pc, 0)
        pub = Public(np.zeros(27, np.int64), np.full(4, -1, np.int64), np.full(4, -1, np.int64),
                     np.full(3, -1, np.int64), np.ones((4, 27)), np.zeros(4), np.zeros(4, np.int64))
        job = np.zeros(J_ANS0 + 1, np.int64)
        job[J_GIVER] = -1
        search_values(ro, hand.snap, hand.st.wall, hand.st.pc, pub, job, np.zeros((1, 1), np.float64))

    def _rollout_records(self, hand) -> Rollout:
        table = CompiledTable.of(hand.rules)
        row = self._row = BotSpec(bot=self.policy).to_row()
        game = table.game(np.full(state.N_SEATS, BOT_INDEX[self.policy], np.int64))
        slots = table.win_slots
        return Rollout(game, engine.alloc(False, slots), engine.alloc(False, slots),
                       np.stack([row] * state.N_SEATS).astype(np.int64), engine.alloc(False, slots))

    def exchange(self, obs: Observation) -> int:
        return GreedyBot.exchange(self, obs)  # the expert's (and value's) 换三张 is greedy's (bots.bot_exchange)

    def act(self, obs: Observation) -> int:
        hand = self._hand
        if hand is None:
            raise RuntimeError("the search bot plays on the step path (simulate, study, play_hands), which hands it "
                               "the table to copy for its rollouts")
        if obs.decision == "exchange":
            return self.exchange(obs)
        self._n += 1
        self._seat_rollouts(hand, obs.seat)
        policy = self._policy_answer(hand, obs.seat)
        legal = obs.legal_actions
        if len(legal) < 2 or not self._searchable(hand, obs):
            return policy
        return self._search(hand, obs, legal, policy)

    def _seat_rollouts(self, hand, seat: int) -> None:
        """The rollouts' players: this seat the policy; every other seat the compiled bot seated there, with its
        parameters (the seating is public), or the policy for a seat of a Python bot or with ``opponents:
        policy``."""
        ro = self._ro
        for q in range(state.N_SEATS):
            b = int(hand.game.bots[q])
            if q == seat or self.opponents == "policy" or b not in COMPILED_IDS:
                ro.game.bots[q], ro.bpar[q] = BOT_INDEX[self.policy], self._row
            else:
                ro.game.bots[q], ro.bpar[q] = b, hand.bpar[q]

    def _policy_answer(self, hand, seat: int) -> int:
        ro = self._ro
        ro.game.io[:] = hand.game.io
        return int(answer_at(ro, hand.st, hand.st.wall, hand.st.pc, seat))

    def _searchable(self, hand, obs: Observation) -> bool:
        pc = hand.st.pc
        if obs.tiles_left > self.wall or obs.rules.mode == "xueliu" or pc[state.PC_STAGE] != state.STAGE_TURNS:
            return False
        if obs.from_seat >= 0:  # another seat's discard or 加杠, in its step
            return self.claims and obs.decision in CLAIMS and pc[state.PC_CUR] == obs.from_seat
        return (obs.decision in SEARCHED and pc[state.PC_CUR] == obs.seat
                and all(s == obs.seat for s, _, _ in hand.answers))

    def _public(self, hand, obs: Observation) -> Public:
        """The decision's public knowledge (:func:`public_of` with :func:`step_pin`); on another seat's tile also
        what the replay of the giver's step needs (``_giver``), all public."""
        self._giver = ((obs.from_seat, obs.tile, int(robbing(obs)), giver_declare(obs)) if obs.from_seat >= 0
                       else (-1, -1, 0, 0))
        return public_of(obs, step_pin(hand, obs))

    def _search(self, hand, obs: Observation, legal: tuple[int, ...], policy: int) -> int:
        seat, snap = obs.seat, hand.snap
        pub = self._public(hand, obs)
        hidden = hidden_count(snap, seat, pub)
        if int(pub.pool.sum()) != hidden:
            raise RuntimeError(f"search: {int(pub.pool.sum())} unseen tiles but {hidden} hidden (a bug)")
        base = (self._seed * 1_000_003 + self._n) & (2**62 - 1)
        out = self._values(hand, seat, pub, legal, self.rollouts, base)
        if out.shape[0] < 2:
            return policy
        e = legal.index(policy)
        means = out.mean(axis=0)
        best = int(np.argmax(means))
        gain, se = paired(out[:, best], out[:, e])
        samples = out.shape[0]
        if best != e and self.confirm and gain > self.screen * se:
            # fresh samples for the two: the screen picked the best of several noisy means (the winner's curse)
            gain, se, samples = self._confirm(hand, seat, pub, (policy, legal[best]), base)
        chosen = int(legal[best]) if best != e and gain > self.z * se else policy
        order = np.argsort(-means, kind="stable")
        self.replay_notes.append((int(hand.st.g[state.G_NEV]), seat, obs.decision, int(obs.tiles_left), out.shape[0],
                           tuple((int(legal[i]), float(means[i])) for i in order), policy, chosen, gain, se,
                           samples))
        if chosen != policy:
            self.decisions.append((obs.decision, int(obs.tiles_left), gain, se, departure(obs, policy, chosen)))
        return chosen

    def _confirm(self, hand, seat: int, pub: Public, pair, base: int) -> tuple[float, float, int]:
        """The gain of ``pair[1]`` over the policy's ``pair[0]`` on fresh samples, its SE and their number: ``confirm``
        of them, then ``confirm`` more while the gain passes ``screen`` SEs but not ``z``, up to ``confirm_max``."""
        fresh = np.zeros((0, 2), np.float64)
        gain, se, batch = 0.0, 0.0, 0
        while True:
            more = self._values(hand, seat, pub, pair, self.confirm, base ^ (CONFIRM_SALT + batch))
            fresh = np.concatenate([fresh, more])
            batch += 1
            if fresh.shape[0] >= 2:
                gain, se = paired(fresh[:, 1], fresh[:, 0])
            if not self.screen * se < gain <= self.z * se or (batch + 1) * self.confirm > self.confirm_max:
                return gain, se, fresh.shape[0]

    def _values(self, hand, seat: int, pub: Public, cands, n: int, seed: int) -> np.ndarray:
        """The seat's final score in each of ``n`` samples (rows; failed deals left out) per candidate (columns): the
        step replayed with the seat's own answers in it so far (never another seat's: hidden)."""
        prior = self._prior(hand, seat)
        job = np.zeros(J_ANS0 + len(prior) + len(cands), np.int64)
        job[J_SEAT], job[J_ROLLS], job[J_NPRIOR], job[J_NCAND], job[J_SEED] = seat, n, len(prior), len(cands), seed
        job[J_GIVER], job[J_TILE], job[J_ROB], job[J_DECL] = self._giver
        job[J_ANS0:J_ANS0 + len(prior)] = prior
        job[J_ANS0 + len(prior):] = cands
        out = np.zeros((n, len(cands)), np.float64)
        search_values(self._ro, hand.snap, hand.st.wall, hand.st.pc, pub, job, out)
        return out[out[:, 0] > FAILED]

    @staticmethod
    def _prior(hand, seat: int) -> list[int]:
        """The seat's own answers in the live step so far (another seat's answers in it are hidden: never read)."""
        return [a for s, _, a in hand.answers if s == seat]


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The mean of the paired difference ``a − b`` and its standard error."""
    d = a - b
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.shape[0]))


def departure(obs: Observation, policy: int, chosen: int) -> str:
    """How the search's choice differs from the policy's: for a discard whether it leaves the hand further from
    ready (``fold``), nearer (``push``) or as near (``tile``); a win passed up ``decline``; otherwise the action
    taken (``pass``, ``pung``, ``kong``, ``win`` …; a self-kong ``kong``)."""
    if obs.decision == "take_win" and chosen == state.A_PASS:
        return "decline"
    if obs.decision != "discard":
        return ACTION_NAMES.get(chosen, "kong")
    raw = obs._raw
    sh = []
    for a in (policy, chosen):
        conc = raw["conc"].copy()
        conc[a - state.A_TILE0] -= 1
        sh.append(shanten(raw["table"], conc, raw["mk"], raw["mt"], raw["nm"], raw["void"]))
    return "fold" if sh[1] > sh[0] else ("push" if sh[1] < sh[0] else "tile")
