"""The posterior over the other seats' hidden hands that their own play implies, the worlds drawn from it, and every
legal move played out in them: one machinery for the local best response (`rouba_env.evaluation.local_best_response`),
the search that plays by it and the trainer's searched action values.

An observer cannot see the other seats' hands (nor the deck). Every assignment of hands to the other seats is
weighed by the chance of the deal (the unseen cards dealt uniformly) times, over each seat's decisions since the
hands were dealt, the probability its policy's ``action_probabilities`` gave the move it made, from the observation
it would have had holding that hand (`hand_posteriors`; earlier hands were played out in the open, so they tell
nothing more). A seat's observation shows its own hand, not the others', so each seat's moves weigh its own hand
alone and the joint posterior is the deal's joint chance times one factor per seat. `WorldSearch` draws positions
from that posterior (the hands from it, the deck shuffled) and plays every legal move of the observer out in each
of them on the batched table, common worlds for every move (`WorldSearch.searched_values`): each move's mean
reward with its standard error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.beliefs import DeckByRank
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.history import DecisionRecorder, TargetDecision  # noqa: F401 (the posterior's evidence)
from rouba_env.players.base import PROBABILITIES_METHOD, Policy, ProbabilitiesOutOfReach
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import hand_slot, move_at
from rouba_env.rules.engine import NUM_RANK_SLOTS
from rouba_env.table import Table

EXACT_HANDS = 2048
"""The other seats' possible hands are enumerated when there are at most this many assignments (at two seats every
deck here: a hand of four from thirteen ranks and the joker has at most 2,380), else drawn from the deal."""
DRAWN_HANDS = 512
"""Assignments of hands drawn from the deal to weigh when there are more than `EXACT_HANDS`."""
MAX_WORLDS = 1024
"""The most worlds drawn for one decision."""
SEARCH_PLAYERS = 2
"""The table the trainer's searched values and a playout cut by a critic answer: two seats (the critic's value of
the seat to act is the other's negated)."""


def check_searchable(rules: RulesConfig, who: str) -> None:
    """ValueError starting with ``who`` unless the posterior can answer at a table of ``rules``: hands dealt from
    the deck (a card drawn one by one is part of what it would weigh)."""
    if rules.draw_from_deck:
        raise ValueError(f"{who} needs hands dealt from the deck (draw_from_deck=False): with draw_from_deck a "
                         f"flipped card is part of what it would weigh")


StateValue = Callable[[VectorGame, np.ndarray, np.ndarray], np.ndarray]
"""``value(game, slots, seats) -> float[K]``: an estimate of seat ``seats[i]``'s final reward in the live game
``slots[i]`` (a critic), where a playout is cut short."""


def possible_hands(unseen: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(hands int64[N, 14], ways float64[N]): every hand of ``size`` cards from the ``unseen`` counts per rank
    slot, and in how many ways the deal gives it (the product of binomials: its prior weight)."""
    hands = np.zeros((1, 0), dtype=np.int64)
    ways = np.ones(1)
    left = np.full(1, size, dtype=np.int64)
    for copies in np.asarray(unseen, dtype=np.int64).tolist():
        grown_hands, grown_ways, grown_left = [], [], []
        for take in range(min(copies, size) + 1):
            fits = left >= take
            grown_hands.append(np.column_stack([hands[fits], np.full(int(fits.sum()), take, dtype=np.int64)]))
            grown_ways.append(ways[fits] * math.comb(copies, take))
            grown_left.append(left[fits] - take)
        hands, ways, left = np.concatenate(grown_hands), np.concatenate(grown_ways), np.concatenate(grown_left)
    done = left == 0
    return hands[done], ways[done]


def joint_hands(candidates: dict[int, np.ndarray], unseen: np.ndarray, sizes: list[int],
                limit: int) -> np.ndarray | None:
    """int64[N, S, 14]: every assignment of hands of ``sizes`` (one per other seat) that the ``unseen`` cards
    allow together, each seat's hand from ``candidates[size]`` (every hand of that size, `possible_hands`), in
    their order; None if there are more than ``limit``."""
    found = np.zeros((1, 0, NUM_RANK_SLOTS), dtype=np.int64)
    left = np.asarray(unseen, dtype=np.int64)[None, :]
    for size in sizes:
        hands = candidates[size]
        hands = hands[(hands <= unseen).all(axis=1)]
        parent, child = np.nonzero((hands[None, :, :] <= left[:, None, :]).all(axis=2))
        if len(parent) > limit:
            return None
        found = np.concatenate([found[parent], hands[child][:, None, :]], axis=1)
        left = left[parent] - hands[child]
    return found


def drawn_hands(unseen: np.ndarray, sizes: list[int], draws: int,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(hands int64[M, S, 14], weights): ``draws`` deals of hands of ``sizes`` from the unseen cards, the same
    assignment counted once with its count."""
    cards = np.repeat(np.arange(NUM_RANK_SLOTS), unseen)
    dealt = rng.permuted(np.broadcast_to(cards, (draws, len(cards))), axis=1)[:, :sum(sizes)]
    seat = np.repeat(np.arange(len(sizes)), sizes)
    counts = np.zeros((draws, len(sizes), NUM_RANK_SLOTS), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(draws), sum(sizes)), np.tile(seat, draws), dealt.ravel()), 1)
    hands, times = np.unique(counts.reshape(draws, -1), axis=0, return_counts=True)
    return hands.reshape(len(hands), len(sizes), NUM_RANK_SLOTS), times.astype(np.float64)


