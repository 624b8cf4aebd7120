"""The batched engine (`rouba_env.batched.game`) against the reference engine, step by step, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reference import engine
from rouba_env.rules import scoring
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.cards import JOKER
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, preset
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.batched.game import VectorGame
from rouba_env.rules.seeding import slot_deal_seed
from tests.reference import observation as reference
from tests.strategies import any_rules, seated_preset



def reward_fn_for(mode):
    return lambda state: scoring.final_rewards(mode, scoring.scores(state), state.config.total_cards)


def reference_actions(actions, state) -> list[int]:
    """The legal action indices of the card-level model (`engine.legal_moves`), increasing."""
    return [actions.encode(move) for move in engine.legal_moves(state)]


def _check_slot(games, state, i, encoder, actions):
    """The buffers for slot ``i`` describe reference ``state``."""
    seat = state.current if state.current >= 0 else 0
    obs = reference.observation(state, seat, encoder.max_players)
    mask = actions.mask_of(engine.legal_moves(state))  # the card-level model's legal moves
    for game in games:
        assert game.current[i] == state.current, (i)
        assert np.array_equal(game.obs[i], obs), (i, np.flatnonzero(game.obs[i] != obs))
        hidden = game.hidden(np.array([i]), np.array([seat]))[0]
        assert np.array_equal(hidden, reference.hidden(state, seat, encoder.max_players)), (i, "the hidden cards")
        assert game.mask[i].dtype == np.int8
        assert np.array_equal(game.mask[i], mask), (i, np.flatnonzero(game.mask[i]),
                                                   engine.legal_moves(state))
        if game.track_cards:  # every card where the reference has it, in its order
            assert game.position(i) == state, i


def _lockstep(config, batch_size=8, steps=200, seed=0, max_players=None, reward="outcome", auto_reset=True):
    """The batched engine and reference engine states, driven by the same random legal actions."""
    games = [VectorGame(config, batch_size, seed=seed, max_players=max_players, auto_reset=auto_reset,
                        reward=reward, track_cards=track) for track in (False, True)]
    encoder = ObservationEncoder(config, max_players)
    actions = ActionEncoding(config, max_players)
    reward_fn = reward_fn_for(reward)
    for game in games:
        game.reset()
        assert game.obs_size == encoder.size and game.num_actions == actions.size
        assert game.obs.shape == (batch_size, encoder.size) and game.obs.dtype == np.float32
        assert np.array_equal(game.deal_seeds, slot_deal_seed(seed, np.arange(batch_size), 0))
    states = [engine.start_game(config, int(s)) for s in games[0].deal_seeds]
    games_in_slot = np.zeros(batch_size, dtype=np.int64)
    rng = np.random.default_rng(seed)
    finished = 0
    for _ in range(steps):
        for i, state in enumerate(states):
            _check_slot(games, state, i, encoder, actions)
        chosen = np.array([rng.choice(reference_actions(actions, s)) if s.current >= 0 else -1 for s in states])
        for game in games:
            game.step(chosen)
        for i in range(batch_size):
            if states[i].current < 0:  # finished earlier, no auto-reset
                for game in games:
                    assert not game.done[i] and not game.rewards[i].any()
                continue
            states[i] = state = engine.apply_move(states[i], actions.decode(int(chosen[i])))
            over = engine.is_terminal(state)
            for game in games:
                assert game.done[i] == over
                if over:
                    assert game.final_scores[i].tolist() == scoring.scores(state)
                    assert np.array_equal(game.rewards[i], np.array(reward_fn(state), dtype=np.float64))
                else:
                    assert not game.rewards[i].any()
            if over:
                finished += 1
                if auto_reset:
                    games_in_slot[i] += 1
                    expected_seed = slot_deal_seed(seed, i, games_in_slot[i])
                    for game in games:
                        assert game.deal_seeds[i] == expected_seed
                    states[i] = engine.start_game(config, int(expected_seed))
        assert all(np.array_equal(game.deal_seeds, games[0].deal_seeds) for game in games)
    for i, state in enumerate(states):
        _check_slot(games, state, i, encoder, actions)
    return finished


PLAYER_COUNTS = (2, 3, 4, 5, 8)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("name", sorted(PRESET_FIELDS))
def test_presets_match_reference(name, num_players):
    config = seated_preset(name, num_players)
    steps = 220 if num_players < 5 else 260
    reward = {3: "margin", 4: "lead"}.get(num_players, "outcome")
    assert _lockstep(config, steps=steps, seed=num_players, reward=reward) >= 8


@pytest.mark.parametrize(
    "config, max_players",
    [
        (preset("standard"), 4),
        (preset("jokers", num_players=3, take_all=True), 8),
        (preset("draw_from_deck", num_players=2, jokers=True), 5),
        (preset("leftovers", num_players=4, must_capture=False, jokers=True), 6),
    ],
    ids=["standard-2in4", "jokers-take_all-3in8", "draw-jokers-2in5", "leftovers-free-jokers-4in6"],
)
def test_max_players_padding(config, max_players):
    assert _lockstep(config, steps=150, seed=7, max_players=max_players) >= 8


@pytest.mark.parametrize(
    "fields",
    [
        dict(num_players=3, dealer=0, hand_size=5, table_cards=0),  # uneven last deal, empty table
        dict(num_players=2, dealer=0, hand_size=10, table_cards=5, leftovers_to_last_capturer=True),
        dict(num_players=4, dealer=1, hand_size=6, table_cards=2, decks=2, take_all=True, jokers=True,
             leftovers_to_last_capturer=True),
        dict(num_players=5, dealer=2, decks=1, hand_size=3, table_cards=8, must_capture=False, jokers=True),
        dict(num_players=3, dealer=1, draw_from_deck=True, table_cards=1, jokers=True, take_all=True,
             leftovers_to_last_capturer=True, must_capture=False),
    ],
)
def test_non_default_rules(fields):
    _lockstep(RulesConfig(**fields), batch_size=6, steps=160, seed=11, reward="margin")


def test_without_auto_reset_finished_slots_stay_finished():
    config = preset("standard", num_players=2, table_cards=8, hand_size=8)
    finished = _lockstep(config, batch_size=5, steps=60, seed=3, auto_reset=False)
    assert finished == 5  # 44 cards are played in each game, so every slot ends once and stays over


def _random_states(config, count, seed):
    """Reference states at random points of random games, a few of them finished."""
    rng = np.random.default_rng(seed)
    states = []
    for k in range(count):
        state = engine.start_game(config, int(rng.integers(0, 2**63)))
        for _ in range(int(rng.integers(0, 60)) if k % 4 else 10_000):
            if engine.is_terminal(state):
                break
            moves = engine.legal_moves(state)
            state = engine.apply_move(state, moves[rng.integers(len(moves))])
        states.append(state)
    return states


@pytest.mark.parametrize(
    "config",
    [preset("standard"), preset("jokers", num_players=3, leftovers_to_last_capturer=True),
     preset("draw_from_deck", num_players=4), preset("take_all", num_players=5, jokers=True)],
    ids=["standard", "jokers-leftovers-3", "draw-4", "take_all-jokers-5"],
)
def test_from_states_matches_reference(config):
    states = _random_states(config, 8, seed=config.num_players)
    assert any(engine.is_terminal(s) for s in states) and not all(engine.is_terminal(s) for s in states)
    encoder, actions = ObservationEncoder(config, 6), ActionEncoding(config, 6)
    games = [VectorGame.from_states(config, states, max_players=6, track_cards=track) for track in (False, True)]
    assert all(not game.auto_reset for game in games)
    rng = np.random.default_rng(0)
    for _ in range(200):
        for i, state in enumerate(states):
            _check_slot(games, state, i, encoder, actions)
        if all(engine.is_terminal(s) for s in states):
            break
        # Finished slots accept any action: alternate 0 and -1.
        chosen = np.array([rng.choice(reference_actions(actions, s)) if s.current >= 0 else -(i % 2)
                           for i, s in enumerate(states)])
        for game in games:
            game.step(chosen)
        for i, state in enumerate(states):
            if state.current < 0:
                assert not any(game.done[i] for game in games)
                continue
            states[i] = state = engine.apply_move(state, actions.decode(int(chosen[i])))
            for game in games:
                assert game.done[i] == engine.is_terminal(state)
                if game.done[i]:
                    assert game.final_scores[i].tolist() == scoring.scores(state)
                    assert game.rewards[i].tolist() == scoring.outcome_rewards(scoring.scores(state))
    assert all(engine.is_terminal(s) for s in states)
    for game in games:
        assert not game.mask.any() and (game.current == -1).all()


def test_leftovers_top_rule():
    """engine._finish: leftovers under the last capturer's pile; an empty pile shows their highest natural rank."""
    config = RulesConfig(jokers=True, leftovers_to_last_capturer=True, must_capture=False)
    actions = ActionEncoding(config)
    base = dict(config=config, deck=[], current=0, last_capturer=1)
    states = [
        # Only a joker is left: it shows ace.
        engine.GameState(hands=[[JOKER], []], table_cards=[], piles=[[1, 2, 3], []], pile_tops=[0, -1], **base),
        # Naturals and a joker: the highest natural rank (10) shows.
        engine.GameState(hands=[[JOKER], []], table_cards=[5, 40, 13], piles=[[1, 2, 3], []], pile_tops=[0, -1], **base),
        # The last capturer's pile keeps its top.
        engine.GameState(hands=[[JOKER], []], table_cards=[5], piles=[[1], [8, 9]], pile_tops=[0, 2], **base),
    ]
    discard = actions.encode(engine.Move(engine.JOKER_KIND_OFFSET, engine.TARGET_DISCARD))
    game = VectorGame.from_states(config, states, track_cards=True)
    game.step(np.full(len(states), discard))
    for i, state in enumerate(states):
        final = engine.apply_move(state, actions.decode(discard))
        assert game.done[i] and game.final_scores[i].tolist() == scoring.scores(final)
        assert np.array_equal(game.obs[i], reference.observation(final, 0))
        assert game.position(i) == final  # the leftovers under the pile, jokers first, then by rank
    assert game.final_scores.tolist() == [[3, 1], [3, 4], [1, 4]]


