#!/usr/bin/env python
"""How well each value ranks sibling moves, against many-sample play-outs, on a fixed set of positions.

    python scripts/value_ranking.py --policy scripts/results/runs/try2_privileged/policy --positions 120

Positions come from games of the network against itself (two players, standard rules, seeded), at
its own decisions with at least two legal moves and cards left in the deck. At each, the network's
most likely moves (up to ``--max-moves``) are the siblings. The truth is the mean final reward of each
sibling over ``--truth-samples`` determinizations, every line played to the end by the network
(`search`'s play-outs). Each estimator scores the same siblings from ``--samples`` determinizations:
the PPO value head one own turn on (``value=head,depth=1``; only where it was trained: a privileged
critic takes its place), the privileged critic there (``value=privileged,depth=1``, where the checkpoint
has one) and short play-outs (``depth=0``). Reported per estimator: how often
its best sibling is the truth's best, and the share of sibling pairs the truth tells apart (by more
than two standard errors) that it orders the same way. Writes ``--json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

from rouba_env.files import write_atomically
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import preset
from rouba_env.single_game import SingleGame

ESTIMATORS = {"value head, 1 own turn on": "value=head,depth=1", "privileged value, 1 own turn on":
              "value=privileged,depth=1", "play-outs to the end": "depth=0"}


def positions(policy, rules, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, legal actions) at the network's own decisions with a choice and a non-empty deck."""
    rng = np.random.default_rng(seed)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    while len(found) < count:
        table = SingleGame(rules)
        table.start(rng)
        while not table.over and len(found) < count:
            seat = table.current
            obs, mask = table.observation(seat), table.mask(seat)
            legal = np.flatnonzero(mask)
            if legal.size >= 2 and table.state.deck and rng.random() < 0.25:
                found.append((obs.copy(), legal))
            table.play(policy.act(obs, mask, rng), "network")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", required=True,
                        help="a checkpoint; its value head is scored if it was trained (a shared critic), its "
                             "privileged critic if it has one")
    parser.add_argument("--positions", type=int, default=120)
    parser.add_argument("--samples", type=int, default=32, help="determinizations per estimator")
    parser.add_argument("--truth-samples", type=int, default=512)
    parser.add_argument("--max-moves", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=Path("scripts/results/value_ranking.json"))
    args = parser.parse_args(argv)
    rules = preset("standard")
    network = make_policy(f"checkpoint:{args.policy}", rules)
    truth_search = make_policy(f"search:policy={args.policy},depth=0,samples={args.truth_samples}", rules)
    usable = {name: options for name, options in ESTIMATORS.items()
              if not (options.startswith("value=privileged") and network.privileged_value is None)
              and not (options.startswith("value=head") and not network.value_head_trained)}
    estimators = {name: make_policy(f"search:policy={args.policy},{options},samples={args.samples}", rules)
                  for name, options in usable.items()}
    rng = np.random.default_rng(args.seed + 1)
    top, pairs, told_apart, siblings = {n: 0 for n in estimators}, {n: 0 for n in estimators}, 0, 0
    found = positions(network, rules, args.positions, args.seed)
    for index, (obs, legal) in enumerate(found):
        prior = network.action_values(obs[None, :])[0, legal]
        candidates = legal[np.argsort(-prior, kind="stable")[: args.max_moves]]
        siblings += len(candidates)
        truth_values = truth_search.move_values(obs, candidates, rng)
        truth = truth_values.mean(axis=0)
        error = truth_values.std(axis=0, ddof=1) / np.sqrt(len(truth_values))
        apart = [(i, j) for i, j in itertools.combinations(range(len(candidates)), 2)
                 if abs(truth[i] - truth[j]) > 2 * np.hypot(error[i], error[j])]
        told_apart += len(apart)
        for name, estimator in estimators.items():
            estimate = estimator.move_values(obs, candidates, rng).mean(axis=0)
            top[name] += int(np.argmax(estimate) == np.argmax(truth))
            pairs[name] += sum(int(np.sign(estimate[i] - estimate[j]) == np.sign(truth[i] - truth[j])) for i, j in apart)
        if (index + 1) % 20 == 0:
            print(f"{index + 1}/{len(found)} positions", flush=True)
    rows = [{"estimator": name, "spec_options": ESTIMATORS[name], "samples": args.samples,
             "best_move_agrees": top[name] / len(found), "pairs_ordered_right": pairs[name] / max(told_apart, 1)}
            for name in estimators]
    result = {"policy": args.policy, "positions": len(found), "siblings": siblings, "truth_samples": args.truth_samples,
              "pairs_told_apart": told_apart, "rows": rows, "seed": args.seed}
    write_atomically(args.json, json.dumps(result, indent=1) + "\n")
    for row in rows:
        print(f"{row['estimator']:<34} best move agrees {row['best_move_agrees']:.1%}, "
              f"pairs ordered right {row['pairs_ordered_right']:.1%} (of {told_apart})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
