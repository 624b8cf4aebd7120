"""Matches between players given as specs, with duplicate deals and confidence intervals.

Every deal (a deal seed for `engine.start_game`) is played once per seating:
the players of a lineup sit in every rotation (for two players: both
seatings), so each player gets every seat with the same cards and the luck of
the deal cancels out. Players see only their observation and action mask
(`rouba_env.players.base`). When every player plays in batch, the games of a
chunk run together on the batched table (`rouba_env.vector_table`); otherwise
one at a time on the reference engine's `Table`. Each game draws its players'
randomness from its own Generator (`game_rng`), so both give the same games.

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
import itertools
import math
import multiprocessing
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS, RulesConfig, make_rules
from rouba_env.players.base import Policy
from rouba_env.players.registry import make_policy
from rouba_env.checks import check_choice, check_int
from rouba_env.streams import RowStreams
from rouba_env.table import Table
from rouba_env.vector_table import VectorTable, plays_in_batch, require_batch_player
from rouba_env.evaluation.stats import RATINGS_NEED, PlayerStats, group_stats, player_stats, rating_table

DEAL_SEED_BITS = 63
CHUNKS_PER_WORKER = 16
"""Deals are split in about this many chunks per worker (load balance vs. overhead)."""
BATCH_GAMES = 2048
"""Most games one batched chunk plays at once (progress is told after each chunk)."""
ENGINES = ("auto", "batched", "single")
"""How an evaluation plays its games: on the batched table where every player plays in batch (``auto``),
always there (``batched``: an error otherwise), or one game at a time (``single``). Same results either way."""
_RECORD_KEY_POLICY = 1
"""spawn_key tag of a game's policy randomness (tag 0: the deal seed)."""


# ---------------------------------------------------------------------------
# Lineups, seatings and seeds
# ---------------------------------------------------------------------------


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
    """The deal seed of deal number ``deal``: a pure function of (seed, deal)."""
    words = np.random.SeedSequence(seed, spawn_key=(deal, 0)).generate_state(2, np.uint32)
    return (int(words[0]) << 32 | int(words[1])) >> (64 - DEAL_SEED_BITS)


def game_rng(seed: int, deal: int, lineup: int, rotation: int) -> np.random.Generator:
    """The players' randomness in one game: independent of chunking and workers."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(deal, _RECORD_KEY_POLICY, lineup, rotation)))


# ---------------------------------------------------------------------------
# Playing
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GameRecord:
    """One finished game: which player sat where and the scores per seat."""

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


def play_game(
    config: RulesConfig,
    policies: Sequence[Policy],
    deal_seed_value: int,
    rng: np.random.Generator,
    table: Table | None = None,
    on_move: Callable[[int, int], None] | None = None,
    clock: tuple[list[int], list[float]] | None = None,
) -> list[int]:
    """Play one game of a deal on a `Table` with ``policies[seat]`` at each seat; the final scores.

    A policy that returns anything but a legal action index is an `IllegalPlayerAction` (a ValueError)
    naming it and its seat. ``on_move(seat, action)`` is told every move (it changes nothing in the
    game). ``clock`` (two per-seat lists) counts each seat's decisions and adds up the seconds its
    player took. ``table`` lets a caller reuse one table (and its encoders) for many games.
    """
    if len(policies) != config.num_players:
        raise ValueError(f"need {config.num_players} policies (one per seat), got {len(policies)}")
    table = table or Table(config)
    table.seat(policies)
    table.before_move = on_move
    table.start_deal(deal_seed_value)
    table.play_seated(rng, clock=clock)
    return table.scores()


@dataclass(frozen=True)
class _Chunk:
    """Work for one process call: some deals, every lineup and rotation of each."""

    rules: dict
    player_specs: tuple[str, ...]
    lineups: tuple[tuple[int, ...], ...]
    seed: int
    deals: tuple[int, ...]
    record_moves: bool = False
    batched: bool = False
    """Play the chunk's games together on the batched table (every player plays in batch)."""


def _policies_for(config: RulesConfig, player_specs: Sequence[str],
                  objects: dict[str, Policy] | None = None) -> list[Policy]:
    """One policy per player, built from the specs for this work only (checkpoints are read now, never reused stale).

    ``objects`` maps the stand-in names of ready `Policy` objects to them (in-process runs only).
    """
    objects = objects or {}
    return [objects[spec] if spec in objects else make_policy(spec, config) for spec in player_specs]


