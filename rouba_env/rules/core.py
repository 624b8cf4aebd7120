"""The rules of play, compiled once: each rule a small function on a `Game`'s arrays.

A `Game` holds any number of game *slots* (one row of every array per slot);
each rule function works on one slot ``b`` of it, and `Rules` holds the
rules' parameters by name. The batched engine loops these functions over
thousands of slots; `rouba_env.single_game.SingleGame` runs them on a game of one slot,
so a single game and slot 0 of a batch are the same code.

The rules look only at ranks: a slot keeps rank counts of every hand, the
table and the seen cards, each pile's size and top, and its deck as ranks.
Card identity (suits) matters only to what people see (frames, the browser,
replays): with ``Rules.track_cards`` a slot also keeps the card codes of
every hand, the table, each pile and the deck, in the order the rules page's
table would show them, moved by the same functions.

Compiled code receives a game as one int16 buffer, its ``current`` seats and
one int64 parameter vector (`GameArrays`); `rules_of` and `game_of` give it
its named form. The layout of that vector is private to this module and to
the encodings' `observation_starts`.
"""

from __future__ import annotations

import math
import threading
from itertools import chain
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence, cast

import numba
import numpy as np
from numba.extending import intrinsic

from rouba_env.rules.cards import JOKER_RANK, NUM_RANKS, rank_of
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.scoring import REWARD_MODES, write_final_rewards

if TYPE_CHECKING:  # the card-level state a slot can be loaded from
    from rouba_env.rules.engine import GameState

RANK_SLOTS = NUM_RANKS + 1
"""Per-rank count arrays: 13 ranks, then the joker slot."""
JOKER_SLOT = JOKER_RANK
JOKER_KIND_OFFSET = NUM_RANKS
"""Kinds 0..12 play a natural card of that rank; kind 13 + r plays a joker named as rank r."""
NUM_KINDS = 2 * NUM_RANKS
"""Card kinds a move can play: 13 natural ranks, then a joker named as each of them."""
TARGET_TABLE = 0
"""Capture a table card of the played (or named) rank."""
TARGET_DISCARD = 1
"""Leave the card face up on the table."""
TARGET_TABLE_JOKER = 2
"""Capture a joker lying on the table (any card may); unused with ``take_all``."""
TARGET_PILE_OFFSET = 3
"""Target ``3 + k`` is the pile of the seat ``k`` places to the mover's left (k = 0: own pile)."""
NO_SEAT = -1
EMPTY_PILE = -1
"""A pile's top when it is empty."""
TALK_PLAYED = NUM_RANKS
"""A seat's table-talk row: 13 passed-up counts (natural ranks), then 14 played counts (rank slots)."""
TALK_SIZE = NUM_RANKS + RANK_SLOTS
LAST_MOVE_FIELDS = ("seat", "kind", "target", "card")
"""A slot's ``last_move`` row: who played, the move, and the card (its code with ``track_cards``, else its
rank slot); seat `NO_SEAT` before the first move."""

card_rank = numba.njit(cache=True, nogil=True, inline="always")(rank_of)
"""The cards' one rank rule, compiled."""
final_rewards = numba.njit(cache=True, nogil=True, inline="always")(write_final_rewards)
"""The rules' one definition of the final rewards, compiled."""


def move_index(kind, target, stride):
    """Where move (kind, target) sits in a move table with ``stride`` targets per kind.

    This is the action encoding's index (`rouba_env.encoding.actions`): ``stride = 3 + max_players``.
    """
    return kind * stride + target


def move_at(index, stride):
    """(kind, target) of a move table index: the inverse of `move_index`."""
    kind = index // stride
    return kind, index - kind * stride


index_of = numba.njit(cache=True, nogil=True, inline="always")(move_index)
move_of = numba.njit(cache=True, nogil=True, inline="always")(move_at)


