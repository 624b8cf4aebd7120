"""Move values, written once: what a move takes, what it risks, and the greedy and heuristic values.

`GreedyPolicy` and `HeuristicPolicy` (rouba_env.players.scripted) play the
best move by `greedy_values` and `heuristic_values`; the expert uses the
heuristic as its prior and the two players for its rollouts.
"""

from __future__ import annotations

import numpy as np

from rouba_env.encoding.actions import ActionEncoding, action_move
from rouba_env.encoding.observation import ObservationView
from rouba_env.players.base import check_mask
from rouba_env.rules.cards import JOKER_RANK, NUM_RANKS
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import cards_captured_each
from rouba_env.streams import Randomness, uniform_runs
from rouba_env.rules.core import (
    EMPTY_PILE,
    JOKER_KIND_OFFSET,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
)


TIE_NOISE = 1e-3
"""Scale of the random key added to action values: breaks exact ties at random, never reorders real differences."""
VALUE_DECIMALS = 9
"""Action values are compared at this many decimals: the same value reached by two sums (2/3 one way, 1 - 1/3
the other) is a tie, in `pick_best` and in the scripted players' ``action_probabilities`` alike."""


def comparable(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to `VALUE_DECIMALS`: equal where they differ only by floating-point rounding."""
    return np.round(values, VALUE_DECIMALS)


class ActionFeatures:
    """Per-action-index arrays (kind, shown rank, target type, pile offset) of an `ActionEncoding`."""

    def __init__(self, encoding: ActionEncoding):
        index = np.arange(encoding.size)
        self.kind, self.target = action_move(index, encoding.num_targets)
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


def cards_taken(view: ObservationView, features: ActionFeatures, take_all: bool,
                *,
                rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """int64[K]: cards action ``actions[k]`` moves into the mover's pile in row ``rows[k]``, besides the played card.

    The rules core's `cards_captured` decides, from what the mover sees: the table's cards of the
    shown rank and its jokers, and the size of the pile a steal is played on.
    """
    rank = features.rank[actions]
    return cards_captured_each(
        bool(take_all), features.target[actions].astype(np.int64),
        view.table_cards[rows, rank].astype(np.int64), view.table_cards[rows, JOKER_RANK].astype(np.int64),
        view.pile_sizes[rows, features.pile_offset[actions]].astype(np.int64))


def legal_entries(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, actions) of every legal entry of a mask, row by row; ValueError if a row has none."""
    rows, actions = np.nonzero(check_mask(mask))
    return rows, actions


def all_entries(batch: int, num_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, actions) of every entry of a ``[batch, num_actions]`` array, row-major."""
    return np.repeat(np.arange(batch), num_actions), np.tile(np.arange(num_actions), batch)


def pick_best(values: np.ndarray, rows: np.ndarray, actions: np.ndarray, *, batch: int,
              rng: Randomness) -> np.ndarray:
    """int64[batch]: per row, the action of the highest value among its entries; exact ties at random.

    ``rows`` must be sorted (as `legal_entries` gives them) and cover every row.
    """
    keys = comparable(values) + TIE_NOISE * uniform_runs(rng, rows, batch)
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
    copies = np.array(rules.rank_copies)
    natural = np.maximum(copies[:NUM_RANKS] - view.seen[:, :NUM_RANKS] - view.hand[:, :NUM_RANKS], 0)
    joker = np.maximum(copies[JOKER_RANK] - view.seen[:, JOKER_RANK] - view.hand[:, JOKER_RANK], 0)
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


EMPTY_PILE_COLUMN = NUM_RANKS
"""Column of `match_probabilities` for an empty pile."""


def match_probabilities(view: ObservationView, rules: RulesConfig) -> np.ndarray:
    """float[B, 14]: chance that some opponent can play rank r before the observer's next turn.

    Hypergeometric: the opponents' H cards are drawn from the U unseen cards,
    u of which show r (unseen r plus unseen jokers); P(none) = prod_i (U-u-i)/(U-i).
    Column `EMPTY_PILE_COLUMN` stands for an empty pile (nothing to steal): 0.
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




def greedy_priorities(features: ActionFeatures) -> np.ndarray:
    """float[A]: greedy's small bonus per action: steal > table capture > own pile > discard, natural > joker."""
    priority = np.zeros(features.kind.shape)
    priority[features.is_steal] = GREEDY_PRIORITY_STEAL
    priority[features.is_table | features.is_table_joker] = GREEDY_PRIORITY_TABLE
    priority[features.is_own_pile] = GREEDY_PRIORITY_OWN_PILE
    priority[features.is_discard] = GREEDY_PRIORITY_DISCARD
    priority[features.is_joker] -= GREEDY_JOKER_PENALTY
    return priority


def greedy_values(view: ObservationView, features: ActionFeatures, rules: RulesConfig,
                  *,
                  rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """float[K]: greedy's value of action ``actions[k]`` in row ``rows[k]``: cards taken + `greedy_priorities`."""
    return cards_taken(view, features, rules.take_all, rows=rows,
                       actions=actions) + greedy_priorities(features)[actions]


def heuristic_values(view: ObservationView, features: ActionFeatures, rules: RulesConfig,
                     *,
                     rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """float[K]: the heuristic's value of action ``actions[k]`` in row ``rows[k]``, in cards of margin.

    With ``o = n - 1`` opponents, ``k`` = cards taken (`cards_taken`) and
    ``p(r)`` = chance some opponent can play rank r before the observer's next
    turn (`match_probabilities`, from counting unseen cards)::

        value = gain - risk - discard_cost - joker_cost
        gain         = 0 for a discard, else k + 1 (the played card joins my pile),
                       plus k / o for a steal (the victim loses the pile: steal the biggest now)
        risk         = RISK_WEIGHT * S' * p(t') * (1 + 1 / o)
                       S', t' = my pile's size and top rank after the action; a top whose
                       rank has no unseen copy left is safe (p = 0), so covering a big pile
                       with a rank that has shown up a lot scores high
        discard_cost = DISCARD_EXPOSURE * p(r) / o     (an opponent may take the card)
                       - PAIR_BONUS * (1 - p(r))       if I still hold rank r afterwards
                       (a discarded joker: exposure with p = 1)
        joker_cost   = JOKER_COST for playing a joker
    """
    opponents = rules.num_players - 1
    is_discard, is_joker, rank = features.is_discard[actions], features.is_joker[actions], features.rank[actions]
    taken = cards_taken(view, features, rules.take_all, rows=rows, actions=actions).astype(np.float64)
    gain = np.where(is_discard, 0.0, taken + 1.0) + np.where(features.is_steal[actions], taken / opponents, 0.0)

    p_match = match_probabilities(view, rules)
    own_top = view.pile_tops[rows, 0]
    own_size = view.pile_sizes[rows, 0].astype(np.float64)
    top_after = np.where(is_discard, np.where(own_top == EMPTY_PILE, EMPTY_PILE_COLUMN, own_top), rank)
    size_after = np.where(is_discard, own_size, own_size + taken + 1.0)
    risk = RISK_WEIGHT * size_after * p_match[rows, top_after] * (1.0 + 1.0 / opponents)

    p_discard = np.where(is_joker, 1.0, p_match[rows, rank])
    still_held = (view.hand[rows, features.card_rank[actions]] >= 2) & ~is_joker
    discard_cost = DISCARD_EXPOSURE * p_discard / opponents - PAIR_BONUS * still_held * (1.0 - p_discard)
    discard_cost = np.where(is_discard, discard_cost, 0.0)
    joker_cost = np.where(is_joker, JOKER_COST, 0.0)
    return gain - risk - discard_cost - joker_cost
