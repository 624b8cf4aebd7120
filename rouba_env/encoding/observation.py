"""The observation vector: what one seat sees, from its own point of view.

Seats are rotated so that index 0 of every seat block is the observer, 1 the
player to its left, and so on; blocks are padded to ``max_players`` so that one
network can play tables of several sizes. The layout is declared once, in
`BLOCKS`: the flat vector's index ranges (`observation_layout`), the compiled
code's block starts (`ObservationStarts`), the bounds an observation is
checked against (`ObservationEncoder.high`), the documentation's table and the
networks' features (`rouba_env.players.features`) are all derived from it.
Only public information and the observer's own hand enter it: two states that
differ in opponents' hands or in the deck order give the same vector.
"""

from __future__ import annotations

import collections

import numba
import numpy as np

from dataclasses import dataclass
from typing import NamedTuple

from numba.np.unsafe.ndarray import to_fixed_tuple

from rouba_env.checks import is_int
from rouba_env.encoding.actions import resolve_max_players
from rouba_env.rules.cards import NUM_RANKS
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.buffers import CORE_PARAMS, Game, Rules, game_of, rules_of
from rouba_env.rules.core import EMPTY_PILE, NO_SEAT, TALK_PLAYED, TARGET_PILE_OFFSET
from rouba_env.rules.engine import NUM_RANK_SLOTS, GameState, OnePosition, Position, rank_counts

OBSERVATION_VERSION = 2
"""Bumped whenever the layout below changes; checkpoints record it. Version 2 appended the table talk
(``passed``, ``played``) after ``rules``, so a version-1 network reads the prefix it knows."""
OBSERVATION_VERSIONS = (1, 2)
"""Layouts a checkpoint may have been trained on (`observation_layout` builds each)."""
PILE_TOP_SLOTS = NUM_RANKS + 1
"""One-hot pile top: 13 ranks, then "empty"."""
EMPTY_SLOT = NUM_RANKS
RULE_FLAGS = ("take_all", "must_capture", "leftovers_to_last_capturer", "draw_from_deck", "jokers")
NO_FLIPPED_CARD = -1
"""`ObservationView.flipped` when no card is flipped (not ``draw_from_deck``, or the game is over)."""

FLAG = "flag"
"""A block's entries are 0 or 1 (one-hot slots and yes/no flags)."""
COPIES = "copies"
"""A whole count of cards per rank slot, at most the copies of that rank the deck holds."""
CARDS = "cards"
"""A whole count of cards, at most every card in play."""
FRACTION = "fraction"
"""A share of the cards in play, 0..1 (not a whole number)."""
MOVES_PER_HAND = "moves_per_hand"
"""A whole count of moves since a hand was dealt, at most the hand size."""
PLAYED_COPIES = "played_copies"
"""A whole count of cards of one rank played since a hand was dealt: at most that rank's copies and the hand size."""
BOUNDS = (FLAG, COPIES, CARDS, FRACTION, MOVES_PER_HAND, PLAYED_COPIES)


class Block(NamedTuple):
    """One block of the observation, as `BLOCKS` declares it."""

    name: str
    width: int
    """Entries per seat for a seat block (``per_seat``), else the block's whole size."""
    per_seat: bool
    """One group of ``width`` entries per seat (rotated, padded to ``max_players``)."""
    by_rank: bool
    """Its entries are indexed by rank (a rank slot, a one-hot rank or a rank per seat)."""
    bound: str
    """What its entries count, and so their bounds (one of `BOUNDS`)."""
    version: int
    """The first observation version that has it."""
    meaning: str


