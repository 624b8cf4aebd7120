"""The table at many games: the same games as one-game tables and as the oracle, one legality check, one illegal-action rule."""

import numpy as np
import pytest

from rouba_env.players.base import BasePolicy, RandomPolicy
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import preset
from rouba_env.rules.core import NO_SEAT
from rouba_env.streams import RowStreams
from rouba_env.table import IllegalActionWarning, IllegalPlayerAction
from rouba_env.single_game import SingleGame
from rouba_env.table import OPEN_SEAT, Table


class Always(BasePolicy):
    """Returns one fixed action, legal or not (a broken player)."""

    name = "always"
    plays_in_batch = True

    def __init__(self, rules, action):
        super().__init__(rules)
        self.action = action

    def act_batch(self, obs, mask, rng):
        return np.full(len(mask), self.action, dtype=np.int64)


@pytest.mark.parametrize("rules_name, num_players", [("standard", 2), ("jokers", 3), ("draw_from_deck", 4),
                                                     ("take_all", 2), ("leftovers", 3)])
def test_every_game_is_the_game_of_a_one_game_table(rules_name, num_players):
    rules = preset(rules_name, num_players=num_players)
    players = [make_policy(spec, rules) for spec in ("random", "greedy", "heuristic")]
    games = 24
    seatings = np.array([[(game + seat) % 3 for seat in range(num_players)] for game in range(games)])
    seeds = np.arange(games) * 7919 + 11
    table = Table(rules, games, players)
    table.seat(np.arange(games), seatings)
    table.start(np.arange(games), seeds)
    ended = table.play_seated(RowStreams([np.random.default_rng(game) for game in range(games)]))
    assert sorted(ended.tolist()) == list(range(games)) and table.over.all()
    for game in range(games):
        one = SingleGame(rules, seats=[players[p] for p in seatings[game]])
        one.start_deal(int(seeds[game]))
        one.play_seated(np.random.default_rng(game))
        assert table.scores([game])[0].tolist() == one.scores()
        np.testing.assert_array_equal(table.final_rewards([game])[0], one.final_rewards())


def test_seated_players_move_until_every_open_seat_must_act():
    rules = preset("standard", num_players=3)
    table = Table(rules, 6, [RandomPolicy(rules)])
    learner = np.array([0, 1, 2, 0, 1, 2])
    seats = np.zeros((6, 3), dtype=np.int64)
    seats[np.arange(6), learner] = OPEN_SEAT
    table.seat(np.arange(6), seats)
    table.start(np.arange(6), np.arange(6))
    rng = np.random.default_rng(0)
    while not table.over.all():
        table.play_seated(rng)
        live = np.flatnonzero(~table.over)
        assert (table.current[live] == learner[live]).all(), "only open seats are left to act"
        actions = np.array([np.flatnonzero(table.mask[slot])[0] for slot in live])
        table.play(live, actions)
    assert (table.current == NO_SEAT).all() and (table.player_to_act() == -2).all()


def test_a_broken_seated_player_is_named_with_its_slot_and_nothing_of_the_round_is_played():
    rules = preset("standard")
    table = Table(rules, 3, [RandomPolicy(rules), Always(rules, 10_000)])
    table.seat(np.arange(3), [[0, 0], [1, 0], [0, 1]])
    table.start(np.arange(3), [1, 2, 3])
    turns = table.game.turns.copy()
    with pytest.raises(IllegalPlayerAction, match=r"player <Always always> in seat 0 returned action 10000, which is "
                                                  r"not legal; legal actions: \[.*\] \(game slot 1\)"):
        table.play_seated(np.random.default_rng(0))
    np.testing.assert_array_equal(table.game.turns, turns)


