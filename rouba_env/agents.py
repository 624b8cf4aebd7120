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


# ---------------------------------------------------------------------------
# expert: determinization
# ---------------------------------------------------------------------------


def observer_seat(rules: RulesConfig, dealer_offset: int) -> int:
    """Absolute seat of an observer from where it sees the dealer (the dealer's seat is in the rules)."""
    return (rules.dealer - int(dealer_offset)) % rules.num_players


def determinize(
    rules: RulesConfig,
    obs: np.ndarray,
    rng: np.random.Generator,
    encoder: ObservationEncoder | None = None,
) -> GameState:
    """A full `GameState` consistent with one observation, the hidden cards drawn at random.

    Known from the observation: the observer's hand, the table, every pile's
    size and top rank, the ranks face up so far (``seen``), hand sizes, deck
    size. The rest is sampled uniformly:

    * pile contents: ``seen - table`` per rank; each non-empty pile gets a top
      card of its top rank (a joker when no natural one is left, a joker shows
      its named rank), then the remaining cards fill the piles to their sizes;
    * unseen = all cards - own hand - seen; shuffled, it fills the opponents'
      hands (their sizes) and the deck (its size, in random order).

    Card codes are drawn from the real decks, so the state holds exactly the
    decks' cards (`engine.card_total` holds). ``last_capturer`` is not
    observable: a seat with a non-empty pile is picked at random (it only
    matters with ``leftovers_to_last_capturer``). Raises ValueError when the
    observation cannot come from a game under ``rules``.
    """
    encoder = encoder or ObservationEncoder(rules)
    view = read_observations(encoder, obs)
    if view.hand.shape[0] != 1:
        raise ValueError(f"determinize takes one observation, got a batch of {view.hand.shape[0]}")
    n = rules.num_players
    seat = observer_seat(rules, view.dealer_offset[0])

    def absolute(values: np.ndarray) -> list[int]:
        """Per-seat values reordered from observer-relative to absolute seats."""
        return [int(values[(s - seat) % n]) for s in range(n)]

    pile_sizes, pile_tops, hand_sizes = (absolute(a[0]) for a in (view.pile_sizes, view.pile_tops, view.hand_sizes))
    to_act = int(view.to_act_offset[0])
    current = NO_SEAT if to_act == NO_SEAT else (seat + to_act) % n

    codes_by_rank: list[list[int]] = [[] for _ in range(NUM_RANK_SLOTS)]
    for card in make_deck(rules.decks, rules.jokers):
        codes_by_rank[rank_of(card)].append(card)

    def take(rank: int, count: int, where: str) -> list[int]:
        pool = codes_by_rank[rank]
        if count > len(pool):
            raise ValueError(f"observation is inconsistent with the rules: {where} needs {count} more card(s) "
                             f"of rank slot {rank}, only {len(pool)} left in the decks")
        taken, codes_by_rank[rank] = pool[len(pool) - count:], pool[: len(pool) - count]
        return taken

    own_hand = [card for rank in range(NUM_RANK_SLOTS) for card in take(rank, int(view.hand[0, rank]), "own hand")]
    table = [card for rank in range(NUM_RANK_SLOTS) for card in take(rank, int(view.table[0, rank]), "table")]
    in_piles = view.seen[0] - view.table[0]
    if (in_piles < 0).any() or int(in_piles.sum()) != sum(pile_sizes):
        raise ValueError("observation is inconsistent: cards seen in piles do not match the pile sizes")
    piles: list[list[int]] = [[] for _ in range(n)]
    tops: list[int | None] = [None] * n
    # Natural tops first: a joker can stand for any rank, a natural card only for its own.
    for joker_pass in (False, True):
        for s in range(n):
            if pile_sizes[s] == 0 or tops[s] is not None:
                continue
            if pile_tops[s] == EMPTY_PILE:
                raise ValueError(f"observation is inconsistent: seat {s}'s pile has cards but no top")
            rank = JOKER_RANK if joker_pass else pile_tops[s]
            if in_piles[rank] > 0:
                in_piles[rank] -= 1
                tops[s] = take(rank, 1, "pile tops")[0]
    if any(size > 0 and top is None for size, top in zip(pile_sizes, tops)):
        raise ValueError("observation is inconsistent: no seen card can be a pile's top")
    buried = [card for rank in range(NUM_RANK_SLOTS) for card in take(rank, int(in_piles[rank]), "piles")]
    buried = [buried[i] for i in rng.permutation(len(buried))]
    for s in range(n):
        if pile_sizes[s]:
            piles[s] = buried[: pile_sizes[s] - 1] + [tops[s]]
            buried = buried[pile_sizes[s] - 1 :]

    unseen = [card for pool in codes_by_rank for card in pool]
    unseen = [unseen[i] for i in rng.permutation(len(unseen))]
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[seat] = own_hand
    if rules.draw_from_deck and current not in (NO_SEAT, seat):
        flipped = np.flatnonzero(np.asarray(obs).reshape(-1)[encoder.layout["flipped"]] > 0)
        if flipped.size:  # the flipped card is public: put that very rank in the current hand
            index = next((i for i, card in enumerate(unseen) if rank_of(card) == flipped[0]), None)
            if index is None:
                raise ValueError("observation is inconsistent: the flipped card's rank is all seen")
            hands[current].append(unseen.pop(index))
    for s in range(n):
        if s != seat:
            need = hand_sizes[s] - len(hands[s])
            hands[s].extend(unseen[:need])
            unseen = unseen[need:]
            if len(hands[s]) != hand_sizes[s]:
                raise ValueError("observation is inconsistent: too few unseen cards for the opponents' hands")
    if len(unseen) != int(view.deck_size[0]):
        raise ValueError(f"observation is inconsistent: {len(unseen)} unseen cards left for a deck "
                         f"of {int(view.deck_size[0])}")
    holders = [s for s in range(n) if pile_sizes[s] > 0]
    last_capturer = int(holders[rng.integers(len(holders))]) if holders else NO_SEAT
    return GameState(
        config=rules,
        hands=hands,
        table=table,
        piles=piles,
        pile_tops=list(pile_tops),
        deck=unseen,
        current=current,
        last_capturer=last_capturer,
    )


