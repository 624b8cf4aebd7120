"""Random streams of a batch: one shared `numpy.random.Generator`, or one Generator per row.

A player's ``act_batch(obs, mask, rng)`` gets either. The one-game `Table`
and the trainer pass a single Generator; the batched table passes
`RowStreams` when every game keeps a stream of its own (the vector
environment, which replays N `SingleAgentEnv`s move for move, and the batched
evaluator, which replays the one-game-at-a-time evaluator). Players draw
through `uniform_rows` and `uniform_runs`, which give row ``i`` exactly what a
one-row call with that row's Generator would draw, so a game is the same
whether it is played alone or in a batch.
"""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np


class RowStreams:
    """One `numpy.random.Generator` per row of a batch (shared objects: drawing advances them)."""

    def __init__(self, generators: Sequence[np.random.Generator]):
        generators = list(generators)
        for index, generator in enumerate(generators):
            if not isinstance(generator, np.random.Generator):
                raise TypeError(f"RowStreams needs numpy Generators, got {type(generator).__name__} at row {index}")
        self.generators = generators

    def __len__(self) -> int:
        return len(self.generators)

    def __getitem__(self, row: int) -> np.random.Generator:
        return self.generators[row]

    def take(self, rows: np.ndarray) -> "RowStreams":
        """The streams of ``rows`` (the same Generator objects), in that order."""
        generators = self.generators
        return RowStreams([generators[row] for row in rows])

    def __repr__(self) -> str:
        return f"<RowStreams of {len(self.generators)} rows>"


Randomness = Union[np.random.Generator, RowStreams]
"""What ``act_batch`` draws from: one Generator for the whole batch, or one per row."""


def check_randomness(rng, rows: int) -> None:
    """TypeError or ValueError unless ``rng`` is a Generator or `RowStreams` of ``rows`` rows."""
    if isinstance(rng, RowStreams):
        if len(rng) != rows:
            raise ValueError(f"RowStreams of {len(rng)} rows for a batch of {rows}")
    elif not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator or RowStreams, got {type(rng).__name__}")


def uniform_rows(rng: Randomness, rows: int, width: int) -> np.ndarray:
    """float64[rows, width] uniforms in [0, 1): ``rng.random((rows, width))``, or row ``i`` from stream ``i``."""
    if isinstance(rng, RowStreams):
        check_randomness(rng, rows)
        if not rows:
            return np.empty((0, width))
        return np.stack([generator.random(width) for generator in rng.generators])
    return rng.random((rows, width))


def uniform_runs(rng: Randomness, rows: np.ndarray, batch: int) -> np.ndarray:
    """float64[K] uniforms for entries of sorted row indices ``rows`` (K of them) in a batch of ``batch`` rows.

    One Generator draws all K at once; `RowStreams` draw each row's run of
    entries from that row's stream, so row ``i`` gets what a one-row call would.
    """
    if isinstance(rng, RowStreams):
        check_randomness(rng, batch)
        counts = np.bincount(rows, minlength=batch)
        return np.concatenate([rng.generators[row].random(count) for row, count in enumerate(counts)
                               if count]
                              or [np.empty(0)])
    return rng.random(len(rows))
