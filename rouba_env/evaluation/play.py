"""Playing the games of an evaluation: one at a time on a `SingleGame`, or a chunk at once on the `Table`.

Both give the same games: each game keeps its deal seed and its own Generator (`game_rng`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from rouba_env.evaluation.lineups import game_rng, seating
from rouba_env.rules.seeding import numbered_deal_seeds
from rouba_env.players.base import Policy
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import RulesConfig
from rouba_env.streams import RowStreams
from rouba_env.table import Table

CHUNKS_PER_WORKER = 16
"""Deals are split in about this many chunks per worker (load balance vs. overhead)."""
BATCH_GAMES = 2048
"""Most games one batched chunk plays at once (progress is told after each chunk)."""



@dataclass(frozen=True, slots=True)
class GameRecord:
    """One finished game: which player sat where and the scores per seat (slotted: an evaluation keeps one per
    game, up to `rouba_env.evaluation.duplicate.MAX_GAMES`)."""

    deal: int
    lineup: int
    rotation: int
    deal_seed: int
    seats: tuple[int, ...]
    """Player index at each seat."""
    scores: tuple[int, ...]
    """Cards in each seat's pile at the end."""
    moves: tuple[tuple[int, int], ...] | None = field(default=None, compare=False)
    """(seat, action) of every move, kept only with ``evaluate(..., record_moves=True)``."""
    decisions: tuple[int, ...] | None = field(default=None, compare=False)
    """Moves each seat chose (wall-clock facts, so they never make two records differ)."""
    seconds: tuple[float, ...] | None = field(default=None, compare=False)
    """Seconds each seat's player spent choosing them."""

    @property
    def key(self) -> tuple[int, int, int]:
        return self.deal, self.lineup, self.rotation


@dataclass(frozen=True)
class Chunk:
    """Work for one process call: some deals, every lineup and rotation of each."""

    rules: dict
    player_specs: tuple[str, ...]
    lineups: tuple[tuple[int, ...], ...]
    seed: int
    deals: range
    """The deal numbers, as a range: a chunk's work is named, not listed."""
    record_moves: bool = False


def _policies_for(config: RulesConfig, player_specs: Sequence[str],
                  objects: dict[str, Policy] | None = None) -> list[Policy]:
    """One policy per player, built from the specs for this work only (checkpoints are read now, never reused stale).

    ``objects`` maps the stand-in names of ready `Policy` objects to them (in-process runs only).
    """
    objects = objects or {}
    return [objects[spec] if spec in objects else make_policy(spec, config) for spec in player_specs]


def _chunk_games(chunk: Chunk, num_players: int) -> list[tuple[int, int, int, tuple[int, ...]]]:
    """(deal, lineup index, rotation, player index at each seat) of every game of a chunk, in record order."""
    return [(deal, lineup_index, rotation, seating(lineup, rotation))
            for deal in chunk.deals for lineup_index, lineup in enumerate(chunk.lineups)
            for rotation in range(num_players)]


def play_chunk(chunk: Chunk, players: Sequence[Policy] | None = None) -> list[GameRecord]:
    """Top-level (spawn-safe) worker: play every game of a chunk at once on one `Table` (``players``: built
    already, in-process runs); the games, scores, moves and clocks, in record order.

    Each game keeps its deal seed and its own Generator (`game_rng`), and the players draw row by row from
    those (`RowStreams`), so every game is the one it would be alone.
    """
    config = RulesConfig.from_dict(chunk.rules)
    if players is None:
        players = _policies_for(config, chunk.player_specs)
    games = _chunk_games(chunk, config.num_players)
    moves: list[list[tuple[int, int]]] | None = [[] for _ in games] if chunk.record_moves else None

    def record(slots, seats, actions):
        for slot, seat, action in zip(slots.tolist(), seats.tolist(), actions.tolist()):
            moves[slot].append((seat, action))

    table = Table(config, len(games), before_move=None if moves is None else record)
    player_ids = np.array([table.add_player(player) for player in players], dtype=np.int64)  # one id per object
    slots = np.arange(len(games))
    seeds = numbered_deal_seeds(chunk.seed, np.array([deal for deal, *_ in games], dtype=np.uint64))
    table.seat(slots, player_ids[np.array([seats for *_, seats in games], dtype=np.int64)])
    table.start(slots, seeds.astype(np.int64))
    table.play_seated(RowStreams([game_rng(chunk.seed, deal, lineup, rotation)
                                  for deal, lineup, rotation, _ in games]))
    scores = table.scores(slots)
    return [GameRecord(deal, lineup, rotation, int(seeds[slot]), seats, tuple(scores[slot].tolist()),
                       None if moves is None else tuple(moves[slot]), tuple(table.decisions[slot].tolist()),
                       tuple(table.seconds[slot].tolist()))
            for slot, (deal, lineup, rotation, seats) in enumerate(games)]


def chunks_of(deals: int, workers: int, games_per_deal: int = 1, in_batch: bool = True) -> Iterator[range]:
    """The deals split in chunks, one range of deal numbers each, made as they are asked for: big ones (up to
    `BATCH_GAMES` games) where every player plays in batch, small ones where one plays row by row (a big batch
    gains it nothing, and small chunks tell progress and share the work among workers)."""
    if in_batch:  # as many games per batch as fit `BATCH_GAMES`, split evenly over the workers
        size = max(1, min(BATCH_GAMES // games_per_deal, math.ceil(deals / workers)))
    elif workers > 1:
        size = max(1, math.ceil(deals / (workers * CHUNKS_PER_WORKER)))
    else:
        size = max(1, min(deals, 16))
    return (range(start, min(deals, start + size)) for start in range(0, deals, size))
