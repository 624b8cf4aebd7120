"""Scripted players ``greedy`` and ``heuristic``: the best legal move by `rouba_env.players.scoring`."""

from __future__ import annotations

import numpy as np

from rouba_env.encoding.observation import ObservationView, read_observations
from rouba_env.players.base import BasePolicy
from rouba_env.players.scoring import (
    DISCARD_EXPOSURE,
    GREEDY_JOKER_PENALTY,
    GREEDY_PRIORITY_DISCARD,
    GREEDY_PRIORITY_OWN_PILE,
    GREEDY_PRIORITY_STEAL,
    GREEDY_PRIORITY_TABLE,
    JOKER_COST,
    PAIR_BONUS,
    RISK_WEIGHT,
    ActionTable,
    all_entries,
    cards_taken,
    legal_entries,
    match_probabilities,
    pick_best,
)
from rouba_env.rules.cards import NUM_RANKS
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import EMPTY_PILE


class EntryPolicy(BasePolicy):
    """A policy that scores (row, action) entries with `entry_values` and plays each row's best legal action.

    Only legal entries are scored in `act_batch` (a handful per row instead of
    every action), which keeps batched rollouts fast.
    """

    def __init__(self, rules: RulesConfig, max_players: int | None = None):
        super().__init__(rules, max_players)
        self.table = ActionTable(self.actions)

    def entry_values(self, view: ObservationView, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def action_values(self, obs: np.ndarray) -> np.ndarray:
        """float[B, A]: the value of every action (meaningful for legal ones only)."""
        view = read_observations(self.encoder, obs)
        batch = view.hand.shape[0]
        rows, actions = all_entries(batch, self.actions.size)
        return self.entry_values(view, rows, actions).reshape(batch, self.actions.size)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows, actions = legal_entries(mask)
        view = read_observations(self.encoder, obs)
        values = self.entry_values(view, rows, actions)
        return pick_best(values, rows, actions, view.hand.shape[0], rng)


# ---------------------------------------------------------------------------
# greedy
# ---------------------------------------------------------------------------


class GreedyPolicy(EntryPolicy):
    """Takes the most cards now: the biggest steal, else a table capture, else the own pile; else discards.

    Value of an action = cards it takes (see `cards_taken`) + a small priority
    (steal > table > own pile > discard) - a small joker penalty; ties at random.
    Vectorized over the batch, so it doubles as a fast rollout policy.
    """

    name = "greedy"

    def __init__(self, rules: RulesConfig, max_players: int | None = None):
        super().__init__(rules, max_players)
        priority = np.zeros(self.actions.size)
        priority[self.table.is_steal] = GREEDY_PRIORITY_STEAL
        priority[self.table.is_table | self.table.is_table_joker] = GREEDY_PRIORITY_TABLE
        priority[self.table.is_own_pile] = GREEDY_PRIORITY_OWN_PILE
        priority[self.table.is_discard] = GREEDY_PRIORITY_DISCARD
        priority[self.table.is_joker] -= GREEDY_JOKER_PENALTY
        self.priority = priority

    def entry_values(self, view: ObservationView, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return cards_taken(view, self.table, self.rules.take_all, rows, actions) + self.priority[actions]


# ---------------------------------------------------------------------------
# heuristic
# ---------------------------------------------------------------------------
class HeuristicPolicy(EntryPolicy):
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

    def entry_values(self, view: ObservationView, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        rules, act = self.rules, self.table
        opponents = rules.num_players - 1
        is_discard, is_joker, rank = act.is_discard[actions], act.is_joker[actions], act.rank[actions]
        taken = cards_taken(view, act, rules.take_all, rows, actions).astype(np.float64)
        gain = np.where(is_discard, 0.0, taken + 1.0) + np.where(act.is_steal[actions], taken / opponents, 0.0)

        p_match = match_probabilities(view, rules)
        own_top = view.pile_tops[rows, 0]
        own_size = view.pile_sizes[rows, 0].astype(np.float64)
        top_after = np.where(is_discard, np.where(own_top == EMPTY_PILE, NUM_RANKS, own_top), rank)
        size_after = np.where(is_discard, own_size, own_size + taken + 1.0)
        risk = RISK_WEIGHT * size_after * p_match[rows, top_after] * (1.0 + 1.0 / opponents)

        p_discard = np.where(is_joker, 1.0, p_match[rows, rank])
        still_held = (view.hand[rows, act.card_rank[actions]] >= 2) & ~is_joker
        discard_cost = DISCARD_EXPOSURE * p_discard / opponents - PAIR_BONUS * still_held * (1.0 - p_discard)
        discard_cost = np.where(is_discard, discard_cost, 0.0)
        joker_cost = np.where(is_joker, JOKER_COST, 0.0)
        return gain - risk - discard_cost - joker_cost


