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

    from rouba_training.losses import UpdateLoss, loss_terms, total_loss

    config = SimpleNamespace(clip_coef=0.1, vf_coef=0.5, ent_coef=0.01, hand_coef=0.0, policy_objective="clipped")
    terms = loss_terms(UpdateLoss(config))
    assert [term.name for term in terms] == ["policy_loss", "value_loss", "entropy"]
    total, stats = total_loss(terms, one_row(math.log(0.6), 1.0))  # ratio 1.2
    assert stats["policy_loss"] == pytest.approx(-1.1)  # clipped: min(1.2, 1.1) * advantage
    assert stats["value_loss"] == pytest.approx(0.125)
    assert stats["entropy"] == pytest.approx(0.7)
    assert float(total) == pytest.approx(-1.1 + 0.5 * 0.125 - 0.01 * 0.7)
    assert stats["clip_fraction"] == 1.0
    _, negative = total_loss(loss_terms(UpdateLoss(SimpleNamespace(clip_coef=0.1, vf_coef=0.5, ent_coef=0.0, hand_coef=0.0,
                                                             policy_objective="clipped"))),
                             one_row(math.log(0.6), -1.0, value=1.0, entropy=0.0))
    assert negative["policy_loss"] == pytest.approx(1.2)  # pessimistic side: the unclipped ratio
    assert negative["approx_kl"] == pytest.approx((1.2 - 1) - math.log(1.2), rel=1e-4)


def test_the_kl_terms_join_the_loss_with_their_weights():
    from types import SimpleNamespace

    from rouba_training.losses import UpdateLoss, loss_terms, total_loss

    config = SimpleNamespace(clip_coef=0.2, vf_coef=0.0, ent_coef=0.0, hand_coef=0.0, policy_objective="clipped")
    uniform = torch.log(torch.tensor([[0.5, 0.5]]))
    row = one_row(math.log(0.8), 0.0)
    terms = loss_terms(UpdateLoss(config, magnet_coef=0.3, magnet=uniform, mirror_coef=0.0))
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


def test_the_mirror_fit_target_is_the_tabular_mirror_step_and_leaves_illegal_moves_out():
    from rouba_env.solve.exploitability import mmd_step
    from rouba_training.losses import mirror_fit_target

    values = np.array([[0.4, -0.2, 0.1], [1.0, 0.0, 5.0]])
    collecting = np.array([[0.5, 0.3, 0.2], [0.9, 0.1, 0.0]])
    magnet = np.array([[0.2, 0.2, 0.6], [0.5, 0.5, 0.0]])
    legal = torch.tensor([[True, True, True], [True, True, False]])
    target = mirror_fit_target(torch.as_tensor(values), torch.log(torch.as_tensor(collecting)),
                               torch.log(torch.as_tensor(magnet)), legal, step_size=2.0, temperature=0.3).numpy()
    slots = legal.numpy().ravel()
    expected = mmd_step(np.array([0, 3]), collecting.ravel()[slots], values.ravel()[slots], magnet.ravel()[slots],
                        step_size=2.0, temperature=0.3)
    assert target.ravel()[slots] == pytest.approx(expected)
    assert target[1, 2] == 0.0, "an illegal move gets nothing, whatever its value"
    unregularized = mirror_fit_target(torch.as_tensor(values[:1]), torch.log(torch.as_tensor(collecting[:1])), None,
                                      legal[:1], step_size=1.0, temperature=0.3).numpy()
    hedge = collecting[0] * np.exp(values[0])
    assert unregularized[0] == pytest.approx(hedge / hedge.sum()), "no magnet: the multiplicative-weights step"


def test_the_mirror_fit_loss_is_the_cross_entropy_to_its_target_and_reports_the_kls():
    from types import SimpleNamespace

    from rouba_training.losses import Minibatch, UpdateLoss, loss_terms, total_loss

    config = SimpleNamespace(clip_coef=0.2, vf_coef=0.5, ent_coef=0.0, hand_coef=0.0, policy_objective="mirror_fit")
    target = torch.tensor([[0.75, 0.25]])
    reference = torch.log(torch.tensor([[0.5, 0.5]]))
    terms = loss_terms(UpdateLoss(config, magnet_coef=0.05, magnet=reference, mirror_coef=1.0, collecting=reference,
                                  mirror_target=target))
    assert [term.name for term in terms] == ["policy_loss", "value_loss", "entropy", "action_value_loss",
                                             "magnet_kl", "mirror_kl"]
    log_probs = torch.log(torch.tensor([[0.6, 0.4]]))
    row = Minibatch(torch.tensor([0]), log_probs, torch.tensor([[True, True]]), log_probs[:, 0], torch.tensor([0.7]),
                    torch.tensor([0.5]), torch.tensor([math.log(0.5)]), torch.tensor([1.0]), torch.tensor([1.0]),
                    taken_action_value=torch.tensor([0.2]))
    total, stats = total_loss(terms, row)
    cross_entropy = -(0.75 * math.log(0.6) + 0.25 * math.log(0.4))
    assert stats["policy_loss"] == pytest.approx(cross_entropy)
    assert stats["action_value_loss"] == pytest.approx(0.5 * 0.8**2)
    assert stats["approx_kl"] == pytest.approx((1.2 - 1) - math.log(1.2), rel=1e-4), "moved from 0.5 to 0.6"
    kl = 0.6 * math.log(0.6 / 0.5) + 0.4 * math.log(0.4 / 0.5)
    assert stats["magnet_kl"] == pytest.approx(kl, rel=1e-5) and stats["mirror_kl"] == pytest.approx(kl, rel=1e-5)
    assert float(total) == pytest.approx(cross_entropy + 0.5 * 0.125 + 0.5 * 0.32), "the KLs are in the target"
    with pytest.raises(ValueError, match="action-value head"):
        total_loss(terms, one_row(math.log(0.6), 1.0))


