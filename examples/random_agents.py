"""Four random agents play ten hands of the PettingZoo environment (needs the ``rl`` extra).

    python examples/random_agents.py
"""

import numpy as np

from xuezhan import XuezhanEnv

env = XuezhanEnv(config="chengdu")
rng = np.random.default_rng(0)
for hand in range(10):
    env.reset(seed=7 if hand == 0 else None)
    totals = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))  # a random legal action
    print(f"hand {env.hand_id}: net scores {totals}")
