"""The one seeding scheme of collection (`rouba_training.seeds`), shared by the trainer and the Ray actors."""

import numpy as np
import pytest

from rouba_training.seeds import collector_seeds


def test_the_trainers_first_collector_is_seeded_with_the_run_seed_itself():
    seeds = collector_seeds(5, table_sizes=2)
    assert seeds.torch_seed == 5
    assert seeds.generator().integers(1 << 62) == np.random.default_rng(5).integers(1 << 62)
    assert seeds.deal_seeds == (5 * 7919, 5 * 7919 + 104729)


def test_collectors_and_starts_never_share_a_stream():
    starts = [(collector, update) for collector in range(4) for update in (0, 1, 7)]
    draws = {start: tuple(collector_seeds(3, 3, *start).generator().integers(1 << 62, size=4)) for start in starts}
    assert len(set(draws.values())) == len(starts)
    deals = [seed for start in starts for seed in collector_seeds(3, 3, *start).deal_seeds]
    assert len(set(deals)) == len(deals)
    torch_seeds = {collector_seeds(3, 3, *start).torch_seed for start in starts}
    assert len(torch_seeds) == len(starts) and all(0 <= seed < 1 << 63 for seed in torch_seeds)


def test_the_same_start_gives_the_same_seeds():
    first, again = collector_seeds(9, 2, 2, 4), collector_seeds(9, 2, 2, 4)
    assert first.deal_seeds == again.deal_seeds and first.torch_seed == again.torch_seed
    assert first.generator().random() == again.generator().random()


@pytest.mark.parametrize("arguments", [(1, 0), (1, 1, -1), (1, 1, 0, -2)])
def test_bad_starts_are_refused(arguments):
    with pytest.raises(ValueError, match="table_sizes must be at least 1"):
        collector_seeds(*arguments)
