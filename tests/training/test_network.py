"""The trainer's torch network and the numpy player choose the same actions from the same weights."""

import numpy as np
import torch

from rouba_env import preset
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.network import load_policy
from rouba_env.rules import engine
from rouba_training.network import ActorCritic, masked_logits, save_policy


def positions(rules, count, seed):
    """(observations, masks) of random positions from random play."""
    encoder, actions = ObservationEncoder(rules, 4), ActionEncoding(rules, 4)
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    while len(observations) < count:
        state = engine.new_game(rules, rng)
        while not engine.is_terminal(state) and len(observations) < count:
            observations.append(encoder.encode(state, state.current))
            masks.append(actions.mask(state))
            legal = engine.legal_moves(state)
            state = engine.apply_move(state, legal[rng.integers(len(legal))])
    return np.array(observations), np.array(masks)


def test_numpy_policy_plays_the_torch_networks_argmax(tmp_path):
    rules = preset("standard", num_players=3)
    torch.manual_seed(0)
    network = ActorCritic(ObservationEncoder(rules, 4).size, ActionEncoding(rules, 4).size, (64, 32))
    with torch.no_grad():  # sharper logits than the near-uniform initial head, so argmaxes differ per position
        network.policy_head.weight.mul_(300.0)
    save_policy(tmp_path / "policy", network, rules, 4)
    policy = load_policy(tmp_path / "policy", rules=rules, max_players=4)
    obs, masks = positions(rules, 400, seed=1)
    with torch.no_grad():
        logits, values = network(torch.as_tensor(obs))
        expected = masked_logits(logits, torch.as_tensor(masks)).argmax(dim=1).numpy()
        numpy_logits, numpy_values = policy.network.forward(obs)
    assert len(set(expected.tolist())) > 10, "the positions exercise many different actions"
    assert np.array_equal(policy.act_batch(obs, masks, np.random.default_rng(0)), expected)
    np.testing.assert_allclose(numpy_logits, logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(numpy_values, values.numpy(), rtol=1e-4, atol=1e-4)
