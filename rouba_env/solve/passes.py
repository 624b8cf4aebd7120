"""Compiled passes over a `rouba_env.solve.game_tree.GameTree`'s layers for CFR+: one loop per layer, no
temporaries the size of a layer beyond the reaches and values it keeps.

A layer's node ``p`` has ``num_children[p]`` children, consecutive in the next layer in the order of the
nodes above them; ``child_slot[c]`` is the strategy slot of the move that leads to child ``c``. Sums run
in node order, so a pass gives the same numbers on every run.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def regret_matching(regrets, slot_start, infoset_size, out):
    """``out``: each action in proportion to its positive regret in its information set (uniform where no
    regret is positive)."""
    for infoset in range(slot_start.shape[0]):
        start, size = slot_start[infoset], infoset_size[infoset]
        total = 0.0
        for slot in range(start, start + size):
            if regrets[slot] > 0.0:
                total += regrets[slot]
        for slot in range(start, start + size):
            if total > 0.0:
                out[slot] = regrets[slot] / total if regrets[slot] > 0.0 else 0.0
            else:
                out[slot] = 1.0 / size


class Links(NamedTuple):
    """One layer as a pass reads it, for one learner."""

    seat: np.ndarray
    """int8[N]: the seat to act at each node, or -1 at a terminal node."""
    num_children: np.ndarray
    """int16[N]: each node's children (consecutive in the next layer, in node order)."""
    child_slot: np.ndarray
    """int32[M]: for each child, the strategy slot of the move that leads to it."""
    utility: np.ndarray
    """float64[N]: the learner's final reward at each node, or empty where no node of the layer is terminal."""


class Reach(NamedTuple):
    """Each node's probability of being reached, split by whose moves it counts."""

    others: np.ndarray
    """float64[N]: chance and the moves of the seats other than the learner."""
    own: np.ndarray
    """float64[N]: chance and the learner's moves."""


class LayerValues(NamedTuple):
    """A pass's values from the end: the next layer's (read) and this layer's (written)."""

    below: np.ndarray
    """float64[M]: each child's value for the learner (empty under the last layer)."""
    here: np.ndarray
    """float64[N]: written: each node's value for the learner."""


class Increments(NamedTuple):
    """What one CFR+ pass adds up at the learner's nodes, per strategy slot."""

    regrets: np.ndarray
    """float64[slots]: each move's counterfactual regret."""
    weights: np.ndarray
    """float64[slots]: each move's probability weighed by the learner's own reach (the average's increment)."""


class ActionSums(NamedTuple):
    """What a pass of counterfactual action values adds up, per strategy slot."""

    totals: np.ndarray
    """float64[slots]: each move's value weighed by the others' reach."""
    reaches: np.ndarray
    """float64[slots]: the others' reach at the move's nodes."""


class LayerInfosets(NamedTuple):
    """The information sets a best response resolves in one layer, and where every set's actions lie."""

    seat: np.ndarray
    """int8/int64[I]: each information set's owner."""
    slot_start: np.ndarray
    """int64[I]: each set's first strategy slot."""
    size: np.ndarray
    """int64[I]: each set's number of actions."""
    first: int
    """The layer's first information set."""
    end: int
    """One past the layer's last information set."""


class Response(NamedTuple):
    """A best response's working arrays, per strategy slot."""

    action_values: np.ndarray
    """float64[slots]: scratch: each action's value summed over its set's histories by the others' reach."""
    strategy: np.ndarray
    """float64[slots]: the others' strategy, the learner's sets overwritten with its best response."""


@numba.njit(cache=True, nogil=True)
def reach_down(links, strategy, learner, above, below):
    """``below`` (a `Reach` of the next layer) from ``above`` (this layer's): each child's reaches are its
    parent's times the probability of the move that leads to it, counted in ``others`` or ``own``."""
    seat, num_children, child_slot = links.seat, links.num_children, links.child_slot
    child = 0
    for node in range(seat.shape[0]):
        for _ in range(num_children[node]):
            probability = strategy[child_slot[child]]
            if seat[node] == learner:
                below.others[child] = above.others[node]
                below.own[child] = above.own[node] * probability
            else:
                below.others[child] = above.others[node] * probability
                below.own[child] = above.own[node]
            child += 1


