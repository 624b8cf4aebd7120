"""Move scoring (`rouba_env.players.move_values`) against values worked out by hand, and its use by the players."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.move_values import (
    ActionFeatures,
    all_entries,
    cards_taken,
    greedy_values,
    heuristic_values,
    match_probabilities,
    pick_best,
)
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy
from rouba_env.rules.config import RulesConfig, preset
from rouba_env.rules.core import TARGET_DISCARD, TARGET_TABLE
from tests.players.helpers import NEXT, SECOND, action_of
from tests.reference import engine as reference
from tests.rules.scenario import RANKS, make_state
from tests.strategies import SEEDS, any_rules

THREE_PLAYER_STEAL = dict(hands=["7 K 3", "4", "5"], table="3",
                          piles=["", "2 2 2 2 7", "9 9 9 A A A 8 8 Q Q K"], deck="")
"""Seat 0 can steal 11 cards with K, 5 cards with 7, or take the 3 from the table."""


def view_and_values(config, state, values):
    """(view of seat 0, features, values of the given scoring function for every action)."""
    encoder, encoding = ObservationEncoder(config), ActionEncoding(config)
    view = encoder.decode(encoder.encode(state, 0))
    features = ActionFeatures(encoding)
    rows, actions = all_entries(1, encoding.size)
    return view, features, values(view, features, config, rows=rows, actions=actions)


def test_cards_taken_by_a_steal_a_table_capture_and_a_discard():
    config = RulesConfig(num_players=3)
    state = make_state(config, **THREE_PLAYER_STEAL)
    view, features, _ = view_and_values(config, state, greedy_values)
    actions = np.array([action_of(config, RANKS["K"], SECOND), action_of(config, RANKS["7"], NEXT),
                        action_of(config, RANKS["3"], TARGET_TABLE), action_of(config, RANKS["7"], TARGET_DISCARD)])
    taken = cards_taken(view, features, config.take_all, rows=np.zeros(4, dtype=np.int64), actions=actions)
    assert taken.tolist() == [11, 5, 1, 0]


def test_take_all_takes_every_card_of_the_rank_and_the_table_jokers():
    config = preset("take_all", jokers=True)
    state = make_state(config, hands=["7", "4"], table="7 7 jk 2", piles=["", ""], deck="")
    view, features, _ = view_and_values(config, state, greedy_values)
    action = np.array([action_of(config, RANKS["7"], TARGET_TABLE)])
    assert cards_taken(view, features, config.take_all, rows=np.zeros(1, dtype=np.int64),
                       actions=action).tolist() == [3]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=any_rules(), seed=SEEDS)
def test_cards_taken_is_what_the_reference_moves_onto_the_pile(config, seed):
    """From the mover's view alone, every legal move's count is the reference engine's pile growth (the
    game's last move aside)."""
    rng = np.random.default_rng(seed)
    state = reference.new_game(config, rng)
    encoder, encoding = ObservationEncoder(config), ActionEncoding(config)
    features = ActionFeatures(encoding)
    while not reference.is_terminal(state):
        mover, legal = state.current, reference.legal_moves(state)
        view = encoder.decode(encoder.encode(state, mover))
        actions = np.array([encoding.encode(move) for move in legal])
        taken = cards_taken(view, features, config.take_all, rows=np.zeros(len(legal), dtype=np.int64), actions=actions)
        for move, count in zip(legal, taken):
            after = reference.apply_move(state, move)
            if reference.is_terminal(after):
                continue  # the end of the game may give the table's cards to the last capturer
            played_onto_pile = 0 if move.target == TARGET_DISCARD else 1
            assert count == len(after.piles[mover]) - len(state.piles[mover]) - played_onto_pile, move
        state = reference.apply_move(state, legal[rng.integers(len(legal))])


def test_greedy_values_are_cards_taken_plus_the_priority():
    config = RulesConfig(num_players=3)
    _, _, values = view_and_values(config, make_state(config, **THREE_PLAYER_STEAL), greedy_values)
    assert values[action_of(config, RANKS["K"], SECOND)] == pytest.approx(11 + 0.3)
    assert values[action_of(config, RANKS["7"], NEXT)] == pytest.approx(5 + 0.3)
    assert values[action_of(config, RANKS["3"], TARGET_TABLE)] == pytest.approx(1 + 0.2)


def test_match_probability_counts_the_unseen_cards():
    """Unseen: 32 cards (2 kings among them); the opponents hold 2: P(some K) = 1 - (30*29)/(32*31)."""
    config = RulesConfig(num_players=3)
    view, _, _ = view_and_values(config, make_state(config, **THREE_PLAYER_STEAL), greedy_values)
    p = match_probabilities(view, config)[0]
    assert p[RANKS["K"]] == pytest.approx(1 - 30 * 29 / (32 * 31))
    assert p[RANKS["2"]] == 0.0, "every 2 is seen"
    assert p[RANKS["4"]] == pytest.approx(1 - 28 * 27 / (32 * 31))
    assert p[-1] == 0.0, "an empty pile cannot be stolen"


def test_heuristic_value_of_a_steal():
    """K steals 11: gain 12 + 11/2; risk = 12 cards x P(some K) x (1 + 1/2)."""
    config = RulesConfig(num_players=3)
    _, _, values = view_and_values(config, make_state(config, **THREE_PLAYER_STEAL), heuristic_values)
    p_king = 1 - 30 * 29 / (32 * 31)
    assert values[action_of(config, RANKS["K"], SECOND)] == pytest.approx(12 + 11 / 2 - 12 * p_king * 1.5)


def test_heuristic_value_of_discards():
    """47 unseen cards, the opponent holds 2: a held pair earns the pair bonus, a lone card only pays exposure."""
    config = RulesConfig()
    state = make_state(config, hands=["5 5 J", "2 3"], table="A 2", piles=["", ""], deck="K K Q Q 7 7")
    _, _, values = view_and_values(config, state, heuristic_values)
    p_five = 1 - 45 * 44 / (47 * 46)
    p_jack = 1 - 44 * 43 / (47 * 46)
    assert values[action_of(config, RANKS["5"], TARGET_DISCARD)] == pytest.approx(-(2.0 * p_five - 1.5 * (1 - p_five)))
    assert values[action_of(config, RANKS["J"], TARGET_DISCARD)] == pytest.approx(-2.0 * p_jack)


def test_players_play_the_best_scored_move():
    config = RulesConfig(num_players=3)
    state = make_state(config, **THREE_PLAYER_STEAL)
    obs = ObservationEncoder(config).encode(state, 0)
    for policy, values in ((GreedyPolicy(config), greedy_values), (HeuristicPolicy(config), heuristic_values)):
        assert np.array_equal(policy.action_values(obs[None])[0], view_and_values(config, state, values)[2])


def test_pick_best_breaks_exact_ties_at_random_and_never_reorders():
    rows = np.array([0, 0, 0, 1, 1])
    actions = np.array([3, 5, 7, 2, 4])
    values = np.array([1.0, 2.0, 2.0, 0.5, 0.4])
    picks = {tuple(pick_best(values, rows, actions, batch=2, rng=np.random.default_rng(seed))) for seed in range(20)}
    assert picks == {(5, 2), (7, 2)}
