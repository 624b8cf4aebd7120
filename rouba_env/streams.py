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

import ctypes
from typing import Sequence, Union

import numba
import numpy as np


class RowStreams:
    """One `numpy.random.Generator` per row of a batch (shared objects: drawing advances them).

    Uniforms are drawn in one compiled loop that calls each Generator's own
    bit generator (its ``ctypes`` interface: the very function
    ``Generator.random`` uses), so the values are exactly those of
    ``generator.random(k)`` row by row.
    """

    def __init__(self, generators: Sequence[np.random.Generator]):
        generators = list(generators)
        for index, generator in enumerate(generators):
            if not isinstance(generator, np.random.Generator):
                raise TypeError(f"RowStreams needs numpy Generators, got {type(generator).__name__} at row {index}")
        self.generators = generators
        self._rows = np.arange(len(generators), dtype=np.int64)
        self._bind()

    def _bind(self) -> None:
        """The rows' bit generators as the compiled loop calls them: their states' addresses and their one
        ``next_double`` (None where the rows' bit generators differ in kind: a Python loop then)."""
        interfaces = [self.generators[row].bit_generator.ctypes for row in self._rows.tolist()]
        self._states = np.array([interface.state_address for interface in interfaces], dtype=np.uint64)
        functions = {ctypes.cast(interface.next_double, ctypes.c_void_p).value or 0 for interface in interfaces}
        self._next_double = _DOUBLE_OF_STATE(functions.pop()) if len(functions) == 1 and 0 not in functions else None

    def __getstate__(self) -> dict:
        """Pickled as its Generators and rows: addresses and function pointers belong to one process."""
        return {"generators": self.generators, "rows": self._rows}

    def __setstate__(self, state: dict) -> None:
        self.generators, self._rows = state["generators"], state["rows"]
        self._bind()

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, row: int) -> np.random.Generator:
        return self.generators[self._rows[row]]

    def take(self, rows: np.ndarray) -> "RowStreams":
        """The streams of ``rows`` (the same Generator objects), in that order."""
        subset = object.__new__(RowStreams)
        subset.generators = self.generators
        subset._rows = self._rows[rows]
        subset._states = self._states[rows]
        subset._next_double = self._next_double
        return subset

    def uniform_rows(self, width: int) -> np.ndarray:
        out = np.empty((len(self._rows), width))
        if self._next_double is not None:
            _fill_rows(self._next_double, self._states, out)
        else:
            for row in range(len(self._rows)):
                out[row] = self[row].random(width)
        return out

    def uniform_runs(self, counts: np.ndarray) -> np.ndarray:
        out = np.empty(int(counts.sum()))
        if self._next_double is not None:
            _fill_runs(self._next_double, self._states, counts.astype(np.int64), out)
        else:
            start = 0
            for row, count in enumerate(counts):
                out[start:start + count] = self[row].random(count)
                start += count
        return out

    def __repr__(self) -> str:
        return f"<RowStreams of {len(self._rows)} rows>"


_DOUBLE_OF_STATE = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_uint64)
"""A bit generator's ``next_double(state)``, its state given as an address."""


@numba.njit(cache=True, nogil=True)
def _fill_rows(next_double, states, out):
    for row in range(out.shape[0]):
        for column in range(out.shape[1]):
            out[row, column] = next_double(states[row])


@numba.njit(cache=True, nogil=True)
def _fill_runs(next_double, states, counts, out):
    at = 0
    for row in range(counts.shape[0]):
        for _ in range(counts[row]):
            out[at] = next_double(states[row])
            at += 1


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
        return rng.uniform_rows(width)
    return rng.random((rows, width))


def uniform_runs(rng: Randomness, rows: np.ndarray, batch: int) -> np.ndarray:
    """float64[K] uniforms for entries of sorted row indices ``rows`` (K of them) in a batch of ``batch`` rows.

    One Generator draws all K at once; `RowStreams` draw each row's run of
    entries from that row's stream, so row ``i`` gets what a one-row call would.
    """
    if isinstance(rng, RowStreams):
        check_randomness(rng, batch)
        return rng.uniform_runs(np.bincount(rows, minlength=batch))
    return rng.random(len(rows))
