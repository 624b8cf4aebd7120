"""Cards: integer codes, ranks, suits and printable faces.

A natural card is coded ``rank * NUM_SUITS + suit`` (0..51); a joker is coded
``JOKER``. Several decks simply repeat the codes. Only ranks matter to the
rules; suits exist so that a game can be rendered as a real deck.
"""

from __future__ import annotations

import math

NUM_RANKS = 13
"""Ace, 2..10, jack, queen, king."""
NUM_SUITS = 4
CARDS_PER_DECK = NUM_RANKS * NUM_SUITS
"""Natural cards in one deck (jokers not counted)."""
JOKERS_PER_DECK = 2
"""Jokers added per deck by the ``jokers`` variant."""
JOKER = CARDS_PER_DECK
"""Card code of a joker (every joker has the same code)."""
JOKER_RANK = NUM_RANKS
"""Rank index used for jokers in per-rank count vectors."""

RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_SYMBOLS = ("♠", "♥", "♦", "♣")


def rank_of(card: int) -> int:
    """Rank index (0..12) of a card code, or ``JOKER_RANK`` for a joker."""
    return JOKER_RANK if card == JOKER else card // NUM_SUITS


RANK_OF_CARD = tuple(rank_of(card) for card in range(JOKER + 1))
"""``RANK_OF_CARD[card]`` is `rank_of(card)`: a lookup table for the hot loops that count ranks."""
RANK_BYTES = bytes(RANK_OF_CARD) + bytes(256 - len(RANK_OF_CARD))
"""``bytes(cards).translate(RANK_BYTES)``: the ranks of a list of card codes in one call."""


def suit_of(card: int) -> int:
    """Suit index (0..3) of a natural card code."""
    if card == JOKER:
        raise ValueError("a joker has no suit")
    return card % NUM_SUITS


def card_face(card: int) -> str:
    """Printable face such as ``7♠``, ``10♥`` or ``Jkr`` for a joker."""
    if card == JOKER:
        return "Jkr"
    return RANK_NAMES[rank_of(card)] + SUIT_SYMBOLS[suit_of(card)]


def rank_name(rank: int) -> str:
    """Short printable rank: ``A``, ``2`` .. ``K``, or ``joker``."""
    return "joker" if rank == JOKER_RANK else RANK_NAMES[rank]


def make_deck(decks: int, jokers: bool, ranks: int = NUM_RANKS, suits: int = NUM_SUITS) -> list[int]:
    """Unshuffled card codes of ``decks`` decks, with jokers if asked.

    A deck holds the lowest ``ranks`` ranks (ace first) in the first ``suits`` suits; the defaults are
    the full 52-card deck. Card codes stay ``rank * NUM_SUITS + suit`` whatever the composition.
    """
    one_deck = [rank * NUM_SUITS + suit for rank in range(ranks) for suit in range(suits)]
    return (one_deck + ([JOKER] * JOKERS_PER_DECK if jokers else [])) * decks


def distinct_orders(counts: dict[int, int]) -> int:
    """How many distinct sequences the multiset ``{rank: copies}`` has (a multinomial coefficient)."""
    total = math.factorial(sum(counts.values()))
    for copies in counts.values():
        total //= math.factorial(copies)
    return total


def rank_orders(counts: dict[int, int]):
    """Every distinct sequence of the multiset ``{rank: copies}``, in lexicographic order."""
    remaining = dict(sorted(counts.items()))
    size = sum(remaining.values())
    sequence: list[int] = []

    def extend():
        if len(sequence) == size:
            yield tuple(sequence)
            return
        for rank, left in remaining.items():
            if left:
                remaining[rank] -= 1
                sequence.append(rank)
                yield from extend()
                sequence.pop()
                remaining[rank] += 1

    yield from extend()
