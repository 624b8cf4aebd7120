"""Local best response (Lisý and Bowling, 2017): a lower bound on a player's exploitability, with no training.

The LBR seat plays against the target at a two-seat table. At each of its decisions it

1. weighs every hand the target may hold by the posterior its own choices imply: the chance of the deal
   (what the LBR seat cannot see is dealt uniformly) times, over the target's decisions since that hand was
   dealt, the probability the target's ``action_probabilities`` gave the move it made, from the observation it
   would have had holding that hand (`hand_posterior`); earlier hands were played out in the open, so they
   tell nothing more;
2. draws ``worlds`` positions from that posterior (the target's hand from it, the deck shuffled) and plays
   every legal move out in each of them to the end, the target playing as it plays and the LBR seat by the
   ``rollout`` player from then on (`move_values`), on the batched table;
3. plays the move with the best mean margin reward (common worlds for every move; the first on a tie).

Whatever the rollout player, the LBR seat is one fixed strategy, so its seat-averaged margin against the
target over duplicate deals is a lower bound on the target's exploitability (NashConv / 2), in the margin
reward's units; a better rollout gives a tighter one. `local_best_response` plays those games, many at a
time, and reports the bound with its 95% interval over deals, the win rate, and the decisions a second.
Only what the LBR seat sees reaches its choices: the target's past positions are kept as the table stood, and
the cards the LBR seat cannot see in them are dealt anew for every hypothesis (`VectorGame.with_hidden`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.beliefs import DeckByRank
from rouba_env.checks import check_int
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.evaluation.lineups import deal_seed
from rouba_env.evaluation.stats import margins, mean_interval, wilson_interval, win_shares
from rouba_env.players.base import PROBABILITIES_METHOD, Policy, ProbabilitiesOutOfReach
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import hand_slot, move_at
from rouba_env.rules.engine import NUM_RANK_SLOTS
from rouba_env.table import OPEN_SEAT, Table

DEFAULT_WORLDS = 16
"""Positions drawn from the posterior per decision; every legal move is played out in each."""
EXACT_HANDS = 2048
"""The target's possible hands are enumerated when there are at most this many (every deck here: a hand of
four from thirteen ranks and the joker has at most 2,380), else drawn from the deal."""
DRAWN_HANDS = 512
"""Hands drawn from the deal to weigh when there are more than `EXACT_HANDS`."""
DEALS_AT_ONCE = 64
"""Deals played together (both seatings of each: twice as many games)."""
MAX_WORLDS = 1024
MAX_LBR_GAMES = 1_000_000
LBR_PLAYERS = 2
"""The local best response answers one opponent: a two-seat table."""


@dataclass
class TargetDecision:
    """One decision of the target: the table as it stood (a copied slot) and the move it made."""

    position: VectorGame
    row: int
    action: int
    deck_len: int
    """The deck's size then: a new hand is dealt only from the deck, so an equal size means the same hand."""


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
    dealt = np.stack([rng.permutation(cards)[:size] for _ in range(draws)])
    counts = np.zeros((draws, NUM_RANK_SLOTS), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(draws), size), dealt.ravel()), 1)
    hands, times = np.unique(counts, axis=0, return_counts=True)
    return hands, times.astype(np.float64)


def as_cards(counts: np.ndarray) -> np.ndarray:
    """Rank slots of a count vector, in rank order."""
    return np.repeat(np.arange(NUM_RANK_SLOTS), counts)


def as_card_rows(counts: np.ndarray) -> np.ndarray:
    """int64[N, L]: the rank slots of each row of ``counts`` (rows of equal sums ``L``), in rank order."""
    length = int(counts[0].sum()) if len(counts) else 0
    return np.repeat(np.tile(np.arange(NUM_RANK_SLOTS), len(counts)), counts.ravel()).reshape(len(counts), length)