def test_an_outside_callers_illegal_action_ends_only_its_game_or_raises():
    rules = preset("standard")
    table = Table(rules, 3)
    table.start(np.arange(3), [4, 5, 6])
    legal = [int(np.flatnonzero(table.mask[slot])[0]) for slot in range(3)]
    illegal = int(np.flatnonzero(table.mask[1] == 0)[0])
    with pytest.warns(IllegalActionWarning, match=rf"illegal action {illegal} for the caller in seat 0 of game slot 1 "
                                                  r"\(not a legal move now\).*offender gets illegal_reward"):
        ended = table.play(np.arange(3), [legal[0], illegal, legal[2]], who="the caller")
    assert ended.tolist() == [1] and table.over.tolist() == [False, True, False]
    assert table.offender.tolist() == [NO_SEAT, 0, NO_SEAT]
    assert table.final_rewards([1]).tolist() == [[-1.0, 0.0]]
    assert table.game.turns.tolist() == [1, 0, 1], "the illegal action played nothing; the others were played"

    strict = Table(rules, 2, illegal_action="raise")
    strict.start([0, 1], [4, 5])
    with pytest.raises(ValueError, match=r"illegal action 999 for the outside caller in seat 0 of game slot 1 "
                                         r"\(out of range 0..\d+\)"):
        strict.play([0, 1], [int(np.flatnonzero(strict.mask[0])[0]), 999])
    assert strict.game.turns.tolist() == [0, 0], "raise plays nothing at all"


def test_bad_calls_are_refused_before_anything_is_played():
    rules = preset("standard")
    with pytest.raises(ValueError, match="num_games"):
        Table(rules, 0)
    table = Table(rules, 2, [RandomPolicy(rules)])
    with pytest.raises(ValueError, match="player ids"):
        table.seat([0], [[0, 5]])
    with pytest.raises(ValueError, match="shape"):
        table.seat([0], [[0, 0, 0]])
    table.seat([0, 1], [[0, OPEN_SEAT], [0, OPEN_SEAT]])
    table.start([0, 1], [1, 2])
    with pytest.raises(ValueError, match="slot 0 has no open seat to act: seat 0 to act is held by"):
        table.play([0], [0])
    strict = Table(rules, 2, illegal_action="raise")
    strict.start([0, 1], [1, 2])
    for bad, reason in ((0.5, "not an integer action index"), (10**30, "out of range"), (-2**63, "out of range")):
        with pytest.raises(ValueError, match=rf"illegal action .* \({reason}"):
            strict.play([1], [bad])
    assert strict.game.turns.tolist() == [0, 0], "nothing was played"
    with pytest.raises(ValueError, match="must not repeat"):
        table.start([0, 0], [1, 2])
    with pytest.raises(ValueError, match=r"deal seeds must be in \[0, 2\*\*63\)"):
        table.start([0], [-1])
    with pytest.raises(ValueError, match="RowStreams of 1 rows for a batch of 2"):
        table.play_seated(RowStreams([np.random.default_rng(0)]))
    other = make_policy("random", preset("standard", num_players=3))
    with pytest.raises(ValueError, match=r"made for other rules than this table's: \{'num_players': 3\}"):
        table.add_player(other)


def test_row_streams_draw_what_each_generator_draws_alone():
    from rouba_env.streams import uniform_rows, uniform_runs

    streams = RowStreams([np.random.default_rng(seed) for seed in range(4)])
    rows = uniform_rows(streams, 4, 3)
    runs = uniform_runs(streams, np.array([0, 0, 2, 3, 3, 3]), 4)
    for seed in range(4):
        alone = np.random.default_rng(seed).random(10)
        np.testing.assert_array_equal(rows[seed], alone[:3])
    np.testing.assert_array_equal(runs, [*np.random.default_rng(0).random(5)[3:5],
                                         np.random.default_rng(2).random(4)[3],
                                         *np.random.default_rng(3).random(6)[3:6]])
    taken = RowStreams([np.random.default_rng(seed) for seed in range(4)]).take(np.array([3, 1]))
    np.testing.assert_array_equal(uniform_rows(taken, 2, 2), [np.random.default_rng(3).random(2),
                                                              np.random.default_rng(1).random(2)])
    mixed = RowStreams([np.random.default_rng(0), np.random.Generator(np.random.MT19937(0))])
    np.testing.assert_array_equal(uniform_rows(mixed, 2, 2)[1], np.random.Generator(np.random.MT19937(0)).random(2))


