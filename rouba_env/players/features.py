"""What the networks read: the rank-shared network's per-rank features and context, and re-padding.

These belong to the models, not to the environments' encoding: they are
index arrays over the observation vector (`rouba_env.encoding.observation`)
and the action space (`rouba_env.encoding.actions`), computed from their
layouts, so a network trained with one padding can read another's.
"""

from __future__ import annotations

import numpy as np

from rouba_env.encoding.actions import action_index
from rouba_env.encoding.observation import BLOCKS, OBSERVATION_VERSION, EMPTY_SLOT, PILE_TOP_SLOTS, observation_layout
from rouba_env.rules.cards import NUM_RANKS
from rouba_env.rules.core import NUM_KINDS, TARGET_PILE_OFFSET
from rouba_env.rules.engine import NUM_RANK_SLOTS


SEAT_BLOCKS = {block.name: block.width for block in BLOCKS if block.per_seat}
"""Blocks that hold one group of entries (of the given width) per seat, and so change with the padding."""
RANK_SLOT_BLOCKS = tuple(block.name for block in BLOCKS if block.by_rank and not block.per_seat)
"""Blocks of one entry per rank slot (each a feature of the rank network's tokens)."""
TABLE_TALK_BLOCKS = tuple(block.name for block in BLOCKS if block.by_rank and block.per_seat and block.version >= 2)
"""Per-seat, per-rank blocks of the table talk (each a feature per seat of the rank network's tokens)."""


def repadding_index(from_players: int, to_players: int, to_version: int = OBSERVATION_VERSION) -> np.ndarray:
    """For each index of a ``to_players``-padded observation of version ``to_version``, its index in a
    ``from_players``-padded one of the current version (-1: zero).

    Lets a network trained with one padding, or on an older observation version, read today's
    observations: ``repadded = np.where(index >= 0, obs[..., index], 0)``.
    """
    source, target = observation_layout(from_players), observation_layout(to_players, to_version)
    index = np.full(max(block.stop for block in target.values()), -1, dtype=np.int64)
    for name, block in target.items():
        width = SEAT_BLOCKS.get(name)
        if width is None:
            index[block] = np.arange(source[name].start, source[name].stop)
            continue
        for seat in range(min(from_players, to_players)):
            start = block.start + seat * width
            index[start : start + width] = np.arange(source[name].start + seat * width,
                                                     source[name].start + (seat + 1) * width)
    return index



FEATURE_ZERO = -1
"""`rank_feature_index` entry meaning the constant 0."""
FEATURE_ONE = -2
"""`rank_feature_index` entry meaning the constant 1."""


def rank_feature_names(max_players: int, version: int = OBSERVATION_VERSION) -> list[str]:
    """Names of the per-rank features of `rank_feature_index`, in order (observation ``version``'s)."""
    seats = range(max_players)
    talk = [f"{name}_{k}" for name in TABLE_TALK_BLOCKS for k in seats] if version >= 2 else []
    return ([*RANK_SLOT_BLOCKS] + [f"pile_top_{k}" for k in seats] + [f"pile_size_if_top_{k}" for k in seats]
            + talk + ["is_joker_slot"])


def rank_feature_index(max_players: int, version: int = OBSERVATION_VERSION) -> tuple[np.ndarray, np.ndarray]:
    """Two int64[R, F] index arrays: feature ``f`` of rank slot ``r`` is ``obs[first[r, f]] * obs[second[r, f]]``.

    The view the rank-shared network reads (one token per rank slot, the same
    weights for every rank): the rank's own hand, table, seen and flipped
    counts; for each seat whether its pile shows the rank, and that pile's size
    if it does (what a steal would take); from version 2, for each seat how often it passed the rank up
    and how many of it it played since its hand was dealt (the table talk); and a flag for the joker slot.
    `FEATURE_ZERO` / `FEATURE_ONE` stand for the constants 0 and 1.
    """
    layout = observation_layout(max_players, version)
    names = rank_feature_names(max_players, version)
    column = {name: index for index, name in enumerate(names)}
    first = np.full((NUM_RANK_SLOTS, len(names)), FEATURE_ZERO, dtype=np.int64)
    second = np.full_like(first, FEATURE_ONE)
    first[NUM_RANKS, column["is_joker_slot"]] = FEATURE_ONE
    for rank in range(NUM_RANK_SLOTS):
        for block in RANK_SLOT_BLOCKS:
            first[rank, column[block]] = layout[block].start + rank
        for seat in range(max_players):
            if rank < NUM_RANKS:
                top = layout["pile_top"].start + seat * PILE_TOP_SLOTS + rank
                first[rank, column[f"pile_top_{seat}"]] = top
                first[rank, column[f"pile_size_if_top_{seat}"]] = top
                second[rank, column[f"pile_size_if_top_{seat}"]] = layout["pile_size"].start + seat
            for block in TABLE_TALK_BLOCKS if version >= 2 else ():
                width = SEAT_BLOCKS[block]
                if rank < width:
                    first[rank, column[f"{block}_{seat}"]] = layout[block].start + seat * width + rank
    return first, second


RANK_FREE_BLOCKS = tuple(block.name for block in BLOCKS if not block.by_rank)
"""Blocks that say nothing about particular ranks (the rank network's context reads these)."""


def rank_context_index(max_players: int, version: int = OBSERVATION_VERSION) -> np.ndarray:
    """int64[C]: the observation entries that name no rank: `RANK_FREE_BLOCKS` and each pile's "empty" slot.

    The rank network's context reads only these, so relabelling the ranks of
    a position relabels its logits and leaves its value unchanged.
    """
    layout = observation_layout(max_players, version)
    empty = [layout["pile_top"].start + seat * PILE_TOP_SLOTS + EMPTY_SLOT for seat in range(max_players)]
    blocks = [np.arange(layout[name].start, layout[name].stop) for name in RANK_FREE_BLOCKS]
    return np.concatenate([np.array(empty, dtype=np.int64), *blocks]).astype(np.int64)


def extended_index(index: np.ndarray, obs_size: int) -> np.ndarray:
    """`rank_feature_index` entries as columns of ``[obs, 0, 1]`` (the observation with two constant columns)."""
    return np.where(index == FEATURE_ZERO, obs_size, np.where(index == FEATURE_ONE, obs_size + 1, index))


def action_repadding_index(num_players: int, from_players: int, to_players: int) -> np.ndarray:
    """For each action index of a ``to_players``-padded space, the same move's index in a ``from_players`` one (-1: none)."""
    from_targets, to_targets = TARGET_PILE_OFFSET + from_players, TARGET_PILE_OFFSET + to_players
    index = np.full(NUM_KINDS * to_targets, -1, dtype=np.int64)
    usable_targets = TARGET_PILE_OFFSET + min(num_players, from_players, to_players)
    for kind in range(NUM_KINDS):
        for target in range(usable_targets):
            index[action_index(kind, target, to_targets)] = action_index(kind, target, from_targets)
    return index
