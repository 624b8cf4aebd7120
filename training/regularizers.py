"""Regularized self-play's pieces: schedules, exact KL terms over the legal actions, and a moving average of
the weights (magnetic mirror descent in PPO form; Sokota et al., ICLR 2023).

The update adds to PPO's loss

    magnet_coef(t) * KL(policy || magnet) + mirror_coef(t) * KL(policy || collecting policy)
        [+ support_coef(t) * KL(uniform || policy)]

where the magnet is the uniform policy over the legal actions (an entropy bonus in KL form) or the
exponential moving average of the network's weights. The KLs are exact sums over each recorded position's
legal actions: the networks give whole distributions, so nothing is sampled. The support term is the KL the
other way round, from the uniform policy: a barrier that keeps every legal move's probability away from 0. Its
gradient on a move's logit is the move's probability minus 1/n, where an entropy's (or the uniform magnet's)
vanishes with the probability, so a move the policy has all but dropped early is drawn back into play.
"""

from __future__ import annotations

import copy

import torch

from rouba_training.config import SCHEDULES


def scheduled(kind: str, start: float, progress: float, update: int, *, floor: float = 0.0,
              power: float = 0.5) -> float:
    """A coefficient's value: ``start`` under ``constant``; ``start`` annealed linearly to ``floor`` as
    ``progress`` (the share of the run done, 0..1) goes to 1 under ``linear``; ``max(floor, start * (1 +
    update)^-power)`` under ``power``."""
    if kind == "constant":
        return start
    if kind == "linear":
        return floor + (start - floor) * max(0.0, 1.0 - progress)
    if kind == "power":
        return max(floor, start * (1.0 + update) ** -power)
    raise ValueError(f"a schedule is one of {', '.join(SCHEDULES)}, got {kind!r}")


def scheduled_until(kind: str, start: float, progress: float, update: int, *, until: float,
                    power: float = 0.5) -> float:
    """`scheduled` over the first ``until`` share of the run (a linear schedule reaches 0 there), 0 after it."""
    if progress >= until:
        return 0.0
    return scheduled(kind, start, progress / until, update, power=power)


def kl_over_legal(log_probs: torch.Tensor, reference_log_probs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """float[B]: ``KL(p || q) = sum over legal a of p(a) (log p(a) - log q(a))`` per row, exact.

    ``log_probs`` and ``reference_log_probs`` are [B, A] log-probabilities that put no mass on illegal
    actions (masked logits); the illegal terms are left out before any arithmetic, so a reference of -inf
    there gives neither a NaN nor a NaN gradient.
    """
    zero = torch.zeros_like(log_probs)
    own, reference = torch.where(legal, log_probs, zero), torch.where(legal, reference_log_probs, zero)
    return torch.where(legal, own.exp() * (own - reference), zero).sum(dim=-1)


def kl_from_uniform(log_probs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """float[B]: ``KL(uniform || p) = sum over the n legal a of (1/n) (log(1/n) - log p(a))`` per row, exact
    (``log_probs``: [B, A] masked log-probabilities; illegal entries are left out)."""
    counts = legal.sum(dim=-1).to(log_probs.dtype)
    legal_log_probs = torch.where(legal, log_probs, torch.zeros_like(log_probs)).sum(dim=-1)
    return -torch.log(counts) - legal_log_probs / counts


def uniform_log_probs(legal: torch.Tensor) -> torch.Tensor:
    """[B, A]: the log-probabilities of the uniform policy over each row's legal actions (-inf elsewhere)."""
    counts = legal.sum(dim=-1, keepdim=True).to(torch.float32)
    return torch.where(legal, -torch.log(counts).expand(legal.shape), torch.full(legal.shape, -torch.inf,
                                                                                     device=legal.device))


class WeightAverage:
    """An exponential moving average of a network's weights: ``average <- decay * average + (1 - decay) * w``
    after every update. The average is a network of its own: the ``ema`` magnet (the policy played and saved
    is the trained network)."""

    def __init__(self, network: torch.nn.Module, decay: float):
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"an average's decay lies in 0..1 (1 excluded), got {decay!r}")
        self.decay = decay
        self.network = copy.deepcopy(network).eval()
        for parameter in self.network.parameters():
            parameter.requires_grad_(False)

    @torch.no_grad()
    def update(self, network: torch.nn.Module) -> None:
        for average, current in zip(self.network.state_dict().values(), network.state_dict().values()):
            if average.dtype.is_floating_point:
                average.mul_(self.decay).add_(current.detach(), alpha=1.0 - self.decay)
            else:
                average.copy_(current)

    def state_dict(self) -> dict:
        return {"decay": self.decay, "network": self.network.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.decay = float(state["decay"])
        self.network.load_state_dict(state["network"])