def _chunk_games(chunk: _Chunk, num_players: int) -> list[tuple[int, int, int, tuple[int, ...]]]:
    """(deal, lineup index, rotation, player index at each seat) of every game of a chunk, in record order."""
    return [(deal, lineup_index, rotation, seating(lineup, rotation))
            for deal in chunk.deals for lineup_index, lineup in enumerate(chunk.lineups)
            for rotation in range(num_players)]


def _play_chunk(chunk: _Chunk, players: Sequence[Policy] | None = None) -> list[GameRecord]:
    """Top-level (spawn-safe) worker: play every game of a chunk (``players``: built already, in-process runs)."""
    config = RulesConfig.from_dict(chunk.rules)
    if players is None:
        players = _policies_for(config, chunk.player_specs)
    if chunk.batched:
        return _play_chunk_batched(chunk, config, players)
    table = Table(config)
    records = []
    for deal in chunk.deals:
        seed_value = deal_seed(chunk.seed, deal)
        for lineup_index, lineup in enumerate(chunk.lineups):
            for rotation in range(config.num_players):
                seats = seating(lineup, rotation)
                rng = game_rng(chunk.seed, deal, lineup_index, rotation)
                moves: list[tuple[int, int]] | None = [] if chunk.record_moves else None
                clock = ([0] * config.num_players, [0.0] * config.num_players)
                points = play_game(config, [players[p] for p in seats], seed_value, rng, table,
                                   on_move=None if moves is None else lambda s, a: moves.append((s, a)),
                                   clock=clock)
                records.append(GameRecord(deal, lineup_index, rotation, seed_value, seats, tuple(points),
                                          None if moves is None else tuple(moves), tuple(clock[0]),
                                          tuple(clock[1])))
    return records


def _play_chunk_batched(chunk: _Chunk, config: RulesConfig, players: Sequence[Policy]) -> list[GameRecord]:
    """Every game of a chunk at once on a `VectorTable`: the games, scores and moves of `_play_chunk`.

    Each game keeps its deal seed and its own Generator (`game_rng`), and the players draw row by
    row from those (`RowStreams`), so every game is the one the one-at-a-time path plays.
    """
    games = _chunk_games(chunk, config.num_players)
    moves: list[list[tuple[int, int]]] | None = [[] for _ in games] if chunk.record_moves else None

    def record(slots, seats, actions):
        for slot, seat, action in zip(slots.tolist(), seats.tolist(), actions.tolist()):
            moves[slot].append((seat, action))

    table = VectorTable(config, len(games), before_move=None if moves is None else record)
    player_ids = np.array([table.add_player(player) for player in players], dtype=np.int64)  # one id per object
    slots = np.arange(len(games))
    seeds = [deal_seed(chunk.seed, deal) for deal, *_ in games]
    table.seat(slots, player_ids[np.array([seats for *_, seats in games], dtype=np.int64)])
    table.start(slots, np.array(seeds, dtype=np.int64))
    table.play_seated(RowStreams([game_rng(chunk.seed, deal, lineup, rotation)
                                  for deal, lineup, rotation, _ in games]))
    scores = table.scores(slots)
    return [GameRecord(deal, lineup, rotation, seeds[slot], seats, tuple(scores[slot].tolist()),
                       None if moves is None else tuple(moves[slot]), tuple(table.decisions[slot].tolist()),
                       tuple(table.seconds[slot].tolist()))
            for slot, (deal, lineup, rotation, seats) in enumerate(games)]


