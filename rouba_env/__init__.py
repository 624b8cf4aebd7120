"""rouba_env: rouba-monte ("steal the pile") for reinforcement learning.

Layers, each importing only those before it: `engine` (pure rules) <-
`actions` / `observation` (encodings) <- `aec` (PettingZoo) and `gym_env`
(Gymnasium) <- `agents` <- `evaluation`. Nothing here imports torch except
`rouba_env.checkpoint`, and only when a checkpoint is loaded.
"""

from rouba_env.actions import ActionEncoding
from rouba_env.config import PRESET_FIELDS, RulesConfig, make_rules, preset
from rouba_env.engine import GameState, Move, apply_move, legal_moves, new_game, scores, start_game, winners
from rouba_env.observation import OBSERVATION_VERSION, ObservationEncoder
from rouba_env.evaluation import evaluate
from rouba_env.vector import VectorGame
from rouba_env.gym_env import ENV_ID, SingleAgentEnv, register as _register_gymnasium

_register_gymnasium()


def env(**kwargs):
    """PettingZoo AEC environment, wrapped (see `rouba_env.aec.raw_env` for the arguments)."""
    from rouba_env import aec

    return aec.env(**kwargs)


def load_policy(path_or_name, rules=None, max_players=None, deterministic=False):
    """A trained `Policy` from a checkpoint path or shipped name (imports torch; see `rouba_env.checkpoint`)."""
    from rouba_env.checkpoint import load_policy as load

    return load(path_or_name, rules, max_players, deterministic)


def raw_env(**kwargs):
    """Unwrapped PettingZoo AEC environment."""
    from rouba_env import aec

    return aec.raw_env(**kwargs)


__all__ = [
    "ActionEncoding",
    "GameState",
    "Move",
    "OBSERVATION_VERSION",
    "ObservationEncoder",
    "PRESET_FIELDS",
    "RulesConfig",
    "SingleAgentEnv",
    "VectorGame",
    "apply_move",
    "env",
    "evaluate",
    "legal_moves",
    "load_policy",
    "make_rules",
    "new_game",
    "preset",
    "raw_env",
    "scores",
    "start_game",
    "winners",
]
