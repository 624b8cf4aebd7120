"""rouba_env: rouba-monte ("steal the pile") for reinforcement learning.

Layers, each importing only those before it: `engine` (pure rules) <-
`actions` / `observation` (encodings) <- `aec` (PettingZoo) and `gym_env`
(Gymnasium) <- `agents` <- `evaluation`. Nothing here imports torch except
`rouba_env.players.network`, and only when a checkpoint is loaded.
"""

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, make_rules, preset
from rouba_env.rules.engine import GameState, Move, apply_move, legal_moves, new_game, start_game
from rouba_env.rules.scoring import scores, winners
from rouba_env.encoding.observation import OBSERVATION_VERSION, ObservationEncoder
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.batched.game import VectorGame
from rouba_env.envs.single_agent import SingleAgentEnv, register as _register_gymnasium

_register_gymnasium()


def env(**kwargs):
    """PettingZoo AEC environment, wrapped (see `rouba_env.envs.aec.raw_env` for the arguments)."""
    from rouba_env.envs import aec

    return aec.env(**kwargs)


def load_policy(path_or_name, rules=None, max_players=None, deterministic=False):
    """A trained `Policy` from a checkpoint path or shipped name (imports torch; see `rouba_env.players.network`)."""
    from rouba_env.players.network import load_policy as load

    return load(path_or_name, rules, max_players, deterministic)


def raw_env(**kwargs):
    """Unwrapped PettingZoo AEC environment."""
    from rouba_env.envs import aec

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
