"""The whole game tree of a small rules set (``mini``, ``small``), laid out for exact solutions.

Chance acts once, at the root: every distinct order of the deck's ranks is one deal, all equally
likely (suits never matter to the rules, so orders that differ only in suits are one deal). Below
each deal the reference engine plays every legal move. Every card dealt to a hand is played once,
so games end after the same number of moves, but the tree does not rely on it: a layer may hold
terminal and decision nodes side by side.

Information sets are what a seat knows, with perfect recall: its seat, the ranks it holds, the
table first laid and every move so far (each move shows the card played; the hands a seat held
before are the cards it played since). Every history of an information set lies in one layer,
which is what lets `rouba_env.evaluation.exploitability` resolve best responses layer by layer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.rules import engine, scoring
from rouba_env.rules.cards import distinct_orders, rank_of, rank_orders
from rouba_env.rules.config import RulesConfig

MAX_DEALS = 100_000
"""Distinct deck orders a tree may hold: ``small`` has 2,520; the standard deck has about 10^48."""
MAX_HISTORIES = 5_000_000
"""Nodes a tree may hold before building stops (a clear error, not an exhausted memory)."""
NO_INFOSET = -1


def check_solvable(rules: RulesConfig, max_deals: int = MAX_DEALS) -> int:
    """The number of deals of ``rules``; a ValueError if there are more than ``max_deals`` (too big to solve)."""
    orders = distinct_orders(Counter(rank_of(card) for card in rules.unshuffled_deck()))
    if orders > max_deals:
        raise ValueError(f"these rules deal {orders:.3g} distinct deck orders, more than the {max_deals:,} an exact "
                         f"solution can hold; use a small deck (rules mini or small, or fewer ranks and suits)")
    return orders


@dataclass
class Layer:
    """The nodes ``depth`` moves into every deal; node ``i``'s children are ``first_child[i]`` onwards in the next layer."""

    seat: np.ndarray
    """int64[N]: the seat to act, or -1 at a terminal node."""
    infoset: np.ndarray
    """int64[N]: the acting seat's information set, or `NO_INFOSET` at a terminal node."""
    first_child: np.ndarray
    """int64[N]: index of the first child in the next layer (children follow in the infoset's action order)."""
    num_children: np.ndarray
    """int64[N]: legal moves (0 at a terminal node)."""
    utility: np.ndarray
    """float64[N, n]: every seat's final reward at a terminal node (zero elsewhere)."""
    child_slot: np.ndarray
    """int64[M]: for each node of the next layer, the strategy slot of the move that leads to it."""

    @property
    def size(self) -> int:
        return len(self.seat)

    @property
    def parent_of_child(self) -> np.ndarray:
        """int64[M]: for each node of the next layer, its parent's index here."""
        if self._parents is None:
            self._parents = np.repeat(np.arange(self.size), self.num_children)
        return self._parents

    _parents: np.ndarray | None = field(default=None, init=False, repr=False)


