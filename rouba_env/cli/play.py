"""``rouba-play``: play rouba-monte in the terminal (or the browser) against any players.

    rouba-play --opponents heuristic
    rouba-play --opponents checkpoint:2p heuristic --rules jokers

You see the table, every pile's top and size, the deck and your hand with card
faces; pick a move by its number from the list of legal moves (``q`` quits).
Every opponent move is shown as it happens, and the final scores at the end.

In the browser instead (see `rouba_env.web.server` for the options)::

    rouba-play --web [--port 8000] [--host 127.0.0.1] [--replays DIR] [--save-games DIR]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from rouba_env.rules import engine
from rouba_env.rules import scoring
from rouba_env.encoding.actions import describe_move
from rouba_env.rules.config import MAX_PLAYERS, PRESET_FIELDS, make_rules
from rouba_env.cli.common import HelpWithDefaults, announce_run_folders, fail, run_main
from rouba_env.table import IllegalPlayerAction
from rouba_env.single_game import SingleGame
from rouba_env.players.checkpoint import shipped_names
from rouba_env.players.registry import known_players, make_policy
from rouba_env.rules.text import render_text


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="rouba-play", description=__doc__.split("\n\n")[0],
                                     formatter_class=HelpWithDefaults)
    parser.add_argument("--opponents", nargs="+", default=None, metavar="SPEC",
                        help=f"player spec for each other seat: {', '.join(known_players())}, or checkpoint:PATH "
                             f"or checkpoint:NAME with NAME one of {', '.join(shipped_names())} (default: "
                             f"{DEFAULT_OPPONENT} in every other seat of the preset's table: one, but two for mini3 "
                             f"and small3, three for mini4)")
    parser.add_argument("--rules", default="standard", choices=sorted(PRESET_FIELDS),
                        help="rules preset")
    parser.add_argument("--seat", type=int, default=0, help="your seat; 0 plays first with the default dealer")
    parser.add_argument("--seed", type=seed_argument, default=None, help="seed of the deal and the opponents' randomness "
                                                               "(default: a fresh shuffle)")
    parser.add_argument("--web", action=argparse.BooleanOptionalAction, default=False,
                        help="play in the browser instead (options: --port, --host, --replays, --save-games; "
                             "see rouba-play --web --help)")
    return parser.parse_args(argv)


DEFAULT_OPPONENT = "heuristic"
MAX_ANSWER_CHARACTERS = 16
"""A move number is a few digits; a longer answer is asked again, never converted."""


def seed_argument(text: str) -> int:
    """``--seed``: a whole number in 0..2**63-1 (argparse reports anything else as a usage error)."""
    if not text.isascii() or not text.isdigit() or len(text) > 19 or int(text) >= 2**63:
        raise argparse.ArgumentTypeError(f"must be a whole number in 0..{2**63 - 1}, got {text[:30]!r}")
    return int(text)


def ask(prompt: str) -> str | None:
    """One line from the player, or None at the end of input."""
    try:
        return input(prompt)
    except EOFError:
        return None


def choose_move(state, moves: "list[engine.Move]") -> engine.Move | None:
    """The player's pick among ``moves`` (the legal moves of the seat to act), or None to quit."""
    print("\nyour moves:")
    for number, move in enumerate(moves, start=1):
        print(f"  {number:>2}. {describe_move(state, move)}")
    if len(moves) == 1:  # nothing to choose: say so and play it
        print("only one legal move: playing it")
        return moves[0]
    while True:
        answer = ask(f"move [1-{len(moves)}, q to quit]: ")
        if answer is None or answer.strip().lower() in ("q", "quit", "exit"):
            return None
        answer = answer.strip()
        if len(answer) <= MAX_ANSWER_CHARACTERS and answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(moves):
            return moves[int(answer) - 1]
        print(f"please type a number from 1 to {len(moves)} (or q to quit)")


