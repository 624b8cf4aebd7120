"""Games played in the browser: one human seat against policies, kept per game id.

Every request is checked here and a bad one raises `ApiError` with the HTTP
status and a message: a malformed or illegal move is 400, an unknown (or
expired) game 404, a full server 503. Opponents move as soon as it is their
turn, inside the request that made it so; each of their moves is logged as an
event with the view after it, so that the page can show them one by one.
"""

from __future__ import annotations

import re
import secrets
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rouba_env.checks import is_int, shown
from rouba_env.encoding.actions import describe_move
from rouba_env.evaluation.records import RECORD_SUFFIX, ReplayRecord, write_record
from rouba_env.players.checkpoint import METADATA_FILE, SHIPPED_ALIASES, shipped_dir, shipped_names
from rouba_env.players.registry import BUILTIN_PLAYERS, make_policy, parse_spec
from rouba_env.rules import engine, scoring
from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS, PRESET_FIELDS, make_rules
from rouba_env.rules.seeding import DEAL_SEED_BOUND
from rouba_env.table import IllegalPlayerAction
from rouba_env.single_game import SingleGame
from rouba_env.web.views import card_json, state_view

HUMAN = "human"
"""Name of the browser player's seat in records (the player spec of that seat)."""
VIEWER_NAME = "you"
"""What the page calls the browser player, in the seats and in the move texts."""
DEFAULT_TTL_S = 30 * 60
"""Idle games are forgotten after this many seconds."""
DEFAULT_MAX_GAMES = 64
MAX_SPEC_LENGTH = 200
GAME_ID_BYTES = 16
GAME_ID_PATTERN = re.compile(r"^[0-9a-f]{%d}$" % (2 * GAME_ID_BYTES))
SHIPPED_CHECKPOINT_PATTERN = re.compile(r"^[A-Za-z0-9_-]+$")
CREATE_FIELDS = {"num_players", "opponents", "rules", "seat", "seed"}
CHECKPOINT_OPTIONS = ("policy", "opponent")
"""Spec options that may name a checkpoint (``expert:policy=2p``, ``belief_search:opponent=2p``): looked up by
name too (an ``opponent`` may also name a scripted model, `SCRIPTED_OPPONENTS`)."""
SCRIPTED_OPPONENTS = ("policy", "heuristic", "greedy")
"""What a search's ``opponent=`` may name besides a checkpoint."""
WEB_BUDGETS = {"samples": 256, "max_scale": 4, "max_moves": 24, "endgame_nodes": 20_000, "depth": 8,
               "simulations": 200, "worlds": 64}
"""The most a browser game's opponent may ask of each search budget: every move is computed while the page
waits, with up to seven such opponents at an 8-seat table."""
PLAYER_SUGGESTIONS = ("belief_search", "heuristic", "greedy", "random", "expert", "search", "checkpoint:2p",
                      "checkpoint:mixed")
"""Specs the page offers in its opponent lists (any other valid spec may be typed), the hardest first."""
PLAYER_NOTES = {
    "belief_search": "the hardest: plays every move out in worlds drawn from what your moves say about your hand "
                     "(two seats with its default network; its think time is shown beside each move)",
    "checkpoint:2p": "the shipped two-seat network",
    "checkpoint:mixed": "the shipped network for 2 to 4 seats",
}
"""What the page says beside a suggestion."""


