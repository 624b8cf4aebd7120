"""The trainer's torch actor-critic network, and saving it as a checkpoint that plays without torch.

`ActorCritic`'s ``state_dict`` names and layouts are the ones
`rouba_env.players.checkpoint` expects and `rouba_env.players.network.MLP`
runs in numpy, so a saved policy plays the same actions in either.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from rouba_env.players.network import MASKED_LOGIT, MLP, NetworkPolicy
from rouba_env.players.checkpoint import write_checkpoint
from rouba_env.rules.config import RulesConfig

ORTHOGONAL_HIDDEN_GAIN = float(np.sqrt(2))
POLICY_HEAD_GAIN = 0.01
"""A small policy head starts near uniform over the legal actions."""
VALUE_HEAD_GAIN = 1.0


class ActorCritic(nn.Module):
    """An MLP trunk (ReLU) with a policy head (one logit per action) and a value head."""

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: tuple[int, ...] = (256, 256)):
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_size
        for size in hidden_sizes:
            linear = nn.Linear(width, size)
            nn.init.orthogonal_(linear.weight, gain=ORTHOGONAL_HIDDEN_GAIN)
            nn.init.zeros_(linear.bias)
            layers += [linear, nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, num_actions)
        nn.init.orthogonal_(self.policy_head.weight, gain=POLICY_HEAD_GAIN)
        nn.init.zeros_(self.policy_head.bias)
        self.value_head = nn.Linear(width, 1)
        nn.init.orthogonal_(self.value_head.weight, gain=VALUE_HEAD_GAIN)
        nn.init.zeros_(self.value_head.bias)
        self.obs_size, self.num_actions, self.hidden_sizes = obs_size, num_actions, tuple(hidden_sizes)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits[B, A], value[B]) for observations[B, D]."""
        hidden = self.trunk(obs)
        return self.policy_head(hidden), self.value_head(hidden).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions' logits set to `MASKED_LOGIT`."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT))


def network_tensors(network: ActorCritic) -> dict[str, np.ndarray]:
    """The network's weights as float32 numpy arrays on the CPU (checkpoint names)."""
    return {name: tensor.detach().cpu().numpy().astype(np.float32, copy=True)
            for name, tensor in network.state_dict().items()}


def numpy_policy(network: ActorCritic, rules: RulesConfig, max_players: int, name: str = "learner") -> NetworkPolicy:
    """A CPU numpy copy of the network as a greedy `NetworkPolicy` (for evaluation games)."""
    mlp = MLP(network_tensors(network), len(network.hidden_sizes))
    return NetworkPolicy(mlp, rules, None, network_players=max_players, deterministic=True, name=name)


def save_policy(folder: str | Path, network: ActorCritic, rules: RulesConfig, max_players: int | None,
                extra: dict | None = None) -> Path:
    """Write the network as a checkpoint folder (``model.safetensors``, then ``metadata.json``)."""
    return write_checkpoint(folder, network_tensors(network), rules, max_players, network.hidden_sizes, extra)