WEB_ONLY_OPTIONS = ("--port", "--host", "--replays", "--save-games")
"""Options of browser play (`rouba_env.web.server`), which the terminal game does not take."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--web" in argv:  # browser play: the web server parses the other options
        from rouba_env.web.server import main as web_main

        return web_main([arg for arg in argv if arg != "--web"])
    web_only = sorted({arg.split("=")[0] for arg in argv} & set(WEB_ONLY_OPTIONS))
    if web_only:
        return fail(f"{', '.join(web_only)} go{'es' if len(web_only) == 1 else ''} with --web (browser play): "
                    f"rouba-play --web {' '.join(web_only)} ...")
    args = parse_args(argv)
    try:
        table = PRESET_FIELDS[args.rules].get("num_players")  # a deck laid out for its own table
        if args.opponents is None:
            args.opponents = [DEFAULT_OPPONENT] * ((table or 2) - 1)
        if len(args.opponents) > MAX_PLAYERS - 1:
            raise ValueError(f"--opponents names {len(args.opponents)} players; a table seats at most "
                             f"{MAX_PLAYERS}, so at most {MAX_PLAYERS - 1} opponents")
        if table is not None and len(args.opponents) + 1 != table:
            raise ValueError(f"rules {args.rules} seat {table} players: name {table - 1} opponents with "
                             f"--opponents, got {len(args.opponents)}")
        rules = make_rules(args.rules, num_players=len(args.opponents) + 1)
        if not 0 <= args.seat < rules.num_players:
            raise ValueError(f"--seat must be in 0..{rules.num_players - 1}, got {args.seat}")
        others = [seat for seat in range(rules.num_players) if seat != args.seat]
        players = {seat: make_policy(spec, rules) for seat, spec in zip(others, args.opponents)}
        announce_run_folders(args.opponents)
    except (ValueError, OSError) as error:
        return fail(str(error))
    rng = np.random.default_rng(args.seed)
    names = {seat: f"player {seat} ({players[seat].name})" for seat in others} | {args.seat: "you"}
    table = SingleGame(rules, illegal_action="raise", seats=[players.get(seat) for seat in range(rules.num_players)])
    table.before_move = move_announcer(table, names, you=args.seat)
    table.start(rng)
    print(f"rouba-monte, {rules.num_players} players; you are player {args.seat}.")
    try:
        return play_out(table, rng, args.seat, names)
    except KeyboardInterrupt:  # Ctrl-C at the prompt: a clean stop, as the trainer's
        print("\nstopped")
        return EXIT_CTRL_C


def move_announcer(table: SingleGame, names: dict, *, you: int):
    """The hook that prints each move as it is played, an opponent's with the seconds it took to choose it."""
    thought = table.seconds_thinking()

    def announce(seat: int, action: int) -> None:
        nonlocal thought
        spent = table.seconds_thinking()
        think = "" if seat == you else f" ({spent[seat] - thought[seat]:.2f} s)"
        thought = spent
        print(f"{names[seat]}: {describe_move(table.require_started('playing'), table.actions.decode(action), seat)}"
              f"{think}")

    return announce


EXIT_CTRL_C = 130
"""Exit status after Ctrl-C (128 + SIGINT), as the shell and the trainer give."""


def play_out(table: SingleGame, rng: np.random.Generator, you: int, names: dict) -> int:
    """Play the game to its end at the terminal, ``you`` at the keyboard; the exit status."""
    while True:
        try:
            table.play_seated(rng)
        except IllegalPlayerAction as error:
            return fail(str(error))
        if table.over:
            break
        state = table.require_started("playing")
        print("\n" + render_text(state, viewer=you))
        move = choose_move(state, [table.actions.decode(action) for action in table.legal_actions()])
        if move is None:
            print("bye!")
            return 0
        table.play(table.actions.encode(move), who="you")
    state = table.require_started("playing")
    print("\n" + render_text(state, viewer=you))
    points = scoring.scores(state)
    top = scoring.winners(state)
    for seat, score in enumerate(points):
        print(f"  {names[seat]}: {score} cards")
    if len(top) > 1:
        print("tie between " + " and ".join(names[s] for s in top))
    else:
        print("you win!" if top[0] == you else f"{names[top[0]]} wins")
    return 0


if __name__ == "__main__":
    run_main(main)
