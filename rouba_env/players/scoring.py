"""Move features shared by every scripted player: what a move takes, what it risks.

The greedy and heuristic values live here once; `GreedyPolicy`,
`HeuristicPolicy` and the expert's rollouts all use them.
"""

from __future__ import annotations

import numpy as np

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationView
from rouba_env.players.base import check_mask
from rouba_env.rules.cards import JOKER_RANK, JOKERS_PER_DECK, NUM_RANKS
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import (
    JOKER_KIND_OFFSET,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
)


TIE_NOISE = 1e-3
"""Scale of the random key added to action values: breaks exact ties at random, never reorders real differences."""


class ActionTable:
    """Per-action-index arrays (kind, shown rank, target type, pile offset) of an `ActionEncoding`."""

    def __init__(self, encoding: ActionEncoding):
        index = np.arange(encoding.size)
        self.kind, self.target = np.divmod(index, encoding.num_targets)
        self.is_joker = self.kind >= JOKER_KIND_OFFSET
        self.rank = np.where(self.is_joker, self.kind - JOKER_KIND_OFFSET, self.kind)
        """Rank the played card shows (a joker's named rank; a discarded joker shows none)."""
        self.is_table = self.target == TARGET_TABLE
        self.is_discard = self.target == TARGET_DISCARD
        self.is_table_joker = self.target == TARGET_TABLE_JOKER
        self.is_own_pile = self.target == TARGET_PILE_OFFSET
        self.is_steal = self.target > TARGET_PILE_OFFSET
        self.pile_offset = np.maximum(self.target - TARGET_PILE_OFFSET, 0)
        """Seat offset of a pile target (0 for non-pile targets, only meaningful with `is_steal`/`is_own_pile`)."""
        self.card_rank = np.where(self.is_joker, JOKER_RANK, self.rank)
        """Rank slot of the card that leaves the hand (jokers: slot 13)."""


def cards_taken(view: ObservationView, table: ActionTable, take_all: bool,
                rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """int64[K]: cards action ``actions[k]`` moves into the mover's pile in row ``rows[k]``, besides the played card.

    Steal: the victim's pile; table capture: one card (``take_all``: every
    table card of that rank plus every table joker); table joker: one; own
    pile and discard: none.
    """
    rank = table.rank[actions]
    if take_all:
        table_take = view.table[rows, rank] + view.table[rows, JOKER_RANK]
    else:
        table_take = np.ones(rows.shape, dtype=np.int64)
    taken = np.where(table.is_steal[actions], view.pile_sizes[rows, table.pile_offset[actions]], 0)
    taken = np.where(table.is_table[actions], table_take, taken)
    return np.where(table.is_table_joker[actions], 1, taken)


def legal_entries(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, actions) of every legal entry of a mask, row by row; ValueError if a row has none."""
    return np.nonzero(check_mask(mask))


def all_entries(batch: int, num_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, actions) of every entry of a ``[batch, num_actions]`` array, row-major."""
    return np.repeat(np.arange(batch), num_actions), np.tile(np.arange(num_actions), batch)


def pick_best(values: np.ndarray, rows: np.ndarray, actions: np.ndarray, batch: int,
              rng: np.random.Generator) -> np.ndarray:
    """int64[batch]: per row, the action of the highest value among its entries; exact ties at random.

    ``rows`` must be sorted (as `legal_entries` gives them) and cover every row.
    """
    keys = values + TIE_NOISE * rng.random(values.shape)
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    row_best = np.maximum.reduceat(keys, starts)
    is_best = keys == row_best[rows]
    first_best = np.flatnonzero(is_best & np.r_[True, ~(is_best[:-1] & (rows[1:] == rows[:-1]))])
    chosen = np.zeros(batch, dtype=np.int64)
    chosen[rows[first_best]] = actions[first_best]
    return chosen


GREEDY_PRIORITY_STEAL = 0.3
GREEDY_PRIORITY_TABLE = 0.2
GREEDY_PRIORITY_OWN_PILE = 0.1
GREEDY_PRIORITY_DISCARD = -0.5
"""Greedy's order among moves taking equally many cards: steal, table capture, own pile, discard."""
GREEDY_JOKER_PENALTY = 0.05
"""Greedy plays a natural card rather than a joker for the same haul."""


RISK_WEIGHT = 1.0
"""Weight of the expected loss of the own pile to a steal before the next turn."""
DISCARD_EXPOSURE = 2.0
"""Cards an opponent gains by capturing a discarded card (the discard and their own card)."""
PAIR_BONUS = 1.5
"""Value of discarding a rank still held: next turn the player can capture it back."""
JOKER_COST = 2.5
"""Cards a joker is worth kept in hand: it can steal any pile later."""


def unseen_counts(view: ObservationView, rules: RulesConfig) -> tuple[np.ndarray, np.ndarray]:
    """(int64[B, 13] unseen natural cards per rank, int64[B] unseen jokers) from the observer's view.

    Unseen = copies in the decks - seen face up (table, piles) - own hand: those
    cards are in opponents' hands or in the deck.
    """
    copies = rules.copies_per_rank
    jokers = JOKERS_PER_DECK * rules.decks if rules.jokers else 0
    natural = np.maximum(copies - view.seen[:, :NUM_RANKS] - view.hand[:, :NUM_RANKS], 0)
    joker = np.maximum(jokers - view.seen[:, JOKER_RANK] - view.hand[:, JOKER_RANK], 0)
    return natural, joker


def opponent_cards_before_next_turn(view: ObservationView, rules: RulesConfig) -> np.ndarray:
    """int64[B]: unseen cards opponents may play before the observer plays again.

    The opponents' hands; when every opponent hand is empty but the deck is
    not, the next deal's cards; with ``draw_from_deck`` one flipped card per opponent.
    """
    n = rules.num_players
    opponents = n - 1
    if rules.draw_from_deck:
        return np.minimum(view.deck_size, opponents)
    in_hands = view.hand_sizes[:, 1:n].sum(axis=1)
    next_deal = np.minimum(view.deck_size, rules.hand_size * opponents)
    return np.where(in_hands > 0, in_hands, next_deal)


def match_probabilities(view: ObservationView, rules: RulesConfig) -> np.ndarray:
    """float[B, 14]: chance that some opponent can play rank r before the observer's next turn.

    Hypergeometric: the opponents' H cards are drawn from the U unseen cards,
    u of which show r (unseen r plus unseen jokers); P(none) = prod_i (U-u-i)/(U-i).
    Column 13 stands for an empty pile (nothing to steal): 0.
    """
    natural, joker = unseen_counts(view, rules)
    matching = (natural + joker[:, None]).astype(np.float64)
    total = (natural.sum(axis=1) + joker).astype(np.float64)[:, None]
    drawn = opponent_cards_before_next_turn(view, rules)[:, None]
    p_none = np.ones_like(matching)
    for i in range(int(drawn.max(initial=0))):
        factor = np.maximum(total - matching - i, 0.0) / np.maximum(total - i, 1.0)
        p_none = np.where(i < drawn, p_none * factor, p_none)
    return np.concatenate([1.0 - p_none, np.zeros((p_none.shape[0], 1))], axis=1)


