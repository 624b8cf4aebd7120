"""The expert: determinization, the exact endgame on the reference engine, the search, its options."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.beliefs import HiddenCardSampler, determinize
from rouba_env.players.base import ProbabilitiesOutOfReach
from rouba_env.players.expert import ExpertPolicy, seat_value, solve_two_player
from rouba_env.players.registry import make_policy
from rouba_env.players.scripted import GreedyPolicy
from rouba_env.rules import scoring
from tests.reference import engine
from rouba_env.rules.cards import JOKER_RANK, rank_of
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, preset
from rouba_env.rules.core import TARGET_TABLE
from tests.players.helpers import NEXT, action_of, complete_state, observe, random_position
from tests.strategies import preset_configs
from tests.rules.scenario import RANKS

# --- determinization -------------------------------------------------------


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=preset_configs(), seed=st.integers(0, 2**32 - 1), turns=st.integers(0, 60))
def test_determinization_is_consistent_with_the_observation(config, seed, turns):
    rng = np.random.default_rng(seed)
    state = random_position(config, rng, turns)
    if engine.is_terminal(state):
        return
    encoder = ObservationEncoder(config)
    seat = state.current
    obs = encoder.encode(state, seat)
    sampler = HiddenCardSampler(config, obs, encoder)
    full_deck = Counter(config.unshuffled_deck())
    own_ranks = Counter(rank_of(card) for card in state.hands[seat])
    seen = engine.seen_counts(state)
    for _ in range(3):
        sample = sampler.sample(rng)
        everything = [c for hand in sample.hands for c in hand] + sample.table_cards + sample.deck
        everything += [c for pile in sample.piles for c in pile]
        assert Counter(everything) == full_deck, "sampled hidden cards + known cards = the decks"
        assert Counter(rank_of(c) for c in sample.hands[seat]) == own_ranks
        hidden = [c for s, hand in enumerate(sample.hands) if s != seat for c in hand] + sample.deck
        hidden_ranks = Counter(rank_of(c) for c in hidden)
        for rank in range(JOKER_RANK + 1):
            assert hidden_ranks[rank] == full_deck_rank_count(config, rank) - own_ranks[rank] - seen[rank], \
                "only unseen cards are hidden"
        assert np.array_equal(encoder.encode(sample, seat), obs), "the sample looks the same from the seat"


def full_deck_rank_count(config, rank):
    return sum(1 for card in config.unshuffled_deck() if rank_of(card) == rank)


def test_determinization_gives_the_flipped_card_to_the_player_to_act():
    config = preset("draw_from_deck", num_players=3)
    rng = np.random.default_rng(4)
    state = random_position(config, rng, 7)
    observer = (state.current + 1) % 3
    obs = ObservationEncoder(config).encode(state, observer)
    flipped = [rank_of(card) for card in state.hands[state.current]]
    for _ in range(10):
        sample = determinize(config, obs, rng)
        assert [rank_of(card) for card in sample.hands[state.current]] == flipped


def test_determinization_never_gives_away_a_held_card():
    """The seat holds three kings and the fourth is on the table: no opponent may hold a king."""
    config = RulesConfig(num_players=3)
    state = complete_state(config, hands=["K K K 2", "3 4 5 6", "7 8 9 10"], table="K A",
                           tops=[None, None, None], sizes=[0, 0, 0], deck_size=38)
    obs, _ = observe(state)
    rng = np.random.default_rng(0)
    for _ in range(20):
        sample = determinize(config, obs, rng)
        for seat in (1, 2):
            assert RANKS["K"] not in {rank_of(c) for c in sample.hands[seat]}
        assert RANKS["K"] not in {rank_of(c) for c in sample.deck}
        assert [len(h) for h in sample.hands] == [4, 4, 4] and len(sample.deck) == 38


def test_determinization_rejects_an_impossible_observation():
    config = RulesConfig()
    state = complete_state(config, hands=["K", "3"], table="", tops=[None, None], sizes=[0, 0], deck_size=50)
    obs, _ = observe(state)
    obs = obs.copy()
    obs[ObservationEncoder(config).layout["hand"].start + RANKS["K"]] = 9
    with pytest.raises(ValueError, match="inconsistent"):
        determinize(config, obs, np.random.default_rng(0))


# --- exact endgame ---------------------------------------------------------


def brute_force_value(state, seat, margin_weight):
    """Plain minimax over every line of play on the reference engine (no pruning, no limit)."""
    if engine.is_terminal(state):
        return seat_value(scoring.scores(state), seat, margin_weight, state.config.total_cards)
    children = [brute_force_value(engine.apply_move(state, move), seat, margin_weight)
                for move in engine.legal_moves(state)]
    return max(children) if state.current == seat else min(children)


def small_endgames(max_cards_in_hands):
    """Two-player positions with an empty deck and few cards in hand, from random play on every preset."""
    rng = np.random.default_rng(11)
    for name in sorted(PRESET_FIELDS):
        config = preset(name)
        if config.draw_from_deck:
            continue
        for _ in range(3):
            state = engine.new_game(config, rng)
            while not engine.is_terminal(state) and (
                state.deck or sum(map(len, state.hands)) > max_cards_in_hands
            ):
                moves = engine.legal_moves(state)
                state = engine.apply_move(state, moves[rng.integers(len(moves))])
            if not engine.is_terminal(state):
                yield name, state


def test_endgame_solver_matches_brute_force_minimax():
    positions = list(small_endgames(max_cards_in_hands=5))
    assert len({name for name, _ in positions}) >= 5, "the positions must cover most presets"
    for name, state in positions:
        solved = solve_two_player(state, state.current, 0.5, node_limit=10**6)
        moves = engine.legal_moves(state)
        assert list(solved) == moves, "values for every legal move, in the engine's order"
        for move in moves:
            expected = brute_force_value(engine.apply_move(state, move), state.current, 0.5)
            assert solved[move] == pytest.approx(expected), (name, move)


def test_endgame_solver_gives_up_past_its_node_limit():
    name, state = next((n, s) for n, s in small_endgames(max_cards_in_hands=5) if len(engine.legal_moves(s)) > 1)
    assert solve_two_player(state, state.current, 0.5, node_limit=1) is None
    assert solve_two_player(state, state.current, 0.5, node_limit=10**6) is not None


def test_seat_value_is_the_outcome_plus_the_weighted_margin():
    assert seat_value([10, 30], 0, 0.5, 52) == pytest.approx(-1 + 0.5 * (10 - 30) / 52)
    assert seat_value([30, 10, 12], 0, 0.5, 52) == pytest.approx(1 + 0.5 * (30 - 11) / 52)
    assert seat_value([20, 20, 12], 1, 0.0, 52) == 0.0


# --- search ----------------------------------------------------------------


def test_expert_finds_the_winning_order_in_a_two_player_endgame():
    """Stealing the 38-card pile with Q now loses it to the opponent's last Q; capturing the 4 first wins."""
    config = RulesConfig()
    state = complete_state(config, hands=["Q 4", "Q"], table="4", tops=["5", "Q"], sizes=[10, 38])
    assert engine.card_total(state) == config.total_cards
    obs, mask = observe(state)
    expert = ExpertPolicy(config, samples=4)
    assert expert.act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["4"], TARGET_TABLE)
    assert GreedyPolicy(config).act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["Q"], NEXT)


