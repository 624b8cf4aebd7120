"""Gymnasium single-agent environment: one learner seat, the other seats played by policies.

The learner's observation is the same vector as in the AEC environment (or a
``Dict`` with the mask, ``dict_observation=True``); the mask is also in
``info["action_mask"]`` and `SingleAgentEnv.action_masks` (what sb3-contrib's
MaskablePPO reads). Opponents' turns are played inside `reset` and `step`, and
the reward is always the learner's own final reward.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from rouba_env.envs.aec import RENDER_FPS, RENDER_MODES
from rouba_env.envs.render import render_as
from rouba_env.players.base import Policy
from rouba_env.checks import as_seed, check_choice, check_flag, check_int, check_reset_options
from rouba_env.table import DEFAULT_ILLEGAL_REWARD
from rouba_env.single_game import SingleGame
from rouba_env.rules.config import RulesConfig, make_rules
from rouba_env.rules.scoring import ENVIRONMENT_REWARD
from rouba_env.players.registry import make_policy

Observation = Union[np.ndarray, dict[str, np.ndarray]]
"""The learner's observation: the vector, or ``{"observation", "action_mask"}`` with ``dict_observation=True``."""
OpponentSampler = Callable[[np.random.Generator], Sequence["str | Policy"]]


def check_seat_choice(seat, num_players: int) -> "int | str":
    """The learner's seat as given: ``"random"`` (drawn every episode) or an int in 0..num_players-1."""
    if isinstance(seat, str) and seat == "random":
        return seat
    try:
        return check_int("seat", seat, 0, num_players - 1)
    except ValueError:
        raise ValueError(f"seat must be 'random' or an int in 0..{num_players - 1}, got {seat!r}") from None


def opponent_lineup(players, rules: RulesConfig) -> list:
    """The player (spec or `Policy`) of every other seat, in seat order after the learner.

    One player fills every other seat; a list gives one per seat.
    """
    others = rules.num_players - 1
    if isinstance(players, (str, Policy)):
        players = [players] * others
    if isinstance(players, (bytes, dict)) or not hasattr(players, "__iter__"):
        raise ValueError(f"opponents must be a player spec, a Policy, a list of them or a callable "
                         f"(rng) -> lineup, got {type(players).__name__}: {players!r}")
    players = list(players)
    if len(players) == 1 and others > 1:
        players = players * others
    if len(players) != others:
        raise ValueError(f"{len(players)} opponents given for {others} other seat(s) at a "
                         f"{rules.num_players}-player table")
    return players


def seat_lineup(learner: int, lineup: Sequence, num_players: int, *, open_seat=None) -> list:
    """The seats of a table: ``open_seat`` at the learner's, the lineup's players after it in seat order."""
    seats: list = [open_seat] * num_players
    for offset, player in enumerate(lineup, start=1):
        seats[(learner + offset) % num_players] = player
    return seats


def draw_episode(rng: np.random.Generator, *, seat_choice: "int | str", num_players: int,
                 sampler: "OpponentSampler | None") -> tuple[int, Sequence | None]:
    """The learner's seat, then (with a sampler) the episode's line-up, drawn from the episode's Generator.

    The one episode set-up of both single-agent environments (this one and the batched vector env), so
    the same Generator seats the same game in each; the deal is drawn after these.
    """
    learner = int(rng.integers(num_players)) if seat_choice == "random" else int(seat_choice)
    return learner, (sampler(rng) if sampler is not None else None)


class LegalDiscrete(spaces.Discrete):
    """``Discrete(N)`` whose ``sample()`` without a mask draws a legal action of the current state."""

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray | None], seed=None):
        super().__init__(n, seed=seed)
        self._legal_mask = legal_mask

    def sample(self, mask=None, probability=None):
        """A random action: a legal one of the current state when no ``mask`` or ``probability`` is given."""
        if mask is None and probability is None:
            current = self._legal_mask()
            if current is not None and current.any():
                mask = current
        return super().sample(mask=mask, probability=probability)


