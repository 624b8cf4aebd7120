"""The posterior over a seat's hidden hand that its own play implies, the worlds drawn from it, and every legal
move played out in them: one machinery for the local best response (`rouba_env.evaluation.local_best_response`),
the search that plays by it and the trainer's searched action values.

An observer at a two-seat table cannot see the other seat's hand (nor the deck). Every hand that seat may hold is
weighed by the chance of the deal (the unseen cards dealt uniformly) times, over that seat's decisions since the
hand was dealt, the probability its policy's ``action_probabilities`` gave the move it made, from the observation
it would have had holding that hand (`hand_posteriors`; earlier hands were played out in the open, so they tell
nothing more). `WorldSearch` draws positions from that posterior (the hand from it, the deck shuffled) and plays
every legal move of the observer out in each of them on the batched table, common worlds for every move
(`WorldSearch.searched_values`): each move's mean reward with its standard error.
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
"""The other seat's possible hands are enumerated when there are at most this many (every deck here: a hand of
four from thirteen ranks and the joker has at most 2,380), else drawn from the deal."""
DRAWN_HANDS = 512
"""Hands drawn from the deal to weigh when there are more than `EXACT_HANDS`."""
MAX_WORLDS = 1024
"""The most worlds drawn for one decision."""
SEARCH_PLAYERS = 2
"""The posterior answers one other seat: a two-seat table."""

def check_searchable(rules: RulesConfig, who: str) -> None:
    """ValueError starting with ``who`` unless the posterior can answer at a table of ``rules``: two seats (it
    weighs one other seat's hand) whose hands are dealt from the deck (a card drawn one by one is part of what
    it would weigh)."""
    if rules.num_players != SEARCH_PLAYERS:
        raise ValueError(f"{who} weighs one other seat's hand: rules for {SEARCH_PLAYERS} players, got "
                         f"{rules.num_players}")
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


def drawn_hands(unseen: np.ndarray, size: int, draws: int,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(hands, weights): ``draws`` hands dealt from the unseen cards, the same hand counted once with its count."""
    cards = np.repeat(np.arange(NUM_RANK_SLOTS), unseen)
    dealt = rng.permuted(np.broadcast_to(cards, (draws, len(cards))), axis=1)[:, :size]
    counts = np.zeros((draws, NUM_RANK_SLOTS), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(draws), size), dealt.ravel()), 1)
    hands, times = np.unique(counts, axis=0, return_counts=True)
    return hands, times.astype(np.float64)


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
    """What the posterior over one slot's target hand is asked from (`hand_posteriors`)."""

    hands: np.ndarray
    """int64[N, 14]: the target's possible current hands."""
    frequency: np.ndarray
    """How often each hand was drawn (or its ways, for a full list): in proportion to the ways of dealing it
    from the ``unseen`` cards (`possible_hands`)."""
    unseen: np.ndarray
    """int64[14]: the cards the observer cannot see now."""
    observer: int
    decisions: list[TargetDecision]
    """The target's decisions since its hand was dealt, oldest first."""


def hand_posterior(target: Policy, decisions: list[TargetDecision], hands: np.ndarray, *, frequency: np.ndarray,
                   unseen: np.ndarray, observer: int, encoding: ActionEncoding) -> np.ndarray:
    """float64[N]: the posterior weight of each of the target's possible current ``hands`` (normalized); one
    slot's `hand_posteriors`."""
    return hand_posteriors(target, [HandQuestion(hands, frequency, unseen, observer, decisions)], encoding)[0]


def hand_posteriors(target: Policy, questions: list[HandQuestion], encoding: ActionEncoding) -> list[np.ndarray]:
    """float64[N] for each question: the posterior weight of each possible hand of the target (normalized).

    The prior is the deal's: the target was dealt its current hand plus every card it has played since, out
    of the unseen cards and the played ones. At its decision ``t`` it held its current hand plus the cards it
    has played since (``t``'s own included); each hypothesis's position then is the recorded one with the
    cards the observer could not see dealt to match it (`VectorGame.with_hidden`), and its weight is
    multiplied by the probability the target gave the move it made there. The positions of every question
    recorded in one copy are dealt in one call, and the target is asked once for all of them. A target
    without ``action_probabilities`` (or out of their reach) tells nothing more than the deal.
    """
    priors, played_from = deal_priors(questions, encoding)
    probabilities = getattr(target, PROBABILITIES_METHOD, None)
    if probabilities is None:
        return priors
    likelihoods = [np.ones(len(question.hands)) for question in questions]
    observations, masks, where = hypothesis_positions(questions, played_from)
    if not where:
        return priors
    try:
        chances = probabilities(np.concatenate(observations), np.concatenate(masks))
    except ProbabilitiesOutOfReach:
        return priors
    start = 0
    for index, alive, action in where:
        taken = np.zeros(len(likelihoods[index]))
        taken[alive] = chances[start:start + len(alive), action]
        likelihoods[index] *= taken
        start += len(alive)
    posteriors = []
    for prior, likelihood in zip(priors, likelihoods):
        weights = prior * likelihood
        posteriors.append(weights / weights.sum() if weights.sum() > 0 else prior)
    return posteriors