BLOCKS = (
    Block("hand", NUM_RANK_SLOTS, False, True, COPIES, 1, "own cards per rank slot (A..K, joker)"),
    Block("table", NUM_RANK_SLOTS, False, True, COPIES, 1, "table cards per rank slot"),
    Block("seen", NUM_RANK_SLOTS, False, True, COPIES, 1,
          "public card memory: cards per rank seen face up (table and every pile)"),
    Block("pile_top", PILE_TOP_SLOTS, True, True, FLAG, 1,
          "per seat: one-hot top rank of its pile (a joker shows its name), then 'empty'"),
    Block("pile_size", 1, True, False, FRACTION, 1, "per seat: pile size / total cards"),
    Block("hand_size", 1, True, False, CARDS, 1, "per seat: cards in hand"),
    Block("present", 1, True, False, FLAG, 1, "per seat: 1 if at the table (0: padding)"),
    Block("dealer", 1, True, False, FLAG, 1, "one-hot dealer seat"),
    Block("to_act", 1, True, False, FLAG, 1, "one-hot seat to act (all zero once the game is over)"),
    Block("deck", 1, False, False, FRACTION, 1, "cards left in the deck / total cards"),
    Block("flipped", NUM_RANK_SLOTS, False, True, COPIES, 1,
          "with draw_from_deck: the flipped card of the seat to act, per rank slot"),
    Block("rules", len(RULE_FLAGS), False, False, FLAG, 1, "the variant flags: " + ", ".join(RULE_FLAGS)),
    Block("passed", NUM_RANKS, True, True, MOVES_PER_HAND, 2,
          "per seat, per rank A..K, since its hand was dealt: moves on which that rank could be taken "
          "(table, or another seat's pile top) and the seat played another rank"),
    Block("played", NUM_RANK_SLOTS, True, True, PLAYED_COPIES, 2,
          "per seat, per rank slot, since its hand was dealt: cards it played"),
)
"""The observation's blocks in order: the one declaration of the layout. Seat blocks are rotated: seat 0 is
the observer, 1 the player to its left, and so on."""
BLOCK_OF = {block.name: block for block in BLOCKS}
BLOCK_MEANINGS = {block.name: block.meaning for block in BLOCKS}
"""What each block holds, for the documentation's generated tables."""


def observation_blocks(max_players: int, version: int = OBSERVATION_VERSION) -> list[tuple[str, int]]:
    """(name, size) of each block in order, in the layout of observation ``version``."""
    if version not in OBSERVATION_VERSIONS:
        raise ValueError(f"observation version must be one of {OBSERVATION_VERSIONS}, got {version!r}")
    return [(block.name, block.width * (max_players if block.per_seat else 1))
            for block in BLOCKS if block.version <= version]


def observation_layout(max_players: int, version: int = OBSERVATION_VERSION) -> dict[str, slice]:
    """Index range of each block for a given padding (and observation version)."""
    layout, start = {}, 0
    for name, size in observation_blocks(max_players, version):
        layout[name] = slice(start, start + size)
        start += size
    return layout


@dataclass
class ObservationView:
    """A batch of observations as named integer arrays (`ObservationEncoder.decode`, `encode_view`).

    Per-seat arrays are relative to the observer: index 0 is the observer, 1
    the player to its left, ...; padded (absent) seats have ``present`` False,
    an empty pile and no cards.
    """

    hand: np.ndarray
    """int64[B, 14]: own cards per rank slot (slot 13: jokers)."""
    table_cards: np.ndarray
    """int64[B, 14]: face-up table cards per rank slot."""
    seen: np.ndarray
    """int64[B, 14]: cards per rank slot face up so far (table and every pile)."""
    pile_tops: np.ndarray
    """int64[B, m]: rank on top of each pile, or `EMPTY_PILE` (also for absent seats)."""
    pile_sizes: np.ndarray
    """int64[B, m]: cards in each pile."""
    hand_sizes: np.ndarray
    """int64[B, m]: cards in each hand."""
    present: np.ndarray
    """bool[B, m]: the seat is at the table."""
    seat: np.ndarray
    """int64[B]: the observer's absolute seat (from the dealer's offset and the rules' dealer)."""
    dealer_offset: np.ndarray
    """int64[B]: the dealer's seat relative to the observer."""
    to_act_offset: np.ndarray
    """int64[B]: the seat to act relative to the observer, or `NO_SEAT` once the game is over."""
    deck_size: np.ndarray
    """int64[B]: cards left in the deck."""
    flipped: np.ndarray
    """int64[B]: rank slot of the card just flipped (``draw_from_deck``), or `NO_FLIPPED_CARD`."""
    passed: np.ndarray | None = None
    """int64[B, m, 13]: per seat (relative) and natural rank, the times it passed that rank up (None: zero)."""
    played: np.ndarray | None = None
    """int64[B, m, 14]: per seat (relative) and rank slot, cards it played since its hand was dealt (None: zero)."""

    @property
    def batch_size(self) -> int:
        return self.hand.shape[0]


@numba.njit(cache=True, nogil=True)
def _first_bad_value(obs, high, whole):
    """Flat index of the first entry outside ``0..high`` (NaN included) or not whole where it must be; or -1."""
    for row in range(obs.shape[0]):
        for entry in range(obs.shape[1]):
            value = obs[row, entry]
            if not (0.0 <= value <= high[entry]) or (whole[entry] and value != np.floor(value)):
                return row * obs.shape[1] + entry
    return -1


