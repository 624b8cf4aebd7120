"""The RLlib multi-agent environment: one game per env on the `SingleGame`, turn-based, masked observations."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from rouba_env.rules import engine
from rouba_env.rules.config import make_rules
from rouba_env.rules.scoring import TRAINING_REWARD
from rouba_env.checks import as_seed
from rouba_env.table import DEFAULT_ILLEGAL_REWARD
from rouba_env.single_game import SingleGame

OBSERVATIONS = "observations"
ACTION_MASK = "action_mask"
AGENT_PREFIX = "player_"
DEFAULT_REWARD = TRAINING_REWARD
"""The environment's reward unless its config names one: the same as the project trainer's default."""


def agent_id(seat: int) -> str:
    return f"{AGENT_PREFIX}{seat}"


def seat_of(agent: str) -> int:
    if not isinstance(agent, str) or not agent.startswith(AGENT_PREFIX):
        raise ValueError(f"agent ids look like {AGENT_PREFIX}0, {AGENT_PREFIX}1, ...; got {agent!r}")
    return int(agent[len(AGENT_PREFIX):])


class RoubaMultiAgentEnv(MultiAgentEnv):
    """Rouba-monte for RLlib's multi-agent API (new stack); see the module docstring.

    ``config`` keys (all optional): ``rules`` (preset name or dict, default
    standard), ``num_players`` (2..8, default 2), ``max_players`` (padding of
    observations and actions, default num_players: set it to share one module
    across table sizes), ``reward`` (``outcome``, ``margin`` or ``lead``; default margin, as the project's
    trainer),
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
        # The game, its illegal-action rule and its rewards: the environments' one `SingleGame`.
        self.single_game = SingleGame(self.rules, config.get("max_players"), reward=config.get("reward", DEFAULT_REWARD),
                                   illegal_action=config.get("illegal_action", "terminate"),
                                   illegal_reward=config.get("illegal_reward", DEFAULT_ILLEGAL_REWARD))
        self.encoder, self.encoding = self.single_game.encoder, self.single_game.actions
        self.max_players = self.encoder.max_players
        self.possible_agents = [agent_id(seat) for seat in range(self.rules.num_players)]
        self.agents = list(self.possible_agents)
        space = observation_space(self.encoder.size, self.encoding.size)
        self.observation_spaces = {agent: space for agent in self.possible_agents}
        self.action_spaces = {agent: gym.spaces.Discrete(self.encoding.size) for agent in self.possible_agents}
        self.rng = np.random.default_rng()

    @property
    def state(self) -> engine.GameState | None:
        return self.single_game.state

    def _observe(self, seat: int) -> dict:
        return {OBSERVATIONS: self.single_game.observation(seat),
                ACTION_MASK: self.single_game.mask(seat).astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal a new game; the observation and info of the agent to act (RLlib's multi-agent interface)."""
        seed = as_seed(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.single_game.start(self.rng)
        return {agent_id(self.single_game.current): self._observe(self.single_game.current)}, {}

    def step(self, action_dict: dict):
        """Play the acting agent's action from ``action_dict``; RLlib's five dicts, the next agent's
        observation in them."""
        game = self.single_game
        if not game.started or game.over:
            raise RuntimeError("step() called before reset() or after the game ended; call reset()")
        mover = agent_id(game.current)
        if set(action_dict) != {mover}:
            raise ValueError(f"expected an action for {mover} only, got actions for {sorted(action_dict)}")
        game.play(action_dict[mover], who=mover)  # the table takes numpy integers and 0-d arrays too
        if game.over:  # the game ended, by its last move or by an illegal action
            everyone = range(self.rules.num_players)
            rewards = game.final_rewards()
            return ({agent_id(seat): self._observe(seat) for seat in everyone},
                    {agent_id(seat): float(rewards[seat]) for seat in everyone},
                    {"__all__": True, **{agent_id(seat): True for seat in everyone}}, {"__all__": False}, {})
        nxt = agent_id(game.current)
        return {nxt: self._observe(game.current)}, {}, {"__all__": False}, {"__all__": False}, {}


def observation_space(obs_size: int, num_actions: int) -> gym.spaces.Dict:
    """The Dict space of one agent: float observations and a float 0/1 action mask."""
    return gym.spaces.Dict({
        OBSERVATIONS: gym.spaces.Box(-np.inf, np.inf, (obs_size,), np.float32),
        ACTION_MASK: gym.spaces.Box(0.0, 1.0, (num_actions,), np.float32),
    })


def env_creator(env_config: dict | None = None) -> RoubaMultiAgentEnv:
    """For ``ray.tune.registry.register_env(name, env_creator)`` where a name is wanted."""
    return RoubaMultiAgentEnv(env_config)


