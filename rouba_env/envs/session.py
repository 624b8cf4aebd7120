"""One game as the environments see it: option checks, in-place stepping and illegal actions, written once.

Both environments (`rouba_env.envs.aec` and `rouba_env.envs.single_agent`)
hold a `GameSession`. It keeps the reference `GameState` and plays moves in
place (`engine.play_move`, the same rules code as the pure
`engine.apply_move`), computes the legal actions once per turn (they serve
the mask and the legality check), and applies the illegal-action rule:

* ``"terminate"`` (the default, PettingZoo classic's convention): the game
  ends at once, the offender gets ``illegal_reward`` and every other seat 0,
  and a warning names the action and the legal ones. Out-of-range and
  non-integer actions count as illegal too.
* ``"raise"``: a ValueError names the action and the legal ones; nothing changes.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.rules import engine, scoring
from rouba_env.rules.config import RulesConfig

ILLEGAL_ACTION_MODES = ("terminate", "raise")
"""What an illegal action does: end the game with a penalty, or raise a ValueError."""
DEFAULT_ILLEGAL_REWARD = -1.0


class IllegalActionWarning(UserWarning):
    """An illegal action ended a game (``illegal_action="terminate"``)."""


def check_choice(name: str, value, choices) -> None:
    """ValueError naming the option and its allowed values unless ``value`` is one of ``choices``."""
    if not any(value is choice or (isinstance(value, str) and value == choice) for choice in choices):
        raise ValueError(f"unknown {name} {value!r}; choose one of {tuple(choices)}")


def check_finite(name: str, value) -> float:
    """``value`` as a float; ValueError unless it is a finite real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def as_seed(seed) -> int | None:
    """A reset seed: None or an int >= 0; anything else (a Generator, a float) is a ValueError."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
    return int(seed)


class GameSession:
    """The current game of an environment, stepped in place, with per-turn caches.

    Args:
        rules: the rules config.
        max_players: padding of the observation and action spaces.
        reward: ``"outcome"``, ``"margin"`` or ``"lead"`` (see `rouba_env.rules.scoring`).
        illegal_action: one of `ILLEGAL_ACTION_MODES`.
        illegal_reward: the offender's reward when an illegal action ends the game.
    """

    def __init__(self, rules: RulesConfig, max_players: int | None, reward: str, illegal_action: str,
                 illegal_reward: float):
        scoring.check_reward_mode(reward)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.rules = rules
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.illegal_reward = check_finite("illegal_reward", illegal_reward)
        self.actions = ActionEncoding(rules, max_players)
        self.encoder = ObservationEncoder(rules, max_players)
        self.state: engine.GameState | None = None
        self.offender: int | None = None
        """Seat whose illegal action ended the game, if one did."""
        self._legal_turn = -1
        self._legal: list[engine.Move] = []
        self._mask = np.zeros(self.actions.size, dtype=np.int8)

    @property
    def started(self) -> bool:
        return self.state is not None

    def require_started(self, what: str) -> engine.GameState:
        if self.state is None:
            raise RuntimeError(f"call reset() before {what}")
        return self.state

    def start(self, rng: np.random.Generator) -> None:
        """Deal a new game from ``rng``."""
        self.state = engine.new_game(self.rules, rng)
        self.offender = None
        self._legal_turn = -1

    @property
    def over(self) -> bool:
        return self.state is not None and (self.offender is not None or engine.is_terminal(self.state))

    @property
    def current(self) -> int:
        """Seat to act, or `engine.NO_SEAT` once the game is over."""
        return engine.NO_SEAT if self.over else self.state.current

    def _refresh_legal(self) -> None:
        state = self.state
        if self._legal_turn != state.turn:
            self._legal = engine.legal_moves(state)
            targets = self.actions.num_targets
            mask = bytearray(self.actions.size)  # cheaper than numpy stores for a handful of entries
            for kind, target in self._legal:
                mask[kind * targets + target] = 1
            self._mask = np.frombuffer(mask, dtype=np.int8)
            self._legal_turn = state.turn

    def legal_actions(self) -> list[int]:
        """Legal action indices of the seat to act (empty once the game is over)."""
        if self.over:
            return []
        self._refresh_legal()
        return np.flatnonzero(self._mask).tolist()

    def mask(self, seat: int) -> np.ndarray:
        """int8 mask of ``seat``'s legal actions (all zero when it is not that seat's turn or the game is over)."""
        state = self.state
        if state is None:
            self.require_started("reading a mask")
        if seat != state.current or self.offender is not None:  # not its turn, or the game is over
            return np.zeros(self.actions.size, dtype=np.int8)
        if self._legal_turn != state.turn:
            self._refresh_legal()
        return self._mask.copy()  # the caller may keep or change it

    def observation(self, seat: int) -> np.ndarray:
        """``seat``'s observation vector (see `rouba_env.encoding.observation`)."""
        if self.state is None:
            self.require_started("observing")
        return self.encoder.encode(self.state, seat)

    def play(self, action, who: str) -> bool:
        """Play ``action`` for the seat to act; True if it was played.

        An illegal, out-of-range or non-integer action raises a ValueError
        (``"raise"``) or ends the game with ``offender`` set and returns False
        (``"terminate"``). ``who`` names the actor in messages.
        """
        state = self.state
        if state is None:
            self.require_started("step()")
        if self._legal_turn != state.turn:
            self._refresh_legal()
        move, reason = self._legal_move(action)
        if move is None:
            message = (f"illegal action {action!r} for {who} ({reason}); legal actions: "
                       f"{np.flatnonzero(self._mask).tolist()}")
            if self.illegal_action == "raise":
                raise ValueError(message)
            warnings.warn(message + "; the game ends and the offender gets illegal_reward", IllegalActionWarning,
                          stacklevel=3)
            self.offender = state.current
            return False
        engine.play_move(state, move)
        return True

    def _legal_move(self, action) -> tuple[engine.Move | None, str]:
        """(the move, "") if ``action`` is a legal action index now, else (None, why not)."""
        if type(action) is not int:  # the common case first; bools, floats and strings are refused
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
                if not (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"):
                    return None, "not an integer action index"
            action = int(action)
        if not 0 <= action < self.actions.size:
            return None, f"out of range 0..{self.actions.size - 1}"
        if not self._mask[action]:
            try:
                what = self.actions.describe(self.state, action)
            except ValueError:  # a pile target of a padded, absent seat
                what = "a move onto an absent seat's pile"
            return None, f"{what}: not a legal move now"
        kind, target = divmod(action, self.actions.num_targets)
        return engine.MOVES[kind][target], ""

    def final_rewards(self) -> list[float]:
        """Each seat's reward once the game is over (the illegal-action penalty when one ended it)."""
        if self.offender is not None:
            return [self.illegal_reward if seat == self.offender else 0.0 for seat in range(self.rules.num_players)]
        return scoring.final_rewards(self.reward_mode, scoring.scores(self.state), self.rules.total_cards)

    def scores(self) -> list[int]:
        return scoring.scores(self.require_started("reading scores"))