def deal_priors(questions: list[HandQuestion], encoding: ActionEncoding) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(priors, played): for each question, the deal's weight of each possible hand (normalized), and the
    cards the target played from each of its decisions on (row ``t``; the last row, after them all, zeros)."""
    priors, played_from = [], []
    for question in questions:
        played = np.zeros((len(question.decisions) + 1, NUM_RANK_SLOTS), dtype=np.int64)  # row t: played from t on
        for t in range(len(question.decisions) - 1, -1, -1):
            kind, _ = move_at(question.decisions[t].action, encoding.num_targets)
            played[t] = played[t + 1]
            played[t, hand_slot(kind)] += 1
        hands, unseen = question.hands, question.unseen
        prior = question.frequency * np.prod(binomials(unseen + played[0], hands + played[0]), axis=1) / np.prod(
            binomials(np.broadcast_to(unseen, hands.shape), hands), axis=1)
        priors.append(prior / prior.sum())
        played_from.append(played)
    return priors, played_from


def hypothesis_positions(questions: list[HandQuestion], played_from: list[np.ndarray]) -> tuple[list, list, list]:
    """(observations, masks, where): the target's observation and mask at each recorded decision under each
    hypothesis its hand allows, dealt one copy at a time, and for each part which question, hypotheses and
    move it stands for."""
    # Every hypothesis's position at every recorded decision, grouped by the copy that holds the position.
    groups: dict[int, tuple[VectorGame, list]] = {}
    for index, (question, played) in enumerate(zip(questions, played_from)):
        for t, decision in enumerate(question.decisions):
            held = question.hands + played[t]
            deck = question.unseen + played[t] - held  # the cards unseen then: now's and those played since
            alive = np.flatnonzero((deck >= 0).all(axis=1))
            rows = np.concatenate([as_card_rows(held[alive]), as_card_rows(deck[alive])], axis=1)
            groups.setdefault(id(decision.position), (decision.position, []))[1].append(
                (index, alive, decision.row, decision.action, rows))
    observations, masks, where = [], [], []
    for position, parts in groups.values():
        width = max(rows.shape[1] for *_, rows in parts)
        rows = np.concatenate([np.pad(rows, ((0, 0), (0, width - rows.shape[1])), constant_values=-1)
                               for *_, rows in parts])
        slots = np.concatenate([np.full(len(alive), row) for _, alive, row, _, _ in parts])
        observers = np.concatenate([np.full(len(alive), questions[index].observer) for index, alive, *_ in parts])
        worlds = position.with_hidden(slots, observers, rows)
        observations.append(worlds.obs[: len(slots)])
        masks.append(worlds.mask[: len(slots)])
        where += [(index, alive, action) for index, alive, _, action, _ in parts]
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

    ``target`` plays the other seat, in the past (its probabilities weigh the hands) and in the playouts;
    ``rollout`` plays the observer's seat in the playouts (the same policy: self-play). ``reward`` is the
    playouts' reward mode; ``cut`` (with ``value``) ends a playout after that many moves with ``value``'s
    estimate of the observer's reward instead of playing on. The other seat's possible hands are each weighed
    where there are at most ``exact_hands`` of them, else ``drawn_hands`` are drawn from the deal and weighed
    (each weight costs a read of the target at every decision it made with that hand). ``beliefs``: a model of
    the other seat whose action probabilities weigh its hands instead of ``target``'s.
    """

    def __init__(self, target: Policy, rollout: Policy, rules: RulesConfig, worlds: int, *,
                 reward: str = "margin", cut: int = 0, value: StateValue | None = None,
                 exact_hands: int = EXACT_HANDS, drawn_hands: int = DRAWN_HANDS, beliefs: Policy | None = None):
        if rules.num_players != SEARCH_PLAYERS:
            raise ValueError(f"the posterior answers one other seat: rules for {SEARCH_PLAYERS} players, got "
                             f"{rules.num_players}")
        if cut and value is None:
            raise ValueError(f"a playout cut after {cut} moves needs a value of the positions it stops at")
        self.target, self.rollout, self.rules, self.worlds = target, rollout, rules, worlds
        self.reward, self.cut, self.value = reward, cut, value
        self.exact_hands, self.drawn_hands = exact_hands, drawn_hands
        self.beliefs = target if beliefs is None else beliefs
        """Whose action probabilities weigh the other seat's hands (the target's, unless a model is given)."""
        self.encoding = ActionEncoding(rules)
        self.weighs = getattr(self.beliefs, PROBABILITIES_METHOD, None) is not None
        self.copies = DeckByRank(rules).copies.astype(np.int64)
        """Cards of each rank slot in the decks: no hand holds more."""
        self._all_hands: dict[int, np.ndarray] = {}
        """Every hand of each size the decks allow, listed once; a slot's possible hands are those it fits."""

    def question(self, game: VectorGame, slot: int, observer: int, *, unseen: np.ndarray,
                 decisions: list[TargetDecision], rng: np.random.Generator) -> HandQuestion:
        """What the posterior over the other seat's current hand in ``slot``, seen from ``observer``, is asked
        from: every hand it may hold (or ``drawn_hands`` drawn from the deal, past ``exact_hands``)."""
        size = int(game.arrays.hand_count[slot, 1 - observer])
        if size not in self._all_hands:
            self._all_hands[size] = possible_hands(self.copies, size)[0]
        every = self._all_hands[size]
        hands = every[(every <= unseen).all(axis=1)]
        if len(hands) <= self.exact_hands:
            frequency = np.prod(binomials(np.broadcast_to(unseen, hands.shape), hands), axis=1)
        else:
            hands, frequency = drawn_hands(unseen, size, self.drawn_hands, rng)
        return HandQuestion(hands, frequency, unseen, observer, decisions)

    def hands(self, game: VectorGame, slot: int, observer: int, *, decisions: list[TargetDecision],
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(hands, posterior weights) of the other seat's current hand in ``slot``, seen from ``observer``."""
        question = self.question(game, slot, observer, unseen=game.hidden_cards([slot], observer)[0],
                                 decisions=decisions, rng=rng)
        return question.hands, hand_posteriors(self.beliefs, [question], self.encoding)[0]

    def draw_worlds(self, game: VectorGame, slots: np.ndarray, observers: np.ndarray, *,
                    histories: list[list[TargetDecision]], rng: np.random.Generator) -> VectorGame:
        """``worlds`` positions for each of ``slots`` (slot ``i``'s at rows ``i * worlds ...``): the other
        seat's hand drawn from the posterior its decisions ``histories[i]`` imply, the deck shuffled."""
        k = self.worlds
        unseen = game.hidden_cards(slots, observers)
        questions = [self.question(game, slot, observer, unseen=unseen[i], decisions=histories[i], rng=rng)
                     for i, (slot, observer) in enumerate(zip(slots.tolist(), observers.tolist()))]
        posteriors = hand_posteriors(self.beliefs, questions, self.encoding)
        rows = np.full((len(slots) * k, int(unseen.sum(axis=1).max())), -1, dtype=np.int64)
        for i, (question, weights) in enumerate(zip(questions, posteriors)):
            hands = question.hands[rng.choice(len(weights), size=k, p=weights)]
            dealt = np.concatenate([as_card_rows(hands), rng.permuted(as_card_rows(unseen[i] - hands), axis=1)],
                                   axis=1)
            rows[i * k:(i + 1) * k, : dealt.shape[1]] = dealt
        return game.with_hidden(np.repeat(slots, k), np.repeat(observers, k), rows)

    def searched_values(self, game: VectorGame, slots: np.ndarray, observers: np.ndarray, *,
                        histories: list[list[TargetDecision]], rng: np.random.Generator) -> SearchedValues:
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
        seats = np.full((children.batch_size, SEARCH_PLAYERS), target, dtype=np.int64)
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
