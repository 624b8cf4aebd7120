"""The ``search`` player: network look-ahead on determinizations, batched on the batched engine."""

import numpy as np
import pytest

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.players.checkpoint import write_checkpoint
from rouba_env.players.network import load_policy
from rouba_env.players.registry import make_policy
from rouba_env.players.scripted import HeuristicPolicy
from rouba_env.players.search import SearchPolicy
from rouba_env.beliefs import HiddenCardSampler
from rouba_env.rules import scoring
from tests.reference import engine
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, preset
from rouba_env.rules.core import TARGET_TABLE
from tests.players.helpers import NEXT, action_of, complete_state, observe, random_position, random_tensors
from tests.rules.scenario import RANKS
from tests.strategies import seated_preset


def test_search_finds_the_winning_order_in_a_two_player_endgame():
    """Stealing the 38-card pile with Q now loses it to the opponent's last Q; capturing the 4 first wins."""
    config = RulesConfig()
    state = complete_state(config, hands=["Q 4", "Q"], table="4", tops=["5", "Q"], sizes=[10, 38])
    obs, mask = observe(state)
    search = SearchPolicy(config, samples=4)
    assert search.act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["4"], TARGET_TABLE)


def test_search_steals_the_winning_pile_when_the_game_ends_within_its_horizon():
    """Three players (no exact search): the last 7 takes one table card or the 30-card pile, whatever the network says."""
    config = RulesConfig(num_players=3)
    state = complete_state(config, hands=["7", "2", "3"], table="7 A", tops=["5", "7", "K"], sizes=[5, 30, 12])
    obs, mask = observe(state)
    search = SearchPolicy(config, policy="mixed", samples=2, max_moves=2, depth=1, z=0)
    legal = np.array([action_of(config, RANKS["7"], TARGET_TABLE), action_of(config, RANKS["7"], NEXT)])
    values = search.move_values(obs, legal, np.random.default_rng(0))
    # Every line ends within the horizon, so both columns are final margin rewards, the same on each sample.
    np.testing.assert_allclose(values, [[(7 - 21) / 52, (36 - 6) / 52]] * 2, rtol=1e-6)
    assert search.act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["7"], NEXT)


# (depth, checkpoint, leaf value): the value head on 0.3.0's 2p, the privileged critic on today's.
LEAF_SETTINGS = [(0, "2p", "head"), (1, "2p-0.3", "head"), (3, "2p-0.3", "head"), (1, "2p", "privileged"),
                 (2, "2p", "privileged")]


@pytest.mark.parametrize("depth, checkpoint, value", LEAF_SETTINGS)
def test_batched_leaf_values_equal_one_candidate_at_a_time(depth, checkpoint, value):
    config = RulesConfig()
    search = SearchPolicy(config, policy=checkpoint, samples=5, depth=depth, value=value)
    rng = np.random.default_rng(4)
    checked = 0
    for turns in range(0, 30, 3):
        state = random_position(config, rng, turns)
        obs, mask = observe(state)
        legal = np.flatnonzero(mask)
        together = search.move_values(obs, legal, np.random.default_rng(9))
        alone = np.column_stack([search.move_values(obs, legal[[k]], np.random.default_rng(9))[:, 0]
                                 for k in range(legal.size)])
        np.testing.assert_allclose(together, alone, rtol=1e-6, atol=1e-6)
        checked += legal.size > 1
    assert checked >= 3


@pytest.mark.parametrize("depth, checkpoint, value", [(1, "2p-0.3", "head"), (1, "2p", "privileged"), (0, "2p", "head")])
def test_a_line_is_the_network_playing_on_to_its_leaf(depth, checkpoint, value):
    """One determinization replayed by hand on the reference engine: depth 1 stops at the searcher's next turn
    (scored by the value head, or by the privileged critic, which also reads the determinization's hidden
    cards), depth 0 plays to the end (scored by the final margin reward)."""
    config = RulesConfig()
    search = SearchPolicy(config, policy=checkpoint, samples=1, depth=depth, value=value)
    state = random_position(config, np.random.default_rng(3), 2)
    obs, mask = observe(state)
    move = int(np.flatnonzero(mask)[0])
    searched = search.move_values(obs, np.array([move]), np.random.default_rng(5))[0, 0]
    sample = HiddenCardSampler(config, obs).sample(np.random.default_rng(5))
    actions = ActionEncoding(config)
    sample = engine.apply_move(sample, actions.decode(move))
    network = load_policy(checkpoint, config)
    while not engine.is_terminal(sample) and not (depth == 1 and sample.current == state.current):
        sample = engine.apply_move(sample, actions.decode(network.act(*observe(sample), np.random.default_rng(0))))
    if depth == 1 and value == "privileged":
        hidden = network.encoder.hidden(sample, sample.current)[None]
        expected = float(network.privileged_value.forward(observe(sample)[0][None], hidden)[0])
    elif depth == 1:
        expected = float(network.forward(observe(sample)[0][None])[1][0])
    else:
        expected = scoring.margin_rewards(scoring.scores(sample), config.total_cards)[state.current]
    assert searched == pytest.approx(expected, abs=1e-5)


def test_search_spec_options_are_checked():
    config = RulesConfig()
    search = make_policy("search:samples=3,depth=2,max_moves=4,z=0.5,policy=checkpoint:2p,value=privileged", config)
    assert (search.samples, search.depth, search.max_moves, search.z) == (3, 2, 4, 0.5)
    assert make_policy("search", config).policy == "2p"
    assert isinstance(make_policy("search:opponent=heuristic", config)._opponent_model, HeuristicPolicy)
    for spec, message in (("search:samples=0", "samples"), ("search:depth=-1", "depth"),
                          ("search:opponent=random", "opponent"),
                          ("search:samples=many", "not a valid int"), ("search:z=-1", "z must"),
                          ("search:rollout=heuristic", "no option"), ("search:policy=", "policy")):
        with pytest.raises(ValueError, match=message):
            make_policy(spec, config)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        make_policy("search:policy=no-such-net", config)
    with pytest.raises(ValueError, match="took the head's place: use value=privileged"):
        make_policy("search:depth=1", config)
    with pytest.raises(ValueError, match="trained with other rules"):
        make_policy("search", preset("jokers"))


@pytest.mark.parametrize("name", sorted(PRESET_FIELDS))
def test_search_never_plays_an_illegal_move(name, tmp_path):
    """Random positions of every preset at 2 and 3 seats, with a network made for that preset."""
    for num_players in (2, 3):
        config = seated_preset(name, num_players)
        write_checkpoint(tmp_path / f"{num_players}", random_tensors(config, num_players, (16,), seed=num_players),
                         config, max_players=num_players, hidden_sizes=(16,))
        search = make_policy(f"search:policy={tmp_path / str(num_players)},samples=2,depth=2", config)
        rng = np.random.default_rng(num_players)
        for turns in (0, 5, 11, 19, 30):
            state = random_position(config, rng, turns)
            if engine.is_terminal(state):
                continue
            obs, mask = observe(state)
            action = search.act(obs, mask, rng)
            assert mask[action] == 1, (name, num_players, turns, action)