def test_expert_steals_the_winning_pile_in_a_three_player_endgame():
    """Three players (sampling, no exact search): the last 7 takes one table card or the 30-card pile."""
    config = RulesConfig(num_players=3)
    state = complete_state(config, hands=["7", "2", "3"], table="7 A", tops=["5", "7", "K"], sizes=[5, 30, 12])
    obs, mask = observe(state)
    expert = ExpertPolicy(config, samples=4)
    assert expert.act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["7"], NEXT)


def test_rollouts_score_each_move_on_each_determinization():
    """After the 7 is played the opponents' last cards can only be discarded: every rollout's end is known."""
    config = RulesConfig(num_players=3)
    state = complete_state(config, hands=["7", "2", "3"], table="7 A", tops=["5", "7", "K"], sizes=[5, 30, 12])
    obs, mask = observe(state)
    expert = ExpertPolicy(config)
    legal = np.array([action_of(config, RANKS["7"], TARGET_TABLE), action_of(config, RANKS["7"], NEXT)])
    assert sorted(np.flatnonzero(mask)) == sorted(legal)
    rng = np.random.default_rng(0)
    sampler = HiddenCardSampler(config, obs)
    states = [sampler.sample(rng) for _ in range(3)]
    moves = [ActionEncoding(config).decode(int(action)) for action in legal]
    assert expert.rollout_scores(states, moves, rng) == [[[7, 30, 12], [36, 0, 12]]] * 3
    values = expert.sample_values(obs, legal, rng, samples=2)
    expected = [seat_value([7, 30, 12], 0, 0.5, 52), seat_value([36, 0, 12], 0, 0.5, 52)]
    assert values.tolist() == [expected, expected]


