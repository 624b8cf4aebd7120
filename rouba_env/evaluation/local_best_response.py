"""Local best response (Lisý and Bowling, 2017): a lower bound on a player's exploitability, with no training.

The LBR seat plays against the target, which sits in every other seat of the table. At each of its decisions it

1. weighs every assignment of hands to the other seats by the posterior their own choices imply: the chance of
   the deal (what the LBR seat cannot see is dealt uniformly) times, over each seat's decisions since the hands
   were dealt, the probability the target's ``action_probabilities`` gave the move it made, from the observation
   it would have had holding that hand (`hand_posteriors`); earlier hands were played out in the open, so they
   tell nothing more;
2. draws ``worlds`` positions from that posterior (the hands from it, the deck shuffled) and plays every legal
   move out in each of them to the end, the target playing as it plays and the LBR seat by the ``rollout``
   player from then on (`move_values`), on the batched table;
3. plays the move with the best mean margin reward (common worlds for every move; the first on a tie).

A target that cannot be read that way (a search, which gives no action probabilities and is slow to play out)
can be stood in for by a ``model`` (its network, say): the model's probabilities weigh the hands and the model
plays the target's seats in the playouts, while the games themselves are played against the target. Whatever the
rollout player and the model, the LBR seat is one fixed strategy, so its mean margin reward in a seat is a lower
bound on what that seat's best response gets against the others; the margin reward sums to zero over the seats,
so the sum over the seats bounds NashConv from below and the seat average (the reported ``bound``) bounds the
exploitability, NashConv over the number of seats (at two seats, NashConv / 2). `local_best_response` plays
duplicate deals, the LBR in every seat of each, many at a time, and reports the bound with its 95% interval over
deals, per seat, the win rate, and the decisions a second. Only what the LBR seat sees reaches its choices: the
target's past positions are kept as the table stood, and the cards the LBR seat cannot see in them are dealt anew
for every hypothesis (`VectorGame.with_hidden`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.checks import check_int
from rouba_env.evaluation.lineups import deal_seed
from rouba_env.evaluation.stats import margins, mean_interval, wilson_interval, win_shares
from rouba_env.players.base import Policy
from rouba_env.players.registry import make_policy
from rouba_env.posterior import (  # noqa: F401 (the posterior's pieces, as the LBR's callers know them)
    MAX_WORLDS, DecisionRecorder, HandQuestion, TargetDecision, WorldSearch, check_searchable, hand_posteriors,
    possible_hands,
)
from rouba_env.rules.config import RulesConfig, make_rules
from rouba_env.table import OPEN_SEAT, Table

DEFAULT_WORLDS = 16
"""Positions drawn from the posterior per decision; every legal move is played out in each."""
DEALS_AT_ONCE = 64
"""Deals played together (each with the LBR in every seat: as many games a deal as seats)."""
MAX_LBR_GAMES = 1_000_000


@dataclass
class LocalBestResponseResult:
    """What the LBR seat took from the target over duplicate deals (its margins in the margin reward's units)."""

    target: str
    rollout: str
    model: str
    """Who stood in for the target in the posterior and the playouts (``the target`` itself by default)."""
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
    """The exploitability lower bound (NashConv over the number of seats): the mean margin reward (cards over the
    cards in play), over every seat."""
    bound_low: float | None
    bound_high: float | None
    decisions: int
    seconds: float
    posterior: str
    """How the hands were weighed: by the target's action probabilities, or uniformly (it gives none)."""
    per_seat: dict[int, float] = field(default_factory=dict)
    """LBR seat -> mean margin reward there (a lower bound on that seat's best-response value)."""
    per_seat_interval: dict[int, tuple[float | None, float | None]] = field(default_factory=dict)
    """LBR seat -> the 95% interval of that mean over its deals."""

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds if self.seconds else 0.0

    @property
    def nash_conv_bound(self) -> float:
        """The lower bound on NashConv: the per-seat bounds summed (the seat average times the seats)."""
        return self.bound * self.rules.num_players

    def to_dict(self) -> dict:
        data = {key: value for key, value in vars(self).items() if key != "rules"}
        return data | {"rules": self.rules.to_dict(), "decisions_per_second": self.decisions_per_second,
                       "nash_conv_bound": self.nash_conv_bound}

    def describe(self) -> str:
        interval = "" if self.bound_low is None else f" [{self.bound_low:+.4f}, {self.bound_high:+.4f}]"
        n = self.rules.num_players
        summed = "" if self.bound_low is None or self.bound_high is None else (
            f" [{n * self.bound_low:+.4f}, {n * self.bound_high:+.4f}]")
        seats = "" if n == 2 else (
            f" (each seat's value: {', '.join(self._seat_value(seat) for seat in self.per_seat)}; NashConv "
            f"lower bound {self.nash_conv_bound:+.4f}{summed})")
        model = "" if self.model == "the target" else f", model {self.model}"
        return (f"local best response to {self.target} ({self.worlds} worlds a move, rollout {self.rollout}{model}, "
                f"posterior {self.posterior}): {self.games} games, win rate {self.win_rate:.1%} "
                f"[{self.win_low:.1%}, {self.win_high:.1%}], margin {self.mean_margin:+.3f} cards; exploitability "
                f"lower bound {self.bound:+.4f}{interval}{seats}; {self.decisions} decisions, "
                f"{self.decisions_per_second:.0f} a second")


    def _seat_value(self, seat: int) -> str:
        low, high = self.per_seat_interval.get(seat, (None, None))
        interval = "" if low is None or high is None else f" [{low:+.4f}, {high:+.4f}]"
        return f"{self.per_seat[seat]:+.4f}{interval}"


class TargetRecorder(DecisionRecorder):
    """The batched table's move hook that keeps the target's decisions in each slot (the LBR seat's are not
    kept: they tell nothing of the target's hand)."""

    def __init__(self, game: VectorGame, lbr_seats: np.ndarray):
        super().__init__(game, skip_seats=lbr_seats)
        self.lbr_seats = lbr_seats

    def this_hand(self, game: VectorGame, slot: int) -> list[list[TargetDecision]]:
        """The target's decisions in ``slot`` since the current hands were dealt, oldest first, one list per
        other seat from the LBR seat's left."""
        return self.others_decisions(slot, int(self.lbr_seats[slot]), int(game.arrays.deck_len[slot]))


class LocalBestResponse(WorldSearch):
    """The LBR seat's decisions for many games at once (see the module's docstring): the move of best mean
    margin over worlds drawn from the target's posterior (`WorldSearch`)."""

    def __init__(self, target: Policy, rollout: Policy, rules: RulesConfig, worlds: int = DEFAULT_WORLDS):
        super().__init__(target, rollout, rules, worlds, reward="margin")

    def choose(self, game: VectorGame, slots: np.ndarray, observers: np.ndarray,
               *,
               history: TargetRecorder, rng: np.random.Generator) -> np.ndarray:
        """The LBR seat's move in each of ``slots`` (its seat ``observers[i]`` to act there)."""
        searched = self.searched_values(game, slots, observers,
                                        histories=[history.this_hand(game, slot) for slot in slots.tolist()],
                                        rng=rng)
        return searched.mean.argmax(axis=1)  # -inf where illegal; the first on a tie


def local_best_response(target: "str | Policy", rules: "RulesConfig | str", *, games: int, seed: int = 0,
                        worlds: int = DEFAULT_WORLDS, rollout: "str | Policy | None" = None,
                        model: "str | Policy | None" = None,
                        progress: Callable[[int], None] | None = None) -> LocalBestResponseResult:
    """Play ``games`` duplicate games (``games / n`` deals at an ``n``-seat table of ``rules``, each played with
    the LBR in every seat) of a local best response against ``target``, which fills every other seat; see the
    module's docstring.

    ``rollout``: how the LBR seat plays on in its playouts (a spec or player; default: the model).
    ``model``: who stands in for the target in the posterior and the playouts (default: the target itself).
    ``progress`` is called with the number of games finished.
    """
    rules = make_rules(rules)
    check_searchable(rules, "a local best response")
    seats = rules.num_players
    games = check_int("games", games, seats, MAX_LBR_GAMES)
    if games % seats:
        raise ValueError(f"games must be a multiple of the {seats} seats (each deal is played with the local best "
                         f"response in every seat), got {games}")
    worlds = check_int("worlds", worlds, 1, MAX_WORLDS)
    target_name = name_of(target)
    target = make_policy(target, rules)
    model_name = "the target" if model is None else name_of(model)
    model = target if model is None else make_policy(model, rules)
    rollout_name = model_name if rollout is None else name_of(rollout)
    rollout = model if rollout is None else make_policy(rollout, rules)
    lbr = LocalBestResponse(model, rollout, rules, worlds)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0x1B2,)))
    deals = games // seats
    finished: list[tuple[int, int, list[int]]] = []  # (deal, LBR seat, scores)
    decisions, started = 0, time.perf_counter()
    for first in range(0, deals, DEALS_AT_ONCE):
        batch = list(range(first, min(deals, first + DEALS_AT_ONCE)))
        slots = np.arange(seats * len(batch))
        lbr_seats = np.tile(np.arange(seats), len(batch))  # each deal with the LBR in every seat
        table = Table(rules, len(slots), [target], reward="margin", illegal_action="raise")
        table.before_move = history = TargetRecorder(table.game, lbr_seats)
        table.seat(slots, np.where(np.arange(seats)[None, :] == lbr_seats[:, None], OPEN_SEAT, 0))
        table.start(slots, np.repeat([deal_seed(seed, deal) for deal in batch], seats))
        while True:
            table.play_seated(rng)
            waiting = np.flatnonzero(table.player_to_act() == OPEN_SEAT)
            if not waiting.size:
                break
            table.play(waiting, lbr.choose(table.game, waiting, lbr_seats[waiting], history=history, rng=rng),
                       who="the local best response")
            decisions += len(waiting)
        scores = table.scores(slots)
        finished += [(deal, int(lbr_seats[i]), scores[i].tolist()) for i, deal in enumerate(np.repeat(batch, seats))]
        if progress is not None:
            progress(len(slots))
    seconds = time.perf_counter() - started
    whose = "the target's" if model_name == "the target" else f"{model_name}'s"
    posterior = (f"by {whose} action probabilities" if lbr.weighs
                 else f"uniform ({model_name} gives no action probabilities)")
    return summarize_games(finished, rules, target=target_name, rollout=rollout_name, model=model_name,
                           worlds=worlds, decisions=decisions, seconds=seconds, posterior=posterior)


def name_of(player: "str | Policy") -> str:
    """A spec as given, or a player's name."""
    return player if isinstance(player, str) else getattr(player, "name", type(player).__name__)


def summarize_games(finished: list[tuple[int, int, list[int]]], rules: RulesConfig, *, target: str, rollout: str,
                    model: str, worlds: int, decisions: int, seconds: float, posterior: str) -> LocalBestResponseResult:
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
        target, rollout, model, rules, len(finished), len(per_deal), worlds, sum(shares) / len(shares), win_low, win_high,
        float(np.mean(cards)), bound, low, high, decisions, seconds, posterior,
        {seat: float(np.mean(values)) for seat, values in sorted(per_seat.items())},
        {seat: mean_interval(values)[1:] for seat, values in sorted(per_seat.items())})
