"""Matches between players given as specs, with duplicate deals and confidence intervals.

Every deal (a deal seed for `engine.start_game`) is played once per seating:
the players of a lineup sit in every rotation (for two players: both
seatings), so each player gets every seat with the same cards and the luck of
the deal cancels out. Players see only their observation and action mask
(`rouba_env.players.base`). The games of a chunk of deals run together on one
`rouba_env.table.Table`; each game draws its players' randomness from its own
Generator (`game_rng`), so a game is the same in any chunk or worker.

Lineups:

* as many specs as seats: one lineup;
* fewer specs than seats: the specs are cycled to fill the seats (``a b`` at
  four seats plays ``a b a b``), or with ``fill="field"`` the first spec
  plays one seat against the others cycled over the rest (``a b`` at four
  seats plays ``a b b b``: one against the field); repeated specs become
  distinct players labelled ``a``, ``a#2``, ...;
* more specs than seats (a pool): every combination of ``num_players`` of
  them is a lineup (a round robin), all over the same deals.

Results per player: games, win rate with a Wilson 95% interval, mean score and
mean margin (own score minus the mean of the other seats) with normal 95%
intervals, and a per-seat breakdown. Wins: a sole top score counts 1; a k-way
tie for the top score counts 1/k to each tied player (a two-way tie: 0.5).
With three or more seats, or a pool, an openskill Plackett-Luce rating table
(mu, sigma, ordinal = mu - 3 sigma) is added, updated game by game in a fixed
order. Same seed, same results, whatever the number of worker processes.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
from typing import Callable, Iterable, Sequence

from rouba_env.checks import check_int
from rouba_env.evaluation.lineups import build_lineups
from rouba_env.evaluation.play import GameRecord, Chunk, chunks_of, play_chunk
from rouba_env.evaluation.results import EvaluationResult, summarize
from rouba_env.players.base import Policy
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS, RulesConfig, make_rules
from rouba_env.rules.seeding import DEAL_SEED_BOUND

MAX_GAMES = 1_000_000
"""The most games one evaluation plays: every game's record is kept in memory until the end."""
MAX_WORKERS = 256
"""The most worker processes one evaluation starts."""


def stand_in_names(players: Sequence["str | Policy"]) -> tuple[list[str], dict[str, Policy]]:
    """Specs as they are, and a unique stand-in name (``policy:NAME``) for each `Policy` object."""
    names: list[str] = []
    objects: dict[str, Policy] = {}
    for player in players:
        if isinstance(player, str):
            names.append(player)
            continue
        if not isinstance(player, Policy):
            raise ValueError(f"a player must be a spec string or a Policy, got {player!r}")
        known = next((name for name, obj in objects.items() if obj is player), None)
        if known is None:
            known = f"policy:{getattr(player, 'name', type(player).__name__)}"
            while known in objects:
                known += "'"
            objects[known] = player
        names.append(known)
    return names, objects


