"""A PettingZoo AEC environment over the step path: one episode = one hand, rewards = score changes.

Optional extra ``[rl]`` (``pip install xuezhan[rl]``: pettingzoo, gymnasium). Agents ``seat_0`` … ``seat_3``;
seats given a compiled bot name in ``seats`` play inline and never appear as the agent to move. Actions are the
integers of :mod:`simulator.state` (``Discrete(36)``); the observation is ``{"observation": int8[414],
"action_mask": int8[36]}`` (layout in :func:`encode`, seats rotated so that block 0 is the observer). Rewards are
each seat's change of net score (base units) caused by the step, for every seat.

Reproducible against ``simulate``: ``reset(seed=S, options={"hand_id": H})`` deals hand H of master seed S, so
agents that choose as the compiled bots do reproduce the logged hand.
"""

from __future__ import annotations

import functools

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from simulator import engine
from simulator.agents import Observation, observe
from simulator.game import Hand
from simulator.rules import BOT_INDEX, load_rules
from simulator.state import DECISIONS, N_ACTIONS, N_KINDS, N_SEATS

# 唱歌/跳舞 come last, so the offsets of the blocks before them are those of the 298-long layout they extend
OBS_LEN = 27 + 4 * 27 + 4 * 27 + 4 * 4 + 4 + len(DECISIONS) + 27 + 1 + 4 * 2 + 4 * 27
MELD_COUNT = {"pung": 3, "kong": 4, "concealed_kong": 4}


def encode(obs: Observation) -> np.ndarray:
    """``int8[OBS_LEN]``: own concealed counts (27); per seat, observer first, melded counts (4×27; another's
    concealed kong is not shown) and discarded counts (4×27); declared void one-hot (4×4, slot 3 = none/unknown);
    has won (4); decision one-hot (7, order of ``state.DECISIONS``); tile on offer one-hot (27); tiles left (1);
    per seat, observer first, declared ready (4×2: 唱歌, 跳舞; both 0 = not declared) and the kinds a dancer
    shows as its waits (4×27, 1 per kind; all 0 for a seat that has not danced)."""
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
    return v


class XuezhanEnv(AECEnv):
    """One hand of 血战到底 per episode. ``config``: a rule set name or path; ``seats``: four entries, ``None`` for
    an agent of this environment or a compiled bot name (``greedy``, ``value`` …) for a seat played inline."""

    metadata = {"render_modes": [], "name": "xuezhan_v0", "is_parallelizable": False}

    def __init__(self, config: str = "chengdu", seats=(None, None, None, None), seed: int = 0):
        super().__init__()
        if len(seats) != N_SEATS:
            raise ValueError(f"seats: needs 4 entries, got {len(seats)}")
        compiled = ["greedy" if s is None else s for s in seats]
        for s in compiled:
            if s not in BOT_INDEX:
                raise ValueError(f"seats: {s!r} is not a compiled bot ({', '.join(BOT_INDEX)}) or None")
        self.rules = load_rules(config, {"seats": compiled})
        self.external = tuple(i for i, s in enumerate(seats) if s is None)
        self.possible_agents = [f"seat_{i}" for i in self.external]
        self._seat_of = {a: i for a, i in zip(self.possible_agents, self.external, strict=True)}
        bot_ids, bot_par = self.rules.bot_arrays()
        self.hand = Hand(self.rules, bot_ids, bot_par, self.external, record=True)
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
        wall, bots = engine.deal_seeds(self.master_seed, np.array([self.hand_id], np.int64))
        self.hand.deal(wall[0], bots[0], self.hand_id % 4, label=str(self.hand_id))
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._scores = self._net()
        self._advance()

    def _net(self) -> np.ndarray:
        return self.hand.st.score.sum(axis=1).copy()

    def _advance(self) -> None:
        self.decision = self.hand.advance()
        net = self._net()
        delta = net - self._scores
        self._scores = net
        for a in self.agents:
            self.rewards[a] = int(delta[self._seat_of[a]])
        if self.decision is None:
            for a in self.agents:
                self.terminations[a] = True
                self.infos[a] = {"score": int(net[self._seat_of[a]])}
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

    def render(self):
        return None

    def close(self):
        return None


def env(**kwargs) -> XuezhanEnv:
    """``XuezhanEnv(**kwargs)``, PettingZoo's conventional constructor name."""
    return XuezhanEnv(**kwargs)
