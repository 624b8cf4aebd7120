"""Play and watch rouba-monte in the browser: a small JSON server on the standard library.

    rouba-play --web [--port 8000] [--host 127.0.0.1] [--replays DIR] [--save-games DIR]

Routes (everything else is 404; every asset is served from this package, no CDN):

=======  ===============================  ==========================================
GET      ``/``, ``/static/NAME``          the page, its script, card drawing and style
GET      ``/api/options``                 table sizes, rules presets, player suggestions
POST     ``/api/games``                   new game (see `GameStore.create`)
GET      ``/api/games/ID[?since=N]``      the human seat's view, events since N
                                          (default: since the last poll)
POST     ``/api/games/ID/moves``          ``{"action": INT}``: play, opponents answer
GET      ``/api/replays``                 record file names in the replay folder
GET      ``/api/replays/NAME?step=K&view=full|SEAT``  one step of a record
=======  ===============================  ==========================================

Errors are JSON ``{"error": message}`` with status 400 (bad request or
illegal move), 403 (a write from another site's page), 404 (unknown game,
record or path), 405 (a method other than GET, HEAD and POST), 411/413
(missing or too large body), 415 (a write whose Content-Type is not
``application/json``), 421 (a Host header
naming another machine, against DNS rebinding while bound to loopback), 503
(too many games).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from rouba_env.files import check_writable
from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS, PRESET_FIELDS
from rouba_env.web.games import DEFAULT_MAX_GAMES, DEFAULT_TTL_S, PLAYER_NOTES, PLAYER_SUGGESTIONS, ApiError, GameStore
from rouba_env.web.games import available_checkpoints
from rouba_env.web.replays import ReplayLibrary

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_BODY = 16 * 1024
"""Largest request body accepted, in bytes (a move or a new game is far smaller)."""
MAX_NUMBER_DIGITS = 18
"""Longest number a request's text may hold (a header, a query): far past any real value, and converted safely."""
SHOWN_DIGITS = 20
"""Characters of a refused number an error quotes."""
CONNECTION_TIMEOUT_S = 15
"""Seconds a connection may stay idle or half-sent before the server closes it."""
STATIC_DIR = Path(__file__).resolve().parent / "static"
FAVICON = "favicon.svg"
"""The page's icon, also served at ``/favicon.ico``."""
STATIC_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "cards.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
"""The only files served, with their content types."""
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1"}
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


LISTEN_BACKLOG = 256
"""Connections the operating system holds while every handler thread is busy (a burst is queued, not reset)."""


def is_connection_lost(error: BaseException) -> bool:
    """A client that went away or timed out: nothing to answer, nothing to debug."""
    return isinstance(error, (TimeoutError, ConnectionError, BrokenPipeError))


class RoubaServer(ThreadingHTTPServer):
    """The HTTP server with the game store, the optional replay library and the limits."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def handle_error(self, request, client_address) -> None:
        """One line for a connection that was lost or timed out; a traceback only for a real failure."""
        error = sys.exc_info()[1]
        if error is not None and is_connection_lost(error):
            if not self.quiet:
                print(f"closed connection from {client_address[0]}: {type(error).__name__}", file=sys.stderr)
            return
        super().handle_error(request, client_address)

    def __init__(self, address: tuple[str, int], store: GameStore, *, replays: ReplayLibrary | None = None,
                 max_body: int = DEFAULT_MAX_BODY, quiet: bool = False, preselect: dict | None = None):
        super().__init__(address, RequestHandler)
        self.store = store
        self.replays = replays
        self.max_body = max_body
        self.quiet = quiet
        self.preselect = dict(preselect or {})
        """What the page's new-game form starts with (``opponents``, ``rules``, ``seat``, ``seed``)."""

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}/"


def _host_name(header: str) -> str:
    """Host name of a Host header without the port (``[::1]:80`` -> ``::1``)."""
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


