"""Game records: one game as JSON data from which it replays exactly.

A record holds the rules (`RulesConfig.to_dict`), the deal seed, the player
at each seat, every move as ``[seat, action]`` and the final scores. Actions
are indices of the unpadded `ActionEncoding` of the record's rules (no
``max_players`` padding). Replaying is dealing ``deal_seed`` at a `SingleGame` and playing
each move there; `replay_states` does that and
checks that every move is made by the seat to act and that the final scores
match. Records are written by ``rouba-evaluate --save-games DIR`` and by
browser play (`rouba_env.web`).

File layout (one JSON object per file)::

    {"format": "rouba-monte-game", "version": 1,
     "rules": {...}, "deal_seed": 123, "players": ["heuristic", "random"],
     "moves": [[0, 57], [1, 12], ...], "scores": [30, 22],
     "info": {...}}          # free-form: where the game comes from
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from rouba_env.checks import is_int
from rouba_env.files import write_atomically
from rouba_env.rules import engine
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.seeding import DEAL_SEED_BOUND
from rouba_env.single_game import SingleGame

RECORD_FORMAT = "rouba-monte-game"
RECORD_VERSION = 1
MAX_RECORD_BYTES = 4 * 1024 * 1024
"""Largest game record file read (the browser lists and serves only records within it)."""
RECORD_SUFFIX = ".json"


def _fail(message: str) -> None:
    raise ValueError(f"invalid game record: {message}")


def _is_int(value) -> bool:
    return isinstance(value, int) and is_int(value)


@dataclass
class ReplayRecord:
    """One game as data; `to_dict` / `from_dict` are the JSON form (see the module docstring)."""

    rules: RulesConfig
    deal_seed: int
    players: list[str]
    """Who sat at each seat (player specs, or ``human``)."""
    moves: list[tuple[int, int]] = field(default_factory=list)
    """(seat, action index) of every move in order."""
    scores: list[int] | None = None
    """Cards in each seat's pile at the end; None for an unfinished game."""
    info: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "rules": self.rules.to_dict(),
            "deal_seed": int(self.deal_seed),
            "players": list(self.players),
            "moves": [[int(seat), int(action)] for seat, action in self.moves],
            "scores": None if self.scores is None else [int(points) for points in self.scores],
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, data) -> "ReplayRecord":
        """The record of a JSON object; ValueError naming the first bad field (moves are checked by `replay_states`)."""
        if not isinstance(data, dict):
            _fail(f"expected a JSON object, got {type(data).__name__}")
        version = data.get("version")
        if data.get("format") != RECORD_FORMAT or not _is_int(version) or version != RECORD_VERSION:
            _fail(f"format/version must be {RECORD_FORMAT!r}/{RECORD_VERSION}, "
                  f"got {data.get('format')!r}/{data.get('version')!r}")
        if not isinstance(data.get("rules"), dict):
            _fail("'rules' must be an object of RulesConfig fields")
        rules = RulesConfig.from_dict(data["rules"])
        seed = data.get("deal_seed")
        if not _is_int(seed) or not 0 <= seed < DEAL_SEED_BOUND:
            _fail(f"deal_seed must be an int in [0, 2**63), got {seed!r}")
        players = data.get("players")
        if (not isinstance(players, list) or len(players) != rules.num_players
                or not all(isinstance(p, str) for p in players)):
            _fail(f"players must be a list of {rules.num_players} strings, got {players!r}")
        moves = data.get("moves")
        if not isinstance(moves, list) or not all(
                isinstance(m, list) and len(m) == 2 and all(_is_int(x) for x in m) for m in moves):
            _fail("moves must be a list of [seat, action] integer pairs")
        scores = data.get("scores")
        if scores is not None and (not isinstance(scores, list) or len(scores) != rules.num_players
                                   or not all(_is_int(x) for x in scores)):
            _fail(f"scores must be null or a list of {rules.num_players} ints, got {scores!r}")
        info = data.get("info", {})
        if not isinstance(info, dict):
            _fail(f"info must be an object, got {type(info).__name__}")
        return cls(rules, seed, list(players), [(s, a) for s, a in moves], scores, info)


