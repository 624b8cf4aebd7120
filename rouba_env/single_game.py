"""One game with its seats: the one-game view of a one-game `rouba_env.table.Table`.

The PettingZoo AEC and Gymnasium environments, RLlib, the browser and terminal play hold a `SingleGame`: an
outside caller's legal integer action is played, and the next position shown, in one compiled call (the
engine's `VectorGame.slot_player`); everything else (seating, seated players, illegal actions and their
words, rewards) is its table's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from rouba_env.batched.kernels import NOT_PLAYED
from rouba_env.checks import is_int
from rouba_env.rules import engine, scoring
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import NO_SEAT
from rouba_env.rules.scoring import ENVIRONMENT_REWARD
from rouba_env.rules.seeding import DEAL_SEED_BOUND
from rouba_env.table import (
    DEFAULT_ILLEGAL_REWARD, OPEN_SEAT, BatchMoveHook, Table, not_started, penalized,
)

if TYPE_CHECKING:
    from rouba_env.players.base import Policy

MoveHook = Callable[[int, int], None]
"""``hook(seat, action)``: a move just before (``before_move``) or just after (``after_move``) it is played."""

ONE_GAME = np.zeros(1, dtype=np.int64)
INT64_LOW, INT64_HIGH = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
"""The actions the compiled fast path takes: a Python int within the kernel's int64."""
"""The games of a one-game table (and seat 0 of it, where a seat array is asked for)."""


