"""RLlib support (new API stack): a multi-agent env, masked and scripted RLModules, self-play helpers.

Needs the ``ray`` extra (``pip install -e ".[ray]"``); nothing else in the
package imports this module.

* `RoubaMultiAgentEnv`: one game per env on the reference engine, turn-based
  (only the seat to move gets an observation), agents ``player_0`` ...; each
  observation is the Dict RLlib's masking modules expect,
  ``{"observations": float32[D], "action_mask": float32[A]}`` (1.0 = legal).
  Rewards come at the end, to every seat, in a reward mode of
  `rouba_env.rules.scoring`. Pass the class to ``config.environment(...)``.
* `MaskedPPOTorchRLModule`: an MLP policy/value module for PPO that gives
  illegal actions a logit of ``FLOAT_MIN`` so they are never sampled.
* `ScriptedRLModule`: a built-in player (``greedy``, ``heuristic``, ...) as an
  RLModule, so scripted players can sit in an RLlib opponent pool.
* `opponent_mapping`: the agent -> module function of self-play: per episode
  one seat is the learner, the others share one opponent drawn from a list.
* `SelfPlayPool`: a callback that adds a frozen copy of the learner to the
  pool every few iterations (`Algorithm.add_module`), keeping the newest.
* `RLlibPolicy`: an RLlib module as a `rouba_env` `Policy`, for `rouba_env.evaluate`.

See ``examples/rllib_selfplay.py`` for a complete self-play run. RLlib steps
one game per env in Python; the project's own trainer (``rouba-train``,
optionally ``--ray``) is much faster on this game.
"""

from __future__ import annotations

import functools
import zlib
from typing import Callable, Sequence

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN

from rouba_env.table import DEFAULT_ILLEGAL_REWARD, Table, as_seed
from rouba_env.players.base import BasePolicy, check_mask
from rouba_env.players.registry import make_policy
from rouba_env.rules import engine
from rouba_env.rules.config import RulesConfig, make_rules

OBSERVATIONS = "observations"
ACTION_MASK = "action_mask"
AGENT_PREFIX = "player_"
LEARNER_MODULE = "main"
"""Module id of the policy being trained."""
SNAPSHOT_PREFIX = "main_v"
"""Module ids of frozen past selves: main_v1, main_v2, ..."""
SCRIPTED_PREFIX = "scripted_"
"""Module ids of scripted players: scripted_greedy, ..."""
DEFAULT_HIDDEN_SIZES = (256, 256)


def agent_id(seat: int) -> str:
    return f"{AGENT_PREFIX}{seat}"


def seat_of(agent: str) -> int:
    if not isinstance(agent, str) or not agent.startswith(AGENT_PREFIX):
        raise ValueError(f"agent ids look like {AGENT_PREFIX}0, {AGENT_PREFIX}1, ...; got {agent!r}")
    return int(agent[len(AGENT_PREFIX):])


# ---------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------


