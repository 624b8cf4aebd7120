"""The observation vector: what one seat sees, from its own point of view.

Seats are rotated so that index 0 of every seat block is the observer, 1 the
player to its left, and so on; blocks are padded to ``max_players`` so that one
network can play tables of several sizes. ``R = 14`` rank slots (ace..king,
then joker), ``m = max_players``. Layout (see `ObservationEncoder.layout`):

==========  ==================  ===============================================
block       size                meaning
==========  ==================  ===============================================
hand        R                   own cards per rank (count)
table       R                   face-up table cards per rank (count)
seen        R                   public card memory: cards per rank seen face up
                                so far, i.e. on the table or in any pile (count)
pile_top    m * 14              per seat: one-hot top rank (13 slots, a joker
                                shows its named rank) then 1 slot "empty pile";
                                all zero for an absent (padded) seat
pile_size   m                   per seat: cards in its pile / total cards
hand_size   m                   per seat: cards in hand (count)
present     m                   per seat: 1 if the seat is at the table
dealer      m                   one-hot: the dealer's seat
to_act      m                   one-hot: the seat to act (all zero at the end)
deck        1                   cards left in the deck / total cards
flipped     R                   ``draw_from_deck``: one-hot of the card just
                                flipped (public); zero otherwise
rules       5                   take_all, must_capture,
                                leftovers_to_last_capturer, draw_from_deck,
                                jokers (0/1)
==========  ==================  ===============================================

Length ``3R + 14m + 5m + 1 + R + 5 = 62 + 19m`` (100 for 2 seats, 138 for 4).
Only public information and the observer's own hand enter it: two states that
differ in opponents' hands or in the deck order give the same vector.
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from rouba_env.encoding.actions import resolve_max_players
from rouba_env.rules.cards import NUM_RANKS
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import EMPTY_PILE, NO_SEAT, NUM_RANK_SLOTS, GameState, rank_counts, seen_counts

OBSERVATION_VERSION = 1
"""Bumped whenever the layout below changes; checkpoints record it."""
PILE_TOP_SLOTS = NUM_RANKS + 1
"""One-hot pile top: 13 ranks, then "empty"."""
EMPTY_SLOT = NUM_RANKS
RULE_FLAGS = ("take_all", "must_capture", "leftovers_to_last_capturer", "draw_from_deck", "jokers")


def observation_blocks(max_players: int) -> list[tuple[str, int]]:
    """(name, size) of each block in order."""
    m = max_players
    return [
        ("hand", NUM_RANK_SLOTS),
        ("table", NUM_RANK_SLOTS),
        ("seen", NUM_RANK_SLOTS),
        ("pile_top", m * PILE_TOP_SLOTS),
        ("pile_size", m),
        ("hand_size", m),
        ("present", m),
        ("dealer", m),
        ("to_act", m),
        ("deck", 1),
        ("flipped", NUM_RANK_SLOTS),
        ("rules", len(RULE_FLAGS)),
    ]


def observation_layout(max_players: int) -> dict[str, slice]:
    """Index range of each block for a given padding."""
    layout, start = {}, 0
    for name, size in observation_blocks(max_players):
        layout[name] = slice(start, start + size)
        start += size
    return layout


class ObservationEncoder:
    """Encodes a `GameState` as a float32 vector for any seat."""

    def __init__(self, config: RulesConfig, max_players: int | None = None):
        self.config = config
        self.max_players = resolve_max_players(config, max_players)
        self.layout = observation_layout(self.max_players)
        self.size = self.layout["rules"].stop
        self._rules = np.array([float(getattr(config, flag)) for flag in RULE_FLAGS], dtype=np.float32)
        self._rule_values = self._rules.tolist()
        lay = self.layout
        # Plain ints and slices for `encode`, the environments' hot path.
        self._num_players = config.num_players
        self._dealer = config.dealer
        self._draw_from_deck = config.draw_from_deck
        self._total_cards = np.float32(config.total_cards)
        self._zero_tail = [0.0] * (self.size - 3 * NUM_RANK_SLOTS)
        self._seat_starts = (lay["pile_top"].start, lay["pile_size"].start, lay["hand_size"].start,
                             lay["present"].start)
        self._dealer_start, self._to_act_start = lay["dealer"].start, lay["to_act"].start
        self._deck_index, self._flipped, self._rules_slice = lay["deck"].start, lay["flipped"], lay["rules"]

    def encode(self, state: GameState, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """Observation of ``seat`` (absolute) in ``state``; written into ``out`` if given.

        Built as one Python list and stored with a single conversion: per-entry
        numpy stores would cost more than the whole encoding.
        """
        n = self._num_players
        if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ValueError(f"seat {seat!r} out of range 0..{n - 1}")
        values = rank_counts(state.hands[seat]) + rank_counts(state.table) + seen_counts(state)
        values += self._zero_tail
        total = self._total_cards
        top_start, size_start, hand_start, present_start = self._seat_starts
        hands, piles, pile_tops = state.hands, state.piles, state.pile_tops
        for offset in range(n):
            other = (seat + offset) % n
            top = pile_tops[other]
            values[top_start + offset * PILE_TOP_SLOTS + (EMPTY_SLOT if top == EMPTY_PILE else top)] = 1.0
            values[size_start + offset] = float(np.float32(len(piles[other])) / total)
            values[hand_start + offset] = len(hands[other])
            values[present_start + offset] = 1.0
        values[self._dealer_start + (self._dealer - seat) % n] = 1.0
        current = state.current
        if current >= 0:
            values[self._to_act_start + (current - seat) % n] = 1.0
            if self._draw_from_deck:
                values[self._flipped] = rank_counts(hands[current])
        values[self._deck_index] = float(np.float32(len(state.deck)) / total)
        values[self._rules_slice] = self._rule_values
        if out is None:
            return np.array(values, dtype=np.float32)
        out[:] = values
        return out

    def full_state(self, state: GameState) -> np.ndarray:
        """Centralized-critic vector: seat 0's observation, every seat's hand, and the deck per rank."""
        hands = np.zeros((self.max_players, NUM_RANK_SLOTS), dtype=np.float32)
        for seat, hand in enumerate(state.hands):
            hands[seat] = rank_counts(hand)
        deck = np.array(rank_counts(state.deck), dtype=np.float32)
        return np.concatenate([self.encode(state, 0), hands.ravel(), deck])

    @property
    def state_size(self) -> int:
        return self.size + (self.max_players + 1) * NUM_RANK_SLOTS


SEAT_BLOCKS = {"pile_top": PILE_TOP_SLOTS, "pile_size": 1, "hand_size": 1, "present": 1, "dealer": 1, "to_act": 1}
"""Blocks that hold one entry (of the given width) per seat, and so change with the padding."""


def repadding_index(from_players: int, to_players: int) -> np.ndarray:
    """For each index of a ``to_players``-padded observation, its index in a ``from_players`` one (-1: zero).

    Lets a network trained with one padding read observations of another:
    ``repadded = np.where(index >= 0, obs[..., index], 0)``.
    """
    source, target = observation_layout(from_players), observation_layout(to_players)
    index = np.full(target["rules"].stop, -1, dtype=np.int64)
    for name, block in target.items():
        width = SEAT_BLOCKS.get(name)
        if width is None:
            index[block] = np.arange(source[name].start, source[name].stop)
            continue
        for seat in range(min(from_players, to_players)):
            start = block.start + seat * width
            index[start : start + width] = np.arange(source[name].start + seat * width,
                                                     source[name].start + (seat + 1) * width)
    return index

# ---------------------------------------------------------------------------
# Reading observations and actions as arrays
# ---------------------------------------------------------------------------


@dataclass
class ObservationView:
    """A batch of observations decoded into integer arrays (seats relative to the observer).

    Index 0 of every per-seat array is the observer, 1 the player to its left, ...;
    padded (absent) seats have ``present`` False, an empty pile and no cards.
    """

    hand: np.ndarray
    """int64[B, 14]: own cards per rank (slot 13: jokers)."""
    table: np.ndarray
    """int64[B, 14]: face-up table cards per rank."""
    seen: np.ndarray
    """int64[B, 14]: cards per rank face up so far (table and every pile)."""
    pile_tops: np.ndarray
    """int64[B, m]: rank on top of each pile, or `EMPTY_PILE`."""
    pile_sizes: np.ndarray
    """int64[B, m]: cards in each pile."""
    hand_sizes: np.ndarray
    """int64[B, m]: cards in each hand."""
    present: np.ndarray
    """bool[B, m]: the seat is at the table."""
    deck_size: np.ndarray
    """int64[B]: cards left in the deck."""
    dealer_offset: np.ndarray
    """int64[B]: the dealer's seat relative to the observer."""
    to_act_offset: np.ndarray
    """int64[B]: the seat to act relative to the observer, or `NO_SEAT` once the game is over."""


