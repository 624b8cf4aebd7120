"""Regularized self-play's pieces on tiny hand-made cases: schedules, the exact KLs and their gradients, the
moving average of the weights, and a short run that uses them all and resumes."""

import math

import pytest
import torch

from rouba_training.config import TrainConfig
from rouba_training.ppo import MaskedCategorical
from rouba_training.regularizers import (WeightAverage, kl_from_uniform, kl_over_legal, scheduled, scheduled_until,
                                         uniform_log_probs)
from rouba_training.trainer import train
from tests.training.test_train import TINY, metric_rows


def test_schedules():
    assert scheduled("constant", 0.3, 0.9, 50) == 0.3
    assert scheduled("linear", 1e-3, 0.25, 7) == pytest.approx(7.5e-4)
    assert scheduled("linear", 1e-3, 0.5, 7, floor=1e-4) == pytest.approx(5.5e-4)
    assert scheduled("linear", 1e-3, 1.2, 7) == 0.0, "a run carried past its total stays at the floor"
    assert scheduled("power", 0.4, 0.0, 3, power=0.5) == pytest.approx(0.2)
    assert scheduled("power", 0.4, 0.0, 10**6, floor=0.01) == 0.01
    with pytest.raises(ValueError, match="constant, linear, power"):
        scheduled("cosine", 1.0, 0.0, 0)


def test_a_schedule_over_part_of_the_run():
    assert scheduled_until("linear", 0.02, 0.15, 40, until=0.3) == pytest.approx(0.01)  # half of its share
    assert scheduled_until("linear", 0.02, 0.3, 80, until=0.3) == 0.0
    assert scheduled_until("constant", 0.02, 0.29, 79, until=0.3) == 0.02
    assert scheduled_until("constant", 0.02, 0.31, 81, until=0.3) == 0.0, "off after its share"
    assert scheduled_until("power", 0.4, 0.1, 3, until=1.0) == pytest.approx(0.2)


def test_kl_over_legal_actions_by_hand():
    legal = torch.tensor([[True, True, False]])
    logits = torch.tensor([[math.log(3.0), 0.0, 5.0]], requires_grad=True)
    log_probs = MaskedCategorical(logits, legal).log_probs  # p = (3/4, 1/4) over the legal two
    uniform = uniform_log_probs(legal)
    assert uniform[0, :2].exp().tolist() == pytest.approx([0.5, 0.5]) and uniform[0, 2] == -math.inf
    kl = kl_over_legal(log_probs, uniform, legal)
    expected = 0.75 * math.log(1.5) + 0.25 * math.log(0.5)
    assert kl.item() == pytest.approx(expected, rel=1e-6)
    kl.sum().backward()
    # d KL / d logit_0 = p0 p1 (log p0 - log p1) for two actions: 3/16 * log 3; the illegal logit gets nothing
    assert logits.grad[0, 0].item() == pytest.approx(3 / 16 * math.log(3.0), rel=1e-5)
    assert logits.grad[0, 1].item() == pytest.approx(-3 / 16 * math.log(3.0), rel=1e-5)
    assert logits.grad[0, 2].item() == 0.0
    assert kl_over_legal(log_probs, log_probs, legal).item() == pytest.approx(0.0, abs=1e-7)


def test_kl_from_the_uniform_policy_by_hand():
    """KL(uniform || p) over the legal moves, and its gradient on a logit: p(a) - 1/n, which does not fade as
    p(a) goes to 0 (the entropy's does)."""
    legal = torch.tensor([[True, True, False], [True, True, True]])
    logits = torch.tensor([[math.log(3.0), 0.0, 5.0], [0.0, 0.0, 0.0]], requires_grad=True)
    log_probs = MaskedCategorical(logits, legal).log_probs  # row 0: p = (3/4, 1/4); row 1: uniform
    kl = kl_from_uniform(log_probs, legal)
    assert kl[0].item() == pytest.approx(0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25), rel=1e-6)
    assert kl[1].item() == pytest.approx(0.0, abs=1e-7)
    kl[0].backward()
    assert logits.grad[0].tolist() == pytest.approx([0.75 - 0.5, 0.25 - 0.5, 0.0], abs=1e-6)
    dropped = torch.tensor([[12.0, 0.0]], requires_grad=True)  # the second move at p = 6e-6
    both = torch.tensor([[True, True]])
    kl_from_uniform(MaskedCategorical(dropped, both).log_probs, both).backward()
    assert dropped.grad[0, 1].item() == pytest.approx(-0.5, abs=1e-4), "the pull back is about 1/n"