def test_expert_spec_options_are_checked():
    config = RulesConfig()
    assert make_policy("expert:samples=3", config).samples == 3
    with pytest.raises(ValueError, match="samples"):
        make_policy("expert:samples=0", config)
    with pytest.raises(ValueError, match="not a valid int"):
        make_policy("expert:samples=many", config)
    with pytest.raises(ValueError, match="no option"):
        make_policy("expert:depth=3", config)
    with pytest.raises(ValueError, match="no option"):
        make_policy("expert:backend=lean", config)
    with pytest.raises(ValueError, match="max_moves"):
        make_policy("expert:max_moves=0", config)
    with pytest.raises(ValueError, match="rollout"):
        make_policy("expert:rollout=random", config)
    with pytest.raises(ValueError, match="takes no option"):
        make_policy("greedy:fast=1", config)
    with pytest.raises(ValueError, match="rollout=policy needs a policy= network"):
        make_policy("expert:rollout=policy", config)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        make_policy("expert:policy=checkpoint:no-such-net", config)


@pytest.mark.parametrize("rollout", ["policy", "heuristic"])
def test_expert_with_a_network_anchors_on_the_networks_move(rollout):
    """With policy=, the network's best moves are the candidates and its favourite is kept unless the search disagrees."""
    config = RulesConfig()
    expert = make_policy(f"expert:policy=checkpoint:2p,samples=4,max_moves=2,z=1000,rollout={rollout}", config)
    network = make_policy("checkpoint:2p", config)
    assert expert.rollout == rollout
    rng = np.random.default_rng(2)
    state = engine.new_game(config, rng)
    while not engine.is_terminal(state):
        obs, mask = observe(state)
        action = expert.act(obs, mask, rng)
        if state.deck:  # with an empty deck the exact endgame search decides instead
            # z=1000: no move beats the anchor by that many standard errors, so the network's choice is played
            assert action == network.act(obs, mask, rng)
        state = engine.apply_move(state, ActionEncoding(config).decode(action))


def test_expert_searches_only_the_best_moves_with_many_jokers():
    config = preset("jokers", num_players=3)
    expert = ExpertPolicy(config, samples=2, max_moves=3)
    rng = np.random.default_rng(1)
    state = engine.new_game(config, rng)
    chosen = 0
    while not engine.is_terminal(state) and chosen < 10:
        obs, mask = observe(state)
        action = expert.act(obs, mask, rng)
        legal = np.flatnonzero(mask)
        prior = expert.prior.action_values(obs[None])[0, legal]
        assert action in legal[np.argsort(-prior, kind="stable")[:3]], "only the heuristic's 3 best are searched"
        state = engine.apply_move(state, ActionEncoding(config).decode(action))
        chosen += 1


# --- exact probabilities on small decks ---------------------------------------


def world_key(state):
    """A position as play and score see it: hands as sets of ranks, the deck in order, pile sizes and tops."""
    return (tuple(tuple(sorted(rank_of(card) for card in hand)) for hand in state.hands),
            tuple(rank_of(card) for card in state.deck), tuple(map(len, state.piles)), tuple(state.pile_tops),
            state.last_capturer)


def observed_position(config, observer_offset, seeds, wanted):
    """(observation, sampler kwargs) of the first random position whose sampler passes ``wanted``."""
    for seed in seeds:
        state = random_position(config, np.random.default_rng(seed), 3)
        if engine.is_terminal(state):
            continue
        obs = ObservationEncoder(config).encode(state, (state.current + observer_offset) % config.num_players)
        if wanted(HiddenCardSampler(config, obs, passed_steal=0.3)):
            return obs
    raise AssertionError("no such position")


