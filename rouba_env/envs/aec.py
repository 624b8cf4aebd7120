"""PettingZoo AEC environment: a thin shell over the pure engine.

Agents are ``player_0 .. player_{n-1}`` (seat order). Each observation is a
``Dict(observation=Box(float32), action_mask=Box(int8))``; see
`rouba_env.encoding.observation` for the vector and `rouba_env.encoding.actions` for the action
encoding. Rewards come only at the end of a game.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from rouba_env.rules import engine
from rouba_env.rules import scoring
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.config import RulesConfig, make_rules
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.envs.render import render_text

ILLEGAL_ACTION_MODES = ("raise", "terminate")


def check_option(name: str, value, choices) -> None:
    """ValueError naming the option and its allowed values unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose one of {tuple(choices)}")


def reward_function(mode: str):
    """``f(state) -> rewards per seat`` for a reward mode name (see `rouba_env.rules.scoring`)."""
    scoring.check_reward_mode(mode)
    return lambda state: scoring.final_rewards(mode, scoring.scores(state), state.config.total_cards)


class raw_env(AECEnv):
    """Rouba-monte for 2..8 players as a PettingZoo AEC environment.

    Args:
        rules: a `RulesConfig`, a preset name (``"standard"``, ``"jokers"``, ...) or None.
        reward: ``"outcome"`` (+1 sole winner, 0 tied top, -1 others) or
            ``"margin"`` (own score minus the others' mean, over the deck size).
        max_players: pad observation and action spaces to this many seats.
        illegal_action: ``"raise"`` (ValueError) or ``"terminate"`` (the game
            ends; the offender gets ``illegal_reward``, the others 0).
        render_mode: None, ``"ansi"`` or ``"human"``.
        **rule_fields: `RulesConfig` fields overriding ``rules`` (``num_players=3``).
    """

    metadata = {"render_modes": ["ansi", "human"], "name": "rouba_monte_v0", "is_parallelizable": False}

    def __init__(
        self,
        rules: RulesConfig | str | None = None,
        reward: str = "outcome",
        max_players: int | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        **rule_fields,
    ):
        super().__init__()
        self.rules = make_rules(rules, **rule_fields)
        self._reward_fn = reward_function(reward)
        self.reward_mode = reward
        check_option("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        check_option("render_mode", render_mode, [None, *self.metadata["render_modes"]])
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.actions = ActionEncoding(self.rules, max_players)
        self.encoder = ObservationEncoder(self.rules, max_players)
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
        self.action_spaces = {agent: spaces.Discrete(self.actions.size) for agent in self.possible_agents}
        self.state_space = spaces.Box(0.0, float(self.rules.total_cards), (self.encoder.state_size,), np.float32)
        self._rng = np.random.default_rng()
        self.game: engine.GameState | None = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game = engine.new_game(self.rules, self._rng)
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.current]

    def observe(self, agent):
        seat = self.agent_name_mapping[agent]
        return {
            "observation": self.encoder.encode(self.game, seat),
            "action_mask": self.actions.mask(self.game, seat),
        }

    def state(self) -> np.ndarray:
        return self.encoder.full_state(self.game)

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        move = self.actions.decode(action)
        try:
            next_game = engine.apply_move(self.game, move)  # validates the move once
        except ValueError:
            legal = self.actions.legal_actions(self.game)
            if self.illegal_action == "raise":
                raise ValueError(
                    f"illegal action {int(action)} ({move}) for {agent}; legal actions: {legal}"
                ) from None
            self._end({a: (self.illegal_reward if a == agent else 0.0) for a in self.agents}, illegal=True)
            return
        self._cumulative_rewards[agent] = 0.0
        self.game = next_game
        if engine.is_terminal(self.game):
            rewards = self._reward_fn(self.game)
            self._end({a: rewards[self.agent_name_mapping[a]] for a in self.agents}, illegal=False)
        else:
            self.rewards = {a: 0.0 for a in self.agents}
            self.agent_selection = self.possible_agents[self.game.current]
        if self.render_mode == "human":
            self.render()

    def _end(self, rewards: dict, illegal: bool) -> None:
        self.rewards = rewards
        self.terminations = {a: True for a in self.agents}
        points = scoring.scores(self.game)
        for a in self.agents:
            self.infos[a] = {"scores": list(points), "illegal_action": illegal}
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = render_text(self.game)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass


def env(**kwargs) -> AECEnv:
    """The environment wrapped as PettingZoo's classic games are (order enforcement)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))
