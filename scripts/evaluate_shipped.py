#!/usr/bin/env python
"""The shipped checkpoints' table in docs/training.md, measured again: every cell one `rouba-evaluate` run.

    python scripts/evaluate_shipped.py             # the table (a minute or two)
    python scripts/evaluate_shipped.py --expert    # also 2p against expert (minutes)

Duplicate deals with seed 0, the checkpoint alone against n-1 copies of the opponent. Each cell's
`rouba-evaluate` JSON goes to ``--out`` (``CHECKPOINT_NPp_vs_OPPONENT.json``), then the table is printed
as Markdown: win % of the checkpoint with its Wilson 95% interval.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPPONENTS = ("random", "greedy", "heuristic")
TABLE = [("2p", 2), ("2p-0.3", 2), ("mixed", 2), ("mixed", 3), ("mixed", 4)]
"""(checkpoint, table size) of each row."""
HEADLINE_GAMES = 4000
"""Games of the cells the docs quote most (2 players against heuristic, head to head); the others play
``--games``."""


def cell_games(seats: int, opponent: str, games: int, headline_games: int) -> int:
    return headline_games if seats == 2 and opponent == "heuristic" else games


def run_cell(checkpoint: str, seats: int, opponent: str, *, games: int, out: Path) -> dict:
    """One `rouba-evaluate` run; its JSON, also written to ``out``."""
    players = [f"checkpoint:{checkpoint}", *[opponent] * (seats - 1)]
    command = [str(Path(sys.executable).with_name("rouba-evaluate")), "--players", *players,
               "--num-players", str(seats), "--games", str(games), "--seed", "0", "--no-progress",
               "--json", str(out.resolve().relative_to(ROOT) if out.resolve().is_relative_to(ROOT) else out)]
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True, text=True)
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per cell (2-player heuristic cells: 4000)")
    parser.add_argument("--headline-games", type=int, default=HEADLINE_GAMES,
                        help="games of the 2-player cells against heuristic and of the head to head")
    parser.add_argument("--expert", action=argparse.BooleanOptionalAction, default=False,
                        help="also 2p against expert (about 20 ms a decision for the expert: minutes)")
    parser.add_argument("--out", type=Path, default=ROOT / "scripts" / "results" / "shipped",
                        help="folder for the JSON of every cell")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = ["| checkpoint | table | " + " | ".join(f"vs {name}" for name in OPPONENTS) + " |",
             "|---|---|" + "---|" * len(OPPONENTS)]
    for checkpoint, seats in TABLE:
        cells = []
        for opponent in OPPONENTS:
            games = cell_games(seats, opponent, args.games, args.headline_games)
            data = run_cell(checkpoint, seats, opponent, games=games,
                            out=args.out / f"{checkpoint}_{seats}p_vs_{opponent}.json")
            row = data["results"][0]
            cells.append(f"{100 * row['win_rate']:.1f} [{100 * row['win_low']:.1f}, {100 * row['win_high']:.1f}]"
                         + (f" ({games:,} games)" if games != args.games else ""))
        lines.append(f"| `{checkpoint}` | {seats} players | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    extra = [("2p-0.3", "checkpoint:2p-0.3", args.headline_games)]  # (name, spec, games)
    extra += [("expert", "expert", args.games)] if args.expert else []
    checkpoint = "2p"
    for opponent, spec, games in extra:
        data = run_cell(checkpoint, 2, spec, games=games, out=args.out / f"{checkpoint}_2p_vs_{opponent}.json")
        row = data["results"][0]
        print(f"`{checkpoint}` against `{opponent}`: {100 * row['win_rate']:.1f}% [{100 * row['win_low']:.1f}, "
              f"{100 * row['win_high']:.1f}] of {games:,} games, mean margin {row['mean_margin']:+.2f}", flush=True)
    print("\n".join(["", *lines]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