class GameTree:
    """Every history of every deal of ``rules`` and its information sets (see the module's docstring).

    Information set ``I`` belongs to seat ``infoset_seat[I]`` and has ``infoset_size[I]`` legal
    actions, the project's action indices ``slot_action[slot_start[I]:][:infoset_size[I]]``; a
    strategy is one probability per such slot. ``observations[I]`` and ``masks[I]`` are what a
    `rouba_env.players.base.Policy` sitting in that seat is shown there.
    """

    def __init__(self, rules: RulesConfig, reward: str = scoring.ZERO_SUM_REWARD, max_deals: int = MAX_DEALS,
                 max_histories: int = MAX_HISTORIES, progress: Callable[[int], None] | None = None):
        self.rules = rules
        self.reward = scoring.check_reward_mode(reward)
        self.num_players = rules.num_players
        self.num_deals = check_solvable(rules, max_deals)
        self.deal_probability = 1.0 / self.num_deals
        self.actions = ActionEncoding(rules)
        self.encoder = ObservationEncoder(rules)
        self._build(max_histories, progress)

    def _build(self, max_histories: int, progress: Callable[[int], None] | None) -> None:
        rules, actions, encoder = self.rules, self.actions, self.encoder
        codes: dict[int, list[int]] = {}
        for card in rules.unshuffled_deck():
            codes.setdefault(rank_of(card), []).append(card)
        keys: dict[tuple, int] = {}
        seats: list[int] = []
        sizes: list[int] = []
        starts: list[int] = []
        slot_actions: list[int] = []
        observations: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        layers_of: list[int] = []
        # A node is (state, initial table ranks, action history); the layer's lists are filled in order.
        frontier: list[tuple[engine.GameState, tuple[int, ...], tuple[int, ...]]] = []
        for order in rank_orders({rank: len(cards) for rank, cards in codes.items()}):
            used: Counter[int] = Counter()
            deck = []
            for rank in order:
                deck.append(codes[rank][used[rank]])
                used[rank] += 1
            state = engine.deal_from_deck(rules, deck)
            frontier.append((state, tuple(sorted(rank_of(card) for card in state.table)), ()))
        self.layers: list[Layer] = []
        histories = 0
        while frontier:
            histories += len(frontier)
            if histories > max_histories:
                raise ValueError(f"the game tree of these rules has more than {max_histories:,} histories; "
                                 f"use a smaller deck (rules mini or small)")
            n = len(frontier)
            seat = np.full(n, -1, np.int64)
            infoset = np.full(n, NO_INFOSET, np.int64)
            num_children = np.zeros(n, np.int64)
            utility = np.zeros((n, self.num_players))
            children: list[tuple[engine.GameState, tuple[int, ...], tuple[int, ...]]] = []
            child_slot: list[int] = []
            for i, (state, table, history) in enumerate(frontier):
                if engine.is_terminal(state):
                    utility[i] = scoring.final_rewards(self.reward, scoring.scores(state), rules.total_cards)
                    continue
                mover = state.current
                key = (mover, tuple(sorted(rank_of(card) for card in state.hands[mover])), table, history)
                index = keys.get(key)
                legal = actions.legal_actions(state)
                if index is None:
                    index = keys[key] = len(seats)
                    seats.append(mover)
                    sizes.append(len(legal))
                    starts.append(len(slot_actions))
                    slot_actions.extend(legal)
                    observations.append(encoder.encode(state, mover))
                    masks.append(actions.mask(state))
                    layers_of.append(len(self.layers))
                seat[i], infoset[i], num_children[i] = mover, index, len(legal)
                child_slot.extend(range(starts[index], starts[index] + len(legal)))
                for action in legal:
                    child = state.copy()
                    engine.play_move(child, actions.decode(action))
                    children.append((child, table, history + (action,)))
            first_child = np.concatenate([[0], np.cumsum(num_children)[:-1]]).astype(np.int64)
            self.layers.append(Layer(seat, infoset, first_child, num_children, utility,
                                     np.array(child_slot, np.int64)))
            if progress is not None:
                progress(n)
            frontier = children
        self.num_histories = histories
        self.infoset_keys = list(keys)
        """Per information set: (seat, ranks held, ranks first laid on the table, action indices so far)."""
        self.infoset_seat = np.array(seats, np.int64)
        self.infoset_size = np.array(sizes, np.int64)
        self.infoset_layer = np.array(layers_of, np.int64)
        self.slot_start = np.array(starts, np.int64)
        self.slot_action = np.array(slot_actions, np.int64)
        self.slot_infoset = np.repeat(np.arange(len(seats)), self.infoset_size)
        self.observations = np.array(observations, np.float32).reshape(len(seats), encoder.size)
        self.masks = np.array(masks, bool).reshape(len(seats), actions.size)

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_seat)

    @property
    def num_slots(self) -> int:
        return len(self.slot_action)

    def uniform_strategy(self) -> np.ndarray:
        """float64[slots]: every legal action equally likely."""
        return 1.0 / self.infoset_size[self.slot_infoset]

    def summary(self) -> dict:
        """Sizes for a report: deals, histories, information sets (per seat) and moves per game."""
        return {"deals": self.num_deals, "histories": self.num_histories,
                "information_sets": self.num_infosets,
                "information_sets_per_seat": np.bincount(self.infoset_seat, minlength=self.num_players).tolist(),
                "layers": len(self.layers)}


QUICK_HISTORIES = 500_000
"""`solvable_tree`'s default bound: a tree built in seconds (``small`` has 77,280 histories)."""


def solvable_tree(rules: RulesConfig, reward: str = scoring.ZERO_SUM_REWARD,
                  max_histories: int = QUICK_HISTORIES) -> GameTree | None:
    """The game tree of two-player ``rules`` if it has at most ``max_histories`` histories, else None: for
    tools that measure NashConv where it comes cheaply (the trainer's evaluations)."""
    if rules.num_players != 2:
        return None
    try:
        return GameTree(rules, reward, max_histories=max_histories)
    except ValueError:
        return None
