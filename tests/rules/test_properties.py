"""Property-based tests over random configs and random legal play."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import apply_move, is_terminal, legal_moves, new_game
from tests.reference.engine import card_total
from rouba_env.rules.scoring import scores
from tests.strategies import preset_configs

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(config=preset_configs(), seed=st.integers(0, 2**32 - 1), max_extra=st.integers(0, 2))
def test_random_play_invariants(config: RulesConfig, seed: int, max_extra: int):
    rng = np.random.default_rng(seed)
    max_players = min(8, config.num_players + max_extra)
    actions = ActionEncoding(config, max_players)
    state = new_game(config, rng)
    step_limit = config.total_cards + 1
    for _ in range(step_limit):
        if is_terminal(state):
            break
        assert card_total(state) == config.total_cards, "no card is created or lost"
        moves = legal_moves(state)
        assert moves, "a live game always has a legal move"
        mask = actions.mask(state, state.current)
        assert set(np.flatnonzero(mask)) == {actions.encode(m) for m in moves}, "mask equals the legal set"
        for seat in range(config.num_players):
            if seat != state.current:
                assert not actions.mask(state, seat).any(), "no legal action off turn"
        state = apply_move(state, moves[rng.integers(len(moves))])
    assert is_terminal(state), "every game ends"
    assert card_total(state) == config.total_cards
    assert sum(scores(state)) + len(state.table_cards) == config.total_cards, "scores add up"
    assert not any(state.hands) and not state.deck
    if config.leftovers_to_last_capturer and state.last_capturer >= 0:
        assert state.table_cards == []


@SETTINGS
@given(config=preset_configs(), seed=st.integers(0, 2**32 - 1))
def test_encode_decode_round_trip(config, seed):
    actions = ActionEncoding(config)
    state = new_game(config, np.random.default_rng(seed))
    for move in legal_moves(state):
        assert actions.decode(actions.encode(move)) == move
