"""Scripted players: ``greedy``, ``heuristic`` and ``expert`` (``random`` lives in `rouba_env.policy`).

Every player here decides from what its seat sees (observation vector and
action mask, see `rouba_env.observation` and `rouba_env.actions`), draws
randomness only from the `numpy.random.Generator` it is given, and only ever
picks actions whose mask entry is set. Each registers itself with
`register_policy`, so specs such as ``greedy`` or ``expert:samples=32`` work
with `make_policy`.

* `GreedyPolicy` takes the most cards now; a fast, vectorized rollout policy.
* `HeuristicPolicy` scores every legal action with the rules page's tips
  (steal big piles now, count cards, keep a dead rank on top of the own pile,
  discard safely).
* `ExpertPolicy` searches: it samples the hidden cards consistently with its
  observation, tries every legal move on each sample and plays the game out
  with a fast rollout policy, then plays the move with the best mean result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rouba_env import engine
from rouba_env.actions import ActionEncoding
from rouba_env.cards import JOKER, JOKER_RANK, JOKERS_PER_DECK, NUM_RANKS, make_deck, rank_of
from rouba_env.config import RulesConfig
from rouba_env.engine import (
    EMPTY_PILE,
    JOKER_KIND_OFFSET,
    NO_SEAT,
    NUM_RANK_SLOTS,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
    GameState,
)
from rouba_env.observation import EMPTY_SLOT, PILE_TOP_SLOTS, ObservationEncoder
from rouba_env.policy import BasePolicy, Policy, check_mask, make_policy, register_policy

TIE_NOISE = 1e-3
"""Scale of the random key added to action values: breaks exact ties at random, never reorders real differences."""


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


def cards_taken(view: ObservationView, table: ActionTable, take_all: bool) -> np.ndarray:
    """int64[B, A]: cards each action moves into the mover's pile besides the played card.

    Steal: the victim's pile; table capture: one card (``take_all``: every
    table card of that rank plus every table joker); table joker: one; own
    pile and discard: none.
    """
    table_of_rank = view.table[:, table.rank]
    if take_all:
        table_take = table_of_rank + view.table[:, JOKER_RANK : JOKER_RANK + 1]
    else:
        table_take = np.ones_like(table_of_rank)
    stolen = view.pile_sizes[:, table.pile_offset]
    taken = np.where(table.is_steal, stolen, 0)
    taken = np.where(table.is_table, table_take, taken)
    return np.where(table.is_table_joker, 1, taken)


def pick_best(values: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Index of the highest value among legal actions per row; exact ties broken at random."""
    keys = values + TIE_NOISE * rng.random(values.shape)
    keys[~legal] = -np.inf
    return keys.argmax(axis=1).astype(np.int64)


# ---------------------------------------------------------------------------
# greedy
# ---------------------------------------------------------------------------

GREEDY_PRIORITY_STEAL = 0.3
GREEDY_PRIORITY_TABLE = 0.2
GREEDY_PRIORITY_OWN_PILE = 0.1
GREEDY_PRIORITY_DISCARD = -0.5
"""Greedy's order among moves taking equally many cards: steal, table capture, own pile, discard."""
GREEDY_JOKER_PENALTY = 0.05
"""Greedy plays a natural card rather than a joker for the same haul."""


class GreedyPolicy(BasePolicy):
    """Takes the most cards now: the biggest steal, else a table capture, else the own pile; else discards.

    Value of an action = cards it takes (see `cards_taken`) + a small priority
    (steal > table > own pile > discard) - a small joker penalty; ties at random.
    Fully vectorized over the batch, so it doubles as a fast rollout policy.
    """

    name = "greedy"

    def __init__(self, rules: RulesConfig, max_players: int | None = None):
        super().__init__(rules, max_players)
        self.table = ActionTable(self.actions)
        priority = np.zeros(self.actions.size)
        priority[self.table.is_steal] = GREEDY_PRIORITY_STEAL
        priority[self.table.is_table | self.table.is_table_joker] = GREEDY_PRIORITY_TABLE
        priority[self.table.is_own_pile] = GREEDY_PRIORITY_OWN_PILE
        priority[self.table.is_discard] = GREEDY_PRIORITY_DISCARD
        priority[self.table.is_joker] -= GREEDY_JOKER_PENALTY
        self.priority = priority

    def action_values(self, obs: np.ndarray) -> np.ndarray:
        """float[B, A]: greedy's value of every action (meaningful for legal ones only)."""
        view = read_observations(self.encoder, obs)
        return cards_taken(view, self.table, self.rules.take_all) + self.priority

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal = check_mask(mask)
        return pick_best(self.action_values(np.asarray(obs)), legal, rng)


