"""Evaluation: intervals, duplicate deals, ties, reproducibility, ratings."""

import math
import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest

from rouba_env.rules.config import RulesConfig, preset
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.evaluation.lineups import build_lineups, deal_seed, seating
from rouba_env.evaluation.play import BATCH_GAMES, GameRecord, chunks_of
from rouba_env.evaluation.stats import margins, mean_interval, player_stats, wilson_interval, win_shares


@pytest.mark.parametrize(
    "wins, games, low, high",
    [
        (50, 100, 0.4038, 0.5962),
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
    ],
)
def test_wilson_interval_known_values(wins, games, low, high):
    got_low, got_high = wilson_interval(wins, games)
    assert got_low == pytest.approx(low, abs=1e-4)
    assert got_high == pytest.approx(high, abs=1e-4)


def test_wilson_interval_rejects_bad_input():
    with pytest.raises(ValueError, match="games"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="wins"):
        wilson_interval(11, 10)


def test_mean_interval_is_normal_approximation():
    mean, low, high = mean_interval([1.0, 2.0, 3.0, 4.0])
    half = 1.959963984540054 * math.sqrt(5 / 3) / 2
    assert mean == 2.5 and low == pytest.approx(2.5 - half) and high == pytest.approx(2.5 + half)
    assert mean_interval([7.0]) == (7.0, None, None)


def test_ties_count_one_over_k():
    assert win_shares([5, 5]) == [0.5, 0.5]
    assert win_shares([3, 5, 5]) == [0.0, 0.5, 0.5]
    assert win_shares([4, 4, 4]) == pytest.approx([1 / 3] * 3)
    assert win_shares([9, 1, 2]) == [1.0, 0.0, 0.0]
    assert margins([10, 4, 4]) == [6.0, -3.0, -3.0]
    records = [
        GameRecord(0, 0, 0, 1, (0, 1), (26, 26)),
        GameRecord(0, 0, 1, 1, (1, 0), (20, 30)),
    ]
    stats = player_stats("a", "a", 0, records)
    assert stats.games == 2 and stats.wins == 1.5 and stats.win_rate == 0.75
    assert stats.per_seat[0]["wins"] == 0.5 and stats.per_seat[1]["wins"] == 1.0


def test_seatings_rotate_every_player_through_every_seat():
    assert seating((0, 1), 0) == (0, 1) and seating((0, 1), 1) == (1, 0)
    seats = {seating((0, 1, 2), r) for r in range(3)}
    assert seats == {(0, 1, 2), (2, 0, 1), (1, 2, 0)}
    labels, specs, lineups = build_lineups(["a", "b"], 4)
    assert labels == ["a", "b", "a#2", "b#2"] and specs == ["a", "b", "a", "b"] and lineups == [(0, 1, 2, 3)]
    labels, _, lineups = build_lineups(["a", "b", "c"], 2)
    assert lineups == [(0, 1), (0, 2), (1, 2)]


def test_one_against_the_field_fills_every_other_seat_with_the_rest():
    labels, specs, lineups = build_lineups(["a", "b"], 4, fill="field")
    assert specs == ["a", "b", "b", "b"] and labels == ["a", "b", "b#2", "b#3"] and lineups == [(0, 1, 2, 3)]
    assert build_lineups(["a", "b", "c"], 4, fill="field")[1] == ["a", "b", "c", "b"]
    for specs, message in ((["a"], "needs 2..4 specs"), (["a", "b", "c", "d", "e"], "needs 2..4 specs")):
        with pytest.raises(ValueError, match=message):
            build_lineups(specs, 4, fill="field")
    with pytest.raises(ValueError, match="fill must be one of"):
        build_lineups(["a", "b"], 4, fill="ring")
    result = evaluate(["greedy", "random"], num_players=3, games=3, fill="field")
    assert result.to_dict()["players"] == ["greedy", "random", "random#2"]


def test_duplicate_deals_permute_seats_over_the_same_deals():
    result = evaluate(["random", "greedy"], games=6, seed=4)
    assert result.games == 6 and result.deals == 3
    by_deal = {}
    for record in result.records:
        by_deal.setdefault(record.deal, []).append(record)
    for deal, records in by_deal.items():
        assert {r.deal_seed for r in records} == {deal_seed(4, deal)}, "one deal seed per deal"
        assert sorted(r.seats for r in records) == [(0, 1), (1, 0)], "both seatings of the same deal"
    assert len({r.deal_seed for r in result.records}) == 3