@pytest.mark.parametrize("case", ["plain", "passed_steal", "flipped"])
def test_worlds_are_what_sample_draws_and_as_often(case):
    """Each world's chance is the frequency `sample` draws it with (suits and buried cards aside)."""
    config = preset("small")
    if case == "flipped":
        config = RulesConfig(**{**config.to_dict(), "draw_from_deck": True, "num_players": 3, "hand_size": 1})
    offset = 1 if case == "flipped" else 0
    wanted = {"plain": lambda s: True, "passed_steal": lambda s: s.unstolen.size > 0,
              "flipped": lambda s: s.flipped is not None}[case]
    obs = observed_position(config, offset, range(40), wanted)
    sampler = HiddenCardSampler(config, obs, passed_steal=0.3 if case == "passed_steal" else 1.0)
    chances = Counter()
    for chance, world in sampler.worlds():
        chances[world_key(world)] += chance
    assert sum(chances.values()) == pytest.approx(1.0) and len(chances) > 1
    draws = 6000
    rng = np.random.default_rng(2)
    drawn = Counter(world_key(sampler.sample(rng)) for _ in range(draws))
    assert set(drawn) <= set(chances), "sample draws only listed worlds"
    for key, chance in chances.items():
        assert abs(drawn[key] / draws - chance) <= 5 * np.sqrt(chance * (1 - chance) / draws), (key, chance)


def test_worlds_refuse_what_is_too_big_to_enumerate():
    from rouba_env.beliefs import WorldsOutOfReach

    config = RulesConfig()
    obs, _ = observe(engine.new_game(config, np.random.default_rng(0)))
    with pytest.raises(WorldsOutOfReach, match="orders of the hidden cards .* more than the 100,000"):
        HiddenCardSampler(config, obs).worlds()
    with pytest.raises(ProbabilitiesOutOfReach, match="expert: .* more than the 100,000"):
        ExpertPolicy(config).action_probabilities(obs[None, :], ActionEncoding(config).mask(
            engine.new_game(config, np.random.default_rng(0)))[None, :])


@pytest.mark.parametrize("spec", ["expert", "expert:samples=3,z=0.5", "expert:samples=2,rollout=greedy"])
def test_expert_probabilities_are_how_often_it_plays_each_move(spec):
    """On mini, exact probabilities against the frequencies of `act` at every set where the expert samples."""
    from rouba_env.solve.game_tree import GameTree

    rules = preset("mini")
    tree = GameTree(rules)
    expert = make_policy(spec, rules)
    exact = expert.action_probabilities(tree.observations, tree.masks)
    np.testing.assert_allclose(exact.sum(axis=1), 1.0)
    assert not exact[~tree.masks.astype(bool)].any()
    rng = np.random.default_rng(7)
    mixed = 0
    for infoset in range(tree.num_infosets):
        obs, mask = tree.observations[infoset], tree.masks[infoset]
        chances = exact[infoset]
        if chances.max() > 1 - 1e-9:
            assert expert.act(obs, mask, rng) == int(np.argmax(chances)), "a sure move is always played"
            continue
        mixed += 1
        plays = 250
        frequency = np.bincount([expert.act(obs, mask, rng) for _ in range(plays)], minlength=chances.size) / plays
        assert np.all(np.abs(frequency - chances) <= 5 * np.sqrt(chances * (1 - chances) / plays) + 1e-9), infoset
    assert mixed >= 1, "some information set where the expert's move is a gamble"


def test_compositions_are_every_split_once():
    from rouba_env.players.expert import EXACT_SPLITS, compositions

    splits = compositions(5, 3)
    assert len(splits) == 21 and len({tuple(row) for row in splits}) == 21 and (splits.sum(axis=1) == 5).all()
    assert (splits >= 0).all() and compositions(4, 1).tolist() == [[4]]
    with pytest.raises(ProbabilitiesOutOfReach, match=f"more than the {EXACT_SPLITS:,}"):
        compositions(200, 8)


@pytest.mark.parametrize("spec", ["expert", "search"])
def test_a_mask_from_another_position_is_refused_in_words(spec):
    """A mask marking a move the observed position does not allow is an error that says so, not the
    batched engine's complaint about a slot."""
    from rouba_env.players.registry import make_policy

    config = preset("standard")
    state = engine.start_game(config, 3)
    obs = ObservationEncoder(config).encode(state, state.current)
    mask = ActionEncoding(config).mask(state)
    player = make_policy(spec, config)
    assert mask[player.act(obs, mask, np.random.default_rng(0))]
    wrong = mask.copy()
    wrong[np.flatnonzero(mask == 0)[0]] = 1
    with pytest.raises(ValueError, match=f"{spec}: the mask marks action.* legal, but the position the "
                                         f"observation shows allows only"):
        player.act(obs, wrong, np.random.default_rng(0))
