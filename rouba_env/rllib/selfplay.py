"""Self-play on RLlib: who sits where, the pool of past selves, and an RLlib module as a project player."""

from __future__ import annotations

import functools
import re
import zlib
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rouba_env.checks import check_flag
from rouba_env.players.base import BasePolicy
from rouba_env.players.checkpoint import mlp_hidden_layer, weight_of, write_checkpoint
from rouba_env.players.network import DETERMINISTIC_DEFAULT
from rouba_env.rllib.env import ACTION_MASK, DEFAULT_REWARD, OBSERVATIONS, RoubaMultiAgentEnv, seat_of
from rouba_env.rllib.modules import DEFAULT_HIDDEN_SIZES, MaskedPPOTorchRLModule, scripted_module_spec
from rouba_env.rules.config import RulesConfig
from rouba_env.streams import Randomness, uniform_rows

LEARNER_MODULE = "main"
"""Module id of the policy being trained."""
SNAPSHOT_PREFIX = "main_v"
"""Module ids of frozen past selves: main_v1, main_v2, ..."""
SCRIPTED_PREFIX = "scripted_"
"""Module ids of scripted players: scripted_greedy, ... (see `scripted_module_id`)."""


def scripted_module_id(spec: str) -> str:
    """The RLlib module id of a player spec: `SCRIPTED_PREFIX` + the spec with every character other than
    letters, digits, ``_``, ``-`` and ``=`` replaced by ``_`` (RLlib ids are used as file names), plus a short
    hash of the spec when anything was replaced, so that two specs never share an id.

    ``greedy`` -> ``scripted_greedy``; ``checkpoint:2p`` -> ``scripted_checkpoint_2p_<hash>``.
    """
    safe = re.sub(r"[^A-Za-z0-9_=-]", "_", spec)
    return SCRIPTED_PREFIX + (safe if safe == spec else f"{safe}_{zlib.crc32(spec.encode()):08x}")