def deal_ways(pool: np.ndarray, dealt: np.ndarray) -> np.ndarray:
    """float64[N]: in how many ways the cards ``pool`` (int64[N or 1, 14]) deal each assignment ``dealt``
    (int64[N, S, 14]: one hand per seat, in turn), the product over seats and ranks of the binomials."""
    before = np.cumsum(dealt, axis=1) - dealt  # what the seats before each one took
    return np.prod(binomials(np.broadcast_to(pool[:, None, :], dealt.shape) - before, dealt), axis=(1, 2))


def as_card_rows(counts: np.ndarray) -> np.ndarray:
    """int64[N, L]: the rank slots of each row of ``counts`` (rows of equal sums ``L``), in rank order."""
    length = int(counts[0].sum()) if len(counts) else 0
    return np.repeat(np.tile(np.arange(NUM_RANK_SLOTS), len(counts)), counts.ravel()).reshape(len(counts), length)


def pascal_triangle(top: int) -> np.ndarray:
    """float64[top + 1, top + 1]: C(row, column) (0 past the row)."""
    return np.array([[math.comb(row, column) for column in range(top + 1)] for row in range(top + 1)], dtype=float)


PASCAL_TOP = 64
"""The binomials up to this many cards of a rank are a constant table (more copies of a rank are computed)."""
PASCAL = pascal_triangle(PASCAL_TOP)


