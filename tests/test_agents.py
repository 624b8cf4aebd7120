"""Scripted agents: legality everywhere, their preferences in hand-built scenarios, the expert's sampling."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rouba_env.rules import engine
from rouba_env.rules import scoring
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.players.expert import ExpertPolicy, HiddenCardSampler, LeanGame, determinize
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy
from rouba_env.rules.cards import JOKER_RANK, make_deck, rank_of
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, preset
from rouba_env.rules.engine import TARGET_DISCARD, TARGET_PILE_OFFSET, TARGET_TABLE, Move
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.registry import make_policy
from tests.scenario import RANKS, make_state

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHEAP_EXPERT = "expert:samples=1,max_scale=1,backend=lean"
"""Smallest search: legality and plumbing, not strength."""
OWN, NEXT, SECOND = TARGET_PILE_OFFSET, TARGET_PILE_OFFSET + 1, TARGET_PILE_OFFSET + 2


@st.composite
def configs(draw):
    name = draw(st.sampled_from(sorted(PRESET_FIELDS)))
    base = preset(name, num_players=draw(st.integers(2, 8)))
    fields = {}
    if not base.draw_from_deck and draw(st.booleans()):
        fields["hand_size"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        fields["table_cards"] = draw(st.integers(0, 8))
    try:
        return base.replace(**fields)
    except ValueError:
        return base


def play_checked(config, specs, seed, check=None):
    """Play one game with ``specs`` cycled over the seats; assert every chosen action is in the mask."""
    rng = np.random.default_rng(seed)
    encoder, encoding = ObservationEncoder(config), ActionEncoding(config)
    players = [make_policy(specs[seat % len(specs)], config) for seat in range(config.num_players)]
    state = engine.new_game(config, rng)
    while not engine.is_terminal(state):
        obs, mask = encoder.encode(state, state.current), encoding.mask(state)
        if check:
            check(state, obs)
        action = players[state.current].act(obs, mask, rng)
        assert mask[action] == 1, f"{players[state.current].name} chose illegal action {action}"
        state = engine.apply_move(state, encoding.decode(action))  # the engine re-checks legality
    return state


@SETTINGS
@given(config=configs(), seed=st.integers(0, 2**32 - 1))
def test_every_agent_only_plays_legal_moves(config, seed):
    rotation = seed % 4
    specs = ["greedy", "heuristic", CHEAP_EXPERT, "random"]
    final = play_checked(config, specs[rotation:] + specs[:rotation], seed)
    assert engine.card_total(final) == config.total_cards


@SETTINGS
@given(config=configs(), seed=st.integers(0, 2**32 - 1))
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
        state = engine.apply_move(state, encoding.decode(action))


def test_lean_game_matches_the_engine():
    """The expert's rank-level rollout engine: same legal moves and same states as the reference."""
    rng = np.random.default_rng(0)
    for name in sorted(PRESET_FIELDS):
        for players in (2, 5):
            state = engine.new_game(preset(name, num_players=players), rng)
            lean = LeanGame.from_state(state)
            noise = rng.random(16).tolist()
            for turn in range(400):
                if engine.is_terminal(state):
                    break
                assert lean.legal_moves() == [tuple(m) for m in engine.legal_moves(state)]
                move = lean.heuristic_move(noise, turn) if turn % 2 else lean.greedy_move(noise, turn)
                state = engine.apply_move(state, Move(*move))
                lean.play(*move)
                reference = LeanGame.from_state(state)
                for field in ("hands", "table", "sizes", "tops", "deck", "current", "seen"):
                    assert getattr(lean, field) == getattr(reference, field), (name, field)
            assert lean.sizes == scoring.scores(state)


def observe(state, seat=None):
    config = state.config
    seat = state.current if seat is None else seat
    return ObservationEncoder(config).encode(state, seat), ActionEncoding(config).mask(state)


def action_of(config, kind, target):
    return ActionEncoding(config).encode(Move(kind, target))


def complete_state(config, hands, table, tops, sizes, deck_size=0):
    """A state holding exactly the decks' cards: the given hands and table, the rest in piles and deck.

    Pile ``s`` gets ``sizes[s]`` cards with rank ``tops[s]`` on top (None: empty pile).
    """
    pool = {}
    for card in make_deck(config.decks, config.jokers):
        pool.setdefault(rank_of(card), []).append(card)

    def take(rank):
        return pool[rank].pop()

    state_hands = [[take(RANKS[word]) for word in hand.split()] for hand in hands]
    state_table = [take(RANKS[word]) for word in table.split()]
    piles = [[take(RANKS[top])] if top else [] for top in tops]
    rest = [card for cards in pool.values() for card in cards]
    assert len(rest) == sum(sizes) - sum(1 for top in tops if top) + deck_size, "every card must be placed"
    for seat, size in enumerate(sizes):
        if tops[seat]:
            piles[seat] = rest[: size - 1] + piles[seat]
            rest = rest[size - 1 :]
    pile_tops = [RANKS[top] if top else engine.EMPTY_PILE for top in tops]
    return engine.GameState(config=config, hands=state_hands, table=state_table, piles=piles,
                            pile_tops=pile_tops, deck=rest, current=0, last_capturer=1)


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