# ---------------------------------------------------------------------------
# expert: a lean rank-level rollout with greedy play
# ---------------------------------------------------------------------------


class LeanGame:
    """A rank-level copy of a `GameState` for fast rollouts (suits and pile contents dropped).

    Same rules as `rouba_env.engine` for everything that decides play:
    hands and table per rank, pile sizes and tops, the deck order, the seat to
    act and the last capturer. `play` applies a move without checking it;
    `play_greedy` picks greedy's move (the same values as `GreedyPolicy`).
    """

    __slots__ = ("rules", "hands", "hand_sizes", "table", "sizes", "tops", "deck", "current", "last_capturer",
                 "seen")

    def __init__(self, rules, hands, hand_sizes, table, sizes, tops, deck, current, last_capturer, seen):
        self.rules = rules
        self.seen = seen
        """Cards per rank slot face up so far (table and piles), as in the observation."""
        self.hands = hands
        self.hand_sizes = hand_sizes
        self.table = table
        self.sizes = sizes
        self.tops = tops
        self.deck = deck
        self.current = current
        self.last_capturer = last_capturer

    @classmethod
    def from_state(cls, state: GameState) -> "LeanGame":
        return cls(
            state.config,
            [engine.rank_counts(hand) for hand in state.hands],
            [len(hand) for hand in state.hands],
            engine.rank_counts(state.table),
            [len(pile) for pile in state.piles],
            list(state.pile_tops),
            [rank_of(card) for card in state.deck],
            state.current,
            state.last_capturer,
            engine.seen_counts(state),
        )

    def copy(self) -> "LeanGame":
        return LeanGame(self.rules, [list(h) for h in self.hands], list(self.hand_sizes), list(self.table),
                        list(self.sizes), list(self.tops), list(self.deck), self.current, self.last_capturer,
                        list(self.seen))

    def play(self, kind: int, target: int) -> None:
        """Apply the move ``(kind, target)`` of the seat to act (assumed legal), then pass the turn."""
        mover, rules = self.current, self.rules
        is_joker = kind >= JOKER_KIND_OFFSET
        rank = kind - JOKER_KIND_OFFSET if is_joker else kind
        slot = JOKER_RANK if is_joker else rank
        self.hands[mover][slot] -= 1
        self.hand_sizes[mover] -= 1
        self.seen[slot] += 1
        table = self.table
        if target == TARGET_DISCARD:
            table[slot] += 1
        elif target == TARGET_TABLE:
            if rules.take_all:
                taken = table[rank] + table[JOKER_RANK]
                table[rank] = table[JOKER_RANK] = 0
            else:
                taken = 1
                table[rank] -= 1
            self.sizes[mover] += taken + 1
            self.tops[mover] = rank
            self.last_capturer = mover
        elif target == TARGET_TABLE_JOKER:
            table[JOKER_RANK] -= 1
            self.sizes[mover] += 2
            self.tops[mover] = rank
            self.last_capturer = mover
        else:
            victim = (mover + target - TARGET_PILE_OFFSET) % rules.num_players
            if victim != mover:
                self.sizes[mover] += self.sizes[victim]
                self.sizes[victim] = 0
                self.tops[victim] = EMPTY_PILE
                self.last_capturer = mover
            self.sizes[mover] += 1
            self.tops[mover] = rank
        self._advance(mover)

    def _advance(self, mover: int) -> None:
        rules = self.rules
        n = rules.num_players
        if rules.draw_from_deck:
            if self.deck:
                self.current = (mover + 1) % n
                self.hands[self.current][self.deck.pop()] += 1
                self.hand_sizes[self.current] += 1
            else:
                self._finish()
            return
        for offset in range(1, n + 1):
            seat = (mover + offset) % n
            if self.hand_sizes[seat]:
                self.current = seat
                return
        if not self.deck:
            self._finish()
            return
        first = rules.first_player
        deck = self.deck
        for _ in range(rules.hand_size):
            for offset in range(n):
                if not deck:
                    break
                seat = (first + offset) % n
                self.hands[seat][deck.pop()] += 1
                self.hand_sizes[seat] += 1
        self.current = next((first + o) % n for o in range(n) if self.hand_sizes[(first + o) % n])

    def _finish(self) -> None:
        self.current = NO_SEAT
        if self.rules.leftovers_to_last_capturer and self.last_capturer != NO_SEAT:
            self.sizes[self.last_capturer] += sum(self.table)
            self.table = [0] * NUM_RANK_SLOTS

    def greedy_move(self, noise: list[float], position: int) -> tuple[int, int]:
        """Greedy's move (see `GreedyPolicy`) for the seat to act; ``noise[position:]`` breaks ties."""
        rules = self.rules
        n = rules.num_players
        mover = self.current
        hand, table, tops, sizes = self.hands[mover], self.table, self.tops, self.sizes
        table_jokers = table[JOKER_RANK]
        best_value, best = -1e9, (0, TARGET_DISCARD)
        discards = []
        for rank in range(NUM_RANKS):
            if not hand[rank]:
                continue
            captures = False
            for offset in range(1, n):
                if tops[(mover + offset) % n] == rank:
                    captures = True
                    value = sizes[(mover + offset) % n] + GREEDY_PRIORITY_STEAL
                    if value > best_value:
                        best_value, best = value, (rank, TARGET_PILE_OFFSET + offset)
            if table[rank] or (rules.take_all and table_jokers):
                captures = True
                value = (table[rank] + table_jokers if rules.take_all else 1) + GREEDY_PRIORITY_TABLE
                if value > best_value:
                    best_value, best = value, (rank, TARGET_TABLE)
            if table_jokers and not rules.take_all:
                captures = True
                value = 1 + GREEDY_PRIORITY_TABLE
                if value > best_value:
                    best_value, best = value, (rank, TARGET_TABLE_JOKER)
            if tops[mover] == rank:
                captures = True
                if GREEDY_PRIORITY_OWN_PILE > best_value:
                    best_value, best = GREEDY_PRIORITY_OWN_PILE, (rank, TARGET_PILE_OFFSET)
            if not captures or not rules.must_capture:
                discards.append(rank)
        if hand[JOKER_RANK]:
            joker_move = self._greedy_joker_move(best_value)
            if joker_move is not None:
                best_value, best = joker_move
        if best_value < 0:  # nothing to take: discard a card at random (a joker only if nothing else)
            if discards:
                return discards[int(noise[position % len(noise)] * len(discards))], TARGET_DISCARD
            return JOKER_KIND_OFFSET, TARGET_DISCARD
        return best

    def _greedy_joker_move(self, best_value: float) -> tuple[float, tuple[int, int]] | None:
        """The best joker play if it beats ``best_value`` (a joker never needs to be discarded here)."""
        rules = self.rules
        n = rules.num_players
        mover = self.current
        table, tops, sizes = self.table, self.tops, self.sizes
        found = None
        penalty = GREEDY_JOKER_PENALTY
        for offset in range(1, n):
            seat = (mover + offset) % n
            if tops[seat] != EMPTY_PILE:
                value = sizes[seat] + GREEDY_PRIORITY_STEAL - penalty
                if value > best_value:
                    best_value, found = value, (JOKER_KIND_OFFSET + tops[seat], TARGET_PILE_OFFSET + offset)
        for rank in range(NUM_RANKS):
            if table[rank] or (rules.take_all and table[JOKER_RANK]):
                value = (table[rank] + table[JOKER_RANK] if rules.take_all else 1) + GREEDY_PRIORITY_TABLE - penalty
                if value > best_value:
                    best_value, found = value, (JOKER_KIND_OFFSET + rank, TARGET_TABLE)
        if table[JOKER_RANK] and not rules.take_all:
            value = 1 + GREEDY_PRIORITY_TABLE - penalty
            if value > best_value:
                best_value, found = value, (JOKER_KIND_OFFSET, TARGET_TABLE_JOKER)
        if tops[mover] != EMPTY_PILE:
            value = GREEDY_PRIORITY_OWN_PILE - penalty
            if value > best_value:
                best_value, found = value, (JOKER_KIND_OFFSET + tops[mover], TARGET_PILE_OFFSET)
        return None if found is None else (best_value, found)

    def heuristic_move(self, noise: list[float], position: int) -> tuple[int, int]:
        """`HeuristicPolicy`'s move for the seat to act (same formula); ``noise[position:]`` breaks ties."""
        rules = self.rules
        n = rules.num_players
        opponents = n - 1
        swing = 1.0 + 1.0 / opponents
        mover = self.current
        hand, table, tops, sizes, seen = self.hands[mover], self.table, self.tops, self.sizes, self.seen
        copies = rules.copies_per_rank
        unseen = [max(copies - seen[r] - hand[r], 0) for r in range(NUM_RANKS)]
        jokers_total = JOKERS_PER_DECK * rules.decks if rules.jokers else 0
        unseen_jokers = max(jokers_total - seen[JOKER_RANK] - hand[JOKER_RANK], 0)
        pool = sum(unseen) + unseen_jokers
        deck_size = len(self.deck)
        if rules.draw_from_deck:
            drawn = min(deck_size, opponents)
        else:
            drawn = sum(self.hand_sizes) - self.hand_sizes[mover]
            if drawn == 0:
                drawn = min(deck_size, rules.hand_size * opponents)
        p_cache: dict[int, float] = {}

        def p_match(rank: int) -> float:
            if rank == EMPTY_PILE:
                return 0.0
            if rank not in p_cache:
                matching = unseen[rank] + unseen_jokers
                p_none = 1.0
                for i in range(drawn):
                    p_none *= max(pool - matching - i, 0) / max(pool - i, 1)
                p_cache[rank] = 1.0 - p_none
            return p_cache[rank]

        own_size, own_top = sizes[mover], tops[mover]
        take_all = rules.take_all
        table_jokers = table[JOKER_RANK]
        stay_risk = RISK_WEIGHT * own_size * p_match(own_top) * swing
        tick = position * 7
        best_value, best = -1e9, None

        def consider(value: float, move: tuple[int, int]) -> None:
            nonlocal best_value, best, tick
            tick += 1
            value += TIE_NOISE * noise[tick % len(noise)]
            if value > best_value:
                best_value, best = value, move

        def capture_value(rank: int, taken: int, steal: bool) -> float:
            gain = taken + 1 + (taken / opponents if steal else 0.0)
            return gain - RISK_WEIGHT * (own_size + taken + 1) * p_match(rank) * swing

        for rank in range(NUM_RANKS):
            held = hand[rank]
            if not held:
                continue
            captures = False
            for offset in range(1, n):
                victim = (mover + offset) % n
                if tops[victim] == rank:
                    captures = True
                    consider(capture_value(rank, sizes[victim], True), (rank, TARGET_PILE_OFFSET + offset))
            if table[rank] or (take_all and table_jokers):
                captures = True
                consider(capture_value(rank, table[rank] + table_jokers if take_all else 1, False), (rank, TARGET_TABLE))
            if table_jokers and not take_all:
                captures = True
                consider(capture_value(rank, 1, False), (rank, TARGET_TABLE_JOKER))
            if own_top == rank:
                captures = True
                consider(capture_value(rank, 0, False), (rank, TARGET_PILE_OFFSET))
            if not captures or not rules.must_capture:
                p = p_match(rank)
                cost = DISCARD_EXPOSURE * p / opponents - (PAIR_BONUS * (1.0 - p) if held >= 2 else 0.0)
                consider(-stay_risk - cost, (rank, TARGET_DISCARD))
        if hand[JOKER_RANK]:
            joker_captures = False
            for offset in range(n):
                seat = (mover + offset) % n
                if tops[seat] != EMPTY_PILE:
                    joker_captures = True
                    taken = sizes[seat] if offset else 0
                    value = capture_value(tops[seat], taken, offset > 0) - JOKER_COST
                    consider(value, (JOKER_KIND_OFFSET + tops[seat], TARGET_PILE_OFFSET + offset))
            for rank in range(NUM_RANKS):
                if table[rank] or (take_all and table_jokers):
                    joker_captures = True
                    taken = table[rank] + table_jokers if take_all else 1
                    consider(capture_value(rank, taken, False) - JOKER_COST, (JOKER_KIND_OFFSET + rank, TARGET_TABLE))
                if table_jokers and not take_all:
                    joker_captures = True
                    consider(capture_value(rank, 1, False) - JOKER_COST, (JOKER_KIND_OFFSET + rank, TARGET_TABLE_JOKER))
            if not joker_captures or not rules.must_capture:
                consider(-stay_risk - DISCARD_EXPOSURE / opponents - JOKER_COST, (JOKER_KIND_OFFSET, TARGET_DISCARD))
        return best

    def play_out(self, noise: list[float], rollout: str = "greedy") -> list[int]:
        """Play every seat's moves by the ``rollout`` player (greedy or heuristic) to the end; the final pile sizes."""
        pick = self.heuristic_move if rollout == "heuristic" else self.greedy_move
        position = 0
        while self.current != NO_SEAT:
            kind, target = pick(noise, position)
            position += 1
            self.play(kind, target)
        return self.sizes


