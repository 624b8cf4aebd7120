"""Line-ups, seatings and seeds of duplicate-deal matches: which player sits where, and every game's seeds.

See `rouba_env.evaluation.duplicate` for how line-ups are formed. Every seed is a pure function of the
evaluation's seed and the game's place (deal, line-up, rotation), so results never depend on how the
games are split over chunks, processes or the batched table.
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from rouba_env.rules.seeding import numbered_deal_seeds

_RECORD_KEY_POLICY = 1
"""spawn_key tag of a game's policy randomness (the players' Generator; deal seeds come from `deal_seed`)."""



MAX_GAMES_PER_DEAL = 20_000
"""Most games one deal may mean (every lineup of a pool in every rotation); a pool beyond it is refused unplayed."""
FILL_MODES = ("cycle", "field")
"""How fewer specs than seats fill a table: cycled (``a b a b``) or one against the field (``a b b b``)."""


def build_lineups(specs: Sequence[str], num_players: int,
                  fill: str = "cycle") -> tuple[list[str], list[str], list[tuple[int, ...]]]:
    """(labels, specs per player, lineups) for player specs at a table of ``num_players``.

    A lineup lists player indices in seating order before rotation. See the
    module docstring for ``fill`` (fewer specs than seats) and pools (more).
    """
    if isinstance(specs, str) or not specs:
        raise ValueError(f"players must be a non-empty list of specs, got {specs!r}")
    not_specs = [spec for spec in specs if not isinstance(spec, str)]
    if not_specs:
        raise ValueError(f"players must be spec strings (e.g. 'heuristic'), got {not_specs!r}")
    if fill not in FILL_MODES:
        raise ValueError(f"fill must be one of {FILL_MODES}, got {fill!r}")
    if len(specs) > num_players:
        count = math.comb(len(specs), num_players)
        if count * num_players > MAX_GAMES_PER_DEAL:
            raise ValueError(f"{len(specs)} players at {num_players} seats make {count} lineups, so one deal "
                             f"alone is {count * num_players} games (at most {MAX_GAMES_PER_DEAL}); use fewer "
                             f"players or a smaller pool")
    if fill == "field":
        if not 2 <= len(specs) <= num_players:
            raise ValueError(f"one against the field needs 2..{num_players} specs (the first against the others), "
                             f"got {len(specs)}")
        field = specs[1:]
        player_specs = [specs[0]] + [field[i % len(field)] for i in range(num_players - 1)]
    elif len(specs) < num_players:
        player_specs = [specs[i % len(specs)] for i in range(num_players)]
    else:
        player_specs = list(specs)
    labels: list[str] = []
    seen: dict[str, int] = {}
    for spec in player_specs:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    lineups: list[tuple[int, ...]]
    if len(player_specs) == num_players:
        lineups = [tuple(range(num_players))]
    else:
        lineups = list(itertools.combinations(range(len(player_specs)), num_players))
    return labels, player_specs, lineups


def seating(lineup: Sequence[int], rotation: int) -> tuple[int, ...]:
    """Player index at each seat: the lineup's i-th player sits at seat ``(i + rotation) % n``."""
    n = len(lineup)
    return tuple(lineup[(seat - rotation) % n] for seat in range(n))


def deal_seed(seed: int, deal: int) -> int:
    """The deal seed of deal number ``deal``: `numbered_deal_seeds`, the one scheme of every engine."""
    return int(numbered_deal_seeds(seed, deal))


def game_rng(seed: int, deal: int, lineup: int, rotation: int) -> np.random.Generator:
    """The players' randomness in one game: independent of chunking and workers."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(deal, _RECORD_KEY_POLICY, lineup, rotation)))
