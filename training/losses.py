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
gives its unweighted value, which the update reports under the term's name, beside any side statistics
the term names in ``reports``. Adding a term to the trainer is writing one class (what it computes, and in
`LossTerm.join` when it joins an update and with what weight) and listing it once in `LOSS_TERMS`: its
statistics reach ``metrics.csv`` and TensorBoard from there (`loss_statistics`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

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
class UpdateLoss:
    """What decides an update's terms: its settings (``ppo``: a `PPOSettings`) and, for the whole batch, the KL
    terms' weights and reference log-probabilities, the mirror step's targets and the rows they count."""

    ppo: object
    magnet_coef: float = 0.0
    magnet: torch.Tensor | None = None
    mirror_coef: float = 0.0
    collecting: torch.Tensor | None = None
    """The log-probabilities of the policy that collected the batch (the mirror term's reference)."""
    support_coef: float = 0.0
    mirror_target: torch.Tensor | None = None
    """The batch's closed-form mirror-step targets (policy objectives mirror_fit and searched_mirror)."""
    mirror_weights: torch.Tensor | None = None
    """How much each row's target counts (searched_mirror: the searched rows)."""
    distill_action_values: bool = False
    """The mirror fit's action values learn the returns in a privileged critic and the actor's head from them."""

    @property
    def fitting(self) -> bool:
        """Whether the policy term is the mirror fit's (whose target holds the magnet and the mirror step)."""
        return self.ppo.policy_objective in MIRROR_STEP_OBJECTIVES  # type: ignore[attr-defined]


@dataclass
class LossTerm:
    """A named piece of the loss: ``weight * value(minibatch)`` joins the total; ``name`` is its statistic."""

    weight: float
    name: ClassVar[str]
    """The statistic the term's unweighted value is reported as."""
    reports: ClassVar[tuple[str, ...]] = ()
    """Every statistic the term reports: its name and its side statistics."""

    @classmethod
    def join(cls, update: UpdateLoss) -> "LossTerm | None":
        """The term as this update uses it (its weight and references), or None when it has no part in it."""
        raise NotImplementedError

    def value(self, batch: Minibatch) -> torch.Tensor:
        raise NotImplementedError

    def statistics(self) -> dict[str, float]:
        """Side statistics of the last `value` call (the policy term's KL estimate and clip fraction)."""
        return {}


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


@dataclass
class ClippedPolicy(LossTerm):
    """PPO's clipped surrogate, to minimise: the pessimistic side of ``ratio * advantage``."""

    clip_coef: float = 0.2
    last: dict[str, float] = field(default_factory=dict)
    name: ClassVar[str] = "policy_loss"
    reports: ClassVar[tuple[str, ...]] = ("policy_loss", "approx_kl", "clip_fraction")

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        return None if update.fitting else cls(1.0, update.ppo.clip_coef)  # type: ignore[attr-defined]

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


@dataclass
class MirrorFit(LossTerm):
    """The cross-entropy from the batch's closed-form mirror-descent targets (`mirror_fit_target`) to the
    policy, over the legal actions: minimized where the policy is the target."""

    target: torch.Tensor | None = None
    weights: torch.Tensor | None = None
    """[N] float: how much each row of the batch counts (searched_mirror: 1 where its values were searched,
    0 elsewhere); None: every row alike."""
    last: dict[str, float] = field(default_factory=dict)
    name: ClassVar[str] = "policy_loss"
    reports: ClassVar[tuple[str, ...]] = ("policy_loss", "approx_kl")

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        return cls(1.0, update.mirror_target, update.mirror_weights) if update.fitting else None

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


class ValueLoss(LossTerm):
    """Half the squared error of the value estimate against the GAE returns."""

    name = "value_loss"
    reports = ("value_loss",)

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        return cls(update.ppo.vf_coef)  # type: ignore[attr-defined]

    def value(self, batch: Minibatch) -> torch.Tensor:
        return 0.5 * ((batch.values - batch.returns) ** 2).mean()


class Entropy(LossTerm):
    """The mean entropy over the legal actions (a bonus: its weight is ``-ent_coef``)."""

    name = "entropy"
    reports = ("entropy",)

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        return cls(-update.ppo.ent_coef)  # type: ignore[attr-defined]

    def value(self, batch: Minibatch) -> torch.Tensor:
        return batch.entropy.mean()


class ActionValueLoss(LossTerm):
    """Half the squared error of the action-value head's estimate of the action taken against the returns."""

    name = "action_value_loss"
    reports = ("action_value_loss",)

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        return cls(update.ppo.vf_coef) if update.ppo.policy_objective == "mirror_fit" else None  # type: ignore[attr-defined]

    def value(self, batch: Minibatch) -> torch.Tensor:
        if batch.taken_action_value is None:
            raise ValueError("the action-value term needs a network with an action-value head")
        return 0.5 * ((batch.taken_action_value - batch.returns) ** 2).mean()


class ActionValueDistillation(LossTerm):
    """Half the squared error, over the legal actions, of the actor's action values against the privileged
    critic's (held fixed): its minimum is each information set's mean of the privileged values over the
    histories it holds, the set's action values, with a target for every legal action of every decision
    rather than the taken one's return alone."""

    name = "action_value_distillation"
    reports = ("action_value_distillation",)

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        mirror_fit = update.ppo.policy_objective == "mirror_fit"  # type: ignore[attr-defined]
        return cls(update.ppo.vf_coef) if mirror_fit and update.distill_action_values else None  # type: ignore[attr-defined]

    def value(self, batch: Minibatch) -> torch.Tensor:
        if batch.action_values is None or batch.privileged_action_values is None:
            raise ValueError("the distillation term needs the actor's and the privileged critic's action values")
        error = torch.where(batch.legal, batch.action_values - batch.privileged_action_values.detach(), 0.0)
        return 0.5 * ((error ** 2).sum(dim=-1) / batch.legal.sum(dim=-1)).mean()


class HandPrediction(LossTerm):
    """Squared error of the hand head's guesses of every hidden card (an auxiliary task)."""

    name = "hand_loss"
    reports = ("hand_loss",)

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        return cls(update.ppo.hand_coef) if update.ppo.hand_coef > 0 else None  # type: ignore[attr-defined]

    def value(self, batch: Minibatch) -> torch.Tensor:
        if batch.hands is None or batch.hidden is None:
            raise ValueError("the hand term needs a network with a hand head and the batch's hidden cards")
        return ((batch.hands - batch.hidden) ** 2).mean()


@dataclass
class KLToReference(LossTerm):
    """The exact ``KL(policy || reference)`` over the legal actions, the reference's log-probabilities given
    for the whole batch. With the mirror fit the KL is in the fit's target and is only reported (weight 0)."""

    reference: torch.Tensor | None = None
    coefficient: ClassVar[str]
    """The `UpdateLoss` field holding the term's weight (the term joins when it is above 0)."""
    reference_of: ClassVar[str]
    """The `UpdateLoss` field holding the reference's log-probabilities."""

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        weight = getattr(update, cls.coefficient)
        if weight <= 0:
            return None
        return cls(0.0 if update.fitting else weight, getattr(update, cls.reference_of))

    def value(self, batch: Minibatch) -> torch.Tensor:
        if self.reference is None:
            raise ValueError(f"the {self.name} term needs its reference policy's log-probabilities")
        return kl_over_legal(batch.log_probs, self.reference[batch.rows], batch.legal).mean()


class MagnetKL(KLToReference):
    """``KL(policy || magnet)``: regularized self-play's pull towards the magnet."""

    name = "magnet_kl"
    reports = ("magnet_kl",)
    coefficient, reference_of = "magnet_coef", "magnet"


class MirrorKL(KLToReference):
    """``KL(policy || the policy that collected the batch)``: the mirror-descent step."""

    name = "mirror_kl"
    reports = ("mirror_kl",)
    coefficient, reference_of = "mirror_coef", "collecting"


class SupportKL(LossTerm):
    """The exact ``KL(uniform || policy)`` over the legal actions: a barrier against dropping a legal move."""

    name = "support_kl"
    reports = ("support_kl",)

    @classmethod
    def join(cls, update: UpdateLoss) -> LossTerm | None:
        return cls(update.support_coef) if update.support_coef > 0 else None

    def value(self, batch: Minibatch) -> torch.Tensor:
        return kl_from_uniform(batch.log_probs, batch.legal).mean()


LOSS_TERMS: tuple[type[LossTerm], ...] = (ClippedPolicy, MirrorFit, ValueLoss, Entropy, ActionValueLoss,
                                          ActionValueDistillation, HandPrediction, MagnetKL, MirrorKL, SupportKL)
"""Every term the trainer knows, in the order an update sums them: the one list a term is added to."""


def loss_terms(update: UpdateLoss) -> list[LossTerm]:
    """The terms of one update's loss, in the order they are summed: each of `LOSS_TERMS` that joins it."""
    return [term for term in (kind.join(update) for kind in LOSS_TERMS) if term is not None]


def loss_statistics() -> tuple[str, ...]:
    """Every statistic the terms of `LOSS_TERMS` report, in their order, each once: the loss columns of
    ``metrics.csv`` (a term absent from an update reports 0 there)."""
    return tuple(dict.fromkeys(name for kind in LOSS_TERMS for name in kind.reports))


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
