import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rouba_env
from rouba_env.rules.scoring import outcome_rewards, scores
from rouba_env.envs.single_agent import SingleAgentEnv
from rouba_env.players.base import BasePolicy


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(num_players=3, dict_observation=True), dict(rules="jokers", num_players=4, opponents="random")],
)
def test_check_env_passes(kwargs):
    # check_env steps with unmasked random actions, so illegal ones must end the episode instead of raising.
    check_env(SingleAgentEnv(illegal_action="terminate", **kwargs), skip_render_check=True)


def test_registered_with_gymnasium():
    env = gymnasium.make("RoubaMonte-v0", opponents=["random", "random"], num_players=3)
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    assert info["action_mask"].any()


def play(env, seed, policy_seed=0):
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trace = [obs.tobytes()]
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.tobytes(), reward))
        if terminated:
            return trace, reward, info


def test_seeding_reproduces_episodes():
    a = play(SingleAgentEnv(opponents="random", num_players=3), seed=5)[0]
    b = play(SingleAgentEnv(opponents="random", num_players=3), seed=5)[0]
    c = play(SingleAgentEnv(opponents="random", num_players=3), seed=6)[0]
    assert a == b and a != c


def test_strict_mode_raises_a_clear_error():
    env = SingleAgentEnv(illegal_action="raise")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match=rf"illegal action {illegal} .* legal actions"):
        env.step(illegal)
    with pytest.raises(ValueError, match="out of range"):
        env.step(10_000)


class AlwaysFirstLegal(BasePolicy):
    name = "first"

    def act(self, obs, mask, rng):
        return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_reward_is_always_the_learners_own(num_players):
    """The wrong-seat reward bug must be impossible: compare with the engine's outcome for the learner's seat."""
    env = SingleAgentEnv(opponents="greedy", seat="random", num_players=num_players)
    seats = set()
    for seed in range(24):
        _, reward, info = play(env, seed)
        seat = info["seat"]
        seats.add(seat)
        assert reward == outcome_rewards(scores(env.game))[seat]
        points = info["scores"]
        won_alone = points[seat] == max(points) and points.count(max(points)) == 1
        assert (reward == 1.0) == won_alone
    assert len(seats) > 1, "random seating must move the learner"


def test_opponents_list_policy_objects_and_sampler():
    rules = rouba_env.preset("standard", num_players=3)
    env = SingleAgentEnv(opponents=["random", AlwaysFirstLegal(rules)], seat=1, rules=rules)
    env.reset(seed=0)
    assert [p.name for p in env.opponents] == ["random", "first"]
    drawn = []

    def sampler(rng):
        lineup = [["random", "greedy"], ["greedy", "greedy"]][int(rng.integers(2))]
        drawn.append(tuple(lineup))
        return lineup

    env = SingleAgentEnv(opponents=sampler, rules=rules)
    for seed in range(10):
        env.reset(seed=seed)
        assert tuple(p.name for p in env.opponents) == drawn[-1]
    assert len(set(drawn)) == 2
    with pytest.raises(ValueError, match="3 opponents given for 2 other seat"):
        SingleAgentEnv(opponents=["random"] * 3, rules=rules)
    with pytest.raises(ValueError, match="unknown player 'nobody'"):
        SingleAgentEnv(opponents="nobody")
    with pytest.raises(ValueError, match="seat must be 'random' or an int in 0..2"):
        SingleAgentEnv(seat=3, rules=rules)


def test_action_space_sample_is_legal():
    env = SingleAgentEnv(num_players=4)
    env.reset(seed=1)
    env.action_space.seed(0)
    for _ in range(20):
        assert env.action_masks()[env.action_space.sample()]


def test_render_shows_the_learners_hand():
    env = SingleAgentEnv(render_mode="ansi", seat=1)
    env.reset(seed=3)
    assert "player 1's hand:" in env.render()


def test_an_episode_ended_by_an_illegal_action_stays_over():
    env = SingleAgentEnv(illegal_action="terminate")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
