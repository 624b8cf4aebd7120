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

from rouba_env.compiled import ensure_compiled
from rouba_env.batched.game import VectorGame
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.rules import scoring
from rouba_env.rules.cards import distinct_orders, rank_of, rank_orders
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import RANK_SLOTS as NUM_RANK_SLOTS

MAX_DEALS = 1_000_000
"""Distinct deck orders a tree may hold: ``medium`` has 369,600; the standard deck has about 10^48."""
MAX_HISTORIES = 40_000_000
"""Nodes a tree may hold before building stops (a clear error, not an exhausted memory): ``medium`` has
27,255,360, built in about 3.5 GB."""
NO_INFOSET = -1
NODES_AT_ONCE = 1 << 16
"""Positions expanded in one call of the rules core: the tree is built depth first in pieces of this many
nodes, so the positions held at once stay bounded whatever the tree's size."""


def check_solvable(rules: RulesConfig, max_deals: int = MAX_DEALS) -> int:
    """The number of deals of ``rules``; a ValueError if there are more than ``max_deals`` (too big to solve)."""
    orders = distinct_orders(Counter(rank_of(card) for card in rules.unshuffled_deck()))
    if orders > max_deals:
        raise ValueError(f"these rules deal {orders:.3g} distinct deck orders, more than the {max_deals:,} an exact "
                         f"solution can hold; use a small deck (rules mini, small or medium; mini3, mini4 or small3 "
                         f"at three and four seats; or fewer ranks and suits), or bound a player from below with "
                         f"rouba-exploitability --lbr")
    return orders


def is_solvable(rules: RulesConfig) -> bool:
    """Whether ``rules`` deal few enough distinct decks (`check_solvable`) to be solved exactly."""
    try:
        check_solvable(rules)
    except ValueError:
        return False
    return True


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
    """int8[N]: the seat to act, or -1 at a terminal node."""
    infoset: np.ndarray
    """int32[N]: the acting seat's information set, or `NO_INFOSET` at a terminal node."""
    first_child: np.ndarray
    """int64[N]: index of the first child in the next layer (children follow in the infoset's action order)."""
    num_children: np.ndarray
    """int16[N]: legal moves (0 at a terminal node)."""
    utility: np.ndarray
    """float64[N, n]: every seat's final reward at a terminal node (zero elsewhere; a read-only view of one
    row of zeros where the layer has no terminal node)."""
    child_slot: np.ndarray
    """int32[M]: for each node of the next layer, the strategy slot of the move that leads to it."""

    @property
    def size(self) -> int:
        return len(self.seat)

    @property
    def parent_of_child(self) -> np.ndarray:
        """int32[M]: for each node of the next layer, its parent's index here."""
        if self._parents is None:
            self._parents = np.repeat(np.arange(self.size, dtype=np.int32), self.num_children)
        return self._parents

    _parents: np.ndarray | None = field(default=None, init=False, repr=False)