def opponent_mapping(num_players: int, opponents: Sequence[str], learner: str = LEARNER_MODULE) -> Callable:
    """agent -> module for self-play: per episode one seat is ``learner``, the rest one opponent module.

    The seat and the opponent follow from a hash of the episode id, so every
    agent of an episode agrees; ``opponents`` may include ``learner`` itself
    (pure self-play).
    """
    if not opponents:
        raise ValueError("opponent_mapping needs at least one opponent module id")
    opponents = list(opponents)

    def mapping(agent, episode, **kwargs) -> str:
        draw = zlib.crc32(str(episode.id_).encode())
        if seat_of(agent) == draw % num_players:
            return learner
        return opponents[(draw // num_players) % len(opponents)]

    return mapping


class SelfPlayPool(RLlibCallback):
    """Every ``interval`` training iterations, freeze a copy of the learner into the opponent pool.

    The pool holds the scripted modules plus up to ``pool_size`` snapshots
    (``main_v1``, ``main_v2``, ...; the oldest is removed first) and the
    learner itself; the mapping is replaced with one over the new pool.
    """

    def __init__(self, num_players: int, scripted: Sequence[str], interval: int = 1, pool_size: int = 4):
        super().__init__()
        if interval < 1 or pool_size < 1:
            raise ValueError(f"interval and pool_size must be at least 1, got {interval} and {pool_size}")
        self.num_players = num_players
        self.scripted = [scripted_module_id(spec) for spec in scripted]
        self.interval = interval
        self.pool_size = pool_size
        self.snapshots: list[str] = []
        self.added = 0

    def opponents(self) -> list[str]:
        return [LEARNER_MODULE, *self.scripted, *self.snapshots]

    def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs) -> None:
        if algorithm.iteration % self.interval:
            return
        self.added += 1
        module_id = f"{SNAPSHOT_PREFIX}{self.added}"
        learner_state = algorithm.learner_group.get_state(
            components=f"learner/rl_module/{LEARNER_MODULE}")["learner"]["rl_module"][LEARNER_MODULE]
        self.snapshots.append(module_id)
        dropped = self.snapshots.pop(0) if len(self.snapshots) > self.pool_size else None
        mapping = opponent_mapping(self.num_players, self.opponents())
        algorithm.add_module(module_id=module_id,
                             module_spec=RLModuleSpec.from_module(algorithm.get_module(LEARNER_MODULE)),
                             new_agent_to_module_mapping_fn=mapping)
        # The learner's current weights into the snapshot, there and in every env runner.
        algorithm.set_state({"learner_group": {"learner": {"rl_module": {module_id: learner_state}}}})
        algorithm.env_runner_group.foreach_env_runner(
            lambda runner: runner.module[module_id].set_state(learner_state), local_env_runner=True)
        if dropped:
            algorithm.remove_module(module_id=dropped, new_agent_to_module_mapping_fn=mapping)
        result["opponent_pool"] = self.opponents()


def selfplay_config(num_players: int = 2, *, scripted: Sequence[str] = ("greedy", "heuristic"),
                    hidden_sizes: Sequence[int] = DEFAULT_HIDDEN_SIZES, snapshot_interval: int = 1,
                    pool_size: int = 4, reward: str = DEFAULT_REWARD, rules: str | dict = "standard",
                    num_env_runners: int = 0, train_batch_size: int = 4000, minibatch_size: int = 512,
                    num_epochs: int = 4, learning_rate: float = 3e-4, seed: int = 0):
    """A `PPOConfig` for self-play at ``num_players`` seats against past selves and scripted players.

    ``scripted``: player specs (``heuristic``, ``checkpoint:2p``, ...), each a frozen module whose id is
    `scripted_module_id` of its spec. ``reward``: outcome, margin (the project trainer's default) or lead.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    env_config = {"rules": rules, "num_players": num_players, "reward": reward}
    RoubaMultiAgentEnv(env_config)  # fail early, here, on bad settings
    modules = {LEARNER_MODULE: RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                                            model_config={"hidden_sizes": tuple(hidden_sizes)})}
    for index, spec in enumerate(scripted):
        modules[scripted_module_id(spec)] = scripted_module_spec(spec, env_config, seed=seed + index)
    first_opponents = SelfPlayPool(num_players, scripted, snapshot_interval, pool_size).opponents()
    return (
        PPOConfig()
        # RLlib's pre-check steps random actions that ignore the mask, which only draws our illegal-action
        # warning; the env passes PettingZoo's api_test and RLlib's own multi-agent test (tests/ray).
        .environment(RoubaMultiAgentEnv, env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=num_env_runners)
        .multi_agent(policies=set(modules), policy_mapping_fn=opponent_mapping(num_players, first_opponents),
                     policies_to_train=[LEARNER_MODULE])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=learning_rate)
        # RLlib calls what it is given to make the callbacks object: a factory works as a class does.
        .callbacks(functools.partial(SelfPlayPool, num_players, tuple(scripted), snapshot_interval,  # type: ignore[arg-type]
                                     pool_size))
        .debugging(seed=seed)
    )


# ---------------------------------------------------------------------------
# An RLlib module as a rouba_env player
# ---------------------------------------------------------------------------


class RLlibPolicy(BasePolicy):
    """A trained RLlib module (e.g. ``algo.get_module("main")``) as a `Policy` for `rouba_env.evaluate`.

    Plays the most likely legal action (``deterministic=True``, as every player of the project does), or
    samples from the masked logits with the caller's generator (``deterministic=False``).
    """

    def __init__(self, module, rules: RulesConfig, max_players: int | None = None,
                 *,
                 deterministic: bool = DETERMINISTIC_DEFAULT, name: str = "rllib"):
        super().__init__(rules, max_players)
        self.module = module
        self.deterministic = check_flag("deterministic", deterministic)
        self.name = name

    plays_in_batch = True

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Randomness) -> np.ndarray:
        obs, legal = self.checked(obs, mask)
        batch = {Columns.OBS: {OBSERVATIONS: torch.as_tensor(obs),
                               ACTION_MASK: torch.as_tensor(legal.astype(np.float32))}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].cpu().numpy()
        logits = np.where(legal, logits.astype(np.float64), -np.inf)
        if not self.deterministic:  # Gumbel-max with the caller's randomness (one stream per row in a batch)
            logits = logits - np.log(-np.log(uniform_rows(rng, *logits.shape).clip(1e-300, 1.0)))
        return logits.argmax(axis=1).astype(np.int64)


def export_checkpoint(module, folder: str | Path, env_config: dict | None = None, extra: dict | None = None) -> Path:
    """Write a trained `MaskedPPOTorchRLModule` as a project checkpoint (``model.safetensors`` + ``metadata.json``).

    ``env_config`` is the `RoubaMultiAgentEnv` config the module was trained in (rules, table size, padding,
    reward). The folder is then a ``checkpoint:FOLDER`` spec: it plays in numpy without torch or Ray, in
    ``rouba-evaluate``, ``rouba-play`` and the browser. The module's layers are the checkpoint MLP's, by name.
    """
    env = RoubaMultiAgentEnv(env_config)
    state = {name: np.asarray(value.detach().cpu() if hasattr(value, "detach") else value, dtype=np.float32)
             for name, value in module.state_dict().items()}
    hidden = [int(state[weight_of(mlp_hidden_layer(layer))].shape[0]) for layer in range(len(module.trunk) // 2)]
    info = {"source": "rllib", "train_config": {"reward": env.single_game.reward_mode}, **(extra or {})}
    return write_checkpoint(folder, state, env.rules, max_players=env.encoder.max_players, hidden_sizes=tuple(hidden),
                            extra=info)