# --- expert: determinization -----------------------------------------------


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(), seed=st.integers(0, 2**32 - 1), turns=st.integers(0, 60))
def test_determinization_is_consistent_with_the_observation(config, seed, turns):
    rng = np.random.default_rng(seed)
    state = engine.new_game(config, rng)
    for _ in range(turns):
        if engine.is_terminal(state):
            break
        moves = engine.legal_moves(state)
        state = engine.apply_move(state, moves[rng.integers(len(moves))])
    if engine.is_terminal(state):
        return
    encoder = ObservationEncoder(config)
    seat = state.current
    obs = encoder.encode(state, seat)
    sampler = HiddenCardSampler(config, obs, encoder)
    full_deck = Counter(make_deck(config.decks, config.jokers))
    own_ranks = Counter(rank_of(card) for card in state.hands[seat])
    seen = engine.seen_counts(state)
    for _ in range(3):
        sample = sampler.sample(rng)
        everything = [c for hand in sample.hands for c in hand] + sample.table + sample.deck
        everything += [c for pile in sample.piles for c in pile]
        assert Counter(everything) == full_deck, "sampled hidden cards + known cards = the decks"
        assert Counter(rank_of(c) for c in sample.hands[seat]) == own_ranks
        hidden = [c for s, hand in enumerate(sample.hands) if s != seat for c in hand] + sample.deck
        hidden_ranks = Counter(rank_of(c) for c in hidden)
        for rank in range(JOKER_RANK + 1):
            copies = full_deck_rank_count(config, rank)
            assert hidden_ranks[rank] == copies - own_ranks[rank] - seen[rank], "only unseen cards are hidden"
        assert np.array_equal(encoder.encode(sample, seat), obs), "the sample looks the same from the seat"


def full_deck_rank_count(config, rank):
    return sum(1 for card in make_deck(config.decks, config.jokers) if rank_of(card) == rank)


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
    state = make_state(config, hands=["K", "3"], table="", piles=["", ""], deck="4")
    obs, _ = observe(state)
    obs = obs.copy()
    obs[ObservationEncoder(config).layout["hand"].start + RANKS["K"]] = 9
    with pytest.raises(ValueError, match="inconsistent"):
        determinize(config, obs, np.random.default_rng(0))


# --- expert: search --------------------------------------------------------


def test_expert_finds_the_winning_order_in_a_two_player_endgame():
    """Stealing the 38-card pile with Q now loses it to the opponent's last Q; capturing the 4 first wins."""
    config = RulesConfig()
    state = complete_state(config, hands=["Q 4", "Q"], table="4", tops=["5", "Q"], sizes=[10, 38])
    assert engine.card_total(state) == config.total_cards
    obs, mask = observe(state)
    expert = ExpertPolicy(config, samples=4)
    assert expert.act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["4"], TARGET_TABLE)
    assert GreedyPolicy(config).act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["Q"], NEXT)


@pytest.mark.parametrize("backend", ["lean", "vector"])
def test_expert_steals_the_winning_pile_in_a_three_player_endgame(backend):
    """Three players (sampling, no exact search): the last 7 takes one table card or the 30-card pile."""
    pytest.importorskip("rouba_env.batched.game")
    config = RulesConfig(num_players=3)
    state = complete_state(config, hands=["7", "2", "3"], table="7 A", tops=["5", "7", "K"], sizes=[5, 30, 12])
    obs, mask = observe(state)
    expert = ExpertPolicy(config, samples=4, backend=backend)
    assert expert.act(obs, mask, np.random.default_rng(0)) == action_of(config, RANKS["7"], NEXT)


def test_expert_spec_options_are_checked():
    config = RulesConfig()
    assert make_policy("expert:samples=3", config).samples == 3
    with pytest.raises(ValueError, match="samples"):
        make_policy("expert:samples=0", config)
    with pytest.raises(ValueError, match="not a valid int"):
        make_policy("expert:samples=many", config)
    with pytest.raises(ValueError, match="no option"):
        make_policy("expert:depth=3", config)
    with pytest.raises(ValueError, match="max_moves"):
        make_policy("expert:max_moves=0", config)
    with pytest.raises(ValueError, match="rollout"):
        make_policy("expert:rollout=random", config)
    with pytest.raises(ValueError, match="takes no option"):
        make_policy("greedy:fast=1", config)


def test_expert_searches_only_the_best_moves_with_many_jokers():
    config = preset("jokers", num_players=3)
    expert = ExpertPolicy(config, samples=2, max_moves=3, backend="lean")
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
