"""The table: games on the compiled rules core, their seats, and what happens to every action, written once.

`Table` holds ``num_games`` games of one rules config (one or thousands) on a
`rouba_env.batched.VectorGame`. Every seat of every game is open (an outside
caller acts there: a learner, a person, a vector environment's user) or held
by a `Policy`. `Table.play_seated` lets the seated players move until every
live game has an open seat to act or is over, with one ``act_batch`` call per
player per round (players that decide one position at a time, ``expert`` and
``search``, play their rows one by one: `BasePolicy.act_batch`; a player that
reads its games' histories, ``belief_search``, is asked through
``act_at_table`` instead, and the table keeps the histories); `Table.play`
plays outside callers' actions. Users: the vector environments, the
duplicate-deal evaluator, the local best response and the trainer's rollouts.

`rouba_env.single_game.SingleGame` is the one-game view of a one-game `Table`, held by the PettingZoo
AEC and Gymnasium environments, RLlib, the browser and terminal play: an
outside caller's legal integer action is played, and the next position shown,
in one compiled call; everything else (seating, seated players, illegal
actions, rewards) is its table's.

Legality is checked once per move, here:

* a seated player that returns anything but a legal action index is a bug in
  that player: `IllegalPlayerAction` (a ValueError) names it, its seat and the
  legal actions, and nothing of that round is played;
* an outside caller's illegal, out-of-range or non-integer action follows the
  table's ``illegal_action`` rule: ``"terminate"`` (the default, PettingZoo
  classic's convention) ends that game at once, the offender gets
  ``illegal_reward`` and every other seat 0, and a warning names the action
  and the legal ones (and how many other games ended so); ``"raise"`` raises a
  ValueError naming them and plays nothing.

Randomness: `Table.play_seated` takes one `numpy.random.Generator` for every
game, or `rouba_env.streams.RowStreams` with one Generator per game; then each
game's players draw only from its own stream, so a game is the same move for
move whether it is played alone or among thousands.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from rouba_env.batched.game import MAX_GAMES, VectorGame
from rouba_env.checks import check_choice, check_int, check_number, is_int
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.history import DecisionRecorder
from rouba_env.rules import scoring
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import JOKER_KIND_OFFSET, NO_SEAT
from rouba_env.rules.scoring import ENVIRONMENT_REWARD
from rouba_env.streams import Randomness, check_randomness

if TYPE_CHECKING:  # the Policy protocol is the players' floor; the table only calls ``act_batch``
    from rouba_env.players.base import Policy

ILLEGAL_ACTION_MODES = ("terminate", "raise")
"""What an illegal action does: end the game with a penalty, or raise a ValueError."""
DEFAULT_ILLEGAL_REWARD = -1.0
TABLE_PLAYER_METHOD = "act_at_table"
"""A player that reads its games' histories, not only a seat's observation, defines
``act_at_table(table, games, seats, rng) -> actions`` (a search that weighs the hidden hands by the moves made);
a table that seats one keeps every game's decisions since its deal (`Table.history`)."""
TABLE_PROBABILITIES_METHOD = "probabilities_at_table"
"""Such a player may also give its move distribution, ``probabilities_at_table(table, games, seats, rng) ->
float64[N, A]``, for one draw of whatever it samples (a search's worlds): what the exact solver averages to read
its strategy (`rouba_env.solve.exploitability.table_strategy`)."""
OPEN_SEAT = -1
"""Player id of an open seat (played by an outside caller)."""
GAME_OVER = -2
"""What `Table.player_to_act` answers for a game that is over (no seat is to act)."""
RULES_A_PLAYER_MAY_DIFFER_IN = ("dealer",)
"""Rules fields a player made for one table may differ in from the table that seats it: who deals."""
NOT_AN_INTEGER = "not an integer action index"
NOT_LEGAL_NOW = "not a legal move now"
ENDS_THE_GAME = "; the game ends and the offender gets illegal_reward"
"""Added to the warning when an illegal action ends a game (``illegal_action="terminate"``)."""
INT64 = np.iinfo(np.int64)

BatchMoveHook = Callable[[np.ndarray, np.ndarray, np.ndarray], None]
"""``hook(games, seats, actions)``: a `Table`'s round of legal moves just before or just after it is played."""


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


def illegal_action_message(action, who: str, reason: str, legal: Sequence[int]) -> str:
    """The words of an outside caller's illegal action."""
    return f"illegal action {action!r} for {who} ({reason}); legal actions: {list(legal)}"