class GameTree:
    """Every history of every deal of ``rules`` and its information sets (see the module's docstring).

    Information set ``I`` belongs to seat ``infoset_seat[I]`` and has ``infoset_size[I]`` legal
    actions, the project's action indices ``slot_action[slot_start[I]:][:infoset_size[I]]``; a
    strategy is one probability per such slot. ``observations[I]`` and ``masks[I]`` are what a
    `rouba_env.players.base.Policy` sitting in that seat is shown there.
    """

    def __init__(self, rules: RulesConfig, reward: str = scoring.ZERO_SUM_REWARD, *, max_deals: int = MAX_DEALS,
                 max_histories: int = MAX_HISTORIES, progress: Callable[[int], None] | None = None):
        self.rules = rules
        self.reward = scoring.check_reward_mode(reward)
        self.num_players = rules.num_players
        self.num_deals = check_solvable(rules, max_deals)
        """Distinct deals (orders of the ranks), each as likely as the others."""
        ensure_compiled()
        estimate = estimate_histories(rules)
        if estimate > ESTIMATE_MARGIN * max_histories:
            raise ValueError(f"the game tree of these rules has about {estimate:.2g} histories (estimated from "
                             f"{ESTIMATE_GAMES} random games), more than the {max_histories:,} it may hold; use a "
                             f"smaller deck (rules mini, small or medium)")
        self.deal_probability = 1.0 / self.num_deals
        """Each deal's probability."""
        self.actions = ActionEncoding(rules)
        self.encoder = ObservationEncoder(rules)
        self._build(max_histories, progress)

    def _build(self, max_histories: int, progress: Callable[[int], None] | None) -> None:
        """Every history, expanded depth first a piece at a time on the rules core; see `_expand`.

        Each node carries the number of its public history (the table first laid and the moves so far)
        within its layer; an information set is a (public history, seat, hand) triple, numbered in the
        order its layer first meets it. A layer's nodes are in the order of their parents, so a piece of
        a layer and all of its descendants are contiguous in every deeper layer: expanding the pieces
        one after another, depth first, lays every layer out as a whole-layer expansion would, with at
        most `NODES_AT_ONCE` positions held per depth.
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
        self.deal_cards = np.array(decks, dtype=np.int16)
        """int16[deals, cards]: each deal's deck, card codes in the order the rules core deals them
        (`VectorGame.deal_decks`): deal ``d`` is the root of every history below layer 0's node ``d``."""
        self._max_histories, self._progress = max_histories, progress
        self.num_histories = 0
        """Histories (nodes) of every deal, terminal ones included."""
        self._parts: list[dict[str, list[np.ndarray]]] = []
        self._utility: list[list[np.ndarray | None]] = []
        """Per layer, each piece's final rewards (None for a piece with no terminal node)."""
        self._public_numbers: list[RowNumbering] = []
        self._infoset_numbers: list[RowNumbering] = []
        first_laid = []
        for first in range(0, len(decks), NODES_AT_ONCE):
            piece = decks[first:first + NODES_AT_ONCE]
            game = VectorGame(rules, len(piece), auto_reset=False, reward=self.reward)
            game.deal_decks(np.arange(len(piece)), piece)
            first_laid.append(game.arrays.table_cards[: len(piece)].copy())
            self._expand(game, len(piece), first_laid[-1].astype(np.int64), 0)
        self._first_tables = np.concatenate(first_laid)
        self._assemble()

    def _numbering(self, depth: int) -> tuple[RowNumbering, RowNumbering]:
        if depth == len(self._parts):
            self._parts.append({name: [] for name in ("seat", "infoset", "num_children", "new_seat",
                                                      "new_size", "new_hand", "new_node", "new_actions",
                                                      "new_obs", "new_mask")})
            self._utility.append([])
            self._public_numbers.append(RowNumbering(2 if depth else NUM_RANK_SLOTS))
            self._infoset_numbers.append(RowNumbering(2 + NUM_RANK_SLOTS))
        return self._public_numbers[depth], self._infoset_numbers[depth]

    def _expand(self, game: VectorGame, n: int, public_rows: np.ndarray, depth: int) -> None:
        """Record the ``n`` nodes of ``game`` (a piece of layer ``depth``, its public histories' rows), then
        expand their children, `NODES_AT_ONCE` at a time and each piece to the end before the next."""
        self.num_histories += n
        if self.num_histories > self._max_histories:
            raise ValueError(f"the game tree of these rules has more than {self._max_histories:,} histories; "
                             f"use a smaller deck (rules mini, small or medium)")
        publics, infosets = self._numbering(depth)
        parts = self._parts[depth]
        offset = sum(len(seat) for seat in parts["seat"])  # this piece's first node in its layer
        public = publics(public_rows)
        seat = game.current[:n].astype(np.int64)
        live = np.flatnonzero(seat >= 0)
        parents, actions = np.nonzero(game.mask[:n])
        num_children = np.bincount(parents, minlength=n).astype(np.int64)
        held = game.arrays.hands[live, seat[live]].astype(np.int64)
        known = infosets.count
        local = infosets(np.concatenate([public[live, None], seat[live, None], held], axis=1))
        infoset = np.full(n, NO_INFOSET, np.int64)
        infoset[live] = local
        new = np.flatnonzero(local >= known)
        new = new[np.unique(local[new], return_index=True)[1]]  # each new information set's first node
        new_nodes = live[new]
        parts["seat"].append(seat.astype(np.int8))
        parts["infoset"].append(infoset.astype(np.int32))
        parts["num_children"].append(num_children.astype(np.int16))
        ended = seat < 0
        self._utility[depth].append(np.where(ended[:, None], game.rewards[:n], 0.0) if ended.any() else None)
        parts["new_seat"].append(seat[new_nodes])
        parts["new_size"].append(num_children[new_nodes])
        parts["new_hand"].append(held[new].astype(np.int8))
        parts["new_node"].append(offset + new_nodes)
        parts["new_actions"].append(np.nonzero(game.mask[new_nodes])[1].astype(np.int64))
        parts["new_obs"].append(game.obs[new_nodes].copy())
        parts["new_mask"].append(game.mask[new_nodes].astype(bool))
        if self._progress is not None:
            self._progress(n)
        if not len(parents):
            return
        child_public = np.stack([public[parents], actions.astype(np.int64)], axis=1)
        for start in range(0, len(parents), NODES_AT_ONCE):
            piece = slice(start, start + NODES_AT_ONCE)
            child = game.children(parents[piece], actions[piece])
            self._expand(child, len(child_public[piece]), child_public[piece], depth + 1)

    def _assemble(self) -> None:
        """The layers and the information sets' arrays from the recorded pieces: information set numbers
        made global (layer by layer), each node's children given its information set's slots."""
        parts = self._parts
        counts = [numbering.count for numbering in self._infoset_numbers]
        base = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)

        def joined(name: str, depth: int) -> np.ndarray:
            return np.concatenate(parts[depth][name])

        self.infoset_seat = np.concatenate([joined("new_seat", d) for d in range(len(parts))])
        self.infoset_size = np.concatenate([joined("new_size", d) for d in range(len(parts))])
        self.infoset_layer = np.repeat(np.arange(len(parts)), counts).astype(np.int64)
        self._infoset_hand = np.concatenate([joined("new_hand", d) for d in range(len(parts))])
        self._infoset_node = np.concatenate([joined("new_node", d) for d in range(len(parts))])
        self.slot_start = np.concatenate([[0], np.cumsum(self.infoset_size)[:-1]]).astype(np.int64)
        self.slot_action = np.concatenate([joined("new_actions", d) for d in range(len(parts))])
        self.slot_infoset = np.repeat(np.arange(len(self.infoset_seat)), self.infoset_size)
        self.observations = np.concatenate([joined("new_obs", d) for d in range(len(parts))]).reshape(
            -1, self.encoder.size)
        self.masks = np.concatenate([joined("new_mask", d) for d in range(len(parts))]).reshape(
            -1, self.actions.size)
        self.layers = []
        for depth in range(len(parts)):
            seat, infoset = joined("seat", depth), joined("infoset", depth)
            num_children = joined("num_children", depth)
            live = infoset >= 0
            infoset[live] += base[depth]
            slot_of_node = np.zeros(len(seat), np.int32)
            slot_of_node[live] = self.slot_start[infoset[live]]
            first_child = np.concatenate([[0], np.cumsum(num_children, dtype=np.int64)[:-1]]).astype(np.int64)
            child_slot = np.repeat(slot_of_node, num_children)
            child_slot += (np.arange(len(child_slot), dtype=np.int64)
                           - np.repeat(first_child, num_children)).astype(np.int32)
            pieces = self._utility[depth]
            if all(piece is None for piece in pieces):
                utility = np.broadcast_to(np.zeros((1, self.num_players)), (len(seat), self.num_players))
            else:
                utility = np.concatenate([np.zeros((len(rows), self.num_players)) if piece is None else piece
                                          for piece, rows in zip(pieces, parts[depth]["seat"])])
            self.layers.append(Layer(seat, infoset, first_child, num_children, utility, child_slot))
            parts[depth].clear()
        del self._parts, self._utility, self._public_numbers, self._infoset_numbers, self._progress

    def infoset_history(self, infoset: int) -> tuple[int, list[int]]:
        """(deal, actions): one history of ``infoset``, its deal (a row of `deal_cards`) and the action indices
        played from it."""
        depth, node = int(self.infoset_layer[infoset]), int(self._infoset_node[infoset])
        history = []
        for layer in reversed(self.layers[:depth]):
            history.append(int(self.slot_action[layer.child_slot[node]]))
            node = int(layer.parent_of_child[node])
        return node, history[::-1]

    @property
    def infoset_keys(self) -> list[tuple]:
        """Per information set: (seat, ranks held, ranks first laid on the table, action indices so far),
        read back from one of its histories."""
        ranks = np.arange(NUM_RANK_SLOTS)
        keys = []
        for infoset in range(self.num_infosets):
            deal, history = self.infoset_history(infoset)
            keys.append((int(self.infoset_seat[infoset]), tuple(np.repeat(ranks, self._infoset_hand[infoset]).tolist()),
                         tuple(np.repeat(ranks, self._first_tables[deal]).tolist()), tuple(history)))
        return keys

    @property
    def num_infosets(self) -> int:
        """Information sets of every seat together."""
        return len(self.infoset_seat)

    @property
    def num_slots(self) -> int:
        """Strategy slots: one per legal action of every information set (a strategy's length)."""
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
def _row_hash(rows, i):
    """An FNV-1a hash of row ``i`` of int64[N, k]."""
    value = np.uint64(0xCBF29CE484222325)
    for c in range(rows.shape[1]):
        value = (value ^ np.uint64(rows[i, c])) * np.uint64(0x100000001B3)
    return value


