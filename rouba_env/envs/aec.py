"""PettingZoo AEC environment: a thin shell over `SingleGame` (one game on the compiled rules core).

Agents are ``player_0 .. player_{n-1}`` (seat order). Each observation is a
``Dict(observation=Box(float32), action_mask=Box(int8))``; see
`rouba_env.encoding.observation` for the vector and `rouba_env.encoding.actions`
for the action encoding. Rewards come only at the end of a game. Illegal
actions follow `rouba_env.table` (by default the game ends and the
offender gets ``illegal_reward``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from rouba_env.envs.render import RENDER_MODES, render_as
from rouba_env.checks import as_seed, check_choice
from rouba_env.table import DEFAULT_ILLEGAL_REWARD
from rouba_env.single_game import SingleGame
from rouba_env.rules.config import RulesConfig, make_rules
from rouba_env.rules.core import NO_SEAT
from rouba_env.rules.scoring import ENVIRONMENT_REWARD

RENDER_FPS = 2
"""Moves per second a viewer of ``render_mode="human"`` output should expect (gymnasium's metadata key)."""


class raw_env(AECEnv):
    """Rouba-monte for 2..8 players as a PettingZoo AEC environment.

    Args:
        rules: a `RulesConfig`, a preset name (``"standard"``, ``"jokers"``, ...) or None.
        reward: ``"outcome"`` (+1 sole winner, 0 tied top, -1 others),
            ``"margin"`` (own score minus the others' mean, over the deck size) or
            ``"lead"`` (own score minus the best other's, over the deck size).
        max_players: pad observation and action spaces to this many seats.
        illegal_action: ``"terminate"`` (default: the game ends; the offender
            gets ``illegal_reward``, the others 0; a warning is issued) or
            ``"raise"`` (ValueError, nothing changes).
        render_mode: None, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (a frame, for videos).
        **rule_fields: `RulesConfig` fields overriding ``rules`` (``num_players=3``).
    """

    metadata = {"render_modes": list(RENDER_MODES), "name": "rouba_monte_v0", "is_parallelizable": False,
                "render_fps": RENDER_FPS}

    def __init__(
        self,
        rules: RulesConfig | str | None = None,
        *,
        reward: str = ENVIRONMENT_REWARD,
        max_players: int | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float = DEFAULT_ILLEGAL_REWARD,
        render_mode: str | None = None,
        **rule_fields,
    ):
        super().__init__()
        self.rules = make_rules(rules, **rule_fields)
        check_choice("render_mode", render_mode, [None, *RENDER_MODES])
        self.single_game = SingleGame(self.rules, max_players, reward=reward, illegal_action=illegal_action,
                           illegal_reward=illegal_reward)
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.illegal_reward = self.single_game.illegal_reward
        self.render_mode = render_mode
        self.actions = self.single_game.actions
        self.encoder = self.single_game.encoder
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.num_players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, float(self.rules.total_cards), (self.encoder.size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (self.actions.size,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces: dict[str, spaces.Space] = {agent: spaces.Discrete(self.actions.size)
                                                        for agent in self.possible_agents}
        self.state_space = spaces.Box(0.0, float(self.rules.total_cards), (self.encoder.state_size,), np.float32)
        self._rng = np.random.default_rng()
        self.agents: list[str] = []

    @property
    def game(self):
        """The current game as a `GameState` naming every card (None before `reset`): a copy for views."""
        return self.single_game.state

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game (``seed``: its deal and the seated players' randomness; None: fresh entropy)."""
        seed = as_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.single_game.start(self._rng)
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.single_game.current]

    def _seat(self, agent) -> int:
        if agent not in self.agent_name_mapping:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        return self.agent_name_mapping[agent]

    def observe(self, agent):
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            self._seat(agent)  # raises, naming the agents
        if not self.agents and not self.single_game.started:
            self.single_game.require_started("observe()")
        observation, mask = self.single_game.view(seat)
        return {"observation": observation, "action_mask": mask}

    def state(self) -> np.ndarray:
        return self.single_game.full_state()

    def step(self, action) -> None:
        """Play the selected agent's ``action`` (None for an agent whose game is over); an illegal one
        follows ``illegal_action``."""
        if not self.agents:  # before the first reset, or every agent has stepped out of a finished game
            self.single_game.require_started("step()")
            raise RuntimeError("the game is over and every agent has stepped out; call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self.single_game.move(action, who=agent)
        self._cumulative_rewards[agent] = 0.0
        if seat == NO_SEAT:
            self._end(illegal=self.single_game.offender is not None)
        else:  # rewards stay zero until the end of the game
            self.agent_selection = self.possible_agents[seat]
        if self.render_mode == "human":
            self.render()

    def _end(self, illegal: bool) -> None:
        rewards = self.single_game.final_rewards()
        self.rewards = {a: rewards[self.agent_name_mapping[a]] for a in self.agents}
        self.terminations = {a: True for a in self.agents}
        points = self.single_game.scores()
        for a in self.agents:
            self.infos[a] = {"scores": list(points), "illegal_action": illegal}
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        """The game as text (``ansi``; ``human`` prints it; the hand of the seat to act) or as a frame with
        every hand face up (``rgb_array``)."""
        state = self.single_game.require_started("render()")
        return render_as(self.render_mode, state, None if self.render_mode == "rgb_array" else state.current)

    def close(self) -> None:
        """Nothing to release (PettingZoo's interface)."""
        pass


AgentObservation = dict[str, np.ndarray]
"""One agent's observation: ``{"observation": float32[D], "action_mask": int8[A]}``."""


ORDER_CHECKED_FIELDS = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection",
                                  "num_agents", "agents"})
"""Attributes that `OrderEnforcing` refuses to read before the first reset, as PettingZoo's wrapper does."""


class OrderEnforcing(wrappers.BaseWrapper):
    """PettingZoo's order enforcement, on state of its own, with `last` asked of the environment in one call.

    The same checks as PettingZoo's ``OrderEnforcingWrapper`` (nothing may be read, observed, rendered
    or stepped before ``reset``; ``agent_iter`` needs a ``step`` or ``reset`` between agents), kept in
    this class's own two flags rather than that wrapper's private ones. The stock wrapper answers
    `last` through forwarded attribute reads, which cost more than a game step here.
    """

    def __init__(self, env: AECEnv):
        if not isinstance(env, AECEnv):
            raise TypeError(f"OrderEnforcing wraps an AEC environment, got {type(env).__name__}")
        self.dealt = False
        """reset() has been called."""
        self.moved = False
        """step() or reset() has been called since `agent_iter` last gave an agent."""
        super().__init__(env)

    def __getattr__(self, name: str) -> Any:
        if name in ORDER_CHECKED_FIELDS and not self.__dict__.get("dealt", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        return super().__getattr__(name)

    def _require_reset(self, call: str) -> None:
        if not self.dealt:
            raise RuntimeError(f"call reset() before {call}()")

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game (``seed``: its deal and the seated players' randomness; None: fresh entropy)."""
        self.dealt = self.moved = True
        self.env.reset(seed=seed, options=options)

    def agent_iter(self, max_iter: int = 2**63):
        """The agents in turn, as PettingZoo's ``agent_iter`` (after `reset`)."""
        self._require_reset("agent_iter")
        return AgentIterator(self, max_iter)

    def last(self, observe: bool = True) -> tuple[AgentObservation | None, float, bool, bool, dict[str, Any]]:
        """(observation, reward, terminated, truncated, info) of the agent to act, as PettingZoo's ``last``."""
        if not self.dealt:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def observe(self, agent):
        self._require_reset("observe")
        return self.env.observe(agent)

    def state(self):
        self._require_reset("state")
        return self.env.state()

    def render(self):
        """The game from the current agent's seat, as the wrapped env renders it (after `reset`)."""
        self._require_reset("render")
        return self.env.render()

    def step(self, action) -> None:
        """Play ``action`` for the agent to act. Once every agent is done, a step only logs PettingZoo's
        warning and plays nothing, as PettingZoo's wrapper does (the raw env raises)."""
        if not self.dealt:  # `_require_reset`, inline: every step passes here
            raise RuntimeError("call reset() before step()")
        self.moved = True
        if not self.env.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self.env.step(action)

    def __str__(self) -> str:
        return str(self.env)


class AgentIterator:
    """`OrderEnforcing.agent_iter`: PettingZoo's order-enforcing iteration, reading the environment directly."""

    def __init__(self, wrapper: OrderEnforcing, max_iter: int):
        self.wrapper, self.raw, self.left = wrapper, wrapper.env, max_iter

    def __iter__(self) -> "AgentIterator":
        return self

    def __next__(self):
        raw = self.raw
        if not raw.agents or self.left <= 0:
            raise StopIteration
        self.left -= 1
        if not self.wrapper.moved:
            raise RuntimeError("need to call step() or reset() in a loop over `agent_iter`")
        self.wrapper.moved = False
        return raw.agent_selection


def env(**kwargs) -> OrderEnforcing:
    """The environment wrapped as PettingZoo's classic games are (order enforcement)."""
    return OrderEnforcing(raw_env(**kwargs))
