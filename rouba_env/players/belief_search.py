"""``belief_search``: a search whose worlds come from what the other seat's moves said about its hand.

At each decision the other seat's possible hands are weighed by the posterior an opponent model's action
probabilities imply along the moves that seat made with its current hand (exact Bayes over every hand it may
hold, `rouba_env.posterior`, the searching seat's own hand known); ``worlds`` positions are drawn from it (the
deck shuffled) and every legal move is played out in each, the network playing both seats, the same worlds for
every move (`rouba_env.posterior.WorldSearch`). It plays the move of best mean value under ``value``: the outcome
(a win 1, a draw 0, a loss -1) or the margin; with ``temperature`` > 0 it samples a move by the softmax of the
values over the temperature instead. With ``cut`` = D (and ``value=margin``) a playout ends after D moves
with the network's privileged critic's estimate of the margin, which reads the world's hidden cards (a world is
a full position).

The moves are the evidence, so it reads its games' histories: a `Table` that seats it keeps them
(`Table.history`), which every front end that seats players uses (the evaluator, the environments'
opponents, browser and terminal play). Asked for one observation with no table (``act``), it says so.
Two seats only: the posterior answers one other seat.
"""

from __future__ import annotations

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.checks import check_choice, check_int, check_number
from rouba_env.players.base import BasePolicy, Policy
from rouba_env.players.checkpoint import CheckpointTableMismatch
from rouba_env.players.network import load_policy
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy
from rouba_env.posterior import MAX_WORLDS, WorldSearch, check_searchable
from rouba_env.rules.config import RulesConfig
from rouba_env.streams import Randomness, RowStreams
from rouba_env.table import Table

BELIEF_SEARCH_DEFAULT_POLICY = "2p"
"""The network that plays the worlds out (and, by default, models the other seat): the shipped 2-player one."""
BELIEF_SEARCH_DEFAULT_WORLDS = 16
"""Worlds drawn from the posterior per decision."""
MAX_CUT = 1024
"""The most moves a playout may run before the critic ends it (``cut``; 0 plays to the end)."""
BELIEF_SEARCH_VALUES = ("outcome", "margin")
"""What a playout is worth to the searching seat: its game's result (win, draw, loss) or its card margin."""
SCRIPTED_MODELS = {"heuristic": HeuristicPolicy, "greedy": GreedyPolicy}
"""Scripted players that may model the other seat (they give no action probabilities: the deal's prior)."""


