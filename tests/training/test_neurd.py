"""The NeuRD policy term on hand-made cases: its push on the logits, which does not fade with a move's
probability, its expectation (each move's advantage), the trust-region and threshold gates, and a short
run that trains with it and resumes."""

import math

import pytest
import torch

from rouba_training.config import TrainConfig
from rouba_training.losses import ClippedNeuRD, ClippedPolicy, Minibatch
from rouba_training.ppo import MaskedCategorical
from rouba_training.train import train
from tests.training.test_train import TINY, metric_rows

LEGAL_TWO_OF_THREE = torch.tensor([[True, True, False]])


def minibatch(logits, legal, action, advantage, old_log_prob=None):
    dist = MaskedCategorical(logits, legal)
    actions = torch.tensor([action])
    log_prob = dist.log_prob(actions)
    old = log_prob.detach() if old_log_prob is None else torch.tensor([old_log_prob])
    return Minibatch(torch.tensor([0]), dist.log_probs, dist.mask, log_prob, dist.entropy(), torch.zeros(1), old,
                     torch.tensor([advantage]), torch.zeros(1), actions=actions)


def logit_gradient(term, logits, action, advantage, legal=LEGAL_TWO_OF_THREE, old_log_prob=None):
    logits = logits.clone().requires_grad_(True)
    term.value(minibatch(logits, legal, action, advantage, old_log_prob)).backward()
    return logits.grad[0].tolist()


def test_the_push_on_a_rarely_drawn_move_does_not_fade():
    """p = (3/4, 1/4); the second move drawn with advantage 1. Its force is 1/p - 1 = 3, the other's -1; the
    centred logits' gradient spreads each over the two legal moves: dL/dz = (2, -2, 0). The policy gradient
    gives the second move's logit -(1 - p) = -0.75. Drawn with probability p, NeuRD's expected push on a
    move is its advantage; the policy gradient's is p (1 - p) times it, which fades as the move is dropped."""
    neurd = ClippedNeuRD("policy_loss", 1.0, clip_coef=0.2, threshold=6.0, force_clip=100.0)
    logits = torch.tensor([[math.log(3.0), 0.0, 5.0]])
    assert logit_gradient(neurd, logits, 1, 1.0) == pytest.approx([2.0, -2.0, 0.0], abs=1e-5)
    ppo = ClippedPolicy("policy_loss", 1.0, clip_coef=0.2)
    assert logit_gradient(ppo, logits, 1, 1.0) == pytest.approx([0.75, -0.75, 0.0], abs=1e-5)
    rare = torch.tensor([[math.log(99.0), 0.0, 5.0]])  # p = (0.99, 0.01)
    assert logit_gradient(neurd, rare, 1, 1.0)[1] == pytest.approx(-(1 / 0.01 - 1 + 1) / 2, rel=1e-4)
    assert logit_gradient(ppo, rare, 1, 1.0)[1] == pytest.approx(-0.99, rel=1e-4)


def test_in_expectation_each_move_is_pushed_by_its_own_advantage():
    """Over the moves drawn from the policy, the expected force on move b is A(b) - sum_a p(a) A(a)."""
    neurd = ClippedNeuRD("policy_loss", 1.0, clip_coef=0.2, threshold=6.0, force_clip=100.0)
    legal = torch.tensor([[True, True, True]])
    logits = torch.tensor([[1.5, 0.0, -2.0]])
    probs = torch.softmax(logits, -1)[0]
    advantages = torch.tensor([0.3, -0.5, 2.0])
    expected = torch.zeros(3)
    for action in range(3):
        expected += probs[action] * torch.tensor(logit_gradient(neurd, logits, action, advantages[action].item(), legal))
    force = advantages - (probs * advantages).sum()
    centring = torch.eye(3) - 1.0 / 3.0  # d centred_b / d z_c
    assert expected.tolist() == pytest.approx((-(centring @ force)).tolist(), abs=1e-5)


