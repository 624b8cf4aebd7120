"""`rouba_env.rules.engine.Position` (a game on the rules core) against the tests' independent card-level model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from rouba_env.rules import engine
from rouba_env.rules.config import preset
from rouba_env.rules.scoring import scores
from tests.reference import engine as reference
from tests.strategies import SEEDS, any_rules


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=any_rules(), seed=SEEDS)
def test_a_position_plays_as_the_reference_move_for_move(config, seed):
    rng = np.random.default_rng(seed)
    deal_seed = int(rng.integers(0, engine.DEAL_SEED_BOUND))
    expected = reference.start_game(config, deal_seed)
    position = engine.Position.deal(config, engine.shuffled_deck(config, deal_seed))
    assert position.state() == expected
    while not reference.is_terminal(expected):
        legal = position.legal_moves()
        assert legal == reference.legal_moves(expected)
        move = legal[rng.integers(len(legal))]
        child = position.child(move)
        assert position.state() == expected, "child() changed its parent"
        expected = reference.apply_move(expected, move)
        assert child.state() == expected
        assert child.points() == scores(expected)
        position = child
    assert engine.is_terminal(position) and position.legal_moves() == []


def test_a_loaded_state_and_its_position_are_independent():
    state = engine.start_game(preset("standard"), 3)
    position = engine.Position.of(state)
    move = position.legal_moves()[0]
    position.play(move)
    assert state == engine.start_game(preset("standard"), 3)
    assert position.state() == reference.apply_move(state, move)
    assert engine.apply_move(state, move) == position.state()


def test_a_state_that_does_not_fit_the_rules_is_refused_before_loading():
    state = engine.start_game(preset("standard"), 3)
    state.hands[0], state.deck = state.hands[0] + state.deck[:3], state.deck[3:]
    with pytest.raises(ValueError, match="hand holds 7 cards; under these rules it holds at most 4"):
        engine.Position.of(state)
    too_many = engine.start_game(preset("standard"), 3)
    too_many.deck = too_many.deck * 2
    with pytest.raises(ValueError, match="the state holds 92 cards; these rules deal 52"):
        engine.legal_moves(too_many)


def test_a_deck_must_be_an_order_of_the_rules_cards():
    config = preset("mini")
    deck = config.unshuffled_deck()
    with pytest.raises(ValueError, match="an order of these rules' 8 cards"):
        engine.deal_from_deck(config, deck[:-1])
    assert engine.deal_from_deck(config, deck) == reference.deal_from_deck(config, deck)