class SingleAgentEnv(gymnasium.Env):
    """Rouba-monte for one learner against policies in the other seats.

    Args:
        opponents: one player (spec string such as ``"heuristic"`` or a
            `Policy`) for every other seat, a single one used for all of
            them, or a sampler ``f(rng) -> players`` that draws a new line-up
            every episode (training against a pool).
        seat: the learner's seat, or ``"random"`` (drawn every episode).
        rules: a `RulesConfig`, a preset name, or None; ``**rule_fields`` override it.
        reward: ``"outcome"``, ``"margin"`` or ``"lead"`` (see `rouba_env.envs.aec.raw_env`).
        max_players: pad observation and action spaces to this many seats.
        dict_observation: observations as ``Dict(observation, action_mask)``.
        illegal_action: ``"raise"`` (ValueError) or ``"terminate"`` (the episode
            ends with ``illegal_reward``).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}

    def __init__(
        self,
        opponents: "Sequence[str | Policy] | str | Policy | OpponentSampler" = "random",
        *,
        seat: "int | str" = "random",
        rules: RulesConfig | str | None = None,
        reward: str = ENVIRONMENT_REWARD,
        max_players: int | None = None,
        dict_observation: bool = False,
        illegal_action: str = "terminate",
        illegal_reward: float = DEFAULT_ILLEGAL_REWARD,
        render_mode: str | None = None,
        **rule_fields,
    ):
        if "autoreset_mode" in rule_fields:  # a vector environment's option, given to a single game
            raise ValueError("autoreset_mode is an option of the vector environment; with vectorization_mode='sync' "
                             "pass vector_kwargs={'autoreset_mode': gymnasium.vector.AutoresetMode.SAME_STEP}")
        self.rules = make_rules(rules, **rule_fields)
        self.seat_choice = check_seat_choice(seat, self.rules.num_players)
        check_choice("render_mode", render_mode, [None, *RENDER_MODES])
        check_flag("dict_observation", dict_observation)
        self.single_game = SingleGame(self.rules, max_players, reward=reward, illegal_action=illegal_action,
                           illegal_reward=illegal_reward)
        self.illegal_action = illegal_action
        self.illegal_reward = self.single_game.illegal_reward
        self.render_mode = render_mode
        self.max_players = max_players
        self.actions = self.single_game.actions
        self.encoder = self.single_game.encoder
        if callable(opponents) and not isinstance(opponents, Policy):
            self._sampler: OpponentSampler | None = opponents
            self._fixed_opponents = None
        else:
            self._sampler = None
            self._fixed_opponents = self._make_lineup(opponents)
        vector = spaces.Box(0.0, float(self.rules.total_cards), (self.encoder.size,), np.float32)
        self.dict_observation = bool(dict_observation)
        if self.dict_observation:
            self.observation_space = spaces.Dict(
                {"observation": vector, "action_mask": spaces.Box(0, 1, (self.actions.size,), np.int8)}
            )
        else:
            self.observation_space = vector
        self.action_space = LegalDiscrete(self.actions.size, self._current_mask)
        self.learner = 0
        self.opponents: list[Policy] = []

    @property
    def game(self):
        """The current game as a `GameState` naming every card (None before `reset`): a copy for views."""
        return self.single_game.state

    def _make_lineup(self, players) -> list[Policy]:
        """One policy per other seat, in seat order after the learner."""
        return [make_policy(p, self.rules, self.max_players) for p in opponent_lineup(players, self.rules)]

    def _current_mask(self) -> np.ndarray | None:
        if not self.single_game.started or self.single_game.over:
            return None
        return self.single_game.mask(self.learner)

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (sb3-contrib's convention)."""
        if not self.single_game.started:
            self.single_game.require_started("action_masks()")
        return self.single_game.mask(self.learner).astype(bool)

    def _observation(self):
        vector = self.single_game.observation(self.learner)
        if self.dict_observation:
            return {"observation": vector, "action_mask": self.single_game.mask(self.learner)}
        return vector

    def _info(self) -> dict:
        info = {"action_mask": self.single_game.mask(self.learner), "seat": self.learner}
        if self.single_game.over:
            info["scores"] = self.single_game.scores()
        return info

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Observation, dict[str, Any]]:
        """Deal a new game, draw the learner's seat and line-up, and play the opponents up to the learner's
        first turn; (observation, info with the mask)."""
        check_reset_options(options)
        super().reset(seed=as_seed(seed))
        rng = self.np_random
        self.learner, drawn = draw_episode(rng, seat_choice=self.seat_choice, num_players=self.rules.num_players,
                                           sampler=self._sampler)
        self.opponents = self._make_lineup(drawn) if drawn is not None else self._fixed_opponents or []
        self.single_game.seat(seat_lineup(self.learner, self.opponents, self.rules.num_players))
        self.single_game.start(rng)
        self.single_game.play_seated(rng)
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the opponents up to its next turn or the end; Gymnasium's
        five-tuple, the reward the learner's final one (0 before the end)."""
        game = self.single_game
        if not game.started:
            game.require_started("step()")
        if game.over:
            raise RuntimeError("the episode is over; call reset()")
        if not game.play(action, who=f"the learner in seat {self.learner}"):
            info = self._info()
            info["illegal_action"] = True
            return self._observation(), game.illegal_reward, True, False, info
        game.play_seated(self.np_random)
        terminated = game.over
        reward = float(game.final_rewards()[self.learner]) if terminated else 0.0
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, False, self._info()

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium's RenderFrame is its TypeVar
        """The game from the learner's seat: text (``ansi``; ``human`` prints it) or a frame (``rgb_array``)."""
        return render_as(self.render_mode, self.single_game.require_started("render()"), self.learner)


ENV_ID = "RoubaMonte-v0"
"""Gymnasium id of the single-agent env (`gymnasium.make`, `gymnasium.make_vec`), registered on import."""


def register() -> None:
    """Register `ENV_ID` with gymnasium (done on ``import rouba_env``)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="rouba_env.envs.single_agent:SingleAgentEnv",
                           vector_entry_point="rouba_env.envs.vector_env:make_vector_env")