def test_observe_and_random_actions():
    config = preset("jokers", num_players=4)
    game = VectorGame(config, 16, seed=5, max_players=5)
    game.reset()
    rng = np.random.default_rng(1)
    for _ in range(30):
        states = [engine.start_game(config, int(s)) for s in game.deal_seeds]  # only valid before the first move
        seats = rng.integers(0, 4, size=16)
        out = game.observe(seats)
        for i, state in enumerate(states):
            assert np.array_equal(out[i], reference.observation(state, int(seats[i]), 5))
        chosen = game.random_actions(rng)
        assert game.mask[np.arange(16), chosen].all()
        game.reset()


def test_illegal_action_raises_and_changes_nothing():
    game = VectorGame(preset("standard"), 4)
    game.reset()
    legal = np.array([np.flatnonzero(row)[0] for row in game.mask])
    illegal = np.flatnonzero(game.mask[1] == 0)[0]
    actions = legal.copy()
    actions[1] = illegal
    before = game.obs.copy(), game.mask.copy(), game.current.copy()
    with pytest.raises(ValueError, match=rf"illegal action {illegal} in slot 1 .*legal actions: \["):
        game.step(actions)
    for kept, now in zip(before, (game.obs, game.mask, game.current)):
        assert np.array_equal(kept, now)
    for bad in (-1, game.num_actions):
        actions[2] = bad
        with pytest.raises(ValueError, match="slot 1"):
            game.step(actions)
    with pytest.raises(ValueError, match="shape"):
        game.step(legal[:3])
    with pytest.raises(ValueError, match="integers"):
        game.step(legal.astype(np.float64))
    game.step(legal.astype(np.int32))  # any integer dtype is fine


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(batch_size=0), dict(batch_size=-3), dict(batch_size=2.5), dict(batch_size=True),
        dict(seed=-1), dict(seed="7"), dict(max_players=1), dict(max_players=9), dict(max_players=3.0),
        dict(reward="score"), dict(auto_reset="yes"), dict(config="standard"),
    ],
)
def test_bad_constructor_arguments(kwargs):
    args = dict(config=preset("standard", num_players=2), batch_size=4)
    args.update(kwargs)
    with pytest.raises(ValueError):
        VectorGame(**args)