def illegal_player_message(player, seat: int, action, legal: Sequence[int]) -> str:
    """The words of a seated player's illegal action (`IllegalPlayerAction`)."""
    return (f"player {player!r} in seat {seat} returned action {action!r}, which is not legal; "
            f"legal actions: {list(legal)}")


def not_started(what: str) -> RuntimeError:
    """The error of a table asked for something before its first game was dealt."""
    return RuntimeError(f"call reset() before {what}")


def action_indices(values) -> tuple[np.ndarray, int]:
    """(int64[K], the index of the first value that is no integer in int64's range, or -1): actions of any
    integer dtype, read-only or not, contiguous or not, converted once at the door into a fresh contiguous
    array (so the compiled loops see one signature). A value that is no such integer becomes -1, which no
    action index is."""
    array = np.asarray(values)
    if array.dtype.kind == "i" or (array.dtype.kind == "u" and (not array.size or array.max() <= INT64.max)):
        return np.array(array, dtype=np.int64).reshape(-1), -1
    flat = array.reshape(-1)
    out = np.full(len(flat), -1, dtype=np.int64)
    first_bad = -1
    for index, value in enumerate(flat.tolist() if array.dtype.kind == "u" else flat):
        if is_int(value) and INT64.min <= int(value) <= INT64.max:
            out[index] = int(value)
        elif first_bad < 0:
            first_bad = index
    return out, first_bad


def penalized(rewards: np.ndarray, offenders: np.ndarray, illegal_reward: float) -> np.ndarray:
    """``rewards`` (float64[K, n]) with each game that an illegal action ended (``offenders[k] >= 0``) given
    ``illegal_reward`` for the offender and 0 for every other seat."""
    penalised = np.flatnonzero(offenders >= 0)
    rewards[penalised] = 0.0
    rewards[penalised, offenders[penalised]] = illegal_reward
    return rewards


