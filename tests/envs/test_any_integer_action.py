"""An action no action space holds (huge, very negative, a numpy integer of any width) takes each front end's
documented illegal-action path: never a compiled kernel's type error, an overflow or a crash."""

import warnings

import numpy as np
import pytest

import rouba_env
from rouba_env.envs.single_agent import SingleAgentEnv
from rouba_env.envs.vector_env import make_vector_env
from rouba_env.table import IllegalActionWarning

BAD_ACTIONS = [10**30, -2**63, 2**63, np.uint64(2**64 - 1), np.int8(-1), np.int64(-2**63)]


def shown(action) -> str:
    return str(int(action))


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_the_aec_env_ends_the_game_and_penalizes_the_offender(bad):
    env = rouba_env.env()
    env.reset(seed=1)
    agent = env.agent_selection
    with pytest.warns(IllegalActionWarning, match=f"illegal action {shown(bad)} for {agent}"):
        env.step(bad)
    assert env.terminations[agent] and env.rewards[agent] == -1.0


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_the_aec_env_raises_a_value_error_when_told_to(bad):
    env = rouba_env.env(illegal_action="raise")
    env.reset(seed=1)
    with pytest.raises(ValueError, match=f"illegal action {shown(bad)}"):
        env.step(bad)


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_the_gymnasium_env_ends_the_episode_with_the_illegal_reward(bad):
    env = SingleAgentEnv("random")
    env.reset(seed=1)
    with pytest.warns(IllegalActionWarning, match=f"illegal action {shown(bad)}"):
        _, reward, terminated, _, info = env.step(bad)
    assert terminated and reward == env.illegal_reward and info["illegal_action"]


@pytest.mark.parametrize("bad", [10**30, -2**63], ids=repr)
def test_the_vector_env_and_the_sb3_vec_env_end_that_game_only(bad):
    env = make_vector_env(3, opponents="random")
    _, info = env.reset(seed=1)
    legal = int(np.flatnonzero(info["action_mask"][1])[0])
    actions = np.array([bad, legal, legal], dtype=object)  # a Python int this wide fits no integer dtype
    with pytest.warns(IllegalActionWarning, match=f"illegal action {bad}"):
        _, rewards, terminated, _, _ = env.step(actions)
    assert terminated[0] and rewards[0] == env.illegal_reward and not terminated[1:].all()
    sb3 = pytest.importorskip("rouba_env.envs.sb3")
    vec = sb3.RoubaSB3VecEnv(2, opponents="random")
    vec.seed(1)
    vec.reset()
    legal = int(np.flatnonzero(vec.action_masks()[1])[0])
    with pytest.warns(IllegalActionWarning, match=f"illegal action {bad}"):
        _, rewards, dones, infos = vec.step(np.array([bad, legal], dtype=object))
    assert dones[0] and rewards[0] == vec.vector.illegal_reward and infos[0]["illegal_action"]


@pytest.mark.parametrize("bad", [10**30, -2**63], ids=repr)
def test_openspiel_refuses_it_and_changes_nothing(bad):
    pyspiel = pytest.importorskip("pyspiel")
    from rouba_env import openspiel as rouba_openspiel

    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 2})
    state = game.new_initial_state()
    rng = np.random.default_rng(4)
    while state.is_chance_node():
        outcomes = [outcome for outcome, _ in state.chance_outcomes()]
        state.apply_action(int(rng.choice(outcomes)))
    history = state.history()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a refusal, not a warning
        with pytest.raises((ValueError, TypeError)):
            state.apply_action(bad)
    assert state.history() == history
