"""PPO pieces against hand-computed values."""

import math

import numpy as np
import pytest
import torch

from rouba_training.ppo import MaskedCategorical, gae, ppo_loss


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


def test_ppo_loss_hand_computed():
    old = torch.tensor([math.log(0.5)])
    new = torch.tensor([math.log(0.6)])  # ratio 1.2
    parts = ppo_loss(new, old, torch.tensor([1.0]), torch.tensor([0.5]), torch.tensor([1.0]), torch.tensor([0.7]),
                     clip_coef=0.1, vf_coef=0.5, ent_coef=0.01)
    assert float(parts.policy) == pytest.approx(-1.1)  # clipped: min(1.2, 1.1) * advantage
    assert float(parts.value) == pytest.approx(0.125)
    assert float(parts.total) == pytest.approx(-1.1 + 0.5 * 0.125 - 0.01 * 0.7)
    assert float(parts.clip_fraction) == 1.0
    negative = ppo_loss(new, old, torch.tensor([-1.0]), torch.tensor([1.0]), torch.tensor([1.0]), torch.tensor([0.0]),
                        clip_coef=0.1, vf_coef=0.5, ent_coef=0.0)
    assert float(negative.policy) == pytest.approx(1.2)  # pessimistic side: the unclipped ratio
    assert float(negative.approx_kl) == pytest.approx((1.2 - 1) - math.log(1.2), rel=1e-4)


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