def test_a_player_made_for_other_rules_is_refused_by_both_tables():
    from rouba_env import SingleAgentEnv, preset
    from rouba_env.players.registry import make_policy

    two_decks = make_policy("heuristic", preset("standard", decks=2))
    with pytest.raises(ValueError, match=r"made for other rules than this table's: \{'decks': 2\} against \{'decks': 1\}"):
        Table(preset("standard"), 2, [two_decks])
    with pytest.raises(ValueError, match=r"\{'decks': 2\} against \{'decks': 1\}"):
        SingleGame(preset("standard")).seat([None, two_decks])
    with pytest.raises(ValueError, match=r"\{'jokers': False\} against \{'jokers': True\}"):
        SingleAgentEnv(rules="jokers", opponents=make_policy("checkpoint:2p", preset("standard"))).reset(seed=0)
    # who deals is no part of how a player reads the table
    Table(preset("standard"), 2, [make_policy("heuristic", preset("standard", dealer=0))])


def test_final_rewards_wait_for_the_end_of_the_game():
    table = Table(preset("standard"), 2, [RandomPolicy(preset("standard"))])
    with pytest.raises(ValueError, match=r"slots \[0, 1\] hold games still on \(or never dealt\)"):
        table.final_rewards([0, 1])


def test_a_vector_game_past_the_slot_cap_is_refused_before_any_allocation():
    from rouba_env.batched.game import MAX_GAMES, VectorGame
    from rouba_env.rules.config import preset as rules_preset

    with pytest.raises(ValueError, match=f"batch_size must be an int in 1..{MAX_GAMES}, got 1000000000000"):
        VectorGame(rules_preset("standard"), 10**12)


def test_a_player_without_a_batch_path_is_asked_row_by_row():
    rules = preset("mini")
    expert = make_policy("expert:samples=4", rules)
    table = Table(rules, 3, [expert, RandomPolicy(rules)])
    table.seat([0, 1, 2], [[0, 1]] * 3)
    table.start([0, 1, 2], [1, 2, 3])
    table.play_seated(np.random.default_rng(0))
    assert table.over.all() and (table.decisions[:, 0] > 0).all()


@pytest.mark.parametrize("rules_name, num_players", [("standard", 2), ("jokers", 3), ("take_all", 4)])
def test_one_game_and_many_play_the_oracles_games(rules_name, num_players):
    """Seated players' games at a table of many and of one, move by move against the independent card-level
    model (`tests.reference.engine`): every move legal there, the same final piles."""
    from tests.reference import engine as reference

    rules = preset(rules_name, num_players=num_players)
    players = [make_policy(spec, rules) for spec in ("random", "heuristic")]
    games = 6
    seatings = np.array([[(game + seat) % 2 for seat in range(num_players)] for game in range(games)])
    moves: list[list[tuple[int, int]]] = [[] for _ in range(games)]

    def record(slots, seats, actions):
        for slot, seat, action in zip(slots.tolist(), seats.tolist(), actions.tolist()):
            moves[slot].append((seat, action))

    many = Table(rules, games, players, before_move=record)
    many.seat(np.arange(games), seatings)
    many.start(np.arange(games), np.arange(games) + 100)
    many.play_seated(RowStreams([np.random.default_rng(game) for game in range(games)]))
    for game in range(games):
        one_moves = []
        one = SingleGame(rules, seats=[players[p] for p in seatings[game]],
                         before_move=lambda seat, action: one_moves.append((seat, action)))
        one.start_deal(game + 100)
        one.play_seated(np.random.default_rng(game))
        assert one_moves == moves[game] and one.scores() == many.scores([game])[0].tolist()
        state = reference.start_game(rules, game + 100)
        for seat, action in moves[game]:
            assert state.current == seat
            state = reference.apply_move(state, one.actions.decode(action))
        assert reference.is_terminal(state) and [len(pile) for pile in state.piles] == one.scores()
