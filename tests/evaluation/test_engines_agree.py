"""The batched table and one game at a time play the same games for network players, whatever the BLAS threads.

Each line-up is played over three seeds, about 2,100 games in all: on the batched table with BLAS allowed
one thread and two, and one game at a time (one seed with two threads, the others with one).
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


def played(players, seats, seed, engine, threads):
    with threadpool_limits(threads):
        result = evaluate(players, num_players=seats, games=GAMES_PER_SEED, seed=seed, engine=engine,
                          record_moves=True)
    return [(record.key, record.moves, record.scores) for record in result.records]


@pytest.mark.slow
@pytest.mark.parametrize("players, seats", LINEUPS)
def test_batched_and_single_engines_play_the_same_games(players, seats):
    games = 0
    for index, seed in enumerate(SEEDS):
        single = played(players, seats, seed, "single", threads=2 if index == 0 else 1)
        for threads in (1, 2):
            batched = played(players, seats, seed, "batched", threads)
            differing = [key for (key, *one), (_, *other) in zip(single, batched) if one != other]
            assert not differing and len(batched) == len(single), (
                f"seed {seed}, {threads} BLAS thread(s): {len(differing)} of {len(single)} games differ")
        games += len(single)
    assert games >= 2000
