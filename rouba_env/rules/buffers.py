"""How the rules core's games lie in memory: one int16 buffer of named arrays per batch of slots.

Compiled code receives a game as one int16 buffer, its ``current`` seats and one int64 parameter vector
(`GameArrays`); `rules_of` and `game_of` give it its named form (`Rules`, `Game`, declared with their
fields in `rouba_env.rules.layout`), which every rule of `rouba_env.rules.core` reads. The layout of that
vector is private to this module and to the encodings' `observation_starts`.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence, cast

import numba
import numpy as np
from numba.extending import intrinsic

from rouba_env.rules.cards import rank_of
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.layout import (
    EMPTY_PILE, LAST_MOVE_FIELDS, NO_SEAT, RANK_SLOTS, STATE_FIELDS, TALK_SIZE, Game, Rules, slot_shapes,
)
from rouba_env.rules.scoring import REWARD_MODES


RULE_PARAMS = len(Rules._fields)
P_BATCH, P_SEATS, P_CARDS, P_HAND_CARDS, P_TRACKED = range(RULE_PARAMS, RULE_PARAMS + 5)
P_OFFSETS = RULE_PARAMS + 5
CORE_PARAMS = P_OFFSETS + len(STATE_FIELDS)
"""Entries of the parameter vector this module owns; the encodings append theirs after them."""


class SlotLayout:
    """Where each `STATE_FIELDS` array of ``batch`` slots of one rules config lies in an int16 buffer, and the
    parameter vector that tells compiled code the rules and those places.

    What every owner of such a buffer shares: `GameArrays` holds one buffer of a layout, and every
    `rouba_env.rules.engine.Position` of a game shares one layout (of one slot, its cards named).
    ``extra_params`` are appended to the parameters for the encodings.
    """

    def __init__(self, config: RulesConfig, batch: int, *, move_stride: int, reward: str, auto_reset: bool,
                 track_cards: bool, extra_params: Sequence[int] = ()):
        n, C = config.num_players, config.total_cards
        hand_codes = max(config.hand_size, 1) if track_cards else 0
        tracked = C if track_cards else 0
        self.config, self.batch = config, batch
        self.rules = Rules(
            num_players=n, move_stride=move_stride, hand_size=config.hand_size, table_cards=config.table_cards,
            take_all=config.take_all, must_capture=config.must_capture,
            leftovers_to_last_capturer=config.leftovers_to_last_capturer, draw_from_deck=config.draw_from_deck,
            jokers=config.jokers, first_player=config.first_player, dealer=config.dealer, total_cards=C,
            reward_mode=REWARD_MODES.index(reward), auto_reset=auto_reset, track_cards=track_cards)
        self.shapes = slot_shapes(n, C, hand_codes, tracked)
        """Each field's shape in one slot."""
        offsets, start = [], 0
        for name in STATE_FIELDS:
            offsets.append(start)
            start += batch * math.prod(self.shapes[name])
        self.params = np.array([int(value) for value in self.rules] + [batch, n, C, hand_codes, tracked] + offsets
                               + list(extra_params), dtype=np.int64)
        self.size = start
        """The buffer's length."""

    def start(self, name: str) -> int:
        """Where field ``name`` starts in the buffer."""
        return int(self.params[P_OFFSETS + STATE_FIELDS.index(name)])

    def blank(self) -> np.ndarray:
        """A buffer before any deal: everything zero but the markers of nothing (no pile top, no capturer, no
        last move)."""
        buffer = np.zeros(self.size, dtype=np.int16)
        batch = self.batch
        for name, stride in (("top", int(self.params[P_SEATS])), ("last_capturer", 1),
                             ("last_move", len(LAST_MOVE_FIELDS))):
            start = self.start(name)
            if name == "last_move":
                buffer[start:start + batch * stride:stride] = NO_SEAT
            else:
                buffer[start:start + batch * stride] = EMPTY_PILE if name == "top" else NO_SEAT
        return buffer

    def views(self, buffer: np.ndarray) -> dict[str, np.ndarray]:
        """Every `STATE_FIELDS` array of a buffer of this layout, by name, as ``[batch, ...]`` views."""
        views = {}
        for name in STATE_FIELDS:
            shape = (self.batch, *self.shapes[name])
            offset = self.start(name)
            views[name] = buffer[offset:offset + math.prod(shape)].reshape(shape)
        return views


