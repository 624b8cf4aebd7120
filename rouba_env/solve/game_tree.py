"""The whole game tree of a small rules set (``mini``, ``small``), laid out for exact solutions.

Chance acts once, at the root: every distinct order of the deck's ranks is one deal, all equally
likely (suits never matter to the rules, so orders that differ only in suits are one deal). Below
each deal the rules core plays every legal move, a whole layer at a time. Every card dealt to a hand is played once,
so games end after the same number of moves, but the tree does not rely on it: a layer may hold
terminal and decision nodes side by side.

Information sets are what a seat knows, with perfect recall: its seat, the ranks it holds, the
table first laid and every move so far (each move shows the card played; the hands a seat held
before are the cards it played since). Every history of an information set lies in one layer,
which is what lets `rouba_env.solve.exploitability` resolve best responses layer by layer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numba
import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.rules import scoring
from rouba_env.rules.cards import distinct_orders, rank_of, rank_orders
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import RANK_SLOTS as NUM_RANK_SLOTS

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


ESTIMATE_GAMES = 1024
"""Random games that `estimate_histories` plays."""
ESTIMATE_MARGIN = 1.25
"""`GameTree` refuses up front when the estimate exceeds its bound this many times over (the estimate is
a mean over random games, not exact; past the bound by less, the layer-by-layer count decides)."""


def estimate_histories(rules: RulesConfig, games: int = ESTIMATE_GAMES, seed: int = 0) -> float:
    """About how many histories the whole game tree of ``rules`` has, from ``games`` random games.

    Knuth's estimator: along a random path, the product of the branching factors met so far is an
    unbiased estimate of the number of nodes at that depth; their sum, averaged over the games and
    multiplied by the number of deals, estimates the tree's size. Every deal is equally likely in the
    tree and in a random shuffle, so a random game is a random path. Runs in well under a second.
    """
    deals = distinct_orders(Counter(rank_of(card) for card in rules.unshuffled_deck()))
    game = VectorGame(rules, games, seed=seed, auto_reset=False)
    game.reset()
    rng = np.random.default_rng(seed)
    paths, total = np.ones(games), np.ones(games)
    while (game.current >= 0).any():
        live = game.current >= 0
        paths[live] *= game.mask[live].sum(axis=1)
        total[live] += paths[live]
        game.step(game.random_actions(rng))
    return float(deals * total.mean())


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
        estimate = estimate_histories(rules)
        if estimate > ESTIMATE_MARGIN * max_histories:
            raise ValueError(f"the game tree of these rules has about {estimate:.2g} histories (estimated from "
                             f"{ESTIMATE_GAMES} random games), more than the {max_histories:,} it may hold; use a "
                             f"smaller deck (rules mini or small)")
        self.deal_probability = 1.0 / self.num_deals
        self.actions = ActionEncoding(rules)
        self.encoder = ObservationEncoder(rules)
        self._build(max_histories, progress)

    def _build(self, max_histories: int, progress: Callable[[int], None] | None) -> None:
        """Every layer in one batched call of the rules core: the deals, then each layer's children.

        Each node carries the number of its public history (the table first laid and the moves so far)
        within its layer; an information set is a (public history, seat, hand) triple, numbered in the
        order the layer first meets it. Every step is an array pass, so the cost per history is a few
        numpy operations, not a Python loop.
        """
        rules = self.rules
        codes: dict[int, list[int]] = {}
        for card in rules.unshuffled_deck():
            codes.setdefault(rank_of(card), []).append(card)
        decks = []
        for order in rank_orders({rank: len(cards) for rank, cards in codes.items()}):
            used: Counter[int] = Counter()
            deck = []
            for rank in order:
                deck.append(codes[rank][used[rank]])
                used[rank] += 1
            decks.append(deck)
        game = VectorGame(rules, len(decks), auto_reset=False, reward=self.reward)
        game.deal_decks(np.arange(len(decks)), decks)
        self._first_tables = game.arrays.table[: len(decks)].copy()
        public = first_occurrence_ids(self._first_tables)
        seats, sizes, hands, layers_of, representatives = [], [], [], [], []
        slot_actions: list[np.ndarray] = []
        observations: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        self.layers: list[Layer] = []
        histories = infosets = slots = 0
        while True:
            n = len(public)
            histories += n
            if histories > max_histories:
                raise ValueError(f"the game tree of these rules has more than {max_histories:,} histories; "
                                 f"use a smaller deck (rules mini or small)")
            seat = game.current[:n].astype(np.int64)
            live = np.flatnonzero(seat >= 0)
            utility = np.where((seat >= 0)[:, None], 0.0, game.rewards[:n])
            parents, actions = np.nonzero(game.mask[:n])
            num_children = np.bincount(parents, minlength=n).astype(np.int64)
            held = game.arrays.hands[live, seat[live]]
            key = np.stack([public[live], seat[live]], axis=1)
            local, first = first_occurrence_ids(np.concatenate([key, held.astype(np.int64)], axis=1),
                                                return_first=True)
            infoset = np.full(n, NO_INFOSET, np.int64)
            infoset[live] = infosets + local
            new_nodes = live[first]
            new_sizes = num_children[new_nodes]
            starts = slots + np.concatenate([[0], np.cumsum(new_sizes)[:-1]]).astype(np.int64)
            seats.append(seat[new_nodes])
            sizes.append(new_sizes)
            hands.append(held[first])
            layers_of.append(np.full(len(new_nodes), len(self.layers), np.int64))
            representatives.append(new_nodes)
            slot_actions.append(np.nonzero(game.mask[new_nodes])[1].astype(np.int64))
            observations.append(game.obs[new_nodes].copy())
            masks.append(game.mask[new_nodes].astype(bool))
            # Each node's children take its information set's slots, in the order of its legal actions.
            slot_of_node = np.zeros(n, np.int64)
            slot_of_node[live] = starts[local]
            child_slot = np.repeat(slot_of_node, num_children) + (
                np.arange(len(parents)) - np.repeat(np.cumsum(num_children) - num_children, num_children))
            first_child = np.concatenate([[0], np.cumsum(num_children)[:-1]]).astype(np.int64)
            self.layers.append(Layer(seat, infoset, first_child, num_children, utility, child_slot))
            infosets += len(new_nodes)
            slots += int(new_sizes.sum())
            if progress is not None:
                progress(n)
            if not len(parents):
                break
            public = first_occurrence_ids(np.stack([public[parents], actions.astype(np.int64)], axis=1))
            game = game.children(parents, actions)
        self.num_histories = histories
        self.infoset_seat = np.concatenate(seats)
        self.infoset_size = np.concatenate(sizes)
        self.infoset_layer = np.concatenate(layers_of)
        self._infoset_hand = np.concatenate(hands)
        self._infoset_node = np.concatenate(representatives)
        self.slot_start = np.concatenate([[0], np.cumsum(self.infoset_size)[:-1]]).astype(np.int64)
        self.slot_action = np.concatenate(slot_actions)
        self.slot_infoset = np.repeat(np.arange(infosets), self.infoset_size)
        self.observations = np.concatenate(observations).reshape(infosets, self.encoder.size)
        self.masks = np.concatenate(masks).reshape(infosets, self.actions.size)

    @property
    def infoset_keys(self) -> list[tuple]:
        """Per information set: (seat, ranks held, ranks first laid on the table, action indices so far),
        read back from one of its histories."""
        ranks = np.arange(NUM_RANK_SLOTS)
        keys = []
        for infoset in range(self.num_infosets):
            depth, node = int(self.infoset_layer[infoset]), int(self._infoset_node[infoset])
            history = []
            for layer in reversed(self.layers[:depth]):
                history.append(int(self.slot_action[layer.child_slot[node]]))
                node = int(layer.parent_of_child[node])
            keys.append((int(self.infoset_seat[infoset]), tuple(np.repeat(ranks, self._infoset_hand[infoset]).tolist()),
                         tuple(np.repeat(ranks, self._first_tables[node]).tolist()), tuple(reversed(history))))
        return keys

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


@numba.njit(cache=True, nogil=True)
def _first_occurrence_ids(rows, ids, first):
    """Fill ``ids[i]`` with row ``i``'s number among the distinct rows of int64[N, k] (in order of first
    occurrence) and ``first[j]`` with distinct row ``j``'s first index; return the number of distinct rows.
    An open-addressing hash table of row indices, every hit compared in full."""
    n, width = rows.shape
    capacity = 1
    while capacity < 2 * n:
        capacity *= 2
    table = np.full(capacity, -1, np.int64)
    distinct = 0
    for i in range(n):
        value = np.uint64(0xCBF29CE484222325)
        for c in range(width):
            value = (value ^ np.uint64(rows[i, c])) * np.uint64(0x100000001B3)
        bucket = np.int64(value & np.uint64(capacity - 1))
        while True:
            j = table[bucket]
            if j < 0:
                table[bucket] = distinct
                first[distinct] = i
                ids[i] = distinct
                distinct += 1
                break
            same = True
            for c in range(width):
                if rows[first[j], c] != rows[i, c]:
                    same = False
                    break
            if same:
                ids[i] = j
                break
            bucket = (bucket + 1) & (capacity - 1)
    return distinct


def first_occurrence_ids(rows: np.ndarray, return_first: bool = False):
    """int64[N]: each row's number among the distinct rows of ``rows`` (integers [N, k]), numbered in the
    order they first occur; with ``return_first``, also the index of each distinct row's first occurrence."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    ids = np.empty(len(rows), np.int64)
    first = np.empty(len(rows), np.int64)
    distinct = _first_occurrence_ids(rows, ids, first)
    return (ids, first[:distinct]) if return_first else ids


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