class SingleGame:
    """One game with its seats: the one-game view of a one-game `Table` (``table``).

    The game keeps every card's code, so `state` names the cards for views. An outside caller's legal
    integer action is played in one compiled call (the engine's `VectorGame.slot_player`); anything else
    goes to the table.

    Args:
        rules: the rules config.
        max_players: padding of the observation and action spaces.
        reward: ``"outcome"``, ``"margin"`` or ``"lead"`` (see `rouba_env.rules.scoring`).
        illegal_action: one of `ILLEGAL_ACTION_MODES`, for outside callers' moves.
        illegal_reward: the offender's reward when an illegal action ends the game.
        seats: a `Policy` or None (an open seat, played by an outside caller) per seat;
            default: every seat open.
        before_move: told of every legal move, by a seated player or an outside caller, just
            before it is played (logs, replays; it changes nothing).
        after_move: told of every legal move just after it is played.
    """

    def __init__(self, rules: RulesConfig, max_players: int | None = None, *, reward: str = ENVIRONMENT_REWARD,
                 illegal_action: str = "terminate", illegal_reward: float = DEFAULT_ILLEGAL_REWARD,
                 seats: "Sequence[Policy | None] | None" = None, before_move: MoveHook | None = None,
                 after_move: MoveHook | None = None):
        self.table = Table(rules, 1, max_players=max_players, reward=reward, illegal_action=illegal_action,
                           illegal_reward=illegal_reward, track_cards=True)
        self.rules, self.game = rules, self.table.game
        self.actions, self.encoder = self.table.actions, self.table.encoder
        self._before_move: MoveHook | None = None
        self._after_move: MoveHook | None = None
        self._started = False
        self._fast = False
        """An outside caller's int action may take the compiled one-move path: a game is dealt and no illegal
        action ended it, and no hook (nor a history the table keeps for a player that reads it) listens. Kept
        as a plain bool (read every move, cheaper than the offender array), updated wherever one of them
        changes."""
        self.before_move, self.after_move = before_move, after_move
        if seats is not None:
            self.seat(seats)
        self._position: engine.GameState | None = None
        self._position_turn = -1
        self._bind_game()

    def _bind_game(self) -> None:
        """The game's buffers and its one-game move, looked up once (every move uses them)."""
        self._obs, self._mask, self._current = self.game.obs[0], self.game.mask[0], self.game.current
        self._offender = self.table.offender
        self._play_move = self.game.slot_player(0)
        self._deal_game = self.game.slot_dealer(0)

    def __getstate__(self) -> dict:
        """Pickled without the bound views and move (copies would lose the game); `__setstate__` binds them."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("_obs", "_mask", "_current", "_offender", "_play_move", "_deal_game")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_game()

    # ------------------------------------------------------------ the table's settings, read through

    @property
    def reward_mode(self) -> str:
        return self.table.reward_mode

    @property
    def illegal_action(self) -> str:
        return self.table.illegal_action

    @property
    def illegal_reward(self) -> float:
        return self.table.illegal_reward

    @property
    def before_move(self) -> MoveHook | None:
        return self._before_move

    @before_move.setter
    def before_move(self, hook: MoveHook | None) -> None:
        self._before_move = hook
        self.table.before_move = None if hook is None else _one_move(hook)
        self._update_fast_path()

    @property
    def after_move(self) -> MoveHook | None:
        return self._after_move

    @after_move.setter
    def after_move(self, hook: MoveHook | None) -> None:
        self._after_move = hook
        self.table.after_move = None if hook is None else _one_move(hook)
        self._update_fast_path()

    def _update_fast_path(self) -> None:
        self._fast = (self._started and self._offender[0] < 0 and self._before_move is None
                      and self._after_move is None and self.table.history is None)

    # ------------------------------------------------------------ seating and dealing

    @property
    def seats(self) -> list:
        """The player at each seat (None: open, played by an outside caller)."""
        return [None if player_id < 0 else self.table.players[player_id] for player_id in self.table.seats[0].tolist()]

    def seat(self, seats: "Sequence[Policy | None]") -> None:
        """Put a `Policy` (or None: open) at every seat, in seat order."""
        seats = list(seats)
        if len(seats) != self.rules.num_players:
            raise ValueError(f"a {self.rules.num_players}-player table needs {self.rules.num_players} seats "
                             f"(a Policy or None each), got {len(seats)}")
        ids = [OPEN_SEAT if player is None else self.table.add_player(player) for player in seats]
        self.table.seat(ONE_GAME, [ids])
        self.table.release_unseated()
        self._update_fast_path()

    @property
    def started(self) -> bool:
        return self._started

    @property
    def state(self) -> engine.GameState | None:
        """The game as a `GameState` naming every card (None before the first deal): a copy for views."""
        if not self._started:
            return None
        turn = int(self.game.turns[0])
        if self._position_turn != turn:
            self._position = self.game.position(0)
            self._position_turn = turn
        return self._position

    def require_started(self, what: str) -> engine.GameState:
        """`state`, or the error of a table asked for ``what`` before its first deal."""
        state = self.state
        if state is None:
            raise not_started(what)
        return state

    def start(self, rng: np.random.Generator) -> None:
        """Deal a new game from a deal seed drawn from ``rng`` (as `engine.new_game` draws it)."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        self.start_deal(int(rng.integers(0, DEAL_SEED_BOUND)))

    def start_deal(self, deal_seed: int) -> None:
        """Deal the game of one deal seed (`engine.start_game`: the same cards for every seating)."""
        if not is_int(deal_seed) or not 0 <= int(deal_seed) < DEAL_SEED_BOUND:
            raise ValueError(f"deal_seed must be an int in [0, 2**63), got {deal_seed!r}")
        self._deal_game(int(deal_seed))
        self.table.mark_dealt(ONE_GAME)
        self._started = True
        self._position_turn = -1
        self._update_fast_path()

    # ------------------------------------------------------------ state

    @property
    def offender(self) -> int | None:
        """Seat whose illegal action ended the game, if one did."""
        seat = int(self._offender[0])
        return None if seat < 0 else seat

    @property
    def over(self) -> bool:
        return self._started and (self._offender[0] >= 0 or int(self._current[0]) < 0)

    @property
    def current(self) -> int:
        """Seat to act, or `engine.NO_SEAT` once the game is over."""
        if not self._started:
            raise not_started("reading the seat to act")
        return NO_SEAT if self._offender[0] >= 0 else int(self._current[0])

    def legal_actions(self) -> list[int]:
        """Legal action indices of the seat to act (empty once the game is over)."""
        if not self._started:
            raise not_started("reading the legal moves")
        if self.over:
            return []
        return np.flatnonzero(self._mask).tolist()

    def mask(self, seat: int) -> np.ndarray:
        """int8 mask of ``seat``'s legal actions (all zero when it is not that seat's turn or the game is over)."""
        if not self._started:
            raise not_started("reading a mask")
        if seat != self._current[0] or self._offender[0] >= 0:  # not its turn, or the game is over
            n = self.rules.num_players
            if not is_int(seat) or not 0 <= seat < n:
                raise ValueError(f"seat {seat!r} out of range 0..{n - 1}")
            return np.zeros(self.actions.size, dtype=np.int8)
        return self._mask.copy()  # the caller may keep or change it

    def observation(self, seat: int) -> np.ndarray:
        """``seat``'s observation vector (see `rouba_env.encoding.observation`)."""
        if not self._started:
            raise not_started("observing")
        current = self._current[0]
        if seat == current or (current < 0 and seat == 0):  # the view the last move wrote
            if type(seat) is int or is_int(seat):
                return self._obs.copy()
        n = self.rules.num_players
        if not is_int(seat) or not 0 <= seat < n:
            raise ValueError(f"seat {seat!r} out of range 0..{n - 1}")
        return self.game.observe_one(0, int(seat))

    def view(self, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """(`observation`, `mask`) of ``seat``: what an environment hands the seat, in one call."""
        if type(seat) is int and self._fast and seat == self._current[0]:
            return self._obs.copy(), self._mask.copy()
        return self.observation(seat), self.mask(seat)

    def full_state(self) -> np.ndarray:
        """Seat 0's observation, then what it cannot see (every hand and the deck per rank slot): the
        centralized critic's input (`ObservationEncoder.full_state`)."""
        if not self._started:
            raise not_started("state()")
        return np.concatenate([self.observation(0), self.game.hidden(ONE_GAME, ONE_GAME)[0]])

    # ------------------------------------------------------------ playing

    def play(self, action, who: str) -> bool:
        """Play an outside caller's ``action`` for the seat to act; True if it was played.

        An illegal, out-of-range or non-integer action raises a ValueError (``"raise"``) or ends the
        game with ``offender`` set and returns False (``"terminate"``). ``who`` names the actor in
        messages; a warning points at the caller of the environment's step (of the raw env's, under a
        wrapper).
        """
        self.move(action, who, stacklevel=4)
        return bool(self._offender[0] < 0)

    def move(self, action, who: str, *, stacklevel: int = 3) -> int:
        """`play`, answering the seat to act next: `engine.NO_SEAT` once the game is over, by its end or by
        an illegal action (``offender`` then names the seat). An environment's step, in one call.
        ``stacklevel``: the frame a warning points at, counted as `Table.play` counts it."""
        if not self._started:
            raise not_started("step()")
        if type(action) is int and self._fast and INT64_LOW <= action <= INT64_HIGH:
            # the rules core checks it against the mask and plays it; an int wider than the kernel's int64
            # never reaches compiled code (whose answer would depend on what numba's cache holds), but the
            # table's illegal-action path, as every other odd action does
            seat = self._play_move(action)
            if seat != NOT_PLAYED:
                return seat
        self.table.play(ONE_GAME, _one_action(action), who, stacklevel=stacklevel)
        self._update_fast_path()
        return self.current

    def play_seated(self, rng: np.random.Generator) -> None:
        """Let the seated players move until an open seat must act or the game is over (`Table.play_seated`).

        Each player sees only its seat's observation and mask, with ``rng``. A player that returns
        anything but a legal action index raises `IllegalPlayerAction` (nothing is played).
        """
        if not self._started:
            raise not_started("playing")
        self.table.play_seated(rng)

    def final_rewards(self) -> list[float]:
        """Each seat's reward once the game is over (the illegal-action penalty when one ended it)."""
        rewards = scoring.final_rewards(self.reward_mode, self.scores(), self.rules.total_cards)
        if self._offender[0] < 0:
            return rewards
        return penalized(np.array([rewards]), self._offender, self.illegal_reward)[0].tolist()

    def seconds_thinking(self) -> list[float]:
        """Each seat's seconds spent so far by its seated player choosing its moves (0 for an open seat): what a
        front end shows as an opponent's think time, the difference across one of its moves."""
        return self.table.seconds[0].tolist()

    def scores(self) -> list[int]:
        """Cards in each seat's pile now (the final scores once the game is over)."""
        if not self._started:
            raise not_started("reading scores")
        return self.game.arrays.pile[0].tolist()  # the one game's row (`VectorGame.scores` copies every row)


def _one_move(hook: MoveHook) -> BatchMoveHook:
    """A one-game hook ``hook(seat, action)`` as the table's round hook (a one-game round is one move)."""
    def told(games: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> None:
        hook(int(seats[0]), int(actions[0]))
    return told


def _one_action(action) -> np.ndarray:
    """A caller's one action, whatever it is (a list, a string, None), as a one-entry array for `Table.play`."""
    one = np.empty(1, dtype=object)
    one[0] = action
    return one