def binomials(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """float64 array: C(n, k) entry by entry (0 where k is out of 0..n)."""
    top = int(n.max()) if n.size else 0
    table = np.array([[math.comb(row, column) for column in range(top + 1)] for row in range(top + 1)], dtype=float)
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
    probabilities = getattr(target, PROBABILITIES_METHOD, None)
    if probabilities is None:
        return priors
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
    likelihoods = [np.ones(len(question.hands)) for question in questions]
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


@dataclass
class LocalBestResponseResult:
    """What the LBR seat took from the target over duplicate deals (its margins in the margin reward's units)."""

    target: str
    rollout: str
    rules: RulesConfig
    games: int
    deals: int
    worlds: int
    win_rate: float
    win_low: float
    win_high: float
    mean_margin: float
    """Cards: own score minus the target's, seat-averaged."""
    bound: float
    """The exploitability lower bound: the mean margin reward (cards over the cards in play)."""
    bound_low: float | None
    bound_high: float | None
    decisions: int
    seconds: float
    posterior: str
    """How the hands were weighed: by the target's action probabilities, or uniformly (it gives none)."""
    per_seat: dict[int, float] = field(default_factory=dict)
    """LBR seat -> mean margin reward there."""

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict:
        data = {key: value for key, value in vars(self).items() if key != "rules"}
        return data | {"rules": self.rules.to_dict(), "decisions_per_second": self.decisions_per_second}

    def describe(self) -> str:
        interval = "" if self.bound_low is None else f" [{self.bound_low:+.4f}, {self.bound_high:+.4f}]"
        return (f"local best response to {self.target} ({self.worlds} worlds a move, rollout {self.rollout}, "
                f"posterior {self.posterior}): {self.games} games, win rate {self.win_rate:.1%} "
                f"[{self.win_low:.1%}, {self.win_high:.1%}], margin {self.mean_margin:+.3f} cards; exploitability "
                f"lower bound {self.bound:+.4f}{interval}; {self.decisions} decisions, "
                f"{self.decisions_per_second:.0f} a second")


class TargetRecorder:
    """The batched table's move hook that keeps the target's decisions in each slot's current hand."""

    def __init__(self, game: VectorGame, lbr_seats: np.ndarray):
        self.game, self.lbr_seats = game, lbr_seats
        self.decisions: dict[int, list[TargetDecision]] = {}

    def __call__(self, slots: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> None:
        targets = np.flatnonzero(seats != self.lbr_seats[slots])
        if not targets.size:
            return
        kept = self.game.copies(slots[targets])
        for row, (slot, action) in enumerate(zip(slots[targets].tolist(), actions[targets].tolist())):
            self.decisions[slot] = self.this_hand(self.game, slot) + [
                TargetDecision(kept, row, int(action), int(self.game.arrays.deck_len[slot]))]

    def this_hand(self, game: VectorGame, slot: int) -> list[TargetDecision]:
        """The target's decisions in ``slot`` since its current hand was dealt, oldest first."""
        deck_len = int(game.arrays.deck_len[slot])
        return [decision for decision in self.decisions.get(slot, []) if decision.deck_len == deck_len]


class LocalBestResponse:
    """The LBR seat's decisions for many games at once (see the module's docstring)."""

    def __init__(self, target: Policy, rollout: Policy, rules: RulesConfig, worlds: int = DEFAULT_WORLDS):
        self.target, self.rollout, self.rules, self.worlds = target, rollout, rules, worlds
        self.encoding = ActionEncoding(rules)
        self.weighs = getattr(target, PROBABILITIES_METHOD, None) is not None
        self.copies = DeckByRank(rules).copies.astype(np.int64)
        """Cards of each rank slot in the decks: no hand holds more."""
        self._all_hands: dict[int, np.ndarray] = {}
        """Every hand of each size the decks allow, listed once; a slot's possible hands are those it fits."""

    def question(self, game: VectorGame, slot: int, observer: int, *, unseen: np.ndarray,
                 decisions: list[TargetDecision], rng: np.random.Generator) -> HandQuestion:
        """What the posterior over the target's current hand in ``slot``, seen from ``observer``, is asked from:
        every hand it may hold (or `DRAWN_HANDS` drawn from the deal, past `EXACT_HANDS`)."""
        size = int(game.arrays.hand_count[slot, 1 - observer])
        if size not in self._all_hands:
            self._all_hands[size] = possible_hands(self.copies, size)[0]
        every = self._all_hands[size]
        hands = every[(every <= unseen).all(axis=1)]
        if len(hands) <= EXACT_HANDS:
            frequency = np.prod(binomials(np.broadcast_to(unseen, hands.shape), hands), axis=1)
        else:
            hands, frequency = drawn_hands(unseen, size, DRAWN_HANDS, rng)
        return HandQuestion(hands, frequency, unseen, observer, decisions)

    def hands(self, game: VectorGame, slot: int, observer: int, *, decisions: list[TargetDecision],
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(hands, posterior weights) of the target's current hand in ``slot``, seen from ``observer``."""
        question = self.question(game, slot, observer, unseen=game.hidden_cards([slot], observer)[0],
                                 decisions=decisions, rng=rng)
        return question.hands, hand_posteriors(self.target, [question], self.encoding)[0]

    def choose(self, game: VectorGame, slots: np.ndarray, observers: np.ndarray,
               *,
               history: "TargetRecorder", rng: np.random.Generator) -> np.ndarray:
        """The LBR seat's move in each of ``slots`` (its seat ``observers[i]`` to act there)."""
        k = self.worlds
        unseen = game.hidden_cards(slots, observers)
        questions = [self.question(game, slot, observer, unseen=unseen[i], decisions=history.this_hand(game, slot),
                                   rng=rng)
                     for i, (slot, observer) in enumerate(zip(slots.tolist(), observers.tolist()))]
        posteriors = hand_posteriors(self.target, questions, self.encoding)
        rows = np.full((len(slots) * k, int(unseen.sum(axis=1).max())), -1, dtype=np.int64)
        for i, (question, weights) in enumerate(zip(questions, posteriors)):
            for j, index in enumerate(rng.choice(len(weights), size=k, p=weights).tolist()):
                hand = question.hands[index]
                cards = np.concatenate([as_cards(hand), rng.permutation(as_cards(unseen[i] - hand))])
                rows[i * k + j, : len(cards)] = cards
        seats = np.repeat(observers, k)
        values = self.move_values(game.with_hidden(np.repeat(slots, k), seats, rows), seats, rng)
        mean = values.reshape(len(slots), k, -1).mean(axis=1)  # -inf where illegal, the same moves in every world
        return mean.argmax(axis=1)

    def move_values(self, worlds: VectorGame, observers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """float64[K, A]: for each world and each legal move of its seat to act (``observers[i]``), the margin
        reward that seat ends with when it plays that move, the target then playing as it plays and the seat by
        the rollout player; -inf for illegal moves."""
        rows, actions = np.nonzero(worlds.mask)
        children = worlds.children(rows, actions)
        table = Table(self.rules, children.batch_size, reward="margin", illegal_action="raise", game=children)
        target, rollout = table.add_player(self.target), table.add_player(self.rollout)
        seats = np.full((children.batch_size, LBR_PLAYERS), target, dtype=np.int64)
        seats[np.arange(len(rows)), observers[rows]] = rollout
        table.seat(np.arange(children.batch_size), seats)
        table.play_seated(rng)
        values = np.full(worlds.mask.shape, -np.inf)
        values[rows, actions] = table.final_rewards(np.arange(len(rows)))[np.arange(len(rows)), observers[rows]]
        return values


def local_best_response(target: "str | Policy", rules: RulesConfig, *, games: int, seed: int = 0,
                        worlds: int = DEFAULT_WORLDS, rollout: "str | Policy | None" = None,
                        progress: Callable[[int], None] | None = None) -> LocalBestResponseResult:
    """Play ``games`` duplicate games (both seatings of ``games / 2`` deals) of a local best response against
    ``target`` at a two-seat table of ``rules``; see the module's docstring.

    ``rollout``: how the LBR seat plays on in its playouts (a spec or player; default: the target itself).
    ``progress`` is called with the number of games finished.
    """
    if rules.num_players != LBR_PLAYERS:
        raise ValueError(f"a local best response answers one opponent: rules for {LBR_PLAYERS} players, got "
                         f"{rules.num_players}")
    if rules.draw_from_deck:
        raise ValueError("a local best response needs hands dealt from the deck (draw_from_deck=False): with "
                         "draw_from_deck a flipped card is part of what it would weigh")
    games = check_int("games", games, 2, MAX_LBR_GAMES)
    if games % 2:
        raise ValueError(f"games must be even (each deal is played in both seatings), got {games}")
    worlds = check_int("worlds", worlds, 1, MAX_WORLDS)
    target_name = target if isinstance(target, str) else getattr(target, "name", type(target).__name__)
    target = make_policy(target, rules)
    rollout_name = "the target" if rollout is None else (
        rollout if isinstance(rollout, str) else getattr(rollout, "name", type(rollout).__name__))
    rollout = target if rollout is None else make_policy(rollout, rules)
    lbr = LocalBestResponse(target, rollout, rules, worlds)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0x1B2,)))
    deals = games // 2
    finished: list[tuple[int, int, list[int]]] = []  # (deal, LBR seat, scores)
    decisions, started = 0, time.perf_counter()
    for first in range(0, deals, DEALS_AT_ONCE):
        batch = list(range(first, min(deals, first + DEALS_AT_ONCE)))
        slots = np.arange(2 * len(batch))
        lbr_seats = np.tile(np.arange(LBR_PLAYERS), len(batch))  # each deal in both seatings
        table = Table(rules, len(slots), [target], reward="margin", illegal_action="raise")
        table.before_move = history = TargetRecorder(table.game, lbr_seats)
        table.seat(slots, np.where(np.arange(LBR_PLAYERS)[None, :] == lbr_seats[:, None], OPEN_SEAT, 0))
        table.start(slots, np.repeat([deal_seed(seed, deal) for deal in batch], LBR_PLAYERS))
        while True:
            table.play_seated(rng)
            waiting = np.flatnonzero(table.player_to_act() == OPEN_SEAT)
            if not waiting.size:
                break
            table.play(waiting, lbr.choose(table.game, waiting, lbr_seats[waiting], history=history, rng=rng),
                       who="the local best response")
            decisions += len(waiting)
        scores = table.scores(slots)
        finished += [(deal, int(lbr_seats[i]), scores[i].tolist()) for i, deal in enumerate(np.repeat(batch, 2))]
        if progress is not None:
            progress(len(slots))
    seconds = time.perf_counter() - started
    posterior = ("by the target's action probabilities" if lbr.weighs
                 else "uniform (the target gives no action probabilities)")
    return summarize_games(finished, rules, target=target_name, rollout=rollout_name, worlds=worlds,
                           decisions=decisions, seconds=seconds, posterior=posterior)


def summarize_games(finished: list[tuple[int, int, list[int]]], rules: RulesConfig, *, target: str, rollout: str,
                    worlds: int, decisions: int, seconds: float, posterior: str) -> LocalBestResponseResult:
    """The LBR seat's results over its games: win share (Wilson), margins with their interval over deals."""
    shares = [win_shares(scores)[seat] for _, seat, scores in finished]
    cards = [margins(scores)[seat] for _, seat, scores in finished]
    per_deal: dict[int, list[float]] = {}
    per_seat: dict[int, list[float]] = {}
    for (deal, seat, _), margin in zip(finished, cards):
        per_deal.setdefault(deal, []).append(margin / rules.total_cards)
        per_seat.setdefault(seat, []).append(margin / rules.total_cards)
    bound, low, high = mean_interval([float(np.mean(values)) for values in per_deal.values()])
    win_low, win_high = wilson_interval(sum(shares), len(shares))
    return LocalBestResponseResult(
        target, rollout, rules, len(finished), len(per_deal), worlds, sum(shares) / len(shares), win_low, win_high,
        float(np.mean(cards)), bound, low, high, decisions, seconds, posterior,
        {seat: float(np.mean(values)) for seat, values in sorted(per_seat.items())})
