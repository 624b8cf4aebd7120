"""The game tree, built a layer at a time on the rules core, against one built node by node on the reference."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.solve.game_tree import GameTree
from rouba_env.solve.exploitability import CFRPlus
from rouba_env.rules import scoring
from tests.reference import engine
from rouba_env.rules.cards import rank_of, rank_orders
from rouba_env.rules.config import RulesConfig, preset


def reference_tree(rules: RulesConfig, reward: str = scoring.ZERO_SUM_REWARD):
    """(infoset keys, observations, per-layer (seat, infoset, children, utility)) from the reference engine."""
    actions, encoder = ActionEncoding(rules), ObservationEncoder(rules)
    codes: dict[int, list[int]] = {}
    for card in rules.unshuffled_deck():
        codes.setdefault(rank_of(card), []).append(card)
    frontier = []
    for order in rank_orders({rank: len(cards) for rank, cards in codes.items()}):
        used: Counter[int] = Counter()
        deck = []
        for rank in order:
            deck.append(codes[rank][used[rank]])
            used[rank] += 1
        state = engine.deal_from_deck(rules, deck)
        frontier.append((state, tuple(sorted(rank_of(card) for card in state.table_cards)), ()))
    keys: dict[tuple, int] = {}
    observations, layers = [], []
    while frontier:
        seats, infosets, children_count, utility, children = [], [], [], [], []
        for state, table, history in frontier:
            if engine.is_terminal(state):
                seats.append(-1), infosets.append(-1), children_count.append(0)
                utility.append(scoring.final_rewards(reward, scoring.scores(state), rules.total_cards))
                continue
            mover = state.current
            key = (mover, tuple(sorted(rank_of(card) for card in state.hands[mover])), table, history)
            if key not in keys:
                keys[key] = len(keys)
                observations.append(encoder.encode(state, mover))
            legal = actions.legal_actions(state)
            seats.append(mover), infosets.append(keys[key]), children_count.append(len(legal))
            utility.append([0.0] * rules.num_players)
            for action in legal:
                children.append((engine.apply_move(state, actions.decode(action)), table, history + (action,)))
        layers.append((seats, infosets, children_count, utility))
        frontier = children
    return list(keys), np.array(observations, np.float32), layers


@pytest.mark.parametrize("rules", [preset("mini"), RulesConfig(ranks=3, suits=2, table_cards=2, hand_size=2,
                                                               jokers=False, must_capture=False)],
                         ids=["mini", "three-ranks-no-must-capture"])
def test_the_tree_is_the_reference_tree(rules):
    keys, observations, layers = reference_tree(rules)
    tree = GameTree(rules)
    assert tree.infoset_keys == keys
    assert np.array_equal(tree.observations, observations)
    assert len(tree.layers) == len(layers)
    for layer, (seats, infosets, children, utility) in zip(tree.layers, layers):
        assert layer.seat.tolist() == seats
        assert layer.infoset.tolist() == infosets
        assert layer.num_children.tolist() == children
        assert np.array_equal(layer.utility, np.array(utility))


def test_the_size_is_estimated_before_building():
    """Knuth's estimate lies near the exact count of the small trees, and a tree far past the bound is
    refused from the estimate, before any layer is built."""
    from rouba_env.solve.game_tree import estimate_histories

    for rules in (preset("mini"), preset("small")):
        assert abs(estimate_histories(rules) / GameTree(rules).num_histories - 1) < 0.1
    with pytest.raises(ValueError, match=r"about \d\.\de\+08 histories \(estimated from 1024 random games\), more "
                                         r"than the 40,000,000"):
        GameTree(RulesConfig(ranks=4, suits=3, hand_size=3, table_cards=0))


@pytest.mark.parametrize("rules", [preset("mini"), preset("small")], ids=["mini", "small"])
def test_a_tree_built_in_small_pieces_is_the_tree_built_at_once(rules, monkeypatch):
    """Depth first, a few nodes at a time, the layers, information sets and slots come out the same."""
    import rouba_env.solve.game_tree as game_tree

    whole = GameTree(rules)
    monkeypatch.setattr(game_tree, "NODES_AT_ONCE", 7)
    pieces = GameTree(rules)
    for name in ("infoset_seat", "infoset_size", "infoset_layer", "slot_start", "slot_action", "observations",
                 "masks"):
        assert np.array_equal(getattr(whole, name), getattr(pieces, name)), name
    assert pieces.num_histories == whole.num_histories and len(pieces.layers) == len(whole.layers)
    for a, b in zip(whole.layers, pieces.layers):
        for name in ("seat", "infoset", "first_child", "num_children", "utility", "child_slot"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert pieces.infoset_keys == whole.infoset_keys


MEDIUM_CFR_ITERATIONS, MEDIUM_CFR_NASH_CONV = 50, 0.005
"""CFR+ on ``medium`` reaches NashConv 0.0036 in 50 iterations (``docs/solving.md``); the test allows a margin."""


@pytest.mark.slow
def test_the_medium_tree_has_its_counts_and_cfr_plus_solves_it():
    """The research deck between small and the full game: its whole tree (about 40 s and 3 GB), then CFR+ in
    compiled passes (about 0.6 s an iteration) to below a stated NashConv."""
    tree = GameTree(preset("medium"))
    assert tree.summary() == {"deals": 369_600, "histories": 27_255_360, "information_sets": 674_784,
                              "information_sets_per_seat": [289_992, 384_792], "layers": 11}
    assert tree.num_slots == len(tree.slot_action) and tree.observations.shape == (674_784, tree.encoder.size)
    solver = CFRPlus(tree)
    for _ in range(MEDIUM_CFR_ITERATIONS - 1):
        solver.iterate(measure=False)
    assert solver.iterate() < MEDIUM_CFR_NASH_CONV
