"""PPO's pieces as small, separately tested functions.

`MaskedCategorical` follows sb3-contrib's approach: illegal actions get a
large negative logit (so they are never sampled and get no probability), and
the entropy is summed over legal actions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from rouba_training.config import PPOSettings
from rouba_training.network import masked_logits

if TYPE_CHECKING:
    from rouba_training.losses import Minibatch


class MaskedCategorical:
    """Categorical distribution over the legal actions of each row."""

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor):
        self.mask = mask.bool()
        if not bool(self.mask.any(dim=-1).all()):
            raise ValueError("every row of the action mask needs at least one legal action")
        self.logits = masked_logits(logits, self.mask)
        self.log_probs = torch.log_softmax(self.logits, dim=-1)
        self.probs = self.log_probs.exp()

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """Gumbel-max sampling: argmax of logits plus Gumbel noise (cheaper than multinomial)."""
        uniform = torch.rand(self.logits.shape, generator=generator, device=self.logits.device)
        gumbel = -torch.log(-torch.log(uniform.clamp_min(1e-20)))
        return (self.logits + gumbel).argmax(dim=-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        """Entropy over legal actions (masked terms are exactly zero, not 0 * -1e8)."""
        terms = torch.where(self.mask, self.probs * self.log_probs, torch.zeros_like(self.probs))
        return -terms.sum(dim=-1)


def gae(values: np.ndarray, recorded: np.ndarray, rewards: np.ndarray, dones: np.ndarray,
        *,
        gamma: float, gae_lambda: float) -> np.ndarray:
    """Generalized advantage estimates for learner turns interleaved with other seats' turns.

    Arrays are ``[T, B]`` over engine steps ``t`` and games ``b``. ``recorded``
    marks the steps where the learner acted (``values`` holds its value
    estimate there); ``dones`` marks the step on which a game ended and
    ``rewards`` the learner's final reward then (whoever made the last move).
    A learner turn's successor is the learner's next recorded turn in the same
    game; the last turn of a game bootstraps from 0 and collects the reward.
    Every recorded game must end inside the window (the collector ensures it).
    Returns advantages ``[T, B]`` (0 where nothing was recorded).
    """
    steps, batch = values.shape
    advantages = np.zeros((steps, batch), dtype=np.float32)
    next_value = np.zeros(batch, dtype=np.float64)
    next_advantage = np.zeros(batch, dtype=np.float64)
    pending_reward = np.zeros(batch, dtype=np.float64)
    for t in range(steps - 1, -1, -1):
        ended = dones[t]
        next_value[ended] = 0.0
        next_advantage[ended] = 0.0
        pending_reward[ended] = rewards[t][ended]
        acted = recorded[t]
        delta = pending_reward + gamma * next_value - values[t]
        advantage = delta + gamma * gae_lambda * next_advantage
        advantages[t] = np.where(acted, advantage, 0.0)
        next_value = np.where(acted, values[t], next_value)
        next_advantage = np.where(acted, advantage, next_advantage)
        pending_reward = np.where(acted, 0.0, pending_reward)
    return advantages


@dataclass
class Regularization:
    """This update's KL terms (`rouba_training.regularizers`): their weights and the magnet's network
    (None: the uniform policy over the legal actions). A weight of 0 leaves its term out; the trainer
    passes none at all when every weight is 0."""

    magnet_coef: float = 0.0
    mirror_coef: float = 0.0
    magnet: torch.nn.Module | None = None
    support_coef: float = 0.0


FROZEN_CHUNK = 8192
"""Rows per forward pass when a whole batch is read by a frozen network."""


@torch.no_grad()
def whole_log_probs(network: torch.nn.Module, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """[B, A]: a frozen pass of ``network``'s masked log-probabilities over every action, in minibatch-sized
    chunks (a privileged critic's actor reads the observation only)."""
    from rouba_training.network import playing_network

    actor = playing_network(network)
    parts = [MaskedCategorical(actor(obs[start:start + FROZEN_CHUNK])[0], mask[start:start + FROZEN_CHUNK]).log_probs
             for start in range(0, len(obs), FROZEN_CHUNK)]
    return torch.cat(parts) if parts else torch.zeros(mask.shape, device=mask.device)


@torch.no_grad()
def whole_policy_and_action_values(network: torch.nn.Module, obs: torch.Tensor,
                                   mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """([B, A], [B, A]): one frozen pass of the masked log-probabilities and the action-value head over the
    batch, in chunks (the mirror fit's collecting policy and values)."""
    log_probs, values = [], []
    for start in range(0, len(obs), FROZEN_CHUNK):
        logits, _, action_values = network.forward_with_action_values(obs[start:start + FROZEN_CHUNK])
        log_probs.append(MaskedCategorical(logits, mask[start:start + FROZEN_CHUNK]).log_probs)
        values.append(action_values)
    return torch.cat(log_probs), torch.cat(values)


def ppo_update(network: torch.nn.Module, optimizer: torch.optim.Optimizer, batch, *, ppo: PPOSettings,
               regularization: Regularization | None = None, generator: torch.Generator, device: torch.device,
               update: int) -> dict[str, float]:
    """One PPO update on a collected batch: ``ppo.update_epochs`` passes of minibatch gradient steps.

    ``batch`` is a `rouba_training.rollout.Batch`; ``ppo`` the update's settings (its clip, loss weights,
    minibatch size, epochs and gradient clip). ``regularization`` adds the exact KL terms to a magnet and to
    the collecting policy (the network as it is when called). ``update`` names the update in an error.
    Returns the mean of each of the terms' statistics (`rouba_training.losses.loss_statistics`) over the
    gradient steps, 0 for a term this update leaves out.
    """
    from rouba_training.losses import UpdateLoss, loss_statistics, loss_terms, total_loss

    network.train()
    tensors = update_tensors(batch, device=device)
    size = len(batch.actions)
    minibatches = max(1, round(size / ppo.minibatch_size))
    kl_terms = regularization_terms(network, batch, tensors=tensors, ppo=ppo, regularization=regularization,
                                    device=device)
    terms = loss_terms(UpdateLoss(ppo, **kl_terms, distill_action_values=network.privileged))
    reported = loss_statistics()
    stats: dict[str, list[float]] = {name: [] for name in reported}
    for _ in range(ppo.update_epochs):
        order = torch.randperm(size, generator=generator, device=device)
        for rows in torch.tensor_split(order, minibatches):
            total, step_stats = total_loss(terms, forward_minibatch(network, tensors, rows=rows, ppo=ppo))
            if not torch.isfinite(total):
                raise RuntimeError(f"the loss became {float(total)} at update {update}; "
                                   f"lower --learning-rate or check the run's settings")
            optimizer.zero_grad()
            total.backward()
            torch.nn.utils.clip_grad_norm_(network.parameters(), ppo.max_grad_norm)
            optimizer.step()
            for name in reported:  # a term left out of this update reports 0
                stats[name].append(step_stats.get(name, 0.0))
    return {name: float(np.mean(values)) for name, values in stats.items()}


@dataclass
class UpdateTensors:
    """A batch's arrays as tensors on the update's device, which every minibatch indexes."""

    obs: torch.Tensor
    mask: torch.Tensor
    actions: torch.Tensor
    old_log_probs: torch.Tensor
    advantages: torch.Tensor
    """Normalised over the whole batch."""
    returns: torch.Tensor
    hidden: torch.Tensor | None
    """A privileged critic's extra input (None without one)."""


def update_tensors(batch, *, device: torch.device) -> UpdateTensors:
    """``batch``'s arrays moved to ``device`` once per update, with its advantages normalised."""
    to_tensor = lambda array: torch.as_tensor(array, device=device)  # noqa: E731
    obs, mask, actions = to_tensor(batch.obs), to_tensor(batch.mask), to_tensor(batch.actions)
    old_log_probs, advantages, returns = to_tensor(batch.log_probs), to_tensor(batch.advantages), to_tensor(batch.returns)
    hidden = None if batch.hidden is None else to_tensor(batch.hidden)  # a privileged critic's extra input
    # Advantages are normalised over the whole batch (a per-minibatch std of one row would be NaN).
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    return UpdateTensors(obs=obs, mask=mask, actions=actions, old_log_probs=old_log_probs, advantages=advantages,
                         returns=returns, hidden=hidden)


def regularization_terms(network: torch.nn.Module, batch, *, tensors: UpdateTensors, ppo: PPOSettings,
                         regularization: Regularization | None, device: torch.device) -> dict:
    """The `UpdateLoss` fields of the KL terms (the frozen magnet's and collecting policy's log-probabilities,
    the mirror fit's target), read once per update before the network moves; ValueError where the policy
    objective lacks what it needs."""
    from rouba_training.losses import mirror_fit_target
    from rouba_training.regularizers import uniform_log_probs

    fitting = ppo.policy_objective == "mirror_fit"  # the action-value head's values
    searching = ppo.policy_objective == "searched_mirror"  # the batch's searched values
    if (fitting or searching) and (regularization is None or regularization.mirror_coef <= 0):
        raise ValueError(f"policy_objective={ppo.policy_objective} needs a mirror_coef above 0 (its step size is "
                         f"1 / mirror_coef)")
    if searching and (batch.searched_values is None or batch.searched is None):
        raise ValueError("policy_objective=searched_mirror needs a batch with searched values")
    kl_terms: dict = {}
    if regularization is None:
        return kl_terms
    to_tensor = lambda array: torch.as_tensor(array, device=device)  # noqa: E731
    obs, legal = tensors.obs, tensors.mask.bool()
    collecting = frozen_values = None
    if fitting:
        collecting, frozen_values = whole_policy_and_action_values(network, obs, legal)
    elif searching:
        collecting = whole_log_probs(network, obs, legal)
        frozen_values = to_tensor(np.nan_to_num(batch.searched_values, nan=0.0))
        kl_terms["mirror_weights"] = to_tensor(batch.searched.astype(np.float32))
    elif regularization.mirror_coef > 0:
        collecting = whole_log_probs(network, obs, legal)
    kl_terms |= dict(
        magnet_coef=regularization.magnet_coef, mirror_coef=regularization.mirror_coef,
        support_coef=regularization.support_coef, collecting=collecting,
        magnet=(None if regularization.magnet_coef == 0 else uniform_log_probs(legal)
                if regularization.magnet is None else whole_log_probs(regularization.magnet, obs, legal)))
    if fitting or searching:
        kl_terms["mirror_target"] = mirror_fit_target(
            frozen_values, collecting, kl_terms["magnet"], legal,
            step_size=1.0 / regularization.mirror_coef, temperature=regularization.magnet_coef)
    return kl_terms


def forward_minibatch(network: torch.nn.Module, tensors: UpdateTensors, *, rows: torch.Tensor,
                      ppo: PPOSettings) -> Minibatch:
    """The `Minibatch` of ``rows``: the network's forward pass on them, through the heads the losses read."""
    from rouba_training.losses import Minibatch

    obs, mask, actions = tensors.obs, tensors.mask, tensors.actions
    hidden_rows = None if tensors.hidden is None else tensors.hidden[rows]
    hands = None
    taken_action_value = action_values = privileged_values = None
    fitting = ppo.policy_objective == "mirror_fit"  # the action-value head's values
    if fitting:  # the returns teach a privileged critic's action values, which teach the actor's head
        logits, values, action_values = network.forward_with_action_values(obs[rows], hidden_rows)
        if network.privileged:
            privileged_values = network.privileged_action_values(obs[rows], hidden_rows)
        return_values = action_values if privileged_values is None else privileged_values
        taken_action_value = return_values.gather(-1, actions[rows].long().unsqueeze(-1)).squeeze(-1)
    elif ppo.hand_coef > 0:  # the auxiliary head guesses the hidden cards from the observation
        logits, values, hands = network.forward_with_hands(obs[rows], hidden_rows)
    else:
        logits, values = network(obs[rows], hidden_rows)
    dist = MaskedCategorical(logits, mask[rows])
    return Minibatch(
        rows=rows, log_probs=dist.log_probs, legal=dist.mask, log_prob=dist.log_prob(actions[rows]),
        entropy=dist.entropy(), values=values, old_log_prob=tensors.old_log_probs[rows],
        advantages=tensors.advantages[rows], returns=tensors.returns[rows], hands=hands, hidden=hidden_rows,
        taken_action_value=taken_action_value, action_values=action_values,
        privileged_action_values=privileged_values)