class Rules(NamedTuple):
    """The rules' parameters as compiled code reads them (`rules_of`)."""

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
    """Every slot's state: row ``b`` of each array is slot ``b``'s game (`game_of`).

    The arrays are borrowed views (`borrowed`): reading a field costs no reference count, which would
    otherwise cost more than the rule that reads it.
    """

    hands: np.ndarray
    """[B, n, 14]: cards of each rank slot in each seat's hand."""
    hand_count: np.ndarray
    """[B, n]: cards in each hand."""
    table: np.ndarray
    """[B, 14]: face-up table cards per rank slot."""
    seen: np.ndarray
    """[B, 14]: cards per rank slot that have been face up (table and piles)."""
    pile: np.ndarray
    """[B, n]: cards in each seat's pile (its score)."""
    top: np.ndarray
    """[B, n]: rank showing on each pile (a joker shows its name), or `EMPTY_PILE`."""
    talk: np.ndarray
    """[B, n, 27]: the table talk of each seat since its hand was dealt (`TALK_PLAYED`)."""
    deck: np.ndarray
    """[B, C]: rank slot of each undealt card; the top of the deck is at ``deck_len - 1``."""
    deck_len: np.ndarray
    last_capturer: np.ndarray
    """[B]: last seat that captured from the table or stole a pile, or `NO_SEAT`."""
    turn: np.ndarray
    """[B]: moves played so far."""
    last_move: np.ndarray
    """[B, 4]: `LAST_MOVE_FIELDS`."""
    current: np.ndarray
    """int64[B]: the seat to act, or `NO_SEAT` once the game is over."""
    hand_cards: np.ndarray
    """[B, n, H] (H = 0 without ``track_cards``): each hand's card codes in the order dealt."""
    table_cards: np.ndarray
    """[B, C or 0]: the table's card codes in the order laid."""
    table_len: np.ndarray
    pile_cards: np.ndarray
    """[B, n, C or 0]: each pile's card codes, bottom first."""
    deck_cards: np.ndarray
    """[B, C or 0]: the deck's card codes, as ``deck``."""


STATE_FIELDS = tuple(name for name in Game._fields if name != "current")
"""The fields kept in the int16 buffer, in buffer order (``current`` is its own int64 array)."""
RULE_PARAMS = len(Rules._fields)
P_BATCH, P_SEATS, P_CARDS, P_HAND_CARDS, P_TRACKED = range(RULE_PARAMS, RULE_PARAMS + 5)
P_OFFSETS = RULE_PARAMS + 5
CORE_PARAMS = P_OFFSETS + len(STATE_FIELDS)
"""Entries of the parameter vector this module owns; the encodings append theirs after them."""


def slot_shapes(num_players: int, total_cards: int, hand_cards: int, tracked: int) -> dict[str, tuple[int, ...]]:
    """Each buffer field's shape for one slot (``tracked``: card codes kept, ``total_cards`` or 0)."""
    n, C = num_players, total_cards
    return {
        "hands": (n, RANK_SLOTS), "hand_count": (n,), "table": (RANK_SLOTS,), "seen": (RANK_SLOTS,),
        "pile": (n,), "top": (n,), "talk": (n, TALK_SIZE), "deck": (C,), "deck_len": (), "last_capturer": (),
        "turn": (), "last_move": (len(LAST_MOVE_FIELDS),), "hand_cards": (n, hand_cards), "table_cards": (tracked,),
        "table_len": (), "pile_cards": (n, tracked), "deck_cards": (tracked,),
    }


def slot_layout(config: RulesConfig, batch: int, *, move_stride: int, reward: str, auto_reset: bool, track_cards: bool,
                extra_params: Sequence[int] = ()) -> tuple[Rules, dict[str, tuple[int, ...]], np.ndarray, int]:
    """(rules, each field's shape per slot, the parameter vector, the buffer's length) of ``batch`` slots."""
    n, C = config.num_players, config.total_cards
    hand_cards = max(config.hand_size, 1) if track_cards else 0
    tracked = C if track_cards else 0
    rules = Rules(
        num_players=n, move_stride=move_stride, hand_size=config.hand_size, table_cards=config.table_cards,
        take_all=config.take_all, must_capture=config.must_capture,
        leftovers_to_last_capturer=config.leftovers_to_last_capturer, draw_from_deck=config.draw_from_deck,
        jokers=config.jokers, first_player=config.first_player, dealer=config.dealer, total_cards=C,
        reward_mode=REWARD_MODES.index(reward), auto_reset=auto_reset, track_cards=track_cards)
    shapes = slot_shapes(n, C, hand_cards, tracked)
    offsets, start = [], 0
    for name in STATE_FIELDS:
        offsets.append(start)
        start += batch * math.prod(shapes[name])
    params = np.array([int(value) for value in rules] + [batch, n, C, hand_cards, tracked] + offsets
                      + list(extra_params), dtype=np.int64)
    return rules, shapes, params, start