# The fields are BLOCKS' names, which mypy cannot read from a list it does not see written out.
START_FIELDS = [block.name for block in BLOCKS] + ["size"]
ObservationStarts = collections.namedtuple("ObservationStarts", START_FIELDS)  # type: ignore[misc]
"""Where each block of the current observation starts, and its size, as compiled code reads them (`BLOCKS`'
names as fields)."""
NUM_STARTS = len(ObservationStarts._fields)


def observation_params(max_players: int) -> list[int]:
    """The block starts and size of the current layout, in `ObservationStarts` order (appended to a game's
    parameter vector after the rules core's, see `rouba_env.rules.core.GameArrays`)."""
    layout = observation_layout(max_players)
    return [block.start for block in layout.values()] + [max(block.stop for block in layout.values())]


@numba.njit(cache=True, nogil=True, inline="always")
def observation_starts(p):
    """The `ObservationStarts` a game's parameter vector holds after the rules core's."""
    return ObservationStarts(*to_fixed_tuple(p[CORE_PARAMS:CORE_PARAMS + NUM_STARTS], NUM_STARTS))


@numba.njit(cache=True, nogil=True, inline="always")
def write_observation(r: Rules, o, g: Game, b, seat, out):
    """The observation of absolute ``seat`` in slot ``b`` of a game into ``out`` (float32[D]): the layout above."""
    n = r.num_players
    total = np.float32(r.total_cards)
    hands, table, seen, tops, piles, hand_count, talk = g.hands, g.table_cards, g.seen, g.top, g.pile, g.hand_count, g.talk
    for i in range(out.shape[0]):
        out[i] = 0.0
    for rank in range(NUM_RANK_SLOTS):
        out[o.hand + rank] = np.float32(hands[b, seat, rank])
        out[o.table + rank] = np.float32(table[b, rank])
        out[o.seen + rank] = np.float32(seen[b, rank])
    other = seat
    for offset in range(n):
        top = tops[b, other]
        out[o.pile_top + offset * PILE_TOP_SLOTS + (EMPTY_SLOT if top < 0 else top)] = 1.0
        out[o.pile_size + offset] = np.float32(piles[b, other]) / total
        out[o.hand_size + offset] = np.float32(hand_count[b, other])
        out[o.present + offset] = 1.0
        for rank in range(NUM_RANKS):
            out[o.passed + offset * NUM_RANKS + rank] = np.float32(talk[b, other, rank])
        for rank in range(NUM_RANK_SLOTS):
            out[o.played + offset * NUM_RANK_SLOTS + rank] = np.float32(talk[b, other, TALK_PLAYED + rank])
        other += 1
        if other == n:
            other = 0
    dealer = r.dealer - seat
    if dealer < 0:
        dealer += n
    out[o.dealer + dealer] = 1.0
    current = g.current[b]
    if current >= 0:
        to_act = current - seat
        if to_act < 0:
            to_act += n
        out[o.to_act + to_act] = 1.0
        if r.draw_from_deck:
            for rank in range(NUM_RANK_SLOTS):
                out[o.flipped + rank] = np.float32(hands[b, current, rank])
    out[o.deck] = np.float32(g.deck_len[b]) / total
    out[o.rules] = 1.0 if r.take_all else 0.0  # RULE_FLAGS, in order
    out[o.rules + 1] = 1.0 if r.must_capture else 0.0
    out[o.rules + 2] = 1.0 if r.leftovers_to_last_capturer else 0.0
    out[o.rules + 3] = 1.0 if r.draw_from_deck else 0.0
    out[o.rules + 4] = 1.0 if r.jokers else 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def write_hidden(r: Rules, g: Game, b, seat, out):
    """What ``seat`` cannot see in slot ``b`` into ``out`` (float32[H], `ObservationEncoder.hidden`)."""
    hands, deck = g.hands[b], g.deck[b]
    for i in range(out.shape[0]):
        out[i] = 0.0
    other = seat
    for offset in range(r.num_players):
        for rank in range(NUM_RANK_SLOTS):
            out[offset * NUM_RANK_SLOTS + rank] = np.float32(hands[other, rank])
        other += 1
        if other == r.num_players:
            other = 0
    deck_start = out.shape[0] - NUM_RANK_SLOTS
    for j in range(g.deck_len[b]):
        out[deck_start + deck[j]] += 1.0


@numba.njit(cache=True, nogil=True)
def _observe(p, buffer, current, seat, out):
    write_observation(rules_of(p), observation_starts(p), game_of(p, buffer, current), 0, seat, out)


