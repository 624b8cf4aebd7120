"""The OpenSpiel game, tested the way OpenSpiel tests its Python games, and against the reference engine."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import rouba_env.openspiel as rouba_openspiel  # noqa: E402  (registers python_rouba_monte)
from rouba_env.encoding.actions import ActionEncoding  # noqa: E402
from rouba_env.encoding.observation import ObservationEncoder  # noqa: E402
from rouba_env.players.registry import make_policy  # noqa: E402
from rouba_env.rules import scoring  # noqa: E402
from tests.reference import engine  # noqa: E402
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
    for index, card in enumerate(rules.unshuffled_deck()):
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


def test_a_resampled_world_refuses_to_serialize_a_history_it_does_not_have():
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"rules": "small"})
    state = play_randomly(game.new_initial_state(), np.random.default_rng(1), stop_after=12)
    world = state.resample_from_infostate(state.current_player(), lambda: 0.5)
    following = world.clone()
    following.apply_action(following.legal_actions()[0])
    for drawn in (world, following):  # and every state that follows from one
        with pytest.raises(ValueError, match="drawn by resample_from_infostate: no deal leads to it"):
            drawn.serialize()
        with pytest.raises(ValueError, match="no deal leads to it"):
            rouba_openspiel.serialize_game_and_state(game, drawn)
    assert game.deserialize_state(state.serialize()).history() == state.history()


@pytest.mark.parametrize("bot", ["ismcts", "mcts"])
def test_openspiel_bots_play_whole_games_as_project_players(bot):
    import rouba_env

    result = rouba_env.evaluate([f"openspiel:{bot},simulations=8", "random"], games=2, seed=0)
    assert result.games == 2
    with pytest.raises(ValueError, match="openspiel players are"):
        make_policy("openspiel:alphazero", make_rules("standard"))
    with pytest.raises(ValueError, match="simulations must be an int in 1..100000"):
        make_policy("openspiel:ismcts,simulations=0", make_rules("standard"))


def test_a_serialized_state_is_its_action_history_replayed_through_the_rules(tmp_path):
    import base64
    import pickle

    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 3, "rules": "jokers"})
    state = play_randomly(game.new_initial_state(), np.random.default_rng(4), stop_after=90)
    text = state.serialize()
    assert text == "".join(f"{action}\n" for action in state.history())
    restored = game.deserialize_state(text)
    assert restored.history() == state.history() and str(restored) == str(state)
    assert restored.information_state_string(2) == state.information_state_string(2)
    again_game, again = rouba_openspiel.deserialize_game_and_state(rouba_openspiel.serialize_game_and_state(game, state))
    assert str(again_game) == str(game) and again.history() == state.history()

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (marker.touch, ())

    crafted = "history=\nmove_number=0\n__dict__=" + base64.b64encode(pickle.dumps({"x": Payload()})).decode()
    with pytest.raises(ValueError, match="line 1 of the serialized state is not an action index"):
        game.deserialize_state(crafted)
    with pytest.raises(ValueError, match="first line must be"):
        rouba_openspiel.deserialize_game_and_state(crafted)
    assert not marker.exists(), "nothing in a state string runs"
    with pytest.raises(ValueError, match="action 2 of the serialized state: chance outcome 0 is not legal"):
        game.deserialize_state("0\n0\n")
    with pytest.raises(ValueError, match="not legal for player"):
        game.deserialize_state(text + "99999\n")
    with pytest.raises(ValueError, match="must name python_rouba_monte"):
        rouba_openspiel.deserialize_game_and_state(f"{rouba_openspiel.GAME_AND_STATE_TAG}\ntic_tac_toe()\n")


def test_every_action_is_checked_against_the_legal_set():
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 2})
    state = game.new_initial_state()
    for bad in (52, 10**12, -2):  # -1 is OpenSpiel's own kInvalidAction, which it refuses itself
        with pytest.raises(ValueError, match="chance outcome .* is not legal"):
            state.apply_action(bad)
    state.apply_action(7)
    with pytest.raises(ValueError, match="chance outcome 7 is not legal"):
        state.apply_action(7)
    state = play_randomly(game.new_initial_state(), np.random.default_rng(2), stop_after=56)
    assert not state.is_chance_node()
    illegal = [a for a in range(game.num_distinct_actions()) if a not in state.legal_actions()]
    history = state.history()
    for action in illegal[:20]:
        with pytest.raises(ValueError, match=f"action {action} is not legal for player"):
            state.apply_action(action)
    assert state.history() == history, "a refused action changes nothing"
    end = play_randomly(state, np.random.default_rng(3))
    with pytest.raises(ValueError, match="the game is over"):
        end._apply_action(0)


@pytest.mark.parametrize("seat", [-1, -2, 2, 99, 1.0, True, "0"])
def test_every_observation_channel_refuses_a_seat_outside_the_table(seat):
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 2})
    state = play_randomly(game.new_initial_state(), np.random.default_rng(5), stop_after=60)
    for channel in (state.information_state_string, state.observation_string, state.information_state_tensor,
                    state.observation_tensor):
        with pytest.raises(ValueError, match=r"player must be a seat in 0..1"):
            channel(seat)
    with pytest.raises(ValueError, match=r"player must be a seat in 0..1"):
        state.resample_from_infostate(seat, lambda: 0.5)
    observer = game.make_py_observer()
    with pytest.raises(ValueError, match=r"player must be a seat in 0..1"):
        observer.string_from(state, seat)


def test_resampling_refuses_the_chance_node_and_a_bad_sampler():
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 2})
    with pytest.raises(ValueError, match="needs a dealt game"):
        game.new_initial_state().resample_from_infostate(0, lambda: 0.5)
    state = play_randomly(game.new_initial_state(), np.random.default_rng(6), stop_after=60)
    for draw in (-1, 1.0, float("nan"), "x", None):
        with pytest.raises(ValueError, match=r"probability_sampler\(\)"):
            state.resample_from_infostate(0, lambda draw=draw: draw)
    with pytest.raises(ValueError, match="no player is to act .a chance node."):
        game.new_initial_state().information_state_string()


def test_the_observer_honours_the_observation_type():
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 2})
    state = play_randomly(game.new_initial_state(), np.random.default_rng(8), stop_after=64)
    kinds = pyspiel.PrivateInfoType
    default = make_observation(game)
    default.set_from(state, 0)
    assert default.tensor.tolist() == state.observation_tensor(0)
    recall = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    recall.set_from(state, 0)
    assert recall.tensor.tolist() == state.information_state_tensor(0)
    assert recall.string_from(state, 0) == state.information_state_string(0)
    public = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False, private_info=kinds.NONE))
    public.set_from(state, 0)
    hand = ObservationEncoder(make_rules("standard", num_players=2)).layout["hand"]
    assert set(public.dict) == {"public"} and len(public.tensor) == len(state.observation_tensor(0)) - (
        hand.stop - hand.start)
    assert "no private cards" in public.string_from(state, 0)
    everyone = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False, public_info=False,
                                                                 private_info=kinds.ALL_PLAYERS))
    everyone.set_from(state, 0)
    assert set(everyone.dict) == {"private"} and everyone.tensor.sum() == sum(
        len(hand) for hand in state.engine_state.hands), "every hand, from the observer's point of view"


def test_action_texts_name_a_seat_of_the_table():
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"num_players": 2})
    state = play_randomly(game.new_initial_state(), np.random.default_rng(9), stop_after=60)
    action = state.legal_actions()[0]
    assert state.action_to_string(state.current_player(), action).startswith(f"p{state.current_player()} ")
    with pytest.raises(ValueError, match=r"player must be a seat in 0..1"):
        state.action_to_string(99, action)


def test_the_information_state_tensor_has_perfect_recall():
    """On `small`, over random play: equal information-state strings give equal tensors and different
    strings different tensors (the tensor is the string's content), at the size the game declares; and
    two histories with the same observation but different moves are told apart."""
    game = pyspiel.load_game(rouba_openspiel.GAME_NAME, {"rules": "small"})
    size = game.information_state_tensor_size()
    assert size > game.observation_tensor_size()
    rng = np.random.default_rng(0)
    tensor_of: dict[tuple[int, str], tuple] = {}
    string_of: dict[tuple[int, tuple], str] = {}
    same_observation_other_history = 0
    observations: dict[tuple[int, tuple], str] = {}
    for _ in range(120):
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
        while not state.is_terminal():
            for player in range(2):
                tensor = tuple(state.information_state_tensor(player))
                assert len(tensor) == size
                key = state.information_state_string(player)
                assert tensor_of.setdefault((player, key), tensor) == tensor
                assert string_of.setdefault((player, tensor), key) == key
                seen = observations.setdefault((player, tuple(state.observation_tensor(player))), key)
                same_observation_other_history += seen != key
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert len(tensor_of) > 500
    assert same_observation_other_history > 0, "the observation alone forgets: the tensor must not"
