"""The RL environments' user-facing options: the single-seat Gymnasium env (check_env, masks, rewards,
reproducibility against simulate), bot specs with parameters, Python bots, rule overrides and ANSI rendering."""

from __future__ import annotations

import gymnasium
import numpy as np
import pettingzoo  # noqa: F401  (the test extra installs the rl extra: a missing package fails, never skips)
import pytest
from gymnasium.utils.env_checker import check_env

from simulator import agents, hands
from simulator.agents.env import XuezhanEnv
from simulator.agents.gym import ENV_ID, XuezhanGymEnv
from simulator.hands.game import IllegalActionError
from simulator.rules import load_rules

MIXED = ("greedy", {"bot": "value", "decline_below": 3}, "simulator.agents:RandomBot")


def test_gymnasium_check_env_passes_with_bots_of_every_kind():
    check_env(XuezhanGymEnv(bots=MIXED, render_mode="ansi"), skip_render_check=False)
    check_env(gymnasium.make(ENV_ID, bots=MIXED, seat=2).unwrapped)


def greedy_play(e: XuezhanGymEnv, hand_id: int, seed: int) -> tuple[float, int]:
    bot = agents.GreedyBot()
    obs, info = e.reset(seed=seed, options={"hand_id": hand_id})
    total = 0.0
    while True:
        assert (info["action_mask"] == obs["action_mask"]).all() and e.action_masks().any()
        action = bot.act(e.env.observation_object(e.agent))
        obs, reward, terminated, truncated, info = e.step(action)
        total += reward
        assert not truncated
        if terminated:
            return total, info["score"]


@pytest.mark.parametrize("seat,compensation", [(0, 0), (3, 0), (0, 2), (3, 2)])
def test_a_greedy_learner_reproduces_simulate_and_rewards_sum_to_its_score(seat, compensation):
    """Hand H of seed S in the env is hand H of simulate (wall, bot streams and the dealer, deal_id % 4): a
    learner choosing as the greedy bot ends every hand with the logged score, and its rewards add up to it, the
    dealer's compensation (paid at the deal, before any decision) included."""
    bots = ["value", "greedy", "value"]
    seats = list(bots)
    seats.insert(seat, "greedy")
    overrides = {"scoring.cap": 3, "settlement.dealer_compensation": compensation}
    rules = load_rules("chengdu", {"seats": seats, **overrides})
    e = XuezhanGymEnv(bots=bots, seat=seat, overrides=overrides)
    for hand_id in (1, 2, 5, 7):
        total, score = greedy_play(e, hand_id, 21)
        raw = hands.run_batch(rules, np.array([hand_id]), 21)
        assert total == score == raw.p[:, -6:].sum(axis=1)[seat]


def test_rule_overrides_reach_the_env():
    assert XuezhanGymEnv(overrides=["scoring.cap=2"]).rules.scoring.cap == 2
    assert XuezhanEnv(overrides={"scoring.cap": 5}).rules.scoring.cap == 5


def test_an_illegal_action_ends_the_episode_with_the_penalty_or_raises():
    e = XuezhanGymEnv(illegal_penalty=-7.0)
    obs, _ = e.reset(seed=0)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = e.step(bad)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-7.0, True, False, True)
    e = XuezhanGymEnv(illegal_penalty=None)
    obs, _ = e.reset(seed=0)
    with pytest.raises(IllegalActionError, match="not legal"):
        e.step(bad)


class CountingBot(agents.GreedyBot):
    """Greedy, counting the decisions it is asked (the env must play Python bots itself)."""

    def __init__(self):
        self.asked = 0

    def act(self, obs):
        self.asked += 1
        return super().act(obs)


def test_python_bot_objects_and_parameterised_specs_play_their_seats():
    bot = CountingBot()
    e = XuezhanEnv(seats=(None, bot, {"bot": "value", "decline_below": 3}, "greedy"))
    assert e.possible_agents == ["seat_0"] and e.rules.seats[2].bot == "value"
    e.reset(seed=4)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert bot.asked > 5


def test_bad_seats_and_render_modes_are_refused():
    with pytest.raises(ValueError, match="at least one seat"):
        XuezhanEnv(seats=("greedy",) * 4)
    with pytest.raises(ValueError, match="render_mode"):
        XuezhanEnv(render_mode="human")
    with pytest.raises(ValueError, match="3 entries"):
        XuezhanGymEnv(bots=("greedy",))


def test_ansi_render_shows_the_agents_hand_not_the_bots():
    e = XuezhanEnv(seats=(None, "greedy", "greedy", "greedy"), render_mode="ansi")
    e.reset(seed=1)
    text = e.render()
    lines = text.splitlines()
    assert lines[0] == "hand 0 of seed 1" and "hand " in lines[1] and "agent seat_0" in lines[1]
    assert all("hand " not in line.split(":", 1)[1] for line in lines[2:5])  # bots' concealed tiles hidden
    assert "to decide" in lines[-1]
    assert XuezhanEnv().render() is None
