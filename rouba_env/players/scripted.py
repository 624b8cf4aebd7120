"""Scripted players ``greedy`` and ``heuristic``: the best legal move by `rouba_env.players.move_values`."""

from __future__ import annotations

import numpy as np

from rouba_env.encoding.observation import ObservationView
from rouba_env.compiled import TABLES
from rouba_env.players.base import BasePolicy
from rouba_env.players.move_values import (
    ActionFeatures,
    all_entries,
    comparable,
    greedy_values,
    heuristic_values,
    legal_entries,
    pick_best,
)
from rouba_env.rules.config import RulesConfig
from rouba_env.streams import Randomness


class ScoredMovePolicy(BasePolicy):
    """Plays each row's legal action of highest `move_values` (exact ties at random).

    Only legal entries are scored in `act_batch` (a handful per row instead of
    every action), which keeps batched rollouts fast.
    """

    compiled_stage = TABLES  # an environment's opponents: compiled with the tables

    def __init__(self, rules: RulesConfig, max_players: int | None = None):
        super().__init__(rules, max_players)
        self.features = ActionFeatures(self.actions)

    def move_values(self, view: ObservationView, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """float[K]: the value of action ``actions[k]`` in row ``rows[k]`` of ``view``."""
        raise NotImplementedError

    def action_values(self, obs: np.ndarray) -> np.ndarray:
        """float[B, A]: the value of every action (meaningful for legal ones only)."""
        view = self.encoder.decode(obs)
        rows, actions = all_entries(view.batch_size, self.actions.size)
        return self.move_values(view, rows, actions).reshape(view.batch_size, self.actions.size)

    plays_in_batch = True

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Randomness) -> np.ndarray:
        obs, _ = self.checked(obs, mask)
        rows, actions = legal_entries(mask)
        view = self.encoder.decode(obs)
        values = self.move_values(view, rows, actions)
        return pick_best(values, rows, actions, batch=view.batch_size, rng=rng)

    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float64[B, A]: the probability `act_batch` plays each action: shared equally by the legal
        actions of the row's highest value (the exact ties it breaks at random)."""
        obs, legal = self.checked(obs, mask)
        values = np.where(legal, comparable(self.action_values(obs)), -np.inf)
        best = legal & (values == values.max(axis=1, keepdims=True))
        return best / best.sum(axis=1, keepdims=True)


class GreedyPolicy(ScoredMovePolicy):
    """Takes the most cards now: the biggest steal, else a table capture, else the own pile; else discards.

    Value of an action: `rouba_env.players.move_values.greedy_values` (cards taken
    plus a small priority). Vectorized over the batch, so it doubles as a fast
    rollout policy.
    """

    name = "greedy"

    def move_values(self, view: ObservationView, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return greedy_values(view, self.features, self.rules, rows=rows, actions=actions)


class HeuristicPolicy(ScoredMovePolicy):
    """Weighs what a move takes against what it risks, after the rules page's tips.

    Value of an action: `rouba_env.players.move_values.heuristic_values` (cards of
    margin gained, minus the expected loss of the own pile, the exposure of a
    discard and the cost of spending a joker).
    """

    name = "heuristic"

    def move_values(self, view: ObservationView, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return heuristic_values(view, self.features, self.rules, rows=rows, actions=actions)
