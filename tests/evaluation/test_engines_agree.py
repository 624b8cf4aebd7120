"""The evaluator plays the same games for network players whatever the BLAS threads, and the same as a
one-game table plays them alone.

Each line-up is played over three seeds, about 2,100 games in all, with BLAS allowed one thread and two;
the first seed's games are played again alone on a one-game table.
"""

import pytest
from threadpoolctl import threadpool_limits

from rouba_env.evaluation.duplicate import evaluate

LINEUPS = [
    pytest.param(["checkpoint:2p", "checkpoint:2p-0.3"], 2, id="2p-vs-2p-0.3"),
    pytest.param(["checkpoint:2p,deterministic=false", "checkpoint:2p-0.3"], 2, id="2p-sampling"),
    pytest.param(["checkpoint:mixed"], 3, id="mixed-3-seats"),
    pytest.param(["checkpoint:mixed"], 4, id="mixed-4-seats"),
]
SEEDS = (3, 17, 2**40 + 5)
GAMES_PER_SEED = 700


def played(players, seats, seed, threads):
    with threadpool_limits(threads):
        result = evaluate(players, num_players=seats, games=GAMES_PER_SEED, seed=seed, record_moves=True)
    return result, [(record.key, record.moves, record.scores) for record in result.records]


@pytest.mark.slow
@pytest.mark.parametrize("players, seats", LINEUPS)
def test_the_evaluator_plays_the_same_games_whatever_the_threads_and_alone(players, seats):
    from tests.evaluation.test_duplicate import replayed_alone

    games = 0
    for index, seed in enumerate(SEEDS):
        result, one = played(players, seats, seed, threads=1)
        _, two = played(players, seats, seed, threads=2)
        differing = [key for (key, *a), (_, *b) in zip(one, two) if a != b]
        assert not differing and len(one) == len(two), f"seed {seed}: {len(differing)} of {len(one)} games differ"
        if index == 0:
            alone = replayed_alone(result, players, "standard", seats, seed)
            assert [(moves, scores) for _, moves, scores in one] == alone
        games += len(one)
    assert games >= 2000
