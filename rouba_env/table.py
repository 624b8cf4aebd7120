"""The table: one game on the compiled rules core, its seats, and what happens to every action, written once.

Every front end that plays a game holds a `Table`: the PettingZoo AEC and
Gymnasium environments, the RLlib environment, the duplicate-deal evaluator,
terminal play and browser play. A seat is filled by a `Policy` (a player
that the table asks for its moves) or left open (``None``) for an outside
caller: the learner of an environment, a person at the terminal or in the
browser. `Table.play_seated` lets the seated players move until an open seat
must act or the game is over; `Table.play` plays an outside caller's move.

The game is slot 0 of a one-slot `rouba_env.batched.game.VectorGame`: the
rules core plays the move, passes the turn and writes the next observation
and legal-action mask in one compiled call, the same code that steps
thousands of games. Legality is checked here and only here:

* a seated player that returns anything but a legal action index is a bug in
  that player: `IllegalPlayerAction` (a ValueError) names it, its seat and the
  legal actions, and nothing is played;
* an outside caller's illegal, out-of-range or non-integer action follows the
  table's ``illegal_action`` rule: ``"terminate"`` (the default, PettingZoo
  classic's convention) ends the game at once, the offender gets
  ``illegal_reward`` and every other seat 0, and a warning names the action
  and the legal ones; ``"raise"`` raises a ValueError naming them and changes
  nothing.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from rouba_env.checks import check_choice, check_number, is_int
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.rules import engine, scoring
from rouba_env.rules.scoring import ENVIRONMENT_REWARD
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import JOKER_KIND_OFFSET
from rouba_env.rules.seeding import DEAL_SEED_BOUND
from rouba_env.batched.game import VectorGame
from rouba_env.batched.kernels import NOT_PLAYED

if TYPE_CHECKING:  # the Policy protocol is the players' floor; the table only calls ``act``
    from rouba_env.players.base import Policy

ILLEGAL_ACTION_MODES = ("terminate", "raise")
"""What an illegal action does: end the game with a penalty, or raise a ValueError."""
DEFAULT_ILLEGAL_REWARD = -1.0
ONE_SLOT = np.zeros(1, dtype=np.int64)
"""The slots of a table's one-slot game (and seat 0 of it, where a seat array is asked for)."""


RULES_A_PLAYER_MAY_DIFFER_IN = ("dealer",)
"""Rules fields a player made for one table may differ in from the table that seats it: who deals."""


def check_player_rules(player, rules: RulesConfig) -> None:
    """ValueError naming the fields in which a player object's own rules differ from the table's.

    A player made for other rules (a deck count, the jokers, the table size) would read the table's
    positions by those rules and play them wrongly; a spec string is made for the table's rules, so only
    ready objects can differ. A player without a ``rules`` attribute is not checked.
    """
    own = getattr(player, "rules", None)
    if not isinstance(own, RulesConfig) or own == rules:
        return
    differ = [name for name in rules.to_dict() if name not in RULES_A_PLAYER_MAY_DIFFER_IN
              and getattr(own, name) != getattr(rules, name)]
    if differ:
        name = getattr(player, "name", type(player).__name__)
        raise ValueError(f"player {name!r} was made for other rules than this table's: "
                         f"{ {field: getattr(own, field) for field in differ} } against "
                         f"{ {field: getattr(rules, field) for field in differ} }; make it for the table's rules "
                         f"(make_policy(spec, rules))")


class IllegalActionWarning(UserWarning):
    """An illegal action ended a game (``illegal_action="terminate"``)."""


class IllegalPlayerAction(ValueError):
    """A seated player returned an action that is not legal: a bug in that player, never a game event."""


def out_of_range(num_actions: int) -> str:
    return f"out of range 0..{num_actions - 1}"


NOT_LEGAL_NOW = "not a legal move now"


def illegal_action_message(action, who: str, reason: str, legal: Sequence[int]) -> str:
    """The words of an outside caller's illegal action, the same at every table."""
    return f"illegal action {action!r} for {who} ({reason}); legal actions: {list(legal)}"


ENDS_THE_GAME = "; the game ends and the offender gets illegal_reward"
"""Added to the warning when an illegal action ends a game (``illegal_action="terminate"``)."""