@numba.njit(cache=True, nogil=True)
def _number_rows(rows, buckets, known, count, ids):
    """Number each row of int64[N, k] by the distinct rows met so far (``known[:count]``, a new one
    appended with the next number); open-addressing hash ``buckets`` holding those numbers, every hit compared in
    full. Returns the new count."""
    mask = np.uint64(buckets.shape[0] - 1)
    for i in range(rows.shape[0]):
        bucket = _row_hash(rows, i) & mask
        while True:
            j = buckets[bucket]
            if j < 0:
                known[count] = rows[i]
                buckets[bucket] = count
                ids[i] = count
                count += 1
                break
            same = True
            for c in range(rows.shape[1]):
                if known[j, c] != rows[i, c]:
                    same = False
                    break
            if same:
                ids[i] = j
                break
            bucket = (bucket + np.uint64(1)) & mask
    return count


@numba.njit(cache=True, nogil=True)
def _rehash(known, count, buckets):
    mask = np.uint64(buckets.shape[0] - 1)
    for j in range(count):
        bucket = _row_hash(known, j) & mask
        while buckets[bucket] >= 0:
            bucket = (bucket + np.uint64(1)) & mask
        buckets[bucket] = j


class RowNumbering:
    """Numbers integer rows by the order they are first met, over many calls: the information sets and
    public histories of one layer, met a piece of the layer at a time."""

    def __init__(self, width: int):
        self.known = np.empty((1024, width), np.int64)
        self.buckets = np.full(2048, -1, np.int64)
        self.count = 0

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """int64[N]: each row's number (a row not met before gets the next one)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        needed = self.count + len(rows)
        if needed > len(self.known):
            grown = np.empty((max(needed, 2 * len(self.known)), self.known.shape[1]), np.int64)
            grown[: self.count] = self.known[: self.count]
            self.known = grown
        if 2 * needed > len(self.buckets):
            size = len(self.buckets)
            while size < 2 * needed:
                size *= 2
            self.buckets = np.full(size, -1, np.int64)
            _rehash(self.known, self.count, self.buckets)
        ids = np.empty(len(rows), np.int64)
        self.count = _number_rows(rows, self.buckets, self.known, self.count, ids)
        return ids


def solvable_tree(rules: RulesConfig, reward: str = scoring.ZERO_SUM_REWARD,
                  max_histories: int = MAX_HISTORIES) -> GameTree | None:
    """The game tree of ``rules`` (any number of seats) if it has at most ``max_histories`` histories, else
    None: for tools that measure NashConv where the deck allows it (the trainer's evaluations; `medium`'s tree
    takes about 40 s and 3 GB)."""
    try:
        return GameTree(rules, reward, max_histories=max_histories)
    except ValueError:
        return None