def test_the_distillation_is_the_squared_error_of_the_actors_values_over_the_legal_moves():
    from types import SimpleNamespace

    from rouba_training.losses import Minibatch, UpdateLoss, loss_terms, total_loss

    config = SimpleNamespace(clip_coef=0.2, vf_coef=0.5, ent_coef=0.0, hand_coef=0.0, policy_objective="mirror_fit")
    terms = loss_terms(UpdateLoss(config, mirror_coef=1.0, collecting=torch.zeros(2, 3),
                                  mirror_target=torch.full((2, 3), 0.5), distill_action_values=True))
    assert [term.name for term in terms] == ["policy_loss", "value_loss", "entropy", "action_value_loss",
                                             "action_value_distillation", "mirror_kl"]
    legal = torch.tensor([[True, True, False], [True, True, True]])
    log_probs = torch.log(torch.where(legal, 1.0 / legal.sum(1, keepdim=True), 1e-9))
    actor = torch.tensor([[1.0, 0.0, 9.0], [0.0, 0.0, 0.0]], requires_grad=True)
    privileged = torch.tensor([[0.0, 0.0, -9.0], [0.3, -0.3, 0.6]])
    rows = Minibatch(torch.tensor([0, 1]), log_probs, legal, log_probs[:, 0], torch.zeros(2), torch.zeros(2),
                     log_probs[:, 0], torch.zeros(2), torch.zeros(2), taken_action_value=privileged[:, 0],
                     action_values=actor, privileged_action_values=privileged)
    total, stats = total_loss(terms, rows)
    # row 0: (1 - 0)^2 over its 2 legal moves, the illegal one's 18 left out; row 1: (0.09+0.09+0.36) over 3
    assert stats["action_value_distillation"] == pytest.approx(0.5 * (1.0 / 2 + 0.54 / 3) / 2)
    assert stats["action_value_loss"] == pytest.approx(0.5 * 0.09 / 2), "the privileged values learn the returns"
    total.backward()
    assert actor.grad[0, 2] == 0.0 and actor.grad[0, 0] > 0, "only legal moves are taught, towards the teacher"
    with pytest.raises(ValueError, match="the actor's and the privileged critic's action values"):
        total_loss(terms, Minibatch(**{**rows.__dict__, "privileged_action_values": None}))


def test_a_privileged_mirror_fit_teaches_the_critics_values_the_returns_and_the_actors_head_from_them():
    from types import SimpleNamespace

    from rouba_training.config import PPOSettings
    from rouba_training.losses import ActionValueDistillation, Minibatch
    from rouba_training.network import make_network
    from rouba_training.ppo import Regularization, ppo_update, whole_policy_and_action_values

    torch.manual_seed(0)
    rows, obs_size, actions, hidden_size = 64, 12, 6, 5
    network = make_network("mlp", obs_size, actions, hidden_sizes=(32,), max_players=2, critic="privileged",
                           hidden_size=hidden_size, action_values=True)
    obs, hidden = torch.randn(rows, obs_size), torch.randn(rows, hidden_size)
    mask = torch.rand(rows, actions) < 0.7
    mask[:, 0] = True
    taken = torch.stack([torch.multinomial(row.float(), 1)[0] for row in mask])
    returns = torch.randn(rows)
    batch = SimpleNamespace(obs=obs.numpy(), mask=mask.numpy(), actions=taken.numpy(), hidden=hidden.numpy(),
                            log_probs=np.zeros(rows, np.float32), advantages=np.zeros(rows, np.float32),
                            returns=returns.numpy())

    @torch.no_grad()
    def errors() -> tuple[float, float]:
        """(the critic's values of the moves taken against the returns, the actor's head against the critic's)."""
        teacher = network.privileged_action_values(obs, hidden)
        head = network.forward_with_action_values(obs)[2]
        return (float(((teacher.gather(1, taken[:, None]).squeeze(1) - returns) ** 2).mean()),
                float(torch.where(mask, head - teacher, 0.0).pow(2).sum() / mask.sum()))

    with torch.no_grad():
        assert torch.equal(whole_policy_and_action_values(network, obs, mask)[1],
                           network.actor.forward_with_action_values(obs)[2]), "the step reads the actor's own head"
    network.zero_grad()
    teacher = network.privileged_action_values(obs, hidden)
    head = network.forward_with_action_values(obs, hidden)[2]
    zeros = torch.zeros(rows)
    rows_index = torch.arange(rows)
    ActionValueDistillation(1.0).value(Minibatch(
        rows_index, torch.zeros(rows, actions), mask, zeros, zeros, zeros, zeros, zeros, zeros,
        action_values=head, privileged_action_values=teacher)).backward()
    assert all(parameter.grad is None for parameter in network.privileged_action_value_head.parameters()), \
        "the pupil does not pull its teacher"
    assert network.actor.action_value_head.weight.grad.abs().sum() > 0
    before = errors()
    optimizer = torch.optim.Adam(network.parameters(), lr=3e-3)
    settings = PPOSettings(policy_objective="mirror_fit", update_epochs=8, minibatch_size=16, vf_coef=1.0)
    for update in range(1, 6):  # the teacher settles on the returns and the pupil follows it
        stats = ppo_update(network, optimizer, batch, ppo=settings, regularization=Regularization(mirror_coef=1.0),
                           generator=torch.Generator().manual_seed(update), device=torch.device("cpu"), update=update)
    after = errors()
    assert after[0] < 0.5 * before[0] and after[1] < 0.5 * before[1], (before, after)
    assert stats["action_value_distillation"] > 0 and stats["action_value_loss"] > 0
    with pytest.raises(ValueError, match="need the hidden cards"):
        network.privileged_action_values(obs, None)


