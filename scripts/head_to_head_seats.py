#!/usr/bin/env python
"""Head to head of two players at any table size, both ways round, on duplicate deals.

    python scripts/head_to_head_seats.py --players checkpoint:scripts/results/runs/mixed_magnet_ema/policy \
        checkpoint:mixed --num-players 3 4 --games 2000 --seed 7 --json scripts/results/mixed_magnet_ema_h2h.json

At N seats the two specs take turns round the table (A B A at 3 seats), every rotation of each deal;
at an odd N the reverse lineup (B A B) plays the same deals too. So each player holds half the seats,
and two equally strong players each win 50% of the games. A player's result is the share of games one of
its seats won (a k-way tie for the top counts 1/k to each), pooled over both lineups, with a Wilson
interval. At 2 seats this is the ordinary head to head.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import rouba_env
from rouba_env.evaluation.duplicate import MAX_GAMES
from rouba_env.evaluation.stats import wilson_interval, win_shares
from rouba_env.files import check_writable, write_atomically
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import make_rules
from rouba_env.rules.seeding import DEAL_SEED_BOUND


def share_of(result, spec: str) -> tuple[float, int, int]:
    """(games won by the seats of ``spec``, games, seats it holds) in an evaluation's records; a tie for
    the top counts 1/k. A spec cycled over several seats is several players of one spec (``A``, ``A#2``)."""
    players = {index for index, name in enumerate(result.player_specs) if name == spec}
    wins = 0.0
    for record in result.records:
        shares = win_shares(record.scores)
        wins += sum(share for seat, share in enumerate(shares) if record.seats[seat] in players)
    return wins, len(result.records), len(players)


def head_to_head(first: str, second: str, *, num_players: int, games: int, seed: int, rules: str) -> dict:
    """``first``'s pooled share of games won against ``second`` at ``num_players`` seats, both ways round."""
    lineups = {"forward": [first, second]}
    if num_players % 2:  # at an even table size B A B A is a rotation of A B A B: the same games
        lineups["reverse"] = [second, first]
    rows, wins, total = {}, 0.0, 0
    for name, specs in lineups.items():
        result = rouba_env.evaluate(specs, rules=rules, games=max(1, games // len(lineups)),
                                    num_players=num_players, seed=seed)
        lineup_wins, lineup_games, seats = share_of(result, first)
        rows[name] = {"seats": seats, "games": lineup_games, "win_rate": lineup_wins / lineup_games}
        wins, total = wins + lineup_wins, total + lineup_games
    low, high = wilson_interval(wins, total)
    return {"num_players": num_players, "games": total, "win_rate": wins / total, "win_low": low, "win_high": high,
            "lineups": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", nargs=2, required=True, metavar="SPEC", help="the two player specs")
    parser.add_argument("--num-players", nargs="+", type=int, default=[2, 3, 4], metavar="N",
                        help="table sizes, 2..8 (default: 2 3 4)")
    parser.add_argument("--games", type=int, default=2000, help="games per table size, both lineups together")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="standard", help="rules preset (default: standard)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    bad = [n for n in args.num_players if not 2 <= n <= 8]
    if bad:
        parser.error(f"--num-players must be within 2..8, got {bad}")
    if args.players[0] == args.players[1]:
        parser.error(f"--players must name two different specs, got {args.players[0]!r} twice")
    if not 2 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be in 2..{MAX_GAMES:,} (one per lineup at least), got {args.games}")
    if not 0 <= args.seed < DEAL_SEED_BOUND:
        parser.error(f"--seed must be in 0..{DEAL_SEED_BOUND - 1}, got {args.seed}")
    try:  # every table's rules and both players, before the first game
        for n in args.num_players:
            config = make_rules(args.rules, num_players=n)
            for spec in args.players:
                make_policy(spec, config)
        if args.json is not None:
            check_writable(args.json)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    first, second = args.players
    rows = []
    for n in args.num_players:
        row = head_to_head(first, second, num_players=n, games=args.games, seed=args.seed, rules=args.rules)
        rows.append(row)
        print(f"{n} players: {first} wins {row['win_rate']:.1%} [{row['win_low']:.1%}, {row['win_high']:.1%}] of "
              f"{row['games']} games against {second} ("
              + ", ".join(f"{lineup['win_rate']:.1%} holding {lineup['seats']} of {n} seats"
                          for lineup in row["lineups"].values()) + ")", flush=True)
    if args.json is not None:
        command = " ".join(["python", "scripts/head_to_head_seats.py", *(sys.argv[1:] if argv is None else argv)])
        write_atomically(args.json, json.dumps({"players": [first, second], "seed": args.seed, "rules": args.rules,
                                                "results": rows, "command": command}, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
