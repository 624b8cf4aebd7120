"""Compiled passes over a `rouba_env.solve.game_tree.GameTree`'s layers for CFR+: one loop per layer, no
temporaries the size of a layer beyond the reaches and values it keeps.

A layer's node ``p`` has ``num_children[p]`` children, consecutive in the next layer in the order of the
nodes above them; ``child_slot[c]`` is the strategy slot of the move that leads to child ``c``. Sums run
in node order, so a pass gives the same numbers on every run.
"""

from __future__ import annotations

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


@numba.njit(cache=True, nogil=True)
def reach_down(seat, num_children, child_slot, strategy, learner, others, own, next_others, next_own):
    """The next layer's reaches from this one's: ``others`` counts chance and the moves of the seats other than
    ``learner``, ``own`` chance and ``learner``'s moves."""
    child = 0
    for node in range(seat.shape[0]):
        for _ in range(num_children[node]):
            probability = strategy[child_slot[child]]
            if seat[node] == learner:
                next_others[child] = others[node]
                next_own[child] = own[node] * probability
            else:
                next_others[child] = others[node] * probability
                next_own[child] = own[node]
            child += 1


@numba.njit(cache=True, nogil=True)
def values_up(seat, num_children, child_slot, utility, strategy, learner, next_values, others, own, values,
              instant, weights):
    """``values``: each node's expected reward for ``learner`` under ``strategy`` (``utility``, float64[N]
    or empty where no node of the layer is terminal, plus its children's values weighed by their moves);
    at ``learner``'s nodes, each move's counterfactual regret added to ``instant`` and its own-reach
    weighted probability to ``weights`` (the average strategy's increments)."""
    child = 0
    for node in range(seat.shape[0]):
        first = child
        value = utility[node] if utility.shape[0] else 0.0
        for _ in range(num_children[node]):
            value += strategy[child_slot[child]] * next_values[child]
            child += 1
        values[node] = value
        if seat[node] == learner:
            for move in range(first, child):
                slot = child_slot[move]
                instant[slot] += others[node] * (next_values[move] - value)
                weights[slot] += own[node] * strategy[slot]


@numba.njit(cache=True, nogil=True)
def action_values_up(seat, num_children, child_slot, utility, strategy, learner, next_values, others, values,
                     totals, reaches):
    """``values`` as in `values_up`; at ``learner``'s nodes each move's value weighed by the others' reach
    added to ``totals`` and that reach to ``reaches`` (their ratio is the move's counterfactual action value)."""
    child = 0
    for node in range(seat.shape[0]):
        first = child
        value = utility[node] if utility.shape[0] else 0.0
        for _ in range(num_children[node]):
            value += strategy[child_slot[child]] * next_values[child]
            child += 1
        values[node] = value
        if seat[node] == learner:
            reach = others[node]
            for move in range(first, child):
                totals[child_slot[move]] += reach * next_values[move]
                reaches[child_slot[move]] += reach


@numba.njit(cache=True, nogil=True)
def best_response_up(seat, num_children, child_slot, utility, learner, next_values, others, first_infoset,
                     end_infoset, infoset_seat, slot_start, infoset_size, action_values, response, values):
    """One layer of ``learner``'s best response, from the end: each of its information sets in this layer
    (``first_infoset`` to ``end_infoset``) plays the action whose value, summed over the set's histories by
    the others' reach, is highest (the first on a tie), written into ``response`` (which holds the others'
    strategy elsewhere); then ``values``: each node's value for ``learner`` under ``response``."""
    if end_infoset > first_infoset:
        low = slot_start[first_infoset]
        high = slot_start[end_infoset - 1] + infoset_size[end_infoset - 1]
        action_values[low:high] = 0.0
    child = 0
    for node in range(seat.shape[0]):
        if seat[node] == learner:
            for move in range(child, child + num_children[node]):
                action_values[child_slot[move]] += others[node] * next_values[move]
        child += num_children[node]
    for infoset in range(first_infoset, end_infoset):
        if infoset_seat[infoset] != learner:
            continue
        start, size = slot_start[infoset], infoset_size[infoset]
        best = start
        for slot in range(start + 1, start + size):
            if action_values[slot] > action_values[best]:
                best = slot
        for slot in range(start, start + size):
            response[slot] = 0.0
        response[best] = 1.0
    child = 0
    for node in range(seat.shape[0]):
        value = utility[node] if utility.shape[0] else 0.0
        for _ in range(num_children[node]):
            value += response[child_slot[child]] * next_values[child]
            child += 1
        values[node] = value
