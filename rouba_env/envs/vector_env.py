"""A Gymnasium vector environment on the batched engine: N learners' games, the opponents played in batch.

``gymnasium.make_vec("rouba_env:RoubaMonte-v0", num_envs=N)`` returns a
`RoubaVectorEnv` (the id's ``vector_entry_point``): N games of a
`rouba_env.table.Table`, each with one learner seat and
opponents that play in batch (``random``, ``greedy``, ``heuristic``,
``checkpoint:...``). Its options are `SingleAgentEnv`'s, and so are its games:

* **Seeds.** ``reset(seed=s)`` seeds game ``i`` with ``s + i`` (a list gives
  one seed per game), as Gymnasium's ``SyncVectorEnv`` seeds its
  sub-environments. Game ``i`` then plays exactly what
  ``SingleAgentEnv(...).reset(seed=s + i)`` and its later ``reset()`` calls
  play, move for move: its learner seat, its opponents and their moves, and
  its deals all come from that game's own Generator, in the same order.
* **Autoreset** (Gymnasium 1.x ``metadata["autoreset_mode"]``):
  ``AutoresetMode.SAME_STEP`` (default): a game that ends is dealt anew in the
  same step; the returned row is the new game's first observation and the
  finished game's last observation and info are in ``info["final_obs"]``
  (an object array, None elsewhere) and ``info["final_info"]`` (a dict of
  arrays), with the masks ``info["_final_obs"]`` and ``info["_final_info"]``.
  So every row of ``info["action_mask"]`` is the mask of the next decision.
  ``AutoresetMode.NEXT_STEP``: the step that ends a game returns its last
  observation (an all-zero mask); the next step ignores that row's action and
  returns the new game's first observation with reward 0.
* **Info**: ``action_mask`` int8[N, A] (also `RoubaVectorEnv.action_masks`,
  what sb3-contrib reads), ``seat`` int64[N] (the learner's seat), and for
  finished games ``scores`` int64[N, n] and ``illegal_action`` bool[N], each
  with its ``_key`` mask of the rows that hold it (all True for ``action_mask``
  and ``seat``, as Gymnasium's ``SyncVectorEnv`` gives them).
* **Illegal actions** follow ``illegal_action`` as in `SingleAgentEnv`:
  ``"terminate"`` ends that game with ``illegal_reward``; ``"raise"`` raises
  and plays nothing.

Opponents without a batch path (``expert``, ``search``, OpenSpiel bots) are
refused: ``vectorization_mode="sync"`` plays them in N `SingleAgentEnv`s.
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from rouba_env.checks import check_choice, check_flag, check_int, check_reset_options, is_int
from rouba_env.envs.aec import RENDER_FPS
from rouba_env.envs.render import render_as
from rouba_env.envs.single_agent import (
    OpponentSampler, check_seat_choice, draw_episode, opponent_lineup, seat_lineup,
)
from rouba_env.players.base import Policy
from rouba_env.rules.config import RulesConfig, make_rules
from rouba_env.rules.engine import DEAL_SEED_BOUND
from rouba_env.rules.scoring import ENVIRONMENT_REWARD
from rouba_env.streams import RowStreams
from rouba_env.batched.game import MAX_GAMES
from rouba_env.table import DEFAULT_ILLEGAL_REWARD, OPEN_SEAT, Table
from rouba_env.players.registry import make_policy

AUTORESET_MODES = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)
"""The autoreset modes this environment offers (Gymnasium's names)."""
VECTOR_RENDER_MODES = (None, "ansi", "rgb_array")
"""Render modes of the batched vector env (``human`` opens no window per game: use vectorization_mode='sync')."""
RESET_MASK = "reset_mask"
"""The one reset option: a bool array saying which games to deal anew (Gymnasium's name for it)."""


class RoubaVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of rouba-monte, one learner seat each, on the batched engine.

    Args:
        num_envs: games stepped together, 1..`MAX_GAMES`.
        opponents: as for `SingleAgentEnv`; a sampler ``f(rng) -> players`` is called once per
            episode with that game's Generator. Every opponent must play in batch.
        seat: the learner's seat, or ``"random"`` (drawn every episode).
        rules: a `RulesConfig`, a preset name, or None; ``**rule_fields`` override it.
        reward: ``"outcome"``, ``"margin"`` or ``"lead"``.
        max_players: pad observation and action spaces to this many seats.
        dict_observation: observations as ``Dict(observation, action_mask)``.
        illegal_action: ``"terminate"`` (that game ends with ``illegal_reward``) or ``"raise"``.
        illegal_reward: the learner's reward when its illegal action ends a game.
        autoreset_mode: ``AutoresetMode.SAME_STEP`` (default) or ``NEXT_STEP``, or ``"same_step"``,
            ``"next_step"``.
        render_mode: None, ``"rgb_array"`` (`render` gives a tuple of ``uint8[H, W, 3]`` frames, as
            Gymnasium's SyncVectorEnv does, for video recorders) or ``"ansi"`` (a tuple of texts); each
            game is shown from its learner's seat. The engine then also keeps every card's suit.
        render_games: the games `render` shows: None (every game), a count (the first ones) or a list of
            game indices.
    """

    def __init__(
        self,
        num_envs: int = 1,
        opponents: "Sequence[str | Policy] | str | Policy | OpponentSampler" = "random",
        *,
        seat: "int | str" = "random",
        rules: RulesConfig | str | None = None,
        reward: str = ENVIRONMENT_REWARD,
        max_players: int | None = None,
        dict_observation: bool = False,
        illegal_action: str = "terminate",
        illegal_reward: float = DEFAULT_ILLEGAL_REWARD,
        autoreset_mode: "AutoresetMode | str" = AutoresetMode.SAME_STEP,
        render_mode: str | None = None,
        render_games: "int | Sequence[int] | None" = None,
        **rule_fields,
    ):
        self.num_envs = check_int("num_envs", num_envs, 1, MAX_GAMES)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        if render_mode == "human":
            raise ValueError("render_mode 'human' opens no window per game in the batched vector env: use "
                             "'rgb_array' (frames) or 'ansi' (texts), or vectorization_mode='sync'")
        check_choice("render_mode", render_mode, VECTOR_RENDER_MODES)
        self.render_mode = render_mode
        if render_mode is None and render_games is not None:
            raise ValueError("render_games picks the games render() shows: it needs a render_mode "
                             "('rgb_array' or 'ansi')")
        self.render_games = _render_games(render_games, self.num_envs)
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": [m for m in VECTOR_RENDER_MODES if m],
                         "render_fps": RENDER_FPS}
        self.rules = make_rules(rules, **rule_fields)
        self.seat_choice = check_seat_choice(seat, self.rules.num_players)
        check_flag("dict_observation", dict_observation)
        self.dict_observation = bool(dict_observation)
        self.max_players = max_players
        self.table = Table(self.rules, self.num_envs, max_players=max_players, reward=reward,
                                 illegal_action=illegal_action, illegal_reward=illegal_reward,
                                 track_cards=render_mode is not None)
        self.illegal_reward = self.table.illegal_reward
        self._spec_ids: dict[str, int] = {}
        if callable(opponents) and not isinstance(opponents, Policy):
            self._sampler: OpponentSampler | None = opponents
            self._fixed_lineup: list[int] | None = None
        else:
            self._sampler = None
            self._fixed_lineup = self._lineup_ids(opponents)
        self._set_spaces()
        self.learner = np.zeros(self.num_envs, dtype=np.int64)
        """The learner's seat in each game."""
        self._generators: list[np.random.Generator] | None = None
        self._streams: RowStreams | None = None
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._all = np.arange(self.num_envs, dtype=np.int64)

    def _set_spaces(self) -> None:
        """Set one game's observation and action spaces (Gymnasium's ``single_*``) and the batch's."""
        game = self.table.game
        vector = spaces.Box(0.0, float(self.rules.total_cards), (game.obs_size,), np.float32)
        if self.dict_observation:
            self.single_observation_space = spaces.Dict(
                {"observation": vector, "action_mask": spaces.Box(0, 1, (game.num_actions,), np.int8)})
        else:
            self.single_observation_space = vector
        self.single_action_space = spaces.Discrete(game.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    # ------------------------------------------------------------ opponents

    def _player_id(self, player) -> int:
        if isinstance(player, str):
            if player not in self._spec_ids:
                self._spec_ids[player] = self.table.add_player(make_policy(player, self.rules, self.max_players))
            return self._spec_ids[player]
        if not isinstance(player, Policy):
            raise ValueError(f"an opponent must be a player spec or a Policy, got {player!r}")
        return self.table.add_player(player)

    def _lineup_ids(self, players) -> list[int]:
        return [self._player_id(player) for player in opponent_lineup(players, self.rules)]

    # ------------------------------------------------------------ episodes

    @property
    def generators(self) -> list[np.random.Generator]:
        """Each game's Generator (seat, opponents, deals and the opponents' moves all draw from it)."""
        if self._generators is None:
            raise RuntimeError("call reset() first")
        return self._generators

    def _new_games(self, slots: np.ndarray) -> None:
        """Draw each slot's learner seat, line-up and deal from its Generator (as `SingleAgentEnv.reset`) and deal."""
        n = self.rules.num_players
        seats = np.empty((len(slots), n), dtype=np.int64)
        deals = np.empty(len(slots), dtype=np.int64)
        for row, slot in enumerate(slots.tolist()):
            rng = self.generators[slot]
            learner, drawn = draw_episode(rng, seat_choice=self.seat_choice, num_players=n, sampler=self._sampler)
            lineup = self._lineup_ids(drawn) if drawn is not None else self._fixed_lineup or []
            self.learner[slot] = learner
            seats[row] = seat_lineup(learner, lineup, n, open_seat=OPEN_SEAT)
            deals[row] = rng.integers(0, DEAL_SEED_BOUND)
        self.table.seat(slots, seats)
        if self._sampler is not None:  # hold only the players in play, however many episodes the sampler draws
            self.table.release_unseated(keep=list(self._spec_ids.values()))
        self.table.start(slots, deals)

    def reset(self, *, seed: "int | Sequence[int | None] | None" = None,
              options: dict | None = None) -> tuple[Any, dict[str, Any]]:
        """Deal every game (or those of ``options["reset_mask"]``); ``seed`` s seeds game i with s + i."""
        options = check_reset_options(options, (RESET_MASK,))
        seeds = self._seeds(seed)
        slots = self._all
        if RESET_MASK in options:
            mask = np.asarray(options[RESET_MASK])
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},)")
            slots = np.flatnonzero(mask)
        if self._generators is None:
            if len(slots) != self.num_envs:
                raise RuntimeError("the first reset() deals every game: no reset_mask")
            self._generators = [seeding.np_random(None)[0] for _ in range(self.num_envs)]
        for slot in slots:
            if seeds[slot] is not None:
                self._generators[slot] = seeding.np_random(seeds[slot])[0]
        self._streams = RowStreams(self._generators)
        self._new_games(slots)
        self.table.play_seated(self._streams)
        self._needs_reset[slots] = False
        return self._observations(), self._info()

    def _seeds(self, seed) -> list:
        if seed is None:
            return [None] * self.num_envs
        if is_int(seed):
            if int(seed) < 0:
                raise ValueError(f"seed must be an int >= 0 or None, got {seed!r}")
            return [int(seed) + i for i in range(self.num_envs)]
        if isinstance(seed, (str, bytes)) or not isinstance(seed, (Sequence, np.ndarray)):  # a set has no order
            raise ValueError(f"seed must be an int >= 0, None, or {self.num_envs} of them (ints or None), "
                             f"got {seed!r}")
        seeds = list(seed)
        if len(seeds) != self.num_envs or any(s is not None and (not is_int(s) or s < 0) for s in seeds):
            raise ValueError(f"seed must be an int >= 0, None, or {self.num_envs} of them (ints or None), "
                             f"got {seed!r}")
        return [None if s is None else int(s) for s in seeds]

    def step(self, actions) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play each game's learner action, then its opponents up to the learner's next turn; finished games
        reset as ``autoreset_mode`` says. Gymnasium's five-tuple of batches."""
        if self._streams is None:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        table = self.table
        restart = np.flatnonzero(self._needs_reset)  # NEXT_STEP: these rows' actions are ignored
        playing = np.flatnonzero(~self._needs_reset)
        ended = table.play(playing, actions[playing], who="the learner")
        ended = np.union1d(ended, table.play_seated(self._streams))
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        if len(ended):
            rewards[ended] = table.final_rewards(ended)[np.arange(len(ended)), self.learner[ended]]
            terminated[ended] = True
        finished = self._finished_info(ended)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            final_obs = self._observations_of(ended, self.learner[ended]) if len(ended) else None
            final_seats = self.learner.copy()
            if len(ended):
                self._new_games(ended)
                table.play_seated(self._streams)
            info = self._info()
            if len(ended):
                info["final_obs"] = np.full(self.num_envs, None, dtype=object)
                rows = [_row(final_obs, row) for row in range(len(ended))]
                for slot, row in zip(ended, rows):
                    info["final_obs"][slot] = row
                info["_final_obs"] = terminated.copy()
                info["final_info"] = {
                    "action_mask": np.zeros((self.num_envs, self.table.game.num_actions), dtype=np.int8),
                    "_action_mask": terminated.copy(), "seat": final_seats, "_seat": terminated.copy(),
                    **finished}
                info["_final_info"] = terminated.copy()
            return self._observations(), rewards, terminated, np.zeros(self.num_envs, dtype=bool), info
        if len(restart):
            self._new_games(restart)
            table.play_seated(self._streams)
        self._needs_reset[:] = False
        self._needs_reset[ended] = True
        observations = self._observations()  # a finished game's row: its last position
        info = self._info()
        info.update(finished)
        return observations, rewards, terminated, np.zeros(self.num_envs, dtype=bool), info

    # ------------------------------------------------------------ views

    def _observations(self) -> Any:
        """Each game's learner view now (live games: the learner is to act)."""
        vector = self.table.obs.copy()
        if self._needs_reset.any():
            over = np.flatnonzero(self._needs_reset)
            vector[over] = self.table.observe(over, self.learner[over])
        if self.dict_observation:
            return {"observation": vector, "action_mask": self.action_masks().astype(np.int8)}
        return vector

    def _observations_of(self, slots: np.ndarray, seats: np.ndarray) -> Any:
        vector = self.table.observe(slots, seats)
        if self.dict_observation:
            return {"observation": vector, "action_mask": np.zeros((len(slots), self.table.game.num_actions),
                                                                    dtype=np.int8)}
        return vector

    def action_masks(self) -> np.ndarray:
        """bool[N, A]: each game's legal actions for the learner (all False in a finished game)."""
        if self._streams is None:
            raise RuntimeError("call reset() before action_masks()")
        mask = self.table.mask.astype(bool)
        mask[self.table.over] = False
        return mask

    def _info(self) -> dict[str, Any]:
        every = np.ones(self.num_envs, dtype=bool)  # Gymnasium's "_key" masks: every game has both
        return {"action_mask": self.action_masks().astype(np.int8), "_action_mask": every,
                "seat": self.learner.copy(), "_seat": every.copy()}

    def _finished_info(self, ended: np.ndarray) -> dict[str, Any]:
        """Scores and the illegal-action flag of the finished games ``ended``, with ``_key`` masks."""
        if not len(ended):
            return {}
        rows = np.zeros(self.num_envs, dtype=bool)
        rows[ended] = True
        scores = np.zeros((self.num_envs, self.rules.num_players), dtype=np.int64)
        scores[ended] = self.table.scores(ended)
        illegal = self.table.offender >= 0
        illegal &= rows
        return {"scores": scores, "_scores": rows.copy(), "illegal_action": illegal, "_illegal_action": illegal.copy()}

    def render(self) -> "tuple | None":  # type: ignore[override]  # gymnasium's RenderFrame is its TypeVar
        """The games of ``render_games``, each from its learner's seat: a tuple of frames (``rgb_array``) or
        of texts (``ansi``), as Gymnasium's SyncVectorEnv gives; None (with a warning) without a render mode."""
        if self.render_mode is None:
            return render_as(None, None, None)  # type: ignore[arg-type]  # warns and returns None
        if self._streams is None:
            raise RuntimeError("call reset() before render()")
        game = self.table.game
        return tuple(render_as(self.render_mode, game.position(slot), int(self.learner[slot]))
                     for slot in self.render_games)

    def close_extras(self, **kwargs) -> None:
        self._streams = None


def _row(observations, row: int):
    if isinstance(observations, dict):
        return {key: value[row] for key, value in observations.items()}
    return observations[row]


def _autoreset_mode(mode) -> AutoresetMode:
    if isinstance(mode, str) and not isinstance(mode, AutoresetMode):
        names = {"same_step": AutoresetMode.SAME_STEP, "next_step": AutoresetMode.NEXT_STEP}
        names.update({m.value: m for m in AUTORESET_MODES})
        check_choice("autoreset_mode", mode, list(names))
        return names[mode]
    check_choice("autoreset_mode", mode, AUTORESET_MODES)
    return mode


def _render_games(games, num_envs: int) -> list[int]:
    """`RoubaVectorEnv`'s ``render_games`` as a list of game indices, checked."""
    if games is None:
        return list(range(num_envs))
    if is_int(games):
        return list(range(check_int("render_games", games, 1, num_envs)))
    if isinstance(games, (str, bytes)) or not isinstance(games, (Sequence, np.ndarray)):
        raise ValueError(f"render_games must be None, a count or a list of game indices, got {games!r}")
    chosen = list(games)
    if not chosen or any(not is_int(g) or not 0 <= g < num_envs for g in chosen) or len(set(chosen)) < len(chosen):
        raise ValueError(f"render_games must list distinct game indices in 0..{num_envs - 1}, got {games!r}")
    return [int(g) for g in chosen]


def make_vector_env(num_envs: int = 1, **env_kwargs) -> RoubaVectorEnv:
    """``gymnasium.make_vec("RoubaMonte-v0", num_envs=N, ...)``: a `RoubaVectorEnv` (the id's vector entry point)."""
    env_kwargs.pop("max_episode_steps", None)  # games always end; gymnasium passes the spec's value (None)
    return RoubaVectorEnv(num_envs, **env_kwargs)


__all__ = ["AUTORESET_MODES", "VECTOR_RENDER_MODES", "RoubaVectorEnv", "make_vector_env"]