def illegal_player_message(player, seat: int, action, legal: Sequence[int]) -> str:
    """The words of a seated player's illegal action (`IllegalPlayerAction`), the same at every table."""
    return (f"player {player!r} in seat {seat} returned action {action!r}, which is not legal; "
            f"legal actions: {list(legal)}")


def not_started(what: str) -> RuntimeError:
    """The error of a table asked for something before its first game was dealt."""
    return RuntimeError(f"call reset() before {what}")


MoveHook = Callable[[int, int], None]
"""``hook(seat, action)``: told of a move just before (``before_move``) or just after (``after_move``) it is played."""


class Table:
    """One game with its seats: players, open seats and the illegal-action rule.

    The game is a one-slot `rouba_env.batched.game.VectorGame` that keeps every card's code: the same
    compiled rules as a batch of thousands, and `state` names the cards for views.

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
        scoring.check_reward_mode(reward)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.rules = rules
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.illegal_reward = check_number("illegal_reward", illegal_reward)
        self.actions = ActionEncoding(rules, max_players)
        self.encoder = ObservationEncoder(rules, max_players)
        self.seats: list = [None] * rules.num_players
        """The player at each seat (None: open, played by an outside caller)."""
        if seats is not None:
            self.seat(seats)
        self.before_move = before_move
        self.after_move = after_move
        self.game = VectorGame(rules, 1, max_players=max_players, auto_reset=False, reward=reward, track_cards=True)
        """The game, as slot 0 of a one-slot batched game."""
        self._bind_game()
        self._started = False
        self._position: engine.GameState | None = None
        self._position_turn = -1
        self.offender: int | None = None
        """Seat whose illegal action ended the game, if one did."""

    def _bind_game(self) -> None:
        """The game's buffers and its one-slot move, looked up once (every move uses them)."""
        self._obs, self._mask, self._current = self.game.obs[0], self.game.mask[0], self.game.current
        self._play_move = self.game.slot_player(0)
        self._deal_game = self.game.slot_dealer(0)

    def __getstate__(self) -> dict:
        """Pickled without the bound views and move (copies would lose the game); `__setstate__` binds them."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("_obs", "_mask", "_current", "_play_move", "_deal_game")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_game()

    def seat(self, seats: "Sequence[Policy | None]") -> None:
        """Put a `Policy` (or None: open) at every seat, in seat order."""
        seats = list(seats)
        if len(seats) != self.rules.num_players:
            raise ValueError(f"a {self.rules.num_players}-player table needs {self.rules.num_players} seats "
                             f"(a Policy or None each), got {len(seats)}")
        for player in seats:
            if player is not None:
                check_player_rules(player, self.rules)
        self.seats = seats

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
        if not isinstance(deal_seed, (int, np.integer)) or not 0 <= int(deal_seed) < DEAL_SEED_BOUND:
            raise ValueError(f"deal_seed must be an int in [0, 2**63), got {deal_seed!r}")
        self._deal_game(int(deal_seed))
        self._started = True
        self._position_turn = -1
        self.offender = None

    @property
    def over(self) -> bool:
        return self._started and (self.offender is not None or int(self._current[0]) < 0)

    @property
    def current(self) -> int:
        """Seat to act, or `engine.NO_SEAT` once the game is over."""
        if not self._started:
            raise not_started("reading the seat to act")
        return engine.NO_SEAT if self.offender is not None else int(self._current[0])

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
        if seat != self._current[0] or self.offender is not None:  # not its turn, or the game is over
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
        if type(seat) is int and self._started and self.offender is None and seat == self._current[0]:
            return self._obs.copy(), self._mask.copy()
        return self.observation(seat), self.mask(seat)

    def full_state(self) -> np.ndarray:
        """Seat 0's observation, then what it cannot see (every hand and the deck per rank slot): the
        centralized critic's input (`ObservationEncoder.full_state`)."""
        if not self._started:
            raise not_started("state()")
        return np.concatenate([self.observation(0), self.game.hidden(ONE_SLOT, ONE_SLOT)[0]])

    def play(self, action, who: str) -> bool:
        """Play an outside caller's ``action`` for the seat to act; True if it was played.

        An illegal, out-of-range or non-integer action raises a ValueError
        (``"raise"``) or ends the game with ``offender`` set and returns False
        (``"terminate"``). ``who`` names the actor in messages.
        """
        if not self._started:
            raise not_started("step()")
        if type(action) is int and self.offender is None and self.before_move is None and self.after_move is None:
            if self._play_move(action) != NOT_PLAYED:  # the rules core checked it against the mask and played it
                return True
        return self._play_checked(action, who)

    def move(self, action, who: str) -> int:
        """`play`, answering the seat to act next: `engine.NO_SEAT` once the game is over, by its end or by
        an illegal action (``offender`` then names the seat). An environment's step, in one call."""
        if not self._started:
            raise not_started("step()")
        if type(action) is int and self.offender is None and self.before_move is None and self.after_move is None:
            seat = self._play_move(action)  # the rules core checks it against the mask and plays it
            if seat != NOT_PLAYED:
                return seat
        self._play_checked(action, who)
        return self.current

    def _play_checked(self, action, who: str) -> bool:
        """`play` for an action the fast path did not play: check it, refuse it as the table's rule says,
        or play it with the hooks. A warning points at the caller of the environment's step (of the raw
        env's, under a wrapper)."""
        index, reason = self._legal_index(action)
        if index < 0:
            message = illegal_action_message(action, who, reason, np.flatnonzero(self._mask).tolist())
            if self.illegal_action == "raise":
                raise ValueError(message)
            warnings.warn(message + ENDS_THE_GAME, IllegalActionWarning, stacklevel=4)
            self.offender = int(self._current[0])
            return False
        self._play(int(self._current[0]), index)
        return True

    def _play(self, seat: int, action: int) -> None:
        """Play a legal action, telling the hooks before and after."""
        if self.before_move is not None:
            self.before_move(seat, action)
        self._play_move(action)
        if self.after_move is not None:
            self.after_move(seat, action)

    def play_seated(self, rng: np.random.Generator, clock: tuple[list[int], list[float]] | None = None) -> None:
        """Let the seated players move until an open seat must act or the game is over.

        Each player sees only its seat's observation and mask, with ``rng``.
        A player that returns anything but a legal action index raises
        `IllegalPlayerAction` (nothing is played). ``clock`` (two per-seat
        lists) counts each seat's decisions and adds up the seconds its player took.
        """
        if not self._started:
            raise not_started("playing")
        while not self.over:
            seat = int(self._current[0])
            player = self.seats[seat]
            if player is None:
                return
            mask = self._mask.copy()
            started = time.perf_counter()
            action = player.act(self._obs.copy(), mask, rng)
            if clock is not None:
                clock[0][seat] += 1
                clock[1][seat] += time.perf_counter() - started
            if type(action) is int and self.before_move is None and self.after_move is None:
                if self._play_move(action) != NOT_PLAYED:  # checked against the mask and played by the core
                    continue
            index, _ = self._legal_index(action)  # the one legality check, as for an outside caller's move
            if index < 0:
                raise IllegalPlayerAction(illegal_player_message(player, seat, action, np.flatnonzero(mask).tolist()))
            self._play(seat, index)

    def _legal_index(self, action) -> tuple[int, str]:
        """(the action as an int, "") if ``action`` is a legal action index now, else (-1, why not)."""
        if type(action) is not int:  # the common case first; bools, floats and strings are refused
            if not is_int(action):
                if not (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"):
                    return -1, "not an integer action index"
            action = int(action)
        if not 0 <= action < self.actions.size:
            return -1, out_of_range(self.actions.size)
        if self.offender is not None or not self._mask[action]:
            try:
                what = self.actions.describe(self.require_started("describing a move"), action)
            except ValueError:  # a pile target of a padded, absent seat
                what = "a move onto an absent seat's pile"
            if self.actions.move_of(action).kind >= JOKER_KIND_OFFSET and not self.rules.jokers:
                return -1, f"{what}: these rules have no jokers (jokers=False), so no joker move is ever legal"
            return -1, f"{what}: {NOT_LEGAL_NOW}"
        return action, ""

    def final_rewards(self) -> list[float]:
        """Each seat's reward once the game is over (the illegal-action penalty when one ended it)."""
        if self.offender is not None:
            return [self.illegal_reward if seat == self.offender else 0.0 for seat in range(self.rules.num_players)]
        return scoring.final_rewards(self.reward_mode, self.scores(), self.rules.total_cards)

    def scores(self) -> list[int]:
        """Cards in each seat's pile now (the final scores once the game is over)."""
        if not self._started:
            raise not_started("reading scores")
        return self.game.scores()[0].tolist()