def replay_states(record: ReplayRecord) -> list[engine.GameState]:
    """Every state of the game: the deal, then the state after each move (``len(moves) + 1`` states).

    The game is replayed on a `SingleGame` (the rules core, naming every card). ValueError if a move is out of
    turn or illegal, or if the record's final scores differ from the replayed game's.
    """
    table = SingleGame(record.rules, illegal_action="raise")
    table.start_deal(record.deal_seed)
    states = [table.require_started("replaying")]
    for number, (seat, action) in enumerate(record.moves):
        if seat != table.current:
            _fail(f"move {number} is by seat {seat} but seat {table.current} is to act")
        try:
            table.play(action, who=f"seat {seat}")
        except ValueError as error:
            _fail(f"move {number} ({seat}, {action}): {error}")
        states.append(table.require_started("replaying"))
    if record.scores is not None:
        if not table.over:
            _fail(f"scores given but the game is not over after {len(record.moves)} moves")
        if table.scores() != list(record.scores):
            _fail(f"recorded scores {record.scores} differ from the replayed {table.scores()}")
    return states


def record_to_json(record: ReplayRecord) -> bytes:
    return (json.dumps(record.to_dict(), indent=1) + "\n").encode()


def write_record(record: ReplayRecord, path: "str | os.PathLike") -> Path:
    """Write one record (atomically) and return its path."""
    path = Path(path)
    write_atomically(path, record_to_json(record))
    return path


def load_record(path: "str | os.PathLike") -> ReplayRecord:
    """Read one record file; ValueError for a file that is not valid JSON or not a record."""
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_RECORD_BYTES:
        raise ValueError(f"{path.name} has {size} bytes; a game record has at most {MAX_RECORD_BYTES} "
                         f"(a whole game at 8 seats is a few kilobytes)")
    try:
        with path.open("rb") as file:
            text = file.read(MAX_RECORD_BYTES + 1).decode("utf-8")
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path.name} is not valid JSON: {error}") from None
    except RecursionError:
        raise ValueError(f"{path.name} is nested too deeply to be a game record") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path.name} is not UTF-8 text") from None
    return ReplayRecord.from_dict(data)


def evaluation_records(result) -> list[tuple[str, ReplayRecord]]:
    """(file name, record) of every game of an `EvaluationResult` made with ``record_moves=True``."""
    records = []
    for game in result.records:
        if game.moves is None:
            raise ValueError("this evaluation kept no moves: run evaluate(..., record_moves=True) to save games")
        name = f"deal{game.deal:05d}_lineup{game.lineup:03d}_rotation{game.rotation}{RECORD_SUFFIX}"
        info = {"source": "evaluate", "seed": result.seed, "deal": game.deal, "lineup": game.lineup,
                "rotation": game.rotation, "labels": [result.labels[p] for p in game.seats]}
        records.append((name, ReplayRecord(result.rules, game.deal_seed,
                                           [result.player_specs[p] for p in game.seats],
                                           list(game.moves), list(game.scores), info)))
    return records


def save_game_records(result_or_records: "object | Iterable[ReplayRecord]", folder: "str | os.PathLike") -> list[Path]:
    """Write one JSON file per game into ``folder``; the paths written.

    Takes an `EvaluationResult` (evaluated with ``record_moves=True``; files
    named by deal, lineup and rotation) or an iterable of `ReplayRecord`
    (files ``game00000.json``, ...).
    """
    from rouba_env.evaluation.results import EvaluationResult

    if isinstance(result_or_records, EvaluationResult):
        named = evaluation_records(result_or_records)
    else:
        named = []
        record: object
        for index, record in enumerate(result_or_records):  # type: ignore[arg-type]  # checked just below
            if not isinstance(record, ReplayRecord):
                raise ValueError(f"expected ReplayRecord objects or an EvaluationResult, got {type(record).__name__}")
            named.append((f"game{index:05d}{RECORD_SUFFIX}", record))
    folder = Path(folder)
    return [write_record(record, folder / name) for name, record in named]


def record_files(folder: "str | os.PathLike") -> list[str]:
    """Sorted names of the regular ``*.json`` files directly in ``folder`` (symbolic links left out)."""
    names: list[str] = []
    with os.scandir(os.fspath(folder)) as entries:
        for entry in entries:
            if entry.name.endswith(RECORD_SUFFIX) and entry.is_file(follow_symlinks=False):
                names.append(entry.name)
    return sorted(names)

