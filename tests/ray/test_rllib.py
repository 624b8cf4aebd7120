"""RLlib support: the env passes RLlib's checks, one self-play iteration trains, the module plays in evaluate."""

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from rouba_env.evaluation.duplicate import evaluate  # noqa: E402
from rouba_env.rllib import (  # noqa: E402
    ACTION_MASK, LEARNER_MODULE, OBSERVATIONS, RLlibPolicy, RoubaMultiAgentEnv, export_checkpoint, scripted_module_id,
    selfplay_config,
)
from rouba_env.batched.game import VectorGame  # noqa: E402
from rouba_env.players.registry import make_policy  # noqa: E402
from rouba_env.rules.config import make_rules  # noqa: E402


@pytest.mark.parametrize("num_players", [2, 4])
def test_env_passes_rllibs_pre_check_and_plays_masked_games(num_players):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    assert RoubaMultiAgentEnv({"num_players": num_players}).single_game.reward_mode == "margin", "the trainer's default"
    env = RoubaMultiAgentEnv({"num_players": num_players, "reward": "outcome"})
    check_multiagent_environments(env)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=5)
    total, steps = None, 0
    while total is None:
        (agent, view), = obs.items()
        assert env.observation_spaces[agent].contains(view)
        assert view[ACTION_MASK].dtype == np.float32 and view[OBSERVATIONS].dtype == np.float32
        obs, rewards, terminated, _, _ = env.step({agent: rng.choice(np.flatnonzero(view[ACTION_MASK]))})
        steps += 1
        if terminated["__all__"]:
            total = rewards
    assert set(total) == set(env.possible_agents) and max(total.values()) == 1.0


def test_env_rejects_bad_settings_and_illegal_actions_when_asked():
    with pytest.raises(ValueError, match="unknown env_config"):
        RoubaMultiAgentEnv({"players": 2})
    env = RoubaMultiAgentEnv({"illegal_action": "raise"})
    obs, _ = env.reset(seed=1)
    (agent, view), = obs.items()
    with pytest.raises(ValueError, match="illegal action"):
        env.step({agent: int(np.flatnonzero(view[ACTION_MASK] == 0)[0])})


def learner_state(algo) -> dict:
    """The trained module's weights as the learner holds them."""
    state = algo.learner_group.get_state(components=f"learner/rl_module/{LEARNER_MODULE}")
    return {k: np.array(v) for k, v in state["learner"]["rl_module"][LEARNER_MODULE].items()}


@pytest.mark.slow
def test_selfplay_iterations_add_frozen_selves_and_the_learner_plays_in_evaluate(ray_session, tmp_path):
    config = selfplay_config(num_players=3, scripted=("greedy",), train_batch_size=300, minibatch_size=100,
                             num_epochs=1, hidden_sizes=(32,), snapshot_interval=1, pool_size=2)
    algo = config.build_algo()
    try:
        first = algo.train()
        assert first["opponent_pool"] == [LEARNER_MODULE, "scripted_greedy", "main_v1"]
        frozen = {k: v.copy() for k, v in algo.get_module("main_v1").get_state().items()}  # as env runners have it
        learner_before = learner_state(algo)
        assert all(np.array_equal(frozen[k], learner_before[k]) for k in frozen), "a snapshot starts as the learner"
        second = algo.train()
        assert second["opponent_pool"][-2:] == ["main_v1", "main_v2"]
        after = algo.get_module("main_v1").get_state()
        assert all(np.array_equal(frozen[k], after[k]) for k in frozen), "past selves stay frozen"
        learner_after = learner_state(algo)
        assert any(not np.array_equal(learner_before[k], learner_after[k]) for k in learner_before), "main trains"
        rules = make_rules("standard", num_players=3)
        policy = RLlibPolicy(algo.get_module(LEARNER_MODULE), rules)
        result = evaluate([policy, "random", "greedy"], rules=rules, games=6, seed=2)
        assert result.games == 6 and result.players[0].label == "policy:rllib"
        # The way back: the trained module as a project checkpoint, playing the same moves without Ray.
        folder = export_checkpoint(algo.get_module(LEARNER_MODULE), tmp_path / "exported", {"num_players": 3})
        exported = make_policy(f"checkpoint:{folder}", rules)
        game = VectorGame(rules, 64, seed=3)
        game.reset()
        rng = np.random.default_rng(0)
        assert np.array_equal(exported.act_batch(game.obs, game.mask, rng), policy.act_batch(game.obs, game.mask, rng))
        assert evaluate([f"checkpoint:{folder}", "random", "greedy"], rules=rules, games=3).games == 3
    finally:
        algo.stop()


def test_any_spec_is_a_valid_module_id_and_a_shipped_checkpoint_sits_in_the_pool(ray_session):
    from ray.rllib.core.rl_module import validate_module_id

    ids = {spec: scripted_module_id(spec) for spec in ("greedy", "checkpoint:2p", "checkpoint:/a/b.c", "expert:z=1")}
    assert ids["greedy"] == "scripted_greedy" and len(set(ids.values())) == len(ids)
    for module_id in ids.values():
        validate_module_id(module_id, error=True)
    config = selfplay_config(num_players=2, scripted=("checkpoint:2p",), train_batch_size=200, minibatch_size=100,
                             num_epochs=1, hidden_sizes=(16,), snapshot_interval=1)
    algo = config.build_algo()
    try:
        result = algo.train()
        assert ids["checkpoint:2p"] in result["opponent_pool"] and algo.get_module(ids["checkpoint:2p"]) is not None
    finally:
        algo.stop()
