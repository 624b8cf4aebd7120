"""The table: one game on the reference engine, its seats, and what happens to every action, written once.

Every front end that plays a game holds a `Table`: the PettingZoo AEC and
Gymnasium environments, the RLlib environment, the duplicate-deal evaluator,
terminal play and browser play. A seat is filled by a `Policy` (a player
that the table asks for its moves) or left open (``None``) for an outside
caller: the learner of an environment, a person at the terminal or in the
browser. `Table.play_seated` lets the seated players move until an open seat
must act or the game is over; `Table.play` plays an outside caller's move.

Moves are played in place (`engine.play_move`, the same rules code as the
pure `engine.apply_move`); the legal actions are computed once per turn (they
serve the mask and the legality check). Legality is checked here and only here:

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

if TYPE_CHECKING:  # the Policy protocol is the players' floor; the table only calls ``act``
    from rouba_env.players.base import Policy

ILLEGAL_ACTION_MODES = ("terminate", "raise")
"""What an illegal action does: end the game with a penalty, or raise a ValueError."""
DEFAULT_ILLEGAL_REWARD = -1.0


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
    """One game on the reference engine with its seats: players, open seats and the illegal-action rule.

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

    def __init__(self, rules: RulesConfig, max_players: int | None = None, reward: str = ENVIRONMENT_REWARD,
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
        self.state: engine.GameState | None = None
        self.offender: int | None = None
        """Seat whose illegal action ended the game, if one did."""
        self._legal_turn = -1
        self._legal: list[engine.Move] = []
        self._mask = np.zeros(self.actions.size, dtype=np.int8)

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
        return self.state is not None

    def require_started(self, what: str) -> engine.GameState:
        if self.state is None:
            raise not_started(what)
        return self.state

    def start(self, rng: np.random.Generator) -> None:
        """Deal a new game from ``rng``."""
        self._begin(engine.new_game(self.rules, rng))

    def start_deal(self, deal_seed: int) -> None:
        """Deal the game of one deal seed (`engine.start_game`: the same cards for every seating)."""
        self._begin(engine.start_game(self.rules, deal_seed))

    def _begin(self, state: engine.GameState) -> None:
        self.state = state
        self.offender = None
        self._legal_turn = -1

    @property
    def over(self) -> bool:
        return self.state is not None and (self.offender is not None or engine.is_terminal(self.state))

    @property
    def current(self) -> int:
        """Seat to act, or `engine.NO_SEAT` once the game is over."""
        return engine.NO_SEAT if self.over else self.require_started("reading the seat to act").current

    def _refresh_legal(self) -> None:
        state = self.require_started("reading the legal moves")
        if self._legal_turn != state.turn:
            self._legal = engine.legal_moves(state)
            self._mask = self.actions.mask_of(self._legal)
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
            raise not_started("reading a mask")
        if seat != state.current or self.offender is not None:  # not its turn, or the game is over
            return np.zeros(self.actions.size, dtype=np.int8)
        if self._legal_turn != state.turn:
            self._refresh_legal()
        return self._mask.copy()  # the caller may keep or change it

    def observation(self, seat: int) -> np.ndarray:
        """``seat``'s observation vector (see `rouba_env.encoding.observation`)."""
        state = self.state
        if state is None:
            raise not_started("observing")
        return self.encoder.encode(state, seat)

    def play(self, action, who: str) -> bool:
        """Play an outside caller's ``action`` for the seat to act; True if it was played.

        An illegal, out-of-range or non-integer action raises a ValueError
        (``"raise"``) or ends the game with ``offender`` set and returns False
        (``"terminate"``). ``who`` names the actor in messages.
        """
        state = self.state
        if state is None:
            raise not_started("step()")
        if self._legal_turn != state.turn:
            self._refresh_legal()
        move, reason = self._legal_move(action)
        if move is None:
            message = illegal_action_message(action, who, reason, np.flatnonzero(self._mask).tolist())
            if self.illegal_action == "raise":
                raise ValueError(message)
            warnings.warn(message + ENDS_THE_GAME, IllegalActionWarning, stacklevel=3)
            self.offender = state.current
            return False
        self._play(state.current, int(action), move)
        return True

    def _play(self, seat: int, action: int, move: engine.Move) -> None:
        if self.before_move is not None:
            self.before_move(seat, action)
        engine.play_move(self.require_started("playing"), move)
        if self.after_move is not None:
            self.after_move(seat, action)

    def play_seated(self, rng: np.random.Generator, clock: tuple[list[int], list[float]] | None = None) -> None:
        """Let the seated players move until an open seat must act or the game is over.

        Each player sees only its seat's observation and mask, with ``rng``.
        A player that returns anything but a legal action index raises
        `IllegalPlayerAction` (nothing is played). ``clock`` (two per-seat
        lists) counts each seat's decisions and adds up the seconds its player took.
        """
        state = self.require_started("playing")
        while not self.over:
            seat = state.current
            player = self.seats[seat]
            if player is None:
                return
            mask = self.mask(seat)
            started = time.perf_counter()
            action = player.act(self.encoder.encode(state, seat), mask, rng)
            if clock is not None:
                clock[0][seat] += 1
                clock[1][seat] += time.perf_counter() - started
            move, _ = self._legal_move(action)  # the one legality check, as for an outside caller's move
            if move is None:
                raise IllegalPlayerAction(illegal_player_message(player, seat, action, np.flatnonzero(mask).tolist()))
            self._play(seat, int(action), move)

    def _legal_move(self, action) -> tuple[engine.Move | None, str]:
        """(the move, "") if ``action`` is a legal action index now, else (None, why not)."""
        if type(action) is not int:  # the common case first; bools, floats and strings are refused
            if not is_int(action):
                if not (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"):
                    return None, "not an integer action index"
            action = int(action)
        if not 0 <= action < self.actions.size:
            return None, out_of_range(self.actions.size)
        if not self._mask[action]:
            try:
                what = self.actions.describe(self.require_started("describing a move"), action)
            except ValueError:  # a pile target of a padded, absent seat
                what = "a move onto an absent seat's pile"
            if self.actions.move_of(action).kind >= JOKER_KIND_OFFSET and not self.rules.jokers:
                return None, f"{what}: these rules have no jokers (jokers=False), so no joker move is ever legal"
            return None, f"{what}: {NOT_LEGAL_NOW}"
        return self.actions.move_of(action), ""

    def final_rewards(self) -> list[float]:
        """Each seat's reward once the game is over (the illegal-action penalty when one ended it)."""
        if self.offender is not None:
            return [self.illegal_reward if seat == self.offender else 0.0 for seat in range(self.rules.num_players)]
        return scoring.final_rewards(self.reward_mode, scoring.scores(self.state), self.rules.total_cards)

    def scores(self) -> list[int]:
        return scoring.scores(self.require_started("reading scores"))
