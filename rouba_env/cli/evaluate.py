"""``rouba-evaluate``: players against each other on duplicate deals; a table on screen and JSON on disk.

Example::

    rouba-evaluate --players heuristic random --games 2000 --num-players 2 --workers 2

Players are specs (``random``, ``greedy``, ``heuristic``, ``expert:samples=32``,
``checkpoint:PATH``). With fewer specs than ``--num-players`` the specs are
cycled to fill the seats (``a b`` at 4 seats plays ``a b a b``; repeats are
labelled ``a#2``), or with ``--field`` the first spec plays one seat against
the others (``a b`` at 4 seats plays ``a b b b``); with more specs than seats every combination of
``--num-players`` specs plays (a pool, with a rating table). See
`rouba_env.evaluation.duplicate` for the statistics. A bad spec or option prints one
error line and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rouba_env.files import check_writable
from rouba_env.rules.seeding import DEAL_SEED_BOUND
from rouba_env.cli.common import HelpWithDefaults, Progress, announce_run_folders, fail, run_main

DEFAULT_GAMES = 200


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from rouba_env.players.checkpoint import shipped_names
    from rouba_env.players.registry import known_players
    from rouba_env.evaluation.duplicate import MAX_GAMES, MAX_WORKERS
    from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS, PRESET_FIELDS

    parser = argparse.ArgumentParser(prog="rouba-evaluate", description=__doc__.split("\n\n")[0],
                                     formatter_class=HelpWithDefaults)
    parser.add_argument("--players", nargs="+", required=True, metavar="SPEC",
                        help=f"player specs: {', '.join(known_players())} "
                             f"(options like expert:samples=32; checkpoint:PATH or one of {', '.join(shipped_names())}). "
                             f"Seats: as many specs as seats sit in order; fewer are cycled (A B at 4 seats: "
                             f"A B A B; see --field); more form a pool where every combination plays; every "
                             f"lineup plays each deal in every rotation")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES,
                        help="games to play, rounded up to whole duplicate deals")
    parser.add_argument("--num-players", type=int, default=None, choices=range(MIN_PLAYERS, MAX_PLAYERS + 1),
                        metavar="N", help="seats per game, 2..8 (default: number of specs, within 2..8)")
    parser.add_argument("--field", action=argparse.BooleanOptionalAction, default=False,
                        help="one against the field: the first spec plays one seat, the other specs are cycled "
                             "over the rest (A B at 4 seats: A B B B; without --field: A B A B)")
    parser.add_argument("--rules", default="standard", choices=sorted(PRESET_FIELDS), help="rules preset")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and players' randomness")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the results to this JSON file (nothing is written unless asked)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                        help="show a progress bar")
    parser.add_argument("--save-games", type=Path, default=None, metavar="DIR",
                        help="also write one replayable JSON record per game into DIR")
    parser.add_argument("--ray", action=argparse.BooleanOptionalAction, default=False,
                        help="play the deals as tasks on Ray (a local Ray unless --ray-address); same results")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="Ray cluster to join (auto, HOST:PORT); implies --ray")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be in 1..{MAX_GAMES:,}, got {args.games}")
    if not 1 <= args.workers <= MAX_WORKERS:
        parser.error(f"--workers must be in 1..{MAX_WORKERS}, got {args.workers}")
    if not 0 <= args.seed < DEAL_SEED_BOUND:
        parser.error(f"--seed must be in 0..{DEAL_SEED_BOUND - 1}, got {args.seed}")
    return args


def write_json_atomically(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    from rouba_env.files import write_atomically

    write_atomically(path, json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS, make_rules
    from rouba_env.evaluation.duplicate import evaluate
    from rouba_env.evaluation.lineups import build_lineups
    from rouba_env.players.registry import make_policy

    num_players = args.num_players or min(max(MIN_PLAYERS, len(args.players)), MAX_PLAYERS)
    fill = "field" if args.field else "cycle"
    try:
        config = make_rules(args.rules, num_players=num_players)
        _, player_specs, lineups = build_lineups(args.players, num_players, fill)
        for spec in dict.fromkeys(player_specs):
            make_policy(spec, config)  # a bad spec is refused before any game
        announce_run_folders(player_specs)
        if args.json is not None:
            check_writable(args.json)
        if args.save_games is not None:
            check_writable(args.save_games, folder=True)
    except (ValueError, OSError) as error:
        return fail(str(error))
    games_per_deal = len(lineups) * num_players
    total = -(-args.games // games_per_deal) * games_per_deal
    if total != args.games:
        print(f"{args.games} games asked for: {total} will be played (whole deals of {games_per_deal} games: "
              f"{len(lineups)} lineup(s) x {num_players} rotations)", file=sys.stderr)
    with Progress(total, "game", enabled=args.progress) as bar:
        if args.ray or args.ray_address:  # rouba_env/evaluation/distributed.py (needs the ray extra)
            from rouba_env.evaluation.distributed import evaluate_on_ray

            try:
                result = evaluate_on_ray(args.players, rules=config, games=args.games, seed=args.seed,
                                         address=args.ray_address, progress=bar.update,
                                         record_moves=args.save_games is not None, fill=fill)
            except RuntimeError as error:
                return fail(str(error))
        else:
            try:
                result = evaluate(args.players, rules=config, games=args.games, seed=args.seed, workers=args.workers,
                                  progress=bar.update, record_moves=args.save_games is not None, fill=fill)
            except (ValueError, OSError) as error:  # e.g. a player that returned an illegal action
                return fail(str(error))
    print(result.format_table())
    if args.json is not None:
        data = result.to_dict()
        data["command"] = " ".join(["rouba-evaluate", *(sys.argv[1:] if argv is None else argv)])
        try:
            write_json_atomically(args.json, data)
        except OSError as error:
            return fail(str(error))
        print(f"wrote {args.json}")
    if args.save_games is not None:
        from rouba_env.evaluation.records import save_game_records

        try:
            written = save_game_records(result, args.save_games)
        except OSError as error:
            return fail(str(error))
        print(f"wrote {len(written)} game records to {args.save_games}")
    return 0


if __name__ == "__main__":
    run_main(main)
