"""The batched table: many games on the batched engine, their seats, and what happens to every action.

`VectorTable` is `rouba_env.table.Table` for ``num_games`` games at once, on
`rouba_env.batched.VectorGame`. Every seat of every game slot is open (an
outside caller acts there: a learner, a vector environment's user) or held by
a player. `VectorTable.play_seated` lets the seated players move until every
live slot has an open seat to act or its game is over, with one ``act_batch``
call per player per round: a whole batch at once for players that play in
batch (``plays_in_batch``: random, greedy, heuristic, checkpoint networks),
row by row for the others (``expert``, ``search``: `BasePolicy.act_batch`);
`VectorTable.play` plays outside callers' actions. Users: the Gymnasium and SB3 vector environments
(`rouba_env.envs.vector_env`), the batched evaluator and the trainer's rollouts.

Legality is checked here once per move, with the words of `Table`:

* a seated player that returns an illegal action is a bug in that player:
  `IllegalPlayerAction` names it, its seat, the game slot and the legal
  actions, and nothing of that round is played;
* an outside caller's illegal or out-of-range action follows ``illegal_action``:
  ``"terminate"`` ends that slot's game (the offender gets ``illegal_reward``,
  every other seat 0; one warning names the first offence and the count),
  ``"raise"`` raises a ValueError and plays nothing.

Randomness: `play_seated` takes one `numpy.random.Generator` for every slot,
or `rouba_env.streams.RowStreams` with one Generator per slot; then each
game's players draw only from its own stream, so a game is the same move for
move as on a one-game `Table` with that Generator.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from rouba_env.batched.game import MAX_GAMES, VectorGame  # noqa: F401  (MAX_GAMES re-exported: the vector env reads it here)
from rouba_env.checks import check_choice, check_int, check_number
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import NO_SEAT
from rouba_env.rules.scoring import ENVIRONMENT_REWARD
from rouba_env.streams import Randomness, RowStreams, check_randomness
from rouba_env.table import (
    DEFAULT_ILLEGAL_REWARD, ENDS_THE_GAME, ILLEGAL_ACTION_MODES, NOT_LEGAL_NOW, IllegalActionWarning, check_player_rules,
    IllegalPlayerAction, illegal_action_message, illegal_player_message, out_of_range,
)

if TYPE_CHECKING:
    from rouba_env.players.base import Policy

OPEN_SEAT = -1
"""Player id of an open seat (played by an outside caller)."""
GAME_OVER = -2
"""What `VectorTable.player_to_act` answers for a slot whose game is over (no seat is to act)."""
BatchMoveHook = Callable[[np.ndarray, np.ndarray, np.ndarray], None]
"""``hook(slots, seats, actions)``: told of the legal moves of one round just before they are played."""


def plays_in_batch(player) -> bool:
    """True for a player whose ``act_batch`` plays a whole batch at once (see `BasePolicy.plays_in_batch`)."""
    return bool(getattr(player, "plays_in_batch", False)) and callable(getattr(player, "act_batch", None))


def require_batch_player(player, where: str = "the batched table") -> None:
    """ValueError unless ``player`` plays in batch, naming it and what to do instead."""
    if not plays_in_batch(player):
        name = getattr(player, "name", type(player).__name__)
        raise ValueError(f"player {name!r} has no batch path (it plays one position at a time), so {where} "
                         f"cannot seat it; batch players: random, greedy, heuristic, checkpoint networks")


class VectorTable:
    """``num_games`` games of one rules config with their seats, stepped together.

    Args:
        rules: the rules config.
        num_games: game slots, 1..`MAX_GAMES`.
        players: the players that can be seated (`seat` names them by index in this list).
        max_players: padding of observations and actions.
        reward: ``"outcome"``, ``"margin"`` or ``"lead"``.
        illegal_action: one of `ILLEGAL_ACTION_MODES`, for outside callers' actions.
        illegal_reward: the offender's reward when an illegal action ends a game.
        before_move: told of every round of legal moves, by seated players or outside callers.
        game: games already under way to seat the players at (a `VectorGame` without ``auto_reset``, of these
            rules and ``reward``: copies a search plays out), instead of ``num_games`` empty slots; every slot
            counts as dealt.

    Slots start empty (over); `start` deals games into them. ``obs`` and ``mask`` (the engine's
    buffers) hold each live slot's view of the seat to act.
    """

    def __init__(self, rules: RulesConfig, num_games: int, players: "Sequence[Policy]" = (),
                 *,
                 max_players: int | None = None, reward: str = ENVIRONMENT_REWARD, illegal_action: str = "terminate",
                 illegal_reward: float = DEFAULT_ILLEGAL_REWARD, before_move: BatchMoveHook | None = None,
                 track_cards: bool = False, game: VectorGame | None = None):
        if not isinstance(rules, RulesConfig):
            raise ValueError(f"rules must be a RulesConfig, got {type(rules).__name__}")
        num_games = check_int("num_games", num_games, 1, MAX_GAMES)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.illegal_reward = check_number("illegal_reward", illegal_reward)
        self.illegal_action = illegal_action
        self.rules = rules
        if game is None:
            game = VectorGame(rules, num_games, max_players=max_players, auto_reset=False, reward=reward,
                              track_cards=track_cards)
        elif (not isinstance(game, VectorGame) or game.config != rules or game.auto_reset
              or game.batch_size != num_games or game.reward_mode != reward):
            raise ValueError(f"game must be a VectorGame of these rules with {num_games} slots, reward {reward!r} "
                             f"and auto_reset off")
        self.game = game
        self.num_games = num_games
        self.num_players = rules.num_players
        self.players: list = []
        for player in players:
            self.add_player(player)
        self.seats = np.full((num_games, rules.num_players), OPEN_SEAT, dtype=np.int64)
        """Player id (index into ``players``) at each seat of each slot; `OPEN_SEAT` for an outside caller."""
        self.offender = np.full(num_games, NO_SEAT, dtype=np.int64)
        """Seat whose illegal action ended the slot's game, or `NO_SEAT`."""
        self.decisions = np.zeros((num_games, rules.num_players), dtype=np.int64)
        """Moves each seated player chose in the slot's current game."""
        self.seconds = np.zeros((num_games, rules.num_players), dtype=np.float64)
        """Seconds each seat's player spent on them (a batch call's time shared equally by its rows)."""
        self.before_move = before_move
        self.dealt = np.full(num_games, game.started, dtype=bool)
        """The slot has been dealt a game (`start`)."""
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
            raise ValueError(f"the batched table seats Policy objects, not spec strings: "
                             f"make_policy({player!r}, rules) makes one")
        check_player_rules(player, self.rules)
        size = getattr(getattr(player, "encoder", None), "size", self.game.obs_size)
        if size != self.game.obs_size:
            raise ValueError(f"player {player.name!r} reads observations of {size} entries, but this table's "
                             f"have {self.game.obs_size} (other seats or padding)")
        if free is not None:
            self.players[free] = player
            return free
        self.players.append(player)
        return len(self.players) - 1

    def release_unseated(self, keep: "Sequence[int]" = ()) -> int:
        """Let go of every player seated in no slot, except the ids in ``keep``; how many were let go.

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

    def seat(self, slots, seats) -> None:
        """Put player ids (or `OPEN_SEAT`) at every seat of ``slots``: ``seats`` is int[len(slots), num_players]."""
        slots = self.game.as_slots(slots)
        seats = np.asarray(seats)
        if seats.shape != (len(slots), self.num_players) or (seats.size and seats.dtype.kind not in "iu"):
            raise ValueError(f"seats must be integer player ids of shape ({len(slots)}, {self.num_players}), "
                             f"got shape {seats.shape}")
        if seats.size and (seats.min() < OPEN_SEAT or seats.max() >= len(self.players)
                           or any(self.players[i] is None for i in np.unique(seats[seats >= 0]).tolist())):
            known = [i for i, player in enumerate(self.players) if player is not None]
            raise ValueError(f"player ids must be the ids of added players ({known}) or {OPEN_SEAT} (open)")
        self.seats[slots] = seats

    def start(self, slots, deal_seeds) -> None:
        """Deal the game of ``deal_seeds[i]`` into slot ``slots[i]`` (the deal of `engine.start_game`)."""
        slots = self.game.as_slots(slots)
        self.game.deal(slots, deal_seeds)
        self.offender[slots] = NO_SEAT
        self.dealt[slots] = True
        self.decisions[slots] = 0
        self.seconds[slots] = 0.0

    # ------------------------------------------------------------ state

    @property
    def obs(self) -> np.ndarray:
        """float32[B, D]: each live slot's observation of the seat to act (the engine's buffer: copy to keep)."""
        return self.game.obs

    @property
    def mask(self) -> np.ndarray:
        """int8[B, A]: each slot's legal actions of the seat to act (the engine's buffer)."""
        return self.game.mask

    @property
    def over(self) -> np.ndarray:
        """bool[B]: the slot holds no live game (never dealt, finished, or ended by an illegal action)."""
        return (self.game.current < 0) | (self.offender >= 0)

    @property
    def current(self) -> np.ndarray:
        """int64[B]: seat to act in each slot, `NO_SEAT` where the game is over."""
        return np.where(self.over, NO_SEAT, self.game.current)

    def player_to_act(self) -> np.ndarray:
        """int64[B]: player id of the seat to act, `OPEN_SEAT` where it is open, `GAME_OVER` where the game is over."""
        current = self.current
        ids = self.seats[self._all, np.maximum(current, 0)]
        return np.where(current >= 0, ids, GAME_OVER)

    def observe(self, slots, seats) -> np.ndarray:
        """float32[K, D]: slot ``slots[i]`` seen from seat ``seats[i]`` (final positions too)."""
        return self.game.observe_slots(slots, seats)

    def final_rewards(self, slots) -> np.ndarray:
        """float64[K, n]: each seat's reward in finished ``slots`` (the illegal-action penalty where one ended it).

        A slot whose game is still on (or was never dealt) is a ValueError: it has no final reward yet.
        """
        slots = self.game.as_slots(slots)
        live = slots[~self.over[slots] | ~self.dealt[slots]]
        if live.size:
            raise ValueError(f"slots {live[:10].tolist()} hold games still on (or never dealt): no final rewards yet")
        rewards = self.game.rewards[slots].copy()
        offender = self.offender[slots]
        penalised = np.flatnonzero(offender >= 0)
        rewards[penalised] = 0.0
        rewards[penalised, offender[penalised]] = self.illegal_reward
        return rewards

    def scores(self, slots) -> np.ndarray:
        """int64[K, n]: cards in each seat's pile (the final scores once a game is over)."""
        return self.game.scores()[self.game.as_slots(slots)]

    # ------------------------------------------------------------ playing

    def play_seated(self, rng: Randomness) -> np.ndarray:
        """Let the seated players move until every live slot has an open seat to act or is over.

        ``rng``: one Generator, or `RowStreams` with a Generator per slot. Returns the slots whose
        game ended meanwhile. A player that returns anything but a legal action raises
        `IllegalPlayerAction` (nothing of that round is played).
        """
        check_randomness(rng, self.num_games)
        streams = rng if isinstance(rng, RowStreams) else None
        ended = []
        game = self.game
        while True:
            to_act = self.player_to_act()
            rows = np.flatnonzero(to_act >= 0)
            if not len(rows):
                break
            ids = to_act[rows]
            actions = np.empty(len(rows), dtype=np.int64)
            seats = game.current[rows]
            for player_id in (ids[:1] if ids.min() == ids.max() else np.unique(ids)):
                mine = np.flatnonzero(ids == player_id) if len(self.players) > 1 else np.arange(len(rows))
                slots = rows[mine]
                player = self.players[player_id]
                started = time.perf_counter()
                chosen = player.act_batch(game.obs[slots], game.mask[slots],
                                          rng if streams is None else streams.take(slots))
                spent = time.perf_counter() - started
                actions[mine] = self._player_actions(player, chosen, slots)
                self.decisions[slots, seats[mine]] += 1
                self.seconds[slots, seats[mine]] += spent / len(slots)
            bad = game.illegal_rows(rows, actions)
            if len(bad):
                i = int(bad[0])
                slot = int(rows[i])
                raise IllegalPlayerAction(
                    illegal_player_message(self.players[ids[i]], int(seats[i]), int(actions[i]),
                                           np.flatnonzero(game.mask[slot]).tolist()) + f" (game slot {slot})")
            ended.append(self._play(rows, seats, actions))
        return np.concatenate(ended) if ended else np.empty(0, dtype=np.int64)

    def _player_actions(self, player, chosen, slots: np.ndarray) -> np.ndarray:
        chosen = np.asarray(chosen)
        if chosen.shape != slots.shape or (chosen.size and chosen.dtype.kind not in "iu"):
            raise IllegalPlayerAction(f"player {player!r} returned {chosen.shape} actions of dtype {chosen.dtype} "
                                      f"for {len(slots)} positions; act_batch must return one integer action each")
        return chosen

    def play(self, slots, actions, who: str = "the outside caller") -> np.ndarray:
        """Play an outside caller's ``actions[i]`` in slot ``slots[i]`` (its seat to act must be open).

        Illegal or out-of-range actions follow ``illegal_action``. Returns the slots whose game
        ended, by a move or by an illegal action (``offender`` tells which).
        """
        game = self.game
        slots = game.as_slots(slots)
        actions = np.asarray(actions)
        if actions.shape != slots.shape or (actions.size and actions.dtype.kind not in "iu"):
            raise ValueError(f"actions must be {len(slots)} integer action indices (one per slot), got "
                             f"shape {actions.shape} and dtype {actions.dtype}")
        to_act = self.player_to_act()[slots]
        if (to_act != OPEN_SEAT).any():
            i = int(np.flatnonzero(to_act != OPEN_SEAT)[0])
            if not self.dealt[slots[i]]:
                what = "it holds no game yet (seat() and start() it first)"
            elif to_act[i] == GAME_OVER:
                what = "its game is over"
            else:
                what = f"seat {int(game.current[slots[i]])} to act is held by {self.players[to_act[i]]!r}"
            raise ValueError(f"slot {int(slots[i])} has no open seat to act: {what}")
        if actions.size and (actions.min() < np.iinfo(np.int64).min or actions.max() > np.iinfo(np.int64).max):
            raise ValueError("actions out of the int64 range")
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        seats = game.current[slots]
        bad = game.illegal_rows(slots, actions)
        terminated = np.empty(0, dtype=np.int64)
        if len(bad):
            i = int(bad[0])
            slot = int(slots[i])
            action = int(actions[i])
            reason = out_of_range(game.num_actions) if not 0 <= action < game.num_actions else NOT_LEGAL_NOW
            message = illegal_action_message(action, f"{who} in seat {int(seats[i])} of game slot {slot}", reason,
                                             np.flatnonzero(game.mask[slot]).tolist())
            if self.illegal_action == "raise":
                raise ValueError(message)
            others = f" (and {len(bad) - 1} more illegal actions in other slots)" if len(bad) > 1 else ""
            warnings.warn(message + ENDS_THE_GAME + others, IllegalActionWarning, stacklevel=2)
            terminated = slots[bad]
            self.offender[terminated] = seats[bad]
            keep = np.ones(len(slots), dtype=bool)
            keep[bad] = False
            slots, seats, actions = slots[keep], seats[keep], actions[keep]
        ended = self._play(slots, seats, actions)
        return np.concatenate([terminated, ended])

    def _play(self, slots: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> np.ndarray:
        if self.before_move is not None:
            self.before_move(slots, seats, actions)
        return self.game.play_checked(slots, actions)
