"""The fixed ``Discrete(N)`` action encoding of moves.

An action index is ``kind * num_targets + target`` where

* ``kind`` 0..12 plays a natural card of that rank (0 = ace .. 12 = king);
  ``kind`` 13..25 plays a joker named as rank ``kind - 13``. A joker that goes
  to the table is named nothing: its one discard action uses kind 13.
* ``target`` 0 captures a table card of the shown rank (every such card, and
  every table joker, with ``take_all``); 1 discards to the table; 2 captures a
  joker lying on the table; ``3 + k`` plays onto the pile of the seat ``k``
  places to the mover's left (``k = 0``: own pile, otherwise a steal).

``num_targets = 3 + max_players``, so ``N = 26 * (3 + max_players)``. With
``max_players`` larger than the table (padding, so one network plays 2, 3 and
4 players) the pile targets of absent seats are never legal. The layout is the
same for every variant: actions a variant cannot produce are simply masked.
"""

from __future__ import annotations

import numpy as np

from rouba_env.checks import is_int
from rouba_env.rules.cards import RANK_NAMES
from rouba_env.rules.config import MAX_PLAYERS, RulesConfig
from rouba_env.rules.engine import OnePosition
from rouba_env.rules.core import move_at, move_index
from rouba_env.rules.core import (
    JOKER_KIND_OFFSET,
    NUM_KINDS,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
)
from rouba_env.rules.engine import GameState, Move, Position, legal_mask, pile_seat, rank_counts, shown_rank


def resolve_max_players(config: RulesConfig, max_players: int | None) -> int:
    """``max_players`` or the table size; an error if it cannot hold the table."""
    if max_players is None:
        return config.num_players
    if not is_int(max_players):
        raise ValueError(f"max_players must be an int or None, got {max_players!r}")
    max_players = int(max_players)
    if not config.num_players <= max_players <= MAX_PLAYERS:
        raise ValueError(
            f"max_players={max_players} must be between num_players={config.num_players} and {MAX_PLAYERS}"
        )
    return max_players


action_index = move_index
"""The action index of a move: ``kind * num_targets + target`` (the rules core's move table index)."""
action_move = move_at
"""(kind, target) of an action index: the inverse of `action_index`."""


class ActionEncoding:
    """Action indices for one rules config, padded to ``max_players`` seats."""

    def __init__(self, config: RulesConfig, max_players: int | None = None):
        self.config = config
        self.max_players = resolve_max_players(config, max_players)
        self.num_targets = TARGET_PILE_OFFSET + self.max_players
        self.size = NUM_KINDS * self.num_targets
        self._moves = [Move(*action_move(action, self.num_targets)) for action in range(self.size)]
        """The move of every action index (padded seats' targets included): decoding by lookup."""
        self._actions = {move: action for action, move in enumerate(self._moves)}
        """The action index of every move: encoding by lookup (a mask is built on every turn)."""
        self._position = OnePosition(config, self.num_targets)
        """The one-slot game that `mask` loads a `GameState` into."""

    def index(self, kind: int, target: int) -> int:
        """The action index of (kind, target) (`action_index`)."""
        return action_index(kind, target, self.num_targets)

    def encode(self, move: Move) -> int:
        kind, target = int(move[0]), int(move[1])
        if not 0 <= kind < NUM_KINDS:
            raise ValueError(f"move kind {kind} out of range 0..{NUM_KINDS - 1}")
        if not 0 <= target < TARGET_PILE_OFFSET + self.config.num_players:
            raise ValueError(f"move target {target} out of range 0..{TARGET_PILE_OFFSET + self.config.num_players - 1}")
        return self.index(kind, target)

    def move_of(self, action: int) -> Move:
        """The move of an action index already known to be legal (no checks: use `decode` for untrusted input)."""
        return self._moves[action]

    def mask_of(self, moves: list[Move]) -> np.ndarray:
        """int8 mask with the actions of ``moves`` set (a legal-move list of the seat to act)."""
        mask = bytearray(self.size)  # cheaper than numpy stores for a handful of entries
        actions = self._actions
        for move in moves:
            mask[actions[move]] = 1
        return np.frombuffer(mask, dtype=np.int8)

    def decode(self, action: int) -> Move:
        """The move of an action index; ValueError for an index outside the space or a padded seat."""
        if not is_int(action):
            raise ValueError(f"action must be an int, got {action!r}")
        action = int(action)
        if not 0 <= action < self.size:
            raise ValueError(f"action {action} out of range 0..{self.size - 1}")
        kind, target = self._moves[action]
        if target >= TARGET_PILE_OFFSET + self.config.num_players:
            raise ValueError(
                f"action {action} targets the pile of seat +{target - TARGET_PILE_OFFSET}, "
                f"absent at a {self.config.num_players}-player table"
            )
        return Move(kind, target)

    def legal_actions(self, state: GameState | Position) -> list[int]:
        """The legal action indices of the seat to act in ``state``, in increasing order."""
        return np.flatnonzero(self.mask(state)).tolist()

    def mask(self, state: GameState | Position, seat: int | None = None) -> np.ndarray:
        """int8 mask of legal actions for ``seat`` (all zero when it is not that seat's turn): the rules core's
        `legal_moves` on a one-slot game holding ``state`` (a `Position` where it lies)."""
        mask = np.zeros(self.size, dtype=np.int8)
        if seat is None or seat == state.current:
            if isinstance(state, Position):
                self._position.run_on(state.buffer, state.seat, legal_mask, mask)
            else:
                self._position.run(state, legal_mask, mask)
        return mask

    def describe(self, state: GameState, action: int | Move) -> str:
        """Human-readable text of a move by the seat to act, e.g. ``7 steals player 2's pile of 12 cards``."""
        move = self.decode(action) if not isinstance(action, tuple) else Move(*action)
        return describe_move(state, move)


def kind_name(kind: int) -> str:
    rank = shown_rank(kind)
    return f"joker as {RANK_NAMES[rank]}" if kind >= JOKER_KIND_OFFSET else RANK_NAMES[rank]


def with_article(rank_name: str) -> str:
    """``a 7``, ``an 8``, ``an A``: the indefinite article as the rank's name is spoken."""
    return f"{'an' if rank_name in ('A', '8') else 'a'} {rank_name}"


def describe_move(state: GameState, move: Move, mover: int | None = None, viewer: int | None = None) -> str:
    """Words for ``move`` played by ``mover`` (default: the seat to act) in ``state`` (before the move).

    ``viewer``: the seat the words are for; its pile is "your pile".
    """
    mover = state.current if mover is None else mover
    kind, target = move
    rank = shown_rank(kind)
    card = kind_name(kind)
    if target == TARGET_DISCARD:
        return f"{'joker' if kind >= JOKER_KIND_OFFSET else card} goes to the table"
    if target == TARGET_TABLE:
        if state.config.take_all:
            counts = rank_counts(state.table_cards)
            taken = counts[rank] + counts[-1]
            return f"{card} captures every {RANK_NAMES[rank]} on the table ({taken} card{'s' * (taken != 1)})"
        return f"{card} captures {with_article(RANK_NAMES[rank])} from the table"
    if target == TARGET_TABLE_JOKER:
        return f"{card} captures the joker on the table"
    seat = pile_seat(state, mover, target)
    size = len(state.piles[seat])
    if seat == mover:
        return f"{card} goes on own pile ({size + 1} cards)"
    owner = "your" if seat == viewer else f"player {seat}'s"
    return f"{card} steals {owner} pile of {size} card{'s' * (size != 1)}"