@numba.njit(cache=True, nogil=True)
def _hide(p, buffer, current, seat, out):
    write_hidden(rules_of(p), game_of(p, buffer, current), 0, seat, out)


class ObservationEncoder:
    """Encodes a `GameState` as a float32 vector for any seat."""

    def __init__(self, config: RulesConfig, max_players: int | None = None):
        self.config = config
        self.max_players = resolve_max_players(config, max_players)
        self.layout = observation_layout(self.max_players)
        self.size = max(block.stop for block in self.layout.values())
        self.high, self.whole = self._bounds()
        """float32[D]: the largest value each entry can hold under these rules (the smallest is 0);
        bool[D]: the entries that are whole numbers (counts and one-hot flags)."""
        self._rules = np.array([float(getattr(config, flag)) for flag in RULE_FLAGS], dtype=np.float32)
        self._position = OnePosition(config, TARGET_PILE_OFFSET + self.max_players,
                                     observation_params(self.max_players))
        """The one-slot game that `encode` and `hidden` load a `GameState` into."""

    def _write(self, kernel, state: GameState | Position, seat, out: np.ndarray) -> np.ndarray:
        """``kernel`` (`_observe` or `_hide`) of ``seat`` on a one-slot game holding ``state`` (a `Position`
        where it lies), into ``out``."""
        n = self.config.num_players
        if not is_int(seat) or not 0 <= seat < n:
            raise ValueError(f"seat {seat!r} out of range 0..{n - 1}")
        if isinstance(state, Position):
            self._position.run_on(state.buffer, state.seat, kernel, int(seat), out)
        else:
            self._position.run(state, kernel, int(seat), out)
        return out

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        copies = np.array(rank_counts(self.config.unshuffled_deck()), dtype=np.float32)
        moves_per_hand = max(1, self.config.hand_size)
        per_entry = {FLAG: 1.0, FRACTION: 1.0, CARDS: self.config.total_cards, MOVES_PER_HAND: moves_per_hand,
                     COPIES: copies, PLAYED_COPIES: np.minimum(copies, moves_per_hand)}
        high = np.ones(self.size, dtype=np.float32)
        whole = np.ones(self.size, dtype=bool)
        for name, where in self.layout.items():
            block = BLOCK_OF[name]
            one_group = np.broadcast_to(np.asarray(per_entry[block.bound], dtype=np.float32), (block.width,))
            high[where] = np.tile(one_group, (where.stop - where.start) // block.width)
            whole[where] = block.bound != FRACTION
        return high, whole

    def check_values(self, obs: np.ndarray) -> str | None:
        """Why a batch ``float32[B, D]`` of observations cannot come from these rules, or None.

        Every entry must lie in ``0..high`` and counts and flags must be whole numbers.
        """
        first = _first_bad_value(np.ascontiguousarray(obs, dtype=np.float32), self.high, self.whole)
        if first >= 0:
            row, entry = divmod(int(first), self.size)
            if not np.isfinite(obs[row, entry]):
                return "observations must be finite numbers (NaN or infinity given)"
            block = next(name for name, where in self.layout.items() if where.start <= entry < where.stop)
            return (f"observation entry {entry} ({block}) holds {float(obs[row, entry])!r}, which no position of "
                    f"these rules gives (0..{float(self.high[entry]):g}"
                    f"{', a whole number' if self.whole[entry] else ''})")
        return None

    def encode(self, state: GameState | Position, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """Observation of ``seat`` (absolute) in ``state``; written into ``out`` if given.

        The rules core's `write_observation`, on a one-slot game loaded from ``state``: the same code as
        every table's and the batched engine's observations.
        """
        return self._write(_observe, state, seat, np.empty(self.size, dtype=np.float32) if out is None else out)

    def decode(self, obs: np.ndarray) -> ObservationView:
        """The named view of ``obs[B, D]`` (or one ``obs[D]``, as a batch of one); ValueError on a wrong shape."""
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim == 1:
            obs = obs[None, :]
        if obs.ndim != 2 or obs.shape[1] != self.size:
            raise ValueError(
                f"observations must have shape [B, {self.size}] for this rules config "
                f"(max_players={self.max_players}), got {obs.shape}"
            )
        lay = self.layout
        total = self.config.total_cards
        batch, seats = obs.shape[0], self.max_players

        def counts(block: str, scale: float = 1.0) -> np.ndarray:
            return np.rint(obs[:, lay[block]] * scale).astype(np.int64)

        def one_hot_index(block: np.ndarray, none: int) -> np.ndarray:
            return np.where(block.max(axis=-1) > 0, block.argmax(axis=-1), none).astype(np.int64)

        top_slot = one_hot_index(obs[:, lay["pile_top"]].reshape(batch, seats, PILE_TOP_SLOTS), EMPTY_SLOT)
        dealer_offset = obs[:, lay["dealer"]].argmax(axis=1).astype(np.int64)
        return ObservationView(
            hand=counts("hand"),
            table_cards=counts("table"),
            seen=counts("seen"),
            pile_tops=np.where(top_slot == EMPTY_SLOT, EMPTY_PILE, top_slot),
            pile_sizes=counts("pile_size", total),
            hand_sizes=counts("hand_size"),
            present=obs[:, lay["present"]] > 0,
            seat=(self.config.dealer - dealer_offset) % self.config.num_players,
            dealer_offset=dealer_offset,
            to_act_offset=one_hot_index(obs[:, lay["to_act"]], NO_SEAT),
            deck_size=counts("deck", total)[:, 0],
            flipped=one_hot_index(obs[:, lay["flipped"]], NO_FLIPPED_CARD),
            passed=counts("passed").reshape(batch, seats, NUM_RANKS),
            played=counts("played").reshape(batch, seats, NUM_RANK_SLOTS),
        )

    def encode_view(self, view: ObservationView) -> np.ndarray:
        """float32[B, D]: the observations a view was decoded from (the inverse of `decode`)."""
        n, m = self.config.num_players, self.max_players
        batch = view.batch_size
        expected_seat = (self.config.dealer - view.dealer_offset) % n
        if not np.array_equal(view.seat, expected_seat):
            raise ValueError(f"view seats {view.seat.tolist()} do not match the dealer offsets "
                             f"{view.dealer_offset.tolist()} (dealer seat {self.config.dealer}, {n} players)")
        lay = self.layout
        rows = np.arange(batch)
        total = np.float32(self.config.total_cards)
        obs = np.zeros((batch, self.size), dtype=np.float32)
        obs[:, lay["hand"]] = view.hand
        obs[:, lay["table"]] = view.table_cards
        obs[:, lay["seen"]] = view.seen
        tops = obs[:, lay["pile_top"]].reshape(batch, m, PILE_TOP_SLOTS)
        top_slot = np.where(view.pile_tops == EMPTY_PILE, EMPTY_SLOT, view.pile_tops)
        seat_rows, seat_columns = np.nonzero(view.present)
        tops[seat_rows, seat_columns, top_slot[seat_rows, seat_columns]] = 1.0
        obs[:, lay["pile_top"]] = tops.reshape(batch, m * PILE_TOP_SLOTS)
        obs[:, lay["pile_size"]] = view.pile_sizes.astype(np.float32) / total
        obs[:, lay["hand_size"]] = view.hand_sizes
        obs[:, lay["present"]] = view.present
        obs[rows, lay["dealer"].start + view.dealer_offset] = 1.0
        acting = view.to_act_offset != NO_SEAT
        obs[rows[acting], lay["to_act"].start + view.to_act_offset[acting]] = 1.0
        obs[:, lay["deck"].start] = view.deck_size.astype(np.float32) / total
        flipped = view.flipped != NO_FLIPPED_CARD
        obs[rows[flipped], lay["flipped"].start + view.flipped[flipped]] = 1.0
        obs[:, lay["rules"]] = self._rules
        if view.passed is not None:
            obs[:, lay["passed"]] = view.passed.reshape(batch, m * NUM_RANKS)
        if view.played is not None:
            obs[:, lay["played"]] = view.played.reshape(batch, m * NUM_RANK_SLOTS)
        return obs

    def hidden(self, state: GameState, seat: int) -> np.ndarray:
        """float32[H]: what ``seat``'s observation hides, from its point of view (a privileged critic's input).

        Every seat's hand per rank slot (rotated and padded as the seat blocks: 0 is ``seat``
        itself), then the deck per rank slot. ``H = (max_players + 1) * 14`` (`hidden_size`).
        """
        return self._write(_hide, state, seat, np.empty(self.hidden_size, dtype=np.float32))

    @property
    def hidden_size(self) -> int:
        return (self.max_players + 1) * NUM_RANK_SLOTS

    def full_state(self, state: GameState) -> np.ndarray:
        """Centralized-critic vector: seat 0's observation, then what it hides (every hand and the deck per rank)."""
        return np.concatenate([self.encode(state, 0), self.hidden(state, 0)])

    @property
    def state_size(self) -> int:
        return self.size + self.hidden_size
