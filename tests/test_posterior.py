"""The searched values of `rouba_env.posterior.WorldSearch`: their errors, a playout cut short by a value, and the
rounds `Table.play_seated` is limited to."""

import numpy as np
import pytest

from rouba_env import preset
from rouba_env.players.registry import make_policy
from rouba_env.posterior import WorldSearch
from rouba_env.table import OPEN_SEAT, Table


def a_decision(rules, seed: int = 0):
    """A two-seat table of ``mini`` at the first move of a deal (from ``seed`` on) whose first seat to act has a
    choice, every seat open."""
    for deal in range(seed, seed + 100):
        table = Table(rules, 1, reward="margin", illegal_action="raise")
        table.seat([0], [[OPEN_SEAT, OPEN_SEAT]])
        table.start([0], [deal])
        if table.mask[0].sum() >= 2:
            return table
    raise AssertionError("no deal with a choice at its first move")


@pytest.mark.parametrize("cut, sign", [(1, 1.0), (2, -1.0)])
def test_a_cut_playout_takes_the_value_of_the_seat_to_act_for_the_seat_that_searched(cut, sign):
    """After the searched move and ``cut`` rounds the value speaks for the seat to act: the searching seat again
    after one round (as is), the other seat after two (negated: a zero-sum two-seat reward)."""
    rules = preset("mini")
    table = a_decision(rules)
    observer = int(table.current[0])
    player = make_policy("random", rules)
    asked = []

    def value(game, slots, seats):
        asked.append(seats.copy())
        return np.full(len(slots), 0.25)

    search = WorldSearch(player, player, rules, 8, cut=cut, value=value)
    values = search.searched_values(table.game, np.array([0]), np.array([observer]), histories=[[[]]],
                                    rng=np.random.default_rng(0))
    legal = np.flatnonzero(table.mask[0])
    to_act = observer if cut == 1 else 1 - observer
    assert asked and all((seats == to_act).all() for seats in asked)
    assert np.allclose(values.mean[0, legal], sign * 0.25), "a game of mini lasts more than three moves"
    assert np.allclose(values.standard_error[0, legal], 0.0)


def test_a_cut_needs_a_value_and_two_seats():
    rules = preset("mini")
    player = make_policy("random", rules)
    with pytest.raises(ValueError, match="a playout cut after 3 moves needs a value"):
        WorldSearch(player, player, rules, 4, cut=3)
    three = preset("standard", num_players=3)
    value = lambda game, slots, seats: np.zeros(len(slots))  # noqa: E731
    with pytest.raises(ValueError, match="rules for 2 players, got 3"):  # a cut reads a two-seat critic
        WorldSearch(make_policy("random", three), make_policy("random", three), three, 4, cut=3, value=value)


def test_a_limited_play_stops_after_its_rounds():
    rules = preset("mini")
    table = Table(rules, 4, [make_policy("random", rules)], reward="margin")
    table.seat(np.arange(4), np.zeros((4, 2), dtype=np.int64))
    table.start(np.arange(4), np.arange(4))
    table.play_seated(np.random.default_rng(0), max_rounds=2)
    assert (table.decisions.sum(axis=1) == 2).all() and not table.over.any()
    with pytest.raises(ValueError, match="max_rounds"):
        table.play_seated(np.random.default_rng(0), max_rounds=0)
    table.play_seated(np.random.default_rng(0))
    assert table.over.all()


def test_the_standard_errors_are_those_of_the_worlds_and_common_worlds_shrink_the_advantages():
    rules = preset("mini")
    table = a_decision(rules, seed=5)
    observer = int(table.current[0])
    player = make_policy("random", rules)
    search = WorldSearch(player, player, rules, 400)
    values = search.searched_values(table.game, np.array([0]), np.array([observer]), histories=[[[]]],
                                    rng=np.random.default_rng(1))
    legal = np.flatnonzero(table.mask[0])
    assert np.isfinite(values.mean[0, legal]).all() and np.isneginf(np.delete(values.mean[0], legal)).all()
    assert (values.standard_error[0, legal] > 0).all() and (values.advantage_error[0, legal] > 0).all()
    assert np.isinf(np.delete(values.standard_error[0], legal)).all()
    one = WorldSearch(player, player, rules, 1).searched_values(
        table.game, np.array([0]), np.array([observer]), histories=[[[]]], rng=np.random.default_rng(1))
    assert (one.standard_error[0, legal] == 0).all()
