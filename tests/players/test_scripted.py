"""Scripted players: legality everywhere, maximal choices, their preferences in hand-built scenarios."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.expert import ExpertPolicy
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy
from tests.reference import engine
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import TARGET_DISCARD, TARGET_TABLE
from tests.players.helpers import CHEAP_EXPERT, SECOND, action_of, observe, play_checked
from tests.strategies import preset_configs
from tests.rules.scenario import RANKS, make_state

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(config=preset_configs(), seed=st.integers(0, 2**32 - 1))
def test_every_player_only_plays_legal_moves(config, seed):
    rotation = seed % 4
    specs = ["greedy", "heuristic", CHEAP_EXPERT, "random"]
    final = play_checked(config, specs[rotation:] + specs[:rotation], seed)
    assert engine.card_total(final) == config.total_cards


@SETTINGS
@given(config=preset_configs(), seed=st.integers(0, 2**32 - 1))
def test_batched_choices_are_legal_and_maximal(config, seed):
    """act_batch over many positions: a legal action of maximal value in every row."""
    rng = np.random.default_rng(seed)
    encoder, encoding = ObservationEncoder(config), ActionEncoding(config)
    observations, masks = [], []
    state = engine.new_game(config, rng)
    while not engine.is_terminal(state) and len(masks) < 24:
        observations.append(encoder.encode(state, state.current))
        masks.append(encoding.mask(state))
        moves = engine.legal_moves(state)
        state = engine.apply_move(state, moves[rng.integers(len(moves))])
    obs, mask = np.array(observations), np.array(masks)
    for policy in (GreedyPolicy(config), HeuristicPolicy(config)):
        chosen = policy.act_batch(obs, mask, rng)
        values = policy.action_values(obs)
        rows = np.arange(len(chosen))
        assert (mask[rows, chosen] == 1).all()
        best = np.where(mask.astype(bool), values, -np.inf).max(axis=1)
        assert np.allclose(values[rows, chosen], best, atol=0.01)


def test_padded_encoding_is_legal_too():
    config = RulesConfig(num_players=3)
    rng = np.random.default_rng(5)
    encoder, encoding = ObservationEncoder(config, 6), ActionEncoding(config, 6)
    players = [GreedyPolicy(config, 6), HeuristicPolicy(config, 6), ExpertPolicy(config, 6, samples=1, max_scale=1)]
    state = engine.new_game(config, rng)
    while not engine.is_terminal(state):
        action = players[state.current].act(encoder.encode(state, state.current), encoding.mask(state), rng)
        assert encoding.mask(state)[action] == 1
        state = engine.apply_move(state, encoding.decode(action))


# --- greedy ----------------------------------------------------------------


def test_greedy_steals_the_biggest_pile():
    config = RulesConfig(num_players=3)
    state = make_state(config, hands=["7 K 3", "4", "5"], table="3",
                       piles=["", "2 2 2 2 7", "9 9 9 A A A 8 8 Q Q K"], deck="")
    obs, mask = observe(state)
    policy = GreedyPolicy(config)
    for seed in range(5):
        assert policy.act(obs, mask, np.random.default_rng(seed)) == action_of(config, RANKS["K"], SECOND)


def test_greedy_prefers_a_capture_to_a_discard():
    config = RulesConfig()
    state = make_state(config, hands=["7 K", "4"], table="K 2", piles=["", ""], deck="5 6")
    obs, mask = observe(state)
    assert GreedyPolicy(config).act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["K"], TARGET_TABLE)


# --- heuristic -------------------------------------------------------------


def test_heuristic_covers_a_big_pile_with_a_dead_rank():
    """Both 8 and 9 capture one table card; every other 8 is seen, so 8 on top is safe."""
    config = RulesConfig()
    state = make_state(config, hands=["8 9", "2 3"], table="8 9",
                       piles=["8 8 4 4 4 5 5 5 6 6 6 10", "J"], deck="K K Q Q")
    obs, mask = observe(state)
    heuristic = HeuristicPolicy(config)
    values = heuristic.action_values(obs[None])[0]
    assert values[action_of(config, RANKS["8"], TARGET_TABLE)] > values[action_of(config, RANKS["9"], TARGET_TABLE)]
    for seed in range(5):
        assert heuristic.act(obs, mask, np.random.default_rng(seed)) == action_of(config, RANKS["8"], TARGET_TABLE)


def test_heuristic_steals_now():
    config = RulesConfig(num_players=3)
    state = make_state(config, hands=["7 K 3", "4", "5"], table="3",
                       piles=["", "2 2 2 2 7", "9 9 9 A A A 8 8 Q Q K"], deck="")
    obs, mask = observe(state)
    assert HeuristicPolicy(config).act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["K"], SECOND)


def test_heuristic_discards_a_rank_held_twice():
    """Nothing captures: of 5 5 J it leaves a 5 (it can take it back), not the lone jack."""
    config = RulesConfig()
    state = make_state(config, hands=["5 5 J", "2 3"], table="A 2", piles=["", ""], deck="K K Q Q 7 7")
    obs, mask = observe(state)
    assert HeuristicPolicy(config).act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["5"], TARGET_DISCARD)


def test_heuristic_beats_greedy_on_a_few_deals():
    from rouba_env.evaluation.duplicate import evaluate

    result = evaluate(["heuristic", "greedy"], games=60, seed=3)
    assert result.players[0].wins > result.players[1].wins