@numba.njit(cache=True, nogil=True)
def values_up(links, strategy, learner, values, reach, increments):
    """``values.here``: each node's expected reward for ``learner`` under ``strategy`` (its utility plus its
    children's values weighed by their moves); at ``learner``'s nodes, each move's counterfactual regret and
    its own-reach weighted probability added to ``increments`` (`Increments`)."""
    seat, num_children, child_slot, utility = links.seat, links.num_children, links.child_slot, links.utility
    next_values = values.below
    child = 0
    for node in range(seat.shape[0]):
        first = child
        value = utility[node] if utility.shape[0] else 0.0
        for _ in range(num_children[node]):
            value += strategy[child_slot[child]] * next_values[child]
            child += 1
        values.here[node] = value
        if seat[node] == learner:
            for move in range(first, child):
                slot = child_slot[move]
                increments.regrets[slot] += reach.others[node] * (next_values[move] - value)
                increments.weights[slot] += reach.own[node] * strategy[slot]


@numba.njit(cache=True, nogil=True)
def action_values_up(links, strategy, learner, values, others, sums):
    """``values`` as in `values_up`; at ``learner``'s nodes each move's value weighed by the others' reach
    (``others``) added to ``sums.totals`` and that reach to ``sums.reaches`` (their ratio is the move's
    counterfactual action value)."""
    seat, num_children, child_slot, utility = links.seat, links.num_children, links.child_slot, links.utility
    next_values = values.below
    child = 0
    for node in range(seat.shape[0]):
        first = child
        value = utility[node] if utility.shape[0] else 0.0
        for _ in range(num_children[node]):
            value += strategy[child_slot[child]] * next_values[child]
            child += 1
        values.here[node] = value
        if seat[node] == learner:
            reach = others[node]
            for move in range(first, child):
                sums.totals[child_slot[move]] += reach * next_values[move]
                sums.reaches[child_slot[move]] += reach


@numba.njit(cache=True, nogil=True)
def best_response_up(links, learner, values, others, infosets, response):
    """One layer of ``learner``'s best response, from the end: each of its information sets in this layer
    (`LayerInfosets` ``first`` to ``end``) plays the action whose value, summed over the set's histories by
    the others' reach, is highest (the first on a tie), written into ``response.strategy`` (which holds the
    others' strategy elsewhere); then ``values.here``: each node's value for ``learner`` under it."""
    seat, num_children, child_slot, utility = links.seat, links.num_children, links.child_slot, links.utility
    next_values, action_values, strategy = values.below, response.action_values, response.strategy
    slot_start, infoset_size = infosets.slot_start, infosets.size
    if infosets.end > infosets.first:
        low = slot_start[infosets.first]
        high = slot_start[infosets.end - 1] + infoset_size[infosets.end - 1]
        action_values[low:high] = 0.0
    child = 0
    for node in range(seat.shape[0]):
        if seat[node] == learner:
            for move in range(child, child + num_children[node]):
                action_values[child_slot[move]] += others[node] * next_values[move]
        child += num_children[node]
    for infoset in range(infosets.first, infosets.end):
        if infosets.seat[infoset] != learner:
            continue
        start, size = slot_start[infoset], infoset_size[infoset]
        best = start
        for slot in range(start + 1, start + size):
            if action_values[slot] > action_values[best]:
                best = slot
        for slot in range(start, start + size):
            strategy[slot] = 0.0
        strategy[best] = 1.0
    child = 0
    for node in range(seat.shape[0]):
        value = utility[node] if utility.shape[0] else 0.0
        for _ in range(num_children[node]):
            value += strategy[child_slot[child]] * next_values[child]
            child += 1
        values.here[node] = value