class ApiError(Exception):
    """A request that cannot be served: HTTP ``status`` and a message for the user."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def _is_int(value) -> bool:
    return isinstance(value, int) and is_int(value)


def available_checkpoints(folder: "Path | None") -> dict[str, Path]:
    """Checkpoint name -> folder: the shipped ones, and the checkpoint folders directly inside ``folder``.

    The browser names checkpoints only from this listing, never by path.
    """
    names = {}
    for name in shipped_names():
        names[name] = shipped_dir() / SHIPPED_ALIASES.get(name, name)
    if folder is not None:
        for child in sorted(folder.iterdir()):
            if (child.is_dir() and not child.is_symlink() and SHIPPED_CHECKPOINT_PATTERN.match(child.name)
                    and (child / METADATA_FILE).is_file()):
                names[child.name] = child.resolve()
    return names


def check_opponent_spec(spec, checkpoints: dict[str, Path]) -> tuple[str, str]:
    """(spec as shown, spec to build the player from): a built-in player, or a checkpoint named from ``checkpoints``."""
    if not isinstance(spec, str) or not spec.strip() or len(spec) > MAX_SPEC_LENGTH:
        raise bad_request(f"an opponent must be a player spec string of at most {MAX_SPEC_LENGTH} characters, "
                          f"got {spec!r}")
    try:
        name, argument, options = parse_spec(spec)
    except ValueError as error:
        raise bad_request(str(error)) from None
    if name not in BUILTIN_PLAYERS:
        raise bad_request(f"unknown player {name!r} in spec {spec!r}; known players: {sorted(BUILTIN_PLAYERS)}")

    def by_name(value: str) -> str:
        """A checkpoint named in a spec, as a path from the by-name table only (never a path given by the page)."""
        checkpoint = value.removeprefix("checkpoint:")
        if checkpoint not in checkpoints:
            raise bad_request(f"spec {spec!r}: the browser loads checkpoints by name only, one of "
                              f"{sorted(checkpoints)} (start the server with --checkpoints DIR to offer the "
                              f"checkpoint folders in DIR)")
        return str(checkpoints[checkpoint])

    built = dict(options)
    for key, value in options.items():
        if key in CHECKPOINT_OPTIONS:
            built[key] = value if key == "opponent" and value in SCRIPTED_OPPONENTS else by_name(value)
        elif key in WEB_BUDGETS:
            if not (value.isascii() and value.isdigit()):
                raise bad_request(f"spec {spec!r}: {key} must be a whole number, got {value[:20]!r}")
            if len(value) > 9 or int(value) > WEB_BUDGETS[key]:
                raise bad_request(f"spec {spec!r}: {key} may be at most {WEB_BUDGETS[key]} in browser games "
                                  f"(each move is played while the page waits), got {value[:20]!r}")
    if name == "checkpoint":
        argument = by_name(argument or "")
    head = name + (f":{argument}" if argument is not None else "")
    extra = "".join(f",{key}={value}" for key, value in built.items())
    return spec, head + ("" if not extra else (extra if argument is not None else ":" + extra[1:]))


class WebGame:
    """One game: the engine state, the human seat, the opponents' policies and the event log."""

    def __init__(self, game_id: str, rules, *, human_seat: int, specs: Sequence[str], policies: dict,
                 rng: np.random.Generator, now: float):
        self.game_id = game_id
        self.rules = rules
        self.human_seat = human_seat
        self.players = list(specs)
        """Name at each seat (``human`` for the browser's)."""
        self.policies = policies
        self.rng = rng
        self.single_game = SingleGame(rules, illegal_action="raise", seats=[policies.get(seat) for seat in range(len(specs))],
                           before_move=self._describe, after_move=self._log)
        """The game; the human's seat is the open one."""
        self.encoding = self.single_game.actions
        self.deal_seed = int(rng.integers(0, DEAL_SEED_BOUND))
        self.single_game.start_deal(self.deal_seed)
        self._description = ""
        self._thought = self.single_game.seconds_thinking()
        """Each seat's thinking seconds before the move being played."""
        self._think = 0.0
        """The seconds the seated player took to choose the move being played."""
        self.moves: list[tuple[int, int]] = []
        self.events: list[dict] = []
        self.polled = 0
        """Events already sent by a poll."""
        self.last_used = now
        self.lock = threading.Lock()
        self.saved_path: Path | None = None
        self.save_error: str | None = None
        """Why the finished game could not be saved, if it could not."""

    def names(self) -> list[str]:
        return [VIEWER_NAME if seat == self.human_seat else f"{spec} (player {seat})"
                for seat, spec in enumerate(self.players)]

    @property
    def state(self):
        """The reference `GameState` of the game."""
        return self.single_game.state

    def _describe(self, seat: int, action: int) -> None:
        self._description = describe_move(self.state, self.encoding.decode(action), seat, viewer=self.human_seat)
        spent = self.single_game.seconds_thinking()
        self._think = spent[seat] - self._thought[seat]
        self._thought = spent

    def _log(self, seat: int, action: int) -> None:
        self.moves.append((seat, action))
        self.events.append({
            "index": len(self.events),
            "seat": seat,
            "name": self.names()[seat],
            "action": action,
            "card": card_json(self.state.last_move[2]),
            "description": self._description,
            "think_seconds": None if seat == self.human_seat else round(self._think, 3),
            "view": state_view(self.state, self.names(), self.human_seat),
        })

    def play_opponents(self) -> None:
        """Let the policies move until it is the human's turn or the game is over.

        An opponent that returns an illegal action (a broken checkpoint, say) is an error of the server's
        players, not of the request: a 500 that names the player, and the game stays where it was.
        """
        try:
            self.single_game.play_seated(self.rng)
        except IllegalPlayerAction as error:
            print(f"rouba-play --web: {error}", file=sys.stderr)
            raise ApiError(500, f"an opponent failed: {error}") from None

    def play_human(self, body) -> int:
        """Check and play the human's move ``{"action": INT}``; the index of its event."""
        if not isinstance(body, dict) or set(body) != {"action"}:
            raise bad_request(f'a move must be a JSON object {{"action": INT}}, got {body!r}')
        action = body["action"]
        if not _is_int(action):
            raise bad_request(f"action must be an integer, got {action!r}")
        if self.single_game.over:
            raise bad_request("the game is over: no more moves")
        first_event = len(self.events)
        try:
            self.single_game.play(action, who="you")
        except ValueError as error:
            raise bad_request(str(error)) from None
        self.play_opponents()
        return first_event

    def view(self, since: int) -> dict:
        """The human seat's view with its legal moves and the events from number ``since`` on."""
        view = state_view(self.state, self.names(), self.human_seat, self.encoding)
        view.update({
            "game_id": self.game_id,
            "human_seat": self.human_seat,
            "players": self.players,
            "rules": self.rules.to_dict(),
            "events": self.events[since:],
            "next_event": len(self.events),
            "saved": self.saved_path.name if self.saved_path else None,
            "save_error": self.save_error,
        })
        self.polled = len(self.events)
        return view

    def record(self) -> ReplayRecord:
        finished = engine.is_terminal(self.state)
        return ReplayRecord(self.rules, self.deal_seed, self.players, list(self.moves),
                            scoring.scores(self.state) if finished else None,
                            {"source": "web", "human_seat": self.human_seat, "game_id": self.game_id})