# ---------------------------------------------------------------------------
# heuristic
# ---------------------------------------------------------------------------

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
    """float[B, 13]: chance that some opponent can play rank r before the observer's next turn.

    Hypergeometric: the opponents' H cards are drawn from the U unseen cards,
    u of which show r (unseen r plus unseen jokers); P(none) = prod_i (U-u-i)/(U-i).
    """
    natural, joker = unseen_counts(view, rules)
    matching = (natural + joker[:, None]).astype(np.float64)
    total = (natural.sum(axis=1) + joker).astype(np.float64)[:, None]
    drawn = opponent_cards_before_next_turn(view, rules)[:, None]
    p_none = np.ones_like(matching)
    for i in range(int(drawn.max(initial=0))):
        factor = np.maximum(total - matching - i, 0.0) / np.maximum(total - i, 1.0)
        p_none = np.where(i < drawn, p_none * factor, p_none)
    return 1.0 - p_none


class HeuristicPolicy(BasePolicy):
    """Scores every legal action with the rules page's tips; plays the best (ties at random).

    In cards of margin (own score minus the others' mean), with ``o = n - 1``
    opponents, ``k`` = cards taken (`cards_taken`) and ``p(r)`` = chance some
    opponent can play rank r before my next turn (`match_probabilities`, from
    counting unseen cards)::

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

    name = "heuristic"

    def __init__(self, rules: RulesConfig, max_players: int | None = None):
        super().__init__(rules, max_players)
        self.table = ActionTable(self.actions)

    def action_values(self, obs: np.ndarray) -> np.ndarray:
        """float[B, A]: the documented value of every action (meaningful for legal ones only)."""
        rules, act = self.rules, self.table
        view = read_observations(self.encoder, obs)
        opponents = rules.num_players - 1
        taken = cards_taken(view, act, rules.take_all).astype(np.float64)
        gain = np.where(act.is_discard, 0.0, taken + 1.0) + np.where(act.is_steal, taken / opponents, 0.0)

        p_match = match_probabilities(view, rules)
        # Column NUM_RANKS stands for "no top" (empty pile): nothing to steal.
        p_top = np.concatenate([p_match, np.zeros((p_match.shape[0], 1))], axis=1)
        own_top = view.pile_tops[:, 0]
        own_top_slot = np.where(own_top == EMPTY_PILE, NUM_RANKS, own_top)[:, None]
        own_size = view.pile_sizes[:, 0:1].astype(np.float64)
        top_after = np.where(act.is_discard, own_top_slot, act.rank)
        size_after = np.where(act.is_discard, own_size, own_size + taken + 1.0)
        risk = RISK_WEIGHT * size_after * np.take_along_axis(p_top, top_after, axis=1) * (1.0 + 1.0 / opponents)

        p_discard = np.where(act.is_joker, 1.0, p_match[:, act.rank])
        still_held = (view.hand[:, act.card_rank] >= 2) & ~act.is_joker
        discard_cost = DISCARD_EXPOSURE * p_discard / opponents - PAIR_BONUS * still_held * (1.0 - p_discard)
        discard_cost = np.where(act.is_discard, discard_cost, 0.0)
        joker_cost = np.where(act.is_joker, JOKER_COST, 0.0)
        return gain - risk - discard_cost - joker_cost

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal = check_mask(mask)
        return pick_best(self.action_values(np.asarray(obs)), legal, rng)


register_policy("greedy", lambda rules, max_players: GreedyPolicy(rules, max_players))
register_policy("heuristic", lambda rules, max_players: HeuristicPolicy(rules, max_players))
