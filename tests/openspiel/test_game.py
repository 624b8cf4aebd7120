"""The OpenSpiel game, tested the way OpenSpiel tests its Python games, and against the reference engine."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import rouba_env.openspiel as rouba_openspiel  # noqa: E402  (registers python_rouba_monte)
from rouba_env.encoding.actions import ActionEncoding  # noqa: E402
from rouba_env.encoding.observation import ObservationEncoder  # noqa: E402
from rouba_env.players.registry import make_policy  # noqa: E402
from rouba_env.rules import engine, scoring  # noqa: E402
from rouba_env.rules.cards import make_deck  # noqa: E402
from rouba_env.rules.config import make_rules  # noqa: E402
from rouba_env.rules.seeding import shuffled_deck  # noqa: E402

GAMES = [{"num_players": 2}, {"num_players": 3, "rules": "jokers"}, {"num_players": 4, "rules": "take_all"},
         {"num_players": 2, "rules": "draw_from_deck"}]


@pytest.mark.parametrize("params", GAMES, ids=lambda p: f"{p['num_players']}p-{p.get('rules', 'standard')}")
def test_random_simulations_through_the_pyspiel_api(params):
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def play_randomly(state, rng, stop_after=None):
    while not state.is_terminal() and (stop_after is None or len(state.history()) < stop_after):
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_serialization_and_cloning_keep_the_game():
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 3})
    state = play_randomly(game.new_initial_state(), np.random.default_rng(0), stop_after=70)
    clone = state.clone()
    assert clone.history() == state.history() and str(clone) == str(state)
    clone.apply_action(clone.legal_actions()[0])
    assert clone.history() != state.history(), "a clone is independent"
    _, restored = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert restored.history() == state.history() and restored.observation_tensor(1) == state.observation_tensor(1)
    end = play_randomly(state, np.random.default_rng(1))
    assert abs(sum(end.returns())) < 1e-9, "zero-sum at every table size"


@pytest.mark.parametrize("seed", [3, 17])
def test_a_seeded_game_agrees_with_the_reference_engine_move_for_move(seed):
    rules = make_rules("standard", num_players=3)
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 3})
    state = game.new_initial_state()
    positions = {}
    for index, card in enumerate(make_deck(rules.decks, rules.jokers)):
        positions.setdefault(card, []).append(index)
    for card in shuffled_deck(rules, seed):  # chance chooses the reference engine's shuffle
        state.apply_action(positions[card].pop(0))
    reference = engine.start_game(rules, seed)
    encoder, actions = ObservationEncoder(rules), ActionEncoding(rules)
    rng = np.random.default_rng(seed)
    while not engine.is_terminal(reference):
        assert state.current_player() == reference.current
        assert state.legal_actions() == sorted(actions.legal_actions(reference))
        for seat in range(3):
            np.testing.assert_array_equal(state.observation_tensor(seat), encoder.encode(reference, seat))
        action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
        engine.play_move(reference, actions.decode(action))
    assert state.is_terminal()
    assert state.returns() == scoring.final_rewards("margin", scoring.scores(reference), rules.total_cards)


def test_resampled_states_are_consistent_with_what_the_player_saw():
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 2})
    state = play_randomly(game.new_initial_state(), np.random.default_rng(5), stop_after=64)
    player = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    worlds = [state.resample_from_infostate(player, sampler) for _ in range(5)]
    for world in worlds:
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.observation_tensor(player) == state.observation_tensor(player)
        assert world.legal_actions() == state.legal_actions()
    assert len({str(world.engine_state.hands[1 - player]) for world in worlds}) > 1, "hidden cards are drawn"


@pytest.mark.parametrize("bot", ["ismcts", "mcts"])
def test_openspiel_bots_play_whole_games_as_project_players(bot):
    import rouba_env

    result = rouba_env.evaluate([f"openspiel:{bot},simulations=8", "random"], games=2, seed=0)
    assert result.games == 2
    with pytest.raises(ValueError, match="openspiel players are"):
        make_policy("openspiel:alphazero", make_rules("standard"))
    with pytest.raises(ValueError, match="simulations must be an int in 1..100000"):
        make_policy("openspiel:ismcts,simulations=0", make_rules("standard"))