def test_three_players_every_rotation_and_a_rating_table():
    result = evaluate(["random", "greedy", "heuristic"], games=6, seed=2)
    assert result.games == 6 and result.rules.num_players == 3
    for deal in range(result.deals):
        seatings = sorted(r.seats for r in result.records if r.deal == deal)
        assert seatings == sorted(seating((0, 1, 2), r) for r in range(3))
    assert result.ratings is not None and len(result.ratings) == 3
    for row in result.ratings:
        assert set(row) == {"player", "mu", "sigma", "ordinal"}
        assert row["ordinal"] == pytest.approx(row["mu"] - 3 * row["sigma"])
    for stats in result.players:
        assert set(stats.per_seat) == {0, 1, 2}
    assert "rating" in result.format_table()


def test_two_players_have_no_rating_but_a_pool_has():
    assert evaluate(["random", "greedy"], games=2, seed=0).ratings is None
    pool = evaluate(["random", "greedy", "heuristic"], games=6, num_players=2, seed=0)
    assert len(pool.lineups) == 3 and pool.games == 6 and pool.ratings is not None
    assert len(pool.lineup_results) == 3


def test_same_seed_same_results_also_with_workers():
    first = evaluate(["random", "greedy"], games=8, seed=11)
    again = evaluate(["random", "greedy"], games=8, seed=11)
    assert first.records == again.records
    other = evaluate(["random", "greedy"], games=8, seed=12)
    assert other.records != first.records
    parallel = evaluate(["random", "greedy"], games=8, seed=11, workers=2)
    assert parallel.records == first.records
    assert parallel.to_dict(include_timing=False) == first.to_dict(include_timing=False)


def test_each_players_time_per_decision_is_reported():
    result = evaluate(["random", "heuristic"], games=4, seed=3, record_moves=True)
    moves = sum(len(record.moves) for record in result.records)
    assert sum(stats.decisions for stats in result.players) == moves
    for stats in result.players:
        assert stats.ms_per_decision is not None and stats.ms_per_decision > 0
    assert "ms/move" in result.format_table()


def test_rules_and_specs_are_checked():
    with pytest.raises(ValueError, match="unknown player"):
        evaluate(["random", "nobody"], games=2)
    with pytest.raises(ValueError, match="games"):
        evaluate(["random", "greedy"], games=0)
    result = evaluate(["random", "greedy"], rules=RulesConfig(num_players=2, take_all=True), games=2)
    assert result.rules.take_all and result.to_dict()["rules"]["take_all"] is True


def test_policy_objects_are_evaluated_in_process():
    from rouba_env.rules.config import preset
    from rouba_env.evaluation.duplicate import evaluate
    from rouba_env.players.base import RandomPolicy

    rules = preset("standard", num_players=3)
    mine = RandomPolicy(rules)
    result = evaluate([mine, "greedy", "greedy"], rules=rules, games=6, seed=1)
    assert result.labels == ["policy:random", "greedy", "greedy#2"]
    assert result.players[0].games == 6 and result.ratings is not None
    same_spec = evaluate(["random", "greedy", "greedy"], rules=rules, games=6, seed=1)
    assert [r.scores for r in result.records] == [r.scores for r in same_spec.records]
    with pytest.raises(ValueError, match="use workers=1"):
        evaluate([mine, "greedy"], games=2, workers=2)
    with pytest.raises(ValueError, match="must be a spec string or a Policy"):
        evaluate([42, "greedy"], games=2)


def replayed_alone(result, players, rules, num_players: int, seed: int) -> list[tuple]:
    """(moves, scores) of every game of ``result`` played again alone on a one-game table, seated and
    seeded as the evaluator seated and seeded it."""
    from rouba_env.evaluation.lineups import game_rng
    from rouba_env.players.registry import make_policy
    from rouba_env.rules.config import make_rules
    from rouba_env.single_game import SingleGame

    config = make_rules(rules, num_players=num_players)
    _, specs, _ = build_lineups(players, num_players, "cycle")
    built = [make_policy(spec, config) for spec in specs]
    games = []
    for record in result.records:
        moves = []
        table = SingleGame(config, seats=[built[p] for p in record.seats],
                           before_move=lambda seat, action: moves.append((seat, action)))
        table.start_deal(record.deal_seed)
        table.play_seated(game_rng(seed, record.deal, record.lineup, record.rotation))
        games.append((tuple(moves), tuple(table.scores())))
    return games


