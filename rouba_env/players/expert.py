"""``expert``: determinized Monte Carlo search anchored on the heuristic, with an exact two-player endgame."""

from __future__ import annotations

import functools

import numpy as np

from rouba_env.rules import engine
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.cards import JOKER_RANK, JOKERS_PER_DECK, NUM_RANKS, make_deck, rank_of
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import (
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
from rouba_env.encoding.observation import ObservationEncoder, ObservationView, read_observations
from rouba_env.players.base import BasePolicy, check_mask
from rouba_env.players.scoring import (
    DISCARD_EXPOSURE,
    GREEDY_JOKER_PENALTY,
    GREEDY_PRIORITY_OWN_PILE,
    GREEDY_PRIORITY_STEAL,
    GREEDY_PRIORITY_TABLE,
    JOKER_COST,
    PAIR_BONUS,
    RISK_WEIGHT,
    TIE_NOISE,
)
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy


# ---------------------------------------------------------------------------
# expert: determinization
# ---------------------------------------------------------------------------


def observer_seat(rules: RulesConfig, dealer_offset: int) -> int:
    """Absolute seat of an observer from where it sees the dealer (the dealer's seat is in the rules)."""
    return (rules.dealer - int(dealer_offset)) % rules.num_players


@functools.lru_cache(maxsize=None)
def _deck_codes_by_rank(decks: int, jokers: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(card codes sorted by rank slot, first index of each slot in them, copies per slot) of the decks."""
    codes = np.array(sorted(make_deck(decks, jokers), key=rank_of), dtype=np.int64)
    copies = np.bincount([rank_of(card) for card in codes.tolist()], minlength=NUM_RANK_SLOTS)
    starts = np.concatenate([[0], np.cumsum(copies)[:-1]])
    return codes, starts, copies


def _codes_for_ranks(ranks: np.ndarray, rules: RulesConfig) -> list[int]:
    """Distinct card codes of the decks for a full multiset of rank slots (each copy used once)."""
    codes, starts, copies = _deck_codes_by_rank(rules.decks, rules.jokers)
    order = np.argsort(ranks, kind="stable")
    sorted_ranks = ranks[order]
    first_of_rank = np.concatenate([[0], np.cumsum(np.bincount(sorted_ranks, minlength=NUM_RANK_SLOTS))[:-1]])
    occurrence = np.arange(ranks.size) - first_of_rank[sorted_ranks]
    if (occurrence >= copies[sorted_ranks]).any():
        raise ValueError("observation is inconsistent with the rules: more cards of a rank than the decks hold")
    result = np.empty(ranks.size, dtype=np.int64)
    result[order] = codes[starts[sorted_ranks] + occurrence]
    return result.tolist()


class HiddenCardSampler:
    """Draws full `GameState`s consistent with one observation (see `determinize`).

    Reads and checks the observation once; each `sample` then only shuffles
    the hidden cards, so many determinizations of one decision stay cheap.
    Raises ValueError when the observation cannot come from a game under ``rules``.
    """

    def __init__(self, rules: RulesConfig, obs: np.ndarray, encoder: ObservationEncoder | None = None):
        encoder = encoder or ObservationEncoder(rules)
        view = read_observations(encoder, obs)
        if view.hand.shape[0] != 1:
            raise ValueError(f"determinize takes one observation, got a batch of {view.hand.shape[0]}")
        self.rules = rules
        n = rules.num_players
        self.seat = seat = observer_seat(rules, view.dealer_offset[0])
        relative = [(s - seat) % n for s in range(n)]
        self.pile_sizes = pile_sizes = view.pile_sizes[0, relative].tolist()
        self.pile_tops = pile_tops = view.pile_tops[0, relative].tolist()
        hand_sizes = view.hand_sizes[0, relative].tolist()
        to_act = int(view.to_act_offset[0])
        self.current = current = NO_SEAT if to_act == NO_SEAT else (seat + to_act) % n
        own, table = view.hand[0], view.table[0]
        copies = _deck_codes_by_rank(rules.decks, rules.jokers)[2]
        in_piles = view.seen[0] - table
        self.unseen = copies - own - view.seen[0]
        if (in_piles < 0).any() or (self.unseen < 0).any() or int(in_piles.sum()) != sum(pile_sizes):
            raise ValueError("observation is inconsistent: the seen cards do not fit the decks, table and pile sizes")

        # Pile tops: natural cards first (a joker can stand for any rank, a natural card only for its own).
        top_slots = [NO_SEAT] * n
        for joker_pass in (False, True):
            for s in range(n):
                if pile_sizes[s] == 0 or top_slots[s] != NO_SEAT:
                    continue
                if pile_tops[s] == EMPTY_PILE:
                    raise ValueError(f"observation is inconsistent: seat {s}'s pile has cards but no top")
                slot = JOKER_RANK if joker_pass else pile_tops[s]
                if in_piles[slot] > 0:
                    in_piles[slot] -= 1
                    top_slots[s] = slot
        if any(size > 0 and top == NO_SEAT for size, top in zip(pile_sizes, top_slots)):
            raise ValueError("observation is inconsistent: no seen card can be a pile's top")
        self.nonempty = [s for s in range(n) if pile_sizes[s] > 0]
        slots = np.arange(NUM_RANK_SLOTS)
        self.known = np.concatenate([
            np.repeat(slots, own), np.repeat(slots, table), [top_slots[s] for s in self.nonempty],
        ]).astype(np.int64)
        self.own_count, self.table_count = int(own.sum()), int(table.sum())
        self.buried = np.repeat(slots, in_piles)
        self.hidden = np.repeat(slots, self.unseen)

        self.flipped = None
        if rules.draw_from_deck and current not in (NO_SEAT, seat):
            flipped = np.flatnonzero(np.asarray(obs).reshape(-1)[encoder.layout["flipped"]] > 0)
            if flipped.size:  # the flipped card is public: the current hand holds that very rank
                if self.unseen[flipped[0]] == 0:
                    raise ValueError("observation is inconsistent: every card of the flipped rank is seen")
                self.flipped = int(flipped[0])
        self.opponents = ([current] if self.flipped is not None else [])
        self.opponents += [s for s in range(n) if s != seat and s not in self.opponents]
        self.hand_sizes = hand_sizes
        self.deck_size = int(view.deck_size[0])
        needed = sum(hand_sizes[s] for s in self.opponents)
        if self.hidden.size - needed != self.deck_size:
            raise ValueError(f"observation is inconsistent: {self.hidden.size} unseen cards for opponents' hands "
                             f"({needed}) and a deck of {self.deck_size}")

    def sample(self, rng: np.random.Generator) -> GameState:
        """One determinization: pile contents, opponents' hands and deck order drawn uniformly."""
        rules, n = self.rules, self.rules.num_players
        hidden = rng.permutation(self.hidden)
        if self.flipped is not None:
            where = int(np.flatnonzero(hidden == self.flipped)[0])
            hidden[[0, where]] = hidden[[where, 0]]
        ranks = np.concatenate([self.known, rng.permutation(self.buried), hidden])
        codes = _codes_for_ranks(ranks, rules)
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
        last_capturer = int(self.nonempty[rng.integers(len(self.nonempty))]) if self.nonempty else NO_SEAT
        return GameState(config=rules, hands=hands, table=table, piles=piles, pile_tops=list(self.pile_tops),
                         deck=deck, current=self.current, last_capturer=last_capturer)


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


# ---------------------------------------------------------------------------
# expert: a lean rank-level game for rollouts and the exact endgame
# ---------------------------------------------------------------------------


class LeanGame:
    """A rank-level copy of a `GameState` for fast rollouts (suits and pile contents dropped).

    Same rules as `rouba_env.rules.engine` for everything that decides play:
    hands and table per rank, pile sizes and tops, the deck order, the seat to
    act, the last capturer and the seen cards. `play` applies a move without
    checking it; `greedy_move` and `heuristic_move` pick the move
    `GreedyPolicy` and `HeuristicPolicy` would (same values), `play_out`
    plays to the end. Tests check it against the engine move by move.
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
        """The rank-level copy of a reference-engine state."""
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

    def legal_moves(self) -> list[tuple[int, int]]:
        """Every legal move of the seat to act, as `engine.legal_moves` gives them (sorted)."""
        if self.current == NO_SEAT:
            return []
        rules = self.rules
        n, mover = rules.num_players, self.current
        hand, table, tops = self.hands[mover], self.table, self.tops
        table_jokers = table[JOKER_RANK]

        def targets_for(rank: int) -> list[int]:
            targets = []
            if table[rank] or (rules.take_all and table_jokers):
                targets.append(TARGET_TABLE)
            if table_jokers and not rules.take_all:
                targets.append(TARGET_TABLE_JOKER)
            targets.extend(TARGET_PILE_OFFSET + o for o in range(n) if tops[(mover + o) % n] == rank)
            return targets

        moves = []
        for rank in range(NUM_RANKS):
            if hand[rank]:
                targets = targets_for(rank)
                if not targets or not rules.must_capture:
                    targets.append(TARGET_DISCARD)
                moves.extend((rank, target) for target in sorted(targets))
        if hand[JOKER_RANK]:
            joker_can_capture = False
            for rank in range(NUM_RANKS):
                targets = targets_for(rank)
                joker_can_capture = joker_can_capture or bool(targets)
                moves.extend((JOKER_KIND_OFFSET + rank, target) for target in targets)
            if not joker_can_capture or not rules.must_capture:
                moves.append((JOKER_KIND_OFFSET, TARGET_DISCARD))
            moves.sort()
        return moves

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

EXPERT_DEFAULT_SAMPLES = 64
"""Determinizations per decision at the start of a game (see `ExpertPolicy.sample_count`).

64 is the largest power of two that keeps 2,000 two-player games against
``heuristic`` within about ten minutes on two busy cores; it wins about 57%
of them (scripts/results/LADDER.md). 16 samples were no better than the heuristic."""
EXPERT_MARGIN_WEIGHT = 0.5
"""Weight of the final margin (over the deck size) next to the outcome (+1 win, 0 tie, -1 loss)."""
PRIOR_WEIGHT = 1e-6
"""The heuristic's value only breaks ties between moves with equal search results."""
EXPERT_MAX_SCALE = 4
"""Late in a game rollouts are short: up to this many times ``samples`` determinizations."""
ROLLOUT_FIXED_COST = 24
"""Setting up one rollout (sampling, loading it in the batched engine) costs about this many plies."""
EXPERT_Z = 1.0
"""Another move replaces the heuristic's only if its mean advantage exceeds this many standard errors."""
EXPERT_MAX_MOVES = 12
"""Moves searched per decision: the heuristic's best ones (jokers can offer dozens of legal moves)."""
EXPERT_BACKENDS = ("auto", "vector", "lean")
"""Rollout engines: the batched `rouba_env.batched.game` engine, the pure-Python `LeanGame`, or auto."""
VECTOR_MIN_ROLLOUTS = 48
"""``auto`` uses the batched engine from this many rollouts per decision (below, `LeanGame` is faster)."""
EXPERT_ENDGAME_NODES = 20000
"""Positions the exact two-player endgame search may visit before falling back to sampling."""
ROLLOUT_PLAYERS = ("greedy", "heuristic")
"""Players `LeanGame.play_out` can roll out with."""
EXPERT_DEFAULT_ROLLOUT = "heuristic"
"""Rollouts with greedy play misjudge positions too much to beat the heuristic."""
ROLLOUT_NOISE = 64
"""Random numbers drawn per determinization for the rollouts' tie-breaks (reused cyclically)."""


def solve_two_player(
    game: LeanGame, seat: int, margin_weight: float, node_limit: int
) -> dict[tuple[int, int], float] | None:
    """Exact values (`outcome_value` for ``seat``) of every legal move, by alpha-beta minimax.

    For a two-player game with nothing hidden that matters (deck empty: the
    opponent holds exactly the unseen cards). None when the search would visit
    more than ``node_limit`` positions.
    """
    total = game.rules.total_cards
    visited = 0

    class _Budget(Exception):
        pass

    def minimax(position: LeanGame, alpha: float, beta: float) -> float:
        nonlocal visited
        visited += 1
        if visited > node_limit:
            raise _Budget
        if position.current == NO_SEAT:
            return outcome_value(position.sizes, seat, margin_weight, total)
        maximizing = position.current == seat
        best = -np.inf if maximizing else np.inf
        for move in position.legal_moves():
            child = position.copy()
            child.play(*move)
            value = minimax(child, alpha, beta)
            if maximizing:
                best = max(best, value)
                alpha = max(alpha, value)
            else:
                best = min(best, value)
                beta = min(beta, value)
            if alpha >= beta:
                break
        return best

    values = {}
    try:
        for move in game.legal_moves():
            child = game.copy()
            child.play(*move)
            values[move] = minimax(child, -np.inf, np.inf)
    except _Budget:
        return None
    return values


def outcome_value(sizes: list[int], seat: int, margin_weight: float, total_cards: int) -> float:
    """+1 sole top score, 0 shared top, -1 otherwise; plus ``margin_weight`` x margin / total cards."""
    own, best = sizes[seat], max(sizes)
    outcome = (1.0 if sizes.count(best) == 1 else 0.0) if own == best else -1.0
    others = (sum(sizes) - own) / (len(sizes) - 1)
    return outcome + margin_weight * (own - others) / total_cards


class ExpertPolicy(BasePolicy):
    """Determinized Monte Carlo search anchored on the heuristic, with an exact two-player endgame.

    Decision procedure (a single legal move is played without search):

    1. Two players, empty deck: nothing that matters is hidden (the opponent
       holds exactly the unseen cards), so an alpha-beta search to the end of
       the game gives every move's exact `outcome_value` (`solve_two_player`).
    2. Otherwise sample ``S`` determinizations (`HiddenCardSampler`: hidden
       cards drawn consistently with the observation). On each, every legal
       move is applied and the game is rolled out to the end with the
       ``rollout`` player for every seat (heuristic by default) on the batched
       engine `rouba_env.batched.game` or on `LeanGame`. All moves share the same
       determinizations (common random numbers).
    3. The heuristic's choice is the anchor. Another move is played only if its
       mean paired advantage over the anchor exceeds ``z`` standard errors;
       among such moves the best mean wins. Outcomes are very noisy early in
       a game, so the expert then mostly keeps the heuristic's move and lets
       the search overrule it where the rollouts agree.

    ``S`` is ``samples`` at the start of a game and grows as fewer plies
    remain (`sample_count`), keeping the work per decision roughly flat.
    Default ``samples=64``: about 15 ms per two-player decision on one core
    with the batched engine, and clearly stronger than ``heuristic`` (see
    scripts/results/LADDER.md).

    Spec options: ``samples`` (int >= 1), ``rollout`` (greedy | heuristic),
    ``z`` (float >= 0), ``margin_weight`` (float >= 0), ``max_scale``
    (int >= 1), ``max_moves`` (int >= 1: only the heuristic's best moves are
    searched), ``endgame_nodes`` (int >= 0, 0 disables the exact search),
    ``backend`` (auto | vector | lean).
    """

    name = "expert"

    def __init__(self, rules: RulesConfig, max_players: int | None = None,
                 samples: int = EXPERT_DEFAULT_SAMPLES, margin_weight: float = EXPERT_MARGIN_WEIGHT,
                 rollout: str = EXPERT_DEFAULT_ROLLOUT, max_scale: int = EXPERT_MAX_SCALE,
                 z: float = EXPERT_Z, endgame_nodes: int = EXPERT_ENDGAME_NODES, backend: str = "auto",
                 max_moves: int = EXPERT_MAX_MOVES):
        super().__init__(rules, max_players)
        counts = (("samples", samples), ("max_scale", max_scale), ("max_moves", max_moves), ("endgame_nodes", endgame_nodes))
        for name, value in counts:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (name != "endgame_nodes"):
                raise ValueError(f"expert {name} must be an int of at least {int(name != 'endgame_nodes')}, "
                                 f"got {value!r}")
        for name, value in (("margin_weight", margin_weight), ("z", z)):
            if not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise ValueError(f"expert {name} must be a finite number >= 0, got {value!r}")
        if rollout not in ROLLOUT_PLAYERS:
            raise ValueError(f"expert rollout must be one of {ROLLOUT_PLAYERS}, got {rollout!r}")
        if backend not in EXPERT_BACKENDS:
            raise ValueError(f"expert backend must be one of {EXPERT_BACKENDS}, got {backend!r}")
        self.samples, self.max_scale, self.endgame_nodes = int(samples), int(max_scale), int(endgame_nodes)
        self.max_moves = int(max_moves)
        self.margin_weight, self.z = float(margin_weight), float(z)
        self.rollout, self.backend = rollout, backend
        self.prior = HeuristicPolicy(rules, max_players)
        self._rollout_policy = (HeuristicPolicy if rollout == "heuristic" else GreedyPolicy)(rules)
        self._rollout_actions = ActionEncoding(rules)

    def sample_count(self, view: ObservationView) -> int:
        """Determinizations for this decision: ``samples`` at the start, more as fewer plies remain.

        A rollout costs about (ROLLOUT_FIXED_COST + plies left) plies of work,
        so scaling ``samples`` by the ratio of that cost at the start to its
        value now keeps the work per decision flat, up to ``max_scale`` times.
        """
        remaining = int(view.hand_sizes[0].sum() + view.deck_size[0])
        full_game = self.rules.total_cards - self.rules.table_cards
        scale = (full_game + ROLLOUT_FIXED_COST) / (remaining + ROLLOUT_FIXED_COST)
        return int(round(self.samples * min(self.max_scale, max(1.0, scale))))

    def sample_values(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator,
                      samples: int | None = None) -> np.ndarray:
        """float[S, M]: `outcome_value` of each action in ``legal`` (columns) on each determinization (rows)."""
        rules = self.rules
        view = read_observations(self.encoder, obs)
        seat = observer_seat(rules, view.dealer_offset[0])
        moves = [self.actions.decode(int(action)) for action in legal]
        samples = self.sample_count(view) if samples is None else samples
        sampler = HiddenCardSampler(rules, obs, self.encoder)
        states = [sampler.sample(rng) for _ in range(samples)]
        if self._use_vector(samples * len(moves)):
            sizes = self._vector_rollouts(states, moves, rng)
        else:
            sizes = self._lean_rollouts(states, moves, rng)
        values = np.zeros((samples, len(moves)))
        for row in range(samples):
            for column in range(len(moves)):
                values[row, column] = outcome_value(sizes[row][column], seat, self.margin_weight, rules.total_cards)
        return values

    def _use_vector(self, rollouts: int) -> bool:
        if self.backend == "lean" or (self.backend == "auto" and rollouts < VECTOR_MIN_ROLLOUTS):
            return False
        return self._vector_module() is not None

    def _vector_module(self):
        """`rouba_env.batched.game` when it can be imported (None otherwise; ``backend="vector"`` then fails)."""
        try:
            from rouba_env.batched import game as vector
        except ImportError:
            if self.backend == "vector":
                raise ValueError("expert backend 'vector' needs rouba_env.batched.game, which cannot be imported") from None
            return None
        return vector

    def _lean_rollouts(self, states: list[GameState], moves: list, rng: np.random.Generator) -> list[list[list[int]]]:
        """Final pile sizes [S][M] from pure-Python rank-level rollouts (`LeanGame`)."""
        sizes = []
        for state in states:
            base = LeanGame.from_state(state)
            noise = rng.random(ROLLOUT_NOISE).tolist()
            row = []
            for kind, target in moves:
                game = base.copy()
                game.play(kind, target)
                row.append(list(game.play_out(noise, self.rollout)))
            sizes.append(row)
        return sizes

    def _vector_rollouts(self, states: list[GameState], moves: list, rng: np.random.Generator) -> list[list[list[int]]]:
        """Final pile sizes [S][M] from batched rollouts on `rouba_env.batched.game.VectorGame` (slot = s * M + m)."""
        vector = self._vector_module()
        rules, count = self.rules, len(moves)
        game = vector.VectorGame.from_states(rules, [state for state in states for _ in range(count)])
        first = np.array([self._rollout_actions.encode(move) for move in moves], dtype=np.int64)
        game.step(np.tile(first, len(states)))
        actions = np.zeros(game.batch_size, dtype=np.int64)
        live = game.current >= 0
        while live.any():
            actions[:] = 0
            actions[live] = self._rollout_policy.act_batch(game.obs[live], game.mask[live], rng)
            game.step(actions)
            live = game.current >= 0
        scores = game.scores().reshape(len(states), count, rules.num_players)
        return scores.tolist()

    def solve_endgame(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
        """Exact values of the legal actions when nothing relevant is hidden, else None.

        Two players, cards in hand and an empty deck: the opponent's hand is
        exactly the unseen cards, so one determinization is the true position
        (only the last capturer is guessed; it matters with the leftovers rule).
        """
        rules = self.rules
        view = read_observations(self.encoder, obs)
        if rules.num_players != 2 or rules.draw_from_deck or view.deck_size[0] != 0 or self.endgame_nodes <= 0:
            return None
        game = LeanGame.from_state(determinize(rules, obs, rng, self.encoder))
        solved = solve_two_player(game, game.current, self.margin_weight, self.endgame_nodes)
        if solved is None:
            return None
        return np.array([solved[tuple(self.actions.decode(int(action)))] for action in legal])

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(check_mask(mask)[0])
        if legal.size == 1:
            return int(legal[0])
        prior = self.prior.action_values(np.asarray(obs)[None, :])[0, legal]
        exact = self.solve_endgame(obs, legal, rng)
        if exact is not None:
            return int(legal[np.argmax(exact + PRIOR_WEIGHT * prior)])
        # Candidates: the heuristic's best `max_moves` moves, best first (so the anchor is column 0).
        order = np.argsort(-prior, kind="stable")[: self.max_moves]
        candidates, prior = legal[order], prior[order]
        if candidates.size == 1:
            return int(candidates[0])
        values = self.sample_values(obs, candidates, rng)
        difference = values - values[:, :1]
        mean = difference.mean(axis=0)
        stderr = difference.std(axis=0, ddof=1) / np.sqrt(values.shape[0]) if values.shape[0] > 1 else 0.0
        beats_anchor = mean > self.z * stderr
        if not beats_anchor.any():
            return int(candidates[0])
        score = np.where(beats_anchor, mean, -np.inf) + PRIOR_WEIGHT * prior
        return int(candidates[np.argmax(score)])


