"""The loss of a PPO update as named terms: each is one piece with its weight, summed in order.

    loss = policy (PPO's clipped objective) + vf_coef * value - ent_coef * entropy
           [+ hand_coef * hand] [+ magnet_coef * KL(policy || magnet)] [+ mirror_coef * KL(policy || collector)]
           [+ support_coef * KL(uniform || policy)]

or, with ``policy_objective`` mirror_fit, the policy term is the cross-entropy to the closed-form mirror step
(`mirror_fit_target`, which holds the magnet and the step) and the action values' squared error joins
(with searched_mirror the step reads searched values, `rouba_training.searched_values`, and no action-value
term joins):

    loss = CE(target || policy) + vf_coef * (value + action value [+ action value distillation])
           - ent_coef * entropy [+ support_coef * KL(uniform || policy)]

(with a privileged critic, its action values learn the returns and the actor's head learns them over every
legal action: the distillation).

A term reads one minibatch (`Minibatch`: the network's outputs on its rows and the batch's targets) and
gives its unweighted value, which is also what the update reports under the term's name. Adding a term
to the trainer is writing one class and listing it in `loss_terms`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from rouba_training.regularizers import kl_from_uniform, kl_over_legal

MIRROR_STEP_OBJECTIVES = ("mirror_fit", "searched_mirror")
"""The policy objectives whose policy term is the cross-entropy to the closed-form mirror step: from an
action-value head's values (mirror_fit) or from searched values (searched_mirror)."""


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
    taken_action_value: torch.Tensor | None = None
    """[B] the estimate of the action taken by the action values that learn from the returns (a privileged
    critic's, else the actor's head), for the mirror fit."""
    action_values: torch.Tensor | None = None
    """[B, A] the actor's action-value head, when it learns from a privileged critic's action values."""
    privileged_action_values: torch.Tensor | None = None
    """[B, A] the privileged critic's action values (seeing the hidden cards), the actor's head's targets."""


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


class ActionValueLoss(LossTerm):
    """Half the squared error of the action-value head's estimate of the action taken against the returns."""

    def value(self, batch: Minibatch) -> torch.Tensor:
        if batch.taken_action_value is None:
            raise ValueError("the action-value term needs a network with an action-value head")
        return 0.5 * ((batch.taken_action_value - batch.returns) ** 2).mean()


class ActionValueDistillation(LossTerm):
    """Half the squared error, over the legal actions, of the actor's action values against the privileged
    critic's (held fixed): its minimum is each information set's mean of the privileged values over the
    histories it holds, the set's action values, with a target for every legal action of every decision
    rather than the taken one's return alone."""

    def value(self, batch: Minibatch) -> torch.Tensor:
        if batch.action_values is None or batch.privileged_action_values is None:
            raise ValueError("the distillation term needs the actor's and the privileged critic's action values")
        error = torch.where(batch.legal, batch.action_values - batch.privileged_action_values.detach(), 0.0)
        return 0.5 * ((error ** 2).sum(dim=-1) / batch.legal.sum(dim=-1)).mean()


@dataclass
class MirrorFit(LossTerm):
    """The cross-entropy from the batch's closed-form mirror-descent targets (`mirror_fit_target`) to the
    policy, over the legal actions: minimized where the policy is the target."""

    target: torch.Tensor | None = None
    weights: torch.Tensor | None = None
    """[N] float: how much each row of the batch counts (searched_mirror: 1 where its values were searched,
    0 elsewhere); None: every row alike."""
    last: dict[str, float] = field(default_factory=dict)

    def value(self, batch: Minibatch) -> torch.Tensor:
        if self.target is None:
            raise ValueError("the mirror-fit term needs the batch's target policies")
        goal = self.target[batch.rows]
        with torch.no_grad():  # how far the policy has moved from the one that collected the batch, as PPO's
            log_ratio = batch.log_prob - batch.old_log_prob
            self.last = {"approx_kl": ((log_ratio.exp() - 1.0) - log_ratio).mean().item()}
        cross_entropy = -(goal * torch.where(batch.legal, batch.log_probs, 0.0)).sum(dim=-1)
        if self.weights is None:
            return cross_entropy.mean()
        weights = self.weights[batch.rows]
        return (weights * cross_entropy).sum() / weights.sum().clamp_min(1.0)

    def statistics(self) -> dict[str, float]:
        return self.last


