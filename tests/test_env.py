"""The PettingZoo environment: the PettingZoo API test, masks, rewards and reproducibility against simulate."""

from __future__ import annotations

import numpy as np
from pettingzoo.test import api_test  # the test extra installs pettingzoo: a missing one fails, never skips

from simulator import agents, hands
from simulator.env import XuezhanEnv
from simulator.rules import load_rules


def test_pettingzoo_api_test():
    api_test(XuezhanEnv(), num_cycles=200)
    api_test(XuezhanEnv(seats=(None, "greedy", None, "value")), num_cycles=200)


def play(e: XuezhanEnv, policy) -> dict:
    totals = {a: 0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        assert obs["action_mask"].sum() >= 1
        e.step(policy(e, agent, obs))
    return totals


def test_greedy_agents_reproduce_the_simulated_hand_and_rewards_sum_to_the_score():
    rules = load_rules("chengdu", {"seats": ["greedy", "value", "greedy", "greedy"]})
    e = XuezhanEnv(seats=(None, "value", None, "greedy"))
    bot = agents.GreedyBot()
    for hand_id in range(6):
        e.reset(seed=21, options={"hand_id": hand_id})
        totals = play(e, lambda env, agent, obs: bot.act(env.observation_object(agent)))
        raw = hands.run_batch(rules, np.array([hand_id]), 21)
        net = raw.p[:, -6:].sum(axis=1)  # the PL_SCORE components
        assert totals == {"seat_0": net[0], "seat_2": net[2]}


def test_random_masked_play_always_finishes_and_is_zero_sum_over_all_seats():
    e = XuezhanEnv()
    rng = np.random.default_rng(0)
    for seed in range(5):
        e.reset(seed=seed)
        totals = play(e, lambda env, agent, obs: int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert sum(totals.values()) == 0


def agent_views(e, seed: int, hand_ids):
    """``(typed observation, vector)`` at each decision of the agent of ``e`` over hands ``hand_ids`` of ``seed``;
    the agent then plays as the greedy bot."""
    bot = agents.GreedyBot()
    for hand_id in hand_ids:
        e.reset(seed=seed, options={"hand_id": hand_id})
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            typed = e.observation_object(agent)
            yield typed, obs["observation"]
            e.step(bot.act(typed))


def test_the_observation_shows_who_declared_and_what_a_dancer_shows(tmp_path):
    from simulator.env import OBS_LEN

    (tmp_path / "dance.yaml").write_text("extends: chengdu\nname: dance\ndeclare_ready: dance\n")
    e = XuezhanEnv(config=str(tmp_path / "dance.yaml"), seats=(None, "value", "value", "value"))
    tail = 298  # the declare blocks come after the 298-long layout
    seen_dancer = 0
    for typed, v in agent_views(e, 3, range(8)):
        assert v.shape == (OBS_LEN,)
        for i in range(4):  # block i is seat (observer + i)
            q = (typed.seat + i) % 4
            assert v[tail + 2 * i: tail + 2 * i + 2].tolist() == [typed.declared[q] == 1, typed.declared[q] == 2]
            shown = np.flatnonzero(v[tail + 8 + 27 * i: tail + 8 + 27 * (i + 1)]).tolist()
            assert shown == list(typed.shown[q])
            assert bool(shown) == (typed.declared[q] == 2)  # a dancer shows its waits, nobody else does
            seen_dancer += typed.declared[q] == 2
    assert seen_dancer > 0  # value seats dance in most hands: the blocks were exercised


def test_the_observation_shows_the_winners_public_hands():
    """The last three blocks (after the 414-long layout): per seat, observer first, a 血战 winner's laid-down
    counts, and the kinds a seat has won on and that were passed after its first win (血流's locked hands)."""
    from simulator.env import OBS_LEN

    tail = OBS_LEN - 3 * 4 * 27
    assert tail == 414
    seen = {"laid": 0, "won_on": 0, "cleared": 0}
    for config in ("chengdu", "xueliu"):
        e = XuezhanEnv(config=config, seats=(None, "greedy", "greedy", "greedy"))
        for typed, v in agent_views(e, 5, range(6)):
            for i in range(4):  # block i is seat (observer + i)
                q = (typed.seat + i) % 4
                laid = v[tail + 27 * i: tail + 27 * (i + 1)]
                assert laid.tolist() == typed.laid_down[q].tolist()
                won_on = np.flatnonzero(v[tail + 108 + 27 * i: tail + 108 + 27 * (i + 1)]).tolist()
                cleared = np.flatnonzero(v[tail + 216 + 27 * i: tail + 216 + 27 * (i + 1)]).tolist()
                assert won_on == list(typed.won_on[q]) and cleared == list(typed.cleared[q])
                seen["laid"] += int(laid.sum() > 0)
                seen["won_on"] += bool(won_on)
                seen["cleared"] += bool(cleared)
                if config == "xueliu":
                    assert not laid.any()  # a 血流 winner's hand stays concealed
    assert min(seen.values()) > 0  # every block was exercised
