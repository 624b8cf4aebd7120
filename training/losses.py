"""The loss of a PPO update as named terms: each is one piece with its weight, summed in order.

    loss = policy (PPO's clipped objective) + vf_coef * value - ent_coef * entropy
           [+ hand_coef * hand] [+ magnet_coef * KL(policy || magnet)] [+ mirror_coef * KL(policy || collector)]
           [+ support_coef * KL(uniform || policy)]

A term reads one minibatch (`Minibatch`: the network's outputs on its rows and the batch's targets) and
gives its unweighted value, which is also what the update reports under the term's name. Adding a term
to the trainer is writing one class and listing it in `loss_terms`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from rouba_training.regularizers import kl_from_uniform, kl_over_legal


@dataclass
class Minibatch:
    """One gradient step's rows: the network's outputs on them and what the batch recorded."""

    rows: torch.Tensor
    """Indices of the rows in the batch (the batch-wide reference policies are indexed by them)."""
    log_probs: torch.Tensor
    """[B, A] the network's masked log-probabilities."""
    legal: torch.Tensor
    """bool [B, A] the legal actions."""
    log_prob: torch.Tensor
    """[B] log-probability of the action taken."""
    entropy: torch.Tensor
    """[B] entropy over the legal actions."""
    values: torch.Tensor
    old_log_prob: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    hands: torch.Tensor | None = None
    """The hand head's guesses of the hidden cards, when the network has one."""
    hidden: torch.Tensor | None = None
    """The hidden cards themselves (the hand head's targets)."""


@dataclass
class LossTerm:
    """A named piece of the loss: ``weight * value(minibatch)`` joins the total; ``name`` is its statistic."""

    name: str
    weight: float

    def value(self, batch: Minibatch) -> torch.Tensor:
        raise NotImplementedError

    def statistics(self) -> dict[str, float]:
        """Side statistics of the last `value` call (the policy term's KL estimate and clip fraction)."""
        return {}


@dataclass
class ClippedPolicy(LossTerm):
    """PPO's clipped surrogate, to minimise: the pessimistic side of ``ratio * advantage``."""

    clip_coef: float = 0.2
    last: dict[str, float] = field(default_factory=dict)

    def value(self, batch: Minibatch) -> torch.Tensor:
        log_ratio = batch.log_prob - batch.old_log_prob
        ratio = log_ratio.exp()
        unclipped = -batch.advantages * ratio
        clipped = -batch.advantages * ratio.clamp(1.0 - self.clip_coef, 1.0 + self.clip_coef)
        with torch.no_grad():
            self.last = {"approx_kl": ((ratio - 1.0) - log_ratio).mean().item(),
                         "clip_fraction": ((ratio - 1.0).abs() > self.clip_coef).float().mean().item()}
        return torch.max(unclipped, clipped).mean()

    def statistics(self) -> dict[str, float]:
        return self.last


class ValueLoss(LossTerm):
    """Half the squared error of the value estimate against the GAE returns."""

    def value(self, batch: Minibatch) -> torch.Tensor:
        return 0.5 * ((batch.values - batch.returns) ** 2).mean()


class Entropy(LossTerm):
    """The mean entropy over the legal actions (a bonus: its weight is ``-ent_coef``)."""

    def value(self, batch: Minibatch) -> torch.Tensor:
        return batch.entropy.mean()


class HandPrediction(LossTerm):
    """Squared error of the hand head's guesses of every hidden card (an auxiliary task)."""

    def value(self, batch: Minibatch) -> torch.Tensor:
        if batch.hands is None or batch.hidden is None:
            raise ValueError("the hand term needs a network with a hand head and the batch's hidden cards")
        return ((batch.hands - batch.hidden) ** 2).mean()


@dataclass
class KLToReference(LossTerm):
    """The exact ``KL(policy || reference)`` over the legal actions, the reference's log-probabilities given
    for the whole batch (a magnet, or the policy that collected the batch: the mirror-descent step)."""

    reference: torch.Tensor | None = None

    def value(self, batch: Minibatch) -> torch.Tensor:
        if self.reference is None:
            raise ValueError(f"the {self.name} term needs its reference policy's log-probabilities")
        return kl_over_legal(batch.log_probs, self.reference[batch.rows], batch.legal).mean()


class SupportKL(LossTerm):
    """The exact ``KL(uniform || policy)`` over the legal actions: a barrier against dropping a legal move."""

    def value(self, batch: Minibatch) -> torch.Tensor:
        return kl_from_uniform(batch.log_probs, batch.legal).mean()


def loss_terms(ppo, *, magnet_coef: float = 0.0, magnet: torch.Tensor | None = None, mirror_coef: float = 0.0,
               collecting: torch.Tensor | None = None, support_coef: float = 0.0) -> list[LossTerm]:
    """The terms of one update's loss, in the order they are summed (``ppo``: a `PPOSettings`, its clip and
    weights; the KL terms' weights and reference policies for the whole batch as given)."""
    policy = ClippedPolicy("policy_loss", 1.0, ppo.clip_coef)
    terms: list[LossTerm] = [policy, ValueLoss("value_loss", ppo.vf_coef), Entropy("entropy", -ppo.ent_coef)]
    if ppo.hand_coef > 0:
        terms.append(HandPrediction("hand_loss", ppo.hand_coef))
    if magnet_coef > 0:
        terms.append(KLToReference("magnet_kl", magnet_coef, magnet))
    if mirror_coef > 0:
        terms.append(KLToReference("mirror_kl", mirror_coef, collecting))
    if support_coef > 0:
        terms.append(SupportKL("support_kl", support_coef))
    return terms


def total_loss(terms: list[LossTerm], batch: Minibatch) -> tuple[torch.Tensor, dict[str, float]]:
    """(the weighted sum of the terms, each term's unweighted value and side statistics)."""
    total = None
    stats: dict[str, float] = {}
    for term in terms:
        value = term.value(batch)
        weighted = value if term.weight == 1.0 else term.weight * value
        total = weighted if total is None else total + weighted
        stats[term.name] = value.item()
        stats.update(term.statistics())
    if total is None:
        raise ValueError("a loss needs at least one term")
    return total, stats
