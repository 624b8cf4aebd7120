"""A game of rouba-monte as card-level data (`GameState`), and the rules played on it through the core.

No gymnasium, pettingzoo or torch here. A `GameState` is plain data: every
hand, the table, each pile and the deck as lists of card codes. The rules of
play are not written here: `legal_moves`, `apply_move` and the deals load a
state into a `Position` (one game as a one-slot snapshot of the compiled rules
core, `rouba_env.rules.core`, its cards named), run the core's rule, and read
the answer back. A `Position` is also what a searching player plays on: a child
position is a copy of a few hundred bytes and one compiled call.

`new_game`, `apply_move` and the queries below never change their input
(`apply_move` returns a new state). Randomness enters only through the
`numpy.random.Generator` given to `new_game`, which draws one 63-bit *deal
seed*; the shuffle is a pure function of that seed, so that the batched
engine can reproduce any game from its seed alone.

Moves are `(kind, target)` pairs (see `Move`): which card is played and where
it goes. Seats are absolute here (0..n-1, turn order); pile targets are given
relative to the mover (0 = own pile, 1 = next seat to the left, ...).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from itertools import chain
from typing import NamedTuple, Sequence

import numba
import numpy as np

from rouba_env.checks import is_int
from rouba_env.rules.cards import JOKER, NUM_RANKS, NUM_SUITS, RANK_OF_CARD, suit_of
from rouba_env.rules.config import MAX_PLAYERS, RulesConfig
from rouba_env.rules.buffers import (
    P_CARDS, P_HAND_CARDS, P_SEATS, P_TRACKED, GameArrays, SlotLayout, game_of,
    rules_of,
)
from rouba_env.rules.core import (
    EMPTY_PILE, JOKER_KIND_OFFSET, NO_SEAT, NUM_KINDS, RANK_SLOTS, TALK_PLAYED, TALK_SIZE, TARGET_PILE_OFFSET, card_rank,
)
from rouba_env.rules.core import (
    legal_moves as core_legal_moves,
)
from rouba_env.rules.core import (
    play_move as core_play_move,
)
from rouba_env.rules.core import (
    start_game as core_start_game,
)
from rouba_env.rules.scoring import REWARD_MODES
from rouba_env.rules.seeding import DEAL_SEED_BOUND, shuffled_deck

NUM_RANK_SLOTS = RANK_SLOTS
"""Per-rank count vectors have one slot per rank plus one for jokers."""


class Move(NamedTuple):
    """One play: ``kind`` (which card, see `JOKER_KIND_OFFSET`) and ``target``."""

    kind: int
    target: int


MOVES = tuple(tuple(Move(kind, target) for target in range(TARGET_PILE_OFFSET + MAX_PLAYERS))
              for kind in range(NUM_KINDS))
"""``MOVES[kind][target]``: every possible move made once (moves are immutable; the hot loops look them up)."""


@dataclass
class GameState:
    """Everything about one game. Seats are absolute; lists are never shared between states."""

    config: RulesConfig
    hands: list[list[int]]
    """Card codes held by each seat."""
    table_cards: list[int]
    """Face-up card codes on the table."""
    piles: list[list[int]]
    """Each seat's pile, bottom first; its last card is on top."""
    pile_tops: list[int]
    """Rank showing on each pile (a joker shows the rank it was named as), or `EMPTY_PILE`."""
    deck: list[int]
    """Undealt card codes; the last one is the top of the deck."""
    current: int
    """Seat to act, or `NO_SEAT` once the game is over."""
    last_capturer: int = NO_SEAT
    """Last seat that captured from the table or stole a pile."""
    turn: int = 0
    """Moves played so far."""
    last_move: tuple[int, Move, int] | None = field(default=None)
    """(seat, move, card code) of the latest play, for display."""
    passed: list[list[int]] = field(default_factory=list)
    """What the table said, per seat since its hand was last dealt: per natural rank, the moves on which a
    card of that rank could be taken (from the table, or another seat's pile showing it) and the seat
    played another rank (`rouba_env.rules.core.table_talk`). Empty when made: all zero."""
    played: list[list[int]] = field(default_factory=list)
    """Per seat since its hand was last dealt: cards it played per rank slot (jokers in slot 13)."""

    def __post_init__(self) -> None:
        n = len(self.hands)
        if not self.passed:
            self.passed = [[0] * NUM_RANKS for _ in range(n)]
        if not self.played:
            self.played = [[0] * NUM_RANK_SLOTS for _ in range(n)]

    def copy(self) -> "GameState":
        return GameState(
            config=self.config,
            hands=[list(hand) for hand in self.hands],
            table_cards=list(self.table_cards),
            piles=[list(pile) for pile in self.piles],
            pile_tops=list(self.pile_tops),
            deck=list(self.deck),
            current=self.current,
            last_capturer=self.last_capturer,
            turn=self.turn,
            last_move=self.last_move,
            passed=[list(row) for row in self.passed],
            played=[list(row) for row in self.played],
        )