class BeliefSearchPolicy(BasePolicy):
    """See the module's docstring."""

    name = "belief_search"
    plays_in_batch = True

    def __init__(self, rules: RulesConfig, max_players: int | None = None, *,
                 policy: str = BELIEF_SEARCH_DEFAULT_POLICY, opponent: str = "",
                 worlds: int = BELIEF_SEARCH_DEFAULT_WORLDS, value: str = "outcome", temperature: float = 0.0,
                 cut: int = 0):
        check_searchable(rules, "belief_search")
        self.worlds = check_int("belief_search worlds", worlds, 1, MAX_WORLDS)
        check_choice("belief_search value", value, BELIEF_SEARCH_VALUES)
        self.temperature = check_number("belief_search temperature", temperature, 0)
        self.cut = check_int("belief_search cut", cut, 0, MAX_CUT)
        if self.cut and value != "margin":
            raise ValueError(f"belief_search cut={cut} ends playouts with the network's privileged critic, which "
                             f"estimates the margin: give value=margin with it")
        super().__init__(rules, max_players)
        try:
            self.network = load_policy(policy.removeprefix("checkpoint:"), rules, max_players)
        except CheckpointTableMismatch as error:
            default = " (the default)" if policy == BELIEF_SEARCH_DEFAULT_POLICY else ""
            raise CheckpointTableMismatch(f"belief_search's network, policy={policy}{default}, cannot play this "
                                          f"table: {error}; name one that can with belief_search:policy=NAME_OR_PATH "
                                          f"(mixed plays 2 to 4 seats of the full game)") from None
        critic = self.network.privileged_value
        if self.cut and critic is None:
            raise ValueError(f"belief_search cut={cut}: the network {policy!r} ships no privileged critic to end "
                             f"playouts with (train it with rouba-train --critic privileged), or leave cut at 0")
        if self.cut and critic is not None and critic.input_size != self.encoder.size + self.encoder.hidden_size:
            raise ValueError(f"belief_search cut={cut}: the network's critic reads {critic.input_size} values, this "
                             f"table gives {self.encoder.size + self.encoder.hidden_size} (another padding)")
        self.critic = critic
        model: Policy = self.network
        if opponent in SCRIPTED_MODELS:
            model = SCRIPTED_MODELS[opponent](rules, max_players)
        elif opponent:
            model = load_policy(opponent.removeprefix("checkpoint:"), rules, max_players)
        self.model_name = opponent or f"its network ({policy})"
        self.search = WorldSearch(self.network, self.network, rules, self.worlds, reward=value, beliefs=model,
                                  cut=self.cut, value=self.critic_values if self.cut else None)
        self.value = value

    def critic_values(self, game: VectorGame, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """float64[K]: the privileged critic's margin estimate for seat ``seats[i]`` to act in world ``slots[i]``
        (a world is a full position: its hidden cards are the world's, never the real game's)."""
        assert self.critic is not None  # a cut has a critic (checked when made)
        return self.critic.forward(game.observe_slots(slots, seats), game.hidden(slots, seats)).astype(np.float64)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Randomness) -> np.ndarray:
        raise ValueError("belief_search weighs the hands by the moves made, which an observation alone does not "
                         "hold: seat it at a Table (rouba_env.table.Table, the evaluator, an environment's "
                         "opponents), which keeps its games' histories")

    def act_at_table(self, table: Table, games: np.ndarray, seats: np.ndarray, rng: Randomness) -> np.ndarray:
        """The move in each of ``games`` (``seats[i]`` to act there), from the table's positions and histories;
        with one Generator per game (`RowStreams`), each game is searched with its own, as it would be alone."""
        if table.history is None:
            raise ValueError("belief_search needs a table that keeps its games' histories (Table.add_player)")
        if isinstance(rng, RowStreams):
            return np.concatenate([self.act_at_table(table, games[i:i + 1], seats[i:i + 1], rng[i])
                                   for i in range(len(games))]) if len(games) else np.zeros(0, dtype=np.int64)
        cumulative = np.cumsum(self.probabilities_at_table(table, games, seats, rng), axis=1)
        if self.temperature == 0:
            return np.argmax(cumulative > 0.5, axis=1)  # the one move of mass 1
        drawn = rng.random(len(games)) * cumulative[:, -1]
        return np.argmax(cumulative > drawn[:, None], axis=1)

    def probabilities_at_table(self, table: Table, games: np.ndarray, seats: np.ndarray,
                               rng: np.random.Generator) -> np.ndarray:
        """float64[N, A]: the move distribution in each of ``games`` for one draw of the worlds: all of it on the
        move of best mean value (the first on a tie) at temperature 0, else the softmax of the values over the
        temperature (0 for illegal moves)."""
        if table.history is None:
            raise ValueError("belief_search needs a table that keeps its games' histories (Table.add_player)")
        game = table.game
        histories = [table.history.others_decisions(slot, seat, int(game.arrays.deck_len[slot]))
                     for slot, seat in zip(games.tolist(), seats.tolist())]
        values = self.search.searched_values(game, games, seats, histories=histories, rng=rng).mean
        if self.temperature == 0:
            chosen = np.zeros(values.shape)
            chosen[np.arange(len(values)), values.argmax(axis=1)] = 1.0  # -inf where illegal
            return chosen
        weights = np.exp((values - values.max(axis=1, keepdims=True)) / self.temperature)  # 0 where illegal
        return weights / weights.sum(axis=1, keepdims=True)

    def __repr__(self) -> str:
        return (f"belief_search(worlds={self.worlds}, value={self.value}, temperature={self.temperature}, "
                f"beliefs from {self.model_name})")

