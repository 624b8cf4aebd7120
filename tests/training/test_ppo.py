"""PPO pieces against hand-computed values."""

import math

import numpy as np
import pytest
import torch

from rouba_training.ppo import MaskedCategorical, gae


def test_gae_interleaved_turns_one_game():
    # Learner acts at t=0 and t=2, the opponent at t=1 and t=3; the game ends at t=3 with +1 for the learner.
    values = np.array([[0.5], [0.0], [0.2], [0.0]])
    recorded = np.array([[True], [False], [True], [False]])
    rewards = np.array([[0.0], [0.0], [0.0], [1.0]])
    dones = np.array([[False], [False], [False], [True]])
    advantages = gae(values, recorded, rewards, dones, gamma=1.0, gae_lambda=0.5)
    # t=2: 1 - 0.2 = 0.8;  t=0: (0.2 - 0.5) + 0.5 * 0.8 = 0.1
    assert advantages[:, 0] == pytest.approx([0.1, 0.0, 0.8, 0.0])


def test_gae_two_games_in_one_window_and_the_last_move_by_either_side():
    values = np.array([[0.5], [0.0], [0.1], [0.4]])
    recorded = np.array([[True], [False], [True], [True]])
    rewards = np.array([[0.0], [-1.0], [0.0], [1.0]])
    dones = np.array([[False], [True], [False], [True]])
    advantages = gae(values, recorded, rewards, dones, gamma=1.0, gae_lambda=0.5)
    # game 1 ends on the opponent's move: t=0 gets -1 - 0.5; game 2: t=3: 1 - 0.4, t=2: (0.4 - 0.1) + 0.5 * 0.6
    assert advantages[:, 0] == pytest.approx([-1.5, 0.0, 0.6, 0.6])


def test_gae_discount():
    values = np.array([[0.0], [0.0]])
    recorded = np.array([[True], [True]])
    rewards = np.array([[0.0], [1.0]])
    dones = np.array([[False], [True]])
    advantages = gae(values, recorded, rewards, dones, gamma=0.9, gae_lambda=1.0)
    assert advantages[:, 0] == pytest.approx([0.9, 1.0])


def one_row(new_log_prob, advantage, value=0.5, entropy=0.7):
    """A minibatch of one row taken with probability 0.5, now ``exp(new_log_prob)``; return 1."""
    from rouba_training.losses import Minibatch

    legal = torch.tensor([[True, True]])
    log_probs = torch.tensor([[new_log_prob, math.log(1 - math.exp(new_log_prob))]])
    return Minibatch(torch.tensor([0]), log_probs, legal, torch.tensor([new_log_prob]), torch.tensor([entropy]),
                     torch.tensor([value]), torch.tensor([math.log(0.5)]), torch.tensor([advantage]),
                     torch.tensor([1.0]))


def test_the_loss_terms_hand_computed():
    from types import SimpleNamespace

    from rouba_training.losses import loss_terms, total_loss

    config = SimpleNamespace(clip_coef=0.1, vf_coef=0.5, ent_coef=0.01, hand_coef=0.0, policy_objective="clipped")
    terms = loss_terms(config)
    assert [term.name for term in terms] == ["policy_loss", "value_loss", "entropy"]
    total, stats = total_loss(terms, one_row(math.log(0.6), 1.0))  # ratio 1.2
    assert stats["policy_loss"] == pytest.approx(-1.1)  # clipped: min(1.2, 1.1) * advantage
    assert stats["value_loss"] == pytest.approx(0.125)
    assert stats["entropy"] == pytest.approx(0.7)
    assert float(total) == pytest.approx(-1.1 + 0.5 * 0.125 - 0.01 * 0.7)
    assert stats["clip_fraction"] == 1.0
    _, negative = total_loss(loss_terms(SimpleNamespace(clip_coef=0.1, vf_coef=0.5, ent_coef=0.0, hand_coef=0.0, policy_objective="clipped")),
                             one_row(math.log(0.6), -1.0, value=1.0, entropy=0.0))
    assert negative["policy_loss"] == pytest.approx(1.2)  # pessimistic side: the unclipped ratio
    assert negative["approx_kl"] == pytest.approx((1.2 - 1) - math.log(1.2), rel=1e-4)


def test_the_kl_terms_join_the_loss_with_their_weights():
    from types import SimpleNamespace

    from rouba_training.losses import loss_terms, total_loss

    config = SimpleNamespace(clip_coef=0.2, vf_coef=0.0, ent_coef=0.0, hand_coef=0.0, policy_objective="clipped")
    uniform = torch.log(torch.tensor([[0.5, 0.5]]))
    row = one_row(math.log(0.8), 0.0)
    terms = loss_terms(config, magnet_coef=0.3, magnet=uniform, mirror_coef=0.0)
    assert [term.name for term in terms][-1] == "magnet_kl"
    total, stats = total_loss(terms, row)
    kl = 0.8 * math.log(0.8 / 0.5) + 0.2 * math.log(0.2 / 0.5)
    assert stats["magnet_kl"] == pytest.approx(kl, rel=1e-5)
    assert float(total) == pytest.approx(0.3 * kl, rel=1e-5)  # the other terms weigh 0 or are 0 here


def test_masked_categorical_probabilities_and_entropy():
    dist = MaskedCategorical(torch.zeros(1, 3), torch.tensor([[1, 1, 0]]))
    assert dist.probs[0].tolist() == pytest.approx([0.5, 0.5, 0.0])
    assert float(dist.entropy()[0]) == pytest.approx(math.log(2))
    assert float(dist.log_prob(torch.tensor([0]))[0]) == pytest.approx(math.log(0.5))


def test_masking_never_samples_an_illegal_action():
    generator = torch.Generator().manual_seed(0)
    logits = torch.tensor([[100.0, 0.0, 50.0, -3.0]]).repeat(5000, 1)
    mask = torch.tensor([[0, 1, 0, 1]]).repeat(5000, 1)
    samples = MaskedCategorical(logits, mask).sample(generator)
    assert set(samples.tolist()) == {1, 3}
    with pytest.raises(ValueError, match="at least one legal action"):
        MaskedCategorical(torch.zeros(1, 2), torch.zeros(1, 2))
