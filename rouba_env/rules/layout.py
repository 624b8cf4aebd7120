"""A game's layout, declared once: the fields of a batch of game slots, their shapes and the markers they hold.

`GAME_FIELDS` declares each field of a batch of slots (name, dtype, shape in the symbols `SHAPE_SYMBOLS`);
`Game` names them in the same order, `rouba_env.rules.buffers` lays the int16 ones out in one buffer and
gives compiled code their named form, and `slot_shapes` is read from the declaration. `Rules` is the
rules' parameters as compiled code reads them. The rules core (`rouba_env.rules.core`) and the buffers
both read this module; neither imports the other.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rouba_env.rules.cards import NUM_RANKS

RANK_SLOTS = NUM_RANKS + 1
"""Per-rank count arrays: 13 ranks, then the joker slot."""
NO_SEAT = -1
EMPTY_PILE = -1
"""A pile's top when it is empty."""
TALK_PLAYED = NUM_RANKS
"""A seat's table-talk row: 13 passed-up counts (natural ranks), then 14 played counts (rank slots)."""
TALK_SIZE = NUM_RANKS + RANK_SLOTS
LAST_MOVE_FIELDS = ("seat", "kind", "target", "card")
"""A slot's ``last_move`` row: who played, the move, and the card (its code with ``track_cards``, else its
rank slot); seat `NO_SEAT` before the first move."""

SHAPE_SYMBOLS = {"B": "slots in the batch", "n": "seats", "C": "cards in play",
                 "H": "card codes kept per hand (the hand size with track_cards, else 0)",
                 "T": "card codes kept per table, pile and deck (C with track_cards, else 0)"}
"""What the letters of a field's shape stand for; a number is a fixed size."""
GAME_FIELDS: tuple[tuple[str, str, tuple[str | int, ...]], ...] = (
    ("hands", "int16", ("B", "n", RANK_SLOTS)),
    ("hand_count", "int16", ("B", "n")),
    ("table_cards", "int16", ("B", RANK_SLOTS)),
    ("seen", "int16", ("B", RANK_SLOTS)),
    ("pile", "int16", ("B", "n")),
    ("top", "int16", ("B", "n")),
    ("talk", "int16", ("B", "n", TALK_SIZE)),
    ("deck", "int16", ("B", "C")),
    ("deck_len", "int16", ("B",)),
    ("last_capturer", "int16", ("B",)),
    ("turn", "int16", ("B",)),
    ("last_move", "int16", ("B", len(LAST_MOVE_FIELDS))),
    ("current", "int64", ("B",)),
    ("hand_codes", "int16", ("B", "n", "H")),
    ("table_codes", "int16", ("B", "T")),
    ("table_len", "int16", ("B",)),
    ("pile_codes", "int16", ("B", "n", "T")),
    ("deck_codes", "int16", ("B", "T")),
)
"""Every field of a batch of game slots, in `Game`'s order: (name, dtype, shape). The int16 fields share one
buffer, in this order (`STATE_FIELDS`); ``current`` is an int64 array of its own."""
STATE_FIELDS = tuple(name for name, dtype, _ in GAME_FIELDS if dtype == "int16")
"""The fields kept in the int16 buffer, in buffer order."""


class Rules(NamedTuple):
    """The rules' parameters as compiled code reads them (`rouba_env.rules.buffers.rules_of`)."""

    num_players: int
    move_stride: int
    """Targets per kind in a move table: 3 + the seats the encoding pads to."""
    hand_size: int
    table_cards: int
    take_all: bool
    must_capture: bool
    leftovers_to_last_capturer: bool
    draw_from_deck: bool
    jokers: bool
    first_player: int
    dealer: int
    total_cards: int
    reward_mode: int
    """Index into `rouba_env.rules.scoring.REWARD_MODES`."""
    auto_reset: bool
    track_cards: bool


class Game(NamedTuple):
    """Every slot's state, the fields of `GAME_FIELDS` in its order: row ``b`` of each array is slot ``b``'s
    game (`rouba_env.rules.buffers.game_of`).

    The arrays are borrowed views: reading a field costs no reference count, which would otherwise cost
    more than the rule that reads it.
    """

    hands: np.ndarray
    """Cards of each rank slot in each seat's hand."""
    hand_count: np.ndarray
    """Cards in each hand."""
    table_cards: np.ndarray
    """Face-up table cards per rank slot."""
    seen: np.ndarray
    """Cards per rank slot that have been face up (table and piles)."""
    pile: np.ndarray
    """Cards in each seat's pile (its score)."""
    top: np.ndarray
    """Rank showing on each pile (a joker shows its name), or `EMPTY_PILE`."""
    talk: np.ndarray
    """The table talk of each seat since its hand was dealt (`TALK_PLAYED`)."""
    deck: np.ndarray
    """Rank slot of each undealt card; the top of the deck is at ``deck_len - 1``."""
    deck_len: np.ndarray
    last_capturer: np.ndarray
    """Last seat that captured from the table or stole a pile, or `NO_SEAT`."""
    turn: np.ndarray
    """Moves played so far."""
    last_move: np.ndarray
    """`LAST_MOVE_FIELDS`."""
    current: np.ndarray
    """The seat to act, or `NO_SEAT` once the game is over."""
    hand_codes: np.ndarray
    """Each hand's card codes in the order dealt."""
    table_codes: np.ndarray
    """The table's card codes in the order laid."""
    table_len: np.ndarray
    pile_codes: np.ndarray
    """Each pile's card codes, bottom first."""
    deck_codes: np.ndarray
    """The deck's card codes, as ``deck``."""


def field_shape(shape: tuple[str | int, ...], sizes: dict[str, int]) -> tuple[int, ...]:
    """A declared shape with its symbols' sizes put in (``sizes``: `SHAPE_SYMBOLS` to sizes)."""
    return tuple(sizes[size] if isinstance(size, str) else size for size in shape)


def slot_shapes(num_players: int, total_cards: int, hand_codes: int, tracked: int) -> dict[str, tuple[int, ...]]:
    """Each buffer field's shape for one slot (``tracked``: card codes kept, ``total_cards`` or 0)."""
    sizes = {"n": num_players, "C": total_cards, "H": hand_codes, "T": tracked}
    return {name: field_shape(shape[1:], sizes) for name, dtype, shape in GAME_FIELDS if name in STATE_FIELDS}