class RequestHandler(BaseHTTPRequestHandler):
    server: RoubaServer
    server_version = "rouba-web"
    protocol_version = "HTTP/1.1"
    timeout = CONNECTION_TIMEOUT_S
    """An idle or half-sent connection is closed after this many seconds (its thread is freed)."""

    # -- plumbing -------------------------------------------------------

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        if not self.server.quiet:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data) -> None:
        self._send(status, json.dumps(data).encode(), "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _check_origin(self) -> None:
        """Writes come from this server's own page only: a JSON body, and no Origin but our own.

        A page elsewhere can make a browser POST (a "simple" cross-site request) but cannot send
        ``application/json`` without a preflight that this server never answers, nor forge ``Origin``.
        """
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise ApiError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"requests send JSON with Content-Type "
                                                              f"application/json, not {kind or 'none'!r}")
        origin = self.headers.get("Origin")
        if origin is not None:
            host = self.headers.get("Host", "")
            if urlsplit(origin).netloc != host:
                raise ApiError(HTTPStatus.FORBIDDEN, f"requests from another site ({origin}) are refused")

    def _body(self):
        """The request's JSON body, within the size limit, from this server's own page."""
        length = self.headers.get("Content-Length")
        if length is None:
            raise ApiError(HTTPStatus.LENGTH_REQUIRED, "a request body with a Content-Length header is required")
        if not length.isascii() or not length.isdigit():
            raise ApiError(400, f"bad Content-Length {length[:SHOWN_DIGITS]!r}")
        if len(length) > MAX_NUMBER_DIGITS or int(length) > self.server.max_body:
            self.close_connection = True
            raise ApiError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                           f"request body of {length[:SHOWN_DIGITS]}{'...' * (len(length) > SHOWN_DIGITS)} bytes "
                           f"is over the limit of {self.server.max_body}")
        self._check_origin()
        raw = self.rfile.read(int(length))
        try:
            return json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise ApiError(400, "the request body is nested too deeply") from None
        except ValueError as error:  # bad UTF-8, bad JSON, or a number of thousands of digits
            raise ApiError(400, f"the request body is not valid JSON: {str(error)[:200]}") from None

    def _check_host(self) -> None:
        """While bound to loopback, only loopback names may appear in the Host header."""
        bound = self.server.server_address[0]
        if bound not in LOOPBACK_NAMES:
            return
        name = _host_name(self.headers.get("Host", ""))
        if name not in LOOPBACK_NAMES:
            raise ApiError(HTTPStatus.MISDIRECTED_REQUEST, f"this server answers to 127.0.0.1/localhost only, "
                                                           f"not to Host {self.headers.get('Host')!r}")

    def _handle(self, route) -> None:
        try:
            self._check_host()
            parts = urlsplit(self.path)
            segments = [unquote(s) for s in parts.path.split("/")[1:]]
            query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
            route(segments, query)
        except ApiError as error:
            self._error(int(error.status), error.message)
        except Exception as error:  # an unexpected failure: say so briefly, keep serving
            if is_connection_lost(error):  # the client is gone: no answer can reach it
                self.close_connection = True
                if not self.server.quiet:
                    print(f"closed connection from {self.client_address[0]}: {type(error).__name__}",
                          file=sys.stderr)
                return
            traceback.print_exc(file=sys.stderr)
            self._error(500, "internal server error (see the server's output)")

    # -- routes -----------------------------------------------------------

    def do_GET(self):  # noqa: N802 (http.server's name)
        self._handle(self._get)

    def do_HEAD(self):  # noqa: N802
        self._handle(self._get)

    def do_POST(self):  # noqa: N802
        self._handle(self._post)

    def _refuse_method(self, segments: list[str], query: dict) -> None:
        raise ApiError(HTTPStatus.METHOD_NOT_ALLOWED, f"method {self.command} is not served here: GET, HEAD and POST only")

    def do_PUT(self):  # noqa: N802
        self._handle(self._refuse_method)

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT  # noqa: N815 (OPTIONS too: no cross-site preflight is ever granted)

    def _not_found(self):
        raise ApiError(404, f"nothing at {urlsplit(self.path).path!r}")

    def _get(self, segments: list[str], query: dict) -> None:
        if segments in ([""], ["index.html"]):
            return self._static("index.html")
        if segments == ["favicon.ico"]:  # browsers ask for it whatever the page says
            return self._static(FAVICON)
        if len(segments) == 2 and segments[0] == "static":
            return self._static(segments[1])
        if segments == ["api", "options"]:
            return self._json(200, {
                "min_players": MIN_PLAYERS, "max_players": MAX_PLAYERS,
                "rules": sorted(PRESET_FIELDS), "players": list(PLAYER_SUGGESTIONS), "player_notes": PLAYER_NOTES,
                "replays": self.server.replays is not None,
                "checkpoints": sorted(available_checkpoints(self.server.store.checkpoint_folder)),
                "preselect": self.server.preselect,
            })
        if len(segments) == 3 and segments[:2] == ["api", "games"]:
            since = query.get("since")
            if since is not None and not (since.isascii() and since.isdigit() and len(since) <= MAX_NUMBER_DIGITS):
                raise ApiError(400, f"since must be a whole number of at most {MAX_NUMBER_DIGITS} digits, got "
                                    f"{since[:SHOWN_DIGITS]!r}{'...' * (len(since) > SHOWN_DIGITS)}")
            return self._json(200, self.server.store.poll(segments[2], None if since is None else int(since)))
        if segments[:2] == ["api", "replays"] and len(segments) in (2, 3):
            if self.server.replays is None:
                raise ApiError(404, "no replay folder: start the server with --replays DIR")
            if len(segments) == 2:
                return self._json(200, {"files": self.server.replays.names(),
                                        "games": self.server.replays.summaries()})
            return self._json(200, self.server.replays.step(segments[2], query.get("step"), query.get("view")))
        self._not_found()

    def _post(self, segments: list[str], query: dict) -> None:
        if segments == ["api", "games"]:
            game = self.server.store.create(self._body())
            with game.lock:
                return self._json(201, game.view(0))
        if len(segments) == 4 and segments[:2] == ["api", "games"] and segments[3] == "moves":
            body = self._body()
            return self._json(200, self.server.store.play(segments[2], body))
        self._not_found()

    def _static(self, name: str) -> None:
        if name not in STATIC_FILES:
            raise ApiError(404, f"no file {name!r}")
        self._send(200, (STATIC_DIR / name).read_bytes(), STATIC_FILES[name])