def test_a_mirror_fit_update_moves_the_policy_to_the_closed_form_step():
    from types import SimpleNamespace

    from rouba_training.config import PPOSettings
    from rouba_training.losses import mirror_fit_target
    from rouba_training.network import make_network
    from rouba_training.ppo import Regularization, ppo_update, whole_log_probs, whole_policy_and_action_values

    torch.manual_seed(0)
    rows, obs_size, actions = 64, 12, 6
    network = make_network("mlp", obs_size, actions, hidden_sizes=(32,), max_players=2, action_values=True)
    obs = torch.randn(rows, obs_size)
    mask = torch.rand(rows, actions) < 0.7
    mask[:, 0] = True
    taken = torch.stack([torch.multinomial(row.float(), 1)[0] for row in mask])
    returns = torch.randn(rows)
    batch = SimpleNamespace(obs=obs.numpy(), mask=mask.numpy(), actions=taken.numpy(), hidden=None,
                            log_probs=np.zeros(rows, np.float32), advantages=np.zeros(rows, np.float32),
                            returns=returns.numpy())
    collecting, frozen_values = whole_policy_and_action_values(network, obs, mask)
    before_values = frozen_values.gather(1, taken[:, None]).squeeze(1)
    target = mirror_fit_target(frozen_values, collecting, None, mask, step_size=1.0, temperature=0.0)

    def distance() -> float:
        log_probs = whole_log_probs(network, obs, mask)
        return float((target * (torch.log(target.clamp_min(1e-12)) - log_probs)).where(mask, 0.0).sum(1).mean())

    start = distance()
    optimizer = torch.optim.Adam(network.parameters(), lr=3e-3)
    settings = PPOSettings(policy_objective="mirror_fit", update_epochs=8, minibatch_size=16, vf_coef=1.0)
    stats = ppo_update(network, optimizer, batch, ppo=settings, regularization=Regularization(mirror_coef=1.0),
                       generator=torch.Generator().manual_seed(0), device=torch.device("cpu"), update=1)
    assert distance() < 0.5 * start, "the policy moved most of the way to its target"
    after_values = whole_policy_and_action_values(network, obs, mask)[1].gather(1, taken[:, None]).squeeze(1)
    assert ((after_values - returns) ** 2).mean() < ((before_values - returns) ** 2).mean()
    assert stats["action_value_loss"] > 0 and stats["mirror_kl"] > 0
    with pytest.raises(ValueError, match="mirror_coef above 0"):
        ppo_update(network, optimizer, batch, ppo=settings, regularization=None,
                   generator=torch.Generator().manual_seed(0), device=torch.device("cpu"), update=2)


def test_a_new_loss_term_is_one_class_listed_once_and_its_statistics_reach_metrics_csv(tmp_path, monkeypatch):
    import csv

    from rouba_training import losses
    from rouba_training.cli import main as train_main
    from tests.training.test_train import TINY_FLAGS

    class ToyTerm(losses.LossTerm):
        """Reported only: a constant value and one side statistic."""

        name = "toy_term"
        reports = ("toy_term", "toy_side")

        @classmethod
        def join(cls, update):
            return cls(0.0)

        def value(self, batch):
            return batch.entropy.mean() * 0.0 + 1.5

        def statistics(self):
            return {"toy_side": -2.0}

    monkeypatch.setattr(losses, "LOSS_TERMS", (*losses.LOSS_TERMS, ToyTerm))
    assert train_main([*TINY_FLAGS, "--total-steps", "1", "--run-dir", str(tmp_path / "run")]) == 0
    with (tmp_path / "run" / "metrics.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert rows and all(float(row["toy_term"]) == 1.5 and float(row["toy_side"]) == -2.0 for row in rows)
