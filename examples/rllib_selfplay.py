#!/usr/bin/env python
"""PPO self-play with RLlib (new API stack) against frozen past selves and scripted players.

    pip install -e ".[ray]"
    python examples/rllib_selfplay.py --num-players 3 --iterations 20 --eval-games 300

Per episode one seat is the learner ("main"); the other seats share one
opponent drawn from the pool: main itself, the scripted players and the
snapshots main_v1, main_v2, ... that `rouba_env.rllib.SelfPlayPool` adds
every ``--snapshot-interval`` iterations (`Algorithm.add_module`). At the end
the learner plays duplicate deals against each scripted player through
`rouba_env.evaluate` (`rouba_env.rllib.RLlibPolicy`). With its defaults (10
iterations of 4,000 steps, then the duplicate deals) the whole run takes about
two minutes on 2 cores, one of them busy with other work.
"""

from __future__ import annotations

import argparse
import sys

MINIBATCH_SIZE = 512
"""Env steps per PPO gradient step (fewer when the whole batch is smaller)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-players", type=int, default=2, choices=(2, 3, 4), help="seats per game")
    parser.add_argument("--iterations", type=int, default=10, help="RLlib training iterations")
    parser.add_argument("--scripted", nargs="*", default=["greedy", "heuristic"], help="scripted opponents")
    parser.add_argument("--snapshot-interval", type=int, default=2, help="iterations between snapshots")
    parser.add_argument("--pool-size", type=int, default=4, help="most past selves kept")
    parser.add_argument("--train-batch-size", type=int, default=4000, help="env steps per iteration")
    parser.add_argument("--num-env-runners", type=int, default=1, help="RLlib env runner actors (0: in the driver)")
    parser.add_argument("--eval-games", type=int, default=200, help="games per scripted opponent at the end (0: none)")
    parser.add_argument("--ray-address", default=None, help="Ray cluster to join (default: a local Ray)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--export", default="runs/rllib_selfplay/policy", metavar="DIR",
                        help="write the trained module here as a project checkpoint (checkpoint:DIR plays it)")
    args = parser.parse_args(argv)
    for name in ("iterations", "snapshot_interval", "pool_size", "train_batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import ray

        from rouba_env.rllib import LEARNER_MODULE, RLlibPolicy, export_checkpoint, selfplay_config
    except ImportError as error:
        print(f"error: this example needs Ray and RLlib: {error}", file=sys.stderr)
        return 2
    from rouba_env import evaluate
    from rouba_env.rules.config import make_rules

    ray.init(address=args.ray_address, include_dashboard=False)
    config = selfplay_config(num_players=args.num_players, scripted=args.scripted,
                             snapshot_interval=args.snapshot_interval, pool_size=args.pool_size,
                             num_env_runners=args.num_env_runners, train_batch_size=args.train_batch_size,
                             minibatch_size=min(MINIBATCH_SIZE, args.train_batch_size), seed=args.seed)
    algo = config.build_algo()
    try:
        for _ in range(args.iterations):
            result = algo.train()
            returns = result["env_runners"].get("module_episode_returns_mean", {})
            pool = result.get("opponent_pool")
            print(f"iteration {algo.iteration}: main return {returns.get(LEARNER_MODULE, float('nan')):+.3f}"
                  + ("" if pool is None else f", pool {pool}"))
        module = algo.get_module(LEARNER_MODULE)
        folder = export_checkpoint(module, args.export, {"rules": "standard", "num_players": args.num_players})
        print(f"wrote {folder}: a project checkpoint (rouba-play --opponents checkpoint:{folder})")
        if args.eval_games:
            rules = make_rules("standard", num_players=args.num_players)
            learner = RLlibPolicy(algo.get_module(LEARNER_MODULE), rules)
            for spec in args.scripted:
                print(evaluate([learner, spec], rules=rules, games=args.eval_games, seed=args.seed).format_table())
    finally:
        algo.stop()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
