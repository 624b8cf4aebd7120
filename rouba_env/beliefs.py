"""Determinization: full game states consistent with what one seat observes, the hidden cards drawn at random.

The searching players (``expert``, ``search``) judge moves on such states.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import NO_FLIPPED_CARD, ObservationEncoder
from rouba_env.rules.cards import JOKER_RANK, NUM_RANKS, distinct_orders, rank_of, rank_orders
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import EMPTY_PILE, NO_SEAT
from rouba_env.rules.engine import NUM_RANK_SLOTS, GameState


EXACT_WORLDS_LIMIT = 100_000
"""Most orders of the hidden cards `HiddenCardSampler.worlds` enumerates (``small`` needs at most a few hundred)."""


class WorldsOutOfReach(ValueError):
    """More positions are consistent with an observation than exact enumeration takes."""


class DeckByRank:
    """The decks' card codes grouped by rank slot: turns a multiset of rank slots into distinct cards."""

    def __init__(self, rules: RulesConfig):
        self.codes = np.array(sorted(rules.unshuffled_deck(), key=rank_of), dtype=np.int64)
        """Card codes sorted by rank slot."""
        self.copies = np.bincount([rank_of(card) for card in self.codes.tolist()], minlength=NUM_RANK_SLOTS)
        """Copies of each rank slot in the decks."""
        self.starts = np.concatenate([[0], np.cumsum(self.copies)[:-1]])
        """Index in `codes` of each rank slot's first card."""

    def cards_for(self, ranks: np.ndarray) -> list[int]:
        """Distinct card codes for a full multiset of rank slots (each copy of the decks used once)."""
        order = np.argsort(ranks, kind="stable")
        sorted_ranks = ranks[order]
        first_of_rank = np.concatenate([[0], np.cumsum(np.bincount(sorted_ranks, minlength=NUM_RANK_SLOTS))[:-1]])
        occurrence = np.arange(ranks.size) - first_of_rank[sorted_ranks]
        if (occurrence >= self.copies[sorted_ranks]).any():
            raise ValueError("observation is inconsistent with the rules: more cards of a rank than the decks hold")
        result = np.empty(ranks.size, dtype=np.int64)
        result[order] = self.codes[self.starts[sorted_ranks] + occurrence]
        return result.tolist()


def pile_top_slots(pile_sizes: list[int], pile_tops: list[int], in_piles: np.ndarray) -> list[int | None]:
    """The rank slot of each seat's pile top (None for an empty pile), each taken out of ``in_piles`` (the seen
    cards now in piles, per rank slot); ValueError where the seen cards cannot cover the tops."""
    n = len(pile_sizes)
    # Natural cards first (a joker can stand for any rank, a natural card only for its own).
    top_slots: list[int | None] = [None] * n
    for joker_pass in (False, True):
        for s in range(n):
            if pile_sizes[s] == 0 or top_slots[s] is not None:
                continue
            if pile_tops[s] == EMPTY_PILE:
                raise ValueError(f"observation is inconsistent: seat {s}'s pile has cards but no top")
            slot = JOKER_RANK if joker_pass else pile_tops[s]
            if in_piles[slot] > 0:
                in_piles[slot] -= 1
                top_slots[s] = slot
    if any(size > 0 and top is None for size, top in zip(pile_sizes, top_slots)):
        raise ValueError("observation is inconsistent: no seen card can be a pile's top")
    return top_slots