# ---------------------------------------------------------------------------
# expert: the search player
# ---------------------------------------------------------------------------

EXPERT_DEFAULT_SAMPLES = 16
"""Determinizations per decision (see `ExpertPolicy`)."""
EXPERT_MARGIN_WEIGHT = 0.5
"""Weight of the final margin (over the deck size) next to the outcome (+1 win, 0 tie, -1 loss)."""
PRIOR_WEIGHT = 1e-6
"""The heuristic's value only breaks ties between moves with equal search results."""
ROLLOUT_PLAYERS = ("greedy", "heuristic")
"""Players `LeanGame.play_out` can roll out with."""
EXPERT_DEFAULT_ROLLOUT = "heuristic"
ROLLOUT_NOISE = 64
"""Random numbers drawn per determinization for the rollouts' tie-breaks (reused cyclically)."""


def outcome_value(sizes: list[int], seat: int, margin_weight: float, total_cards: int) -> float:
    """+1 sole top score, 0 shared top, -1 otherwise; plus ``margin_weight`` x margin / total cards."""
    own, best = sizes[seat], max(sizes)
    outcome = (1.0 if sizes.count(best) == 1 else 0.0) if own == best else -1.0
    others = (sum(sizes) - own) / (len(sizes) - 1)
    return outcome + margin_weight * (own - others) / total_cards


