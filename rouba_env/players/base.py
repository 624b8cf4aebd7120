"""One `Policy` interface for every player, scripted or learned, and player specs.

A policy sees only what its seat sees: the observation vector and the action
mask (plus a `numpy.random.Generator`), never the engine state. Players are
named by spec strings (see `rouba_env.players.registry`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numba
import numpy as np

from rouba_env.compiled import EVERYTHING, TABLES, ensure_compiled
from rouba_env.encoding.masks import sample_legal
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.config import RulesConfig
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.streams import Randomness, RowStreams, uniform_rows


@runtime_checkable
class Policy(Protocol):
    """A player: picks legal actions from observations and masks."""

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """One action for one observation ``obs[D]`` with mask ``mask[A]``."""

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: "Randomness") -> np.ndarray:
        """Actions ``int64[B]`` for observations ``obs[B, D]`` and masks ``mask[B, A]``.

        ``rng`` is one Generator for the batch or `RowStreams` (one per row,
        `rouba_env.streams`); row ``i`` must then draw only from ``rng[i]``.
        """


PROBABILITIES_METHOD = "action_probabilities"
"""The optional method ``action_probabilities(obs[B, D], mask[B, A]) -> float64[B, A]`` of a player whose
choice has a distribution known in closed form (random, greedy, heuristic, networks): the probability that
`Policy.act_batch` plays each action. Exact exploitability reads it (`rouba_env.solve.exploitability`);
for players without it the distribution is estimated from their moves."""


class ProbabilitiesOutOfReach(ValueError):
    """A player's ``action_probabilities`` cannot be computed exactly here (too much to enumerate, as
    ``expert``'s on the standard deck): estimate the distribution from its moves instead."""