class HiddenCardSampler:
    """Draws full `GameState`s consistent with one observation (see `determinize`).

    Reads and checks the observation once; each `sample` then only shuffles
    the hidden cards, so many determinizations of one decision stay cheap.
    Raises ValueError when the observation cannot come from a game under ``rules``.
    """

    def __init__(self, rules: RulesConfig, obs: np.ndarray, encoder: ObservationEncoder | None = None,
                 passed_steal: float = 1.0):
        encoder = encoder or ObservationEncoder(rules)
        view = encoder.decode(obs)
        if view.batch_size != 1:
            raise ValueError(f"determinize takes one observation, got a batch of {view.batch_size}")
        self.rules = rules
        self.deck = DeckByRank(rules)
        n = rules.num_players
        self.seat = seat = int(view.seat[0])
        relative = [(s - seat) % n for s in range(n)]
        self.pile_sizes = pile_sizes = view.pile_sizes[0, relative].tolist()
        self.passed = [[0] * NUM_RANKS for _ in range(n)] if view.passed is None else view.passed[0, relative].tolist()
        self.played = ([[0] * NUM_RANK_SLOTS for _ in range(n)] if view.played is None
                       else view.played[0, relative].tolist())
        """The table talk, per absolute seat: public, so every world keeps it."""
        self.pile_tops = pile_tops = view.pile_tops[0, relative].tolist()
        hand_sizes = view.hand_sizes[0, relative].tolist()
        to_act = int(view.to_act_offset[0])
        self.current = current = NO_SEAT if to_act == NO_SEAT else (seat + to_act) % n
        own, table = view.hand[0], view.table_cards[0]
        in_piles = view.seen[0] - table
        unseen = self.deck.copies - own - view.seen[0]
        if (in_piles < 0).any() or (unseen < 0).any() or int(in_piles.sum()) != sum(pile_sizes):
            raise ValueError("observation is inconsistent: the seen cards do not fit the decks, table and pile sizes")

        top_slots = pile_top_slots(pile_sizes, pile_tops, in_piles)
        self.nonempty = [s for s in range(n) if pile_sizes[s] > 0]
        slots = np.arange(NUM_RANK_SLOTS)
        self.known = np.concatenate([
            np.repeat(slots, own), np.repeat(slots, table), [top_slots[s] for s in self.nonempty],
        ]).astype(np.int64)
        self.own_count, self.table_count = int(own.sum()), int(table.sum())
        self.buried = np.repeat(slots, in_piles)
        self.hidden = np.repeat(slots, unseen)

        self.flipped = None
        """Rank slot the current (opponent) hand is known to hold: the flipped card is public."""
        flipped = int(view.flipped[0])
        if rules.draw_from_deck and current not in (NO_SEAT, seat) and flipped != NO_FLIPPED_CARD:
            if unseen[flipped] == 0:
                raise ValueError("observation is inconsistent: every card of the flipped rank is seen")
            self.flipped = flipped
        self.opponents = ([current] if self.flipped is not None else [])
        self.opponents += [s for s in range(n) if s != seat and s not in self.opponents]
        self.hand_sizes = hand_sizes
        self.passed_steal = float(passed_steal)
        """Chance that a player who could steal a pile let it be: a sample giving the last mover such a card
        is kept with this probability (1: every sample kept, no inference from the last move)."""
        self._read_last_move()
        self.deck_size = int(view.deck_size[0])
        needed = sum(hand_sizes[s] for s in self.opponents)
        if self.hidden.size - needed != self.deck_size:
            raise ValueError(f"observation is inconsistent: {self.hidden.size} unseen cards for opponents' hands "
                             f"({needed}) and a deck of {self.deck_size}")

    def _read_last_move(self) -> None:
        """Set `last_mover` and the piles it did not steal (`unstolen`), where `passed_steal` below 1 lets a
        sample be judged by the last move: no seat (and no pile) otherwise."""
        rules, seat, n = self.rules, self.seat, self.rules.num_players
        self.last_mover, self.unstolen = NO_SEAT, np.zeros(0, dtype=np.int64)
        last_mover = (seat - 1) % n
        dealt_just_now = all(size == rules.hand_size for size in self.hand_sizes)
        if (self.passed_steal < 1.0 and not rules.draw_from_deck and self.current == seat and not dealt_just_now
                and last_mover in self.opponents):
            # The last mover held its remaining cards when it chose not to steal any pile it could have taken.
            self.last_mover = last_mover
            self.unstolen = np.array(sorted({self.pile_tops[s] for s in self.nonempty if s != last_mover}),
                                     dtype=np.int64)

    def require_playable(self, actions, encoding: ActionEncoding, who: str) -> None:
        """ValueError unless every action of ``actions`` is legal in the observed position.

        The seat to act's legal moves depend only on what the observer sees of its own turn (its hand, the
        table, the piles' tops), so any world drawn from the observation tells them: a mask that marks
        other actions legal came from another position than the observation.
        """
        legal = encoding.mask(self.sample(np.random.default_rng(0)))
        unplayable = [int(action) for action in actions if not legal[int(action)]]
        if unplayable:
            raise ValueError(f"{who}: the mask marks action(s) {unplayable} legal, but the position the observation "
                             f"shows allows only {np.flatnonzero(legal).tolist()}: the observation and the mask "
                             f"must come from the same position")

    def sample(self, rng: np.random.Generator) -> GameState:
        """One determinization: pile contents, opponents' hands and deck order drawn uniformly."""
        hidden = rng.permutation(self.hidden)
        if self.unstolen.size:
            while self._holds_an_unstolen_rank(hidden) and rng.random() >= self.passed_steal:
                hidden = rng.permutation(self.hidden)
        hidden, buried = self._flipped_first(hidden), rng.permutation(self.buried)
        last_capturer = int(self.nonempty[rng.integers(len(self.nonempty))]) if self.nonempty else NO_SEAT
        return self._state(hidden, buried, last_capturer)

    def worlds(self, limit: int = EXACT_WORLDS_LIMIT) -> list[tuple[float, GameState]]:
        """Every position `sample` can draw, with the chance it draws it, for exact work on small decks.

        Positions that no play or score can tell apart are one: the opponents' hands are taken as sets, and
        the cards buried in piles lie in one order (play sees only a pile's size and top, the score only its
        size). A uniform shuffle gives each distinct order of the hidden ranks the same chance; the inference
        from the last move (``passed_steal``) reweighs them as `sample`'s redraws do; the last capturer is
        each seat with a pile alike. Raises `WorldsOutOfReach` for more than ``limit`` orders.
        """
        counts = dict(Counter(self.hidden.tolist()))
        orders = distinct_orders(counts)
        if orders > limit:
            raise WorldsOutOfReach(f"{orders:,} orders of the hidden cards are consistent with this observation, "
                                   f"more than the {limit:,} that exact enumeration takes")
        weights: dict[tuple[int, ...], float] = {}
        for order in rank_orders(counts):
            hidden = np.array(order, dtype=np.int64)
            weight = self.passed_steal if self.unstolen.size and self._holds_an_unstolen_rank(hidden) else 1.0
            key = self._as_sets(self._flipped_first(hidden))
            weights[key] = weights.get(key, 0.0) + weight
        total = sum(weights.values())
        if total <= 0:
            raise ValueError("passed_steal=0 rules out every world: the last mover held a rank it could steal")
        capturers = self.nonempty or [NO_SEAT]
        return [(weight / total / len(capturers), self._state(np.array(key, dtype=np.int64), self.buried, capturer))
                for key, weight in weights.items() if weight > 0 for capturer in capturers]

    def _holds_an_unstolen_rank(self, hidden: np.ndarray) -> bool:
        """Whether this shuffle gives the last mover a card of a pile top it could have stolen."""
        start = sum(self.hand_sizes[s] for s in self.opponents[: self.opponents.index(self.last_mover)])
        return bool(np.isin(hidden[start : start + self.hand_sizes[self.last_mover]], self.unstolen).any())

    def _flipped_first(self, hidden: np.ndarray) -> np.ndarray:
        """The shuffle with a card of the public flipped rank first (it opens the current opponent's hand)."""
        if self.flipped is None:
            return hidden
        hidden = hidden.copy()
        where = int(np.flatnonzero(hidden == self.flipped)[0])
        hidden[[0, where]] = hidden[[where, 0]]
        return hidden

    def _as_sets(self, hidden: np.ndarray) -> tuple[int, ...]:
        """The shuffle with each opponent's hand sorted (a hand is a set of cards), the deck left in order."""
        ranks, position = hidden.tolist(), 0
        for s in self.opponents:
            size = self.hand_sizes[s]
            ranks[position : position + size] = sorted(ranks[position : position + size])
            position += size
        return tuple(ranks)

    def _state(self, hidden: np.ndarray, buried: np.ndarray, last_capturer: int) -> GameState:
        """The full position whose hidden cards (opponents' hands, then the deck) and pile contents are these."""
        rules, n = self.rules, self.rules.num_players
        ranks = np.concatenate([self.known, buried, hidden])
        codes = self.deck.cards_for(ranks)
        position = 0

        def cut(count: int) -> list[int]:
            nonlocal position
            position += count
            return codes[position - count : position]

        hands: list[list[int]] = [[] for _ in range(n)]
        hands[self.seat] = cut(self.own_count)
        table = cut(self.table_count)
        tops = cut(len(self.nonempty))
        piles: list[list[int]] = [[] for _ in range(n)]
        for s, top_card in zip(self.nonempty, tops):
            piles[s] = cut(self.pile_sizes[s] - 1) + [top_card]
        for s in self.opponents:
            hands[s] = cut(self.hand_sizes[s])
        deck = cut(self.deck_size)
        return GameState(config=rules, hands=hands, table_cards=table, piles=piles, pile_tops=list(self.pile_tops),
                         deck=deck, current=self.current, last_capturer=last_capturer,
                         passed=[list(row) for row in self.passed], played=[list(row) for row in self.played])


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
      card of its top rank (a joker when no natural one is left: a joker shows
      its named rank), then the remaining cards fill the piles to their sizes;
    * unseen = all cards - own hand - seen; shuffled, it fills the opponents'
      hands (their sizes) and the deck (its size, in random order).

    Card codes are those of the real decks, each used once, so the state holds
    exactly the decks' cards. ``last_capturer`` is not observable: a seat with
    a non-empty pile is picked at random (it only matters with
    ``leftovers_to_last_capturer``). Raises ValueError when the observation
    cannot come from a game under ``rules``.
    """
    return HiddenCardSampler(rules, obs, encoder).sample(rng)