def make_server(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, replays: "str | Path | None" = None,
                save_games: "str | Path | None" = None, ttl_s: float = DEFAULT_TTL_S,
                max_games: int = DEFAULT_MAX_GAMES, max_body: int = DEFAULT_MAX_BODY, quiet: bool = False,
                store: GameStore | None = None, checkpoints: "str | Path | None" = None,
                preselect: dict | None = None) -> RoubaServer:
    """A bound, not yet serving server (port 0: any free port; see ``server.url``), its engine warmed up by
    a throwaway game (`GameStore.warm_up`), so that the first request does not wait on the compiler.

    ``preselect`` fills the page's new-game form (``opponents``, ``rules``, ``seat``, ``seed``);
    its opponents are checked now, with the words a new game would use.
    """
    library = ReplayLibrary(replays) if replays is not None else None
    store = store or GameStore(ttl_s=ttl_s, max_games=max_games, save_folder=save_games, checkpoint_folder=checkpoints)
    preselect = dict(preselect or {})
    if preselect:  # what the form starts with must be a game the server would start
        opponents = preselect.get("opponents") or ["heuristic"]
        store.check_new_game({"num_players": len(opponents) + 1, **preselect, "opponents": opponents})
    store.warm_up()
    return RoubaServer((host, port), store, replays=library, max_body=max_body, quiet=quiet, preselect=preselect)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rouba-play --web", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default: {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT}; 0: any free)")
    parser.add_argument("--replays", type=Path, default=None, metavar="DIR",
                        help="folder of game records for the replay view")
    parser.add_argument("--save-games", type=Path, default=None, metavar="DIR",
                        help="write a record of every finished browser game into DIR")
    parser.add_argument("--checkpoints", type=Path, default=None, metavar="DIR",
                        help="offer the checkpoint folders inside DIR as opponents, by name (checkpoint:NAME); "
                             "the shipped ones are always offered")
    parser.add_argument("--ttl", type=float, default=DEFAULT_TTL_S, metavar="SECONDS",
                        help=f"forget games idle this long (default: {DEFAULT_TTL_S})")
    parser.add_argument("--max-games", type=int, default=DEFAULT_MAX_GAMES,
                        help=f"games kept at once (default: {DEFAULT_MAX_GAMES})")
    parser.add_argument("--quiet", action=argparse.BooleanOptionalAction, default=False,
                        help="no request log (default: off)")
    parser.add_argument("--opponents", nargs="+", default=None, metavar="SPEC",
                        help="the page's preselected opponents, one per other seat (default: heuristic)")
    parser.add_argument("--rules", default=None, choices=sorted(PRESET_FIELDS), help="the page's preselected rules")
    parser.add_argument("--seat", type=int, default=None, help="the page's preselected seat for you")
    parser.add_argument("--seed", type=int, default=None,
                        help="the page's preselected deal seed (the same cards every time it is used)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be in 0..65535, got {args.port}")
    if args.replays is not None and not args.replays.is_dir():
        parser.error(f"--replays {str(args.replays)!r} is not a folder")
    if args.checkpoints is not None and not args.checkpoints.is_dir():
        parser.error(f"--checkpoints {str(args.checkpoints)!r} is not a folder")
    if not args.ttl > 0:
        parser.error(f"--ttl must be positive, got {args.ttl}")
    if args.max_games < 1:
        parser.error(f"--max-games must be at least 1, got {args.max_games}")
    if args.save_games is not None:
        try:
            check_writable(args.save_games, folder=True)
        except OSError as error:
            parser.error(f"--save-games: {error}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted; prints the address first."""
    args = parse_args(argv)
    preselect = {key: getattr(args, key) for key in ("opponents", "rules", "seat", "seed")
                 if getattr(args, key) is not None}
    try:
        server = make_server(args.host, args.port, replays=args.replays, save_games=args.save_games, ttl_s=args.ttl,
                             max_games=args.max_games,
                             quiet=args.quiet, checkpoints=args.checkpoints, preselect=preselect)
    except ApiError as error:  # a preselected opponent, seat or seed the page could not use
        print(f"error: --opponents/--rules/--seat/--seed preselect a game the page could not start: "
              f"{error.message}", file=sys.stderr)
        return 2
    except (OSError, UnicodeError) as error:  # an unknown host, a port in use, no permission
        print(f"error: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 2
    if args.host not in LOOPBACK_NAMES:
        print(f"warning: listening on {args.host}, not only on this machine: anyone who can reach this address "
              f"can start and play games here (the default --host {DEFAULT_HOST} keeps it private)",
              file=sys.stderr, flush=True)
    print(f"rouba-monte in the browser: {server.url}  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