def test_the_moving_average_of_weights():
    network = torch.nn.Linear(2, 1)
    with torch.no_grad():
        network.weight.fill_(1.0)
        network.bias.fill_(0.0)
    average = WeightAverage(network, decay=0.75)
    with torch.no_grad():
        network.weight.fill_(5.0)
    average.update(network)
    assert average.network.weight.tolist() == [[2.0, 2.0]]  # 0.75 * 1 + 0.25 * 5
    assert not any(p.requires_grad for p in average.network.parameters())
    with pytest.raises(ValueError, match="decay lies in 0..1"):
        WeightAverage(network, 1.0)


@pytest.mark.parametrize("settings, message", [
    ({"magnet": "uniform", "magnet_coef": 0.0}, "a magnet needs a weight above 0"),
    ({"magnet": "none", "magnet_coef": 0.1}, "a weight needs a magnet"),
    ({"magnet": "ema", "magnet_coef": 0.1, "weight_average": 0.0}, "set weight_average"),
    ({"play_average": True}, "play_average was removed: playing the moving average of the weights is gone"),
    ({"magnet": "snapshot"}, "magnet='snapshot' was removed"),
    ({"magnet_interval": 5}, "magnet_interval was removed"),
    ({"magnet_schedule": "cosine"}, "magnet_schedule must be one of constant, linear, power"),
    ({"support_schedule": "cosine"}, "support_schedule must be one of constant, linear, power"),
    ({"support_coef": -0.1}, "support_coef"),
    ({"support_until": 0.0}, "support_until"),
    ({"learning_rate_floor": 0.5}, "learning_rate_floor=0.5 is above learning_rate"),
    ({"every_seat": "sometimes"}, "every_seat must be one of auto, on, off"),
])
def test_regularizer_settings_are_checked(settings, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig.of(**settings)


@pytest.mark.slow
@pytest.mark.parametrize("magnet", ["uniform", "ema"])
def test_a_regularized_self_play_run_trains_and_resumes(tmp_path, magnet):
    settings = dict(TINY, total_steps=900, self_play_weight=1.0, past_self_weight=0.0, scripted_weight=0.0,
                    magnet=magnet, magnet_coef=0.2, mirror_coef=1.0, mirror_schedule="power",
                    weight_average=0.9, learning_rate_schedule="power", learning_rate_floor=1e-4,
                    support_coef=0.1, support_schedule="linear")
    first = train(TrainConfig.of(run_dir=str(tmp_path), **dict(settings, total_steps=400)))
    resumed = train(TrainConfig.of(run_dir=str(tmp_path), **settings), resume=True)
    assert first["learner_steps"] < resumed["learner_steps"]
    rows = metric_rows(tmp_path)
    assert all(float(row["magnet_kl"]) >= 0 and float(row["mirror_kl"]) >= 0 for row in rows)
    assert any(float(row["magnet_kl"]) > 0 for row in rows) and any(float(row["mirror_kl"]) > 0 for row in rows)
    assert all(float(row["support_kl"]) >= 0 for row in rows) and any(float(row["support_kl"]) > 0 for row in rows)
    rates = [float(row["learning_rate"]) for row in rows]
    assert rates == sorted(rates, reverse=True) and rates[-1] >= 1e-4