def binomials(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """float64 array: C(n, k) entry by entry (0 where k is out of 0..n)."""
    top = int(n.max()) if n.size else 0
    table = PASCAL if top <= PASCAL_TOP else pascal_triangle(top)
    top = len(table) - 1
    inside = (k >= 0) & (k <= n)
    return np.where(inside, table[n, np.clip(k, 0, top)], 0.0)


@dataclass
class HandQuestion:
    """What the posterior over the other seats' current hands in one slot is asked from (`hand_posteriors`)."""

    hands: np.ndarray
    """int64[N, S, 14]: the possible hands of the other seats (from the observer's left), one assignment a row."""
    frequency: np.ndarray
    """How often each assignment was drawn (or its ways, for a full list): in proportion to the ways of dealing
    it from the ``unseen`` cards (`deal_ways`)."""
    unseen: np.ndarray
    """int64[14]: the cards the observer cannot see now."""
    observer: int
    decisions: list[list[TargetDecision]]
    """Each other seat's decisions since the hands were dealt, oldest first (from the observer's left)."""


def hand_posteriors(target: Policy, questions: list[HandQuestion], encoding: ActionEncoding) -> list[np.ndarray]:
    """float64[N] for each question: the posterior weight of each assignment of hands to the other seats
    (normalized).

    The prior is the deal's: each seat was dealt its current hand plus every card it has played since, out of
    the unseen cards and the played ones. At its decision ``t`` a seat held its current hand plus the cards it
    has played since (``t``'s own included); each hypothesis's position then is the recorded one with the
    cards the observer could not see dealt to match it (`VectorGame.with_hidden`; the other seats' hands there
    are any that fit, since the seat's observation does not show them), and its weight is multiplied by the
    probability the target gave the move it made there. Each seat's distinct hands are weighed once; the
    positions of every question recorded in one copy are dealt in one call, and the target is asked once for
    all of them. A target without ``action_probabilities`` (or out of their reach) tells nothing more than the
    deal.
    """
    priors, played_from = deal_priors(questions, encoding)
    probabilities = getattr(target, PROBABILITIES_METHOD, None)
    if probabilities is None:
        return priors
    seat_hands = [distinct_hands(question.hands) for question in questions]
    likelihoods = [[np.ones(len(distinct)) for distinct, _ in seats] for seats in seat_hands]
    observations, masks, where = hypothesis_positions(questions, seat_hands, played_from)
    if not where:
        return priors
    try:
        chances = probabilities(np.concatenate(observations), np.concatenate(masks))
    except ProbabilitiesOutOfReach:
        return priors
    start = 0
    for index, seat, alive, action in where:
        taken = np.zeros(len(likelihoods[index][seat]))
        taken[alive] = chances[start:start + len(alive), action]
        likelihoods[index][seat] *= taken
        start += len(alive)
    posteriors = []
    for prior, seats, seat_likelihoods in zip(priors, seat_hands, likelihoods):
        weights = prior.copy()
        for (_, inverse), likelihood in zip(seats, seat_likelihoods):
            weights *= likelihood[inverse.ravel()]
        posteriors.append(weights / weights.sum() if weights.sum() > 0 else prior)
    return posteriors


def distinct_hands(hands: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per other seat, (its distinct hands, each assignment's index among them) of the assignments ``hands``
    (int64[N, S, 14]); with one other seat every hand is already distinct."""
    if hands.shape[1] == 1:
        return [(hands[:, 0], np.arange(len(hands)))]
    return [np.unique(hands[:, seat], axis=0, return_inverse=True) for seat in range(hands.shape[1])]


def deal_priors(questions: list[HandQuestion],
                encoding: ActionEncoding) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """(priors, played): for each question, the deal's weight of each assignment (normalized), and per other
    seat the cards it played from each of its decisions on (row ``t``; the last row, after them all, zeros)."""
    priors, played_from = [], []
    for question in questions:
        per_seat = []
        for decisions in question.decisions:
            played = np.zeros((len(decisions) + 1, NUM_RANK_SLOTS), dtype=np.int64)  # row t: played from t on
            for t in range(len(decisions) - 1, -1, -1):
                kind, _ = move_at(decisions[t].action, encoding.num_targets)
                played[t] = played[t + 1]
                played[t, hand_slot(kind)] += 1
            per_seat.append(played)
        since_dealt = np.stack([played[0] for played in per_seat])  # [S, 14]
        pool = (question.unseen + since_dealt.sum(axis=0))[None, :]
        prior = question.frequency * deal_ways(pool, question.hands + since_dealt[None]) / deal_ways(
            question.unseen[None, :], question.hands)
        priors.append(prior / prior.sum())
        played_from.append(per_seat)
    return priors, played_from


def hypothesis_positions(questions: list[HandQuestion], seat_hands: list[list[tuple[np.ndarray, np.ndarray]]],
                         played_from: list[list[np.ndarray]]) -> tuple[list, list, list]:
    """(observations, masks, where): each other seat's observation and mask at each of its recorded decisions
    under each hand it may hold (``seat_hands``: its distinct hands), dealt one copy at a time, and for each part
    which question, seat, hypotheses and move it stands for."""
    # Every hypothesis's position at every recorded decision, grouped by the copy that holds the position.
    groups: dict[int, tuple[VectorGame, list]] = {}
    for index, (question, seats, played_by) in enumerate(zip(questions, seat_hands, played_from)):
        n = len(seats) + 1
        for seat, ((distinct, _), decisions, played) in enumerate(zip(seats, question.decisions, played_by)):
            for t, decision in enumerate(decisions):
                held = distinct + played[t]
                unseen_then = decision.position.hidden_cards([decision.row], question.observer)[0]
                rest = unseen_then - held  # the other seats' hands then and the deck: any that fit
                alive = np.flatnonzero((rest >= 0).all(axis=1))
                counts = decision.position.arrays.hand_count[decision.row]
                before = sum(int(counts[(question.observer + j) % n]) for j in range(1, seat + 1))
                filler = as_card_rows(rest[alive])
                rows = np.concatenate([filler[:, :before], as_card_rows(held[alive]), filler[:, before:]], axis=1)
                groups.setdefault(id(decision.position), (decision.position, []))[1].append(
                    (index, seat, alive, decision.row, decision.action, rows))
    observations, masks, where = [], [], []
    for position, parts in groups.values():
        width = max(rows.shape[1] for *_, rows in parts)
        rows = np.concatenate([np.pad(rows, ((0, 0), (0, width - rows.shape[1])), constant_values=-1)
                               for *_, rows in parts])
        slots = np.concatenate([np.full(len(alive), row) for _, _, alive, row, _, _ in parts])
        observers = np.concatenate([np.full(len(alive), questions[index].observer)
                                    for index, _, alive, *_ in parts])
        worlds = position.with_hidden(slots, observers, rows)
        observations.append(worlds.obs[: len(slots)])
        masks.append(worlds.mask[: len(slots)])
        where += [(index, seat, alive, action) for index, seat, alive, _, action, _ in parts]
    return observations, masks, where


@dataclass
class SearchedValues:
    """Each decision's searched move values: the mean over the worlds and its standard error."""

    mean: np.ndarray
    """float64[N, A]: each legal move's mean reward over the worlds (-inf where the move is illegal)."""
    standard_error: np.ndarray
    """float64[N, A]: the standard error of each mean (0 with one world; inf where illegal)."""
    advantage_error: np.ndarray
    """float64[N, A]: the standard error of each move's mean less the decision's mean over its legal moves
    (what a softmax over the values reads: common worlds make it smaller than the values' own)."""


class WorldSearch:
    """Worlds drawn from the posterior that ``target``'s play implies, and every legal move played out in them.

    ``target`` plays every other seat, in the past (its probabilities weigh the hands) and in the playouts;
    ``rollout`` plays the observer's seat in the playouts (the same policy: self-play). ``reward`` is the
    playouts' reward mode; ``cut`` (with ``value``; two seats) ends a playout after that many moves with
    ``value``'s estimate of the observer's reward instead of playing on. The other seats' possible hands are each
    weighed where there are at most ``exact_hands`` assignments of them, else ``drawn_hands`` are drawn from the
    deal and weighed (each weight costs a read of the target at every decision it made with that hand).
    ``beliefs``: a model of the other seats whose action probabilities weigh their hands instead of ``target``'s.
    """

    def __init__(self, target: Policy, rollout: Policy, rules: RulesConfig, worlds: int, *,
                 reward: str = "margin", cut: int = 0, value: StateValue | None = None,
                 exact_hands: int = EXACT_HANDS, drawn_hands: int = DRAWN_HANDS, beliefs: Policy | None = None):
        check_searchable(rules, "the posterior")
        if cut and value is None:
            raise ValueError(f"a playout cut after {cut} moves needs a value of the positions it stops at")
        if cut and rules.num_players != SEARCH_PLAYERS:
            raise ValueError(f"a playout cut reads the seat to act's value as the other's negated: rules for "
                             f"{SEARCH_PLAYERS} players, got {rules.num_players}")
        self.target, self.rollout, self.rules, self.worlds = target, rollout, rules, worlds
        self.reward, self.cut, self.value = reward, cut, value
        self.exact_hands, self.drawn_hands = exact_hands, drawn_hands
        self.beliefs = target if beliefs is None else beliefs
        """Whose action probabilities weigh the other seats' hands (the target's, unless a model is given)."""
        self.encoding = ActionEncoding(rules)
        self.weighs = getattr(self.beliefs, PROBABILITIES_METHOD, None) is not None
        self.copies = DeckByRank(rules).copies.astype(np.int64)
        """Cards of each rank slot in the decks: no hand holds more."""
        self._all_hands: dict[int, np.ndarray] = {}
        """Every hand of each size the decks allow, listed once; a slot's possible hands are those it fits."""

    def question(self, game: VectorGame, slot: int, observer: int, *, unseen: np.ndarray,
                 decisions: list[list[TargetDecision]], rng: np.random.Generator) -> HandQuestion:
        """What the posterior over the other seats' current hands in ``slot``, seen from ``observer``, is asked
        from: every assignment of hands they may hold (or ``drawn_hands`` drawn from the deal, past
        ``exact_hands``)."""
        n = self.rules.num_players
        if len(decisions) != n - 1 or not all(isinstance(seat, list) for seat in decisions):
            raise ValueError(f"decisions holds one list per other seat ({n - 1}, from the observer's left: "
                             f"DecisionRecorder.others_decisions), got {len(decisions)} entries")
        sizes = [int(game.arrays.hand_count[slot, (observer + j) % n]) for j in range(1, n)]
        for size in sizes:
            if size not in self._all_hands:
                self._all_hands[size] = possible_hands(self.copies, size)[0]
        hands = joint_hands(self._all_hands, unseen, sizes, self.exact_hands)
        if hands is not None:
            frequency = deal_ways(unseen[None, :], hands)
        else:
            hands, frequency = drawn_hands(unseen, sizes, self.drawn_hands, rng)
        return HandQuestion(hands, frequency, unseen, observer, decisions)

    def hands(self, game: VectorGame, slot: int, observer: int, *, decisions: list[list[TargetDecision]],
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(hands int64[N, S, 14], posterior weights): the other seats' current hands in ``slot`` (from
        ``observer``'s left), seen from ``observer``."""
        question = self.question(game, slot, observer, unseen=game.hidden_cards([slot], observer)[0],
                                 decisions=decisions, rng=rng)
        return question.hands, hand_posteriors(self.beliefs, [question], self.encoding)[0]

    def draw_worlds(self, game: VectorGame, slots: np.ndarray, observers: np.ndarray, *,
                    histories: list[list[list[TargetDecision]]], rng: np.random.Generator) -> VectorGame:
        """``worlds`` positions for each of ``slots`` (slot ``i``'s at rows ``i * worlds ...``): the other
        seats' hands drawn from the posterior their decisions ``histories[i]`` (one list per seat, from the
        observer's left) imply, the deck shuffled."""
        k = self.worlds
        unseen = game.hidden_cards(slots, observers)
        questions = [self.question(game, slot, observer, unseen=unseen[i], decisions=histories[i], rng=rng)
                     for i, (slot, observer) in enumerate(zip(slots.tolist(), observers.tolist()))]
        posteriors = hand_posteriors(self.beliefs, questions, self.encoding)
        rows = np.full((len(slots) * k, int(unseen.sum(axis=1).max())), -1, dtype=np.int64)
        for i, (question, weights) in enumerate(zip(questions, posteriors)):
            hands = question.hands[rng.choice(len(weights), size=k, p=weights)]
            dealt = np.concatenate([as_card_rows(hands[:, seat]) for seat in range(hands.shape[1])] + [
                rng.permuted(as_card_rows(unseen[i] - hands.sum(axis=1)), axis=1)], axis=1)
            rows[i * k:(i + 1) * k, : dealt.shape[1]] = dealt
        return game.with_hidden(np.repeat(slots, k), np.repeat(observers, k), rows)

    def searched_values(self, game: VectorGame, slots: np.ndarray, observers: np.ndarray, *,
                        histories: list[list[list[TargetDecision]]], rng: np.random.Generator) -> SearchedValues:
        """Each legal move's value at each of ``slots`` (seat ``observers[i]`` to act there): its mean reward over
        `worlds` worlds drawn from the posterior, the same worlds for every move."""
        k = self.worlds
        seats = np.repeat(observers, k)
        values = self.move_values(self.draw_worlds(game, slots, observers, histories=histories, rng=rng), seats,
                                  rng).reshape(len(slots), k, -1)
        legal = np.isfinite(values[:, 0])  # the same moves are legal in every world
        played = np.where(legal[:, None, :], values, 0.0)
        mean = played.mean(axis=1)
        spread = played - played.sum(axis=2, keepdims=True) / legal.sum(axis=1)[:, None, None]
        deviation = lambda samples: samples.std(axis=1, ddof=1) / math.sqrt(k) if k > 1 else np.zeros(  # noqa: E731
            (len(slots), values.shape[2]))
        illegal = np.where(legal, 0.0, np.inf)
        return SearchedValues(np.where(legal, mean, -np.inf), deviation(played) + illegal,
                              deviation(spread) + illegal)

    def move_values(self, worlds: VectorGame, observers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """float64[K, A]: for each world and each legal move of its seat to act (``observers[i]``), the reward
        that seat ends with when it plays that move, the target then playing as it plays and the seat by the
        rollout player (to the end, or for `cut` moves and then the value's estimate); -inf for illegal moves."""
        rows, actions = np.nonzero(worlds.mask)
        children = worlds.children(rows, actions, reward=self.reward)
        table = Table(self.rules, children.batch_size, reward=self.reward, illegal_action="raise", game=children)
        target, rollout = table.add_player(self.target), table.add_player(self.rollout)
        seats = np.full((children.batch_size, self.rules.num_players), target, dtype=np.int64)
        seats[np.arange(len(rows)), observers[rows]] = rollout
        table.seat(np.arange(children.batch_size), seats)
        table.play_seated(rng, max_rounds=self.cut or None)
        games, seat = np.arange(len(rows)), observers[rows]
        reward = np.zeros(len(rows))
        over = table.over[games]
        reward[over] = table.final_rewards(games[over])[np.arange(len(rows))[over], seat[over]]
        if not over.all():  # cut short: the critic's estimate, from the seat to act (zero-sum at two seats)
            assert self.value is not None  # a cut has a value (checked when made)
            live = np.flatnonzero(~over)
            acting = table.current[live]
            estimate = self.value(children, live, acting)
            reward[live] = np.where(acting == seat[live], estimate, -estimate)
        values = np.full(worlds.mask.shape, -np.inf)
        values[rows, actions] = reward
        return values