class BasePolicy:
    """Convenience base: implement `act_batch` (or `act`) and get the other one.

    Holds the rules, the observation encoder (for the layout) and the action
    encoding that the policy was made for.
    """

    name = "policy"
    plays_in_batch = False
    """True when `act_batch` plays a whole batch at once (vectorized); False when it plays row by row.

    Any player sits at the table either way; the evaluator plays a row-by-row player's games in small
    chunks (nothing is gained by big ones), so that progress is told and workers share the work evenly.
    """

    compiled_stage = EVERYTHING
    """The warm-up stage that holds this player's compiled code (`rouba_env.compiled`): made before any game,
    so that no game stops to compile."""

    def __init__(self, rules: RulesConfig, max_players: int | None = None):
        ensure_compiled(self.compiled_stage)
        self.rules = rules
        self.encoder = ObservationEncoder(rules, max_players)
        self.actions = ActionEncoding(rules, max_players)

    def check_generator(self, rng) -> None:
        """TypeError unless ``rng`` is a numpy Generator (or `RowStreams`): what `act` draws from."""
        if not isinstance(rng, (np.random.Generator, RowStreams)):
            raise TypeError(f"{self.name}: rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
                            f"got {type(rng).__name__}")

    def checked(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(observations float32[B, D], legal bool[B, A]) after checking them against this player's encodings.

        A ValueError names what is wrong: an observation or mask of another length than this player's
        table gives, different batch sizes, a non-finite observation, or a row with no legal action.
        """
        legal = check_mask(mask)
        obs = np.asarray(obs)
        if obs.ndim not in (1, 2):
            raise ValueError(f"{self.name}: an observation is 1-d (one position) or 2-d (a batch), got shape "
                             f"{obs.shape}")
        obs = obs[None, :] if obs.ndim == 1 else obs
        if obs.ndim != 2 or obs.shape[1] != self.encoder.size:
            raise ValueError(f"{self.name}: observations must have {self.encoder.size} entries (the table's "
                             f"encoding), got {obs.shape[-1]} per observation")
        if legal.shape[1] != self.actions.size:
            raise ValueError(f"{self.name}: masks must have {self.actions.size} entries, got {legal.shape[1]}")
        if obs.shape[0] != legal.shape[0]:
            raise ValueError(f"{self.name}: {obs.shape[0]} observations but {legal.shape[0]} masks")
        if obs.dtype.kind not in "biuf":
            raise ValueError(f"{self.name}: observations must be numbers, got dtype {obs.dtype}")
        obs = obs.astype(np.float32, copy=False)
        problem = self.encoder.check_values(obs)
        if problem is not None:
            raise ValueError(f"{self.name}: {problem}")
        return obs, legal

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """One action index for one observation and its legal-action mask (`act_batch` on a batch of one)."""
        self.check_generator(rng)
        obs, mask = np.asarray(obs), np.asarray(mask)
        if obs.ndim != 1 or mask.ndim != 1:
            raise ValueError(f"{self.name}: act takes one observation and one mask (1-d), got shapes "
                             f"{obs.shape} and {mask.shape}; act_batch takes batches")
        return int(self.act_batch(obs[None, :], mask[None, :], rng)[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Randomness) -> np.ndarray:
        """`act` row by row, its answers kept as they are (the table refuses one that is no action index)."""
        if isinstance(rng, RowStreams):
            chosen = [self.act(o, m, rng[row]) for row, (o, m) in enumerate(zip(obs, mask))]
        else:
            chosen = [self.act(o, m, rng) for o, m in zip(obs, mask)]
        answers = np.empty(len(chosen), dtype=object)
        answers[:] = chosen
        return answers.astype(np.int64) if all(type(value) is int for value in chosen) else answers

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def check_mask(mask: np.ndarray) -> np.ndarray:
    """The mask as a 2-D bool array; ValueError unless it holds only 0 and 1 and every row a legal action.

    A mask is bool, integer, or floats that are exactly 0 or 1 (a NaN or 0.5 is refused, never
    read as legal).
    """
    mask = np.asarray(mask)
    if mask.ndim == 1:
        mask = mask[None, :]
    if mask.ndim != 2:
        raise ValueError(f"an action mask is 1-d (one position) or 2-d (a batch), got shape {mask.shape}")
    if mask.dtype in (np.int8, np.uint8, np.bool_) and mask.size and _zeros_and_ones_with_a_one_per_row(
            np.ascontiguousarray(mask).view(np.uint8)):
        return mask.astype(bool)  # the tables' own masks: checked in one compiled pass
    if mask.dtype != np.bool_:
        if mask.dtype.kind not in "iuf" or not ((mask == 0) | (mask == 1)).all():
            raise ValueError(f"an action mask holds only 0 and 1 (bool, integer or float), got dtype {mask.dtype}"
                             + ("" if mask.dtype.kind not in "iuf" else
                                f" with the value {mask[(mask != 0) & (mask != 1)].ravel()[0]!r}"))
    legal = mask.astype(bool)
    empty = ~legal.any(axis=1)
    if empty.any():
        raise ValueError(f"action mask row(s) {np.flatnonzero(empty).tolist()} have no legal action")
    return legal


@numba.njit(cache=True, nogil=True)
def _zeros_and_ones_with_a_one_per_row(mask):
    """True if every entry of the byte mask is 0 or 1 and every row has a 1."""
    for row in range(mask.shape[0]):
        legal = False
        for entry in range(mask.shape[1]):
            value = mask[row, entry]
            if value > 1:
                return False
            legal = legal or value == 1
        if not legal:
            return False
    return True


class RandomPolicy(BasePolicy):
    """Uniform over the legal actions."""

    name = "random"
    plays_in_batch = True
    compiled_stage = TABLES

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Randomness) -> np.ndarray:
        _, legal = self.checked(obs, mask)
        # One uniform per decision picks among the legal actions (`sample_legal`, as the batched engine draws).
        chosen = np.empty(len(legal), dtype=np.int64)
        sample_legal(legal.view(np.int8), uniform_rows(rng, len(legal), 1)[:, 0], chosen)
        return chosen

    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float64[B, A]: equal over each row's legal actions."""
        _, legal = self.checked(obs, mask)
        return legal / legal.sum(axis=1, keepdims=True)
