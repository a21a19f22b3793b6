"""A PettingZoo AEC environment over the step path: one episode = one hand, rewards = score changes.

Optional extra ``[rl]`` (``pip install 'xuezhan[rl]'``: pettingzoo, gymnasium). Agents ``seat_0`` … ``seat_3``;
seats given a bot in ``seats`` (a compiled bot's name, a spec with parameters as in a rule file, a
``module:Class`` Python bot or a bot object) play inline and never appear as the agent to move. For one learning
seat against three bots as a plain Gymnasium env, see :mod:`simulator.agents.gym`. Actions are the
integers of :mod:`simulator.kernel.state` (``Discrete(36)``); the observation is ``{"observation": int8[738],
"action_mask": int8[36]}`` (layout in :func:`encode`, seats rotated so that block 0 is the observer). Rewards are
each seat's change of net score (base units) caused by the step, for every seat; the first step's include what the
deal paid (``settlement.dealer_compensation``), so a seat's rewards add up to its score for the hand.

Reproducible against ``simulate``: ``reset(seed=S, options={"hand_id": H})`` deals hand H of master seed S, so
agents that choose as the compiled bots do reproduce the logged hand.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
except ImportError as exc:  # one line naming the extra, not a traceback through this module
    raise ImportError(f"the RL environments need the rl extra: pip install 'xuezhan[rl]' ({exc})") from None

from simulator.agents import Observation, observe
from simulator.hands.compiled_rules import CompiledTable, DealPlan
from simulator.hands.game import Hand
from simulator.kernel.state import DECISIONS, N_ACTIONS, N_KINDS, N_SEATS
from simulator.kernel.tiles import format_counts, tile_str
from simulator.rules import apply_overrides, load_raw, validate

# Blocks added later come last, so the offsets of the blocks before them stay: the 298-long layout, 唱歌/跳舞 (to 414),
# then the winners' public hands (to 738)
OBS_LEN = 27 + 4 * 27 + 4 * 27 + 4 * 4 + 4 + len(DECISIONS) + 27 + 1 + 4 * 2 + 4 * 27 + 3 * 4 * 27
MELD_COUNT = {"pung": 3, "kong": 4, "concealed_kong": 4}


def encode(obs: Observation) -> np.ndarray:
    """``int8[OBS_LEN]``: own concealed counts (27); per seat, observer first, melded counts (4×27; another's
    concealed kong is not shown) and discarded counts (4×27); declared void one-hot (4×4, slot 3 = none/unknown);
    has won (4); decision one-hot (7, order of ``state.DECISIONS``); tile on offer one-hot (27); tiles left (1);
    per seat, observer first, declared ready (4×2: 唱歌, 跳舞; both 0 = not declared) and the kinds a dancer
    shows as its waits (4×27, 1 per kind; all 0 for a seat that has not danced); per seat, observer first, the
    counts of a 血战 winner's laid-down hand (4×27, ``Observation.laid_down``), the kinds it has won on (4×27, 1 per
    kind) and the kinds others discarded after its first win that it did not win on (4×27; both for 血流's locked
    hands)."""
    v = np.zeros(OBS_LEN, np.int8)
    v[:27] = obs.hand
    base = 27
    for i in range(N_SEATS):
        q = (obs.seat + i) % N_SEATS
        for kind, tile in obs.melds[q]:
            if tile >= 0:
                v[base + 27 * i + tile] += MELD_COUNT[kind]
    base += 4 * 27
    rel = {(obs.seat + i) % N_SEATS: i for i in range(N_SEATS)}
    for q, tile in obs.discards:
        v[base + 27 * rel[q] + tile] += 1
    base += 4 * 27
    for i in range(N_SEATS):
        q = (obs.seat + i) % N_SEATS
        void = int(obs.voids[q])
        v[base + 4 * i + (void if void >= 0 else 3)] = 1
    base += 16
    for i in range(N_SEATS):
        v[base + i] = obs.won[(obs.seat + i) % N_SEATS] >= 0
    base += 4
    v[base + DECISIONS.index(obs.decision)] = 1
    base += len(DECISIONS)
    if obs.tile >= 0:
        v[base + obs.tile] = 1
    v[base + 27] = obs.tiles_left
    base += 28
    for i in range(N_SEATS):
        q = (obs.seat + i) % N_SEATS
        declared = int(obs.declared[q])  # 0 none, 1 sing, 2 dance
        if declared:
            v[base + 2 * i + declared - 1] = 1
        v[base + 8 + 27 * i + np.array(obs.shown[q], np.int64)] = 1
    base += 8 + 4 * 27
    for i in range(N_SEATS):
        q = (obs.seat + i) % N_SEATS
        v[base + 27 * i:base + 27 * (i + 1)] = obs.laid_down[q]
        v[base + 4 * 27 + 27 * i + np.array(obs.won_on[q], np.int64)] = 1
        v[base + 8 * 27 + 27 * i + np.array(obs.cleared[q], np.int64)] = 1
    return v


class XuezhanEnv(AECEnv):
    """One hand of 血战到底 per episode.

    ``config``: a rule set name or path; ``overrides``: rule overrides on it (``--set`` strings or a mapping, as
    in ``load_rules``). ``seats``: four entries — ``None`` for an agent of this environment, else a bot played
    inline: a compiled bot's name (``"greedy"``), a spec with parameters (``{"bot": "value", "decline_below": 3}``),
    a Python bot ``"module:Class"`` (or ``{"bot": "module:Class", "params": {...}}``) or a bot object with
    ``act(obs)`` (docs/bots.md). ``render_mode="ansi"``: ``render()`` returns the table as text.
    Hand H of master seed S is dealt and dealt to as in ``simulate`` (wall, bot streams, dealer = H % 4)."""

    metadata = {"render_modes": ["ansi"], "name": "xuezhan_v0", "is_parallelizable": False}

    def __init__(self, config: str = "chengdu", seats=(None, None, None, None), seed: int = 0, *,
                 overrides=None, render_mode: str | None = None):
        super().__init__()
        if len(seats) != N_SEATS:
            raise ValueError(f"seats: needs 4 entries, got {len(seats)}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode: {render_mode!r} is not one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        objects = {i: s for i, s in enumerate(seats) if s is not None and hasattr(s, "act")}
        specs = ["greedy" if s is None or i in objects else s for i, s in enumerate(seats)]
        data = apply_overrides(apply_overrides(load_raw(config), overrides), {"seats": specs})  # seating last
        self.rules = validate(data, f"{config} (env)")
        # Python bots of this env: objects given, and module:Class specs built (each seat its own instance)
        self.bots: dict[int, Any] = {**{i: self.rules.seats[i].build() for i in self.rules.python_seats()},
                                     **objects}
        self.external = tuple(i for i, s in enumerate(seats) if s is None)
        if not self.external:
            raise ValueError("seats: at least one seat must be None (an agent of this environment)")
        self.possible_agents = [f"seat_{i}" for i in self.external]
        self._seat_of = {a: i for a, i in zip(self.possible_agents, self.external, strict=True)}
        self.hand = Hand(CompiledTable.of(self.rules), (*self.external, *self.bots), record=True)
        self.master_seed = seed
        self.hand_id = -1
        self.decision = None

    @functools.cache  # noqa: B019 - one space object per agent, as PettingZoo expects
    def observation_space(self, agent):
        return spaces.Dict({"observation": spaces.Box(0, 127, (OBS_LEN,), np.int8),
                            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8)})

    @functools.cache  # noqa: B019
    def action_space(self, agent):
        return spaces.Discrete(N_ACTIONS)

    def reset(self, seed=None, options=None):
        """Deal the next hand (``options={"hand_id": H}``: that hand) of master seed ``seed`` (kept when None)."""
        if seed is not None:
            self.master_seed = int(seed)
            self.hand_id = -1
        self.hand_id = int(options["hand_id"]) if options and "hand_id" in options else self.hand_id + 1
        plan = DealPlan.of(self.master_seed, [self.hand_id])  # as run_batch deals it
        self.hand.deal(plan.wall_seeds[0], plan.bot_seeds[0], int(plan.dealers[0]), label=str(self.hand_id))
        for s, bot in self.bots.items():
            new_hand = getattr(bot, "new_hand", None)
            if new_hand is not None:  # the seat's own stream seed, as in simulate (simulator.hands.game.play_hands)
                new_hand(int(self.hand.st.rngs[1 + s]))
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._scores = np.zeros(N_SEATS, self._net().dtype)  # the deal pays the dealer compensation: a reward
        self._advance()

    def _net(self) -> np.ndarray:
        """Each seat's net score so far in base units (money units ÷ ``settlement.money_scale``: then floats)."""
        return self.rules.base_units(self.hand.st.score.sum(axis=1).copy())

    def _advance(self) -> None:
        self.decision = self.hand.advance()
        while self.decision is not None and self.decision.seat in self.bots:  # a Python bot's turn: play it
            self.hand.apply(self.bots[self.decision.seat].act(observe(self.hand, self.decision)))
            self.decision = self.hand.advance()
        net = self._net()
        delta = net - self._scores
        self._scores = net
        for a in self.agents:
            self.rewards[a] = delta[self._seat_of[a]].item()  # an int, a float under money_scale
        if self.decision is None:
            for a in self.agents:
                self.terminations[a] = True
                self.infos[a] = {"score": net[self._seat_of[a]].item()}
            self.agent_selection = self.agents[0] if self.agents else None
        else:
            self.agent_selection = f"seat_{self.decision.seat}"
        self._accumulate_rewards()

    def observation_object(self, agent) -> Observation | None:
        """The typed :class:`simulator.agents.Observation` of ``agent`` if it is to move (else None): for bots
        written against the Python bot API."""
        if self.decision is None or agent != self.agent_selection:
            return None
        return observe(self.hand, self.decision)

    def observe(self, agent):
        obs = self.observation_object(agent)
        if obs is None:  # not this agent's decision: its own hand and nothing to do
            seat = self._seat_of[agent]
            v = np.zeros(OBS_LEN, np.int8)
            v[:N_KINDS] = self.hand.st.conc[seat]
            return {"observation": v, "action_mask": np.zeros(N_ACTIONS, np.int8)}
        return {"observation": encode(obs), "action_mask": obs.action_mask.copy()}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        self.hand.apply(int(action))
        self._advance()

    def render(self) -> str | None:
        """``render_mode="ansi"``: the table as text (what every seat shows, and the concealed hands of this
        env's agents; bots' hands stay hidden); None without a render mode."""
        if self.render_mode is None:
            return None
        return render_table(self)

    def close(self):
        return None