def evaluate(
    players: Sequence["str | Policy"],
    rules: RulesConfig | str | dict | None = None,
    games: int = 200,
    *,
    num_players: int | None = None,
    seed: int = 0,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    record_moves: bool = False,
    chunk_runner: "Callable[[Iterable[Chunk]], Iterable[list[GameRecord]]] | None" = None,
    fill: str = "cycle",
) -> EvaluationResult:
    """Play duplicate-deal matches between player specs and aggregate the results.

    Args:
        players: player specs (``random``, ``heuristic``, ``expert:samples=32``, ...)
            or ready `Policy` objects (a trained network, say; ``workers=1`` only,
            labelled ``policy:NAME``).
        rules: a `RulesConfig`, preset name, dict or None (standard); its
            ``num_players`` is replaced by ``num_players`` when given.
        games: games wanted; rounded up to whole deals (one deal = every
            lineup in every rotation), so the result may hold a few more.
        num_players: seats per game (default: the rules' own when given as a config
            or a dict with ``num_players``, else the number of specs within 2..8).
        seed: makes deals and the players' randomness reproducible.
        workers: processes (spawn); 1 plays in this process. Same results either way.
        progress: called with the number of games just finished.
        record_moves: keep every game's moves in its `GameRecord` (for
            `rouba_env.evaluation.records.save_game_records`); results are the same.
        chunk_runner: plays the chunks of deals elsewhere (e.g. on a Ray cluster,
            `rouba_env.evaluation.distributed`), yielding each chunk's records in
            any order; ``workers`` then only sets the chunk size. Same results.
        fill: how fewer specs than seats fill a table (module docstring).
    """
    if isinstance(players, str):
        players = [players]
    players = [player.strip() if isinstance(player, str) else player for player in players]  # as make_policy reads it
    config = table_rules(rules, num_players=num_players, specs=len(players))
    for name, value, maximum in (("games", games, MAX_GAMES), ("workers", workers, MAX_WORKERS)):
        check_int(name, value, 1, maximum)
    check_int("seed", seed, 0, DEAL_SEED_BOUND - 1)  # one bound for every seed a user gives
    players, objects = stand_in_names(players)
    if objects and (workers != 1 or chunk_runner is not None):
        raise ValueError("Policy objects are played in this process only: use workers=1, "
                         "or save the policy and pass its spec (checkpoint:PATH)")
    labels, player_specs, lineups = build_lineups(players, config.num_players, fill)
    built_here = {spec: objects[spec] if spec in objects else make_policy(spec, config)  # fail early on a bad spec
                  for spec in dict.fromkeys(player_specs)}
    in_batch = all(getattr(player, "plays_in_batch", False) for player in built_here.values())
    games_per_deal = len(lineups) * config.num_players
    deals = math.ceil(games / games_per_deal)
    rules_dict, specs, seatings = config.to_dict(), tuple(player_specs), tuple(lineups)
    chunks = (Chunk(rules_dict, specs, seatings, seed, chunk_deals, bool(record_moves))  # made as they are played
              for chunk_deals in chunks_of(deals, workers, games_per_deal, in_batch))
    records = play_chunks(chunks, players=[built_here[spec] for spec in player_specs], workers=workers,
                          progress=progress, chunk_runner=chunk_runner)
    return summarize(config, labels, player_specs=player_specs, lineups=lineups, seed=seed, deals=deals,
                     records=records)


def table_rules(rules: RulesConfig | str | dict | None, *, num_players: int | None, specs: int) -> RulesConfig:
    """The rules the tables play: ``rules`` at ``num_players`` seats, or where that is None at the rules' own
    seats when they name them (a config, a dict with ``num_players``), else at one seat per spec within 2..8."""
    rules_fix_seats = isinstance(rules, RulesConfig) or (isinstance(rules, dict) and "num_players" in rules)
    if num_players is None and not rules_fix_seats:
        num_players = min(max(MIN_PLAYERS, specs), MAX_PLAYERS)
    return make_rules(rules) if num_players is None else make_rules(rules, num_players=num_players)


def play_chunks(chunks: Iterable[Chunk], *, players: list[Policy], workers: int,
                progress: Callable[[int], None] | None,
                chunk_runner: "Callable[[Iterable[Chunk]], Iterable[list[GameRecord]]] | None") -> list[GameRecord]:
    """Every game of ``chunks``, played by ``chunk_runner``, in this process (by ``players``, one per spec of the
    chunks) or in ``workers`` processes; sorted by key, so the order they finish in does not matter."""
    records: list[GameRecord] = []
    if chunk_runner is not None:
        for done in chunk_runner(chunks):
            records.extend(done)
            if progress:
                progress(len(done))
    elif workers == 1:
        for chunk in chunks:
            done = play_chunk(chunk, players)
            records.extend(done)
            if progress:
                progress(len(done))
    else:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for future in concurrent.futures.as_completed([pool.submit(play_chunk, c) for c in chunks]):
                result = future.result()
                records.extend(result)
                if progress:
                    progress(len(result))
    records.sort(key=lambda record: record.key)
    return records
