"""The one seeding scheme of a training run's collection, for the single process and for the Ray actors.

A collector is the code that plays a share of the training games: the trainer itself (collector 0) or
Ray actor ``k`` (collector ``k``). When collector ``k`` starts collecting at update ``u`` (a run's
start, a resume, or a Ray actor's restart) it gets, from the run's seed alone:

* for table size ``t`` (an index into ``num_players``), the deal seed
  ``seed * DEAL_SEED_MULTIPLIER + TABLE_SEED_STRIDE * t + COLLECTOR_SEED_STRIDE * k + u``
  (deal ``d`` of slot ``i`` is then ``slot_deal_seed(that, i, d)``);
* a numpy Generator for seats, opponents and the engine's random players, and a torch seed for the
  sampling of moves, both from ``SeedSequence(seed, spawn_key=(k, u))``; except that the
  trainer's first collector (``k = u = 0``) uses ``SeedSequence(seed)``, i.e. ``default_rng(seed)``
  and ``seed`` (a resumed run restores both from its checkpoint instead).

So a run repeats with the same seed (and the same number of actors), and no two collectors or
starts share a stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEAL_SEED_MULTIPLIER = 7919
TABLE_SEED_STRIDE = 104729
COLLECTOR_SEED_STRIDE = 1_000_003
"""Primes that keep the deal seeds of different runs, table sizes and collectors apart."""
TORCH_SEED_BITS = 63


@dataclass(frozen=True)
class CollectorSeeds:
    """Where collector ``collector`` starting at update ``update`` draws its randomness (see the module)."""

    deal_seeds: tuple[int, ...]
    """One per table size."""
    numpy_sequence: np.random.SeedSequence
    torch_seed: int

    def generator(self) -> np.random.Generator:
        return np.random.default_rng(self.numpy_sequence)


def collector_seeds(seed: int, table_sizes: int, collector: int = 0, update: int = 0) -> CollectorSeeds:
    """The seeds of collector ``collector`` (0: the trainer itself; Ray actor k: k) starting at ``update``."""
    if min(table_sizes, collector, update) < 0 or table_sizes < 1:
        raise ValueError(f"table_sizes must be at least 1 and collector, update at least 0, got "
                         f"{table_sizes}, {collector}, {update}")
    deal_seeds = tuple(seed * DEAL_SEED_MULTIPLIER + TABLE_SEED_STRIDE * table + COLLECTOR_SEED_STRIDE * collector
                       + update for table in range(table_sizes))
    if collector == 0 and update == 0:
        return CollectorSeeds(deal_seeds, np.random.SeedSequence(seed), seed)
    sequence = np.random.SeedSequence(seed, spawn_key=(collector, update))
    torch_seed = int(sequence.generate_state(1, np.uint64)[0] >> np.uint64(64 - TORCH_SEED_BITS))
    return CollectorSeeds(deal_seeds, sequence, torch_seed)
