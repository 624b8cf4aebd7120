"""The trainer's torch network and the numpy player choose the same actions from the same weights."""

import numpy as np
import pytest
import torch

from rouba_env import preset
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.network import load_policy
from tests.reference import engine
from rouba_env.players.checkpoint import read_metadata
from rouba_env.rules.cards import NUM_RANKS
from rouba_training.network import RankActorCritic, make_network, masked_logits, save_policy


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


POLICY_HEADS = {"mlp": ("policy_head",), "rank": ("natural_head", "joker_head", "joker_context")}


@pytest.mark.parametrize("architecture, preset_name", [("mlp", "standard"), ("rank", "standard"), ("rank", "jokers")])
def test_numpy_policy_plays_the_torch_networks_argmax(tmp_path, architecture, preset_name):
    rules = preset(preset_name, num_players=3)
    torch.manual_seed(0)
    network = make_network(architecture, ObservationEncoder(rules, 4).size, ActionEncoding(rules, 4).size,
                           hidden_sizes=(64, 32), max_players=4)
    with torch.no_grad():  # sharper logits than the near-uniform initial head, so argmaxes differ per position
        for head in POLICY_HEADS[architecture]:
            getattr(network, head).weight.mul_(300.0)
    save_policy(tmp_path / "policy", network, rules, max_players=4)
    assert read_metadata(tmp_path / "policy")["architecture"] == architecture
    policy = load_policy(tmp_path / "policy", rules=rules, max_players=4)
    obs, masks = positions(rules, 400, seed=1)
    with torch.no_grad():
        logits, values = network(torch.as_tensor(obs))
        expected = masked_logits(logits, torch.as_tensor(masks)).argmax(dim=1).numpy()
        numpy_logits, numpy_values = policy.network.forward(obs)
    assert len(set(expected.tolist())) > 10, "the positions exercise many different actions"
    # The rank network gives two ranks in the same situation the same logit: such exact ties may break either way.
    legal_logits = np.sort(np.where(masks > 0, logits.numpy(), -np.inf), axis=1)
    clear = (legal_logits[:, -1] - legal_logits[:, -2] > 1e-3) | (masks.sum(axis=1) == 1)
    assert clear.mean() > 0.5
    played = policy.act_batch(obs, masks, np.random.default_rng(0))
    assert np.array_equal(played[clear], expected[clear])
    np.testing.assert_allclose(numpy_logits, logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(numpy_values, values.numpy(), rtol=1e-4, atol=1e-4)


def test_the_rank_network_treats_every_natural_rank_alike():
    """Relabelling the natural ranks of a position relabels the rank network's logits the same way.

    The weights are shared across ranks, so the network cannot prefer sevens to
    kings; a plain MLP (checked as the control) can.
    """
    rules = preset("standard", num_players=2)
    encoder, actions = ObservationEncoder(rules, 2), ActionEncoding(rules, 2)
    obs, _ = positions(rules, 64, seed=3)
    obs = obs[:, : encoder.size] if obs.shape[1] != encoder.size else obs
    obs = np.array([encoder.encode_view(encoder.decode(row[None]))[0] for row in positions_for(rules, encoder)])
    permutation = np.random.default_rng(0).permutation(NUM_RANKS)
    view = encoder.decode(obs)
    relabelled = encoder.decode(obs)
    slots = np.concatenate([permutation, [NUM_RANKS]])  # old slot i moves to slots[i]; the joker slot stays
    for name in ("hand", "table_cards", "seen"):
        moved = np.zeros_like(getattr(view, name))
        moved[:, slots] = getattr(view, name)
        setattr(relabelled, name, moved)
    passed, played = np.zeros_like(view.passed), np.zeros_like(view.played)  # the table talk, per seat and rank
    passed[:, :, permutation] = view.passed
    played[:, :, slots] = view.played
    relabelled.passed, relabelled.played = passed, played
    natural_top = relabelled.pile_tops < NUM_RANKS
    relabelled.pile_tops = np.where(natural_top & (relabelled.pile_tops >= 0),
                                    slots[np.clip(relabelled.pile_tops, 0, NUM_RANKS)], relabelled.pile_tops)
    moved_obs = encoder.encode_view(relabelled)
    kinds = np.arange(2 * NUM_RANKS)
    moved_kind = np.where(kinds < NUM_RANKS, permutation[kinds % NUM_RANKS],
                          NUM_RANKS + permutation[kinds % NUM_RANKS])
    action_of = (moved_kind[:, None] * actions.num_targets + np.arange(actions.num_targets)[None, :]).ravel()
    torch.manual_seed(1)
    for architecture, equivariant in (("rank", True), ("mlp", False)):
        network = make_network(architecture, encoder.size, actions.size, hidden_sizes=(64, 32), max_players=2)
        with torch.no_grad():
            logits, values = network(torch.as_tensor(obs))
            moved_logits, moved_values = network(torch.as_tensor(moved_obs))
        same = np.allclose(moved_logits.numpy()[:, action_of], logits.numpy(), atol=1e-5) and np.allclose(
            moved_values.numpy(), values.numpy(), atol=1e-5)
        assert same == equivariant, architecture


def positions_for(rules, encoder):
    """Observations of random positions at the encoder's own padding."""
    rng = np.random.default_rng(4)
    rows = []
    while len(rows) < 64:
        state = engine.new_game(rules, rng)
        while not engine.is_terminal(state) and len(rows) < 64:
            rows.append(encoder.encode(state, state.current))
            legal = engine.legal_moves(state)
            state = engine.apply_move(state, legal[rng.integers(len(legal))])
    return rows


def test_a_rank_network_needs_two_widths():
    with pytest.raises(ValueError, match="context width, token width"):
        RankActorCritic(100, 130, (64, 32, 16), 2)


@pytest.mark.parametrize("architecture, critic, hand_head", [("mlp", "shared", False), ("rank", "privileged", True)])
def test_the_torch_networks_tensor_names_are_the_checkpoint_tables(tmp_path, architecture, critic, hand_head):
    """What the trainer writes (torch's state_dict names) is what the checkpoint's one table of names says."""
    from safetensors.numpy import load_file

    from rouba_env.players.checkpoint import (HAND_HEAD_FILE, PRIVILEGED_VALUE_FILE, WEIGHTS_FILE,
                                              expected_shapes, hand_head_shapes, privileged_value_shapes)

    def written(path):
        return {name: tuple(tensor.shape) for name, tensor in load_file(str(path)).items()}

    rules = preset("standard")
    encoder = ObservationEncoder(rules, 2)
    network = make_network(architecture, encoder.size, ActionEncoding(rules, 2).size, hidden_sizes=(32, 16),
                           max_players=2,
                           critic=critic, hidden_size=encoder.hidden_size, hand_head=hand_head)
    folder = save_policy(tmp_path / "policy", network, rules, max_players=2)
    metadata = read_metadata(folder)
    assert written(folder / WEIGHTS_FILE) == expected_shapes(metadata)
    if hand_head:
        assert written(folder / HAND_HEAD_FILE) == hand_head_shapes(metadata)
    if critic == "privileged":
        assert written(folder / PRIVILEGED_VALUE_FILE) == privileged_value_shapes(metadata)