class Table:
    """``num_games`` games of one rules config with their seats, stepped together.

    Args:
        rules: the rules config.
        num_games: games, 1..`MAX_GAMES`.
        players: the players that can be seated (`seat` names them by index in this list).
        max_players: padding of observations and actions.
        reward: ``"outcome"``, ``"margin"`` or ``"lead"``.
        illegal_action: one of `ILLEGAL_ACTION_MODES`, for outside callers' actions.
        illegal_reward: the offender's reward when an illegal action ends a game.
        before_move: told of every round of legal moves, by seated players or outside callers, just before
            it is played (logs, replays; it changes nothing).
        after_move: told of every round of legal moves just after it is played.
        track_cards: keep every card's code, so `state_of` names the cards (views, move descriptions).
        game: games already under way to seat the players at (a `VectorGame` without ``auto_reset``, of these
            rules and ``reward``: copies a search plays out), instead of ``num_games`` empty ones; every game
            counts as dealt.

    Games start empty (over); `start` deals them. ``obs`` and ``mask`` (the engine's buffers) hold each live
    game's view of the seat to act.
    """

    def __init__(self, rules: RulesConfig, num_games: int, players: "Sequence[Policy]" = (), *,
                 max_players: int | None = None, reward: str = ENVIRONMENT_REWARD, illegal_action: str = "terminate",
                 illegal_reward: float = DEFAULT_ILLEGAL_REWARD, before_move: BatchMoveHook | None = None,
                 after_move: BatchMoveHook | None = None, track_cards: bool = False, game: VectorGame | None = None):
        if not isinstance(rules, RulesConfig):
            raise ValueError(f"rules must be a RulesConfig, got {type(rules).__name__}")
        num_games = check_int("num_games", num_games, 1, MAX_GAMES)
        scoring.check_reward_mode(reward)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.illegal_reward = check_number("illegal_reward", illegal_reward)
        self.illegal_action = illegal_action
        self.rules = rules
        self.reward_mode = reward
        if game is None:
            game = VectorGame(rules, num_games, max_players=max_players, auto_reset=False, reward=reward,
                              track_cards=track_cards)
        elif (not isinstance(game, VectorGame) or game.config != rules or game.auto_reset
              or game.batch_size != num_games or game.reward_mode != reward):
            raise ValueError(f"game must be a VectorGame of these rules with {num_games} games, reward {reward!r} "
                             f"and auto_reset off")
        self.game = game
        self.actions = ActionEncoding(rules, game.max_players)
        self.encoder = ObservationEncoder(rules, game.max_players)
        self.num_games = num_games
        self.num_players = rules.num_players
        self.players: list = []
        self.history: DecisionRecorder | None = None
        """Every game's decisions since its deal, kept once a player that reads them (`TABLE_PLAYER_METHOD`) is
        added: the positions as they stood, hidden cards included, which such a player deals anew before it
        reads them."""
        for player in players:
            self.add_player(player)
        self.seats = np.full((num_games, rules.num_players), OPEN_SEAT, dtype=np.int64)
        """Player id (index into ``players``) at each seat of each game; `OPEN_SEAT` for an outside caller."""
        self.offender = np.full(num_games, NO_SEAT, dtype=np.int64)
        """Seat whose illegal action ended the game, or `NO_SEAT`."""
        self.decisions = np.zeros((num_games, rules.num_players), dtype=np.int64)
        """Moves each seated player chose in the game now at the table."""
        self.seconds = np.zeros((num_games, rules.num_players), dtype=np.float64)
        """Seconds each seat's player spent on them (a batch call's time shared equally by its rows)."""
        self.before_move = before_move
        self.after_move = after_move
        self.dealt = np.full(num_games, game.started, dtype=bool)
        """The game has been dealt (`start`)."""
        self._all = np.arange(num_games, dtype=np.int64)

    # ------------------------------------------------------------ seating and dealing

    def add_player(self, player: "Policy") -> int:
        """Make ``player`` seatable; its id (the same id again for a player already added).

        The id of a player let go by `release_unseated` may be given to a new one.
        """
        free = None
        for index, known in enumerate(self.players):
            if known is player:
                return index
            if known is None and free is None:
                free = index
        if isinstance(player, str):
            raise ValueError(f"the table seats Policy objects, not spec strings: make_policy({player!r}, rules) "
                             f"makes one")
        if not callable(getattr(player, "act_batch", None)):
            raise ValueError(f"a seat takes a Policy (with act_batch, e.g. a BasePolicy) or None, got "
                             f"{type(player).__name__}")
        check_player_rules(player, self.rules)
        size = getattr(getattr(player, "encoder", None), "size", self.game.obs_size)
        if size != self.game.obs_size:
            raise ValueError(f"player {getattr(player, 'name', player)!r} reads observations of {size} entries, "
                             f"but this table's have {self.game.obs_size} (other seats or padding)")
        if callable(getattr(player, TABLE_PLAYER_METHOD, None)) and self.history is None:
            self.history = DecisionRecorder(self.game)
        if free is not None:
            self.players[free] = player
            return free
        self.players.append(player)
        return len(self.players) - 1

    def release_unseated(self, keep: "Sequence[int]" = ()) -> int:
        """Let go of every player seated in no game, except the ids in ``keep``; how many were let go.

        A caller that seats new player objects game after game (an opponent sampler) calls this after
        seating, so that the table holds only the players in play.
        """
        held = np.zeros(len(self.players), dtype=bool)
        held[self.seats[self.seats >= 0]] = True
        held[np.asarray(list(keep), dtype=np.int64)] = True
        released = 0
        for index in np.flatnonzero(~held).tolist():
            if self.players[index] is not None:
                self.players[index] = None
                released += 1
        return released

    def seat(self, games, seats) -> None:
        """Put player ids (or `OPEN_SEAT`) at every seat of ``games``: ``seats`` is int[len(games), num_players]."""
        games = self.game.as_slots(games)
        seats = np.asarray(seats)
        if seats.shape != (len(games), self.num_players) or (seats.size and seats.dtype.kind not in "iu"):
            raise ValueError(f"seats must be integer player ids of shape ({len(games)}, {self.num_players}), "
                             f"got shape {seats.shape}")
        if seats.size and (seats.min() < OPEN_SEAT or seats.max() >= len(self.players)
                           or any(self.players[i] is None for i in np.unique(seats[seats >= 0]).tolist())):
            known = [i for i, player in enumerate(self.players) if player is not None]
            raise ValueError(f"player ids must be the ids of added players ({known}) or {OPEN_SEAT} (open)")
        self.seats[games] = seats

    def start(self, games, deal_seeds) -> None:
        """Deal the game of ``deal_seeds[i]`` at ``games[i]`` (the deal of `engine.start_game`)."""
        games = self.game.as_slots(games)
        self.game.deal(games, deal_seeds)
        self.mark_dealt(games)

    def mark_dealt(self, games: np.ndarray) -> None:
        """Book new games at ``games`` (dealt on the game already): no offender, no decisions yet."""
        self.offender[games] = NO_SEAT
        self.dealt[games] = True
        if self.history is not None:
            self.history.forget(games)
        self.decisions[games] = 0
        self.seconds[games] = 0.0

    # ------------------------------------------------------------ state

    @property
    def obs(self) -> np.ndarray:
        """float32[B, D]: each live game's observation of the seat to act (the engine's buffer: copy to keep)."""
        return self.game.obs

    @property
    def mask(self) -> np.ndarray:
        """int8[B, A]: each game's legal actions of the seat to act (the engine's buffer)."""
        return self.game.mask

    @property
    def over(self) -> np.ndarray:
        """bool[B]: no live game (never dealt, finished, or ended by an illegal action)."""
        return (self.game.current < 0) | (self.offender >= 0)

    @property
    def current(self) -> np.ndarray:
        """int64[B]: seat to act in each game, `NO_SEAT` where the game is over."""
        return np.where(self.over, NO_SEAT, self.game.current)

    def player_to_act(self) -> np.ndarray:
        """int64[B]: player id of the seat to act, `OPEN_SEAT` where it is open, `GAME_OVER` where the game is over."""
        current = self.current
        ids = self.seats[self._all, np.maximum(current, 0)]
        return np.where(current >= 0, ids, GAME_OVER)

    def observe(self, games, seats) -> np.ndarray:
        """float32[K, D]: game ``games[i]`` seen from seat ``seats[i]`` (final positions too)."""
        return self.game.observe_slots(games, seats)

    def final_rewards(self, games) -> np.ndarray:
        """float64[K, n]: each seat's reward in finished ``games`` (the illegal-action penalty where one ended it).

        A game still on (or never dealt) is a ValueError: it has no final reward yet.
        """
        games = self.game.as_slots(games)
        live = games[~self.over[games] | ~self.dealt[games]]
        if live.size:
            raise ValueError(f"slots {live[:10].tolist()} hold games still on (or never dealt): no final rewards yet")
        return penalized(self.game.rewards[games].copy(), self.offender[games], self.illegal_reward)

    def scores(self, games) -> np.ndarray:
        """int64[K, n]: cards in each seat's pile (the final scores once a game is over)."""
        return self.game.scores()[self.game.as_slots(games)]

    def illegal_reason(self, game: int, action) -> str:
        """Why ``action`` is not legal at ``game`` now: not an integer, out of range, a joker move without
        jokers, or (named where the table tracks the cards) a move the position does not allow."""
        if not is_int(action):
            return NOT_AN_INTEGER
        action = int(action)
        if not 0 <= action < self.actions.size:
            return out_of_range(self.actions.size)
        if not self.game.track_cards or not self.dealt[game]:
            return NOT_LEGAL_NOW
        try:
            what = self.actions.describe(self.game.position(game), action)
        except ValueError:  # a pile target of a padded, absent seat
            what = "a move onto an absent seat's pile"
        if self.actions.move_of(action).kind >= JOKER_KIND_OFFSET and not self.rules.jokers:
            return f"{what}: these rules have no jokers (jokers=False), so no joker move is ever legal"
        return f"{what}: {NOT_LEGAL_NOW}"

    # ------------------------------------------------------------ playing

    def play_seated(self, rng: Randomness, max_rounds: int | None = None) -> np.ndarray:
        """Let the seated players move until every live game has an open seat to act or is over (or, with
        ``max_rounds``, until that many rounds of moves have been played: a search's playouts cut short).

        ``rng``: one Generator, or `RowStreams` with a Generator per game. Returns the games that ended
        meanwhile. A player that returns anything but a legal action raises `IllegalPlayerAction`
        (nothing of that round is played).
        """
        check_randomness(rng, self.num_games)
        if max_rounds is not None:
            max_rounds = check_int("max_rounds", max_rounds, 1, INT64.max)
        streams = None if isinstance(rng, np.random.Generator) else rng
        ended = []
        game = self.game
        rounds = 0
        while max_rounds is None or rounds < max_rounds:
            rounds += 1
            to_act = self.player_to_act()
            rows = np.flatnonzero(to_act >= 0)
            if not len(rows):
                break
            ids = to_act[rows]
            actions = np.empty(len(rows), dtype=np.int64)
            seats = game.current[rows]
            for player_id in (ids[:1] if ids.min() == ids.max() else np.unique(ids)):
                mine = np.flatnonzero(ids == player_id) if len(self.players) > 1 else np.arange(len(rows))
                games = rows[mine]
                player = self.players[player_id]
                started = time.perf_counter()
                drawn = rng if streams is None else streams.take(games)
                at_table = getattr(player, TABLE_PLAYER_METHOD, None)
                chosen = (player.act_batch(game.obs[games], game.mask[games], drawn) if at_table is None
                          else at_table(self, games, seats[mine], drawn))
                spent = time.perf_counter() - started
                actions[mine] = self._player_actions(player, chosen, games, seats[mine])
                self.decisions[games, seats[mine]] += 1
                self.seconds[games, seats[mine]] += spent / len(games)
            bad = game.illegal_rows(rows, actions)
            if len(bad):
                i = int(bad[0])
                self._refuse_player(self.players[ids[i]], int(rows[i]), int(seats[i]), int(actions[i]))
            ended.append(self._play(rows, seats, actions))
        return np.concatenate(ended) if ended else np.empty(0, dtype=np.int64)

    def _player_actions(self, player, chosen, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """A player's answers as int64 actions; `IllegalPlayerAction` for a wrong count or a non-integer."""
        chosen = np.asarray(chosen)
        if chosen.shape != games.shape:
            raise IllegalPlayerAction(f"player {player!r} returned {chosen.shape} actions for {len(games)} "
                                      f"positions; act_batch must return one integer action each")
        actions, bad = action_indices(chosen)
        if bad >= 0:
            self._refuse_player(player, int(games[bad]), int(seats[bad]), chosen.reshape(-1)[bad])
        return actions

    def _refuse_player(self, player, game: int, seat: int, action) -> None:
        suffix = f" (game slot {game})" if self.num_games > 1 else ""
        raise IllegalPlayerAction(illegal_player_message(player, seat, action, np.flatnonzero(self.game.mask[game]).tolist())
                                  + suffix)

    def play(self, games, actions, who: str = "the outside caller", *, stacklevel: int = 2) -> np.ndarray:
        """Play an outside caller's ``actions[i]`` at ``games[i]`` (its seat to act must be open).

        ``actions`` of any integer dtype. Illegal, out-of-range or non-integer actions follow
        ``illegal_action``. Returns the games that ended, by a move or by an illegal action (``offender``
        tells which). ``stacklevel`` points the warning at the caller's caller (as `warnings.warn`'s).
        """
        game = self.game
        games = game.as_slots(games)
        values = np.asarray(actions)
        if values.shape != games.shape:
            raise ValueError(f"actions must be {len(games)} integer action indices (one per game), got "
                             f"shape {values.shape}")
        self._require_open(games)
        actions, first_bad = action_indices(values)
        seats = game.current[games]
        bad = game.illegal_rows(games, actions)
        if first_bad >= 0:  # a value that is no integer (it became -1, so it is among ``bad``): named first
            bad = np.concatenate([[first_bad], bad[bad != first_bad]])
        terminated = np.empty(0, dtype=np.int64)
        if len(bad):
            i = int(bad[0])
            shown = values.reshape(-1)[i]
            self._refuse(games[bad], seats[bad], action=shown.item() if isinstance(shown, np.generic) else shown,
                         who=f"{who} in seat {int(seats[i])} of game slot {int(games[i])}" if self.num_games > 1 else who,
                         stacklevel=stacklevel + 1)
            terminated = games[bad]
            keep = np.ones(len(games), dtype=bool)
            keep[bad] = False
            games, seats, actions = games[keep], seats[keep], actions[keep]
        ended = self._play(games, seats, actions)
        return np.concatenate([terminated, ended])

    def _require_open(self, games: np.ndarray) -> None:
        """ValueError unless the seat to act at every one of ``games`` is open."""
        to_act = self.player_to_act()[games]
        if (to_act != OPEN_SEAT).any():
            i = int(np.flatnonzero(to_act != OPEN_SEAT)[0])
            if not self.dealt[games[i]]:
                what = "it holds no game yet (seat() and start() it first)"
            elif to_act[i] == GAME_OVER:
                what = "its game is over"
            else:
                what = f"seat {int(self.game.current[games[i]])} to act is held by {self.players[to_act[i]]!r}"
            raise ValueError(f"slot {int(games[i])} has no open seat to act: {what}")

    def _refuse(self, games: np.ndarray, seats: np.ndarray, *, action, who: str, stacklevel: int) -> None:
        """The one illegal-action path: raise, or end ``games`` with their offenders (the first named)."""
        first = int(games[0])
        message = illegal_action_message(action, who, self.illegal_reason(first, action),
                                         np.flatnonzero(self.game.mask[first]).tolist())
        if self.illegal_action == "raise":
            raise ValueError(message)
        others = f" (and {len(games) - 1} more illegal actions in other slots)" if len(games) > 1 else ""
        warnings.warn(message + ENDS_THE_GAME + others, IllegalActionWarning, stacklevel=stacklevel + 1)
        self.offender[games] = seats

    def _play(self, games: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> np.ndarray:
        if self.history is not None:
            self.history(games, seats, actions)
        if self.before_move is not None:
            self.before_move(games, seats, actions)
        ended = self.game.play_checked(games, actions)
        if self.after_move is not None:
            self.after_move(games, seats, actions)
        return ended