@pytest.mark.parametrize("players, num_players, rules", [
    (["checkpoint:2p", "heuristic"], 2, "standard"),
    (["checkpoint:2p,deterministic=false", "random"], 2, "standard"),
    (["random", "greedy", "heuristic"], 3, "jokers"),
    (["heuristic", "random"], 4, "standard"),
    (["checkpoint:mixed", "greedy"], 3, "standard"),
    (["heuristic", "greedy"], 2, "draw_from_deck"),
    (["random", "heuristic", "greedy"], 3, "take_all"),
    (["random", "greedy", "heuristic"], 2, "standard"),  # a pool: every pair
    (["expert:samples=4", "random"], 2, "small"),  # a player that decides row by row
])
def test_the_evaluator_plays_exactly_the_games_a_one_game_table_plays(players, num_players, rules):
    result = evaluate(players, rules=rules, num_players=num_players, games=60, seed=5, record_moves=True)
    assert [(r.moves, r.scores) for r in result.records] == replayed_alone(result, players, rules, num_players, 5)
    assert [sum(r.decisions) for r in result.records] == [len(r.moves) for r in result.records]


def test_the_field_is_also_reported_as_one_row():
    result = evaluate(["heuristic", "random"], num_players=4, games=40, seed=2, fill="field")
    assert result.labels == ["heuristic", "random", "random#2", "random#3"]
    (field,) = result.groups
    assert field["label"] == "random x3" and field["games"] == result.games
    heuristic = result.players[0]
    assert abs(field["win_rate"] + heuristic.win_rate - 1.0) < 1e-9, "one seat against the field: shares add to 1"
    assert "random x3" in result.format_table() and result.to_dict()["groups"][0]["seats"] == 3
    assert evaluate(["heuristic", "random"], games=4, seed=1).groups is None


def test_an_evaluation_plays_the_deals_slot_0_of_a_batched_game_deals():
    """One deal-seed scheme: deal d of an evaluation with seed s is game d of slot 0 of VectorGame(seed=s)."""
    from rouba_env.batched.game import VectorGame

    rules = preset("standard")
    result = evaluate(["random", "random"], rules, games=6, seed=5)
    played = sorted({record.deal_seed for record in result.records})
    game, rng, dealt = VectorGame(rules, 1, seed=5), np.random.default_rng(0), []
    game.reset()
    dealt.append(int(game.deal_seeds[0]))
    while len(dealt) < 3:
        game.step(game.random_actions(rng))
        if game.done[0]:  # the slot has dealt its next game already
            dealt.append(int(game.deal_seeds[0]))
    assert played == sorted(dealt)


def test_the_deals_are_cut_into_chunks_as_they_are_played_not_listed_up_front():
    """A chunk names its deals by a range, and the chunks are made one at a time: an evaluation of many games
    holds only the chunk it plays (and the records of the games played)."""
    chunks = chunks_of(10**15, workers=1, games_per_deal=2)
    assert isinstance(chunks, Iterator)
    first, second = next(chunks), next(chunks)
    assert first == range(0, BATCH_GAMES // 2) and second == range(BATCH_GAMES // 2, BATCH_GAMES)
    assert [len(chunk) for chunk in chunks_of(40, workers=1, games_per_deal=2, in_batch=False)] == [16, 16, 8]


def test_an_evaluation_keeps_under_a_kilobyte_per_game():
    """The memory an evaluation holds grows by its records only (docs/limits.md states the figure per game)."""
    def peak(games: int) -> int:
        tracemalloc.start()
        evaluate(["random", "greedy"], "mini", games=games, seed=3)
        size = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return size

    peak(64)  # imports and compiled code loaded before measuring
    small, large = peak(2_048), peak(2_048 + 16_384)
    assert (large - small) / 16_384 < 1_024, (small, large)