def read_observations(encoder: ObservationEncoder, obs: np.ndarray) -> ObservationView:
    """Decode ``obs[B, D]`` (or one ``obs[D]``) laid out by ``encoder``; ValueError on a wrong width."""
    obs = np.asarray(obs, dtype=np.float32)
    if obs.ndim == 1:
        obs = obs[None, :]
    if obs.ndim != 2 or obs.shape[1] != encoder.size:
        raise ValueError(
            f"observations must have shape [B, {encoder.size}] for this rules config "
            f"(max_players={encoder.max_players}), got {obs.shape}"
        )
    lay = encoder.layout
    total = encoder.config.total_cards
    batch, seats = obs.shape[0], encoder.max_players

    def counts(block: str, scale: float = 1.0) -> np.ndarray:
        return np.rint(obs[:, lay[block]] * scale).astype(np.int64)

    top_one_hot = obs[:, lay["pile_top"]].reshape(batch, seats, PILE_TOP_SLOTS)
    top_slot = top_one_hot.argmax(axis=2)
    has_top = top_one_hot.max(axis=2) > 0
    pile_tops = np.where(has_top & (top_slot != EMPTY_SLOT), top_slot, EMPTY_PILE)
    to_act = obs[:, lay["to_act"]]
    return ObservationView(
        hand=counts("hand"),
        table=counts("table"),
        seen=counts("seen"),
        pile_tops=pile_tops.astype(np.int64),
        pile_sizes=counts("pile_size", total),
        hand_sizes=counts("hand_size"),
        present=obs[:, lay["present"]] > 0,
        deck_size=counts("deck", total)[:, 0],
        dealer_offset=obs[:, lay["dealer"]].argmax(axis=1).astype(np.int64),
        to_act_offset=np.where(to_act.max(axis=1) > 0, to_act.argmax(axis=1), NO_SEAT).astype(np.int64),
    )