def _chunks(deals: int, workers: int, games_per_deal: int = 1, batched: bool = False) -> list[tuple[int, ...]]:
    if batched:  # as many games per batch as fit `BATCH_GAMES`, split evenly over the workers
        size = max(1, min(BATCH_GAMES // games_per_deal, math.ceil(deals / workers)))
    elif workers > 1:
        size = max(1, math.ceil(deals / (workers * CHUNKS_PER_WORKER)))
    else:
        size = max(1, min(deals, 16))
    return [tuple(range(start, min(deals, start + size))) for start in range(0, deals, size)]


@dataclass
class EvaluationResult:
    """Everything an evaluation produced; `to_dict` is JSON-ready."""

    rules: RulesConfig
    labels: list[str]
    player_specs: list[str]
    lineups: list[tuple[int, ...]]
    seed: int
    deals: int
    records: list[GameRecord]
    players: list[PlayerStats]
    ratings: list[dict] | None
    lineup_results: list[dict] | None = None
    """For a pool: per lineup, each member's win rate and mean margin in that lineup's games."""
    groups: list[dict] | None = None
    """For a spec at several seats of one lineup (the field of ``A B B B``): their results as one row."""

    @property
    def games(self) -> int:
        return len(self.records)

    def to_dict(self, include_timing: bool = True) -> dict:
        """Everything as JSON-ready data; ``include_timing=False`` leaves out the wall-clock ``ms_per_decision``
        (the only part that differs between two runs of the same evaluation)."""
        results = [vars(stats) | {"per_seat": {str(k): v for k, v in stats.per_seat.items()}}
                   for stats in self.players]
        if not include_timing:
            results = [{k: v for k, v in row.items() if k != "ms_per_decision"} for row in results]
        return {
            "rules": self.rules.to_dict(),
            "num_players": self.rules.num_players,
            "players": self.labels,
            "player_specs": self.player_specs,
            "lineups": [[self.labels[p] for p in lineup] for lineup in self.lineups],
            "seed": self.seed,
            "deals": self.deals,
            "games": self.games,
            "tie_rule": "a k-way tie for the top score counts 1/k win to each tied player",
            "intervals": "win rate: Wilson 95%; mean score and margin: normal approximation 95%",
            "results": results,
            "ratings": self.ratings,
            "lineup_results": self.lineup_results,
            "groups": self.groups,
            "game_records": [[r.deal, r.lineup, r.rotation, list(r.seats), list(r.scores)] for r in self.records],
        }

    def format_table(self) -> str:
        """A plain-text table of the results (and ratings when present)."""
        width = max(len("player"), *(len(label) for label in self.labels))

        def interval(low, high, digits=1, scale=1.0):
            if low is None:
                return "n/a"
            return f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"

        lines = [
            f"{self.games} games ({self.deals} deals x every seating), {self.rules.num_players} players, seed {self.seed}",
            f"{'player':<{width}}  {'games':>6}  {'win %':>6}  {'95% CI':>14}  {'score':>6}  {'95% CI':>14}  "
            f"{'margin':>7}  {'95% CI':>14}  {'ms/move':>8}  per-seat win %",
        ]
        for s in self.players:
            seats = " ".join(f"s{seat}:{row['win_rate'] * 100:.1f}" for seat, row in s.per_seat.items())
            lines.append(
                f"{s.label:<{width}}  {s.games:>6}  {s.win_rate * 100:>6.1f}  {interval(s.win_low, s.win_high, 1, 100):>14}"
                f"  {s.mean_score:>6.2f}  {interval(s.score_low, s.score_high, 2):>14}"
                f"  {s.mean_margin:>+7.2f}  {interval(s.margin_low, s.margin_high, 2):>14}"
                f"  {'n/a' if s.ms_per_decision is None else f'{s.ms_per_decision:.2f}':>8}  {seats}"
            )
        if self.groups:
            lines.append("")
            lines.append("together (the share of games one of them won):")
            for row in self.groups:
                lines.append(f"{row['label']:<{width}}  {row['games']:>6}  {row['win_rate'] * 100:>6.1f}  "
                             f"{interval(row['win_low'], row['win_high'], 1, 100):>14}  "
                             f"{row['mean_score']:>6.2f}  (mean score per seat)")
        if self.lineup_results:
            lines.append("")
            lines.append("per lineup (win %, mean margin):")
            for row in self.lineup_results:
                members = ", ".join(f"{m['player']} {m['win_rate'] * 100:.1f}% {m['mean_margin']:+.2f}"
                                    for m in row["members"])
                lines.append(f"  {members}  ({row['games']} games)")
        if self.ratings is None and (self.rules.num_players >= 3 or len(self.lineups) > 1):
            lines.append("")
            lines.append(f"(no rating table: it needs {RATINGS_NEED})")
        if self.ratings:
            lines.append("")
            lines.append(f"{'rating (openskill PlackettLuce)':<{width + 20}}  {'mu':>7}  {'sigma':>6}  {'ordinal':>7}")
            for row in self.ratings:
                lines.append(f"{row['player']:<{width + 20}}  {row['mu']:>7.2f}  {row['sigma']:>6.2f}  {row['ordinal']:>7.2f}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------


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
    num_players: int | None = None,
    seed: int = 0,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    record_moves: bool = False,
    chunk_runner: "Callable[[list[_Chunk]], Iterable[list[GameRecord]]] | None" = None,
    fill: str = "cycle",
    engine: str = "auto",
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
        engine: one of `ENGINES`: ``auto`` plays on the batched table (`rouba_env.vector_table`,
            thousands of games at once) when every player plays in batch (random, greedy,
            heuristic, checkpoints), else one game at a time; ``batched`` insists (ValueError
            for a player that cannot), ``single`` never batches. The same games and results.
    """
    if isinstance(players, str):
        players = [players]
    players = list(players)
    rules_fix_seats = isinstance(rules, RulesConfig) or (isinstance(rules, dict) and "num_players" in rules)
    if num_players is None and not rules_fix_seats:
        num_players = min(max(MIN_PLAYERS, len(players)), MAX_PLAYERS)
    config = make_rules(rules) if num_players is None else make_rules(rules, num_players=num_players)
    for name, value, minimum in (("games", games, 1), ("workers", workers, 1), ("seed", seed, 0)):
        check_int(name, value, minimum)
    players, objects = stand_in_names(players)
    if objects and (workers != 1 or chunk_runner is not None):
        raise ValueError("Policy objects are played in this process only: use workers=1, "
                         "or save the policy and pass its spec (checkpoint:PATH)")
    labels, player_specs, lineups = build_lineups(players, config.num_players, fill)
    check_choice("engine", engine, ENGINES)
    built_here = {spec: objects[spec] if spec in objects else make_policy(spec, config)  # fail early on a bad spec
                  for spec in dict.fromkeys(player_specs)}
    if engine == "batched":
        for player in built_here.values():
            require_batch_player(player, "engine='batched'")
    batched = engine == "batched" or (engine == "auto" and all(map(plays_in_batch, built_here.values())))
    games_per_deal = len(lineups) * config.num_players
    deals = math.ceil(games / games_per_deal)
    chunks = [
        _Chunk(config.to_dict(), tuple(player_specs), tuple(lineups), seed, chunk_deals, bool(record_moves), batched)
        for chunk_deals in _chunks(deals, workers, games_per_deal, batched)
    ]
    records: list[GameRecord] = []
    if chunk_runner is not None:
        for done in chunk_runner(chunks):
            records.extend(done)
            if progress:
                progress(len(done))
    elif workers == 1:
        built = [built_here[spec] for spec in player_specs]
        for chunk in chunks:
            done = _play_chunk(chunk, built)
            records.extend(done)
            if progress:
                progress(len(done))
    else:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for future in concurrent.futures.as_completed([pool.submit(_play_chunk, c) for c in chunks]):
                result = future.result()
                records.extend(result)
                if progress:
                    progress(len(result))
    records.sort(key=lambda record: record.key)
    return summarize(config, labels, player_specs, lineups, seed, deals, records)


def summarize(
    config: RulesConfig,
    labels: list[str],
    player_specs: list[str],
    lineups: list[tuple[int, ...]],
    seed: int,
    deals: int,
    records: list[GameRecord],
) -> EvaluationResult:
    """Statistics, per-lineup results and (3+ seats or a pool) ratings from game records."""
    stats = [player_stats(label, spec, i, records) for i, (label, spec) in enumerate(zip(labels, player_specs))]
    is_pool = len(lineups) > 1
    ratings = rating_table(labels, records) if config.num_players >= 3 or is_pool else None
    lineup_results = None
    if is_pool:
        lineup_results = []
        for index, lineup in enumerate(lineups):
            subset = [r for r in records if r.lineup == index]
            members = []
            for player in lineup:
                s = player_stats(labels[player], player_specs[player], player, subset)
                members.append({"player": s.label, "win_rate": s.win_rate, "win_low": s.win_low,
                                "win_high": s.win_high, "mean_margin": s.mean_margin})
            lineup_results.append({"games": len(subset), "members": members})
    groups = None
    if not is_pool:
        by_spec: dict[str, list[int]] = {}
        for player, spec in enumerate(player_specs):
            by_spec.setdefault(spec, []).append(player)
        groups = [group_stats(spec, players, records) for spec, players in by_spec.items() if len(players) > 1] or None
    return EvaluationResult(config, labels, player_specs, lineups, seed, deals, records, stats, ratings, lineup_results,
                            groups)
