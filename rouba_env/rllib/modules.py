"""RL modules: the masked PPO module (illegal actions never sampled) and scripted players as modules."""

from __future__ import annotations

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN
from torch import nn

from rouba_env.players.registry import make_policy
from rouba_env.rllib.env import ACTION_MASK, OBSERVATIONS
from rouba_env.rules.config import make_rules

DEFAULT_HIDDEN_SIZES = (256, 256)
"""Hidden layers of `MaskedPPOTorchRLModule` unless its model_config says otherwise."""


def _mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.where(mask > 0, logits, torch.full_like(logits, FLOAT_MIN))


class MaskedPPOTorchRLModule(TorchRLModule, ValueFunctionAPI):
    """PPO policy and value MLP on the ``observations`` part; illegal actions masked out of the logits.

    ``model_config``: ``hidden_sizes`` (default (256, 256)).
    """

    def setup(self):
        obs_size = self.observation_space[OBSERVATIONS].shape[0]
        layers: list[nn.Module] = []
        width = obs_size
        for size in (self.model_config or {}).get("hidden_sizes", DEFAULT_HIDDEN_SIZES):
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, self.action_space.n)
        self.value_head = nn.Linear(width, 1)

    def _forward(self, batch: dict, **kwargs) -> dict:
        observations = batch[Columns.OBS]
        features = self.trunk(observations[OBSERVATIONS])
        logits = _mask_logits(self.policy_head(features), observations[ACTION_MASK])
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: features}

    def compute_values(self, batch: dict, embeddings=None) -> torch.Tensor:
        if embeddings is None:
            embeddings = self.trunk(batch[Columns.OBS][OBSERVATIONS])
        return self.value_head(embeddings).squeeze(-1)


class ScriptedRLModule(TorchRLModule):
    """A built-in player as an untrained RLModule: its chosen action gets logit 0, every other ``FLOAT_MIN``.

    ``model_config``: ``spec`` (player spec, e.g. ``heuristic``), ``env_config``
    (the env's, for the rules and padding) and ``seed`` (its random generator's).
    """

    def setup(self):
        config = self.model_config or {}
        if "spec" not in config:
            raise ValueError("ScriptedRLModule needs model_config['spec'] (e.g. 'heuristic')")
        env_config = config.get("env_config", {})
        rules = make_rules(env_config.get("rules", "standard"), num_players=env_config.get("num_players", 2))
        self.player = make_policy(config["spec"], rules, env_config.get("max_players"))
        self.rng = np.random.default_rng(config.get("seed", 0))
        self._no_parameters = nn.Linear(1, 1)  # torch modules need a parameter for RLlib's device lookups
        self._no_parameters.requires_grad_(False)

    def _forward(self, batch: dict, **kwargs) -> dict:
        observations = batch[Columns.OBS]
        obs = observations[OBSERVATIONS].cpu().numpy()
        mask = observations[ACTION_MASK].cpu().numpy()
        logits = np.full(mask.shape, FLOAT_MIN, dtype=np.float32)
        playable = mask.any(axis=1)
        if playable.any():
            chosen = self.player.act_batch(obs[playable], mask[playable].astype(np.int8), self.rng)
            logits[np.flatnonzero(playable), chosen] = 0.0
        logits[~playable] = 0.0  # a final observation: nothing to choose
        return {Columns.ACTION_DIST_INPUTS: torch.as_tensor(logits, device=observations[ACTION_MASK].device)}


def scripted_module_spec(spec: str, env_config: dict, seed: int = 0) -> RLModuleSpec:
    """The RLModuleSpec of a scripted player (never trained)."""
    return RLModuleSpec(module_class=ScriptedRLModule,
                        model_config={"spec": spec, "env_config": dict(env_config), "seed": seed})