# ------------------------------------------------------------------ one game on the rules core


@numba.njit(cache=True, nogil=True)
def legal_mask(p, buffer, current, out):
    """The rules core's legal moves of slot 0's seat to act, as a mask over the move table (``out``)."""
    core_legal_moves(rules_of(p), game_of(p, buffer, current), 0, out)


@numba.njit(cache=True, nogil=True)
def _play(p, buffer, current, kind, target):
    core_play_move(rules_of(p), game_of(p, buffer, current), 0, kind, target)


@numba.njit(cache=True, nogil=True)
def _deal(p, buffer, current, order, deck_ranks, deck_codes):
    core_start_game(rules_of(p), game_of(p, buffer, current), 0, order, deck_ranks, deck_codes)


def position_layout(config: RulesConfig) -> SlotLayout:
    """The layout of a `Position` of these rules: one slot, its cards named, the action stride of an unpadded
    table."""
    return SlotLayout(config, 1, move_stride=TARGET_PILE_OFFSET + config.num_players, reward=REWARD_MODES[0],
                      auto_reset=False, track_cards=True)


class Position:
    """One game as a one-slot snapshot of the rules core, its cards named: the rules play on it directly.

    `play` changes it in place, `child` gives the position after a move and leaves this one as it was;
    `state` reads it back as a `GameState`. Every move it is given must be legal (`legal_moves`): it is
    the unchecked fast path that `apply_move` checks for.
    """

    __slots__ = ("layout", "buffer", "seat")

    def __init__(self, layout: SlotLayout, buffer: np.ndarray, seat: np.ndarray):
        self.layout, self.buffer, self.seat = layout, buffer, seat

    @classmethod
    def of(cls, state: GameState) -> "Position":
        """The position of a card-level state (the state is copied in: changing one changes nothing in the other)."""
        layout = position_layout(state.config)
        position = cls(layout, layout.blank(), np.full(1, NO_SEAT, dtype=np.int64))
        load_slot(layout.params, position.buffer, position.seat, 0, state=state)
        return position

    @classmethod
    def deal(cls, config: RulesConfig, deck: list[int]) -> "Position":
        """A new game dealt from a shuffled deck of these rules' cards (dealt from its end), as
        `rouba_env.rules.core.start_game` deals."""
        layout = position_layout(config)
        position = cls(layout, layout.blank(), np.full(1, NO_SEAT, dtype=np.int64))
        ranks = np.array([RANK_OF_CARD[card] for card in deck], dtype=np.int16)
        _deal(layout.params, position.buffer, position.seat, np.arange(len(deck), dtype=np.int64), ranks,
              np.asarray(deck, dtype=np.int16))
        return position

    @property
    def config(self) -> RulesConfig:
        return self.layout.config

    @property
    def current(self) -> int:
        """Seat to act, or `NO_SEAT` once the game is over."""
        return int(self.seat[0])

    def points(self) -> list[int]:
        """Cards in each seat's pile (`rouba_env.rules.scoring.scores`)."""
        at = self.layout.start("pile")
        return self.buffer[at:at + self.layout.config.num_players].tolist()

    def legal_moves(self) -> list[Move]:
        """Every legal move of the seat to act, sorted by (kind, target); empty when the game is over."""
        if self.seat[0] < 0:
            return []
        stride = self.layout.rules.move_stride
        mask = np.zeros(NUM_KINDS * stride, dtype=np.int8)
        legal_mask(self.layout.params, self.buffer, self.seat, mask)
        return [MOVES[action // stride][action % stride] for action in np.flatnonzero(mask).tolist()]

    def play(self, move: Move) -> None:
        """Play a legal move in place."""
        kind, target = self._checked(move)
        _play(self.layout.params, self.buffer, self.seat, kind, target)

    def child(self, move: Move) -> "Position":
        """The position after a legal move; this one is left as it was."""
        kind, target = self._checked(move)
        child = Position(self.layout, self.buffer.copy(), self.seat.copy())
        _play(self.layout.params, child.buffer, child.seat, kind, target)
        return child

    def _checked(self, move: Move) -> tuple[int, int]:
        """``move`` as (kind, target) within the move table; a ValueError for a move no table holds. (Its
        legality is the caller's: `legal_moves`.)"""
        kind, target = move
        if not (0 <= kind < NUM_KINDS and 0 <= target < self.layout.rules.move_stride) or self.seat[0] < 0:
            raise ValueError(f"move {move!r} cannot be played here: a kind 0..{NUM_KINDS - 1} and a target "
                             f"0..{self.layout.rules.move_stride - 1} while the game is on")
        return kind, target

    def state(self) -> GameState:
        """The position as a `GameState` naming every card (a copy: changing it changes nothing here)."""
        return read_state(self.layout.config, self.layout.views(self.buffer), self.seat, 0)


def read_state(config: RulesConfig, views: dict[str, np.ndarray], current: np.ndarray, b: int) -> GameState:
    """Slot ``b`` of a game's named arrays (with the cards named) as a `GameState`."""
    n = config.num_players
    hand_count, pile = views["hand_count"][b], views["pile"][b]
    last = views["last_move"][b].tolist()
    talk = views["talk"][b]
    return GameState(
        config=config,
        hands=[views["hand_codes"][b, seat, :hand_count[seat]].tolist() for seat in range(n)],
        table_cards=views["table_codes"][b, :views["table_len"][b]].tolist(),
        piles=[views["pile_codes"][b, seat, :pile[seat]].tolist() for seat in range(n)],
        pile_tops=views["top"][b].tolist(),
        deck=views["deck_codes"][b, :views["deck_len"][b]].tolist(),
        current=int(current[b]),
        last_capturer=int(views["last_capturer"][b]),
        turn=int(views["turn"][b]),
        last_move=None if last[0] == NO_SEAT else (last[0], MOVES[last[1]][last[2]], last[3]),
        passed=talk[:, :TALK_PLAYED].tolist(),
        played=talk[:, TALK_PLAYED:].tolist(),
    )


# ------------------------------------------------------------------ the card-level functions


def new_game(config: RulesConfig, rng: np.random.Generator) -> GameState:
    """Shuffle with a deal seed drawn from ``rng`` and deal (see `start_game`)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return start_game(config, int(rng.integers(0, DEAL_SEED_BOUND)))


def start_game(config: RulesConfig, deal_seed: int) -> GameState:
    """Deal a new game from a 63-bit deal seed.

    Hands are dealt one card at a time starting left of the dealer, then the
    table is laid. With ``draw_from_deck`` nobody is dealt a hand: the table is
    laid and the first player flips the top card.
    """
    if not isinstance(deal_seed, (int, np.integer)) or not 0 <= int(deal_seed) < DEAL_SEED_BOUND:
        raise ValueError(f"deal_seed must be an int in [0, 2**63), got {deal_seed!r}")
    return deal_from_deck(config, shuffled_deck(config, int(deal_seed)))


def deal_from_deck(config: RulesConfig, deck: list[int]) -> GameState:
    """Deal a new game from a shuffled deck (cards are taken from its end), as `start_game` does.

    For callers that shuffle themselves: OpenSpiel's chance nodes choose the deck's order card by card.
    """
    check_deck(config, deck)
    return Position.deal(config, deck).state()


def check_deck(config: RulesConfig, deck: list[int]) -> None:
    """ValueError unless ``deck`` is an order of exactly these rules' cards."""
    if sorted(deck) != sorted(config.unshuffled_deck()):
        raise ValueError(f"a deck must be an order of these rules' {config.total_cards} cards, got {list(deck)!r}")


def rank_counts(cards: list[int]) -> list[int]:
    """Count of each rank (slot 13: jokers) among card codes."""
    counts = [0] * NUM_RANK_SLOTS
    ranks = RANK_OF_CARD
    for card in cards:
        counts[ranks[card]] += 1
    return counts


def is_terminal(state: GameState | Position) -> bool:
    return state.current == NO_SEAT


def pile_seat(state: GameState, mover: int, target: int) -> int:
    """Absolute seat whose pile a pile target of ``mover`` points at."""
    return (mover + target - TARGET_PILE_OFFSET) % state.config.num_players


def legal_moves(state: GameState) -> list[Move]:
    """Every legal move of the seat to act, sorted by (kind, target); empty when the game is over.

    A card showing rank r may capture a table card of rank r (with ``take_all``
    a table joker also counts), capture a table joker (not with ``take_all``),
    or go on any pile whose top shows r (the own pile or a steal). It may be
    discarded only if it can capture nothing, unless ``must_capture`` is off.
    A joker may be named as any rank; a discarded joker is named nothing.
    (The rule itself: `rouba_env.rules.core.legal_moves`.)
    """
    if state.current == NO_SEAT:
        return []
    return Position.of(state).legal_moves()


def shown_rank(kind: int) -> int:
    """Rank a played kind shows: a natural card's own rank or a joker's named rank."""
    return kind - JOKER_KIND_OFFSET if kind >= JOKER_KIND_OFFSET else kind


def as_move(move) -> Move:
    """``move`` as a `Move` of two ints; ValueError for anything else (floats are not truncated)."""
    if not isinstance(move, (tuple, list)) or len(move) != 2:
        raise ValueError(f"a move is a (kind, target) pair of ints, got {move!r}")
    for part in move:
        if not is_int(part):
            raise ValueError(f"a move is a (kind, target) pair of ints, got {move!r}")
    return Move(int(move[0]), int(move[1]))


def apply_move(state: GameState, move: Move) -> GameState:
    """The state after the seat to act plays ``move``; ``state`` is left unchanged. ValueError if illegal.

    (The rules of a move: `rouba_env.rules.core.play_move`.)
    """
    move = as_move(move)
    position = Position.of(state)
    check_legal(state, move, position.legal_moves() if state.current != NO_SEAT else [])
    position.play(move)
    return position.state()


def check_legal(state: GameState, move: Move, legal: list[Move] | None = None) -> None:
    """ValueError naming the move and the legal ones unless ``move`` is legal (``legal``: precomputed moves)."""
    legal = legal_moves(state) if legal is None else legal
    if move not in legal:
        raise ValueError(f"illegal move {move} for seat {state.current}; legal moves: {legal}")


def match_rules(config: RulesConfig, games: int) -> list[RulesConfig]:
    """Rules of each game of a match: the dealer moves one seat to the left every game."""
    if games < 1:
        raise ValueError(f"a match needs at least one game, got games={games}")
    n = config.num_players
    return [config.replace(dealer=(config.dealer + game) % n) for game in range(games)]


# ------------------------------------------------------------------ loading a GameState into the core


INT16_MAX = np.iinfo(np.int16).max
"""The largest count a slot's int16 buffer holds (the turn, the table talk)."""


def check_state(state: "GameState") -> None:
    """Refuse a `GameState` the compiled core cannot hold safely, naming the field: seats, cards, pile tops,
    the turn, the table talk and the last move must lie in their ranges under the state's rules.

    Every card-level state enters the core through `load_slot`, which calls this first: a hand-made state
    is checked once, where it enters, and never reaches compiled code out of range.
    """
    config = state.config
    if not isinstance(config, RulesConfig):
        raise ValueError(f"state.config must be a RulesConfig, got {type(config).__name__}")
    n = config.num_players
    for name in ("hands", "piles", "pile_tops", "passed", "played"):
        if len(getattr(state, name)) != n:
            raise ValueError(f"state.{name} has {len(getattr(state, name))} entries; these rules seat {n}")
    for name in ("current", "last_capturer"):
        value = getattr(state, name)
        if not is_int(value) or not (value == NO_SEAT or 0 <= value < n):
            raise ValueError(f"state.{name} must be a seat 0..{n - 1} or NO_SEAT ({NO_SEAT}), got {value!r}")
    if not is_int(state.turn) or not 0 <= state.turn <= INT16_MAX:
        raise ValueError(f"state.turn must be in 0..{INT16_MAX}, got {state.turn!r}")
    places = {f"hands[{seat}]": hand for seat, hand in enumerate(state.hands)}
    places.update({"table": state.table_cards, "deck": state.deck})
    places.update({f"piles[{seat}]": pile for seat, pile in enumerate(state.piles)})
    codes = set(chain.from_iterable(places.values()))
    if not (set(map(type, codes)) <= {int} and all_cards_of(config, codes)):
        for place, cards in places.items():  # the slow path only names the culprit (numpy ints pass here)
            for card in cards:
                if not is_card_of(config, card):
                    raise ValueError(f"state.{place} holds {card!r}, which is no card code of these rules")
    count = sum(map(len, places.values()))
    if count > config.total_cards:
        raise ValueError(f"the state holds {count} cards; these rules deal {config.total_cards}")
    for seat, top in enumerate(state.pile_tops):
        if not is_int(top) or not (top == EMPTY_PILE or 0 <= top < NUM_RANKS):
            raise ValueError(f"state.pile_tops[{seat}] must be a rank 0..{NUM_RANKS - 1} or EMPTY_PILE "
                             f"({EMPTY_PILE}), got {top!r}")
    for name, width in (("passed", NUM_RANKS), ("played", NUM_RANK_SLOTS)):
        for seat, row in enumerate(getattr(state, name)):
            if len(row) != width or not (set(map(type, row)) <= {int} and 0 <= min(row) <= max(row) <= INT16_MAX
                                         or all(is_int(value) and 0 <= value <= INT16_MAX for value in row)):
                raise ValueError(f"state.{name}[{seat}] must be {width} counts in 0..{INT16_MAX}, got {row!r}")
    if state.last_move is not None:
        check_last_move(state.last_move, config)


def all_cards_of(config: RulesConfig, codes: set[int]) -> bool:
    """Whether every int of ``codes`` is the code of a card these rules deal (quick for full decks)."""
    if not codes:
        return True
    if config.ranks == NUM_RANKS and config.suits == NUM_SUITS:
        return min(codes) >= 0 and max(codes) <= (JOKER if config.jokers else JOKER - 1)
    return codes <= set(config.unshuffled_deck())


def is_card_of(config: RulesConfig, card) -> bool:
    """Whether ``card`` is the code of a card these rules deal (a rank and suit within them, or a joker)."""
    if not is_int(card) or not 0 <= card <= JOKER:
        return False
    if card == JOKER:
        return config.jokers
    return RANK_OF_CARD[card] < config.ranks and suit_of(card) < config.suits


def check_last_move(last_move, config: RulesConfig) -> None:
    """A state's ``last_move``: (seat, (kind, target), card code) within these rules."""
    n = config.num_players
    try:
        seat, (kind, target), card = last_move
    except (TypeError, ValueError):
        raise ValueError(f"state.last_move must be None or (seat, (kind, target), card), got {last_move!r}") from None
    if not (is_int(seat) and 0 <= seat < n and is_int(kind) and 0 <= kind < NUM_KINDS and is_int(target)
            and 0 <= target < TARGET_PILE_OFFSET + n and is_card_of(config, card)):
        raise ValueError(f"state.last_move {last_move!r} is out of range: a seat 0..{n - 1}, a kind "
                         f"0..{NUM_KINDS - 1}, a target 0..{TARGET_PILE_OFFSET + n - 1} and a card of these rules")


def load_slot(params: np.ndarray, buffer: np.ndarray, current: np.ndarray, b: int, *, state: "GameState") -> None:
    """Write a card-level `GameState` into slot ``b`` of a game's arrays (``params``, ``buffer``, ``current``).

    The card lists travel as one array of codes (hands, table, piles, deck) with their lengths, and one
    compiled pass counts them into the slot. A state that does not fit these rules' slot (more cards in a
    place than it can hold) is refused before anything is written.
    """
    check_state(state)
    lists = [*state.hands, state.table_cards, *state.piles, state.deck]
    n, total = int(params[P_SEATS]), int(params[P_CARDS])
    if len(state.hands) != n or len(state.piles) != n:
        raise ValueError(f"the state seats {len(state.hands)} hands and {len(state.piles)} piles; these rules "
                         f"seat {n}")
    hand_room = int(params[P_HAND_CARDS])
    room = {"deck": (len(state.deck), total)}
    if int(params[P_TRACKED]):
        room.update(hand=(max(map(len, state.hands)), hand_room), table=(len(state.table_cards), total),
                    pile=(max(map(len, state.piles)), total))
    for part, (size, most) in room.items():
        if size > most:
            raise ValueError(f"the state's {part} holds {size} cards; under these rules it holds at most {most}")
    cards = np.fromiter(chain.from_iterable(lists), dtype=np.int16, count=sum(map(len, lists)))
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    talk = np.array([passed + played for passed, played in zip(state.passed, state.played)], dtype=np.int16)
    last = (NO_SEAT, 0, 0, 0) if state.last_move is None else (
        state.last_move[0], state.last_move[1][0], state.last_move[1][1], state.last_move[2])
    _load_slot(params, buffer, current, b, (cards, lengths, np.asarray(state.pile_tops, dtype=np.int16), talk,
                                           np.array([state.current, state.last_capturer, state.turn, *last],
                                                    dtype=np.int64)))


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
            load_slot(arrays.params, arrays.buffer, arrays.current, 0, state=state)
            return kernel(arrays.params, arrays.buffer, arrays.current, *args)

    def __getstate__(self) -> dict:
        return {key: value for key, value in self.__dict__.items()
                if key not in ("_arrays", "_tracked_params", "_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _arrays=None, _tracked_params=None, _lock=threading.Lock())


@numba.njit(cache=True, nogil=True)
def _load_slot(p, buffer, current, b, loaded):
    """`load_slot`'s compiled pass. ``loaded = (cards, lengths, tops, talk, scalars)``: ``cards`` holds every
    hand, the table, every pile and the deck in turn (``lengths`` of each); ``scalars``: the seat to act, the
    last capturer, the turn, the last move."""
    cards, lengths, tops, talk, scalars = loaded
    r, g = rules_of(p), game_of(p, buffer, current)
    n = r.num_players
    g.hands[b] = 0
    g.table_cards[b] = 0
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
                    g.hand_codes[b, part, j] = card
            elif part == n:
                g.table_cards[b, slot] += 1
                g.seen[b, slot] += 1
                if r.track_cards:
                    g.table_codes[b, j] = card
            elif part < 2 * n + 1:
                g.seen[b, slot] += 1
                if r.track_cards:
                    g.pile_codes[b, part - n - 1, j] = card
            else:
                g.deck[b, j] = slot
                if r.track_cards:
                    g.deck_codes[b, j] = card
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