class RoubaMultiAgentEnv(MultiAgentEnv):
    """Rouba-monte for RLlib's multi-agent API (new stack); see the module docstring.

    ``config`` keys (all optional): ``rules`` (preset name or dict, default
    standard), ``num_players`` (2..8, default 2), ``max_players`` (padding of
    observations and actions, default num_players: set it to share one module
    across table sizes), ``reward`` (``outcome`` or ``margin``, default outcome),
    ``illegal_action`` (``terminate``, the default: the game ends, the offender
    gets ``illegal_reward`` (default -1) and the others 0, so RLlib's env
    pre-check, which plays unmasked random actions, passes; or ``raise``).
    """

    KNOWN_KEYS = ("rules", "num_players", "max_players", "reward", "illegal_action", "illegal_reward")

    def __init__(self, config: dict | None = None):
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - set(self.KNOWN_KEYS))
        if unknown:
            raise ValueError(f"unknown env_config key(s) {unknown}; known: {list(self.KNOWN_KEYS)}")
        self.rules = make_rules(config.get("rules", "standard"), num_players=config.get("num_players", 2))
        # The game, its illegal-action rule and its rewards: the environments' one `Table`.
        self.table = Table(self.rules, config.get("max_players"), config.get("reward", "outcome"),
                                   config.get("illegal_action", "terminate"),
                                   config.get("illegal_reward", DEFAULT_ILLEGAL_REWARD))
        self.encoder, self.encoding = self.table.encoder, self.table.actions
        self.max_players = self.encoder.max_players
        self.possible_agents = [agent_id(seat) for seat in range(self.rules.num_players)]
        self.agents = list(self.possible_agents)
        space = observation_space(self.encoder.size, self.encoding.size)
        self.observation_spaces = {agent: space for agent in self.possible_agents}
        self.action_spaces = {agent: gym.spaces.Discrete(self.encoding.size) for agent in self.possible_agents}
        self.rng = np.random.default_rng()

    @property
    def state(self) -> engine.GameState | None:
        return self.table.state

    def _observe(self, seat: int) -> dict:
        return {OBSERVATIONS: self.table.observation(seat),
                ACTION_MASK: self.table.mask(seat).astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = as_seed(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.table.start(self.rng)
        return {agent_id(self.table.current): self._observe(self.table.current)}, {}

    def step(self, action_dict: dict):
        table = self.table
        if not table.started or table.over:
            raise RuntimeError("step() called before reset() or after the game ended; call reset()")
        mover = agent_id(table.current)
        if set(action_dict) != {mover}:
            raise ValueError(f"expected an action for {mover} only, got actions for {sorted(action_dict)}")
        action = action_dict[mover]
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = int(action)
        table.play(action, who=mover)
        if table.over:  # the game ended, by its last move or by an illegal action
            everyone = range(self.rules.num_players)
            rewards = table.final_rewards()
            return ({agent_id(seat): self._observe(seat) for seat in everyone},
                    {agent_id(seat): float(rewards[seat]) for seat in everyone},
                    {"__all__": True, **{agent_id(seat): True for seat in everyone}}, {"__all__": False}, {})
        nxt = agent_id(table.current)
        return {nxt: self._observe(table.current)}, {}, {"__all__": False}, {"__all__": False}, {}


def observation_space(obs_size: int, num_actions: int) -> gym.spaces.Dict:
    """The Dict space of one agent: float observations and a float 0/1 action mask."""
    return gym.spaces.Dict({
        OBSERVATIONS: gym.spaces.Box(-np.inf, np.inf, (obs_size,), np.float32),
        ACTION_MASK: gym.spaces.Box(0.0, 1.0, (num_actions,), np.float32),
    })


def env_creator(env_config: dict | None = None) -> RoubaMultiAgentEnv:
    """For ``ray.tune.registry.register_env(name, env_creator)`` where a name is wanted."""
    return RoubaMultiAgentEnv(env_config)


# ---------------------------------------------------------------------------
# RLModules
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Self-play: who sits where, and the pool of past selves
# ---------------------------------------------------------------------------


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
        self.scripted = [SCRIPTED_PREFIX + spec for spec in scripted]
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


def selfplay_config(num_players: int = 2, scripted: Sequence[str] = ("greedy", "heuristic"),
                    hidden_sizes: Sequence[int] = DEFAULT_HIDDEN_SIZES, snapshot_interval: int = 1,
                    pool_size: int = 4, reward: str = "outcome", rules: str | dict = "standard",
                    num_env_runners: int = 0, train_batch_size: int = 4000, minibatch_size: int = 512,
                    num_epochs: int = 4, learning_rate: float = 3e-4, seed: int = 0):
    """A `PPOConfig` for self-play at ``num_players`` seats against past selves and scripted players."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    env_config = {"rules": rules, "num_players": num_players, "reward": reward}
    RoubaMultiAgentEnv(env_config)  # fail early, here, on bad settings
    modules = {LEARNER_MODULE: RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                                            model_config={"hidden_sizes": tuple(hidden_sizes)})}
    for index, spec in enumerate(scripted):
        modules[SCRIPTED_PREFIX + spec] = scripted_module_spec(spec, env_config, seed=seed + index)
    first_opponents = SelfPlayPool(num_players, scripted, snapshot_interval, pool_size).opponents()
    return (
        PPOConfig()
        .environment(RoubaMultiAgentEnv, env_config=env_config)
        .env_runners(num_env_runners=num_env_runners)
        .multi_agent(policies=set(modules), policy_mapping_fn=opponent_mapping(num_players, first_opponents),
                     policies_to_train=[LEARNER_MODULE])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=learning_rate)
        .callbacks(functools.partial(SelfPlayPool, num_players, tuple(scripted), snapshot_interval, pool_size))
        .debugging(seed=seed)
    )


# ---------------------------------------------------------------------------
# An RLlib module as a rouba_env player
# ---------------------------------------------------------------------------


class RLlibPolicy(BasePolicy):
    """A trained RLlib module (e.g. ``algo.get_module("main")``) as a `Policy` for `rouba_env.evaluate`.

    Samples from the masked logits with the caller's generator, or plays the
    most likely legal action with ``greedy=True``.
    """

    def __init__(self, module, rules: RulesConfig, max_players: int | None = None, greedy: bool = False,
                 name: str = "rllib"):
        super().__init__(rules, max_players)
        self.module = module
        self.greedy = greedy
        self.name = name

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal = check_mask(mask)
        obs = np.asarray(obs, dtype=np.float32).reshape(len(legal), -1)
        batch = {Columns.OBS: {OBSERVATIONS: torch.as_tensor(obs),
                               ACTION_MASK: torch.as_tensor(legal.astype(np.float32))}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].cpu().numpy()
        logits = np.where(legal, logits.astype(np.float64), -np.inf)
        if not self.greedy:
            logits = logits + rng.gumbel(size=logits.shape)
        return logits.argmax(axis=1).astype(np.int64)
