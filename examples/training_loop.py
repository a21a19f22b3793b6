"""The shape of a training loop on the PettingZoo environment: one learning seat against three compiled greedy
bots, transitions collected per hand. It trains nothing (the "policy" is random over the legal actions); put your
learner where the comments say. Needs the ``rl`` extra.

    python examples/training_loop.py
"""

import numpy as np

from xuezhan import XuezhanEnv

env = XuezhanEnv(config="chengdu", seats=(None, "greedy", "greedy", "greedy"))
rng = np.random.default_rng(0)


def policy(observation: np.ndarray, mask: np.ndarray) -> int:
    """Replace with your model: here a random legal action."""
    return int(rng.choice(np.flatnonzero(mask)))


returns = []
for episode in range(20):
    env.reset(seed=1 if episode == 0 else None)
    transitions = []  # (observation, mask, action, reward)
    ret = 0
    for _agent in env.agent_iter():  # the one learning seat
        obs, reward, terminated, truncated, info = env.last()
        ret += reward
        if transitions:
            transitions[-1] = (*transitions[-1][:3], transitions[-1][3] + reward)  # reward earned since acting
        if terminated or truncated:
            env.step(None)
            continue
        action = policy(obs["observation"], obs["action_mask"])
        transitions.append((obs["observation"], obs["action_mask"], action, 0))
        env.step(action)
    # learner.update(transitions) would go here
    returns.append(ret)
print(f"{len(returns)} hands, mean return {np.mean(returns):+.1f} base units"
      f" (SE {np.std(returns, ddof=1) / np.sqrt(len(returns)):.1f})")
