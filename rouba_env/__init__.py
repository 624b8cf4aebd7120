"""rouba_env: rouba-monte ("steal the pile") for reinforcement learning.

Layers, each importing only from those before it: `rouba_env.rules` (the
compiled rules core and the card-level engine) <- `rouba_env.encoding` (observations, actions) <-
`rouba_env.table` (one game, its seats and the illegal-action rule) and
`rouba_env.batched` (the batched engine) and `rouba_env.openspiel` (the
OpenSpiel game) <- `rouba_env.players` <-
`rouba_env.envs` (PettingZoo AEC, Gymnasium) and `rouba_env.evaluation` <-
`rouba_env.web` and `rouba_env.rllib` <- `rouba_env.cli`. The trainer
(`rouba_training`) imports this package, never the reverse. Nothing here
needs torch: checkpoints play in numpy.
"""

from importlib.metadata import PackageNotFoundError, version as _package_version

import rouba_env.compiled  # noqa: F401  (registers the one-line notice while numba compiles our code)
from rouba_env.batched.game import VectorGame
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import OBSERVATION_VERSION, ObservationEncoder, ObservationView
from rouba_env.envs.aec import env, raw_env
from rouba_env.envs.single_agent import ENV_ID, SingleAgentEnv, register as _register_gymnasium
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.players.base import BasePolicy, Policy
from rouba_env.players.network import load_policy
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, make_rules, preset
from rouba_env.rules.engine import GameState, Move, apply_move, legal_moves, new_game, start_game
from rouba_env.rules.scoring import scores, winners
from rouba_env.warm_up import WARM_UP_STAGES as _WARM_UP_STAGES

try:
    __version__ = _package_version("rouba_env")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

_register_gymnasium()  # makes gymnasium.make(ENV_ID) work once rouba_env is imported
rouba_env.compiled.register_warm_up(_WARM_UP_STAGES)  # what the first table (or player, tree) compiles
rouba_env.compiled.guard_caches()  # an entry of numba's cache that cannot be read is compiled again

__all__ = [
    "ActionEncoding",
    "BasePolicy",
    "ENV_ID",
    "GameState",
    "Move",
    "OBSERVATION_VERSION",
    "ObservationEncoder",
    "ObservationView",
    "PRESET_FIELDS",
    "Policy",
    "RulesConfig",
    "SingleAgentEnv",
    "VectorGame",
    "__version__",
    "apply_move",
    "env",
    "evaluate",
    "legal_moves",
    "load_policy",
    "make_policy",
    "make_rules",
    "new_game",
    "preset",
    "raw_env",
    "scores",
    "start_game",
    "winners",
]
