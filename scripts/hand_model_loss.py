#!/usr/bin/env python
"""The hand head's log-loss on the opponent's cards, against card counting, on held-out self-play positions.

    python scripts/hand_model_loss.py --run-dir scripts/results/runs/try3_hand --games 200

A run trained with ``--hand-coef`` has a head that predicts, per rank, how many cards each other seat
holds; it ships beside the policy (``policy/hand_head.safetensors``), which is all this script reads. Read as a distribution over the rank of each card in the opponent's hand (the predicted counts,
clipped at zero and normalized over the ranks still unseen), its log-loss on the true cards is compared
with card counting's (each unseen card equally likely). Positions come from games of the run's network
against ``heuristic`` on seeds the trainer never dealt (two players, standard rules); both seats'
views count. Needs no torch: the numpy network plays and predicts. Writes ``--json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.files import write_atomically
from rouba_env.players.move_values import unseen_counts
from rouba_env.players.network import HAND_SMOOTHING, hand_distribution, load_policy
from rouba_env.players.registry import make_policy
from rouba_env.rules.engine import NUM_RANK_SLOTS
from rouba_env.single_game import SingleGame

HELD_OUT_SEED = 10**9
"""Deals far from the trainer's (it deals from small seeds)."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", type=Path, required=True,
                        help="a run trained with --hand-coef > 0 (its policy/ folder holds the hand head)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--json", type=Path, default=Path("scripts/results/hand_model_loss.json"))
    args = parser.parse_args(argv)
    network = load_policy(args.run_dir / "policy")
    if network.hand_head is None:
        parser.error(f"{args.run_dir / 'policy'} has no hand head (train with --hand-coef)")
    rules = network.rules
    encoder = ObservationEncoder(rules)
    players = [network, make_policy("heuristic", rules)]
    rng = np.random.default_rng(HELD_OUT_SEED)
    observations, hidden = [], []
    for game in range(args.games):
        table = SingleGame(rules)
        table.start_deal(HELD_OUT_SEED + game)
        order = players if game % 2 == 0 else players[::-1]
        while not table.over:
            seat = table.current
            obs, mask = table.observation(seat), table.mask(seat)
            observations.append(obs)
            hidden.append(encoder.hidden(table.state, seat))
            table.play(order[seat].act(obs, mask, rng), "player")
    obs = np.array(observations, np.float32)
    truth = np.array(hidden, np.float32).reshape(len(obs), -1, NUM_RANK_SLOTS)[:, 1]  # the opponent's hand
    predicted = network.predicted_hidden(obs)[:, 1]
    natural, jokers = unseen_counts(encoder.decode(obs), rules)
    unseen = np.concatenate([natural, jokers[:, None]], axis=1).astype(np.float64)
    holding = truth.sum(axis=1) > 0  # positions where the opponent holds cards (then some are unseen)
    truth, predicted, unseen = truth[holding], predicted[holding], unseen[holding]
    counting = unseen / unseen.sum(axis=1, keepdims=True)
    model = hand_distribution(predicted, unseen)
    cards = truth.sum()
    result = {
        "run_dir": str(args.run_dir), "games": args.games, "positions": int(holding.sum()), "opponent_cards": int(cards),
        "log_loss_card_counting": float(-(truth * np.log(np.where(truth > 0, counting, 1.0))).sum() / cards),
        "log_loss_hand_head": float(-(truth * np.log(np.where(truth > 0, model, 1.0))).sum() / cards),
        "smoothing": HAND_SMOOTHING,
    }
    write_atomically(args.json, json.dumps(result, indent=1) + "\n")
    print(f"{result['positions']} positions, {result['opponent_cards']} opponent cards: log-loss per card "
          f"{result['log_loss_hand_head']:.4f} (hand head) vs {result['log_loss_card_counting']:.4f} (card counting)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