def render_table(e: XuezhanEnv) -> str:
    """The hand as text: one line per seat (bot or agent, score, declared void, melds, discards; the concealed
    tiles of the env's agents), then the tiles left and the decision pending."""
    hand, seats = e.hand, e.rules.seats
    obs = observe(hand, e.decision) if e.decision is not None else None
    lines = [f"hand {e.hand_id} of seed {e.master_seed}"]
    discards: dict[int, list[int]] = {s: [] for s in range(N_SEATS)}
    melds = obs.melds if obs is not None else None
    if obs is not None:
        for q, tile in obs.discards:
            discards[q].append(tile)
    net = e._net()
    for s in range(N_SEATS):
        who = f"agent seat_{s}" if s in e.external else f"bot {seats[s].bot}"
        v = net[s].item()
        parts = [f"seat {s} ({who}): {v:+d}" if isinstance(v, int) else f"seat {s} ({who}): {v:+g}"]
        if s in e.external:
            parts.append(f"hand {format_counts(hand.st.conc[s])}")
        if melds is not None and melds[s]:
            parts.append("melds " + " ".join(f"{k}:{tile_str(t) if t >= 0 else '?'}" for k, t in melds[s]))
        if discards[s]:
            parts.append("discards " + " ".join(tile_str(t) for t in discards[s]))
        lines.append("  " + "; ".join(parts))
    if obs is None:
        lines.append("hand over")
    else:
        offer = f" on {tile_str(obs.tile)}" if obs.tile >= 0 else ""
        lines.append(f"{obs.tiles_left} tiles left; seat {obs.seat} to decide {obs.decision}{offer}, legal "
                     f"{list(obs.legal_actions)}")
    return "\n".join(lines)


def env(**kwargs) -> XuezhanEnv:
    """``XuezhanEnv(**kwargs)``, PettingZoo's conventional constructor name."""
    return XuezhanEnv(**kwargs)