WARM_UP_OPPONENT = "checkpoint:2p"
"""The opponent of the server's throwaway first game (`GameStore.warm_up`): a network, so its kernels are
compiled too."""


class GameStore:
    """Games by id, with a time to live for idle games and a cap on how many are kept.

    ``clock`` gives seconds (monotonic); tests pass their own. ``save_folder``:
    each finished game's record is written there.
    """

    def __init__(self, ttl_s: float = DEFAULT_TTL_S, *, max_games: int = DEFAULT_MAX_GAMES,
                 save_folder: "str | Path | None" = None, clock: Callable[[], float] = time.monotonic,
                 seed: int | None = None, checkpoint_folder: "str | Path | None" = None):
        if not ttl_s > 0:
            raise ValueError(f"ttl_s must be positive, got {ttl_s!r}")
        if not _is_int(max_games) or max_games < 1:
            raise ValueError(f"max_games must be an int >= 1, got {max_games!r}")
        self.ttl_s = ttl_s
        self.max_games = max_games
        self.save_folder = Path(save_folder) if save_folder is not None else None
        self.checkpoint_folder = Path(checkpoint_folder) if checkpoint_folder is not None else None
        """Its checkpoint subfolders may be opponents, by name (``checkpoint:NAME``)."""
        self.clock = clock
        self.seeds = np.random.SeedSequence(seed)
        """Each game's randomness is spawned from this (``seed`` None: fresh entropy)."""
        self.games: dict[str, WebGame] = {}
        self.lock = threading.Lock()

    def warm_up(self) -> None:
        """Play one throwaway game against the shipped 2-player network, the human taking the first legal
        move each turn, and ask for its views: numba compiles (or loads) the engine, the views and the
        network now, before the server answers anyone, so that no request waits on the compiler."""
        rules, seat, _, specs, policies = self.check_new_game(
            {"num_players": 2, "opponents": [WARM_UP_OPPONENT], "seed": 0})
        game = WebGame("warm-up", rules, human_seat=seat, specs=specs, policies=policies,
                       rng=np.random.default_rng(0), now=self.clock())
        game.play_opponents()
        while not game.single_game.over:
            game.view(0)
            game.play_human({"action": int(np.flatnonzero(game.single_game.mask(seat))[0])})
        game.view(0)

    def expire(self) -> list[str]:
        """Forget games idle for longer than the time to live; their ids."""
        now = self.clock()
        with self.lock:
            old = [game_id for game_id, game in self.games.items() if now - game.last_used > self.ttl_s]
            for game_id in old:
                del self.games[game_id]
        return old

    def create(self, body) -> WebGame:
        """A new game from ``{"num_players", "opponents", "rules"?, "seat"?, "seed"?}``; opponents move first if due."""
        rules, seat, seed, specs, policies = self.check_new_game(body)
        self.expire()
        with self.lock:
            if len(self.games) >= self.max_games:  # finished games make room, the longest finished first
                finished = sorted((g.last_used, game_id) for game_id, g in self.games.items() if g.single_game.over)
                for _, game_id in finished[: len(self.games) - self.max_games + 1]:
                    del self.games[game_id]
            if len(self.games) >= self.max_games:
                raise ApiError(503, f"too many games in play ({self.max_games}); "
                                    f"finish one or wait for idle games to expire")
            game_id = secrets.token_hex(GAME_ID_BYTES)
            seeds = np.random.SeedSequence(seed) if seed is not None else self.seeds.spawn(1)[0]
            game = WebGame(game_id, rules, human_seat=seat, specs=specs, policies=policies,
                           rng=np.random.default_rng(seeds), now=self.clock())
            self.games[game_id] = game
        with game.lock:
            game.play_opponents()
            self._save_if_over(game)
        return game

    def check_new_game(self, body) -> tuple:
        """(rules, seat, seed, specs per seat, policies per opponent seat) of a new game's request; 400 if bad."""
        if not isinstance(body, dict):
            raise bad_request(f"a new game needs a JSON object, got {type(body).__name__}")
        unknown = set(body) - CREATE_FIELDS
        if unknown:
            raise bad_request(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(CREATE_FIELDS)}")
        asked = body.get("num_players")
        if not isinstance(asked, int) or not _is_int(asked) or not MIN_PLAYERS <= asked <= MAX_PLAYERS:
            raise bad_request(f"num_players must be an int in {MIN_PLAYERS}..{MAX_PLAYERS}, got {shown(asked)}")
        num_players = asked
        opponents = body.get("opponents")
        if not isinstance(opponents, list) or len(opponents) != num_players - 1:
            raise bad_request(f"opponents must be a list of {num_players - 1} player specs "
                              f"(one per other seat), got {opponents!r}")
        checked = [check_opponent_spec(spec, available_checkpoints(self.checkpoint_folder)) for spec in opponents]
        opponents = [shown for shown, _ in checked]
        preset = body.get("rules", "standard")
        if not isinstance(preset, str) or preset not in PRESET_FIELDS:
            raise bad_request(f"rules must be the name of a preset, one of {sorted(PRESET_FIELDS)}; got {shown(preset)}")
        seat = body.get("seat", 0)
        if not _is_int(seat) or not 0 <= seat < num_players:
            raise bad_request(f"seat must be an int in 0..{num_players - 1}, got {shown(seat)}")
        seed = body.get("seed")
        if seed is not None and (not _is_int(seed) or not 0 <= seed < DEAL_SEED_BOUND):
            raise bad_request(f"seed must be null or an int in 0..{DEAL_SEED_BOUND - 1}, got {shown(seed)}")
        try:
            rules = make_rules(preset, num_players=num_players)
        except ValueError as error:  # a preset too small for the table: its deck cannot deal everyone
            raise bad_request(f"rules {preset!r} at {num_players} players: {error}") from None
        others = [s for s in range(num_players) if s != seat]
        try:
            policies = {s: make_policy(build, rules) for s, (_, build) in zip(others, checked)}
        except (ValueError, FileNotFoundError) as error:
            message = str(error)
            for name, path in available_checkpoints(self.checkpoint_folder).items():
                message = message.replace(str(path), name)  # the name the page sent, never where it is kept
            raise bad_request(message) from None
        specs = [HUMAN] * num_players
        for s, spec in zip(others, opponents):
            specs[s] = spec
        return rules, seat, seed, specs, policies

    def get(self, game_id: str) -> WebGame:
        """The game with this id (its idle clock restarted); 404 if unknown or expired."""
        if not isinstance(game_id, str) or not GAME_ID_PATTERN.match(game_id):
            raise ApiError(404, f"no game {game_id!r}")
        self.expire()
        with self.lock:
            game = self.games.get(game_id)
            if game is None:
                raise ApiError(404, f"no game {game_id!r} (unknown, or expired after {self.ttl_s:g} s idle)")
            game.last_used = self.clock()
        return game

    def play(self, game_id: str, body) -> dict:
        """Play the human's move in a game; its view with the events from that move on."""
        game = self.get(game_id)
        with game.lock:
            first_event = game.play_human(body)
            self._save_if_over(game)
            return game.view(first_event)

    def poll(self, game_id: str, since: int | None = None) -> dict:
        """A game's view with the events since ``since`` (default: since the last poll)."""
        game = self.get(game_id)
        with game.lock:
            if since is None:
                since = game.polled
            if not 0 <= since <= len(game.events):
                raise bad_request(f"since must be in 0..{len(game.events)}, got {since}")
            return game.view(since)

    def _save_if_over(self, game: WebGame) -> None:
        if self.save_folder is None or game.saved_path is not None or not engine.is_terminal(game.state):
            return
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        try:
            game.saved_path = write_record(game.record(),
                                           self.save_folder / f"web_{stamp}_{game.game_id[:8]}{RECORD_SUFFIX}")
        except OSError as error:  # the game itself is fine: say so to the page and to the operator
            game.save_error = str(error)
            print(f"rouba-play --web: {error}", file=sys.stderr)