def test_no_push_past_the_trust_region_in_the_advantages_direction():
    neurd = ClippedNeuRD("policy_loss", 1.0, clip_coef=0.2, threshold=6.0, force_clip=100.0)
    logits = torch.tensor([[0.0, 0.0, 5.0]])  # p = 1/2 now
    drawn_at_a_third = math.log(1 / 3)  # ratio 1.5: past 1 + clip
    assert logit_gradient(neurd, logits, 0, 1.0, old_log_prob=drawn_at_a_third) == [0.0, 0.0, 0.0]
    # a negative advantage still pulls the move back, by the probability it was drawn with (1/3), not the
    # current one (1/2): force (-1 * (3 - 1), 1), dL/dz = (1.5, -1.5, 0)
    pushed_back = logit_gradient(neurd, logits, 0, -1.0, old_log_prob=drawn_at_a_third)
    assert pushed_back == pytest.approx([1.5, -1.5, 0.0], abs=1e-5)
    drawn_at_two_thirds = math.log(2 / 3)  # ratio 0.75: below 1 - clip
    assert logit_gradient(neurd, logits, 0, -1.0, old_log_prob=drawn_at_two_thirds) == [0.0, 0.0, 0.0]
    assert logit_gradient(neurd, logits, 0, 1.0, old_log_prob=drawn_at_two_thirds)[0] < 0, "a positive one pushes"


def test_a_move_drawn_at_a_probability_that_underflows_gives_no_nan():
    neurd = ClippedNeuRD("policy_loss", 1.0, clip_coef=0.2, threshold=6.0, force_clip=100.0)
    gradient = logit_gradient(neurd, torch.tensor([[0.0, 0.0, 5.0]]), 0, -1.0, old_log_prob=-120.0)
    assert all(math.isfinite(value) for value in gradient)


def test_no_push_past_the_threshold():
    neurd = ClippedNeuRD("policy_loss", 1.0, clip_coef=0.2, threshold=2.0, force_clip=100.0)
    sure = torch.tensor([[6.0, 0.0, 0.0]])  # centred logits (3, -3) over the legal two: both past 2
    assert logit_gradient(neurd, sure, 0, 1.0) == pytest.approx([0.0, 0.0, 0.0], abs=1e-7)
    towards_the_other = logit_gradient(neurd, sure, 1, 1.0)
    assert towards_the_other[0] > 0 and towards_the_other[1] < 0, "pushes back towards 0 are kept"


def test_one_rows_push_is_clipped():
    neurd = ClippedNeuRD("policy_loss", 1.0, clip_coef=0.2, threshold=20.0, force_clip=10.0)
    rare = torch.tensor([[math.log(999.0), 0.0, 5.0]])  # p = (0.999, 0.001): force 999 before the clip
    assert logit_gradient(neurd, rare, 1, 1.0) == pytest.approx([5.5, -5.5, 0.0], abs=1e-3)  # (10 + 1) / 2


@pytest.mark.parametrize("settings, message", [
    ({"policy_loss": "vtrace"}, "policy_loss must be one of ppo, neurd"),
    ({"neurd_threshold": 0.0}, "neurd_threshold"),
    ({"neurd_clip": 0.0}, "neurd_clip"),
])
def test_neurd_settings_are_checked(settings, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**settings)


@pytest.mark.slow
def test_a_neurd_run_trains_and_resumes(tmp_path):
    settings = dict(TINY, total_steps=900, self_play_weight=1.0, past_self_weight=0.0, scripted_weight=0.0,
                    policy_loss="neurd", magnet="uniform", magnet_coef=0.05, magnet_schedule="power")
    first = train(TrainConfig(run_dir=str(tmp_path), **dict(settings, total_steps=400)))
    resumed = train(TrainConfig(run_dir=str(tmp_path), **settings), resume=True)
    assert first["learner_steps"] < resumed["learner_steps"]
    rows = metric_rows(tmp_path)
    losses = [float(row["policy_loss"]) for row in rows]
    assert all(math.isfinite(loss) for loss in losses) and any(loss != 0.0 for loss in losses)