def test_bad_from_states_and_step_before_reset():
    config = preset("standard")
    with pytest.raises(ValueError):
        VectorGame.from_states(config, [])
    with pytest.raises(ValueError, match="other rules"):
        VectorGame.from_states(config, [engine.start_game(preset("jokers"), 1)])
    with pytest.raises(RuntimeError, match="reset"):
        VectorGame(config, 2).step(np.zeros(2, dtype=np.int64))
    for seed in (-1, 2**63, 2**64):  # 2**64 would deal what 0 deals
        with pytest.raises(ValueError, match="seed"):
            VectorGame(config, 2, seed=seed)
        with pytest.raises(ValueError, match="seed"):
            VectorGame(config, 2).reset(seed=seed)
    fresh = VectorGame(config, 2)
    for read in (lambda: fresh.observe_slots([0], [0]), lambda: fresh.hidden([0], [1]), fresh.scores):
        with pytest.raises(RuntimeError, match=r"call reset\(\) \(or deal\(\)\) before"):
            read()
    with pytest.raises(ValueError, match=r"deal_seeds must be 1 integers .* got \[1.5\]"):
        fresh.deal([0], [1.5])
    fresh.deal([0], [7])
    assert fresh.scores().shape == (2, 2) and fresh.observe_slots([0], [0]).shape == (1, fresh.obs_size)
    both = fresh.observe_slots([0, 0], [0, 1])  # reading one slot from two seats
    assert np.array_equal(both[0], fresh.observe(np.zeros(2, np.int64))[0])
    assert np.array_equal(both[1], fresh.observe(np.ones(2, np.int64))[0])


def test_slot_deal_seed_is_pure_and_vectorised():
    slots, games = np.arange(6), np.arange(5)
    table = slot_deal_seed(12, slots[:, None], games[None, :])
    assert table.shape == (6, 5) and table.dtype == np.uint64
    assert (table < np.uint64(2**63)).all() and len(set(table.ravel().tolist())) == 30
    assert int(slot_deal_seed(12, 4, 3)) == int(table[4, 3])
    assert int(slot_deal_seed(13, 4, 3)) != int(table[4, 3])
    game = VectorGame(preset("standard"), 6, seed=12)
    game.reset()
    assert np.array_equal(game.deal_seeds, table[:, 0])
    game.reset()  # every started game counts
    assert np.array_equal(game.deal_seeds, table[:, 1])
    game.reset(seed=12)
    assert np.array_equal(game.deal_seeds, table[:, 0])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=any_rules(), seed=st.integers(0, 2**63 - 1), reward=st.sampled_from(["outcome", "margin", "lead"]))
def test_random_rules_match_reference(config, seed, reward):
    _lockstep(config, batch_size=3, steps=60, seed=seed, reward=reward)
