"""A single-agent Gymnasium environment: one learning seat against three bots, one hand per episode.

Optional extra ``[rl]``. It wraps :class:`simulator.agents.env.XuezhanEnv` with one ``None`` seat, so the bots, rule
overrides, dealing and rendering are the same. Observation: ``{"observation": int8[OBS_LEN], "action_mask":
int8[35]}`` (the layout of :func:`simulator.agents.env.encode`); the mask is also in ``info["action_mask"]`` and from
:meth:`XuezhanGymEnv.action_masks` (the method maskable learners such as sb3-contrib's MaskablePPO call).
Reward: the learning seat's change of net score (base units) since its previous decision; the episode ends
(``terminated``) when the hand does, with the rest of the hand's score as the last reward.

An illegal action ends the episode at once (``terminated``) with reward ``illegal_penalty`` and
``info["illegal_action"] = True``; ``illegal_penalty=None`` raises :class:`simulator.hands.game.IllegalActionError`
instead. Masked learners never see either.

``reset(seed=S)`` starts master seed S at hand 0, later resets deal hands 1, 2, …; ``options={"hand_id": H}``
deals hand H: the same wall, bot streams and dealer (H % 4) as hand H of ``xuezhan simulate --seed S``.
Registered as ``gymnasium.make("xuezhan/Xuezhan-v0", ...)`` once this module is imported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simulator.agents.env import OBS_LEN, XuezhanEnv
from simulator.hands.game import IllegalActionError
from simulator.kernel.state import N_ACTIONS, N_SEATS

try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError as exc:  # simulator.agents.env raised the same first; kept for a direct import of this module
    raise ImportError(f"the RL environments need the rl extra: pip install 'xuezhan[rl]' ({exc})") from None


class XuezhanGymEnv(gym.Env):
    """One learning seat (``seat``, 0–3) at a table of three ``bots`` (each a compiled bot's name, a spec with
    parameters, a ``module:Class`` Python bot or a bot object, as for :class:`simulator.agents.env.XuezhanEnv`), under
    rule set ``config`` with ``overrides``."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, config: str = "chengdu", bots=("greedy", "greedy", "greedy"), seat: int = 0, *,
                 overrides=None, render_mode: str | None = None, illegal_penalty: float | None = -100.0):
        if len(bots) != N_SEATS - 1:
            raise ValueError(f"bots: needs 3 entries (the other seats), got {len(bots)}")
        if not 0 <= seat < N_SEATS:
            raise ValueError(f"seat: must be 0-3, got {seat}")
        seats: list[Any] = list(bots)
        seats.insert(seat, None)
        self.env = XuezhanEnv(config, seats, overrides=overrides, render_mode=render_mode)
        self.agent = f"seat_{seat}"
        self.render_mode = render_mode
        self.illegal_penalty = illegal_penalty
        self.observation_space = spaces.Dict({"observation": spaces.Box(0, 127, (OBS_LEN,), np.int8),
                                              "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8)})
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._mask = np.zeros(N_ACTIONS, np.int8)

    @property
    def rules(self):
        """The rule set played (:class:`simulator.rules.RuleSet`)."""
        return self.env.rules

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs = self.env.observe(self.agent)
        self._mask = obs["action_mask"]
        return obs, {"action_mask": self._mask.copy(), "hand_id": self.env.hand_id}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.env.reset(seed=seed, options=options)
        return self._observe()  # what the deal paid before its first decision comes with the first step's reward

    def step(self, action):
        env = self.env
        if env.terminations[self.agent]:
            raise RuntimeError("the hand is over: call reset()")
        action = int(action)
        if not self._mask[action]:
            if self.illegal_penalty is None:
                raise IllegalActionError(f"hand {env.hand_id}: action {action} is not legal; legal: "
                                         f"{np.flatnonzero(self._mask).tolist()}")
            obs, info = self._observe()
            obs["action_mask"][:] = 0
            return obs, float(self.illegal_penalty), True, False, {**info, "illegal_action": True}
        before = env._cumulative_rewards[self.agent]  # paid before its first decision (dealer compensation)
        env.step(action)
        reward = before + env._cumulative_rewards[self.agent]  # everything since this seat last acted
        env._cumulative_rewards[self.agent] = 0
        terminated = env.terminations[self.agent]
        obs, info = self._observe()
        if terminated:
            info["score"] = env.infos[self.agent]["score"]
        return obs, float(reward), terminated, False, info

    def action_masks(self) -> np.ndarray:
        """``bool[35]``: the legal actions now."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


ENV_ID = "xuezhan/Xuezhan-v0"
if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point=XuezhanGymEnv)  # gymnasium.make("xuezhan/Xuezhan-v0", bots=...) after import
