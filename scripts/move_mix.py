#!/usr/bin/env python
"""How a deck's games go: deals, and how often a move captures, steals, builds on its own pile or discards.

    python scripts/move_mix.py --rules small medium standard --players random heuristic --games 2000

Two seats, the same player in both. A research deck is meant to play like the full game; this puts the
figures side by side (docs/solving.md) and writes them to ``--json`` when given.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.files import write_atomically
from rouba_env.players.registry import known_players, make_policy
from rouba_env.rules.config import PRESET_FIELDS, preset
from rouba_env.rules.core import move_at
from rouba_env.rules.core import TARGET_DISCARD, TARGET_PILE_OFFSET, TARGET_TABLE, TARGET_TABLE_JOKER

KINDS = ("capture", "steal", "own pile", "discard")
MAX_GAMES = 100_000


def kind_of(target: int) -> str:
    """The kind of a move by its target (two seats: the pile one past the mover's own is the opponent's)."""
    if target in (TARGET_TABLE, TARGET_TABLE_JOKER):
        return "capture"
    if target == TARGET_DISCARD:
        return "discard"
    return "own pile" if target == TARGET_PILE_OFFSET else "steal"


def move_mix(rules_name: str, player_spec: str, games: int, seed: int) -> dict:
    """Moves per game, deals per game and each kind's share of the moves, over ``games`` self-play games."""
    rules = preset(rules_name)
    player = make_policy(player_spec, rules)
    game = VectorGame(rules, games, seed=seed, auto_reset=False)
    game.reset()
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(KINDS, 0)
    moves = deals = 0
    while (game.current >= 0).any():
        live = np.flatnonzero(game.current >= 0)
        hands_before = game.arrays.hand_count[live].sum(axis=1)
        actions = player.act_batch(game.obs[live], game.mask[live], rng)
        for action in actions.tolist():
            counts[kind_of(move_at(action, game.num_targets)[1])] += 1
        moves += len(live)
        game.step_slots(live, actions)
        deals += int((game.arrays.hand_count[live].sum(axis=1) > hands_before).sum())  # a new deal refilled
    return {"rules": rules_name, "player": player_spec, "games": games, "moves_per_game": moves / games,
            "deals_per_game": 1 + deals / games, "shares": {kind: counts[kind] / moves for kind in KINDS}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", nargs="+", default=["small", "medium", "standard"], choices=sorted(PRESET_FIELDS))
    parser.add_argument("--players", nargs="+", default=["random", "heuristic"], metavar="SPEC",
                        help=f"player specs ({', '.join(known_players())})")
    parser.add_argument("--games", type=int, default=2000, help=f"games per deck and player (1..{MAX_GAMES:,})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows to this file")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= MAX_GAMES:
        parser.error(f"--games must be in 1..{MAX_GAMES:,}, got {args.games}")
    rows = [move_mix(name, spec, args.games, args.seed) for name in args.rules for spec in args.players]
    print("| deck | player | moves a game | deals a game | " + " | ".join(KINDS) + " |")
    print("|---|---|---:|---:|" + "---:|" * len(KINDS))
    for row in rows:
        print(f"| `{row['rules']}` | `{row['player']}` | {row['moves_per_game']:.1f} | {row['deals_per_game']:.1f} | "
              + " | ".join(f"{row['shares'][kind]:.0%}" for kind in KINDS) + " |")
    if args.json is not None:
        write_atomically(args.json, json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