def mirror_fit_target(action_values: torch.Tensor, collecting: torch.Tensor, magnet: torch.Tensor | None,
                      legal: torch.Tensor, *, step_size: float, temperature: float) -> torch.Tensor:
    """[B, A]: at each decision the policy that maximizes ``<q, pi> - KL(pi, collecting) / step_size -
    temperature * KL(pi, magnet)``, which is ``pi ∝ exp((step_size * q + step_size * temperature * log magnet
    + log collecting) / (1 + step_size * temperature))`` (magnetic mirror descent's step in closed form,
    Sokota et al. 2023); ``collecting`` and ``magnet`` as log-probabilities (no magnet: temperature 0)."""
    regularized = step_size * temperature if magnet is not None else 0.0
    logits = step_size * action_values + collecting
    if magnet is not None:
        logits = logits + regularized * magnet
    logits = torch.where(legal, logits / (1.0 + regularized), torch.full_like(logits, -torch.inf))
    return torch.softmax(logits, dim=-1)


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
               collecting: torch.Tensor | None = None, support_coef: float = 0.0,
               mirror_target: torch.Tensor | None = None, mirror_weights: torch.Tensor | None = None,
               distill_action_values: bool = False) -> list[LossTerm]:
    """The terms of one update's loss, in the order they are summed (``ppo``: a `PPOSettings`, its clip and
    weights; the KL terms' weights and reference policies for the whole batch as given; ``mirror_target``:
    the batch's closed-form targets, for ``policy_objective`` mirror_fit or searched_mirror, whose magnet and
    mirror KLs are then in the target and are only reported; ``mirror_weights``: how much each row's target
    counts (searched_mirror: the searched rows); ``distill_action_values``: the mirror fit's action values learn
    the returns in a privileged critic and the actor's head learns from them)."""
    fitting = ppo.policy_objective in MIRROR_STEP_OBJECTIVES
    policy = (MirrorFit("policy_loss", 1.0, mirror_target, mirror_weights) if fitting
              else ClippedPolicy("policy_loss", 1.0, ppo.clip_coef))
    terms: list[LossTerm] = [policy, ValueLoss("value_loss", ppo.vf_coef), Entropy("entropy", -ppo.ent_coef)]
    if ppo.policy_objective == "mirror_fit":
        terms.append(ActionValueLoss("action_value_loss", ppo.vf_coef))
        if distill_action_values:
            terms.append(ActionValueDistillation("action_value_distillation", ppo.vf_coef))
    if ppo.hand_coef > 0:
        terms.append(HandPrediction("hand_loss", ppo.hand_coef))
    if magnet_coef > 0:
        terms.append(KLToReference("magnet_kl", 0.0 if fitting else magnet_coef, magnet))
    if mirror_coef > 0:
        terms.append(KLToReference("mirror_kl", 0.0 if fitting else mirror_coef, collecting))
    if support_coef > 0:
        terms.append(SupportKL("support_kl", support_coef))
    return terms


def total_loss(terms: list[LossTerm], batch: Minibatch) -> tuple[torch.Tensor, dict[str, float]]:
    """(the weighted sum of the terms, each term's unweighted value and side statistics)."""
    total = None
    stats: dict[str, float] = {}
    for term in terms:
        value = term.value(batch)
        stats[term.name] = value.item()
        stats.update(term.statistics())
        if term.weight == 0.0:  # reported only
            continue
        weighted = value if term.weight == 1.0 else term.weight * value
        total = weighted if total is None else total + weighted
    if total is None:
        raise ValueError("a loss needs at least one term")
    return total, stats