class ExpertPolicy(BasePolicy):
    """Determinized Monte Carlo search: sample the hidden cards, try every move, roll out greedily.

    For each of ``samples`` determinizations (`determinize`: hidden cards drawn
    consistently with the observation), every legal move is applied and the
    game is played to the end by greedy play for every seat (`LeanGame`); a
    move's value is the mean over determinizations of `outcome_value`. All
    moves share the same determinizations and rollout tie-breaks (common
    random numbers), so their comparison is less noisy than each mean. The
    best mean is played; the heuristic's score breaks exact ties. A single
    legal move is played without search.

    Default ``samples=16``: about 5-15 ms per decision in a two-player game on
    one core, and clearly stronger than ``heuristic`` (see benchmarks/LADDER.md).
    """

    name = "expert"

    def __init__(self, rules: RulesConfig, max_players: int | None = None,
                 samples: int = EXPERT_DEFAULT_SAMPLES, margin_weight: float = EXPERT_MARGIN_WEIGHT,
                 rollout: str = EXPERT_DEFAULT_ROLLOUT):
        super().__init__(rules, max_players)
        if rollout not in ROLLOUT_PLAYERS:
            raise ValueError(f"expert rollout must be one of {ROLLOUT_PLAYERS}, got {rollout!r}")
        self.rollout = rollout
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ValueError(f"expert samples must be an int of at least 1, got {samples!r}")
        if not np.isfinite(margin_weight) or margin_weight < 0:
            raise ValueError(f"expert margin_weight must be a finite number >= 0, got {margin_weight!r}")
        self.samples = int(samples)
        self.margin_weight = float(margin_weight)
        self.prior = HeuristicPolicy(rules, max_players)

    def move_values(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Mean `outcome_value` of each action in ``legal`` over the determinizations."""
        rules = self.rules
        view = read_observations(self.encoder, obs)
        seat = observer_seat(rules, view.dealer_offset[0])
        moves = [self.actions.decode(int(action)) for action in legal]
        totals = np.zeros(len(moves))
        for _ in range(self.samples):
            base = LeanGame.from_state(determinize(rules, obs, rng, self.encoder))
            noise = rng.random(ROLLOUT_NOISE).tolist()
            for index, (kind, target) in enumerate(moves):
                game = base.copy()
                game.play(kind, target)
                sizes = game.play_out(noise, self.rollout)
                totals[index] += outcome_value(sizes, seat, self.margin_weight, rules.total_cards)
        return totals / self.samples

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(check_mask(mask)[0])
        if legal.size == 1:
            return int(legal[0])
        values = self.move_values(obs, legal, rng)
        prior = self.prior.action_values(np.asarray(obs)[None, :])[0, legal]
        return int(legal[np.argmax(values + PRIOR_WEIGHT * prior)])


def _options_error(name: str, options: dict) -> ValueError:
    return ValueError(f"player {name!r} takes no option(s) {sorted(options)}")


def _make_scripted(cls):
    """Registry factory for a player without options; unknown options are a ValueError naming them."""

    def factory(rules: RulesConfig, max_players: int | None = None, **options) -> Policy:
        if options:
            raise _options_error(cls.name, options)
        return cls(rules, max_players)

    return factory


def _make_expert(rules: RulesConfig, max_players: int | None = None, **options) -> Policy:
    """``expert[:samples=N][,margin_weight=W]``; option values arrive as strings from the spec."""
    known = {"samples": int, "margin_weight": float, "rollout": str}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"player 'expert' has no option(s) {sorted(unknown)}; known: {sorted(known)}")
    parsed = {}
    for key, value in options.items():
        try:
            parsed[key] = known[key](value)
        except (TypeError, ValueError):
            raise ValueError(f"expert option {key}={value!r} is not a valid {known[key].__name__}") from None
    return ExpertPolicy(rules, max_players, **parsed)


register_policy("greedy", _make_scripted(GreedyPolicy))
register_policy("heuristic", _make_scripted(HeuristicPolicy))
register_policy("expert", _make_expert)