class GameArrays:
    """The arrays of ``batch`` slots of one rules config, as Python and compiled code share them.

    ``buffer`` (int16, laid out by ``layout``) holds every `STATE_FIELDS` array, each a named numpy view
    here (``arrays.hands[b, seat, rank]``); ``current`` is int64; ``params`` tells compiled code the
    rules and where each field lies.
    """

    hands: np.ndarray
    hand_count: np.ndarray
    table_cards: np.ndarray
    seen: np.ndarray
    pile: np.ndarray
    top: np.ndarray
    talk: np.ndarray
    deck: np.ndarray
    deck_len: np.ndarray
    last_capturer: np.ndarray
    turn: np.ndarray
    last_move: np.ndarray
    hand_codes: np.ndarray
    table_codes: np.ndarray
    table_len: np.ndarray
    pile_codes: np.ndarray
    deck_codes: np.ndarray
    """Views into ``buffer``, one per `STATE_FIELDS` name (the `Game` fields of the same names)."""

    def __init__(self, config: RulesConfig, batch: int, *, move_stride: int, reward: str, auto_reset: bool,
                 track_cards: bool, extra_params: Sequence[int] = ()):
        self.layout = SlotLayout(config, batch, move_stride=move_stride, reward=reward, auto_reset=auto_reset,
                                 track_cards=track_cards, extra_params=extra_params)
        self.rules, self.shapes, self.params = self.layout.rules, self.layout.shapes, self.layout.params
        self.batch = batch
        self.buffer = self.layout.blank()
        self.current = np.full(batch, NO_SEAT, dtype=np.int64)
        self._bind_views()

    def _bind_views(self) -> None:
        for name, view in self.layout.views(self.buffer).items():
            setattr(self, name, view)

    def views(self, buffer: np.ndarray) -> dict[str, np.ndarray]:
        """Every `STATE_FIELDS` array of another buffer of this layout (a copy of ``self.buffer``), by name."""
        return self.layout.views(buffer)

    def __getstate__(self) -> dict:
        """Pickled without the views (a pickled view would be a copy); `__setstate__` makes them again."""
        return {key: value for key, value in self.__dict__.items() if key not in STATE_FIELDS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_views()


@numba.njit(cache=True, nogil=True, inline="always")
def rules_of(p) -> Rules:
    """The named rules of a parameter vector (`GameArrays.params`)."""
    return Rules(p[0], p[1], p[2], p[3], p[4] != 0, p[5] != 0, p[6] != 0, p[7] != 0, p[8] != 0, p[9], p[10], p[11],
                 p[12], p[13] != 0, p[14] != 0)


def _borrowed(typingctx, array):
    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        view = context.make_array(signature.return_type)(context, builder)
        context.populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                               itemsize=source.itemsize, meminfo=None)
        return view._getvalue()
    return array(array), codegen


borrowed = cast(Callable[[np.ndarray], np.ndarray], intrinsic(_borrowed))
"""The same array without a share in its memory: compiled code reads it without counting references.

Only for views that live inside one compiled call, while the caller holds the array itself.
"""


@numba.njit(cache=True, nogil=True, inline="always")
def _field(buffer, p, index, size):
    start = p[P_OFFSETS + index]
    return buffer[start:start + size]


@numba.njit(cache=True, nogil=True, inline="always")
def game_of(p, buffer, current) -> Game:
    """The named arrays of a game buffer (`GameArrays`), as views."""
    B, n, C, H, T = p[P_BATCH], p[P_SEATS], p[P_CARDS], p[P_HAND_CARDS], p[P_TRACKED]
    return Game(
        borrowed(_field(buffer, p, 0, B * n * RANK_SLOTS).reshape((B, n, RANK_SLOTS))),
        borrowed(_field(buffer, p, 1, B * n).reshape((B, n))),
        borrowed(_field(buffer, p, 2, B * RANK_SLOTS).reshape((B, RANK_SLOTS))),
        borrowed(_field(buffer, p, 3, B * RANK_SLOTS).reshape((B, RANK_SLOTS))),
        borrowed(_field(buffer, p, 4, B * n).reshape((B, n))),
        borrowed(_field(buffer, p, 5, B * n).reshape((B, n))),
        borrowed(_field(buffer, p, 6, B * n * TALK_SIZE).reshape((B, n, TALK_SIZE))),
        borrowed(_field(buffer, p, 7, B * C).reshape((B, C))),
        borrowed(_field(buffer, p, 8, B)),
        borrowed(_field(buffer, p, 9, B)),
        borrowed(_field(buffer, p, 10, B)),
        borrowed(_field(buffer, p, 11, B * 4).reshape((B, 4))),
        borrowed(current),
        borrowed(_field(buffer, p, 12, B * n * H).reshape((B, n, H))),
        borrowed(_field(buffer, p, 13, B * T).reshape((B, T))),
        borrowed(_field(buffer, p, 14, B)),
        borrowed(_field(buffer, p, 15, B * n * T).reshape((B, n, T))),
        borrowed(_field(buffer, p, 16, B * T).reshape((B, T))),
    )


def deck_arrays(config: RulesConfig) -> tuple[np.ndarray, np.ndarray]:
    """(rank slot, code) of each card of `RulesConfig.unshuffled_deck`, the order a shuffle permutes."""
    deck = config.unshuffled_deck()
    return (np.array([rank_of(card) for card in deck], dtype=np.int16), np.array(deck, dtype=np.int16))

