"""The PettingZoo environment: the PettingZoo API test, masks, rewards and reproducibility against simulate."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test  # the test extra installs pettingzoo: a missing one fails, never skips

from simulator import agents, hands
from simulator.agents.env import XuezhanEnv
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


@pytest.mark.parametrize("compensation", [0, 3])
def test_greedy_agents_reproduce_the_simulated_hand_and_rewards_sum_to_the_score(compensation):
    """With a dealer's compensation too: what the deal pays is part of the rewards (hands 0–5 rotate the dealer)."""
    comp = {"settlement.dealer_compensation": compensation}
    rules = load_rules("chengdu", {"seats": ["greedy", "value", "greedy", "greedy"], **comp})
    e = XuezhanEnv(seats=(None, "value", None, "greedy"), overrides=comp)
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
    from simulator.agents.env import OBS_LEN

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
    from simulator.agents.env import OBS_LEN

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


def test_the_first_298_offsets_are_the_documented_layout():
    """Offsets 0–297 of the vector (the layout before 唱歌/跳舞, whose offsets must never move), element by
    element against the layout written out here: seat 2 observing, so 'observer first' rotates seats 2, 3, 0, 1."""
    from types import SimpleNamespace

    from simulator.agents.env import encode

    hand = np.zeros(27, np.uint8)
    hand[[0, 13, 26]] = [1, 2, 3]
    obs = SimpleNamespace(
        seat=2, hand=hand, decision="claim", tile=14, tiles_left=37,
        melds=(((("pung", 4),)), (("kong", 9), ("concealed_kong", -1)), (("concealed_kong", 20),), ()),
        discards=((0, 1), (1, 2), (2, 3), (3, 5), (3, 5)), voids=np.array([2, -1, 0, 1]),
        won=np.array([-1, 1, -1, 0]), declared=np.zeros(4, np.int64), shown=((),) * 4,
        laid_down=np.zeros((4, 27), np.uint8), won_on=((),) * 4, cleared=((),) * 4)
    want = np.zeros(298, np.int64)
    want[[0, 13, 26]] = [1, 2, 3]                                   # 0–26 own concealed counts
    # 27–134 melded counts, per seat observer first (seat 2, 3, 0, 1), 27 each; another's concealed kong unseen
    want[27 + 0 * 27 + 20] = 4                                      # seat 2 (self): concealed kong of 3s
    want[27 + 2 * 27 + 4] = 3                                       # seat 0: pung of 5m
    want[27 + 3 * 27 + 9] = 4                                       # seat 1: kong of 1p
    # 135–242 discarded counts, same order
    want[135 + 2 * 27 + 1] = 1                                      # seat 0 discarded 2m
    want[135 + 3 * 27 + 2] = 1                                      # seat 1: 3m
    want[135 + 0 * 27 + 3] = 1                                      # seat 2: 4m
    want[135 + 1 * 27 + 5] = 2                                      # seat 3: 6m twice
    # 243–258 declared void one-hot, 4 per seat (slot 3: none), same order: seats 2, 3, 0, 1 → 0, 1, 2, none
    want[[243 + 0, 247 + 1, 251 + 2, 255 + 3]] = 1
    want[[259 + 1, 259 + 3]] = 1                                    # 259–262 has won: seats 3 and 1
    want[263 + 3] = 1                                               # 263–269 decision one-hot: claim (4th)
    want[270 + 14] = 1                                              # 270–296 tile on offer: 6p
    want[297] = 37                                                  # 297 tiles left
    got = encode(obs)
    bad = [i for i in range(298) if got[i] != want[i]]
    assert not bad, [(i, int(got[i]), int(want[i])) for i in bad]
    assert not got[298:].any()  # nothing declared, shown or won on: the later blocks stay 0