def blank_buffer(params: np.ndarray, size: int, batch: int) -> np.ndarray:
    """A buffer of ``batch`` slots before any deal: everything zero but the markers of nothing (no pile top,
    no capturer, no last move)."""
    buffer = np.zeros(size, dtype=np.int16)
    for name, stride in (("top", int(params[P_SEATS])), ("last_capturer", 1), ("last_move", len(LAST_MOVE_FIELDS))):
        start = int(params[P_OFFSETS + STATE_FIELDS.index(name)])
        if name == "last_move":
            buffer[start:start + batch * stride:stride] = NO_SEAT
        else:
            buffer[start:start + batch * stride] = EMPTY_PILE if name == "top" else NO_SEAT
    return buffer


class GameArrays:
    """The arrays of ``batch`` slots of one rules config, as Python and compiled code share them.

    ``buffer`` (int16) holds every `STATE_FIELDS` array, each a named numpy view here
    (``arrays.hands[b, seat, rank]``); ``current`` is int64; ``params`` tells compiled code the
    rules and where each field lies. ``extra_params`` are appended for the encodings.
    """

    hands: np.ndarray
    hand_count: np.ndarray
    table: np.ndarray
    seen: np.ndarray
    pile: np.ndarray
    top: np.ndarray
    talk: np.ndarray
    deck: np.ndarray
    deck_len: np.ndarray
    last_capturer: np.ndarray
    turn: np.ndarray
    last_move: np.ndarray
    hand_cards: np.ndarray
    table_cards: np.ndarray
    table_len: np.ndarray
    pile_cards: np.ndarray
    deck_cards: np.ndarray
    """Views into ``buffer``, one per `STATE_FIELDS` name (the `Game` fields of the same names)."""

    def __init__(self, config: RulesConfig, batch: int, *, move_stride: int, reward: str, auto_reset: bool,
                 track_cards: bool, extra_params: Sequence[int] = ()):
        self.rules, self.shapes, self.params, size = slot_layout(config, batch, move_stride=move_stride, reward=reward,
                                                                 auto_reset=auto_reset,
                                                                 track_cards=track_cards, extra_params=extra_params)
        self.batch = batch
        self.buffer = blank_buffer(self.params, size, batch)
        self.current = np.full(batch, NO_SEAT, dtype=np.int64)
        self._bind_views()

    def _bind_views(self) -> None:
        for name, view in self.views(self.buffer).items():
            setattr(self, name, view)

    def load(self, b: int, state: "GameState") -> None:
        """Write a card-level `GameState` (of these rules) into slot ``b``; its cards too with ``track_cards``
        (`load_slot`)."""
        load_slot(self.params, self.buffer, self.current, b, state=state)

    def views(self, buffer: np.ndarray) -> dict[str, np.ndarray]:
        """Every `STATE_FIELDS` array of another buffer of this layout (a copy of ``self.buffer``), by name."""
        views = {}
        for index, name in enumerate(STATE_FIELDS):
            shape = (self.batch, *self.shapes[name])
            offset, size = int(self.params[P_OFFSETS + index]), math.prod(shape)
            views[name] = buffer[offset:offset + size].reshape(shape)
        return views

    def __getstate__(self) -> dict:
        """Pickled without the views (a pickled view would be a copy); `__setstate__` makes them again."""
        return {key: value for key, value in self.__dict__.items() if key not in STATE_FIELDS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_views()


def load_slot(params: np.ndarray, buffer: np.ndarray, current: np.ndarray, b: int, *, state: "GameState") -> None:
    """Write a card-level `GameState` into slot ``b`` of a game's arrays (``params``, ``buffer``, ``current``).

    The card lists travel as one array of codes (hands, table, piles, deck) with their lengths, and one
    compiled pass counts them into the slot. A state that does not fit these rules' slot (more cards in a
    place than it can hold) is refused before anything is written.
    """
    lists = [*state.hands, state.table, *state.piles, state.deck]
    n, total = int(params[P_SEATS]), int(params[P_CARDS])
    if len(state.hands) != n or len(state.piles) != n:
        raise ValueError(f"the state seats {len(state.hands)} hands and {len(state.piles)} piles; these rules "
                         f"seat {n}")
    hand_room = int(params[P_HAND_CARDS])
    room = {"deck": (len(state.deck), total)}
    if int(params[P_TRACKED]):
        room.update(hand=(max(map(len, state.hands)), hand_room), table=(len(state.table), total),
                    pile=(max(map(len, state.piles)), total))
    for part, (size, most) in room.items():
        if size > most:
            raise ValueError(f"the state's {part} holds {size} cards; under these rules it holds at most {most}")
    cards = np.fromiter(chain.from_iterable(lists), dtype=np.int16, count=sum(map(len, lists)))
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    talk = np.array([passed + played for passed, played in zip(state.passed, state.played)], dtype=np.int16)
    last = (NO_SEAT, 0, 0, 0) if state.last_move is None else (
        state.last_move[0], state.last_move[1][0], state.last_move[1][1], state.last_move[2])
    _load_slot(params, buffer, current, b, cards, lengths, np.asarray(state.pile_tops, dtype=np.int16), talk,
               np.array([state.current, state.last_capturer, state.turn, *last], dtype=np.int64))


class OnePosition:
    """A one-slot game that card-level `GameState` s are loaded into, one at a time, to run a compiled rule
    on them: how the encodings give the observation and the legal moves of a `GameState`.

    Made on first use; a lock keeps two threads sharing it from loading it at once; it pickles without
    its arrays.
    """

    def __init__(self, config: RulesConfig, move_stride: int, extra_params: Sequence[int] = ()):
        self.config, self.move_stride, self.extra_params = config, move_stride, list(extra_params)
        self._arrays: GameArrays | None = None
        self._tracked_params: np.ndarray | None = None
        """The parameters of a `Position`'s layout (its cards named) with this user's stride and extras."""
        self._lock = threading.Lock()

    def run_on(self, buffer: np.ndarray, current: np.ndarray, kernel, *args):
        """``kernel(params, buffer, current, *args)`` on a one-slot buffer with the cards named (a
        `rouba_env.rules.engine.Position`'s), read where it lies under this user's parameters."""
        if self._tracked_params is None:
            self._tracked_params = GameArrays(self.config, 1, move_stride=self.move_stride, reward=REWARD_MODES[0],
                                              auto_reset=False, track_cards=True,
                                              extra_params=self.extra_params).params
        return kernel(self._tracked_params, buffer, current, *args)

    def run(self, state: "GameState", kernel, *args):
        """``kernel(params, buffer, current, *args)`` on slot 0 holding ``state``; its answer."""
        with self._lock:
            if self._arrays is None:
                self._arrays = GameArrays(self.config, 1, move_stride=self.move_stride, reward=REWARD_MODES[0],
                                          auto_reset=False, track_cards=False,
                                          extra_params=self.extra_params)
            arrays = self._arrays
            arrays.load(0, state)
            return kernel(arrays.params, arrays.buffer, arrays.current, *args)

    def __getstate__(self) -> dict:
        return {key: value for key, value in self.__dict__.items()
                if key not in ("_arrays", "_tracked_params", "_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _arrays=None, _tracked_params=None, _lock=threading.Lock())


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


@numba.njit(cache=True, nogil=True)
def _load_slot(p, buffer, current, b, cards, lengths, tops, talk, scalars):
    """`GameArrays.load`'s compiled pass: ``cards`` holds every hand, the table, every pile and the deck in
    turn (``lengths`` of each); ``scalars``: the seat to act, the last capturer, the turn, the last move."""
    r, g = rules_of(p), game_of(p, buffer, current)
    n = r.num_players
    g.hands[b] = 0
    g.table[b] = 0
    g.seen[b] = 0
    start = 0
    for part in range(2 * n + 2):
        size = lengths[part]
        for i in range(start, start + size):
            card, slot = cards[i], card_rank(cards[i])
            j = i - start
            if part < n:
                g.hands[b, part, slot] += 1
                if r.track_cards:
                    g.hand_cards[b, part, j] = card
            elif part == n:
                g.table[b, slot] += 1
                g.seen[b, slot] += 1
                if r.track_cards:
                    g.table_cards[b, j] = card
            elif part < 2 * n + 1:
                g.seen[b, slot] += 1
                if r.track_cards:
                    g.pile_cards[b, part - n - 1, j] = card
            else:
                g.deck[b, j] = slot
                if r.track_cards:
                    g.deck_cards[b, j] = card
        if part < n:
            g.hand_count[b, part] = size
        elif part == n:
            g.table_len[b] = size
        elif part < 2 * n + 1:
            g.pile[b, part - n - 1] = size
        else:
            g.deck_len[b] = size
        start += size
    for seat in range(n):
        g.top[b, seat] = tops[seat]
        for i in range(TALK_SIZE):
            g.talk[b, seat, i] = talk[seat, i]
    current[b] = scalars[0]
    g.last_capturer[b] = scalars[1]
    g.turn[b] = scalars[2]
    for i in range(4):
        g.last_move[b, i] = scalars[3 + i]
    if not r.track_cards and scalars[3] >= 0:
        g.last_move[b, 3] = card_rank(scalars[6])


# ------------------------------------------------------------------ dealing


@numba.njit(cache=True, nogil=True, inline="always")
def forget_table_talk(r: Rules, g: Game, b, seat):
    """A new hand: what the table said to ``seat`` starts afresh."""
    talk = g.talk[b, seat]
    for i in range(TALK_SIZE):
        talk[i] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def give_top_card(r: Rules, g: Game, b, seat):
    """Move the deck's top card into ``seat``'s hand."""
    left = g.deck_len[b] - 1
    g.deck_len[b] = left
    g.hands[b, seat, g.deck[b, left]] += 1
    if r.track_cards:
        g.hand_cards[b, seat, g.hand_count[b, seat]] = g.deck_cards[b, left]
    g.hand_count[b, seat] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def deal_hands(r: Rules, g: Game, b):
    """Deal one card at a time from left of the dealer, up to the hand size, until the deck runs out.

    A new deal: every seat's table talk starts afresh.
    """
    for seat in range(r.num_players):
        forget_table_talk(r, g, b, seat)
    for _ in range(r.hand_size):
        seat = r.first_player
        for _offset in range(r.num_players):
            if g.deck_len[b] == 0:
                return
            give_top_card(r, g, b, seat)
            seat += 1
            if seat == r.num_players:
                seat = 0


@numba.njit(cache=True, nogil=True, inline="always")
def draw(r: Rules, g: Game, b, seat):
    """``draw_from_deck``: ``seat`` flips the deck's top card (a new hand: its table talk starts afresh)."""
    give_top_card(r, g, b, seat)
    forget_table_talk(r, g, b, seat)


@numba.njit(cache=True, nogil=True, inline="always")
def lay_table(r: Rules, g: Game, b):
    """Lay the table cards face up from the top of the deck."""
    for _ in range(r.table_cards):
        left = g.deck_len[b] - 1
        g.deck_len[b] = left
        rank = g.deck[b, left]
        g.table[b, rank] += 1
        g.seen[b, rank] += 1
        if r.track_cards:
            g.table_cards[b, g.table_len[b]] = g.deck_cards[b, left]
        g.table_len[b] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def start_game(r: Rules, g: Game, b, order, deck_ranks, deck_cards):
    """Deal a new game in slot ``b`` from a shuffle ``order`` of the unshuffled deck.

    ``deck_ranks`` and ``deck_cards``: rank slot and code of each card of `RulesConfig.unshuffled_deck`;
    the deck is ``order`` applied to it, its last card on top (`rouba_env.rules.seeding.shuffle_order`).
    Hands are dealt one card at a time starting left of the dealer, then the table is laid. With
    ``draw_from_deck`` nobody is dealt a hand: the table is laid and the first player flips the top card.
    """
    g.hands[b] = 0
    g.talk[b] = 0
    g.hand_count[b] = 0
    g.pile[b] = 0
    g.top[b] = EMPTY_PILE
    g.table[b] = 0
    g.seen[b] = 0
    deck = g.deck[b]
    for j in range(r.total_cards):
        deck[j] = deck_ranks[order[j]]
    if r.track_cards:
        cards = g.deck_cards[b]
        for j in range(r.total_cards):
            cards[j] = deck_cards[order[j]]
    g.deck_len[b] = r.total_cards
    g.table_len[b] = 0
    g.last_capturer[b] = NO_SEAT
    g.turn[b] = 0
    g.last_move[b, 0] = NO_SEAT
    if r.draw_from_deck:
        lay_table(r, g, b)
        draw(r, g, b, r.first_player)
    else:
        deal_hands(r, g, b)
        lay_table(r, g, b)
    g.current[b] = r.first_player


# ------------------------------------------------------------------ legal moves


@numba.njit(cache=True, nogil=True, inline="always")
def legal_moves(r: Rules, g: Game, b, out):
    """Mark every legal move of the seat to act in the move table ``out`` (all zero once the game is over).

    A card showing rank r may capture a table card of rank r (with ``take_all``
    a table joker also counts), capture a table joker (not with ``take_all``),
    or go on any pile whose top shows r (the own pile or a steal). It may be
    discarded only if it can capture nothing, unless ``must_capture`` is off.
    A joker may be named as any rank; a discarded joker is named nothing (its
    one discard move uses the first joker kind).
    """
    hands, table, tops, current = g.hands, g.table, g.top, g.current
    for i in range(out.shape[0]):
        out[i] = 0
    mover = current[b]
    if mover < 0:
        return
    stride = r.move_stride
    has_joker = hands[b, mover, JOKER_SLOT] > 0
    table_jokers = table[b, JOKER_SLOT] > 0
    piles_showing = 0
    seat = mover
    for offset in range(r.num_players):
        top = tops[b, seat]
        if top >= 0:
            piles_showing |= 1 << top
            if hands[b, mover, top] > 0:
                out[index_of(top, TARGET_PILE_OFFSET + offset, stride)] = 1
            if has_joker:
                out[index_of(JOKER_KIND_OFFSET + top, TARGET_PILE_OFFSET + offset, stride)] = 1
        seat += 1
        if seat == r.num_players:
            seat = 0
    joker_on_table = table_jokers and not r.take_all
    joker_can_capture = False
    for rank in range(NUM_RANKS):
        on_table = table[b, rank] > 0 or (r.take_all and table_jokers)
        can_capture = on_table or joker_on_table or ((piles_showing >> rank) & 1) != 0
        if hands[b, mover, rank] > 0:
            if on_table:
                out[index_of(rank, TARGET_TABLE, stride)] = 1
            if joker_on_table:
                out[index_of(rank, TARGET_TABLE_JOKER, stride)] = 1
            if not can_capture or not r.must_capture:
                out[index_of(rank, TARGET_DISCARD, stride)] = 1
        if has_joker:
            if on_table:
                out[index_of(JOKER_KIND_OFFSET + rank, TARGET_TABLE, stride)] = 1
            if joker_on_table:
                out[index_of(JOKER_KIND_OFFSET + rank, TARGET_TABLE_JOKER, stride)] = 1
            if can_capture:
                joker_can_capture = True
    if has_joker and (not joker_can_capture or not r.must_capture):
        out[index_of(JOKER_KIND_OFFSET, TARGET_DISCARD, stride)] = 1


# ------------------------------------------------------------------ playing a move


@numba.njit(cache=True, nogil=True, inline="always")
def shown_rank(kind):
    """Rank a played kind shows: a natural card's own rank or a joker's named rank."""
    return kind - JOKER_KIND_OFFSET if kind >= JOKER_KIND_OFFSET else kind


@numba.njit(cache=True, nogil=True, inline="always")
def hand_slot(kind):
    """The rank slot of the card a move of ``kind`` takes from the hand: its rank, or the joker slot."""
    return JOKER_SLOT if kind >= JOKER_KIND_OFFSET else kind


@numba.njit(cache=True, nogil=True, inline="always")
def pile_seat(r: Rules, mover, target):
    """Absolute seat whose pile a pile target of ``mover`` points at."""
    seat = mover + target - TARGET_PILE_OFFSET
    return seat - r.num_players if seat >= r.num_players else seat


@numba.njit(cache=True, nogil=True, inline="always")
def table_talk(r: Rules, g: Game, b, mover, kind, target):
    """Record what ``mover`` tells the table by playing (kind, target), before it is played.

    A natural rank is passed up when a card of it could be taken (it lies on the table, or another
    seat's pile shows it) and the move plays a card of another rank; a discarded joker shows no rank
    and so passes every takeable rank up. The card's rank slot is counted as played. Public facts.
    """
    table, tops, talk = g.table[b], g.top[b], g.talk[b, mover]
    is_joker = kind >= JOKER_KIND_OFFSET
    shown = -1 if (is_joker and target == TARGET_DISCARD) else shown_rank(kind)
    for rank in range(NUM_RANKS):
        if rank == shown:
            continue
        takeable = table[rank] > 0
        seat = mover
        for _offset in range(r.num_players - 1):
            if takeable:
                break
            seat += 1
            if seat == r.num_players:
                seat = 0
            takeable = tops[seat] == rank
        if takeable:
            talk[rank] += 1
    talk[TALK_PLAYED + (JOKER_SLOT if is_joker else kind)] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def take_from_hand(r: Rules, g: Game, b, seat, slot):
    """Take a card of rank slot ``slot`` from ``seat``'s hand (the first such in hand); its code, or ``slot``."""
    g.hands[b, seat, slot] -= 1
    count = g.hand_count[b, seat] - 1
    g.hand_count[b, seat] = count
    if not r.track_cards:
        return slot
    cards = g.hand_cards[b, seat]
    i = 0
    while card_rank(cards[i]) != slot:
        i += 1
    card = cards[i]
    for j in range(i, count):
        cards[j] = cards[j + 1]
    return card


@numba.njit(cache=True, nogil=True, inline="always")
def add_to_pile(r: Rules, g: Game, b, seat, card):
    if r.track_cards:
        g.pile_cards[b, seat, g.pile[b, seat]] = card
    g.pile[b, seat] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def discard(r: Rules, g: Game, b, slot, card):
    """Leave the card face up on the table."""
    g.table[b, slot] += 1
    if r.track_cards:
        g.table_cards[b, g.table_len[b]] = card
    g.table_len[b] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def cards_captured(take_all, target, rank_on_table, jokers_on_table, target_pile):
    """How many cards a move brings onto the mover's pile besides the played card.

    A table capture takes one card of the played rank (``rank_on_table`` of them lie there; with
    ``take_all`` it takes all of them and the ``jokers_on_table`` too); capturing a table joker takes
    it; a steal takes the whole pile it is played on (``target_pile`` cards: `steal` moves that pile);
    the own pile and a discard take nothing. `capture` and the players' move values count with it.
    """
    if target == TARGET_TABLE:
        return rank_on_table + jokers_on_table if take_all else 1
    if target == TARGET_TABLE_JOKER:
        return 1
    if target > TARGET_PILE_OFFSET:
        return target_pile
    return 0


@numba.njit(cache=True, nogil=True)
def cards_captured_each(take_all, targets, rank_on_table, jokers_on_table, target_piles):
    """int64[K]: `cards_captured` of K moves at once (the players' move values ask it of every legal move)."""
    out = np.empty(targets.shape[0], np.int64)
    for k in range(targets.shape[0]):
        out[k] = cards_captured(take_all, targets[k], rank_on_table[k], jokers_on_table[k], target_piles[k])
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def take_from_table(r: Rules, g: Game, b, seat, rank, count):
    """Move the first ``count`` table cards of ``rank`` (in table order) onto ``seat``'s pile."""
    g.table[b, rank] -= count
    if r.track_cards:
        cards = g.table_cards[b]
        kept = 0
        for i in range(g.table_len[b]):
            if count > 0 and card_rank(cards[i]) == rank:
                add_to_pile(r, g, b, seat, cards[i])
                count -= 1
            else:
                cards[kept] = cards[i]
                kept += 1
        g.table_len[b] = kept
    else:
        g.pile[b, seat] += count
        g.table_len[b] -= count


@numba.njit(cache=True, nogil=True, inline="always")
def take_all_from_table(r: Rules, g: Game, b, seat, rank, taken):
    """``take_all``: move every table card of ``rank`` and every table joker (``taken`` cards), in table
    order, onto the pile."""
    g.table[b, rank] = 0
    g.table[b, JOKER_SLOT] = 0
    if r.track_cards:
        cards = g.table_cards[b]
        kept = 0
        for i in range(g.table_len[b]):
            card_slot = card_rank(cards[i])
            if card_slot == rank or card_slot == JOKER_SLOT:
                add_to_pile(r, g, b, seat, cards[i])
            else:
                cards[kept] = cards[i]
                kept += 1
        g.table_len[b] = kept
    else:
        g.pile[b, seat] += taken
        g.table_len[b] -= taken


@numba.njit(cache=True, nogil=True, inline="always")
def capture(r: Rules, g: Game, b, mover, target, rank):
    """Capture from the table with a card showing ``rank``: a card of that rank (with ``take_all``, all of
    them and every table joker), or a table joker (`TARGET_TABLE_JOKER`). The played card goes on top."""
    count = cards_captured(r.take_all, target, g.table[b, rank], g.table[b, JOKER_SLOT], 0)
    if target == TARGET_TABLE_JOKER:
        take_from_table(r, g, b, mover, JOKER_SLOT, count)
    elif r.take_all:
        take_all_from_table(r, g, b, mover, rank, count)
    else:
        take_from_table(r, g, b, mover, rank, count)
    g.last_capturer[b] = mover


@numba.njit(cache=True, nogil=True, inline="always")
def steal(r: Rules, g: Game, b, mover, victim):
    """Take the whole pile of ``victim`` (whose top shows the played rank) under the played card."""
    if r.track_cards:
        for i in range(g.pile[b, victim]):
            add_to_pile(r, g, b, mover, g.pile_cards[b, victim, i])
    else:
        g.pile[b, mover] += g.pile[b, victim]
    g.pile[b, victim] = 0
    g.top[b, victim] = EMPTY_PILE
    g.last_capturer[b] = mover


@numba.njit(cache=True, nogil=True, inline="always")
def play_move(r: Rules, g: Game, b, kind, target):
    """The seat to act plays the (legal) move (kind, target); then the turn passes. True if the game ended.

    The card leaves the hand (a natural card: the first of its rank in hand; a joker shows the rank it
    is named as) and becomes public. It is discarded, captures from the table, lands on the own pile, or
    steals the pile it is played on; in every case but a discard it becomes the top of the mover's pile.
    """
    mover = g.current[b]
    rank = shown_rank(kind)
    slot = hand_slot(kind)
    table_talk(r, g, b, mover, kind, target)
    card = take_from_hand(r, g, b, mover, slot)
    g.seen[b, slot] += 1
    if target == TARGET_DISCARD:
        discard(r, g, b, slot, card)
    else:
        if target == TARGET_TABLE or target == TARGET_TABLE_JOKER:
            capture(r, g, b, mover, target, rank)
        else:
            victim = pile_seat(r, mover, target)
            if victim != mover:
                steal(r, g, b, mover, victim)
        add_to_pile(r, g, b, mover, card)
        g.top[b, mover] = rank
    g.turn[b] += 1
    g.last_move[b, 0] = mover
    g.last_move[b, 1] = kind
    g.last_move[b, 2] = target
    g.last_move[b, 3] = card
    return advance(r, g, b, mover)


# ------------------------------------------------------------------ passing the turn, the end


@numba.njit(cache=True, nogil=True, inline="always")
def advance(r: Rules, g: Game, b, mover):
    """Pass the turn to the left, dealing again or ending the game as the rules say; True if it ended.

    With ``draw_from_deck`` the next seat flips the deck's top card while there is one. Otherwise the
    next seat to the left with cards plays; when every hand is empty and the deck is not, new hands
    are dealt and the first player (always dealt the first card) plays.
    """
    n = r.num_players
    if r.draw_from_deck:
        if g.deck_len[b] > 0:
            nxt = mover + 1 if mover + 1 < n else 0
            g.current[b] = nxt
            draw(r, g, b, nxt)
            return False
    else:
        seat, hand_count = mover, g.hand_count[b]
        for _offset in range(n):
            seat += 1
            if seat == n:
                seat = 0
            if hand_count[seat] > 0:
                g.current[b] = seat
                return False
        if g.deck_len[b] > 0:
            deal_hands(r, g, b)
            g.current[b] = r.first_player
            return False
    finish(r, g, b)
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def finish(r: Rules, g: Game, b):
    """End the game; with ``leftovers_to_last_capturer`` the table goes under that seat's pile.

    If that pile is empty, the leftovers form it with the highest natural rank
    on top (a pile of leftover jokers only shows ace: a joker shows its name).
    """
    g.current[b] = NO_SEAT
    seat = g.last_capturer[b]
    left = g.table_len[b]
    if not r.leftovers_to_last_capturer or seat < 0 or left == 0:
        return
    highest, table = -1, g.table[b]
    for rank in range(RANK_SLOTS):
        if table[rank] > 0 and rank < NUM_RANKS:
            highest = rank
        table[rank] = 0
    if g.top[b, seat] < 0:
        g.top[b, seat] = highest if highest >= 0 else 0
    if r.track_cards:
        size = g.pile[b, seat]
        pile = g.pile_cards[b, seat]
        for i in range(size - 1, -1, -1):  # the leftovers go under the pile
            pile[i + left] = pile[i]
        cards = g.table_cards[b]
        placed = 0
        for k in range(RANK_SLOTS):  # jokers first, then by rank, each in table order
            slot = JOKER_SLOT if k == 0 else k - 1
            for i in range(left):
                if card_rank(cards[i]) == slot:
                    pile[placed] = cards[i]
                    placed += 1
    g.pile[b, seat] += left
    g.table_len[b] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def write_rewards(r: Rules, g: Game, b, out):
    """Each seat's final reward (`rouba_env.rules.scoring.write_final_rewards`) of slot ``b`` into ``out``."""
    final_rewards(r.reward_mode, g.pile[b], r.total_cards, out)


def deck_arrays(config: RulesConfig) -> tuple[np.ndarray, np.ndarray]:
    """(rank slot, code) of each card of `RulesConfig.unshuffled_deck`, the order a shuffle permutes."""
    deck = config.unshuffled_deck()
    return (np.array([rank_of(card) for card in deck], dtype=np.int16), np.array(deck, dtype=np.int16))

