#!/usr/bin/env python
"""How strong several networks are together: each move is the argmax of their summed log-probabilities.

    python scripts/ensemble_strength.py --networks 2p 2p-0.3 \
        --opponent heuristic --games 4000 --seed 0 --json scripts/results/ensemble_2p_vs_heuristic.json

A check on whether the networks' errors differ enough that voting moves them past what each reaches
alone (scripts/results/TRAINING_TRIES.md). Two players, standard rules, duplicate deals.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import rouba_env
from rouba_env.files import write_atomically
from rouba_env.players.base import BasePolicy
from rouba_env.players.network import load_policy
from rouba_env.rules.config import preset
from rouba_env.streams import Randomness


class LogProbabilityVote(BasePolicy):
    """Plays the legal action with the largest sum of the members' log-probabilities (deterministic)."""

    plays_in_batch = True

    def __init__(self, networks: list[str], rules):
        super().__init__(rules)
        self.members = [load_policy(network, rules) for network in networks]
        self.name = "vote(" + " + ".join(networks) + ")"

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Randomness) -> np.ndarray:
        obs, legal = self.checked(obs, mask)
        total = np.zeros(legal.shape)
        for member in self.members:
            logits = np.where(legal, member.action_values(obs).astype(np.float64), -np.inf)
            logits -= logits.max(axis=1, keepdims=True)
            log_probabilities = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
            total += np.where(legal, log_probabilities, 0.0)
        return np.where(legal, total, -np.inf).argmax(axis=1).astype(np.int64)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", nargs="+", required=True, help="checkpoint paths or shipped names")
    parser.add_argument("--opponent", default="heuristic", help="player spec")
    parser.add_argument("--games", type=int, default=4000, help="games (an even number: duplicate pairs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the evaluation's table here")
    args = parser.parse_args(argv)
    if len(args.networks) < 2:
        parser.error(f"--networks needs at least two checkpoints to vote, got {args.networks}")
    rules = preset("standard")
    result = rouba_env.evaluate([LogProbabilityVote(args.networks, rules), args.opponent], rules=rules,
                                games=args.games, seed=args.seed)
    print(result.format_table())
    if args.json is not None:
        data = {"command": "python scripts/ensemble_strength.py " + " ".join(sys.argv[1:] if argv is None else argv), **result.to_dict()}
        write_atomically(args.json, json.dumps(data, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
