"""RLlib support (new API stack): a multi-agent env, masked and scripted RLModules, self-play helpers.

Needs the ``ray`` extra (`rouba_env.extras.install_hint`: Ray with RLlib, and
torch); nothing else in the package imports it. Three modules:
`rouba_env.rllib.env` (the environment), `rouba_env.rllib.modules` (RL
modules) and `rouba_env.rllib.selfplay` (self-play and a module as a player);
their public names are also here.

* `RoubaMultiAgentEnv`: one game per env on a `Table`, turn-based
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
* `export_checkpoint`: a trained module as a project checkpoint (``checkpoint:FOLDER``), playable
  without Ray or torch in every command and in the browser.
* Module ids of scripted players come from their specs (`scripted_module_id`: ``checkpoint:2p`` becomes
  ``scripted_checkpoint_2p_<hash>``), so any spec, a shipped checkpoint included, can sit in the pool.
* RLlib's stock ``ActionMaskingTorchRLModule`` works with this environment as it is (the observation
  Dict has the keys it reads).

See ``examples/rllib_selfplay.py`` for a complete self-play run. RLlib steps
one game per env in Python; the project's own trainer (``rouba-train``,
optionally ``--ray``) is much faster on this game.
"""

from __future__ import annotations

try:
    import ray.rllib  # noqa: F401
    import torch  # noqa: F401
except ImportError as error:
    from rouba_env.extras import install_hint

    raise ImportError(f"rouba_env.rllib needs the ray extra ({error.name} is missing): {install_hint('ray')}, "
                      f"and torch") from error

from rouba_env.rllib.env import (
    ACTION_MASK,
    AGENT_PREFIX,
    DEFAULT_REWARD,
    OBSERVATIONS,
    RoubaMultiAgentEnv,
    agent_id,
    env_creator,
    observation_space,
    seat_of,
)
from rouba_env.rllib.modules import DEFAULT_HIDDEN_SIZES, MaskedPPOTorchRLModule, ScriptedRLModule, scripted_module_spec
from rouba_env.rllib.selfplay import (
    LEARNER_MODULE,
    SCRIPTED_PREFIX,
    SNAPSHOT_PREFIX,
    RLlibPolicy,
    scripted_module_id,
    SelfPlayPool,
    export_checkpoint,
    opponent_mapping,
    selfplay_config,
)

__all__ = [
    "ACTION_MASK", "AGENT_PREFIX", "DEFAULT_REWARD", "DEFAULT_HIDDEN_SIZES", "LEARNER_MODULE", "OBSERVATIONS", "SCRIPTED_PREFIX",
    "SNAPSHOT_PREFIX", "MaskedPPOTorchRLModule", "RLlibPolicy", "RoubaMultiAgentEnv", "ScriptedRLModule",
    "SelfPlayPool", "agent_id", "export_checkpoint", "env_creator", "observation_space", "opponent_mapping", "scripted_module_spec",
    "scripted_module_id", "seat_of", "selfplay_config",
]
