#!/usr/bin/env python
"""Example client: sb3-contrib's MaskablePPO on ``RoubaMonte-v0`` against ``random``.

    pip install -e ".[dev]"        # brings sb3-contrib
    python examples/sb3_maskable_ppo.py                 # a few minutes on 2 cores
    python examples/sb3_maskable_ppo.py --steps 50000   # longer and stronger: a few minutes on 2 cores

Trains against the given opponent, then reports the model's win rate against
it with the duplicate-deal evaluator (Wilson 95% interval).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import rouba_env  # noqa: F401  (registers RoubaMonte-v0)
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.players.base import BasePolicy, check_mask


class MaskablePPOPolicy(BasePolicy):
    """An sb3-contrib MaskablePPO model as a rouba_env `Policy` (most likely legal action)."""

    name = "maskable_ppo"

    def __init__(self, model, rules):
        super().__init__(rules)
        self.model = model

    def act_batch(self, obs, mask, rng):
        legal = check_mask(mask)
        actions, _ = self.model.predict(np.asarray(obs, dtype=np.float32), action_masks=legal, deterministic=True)
        return np.asarray(actions, dtype=np.int64).reshape(len(legal))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=4096,
                        help="MaskablePPO training steps (50000 take a few minutes on 2 cores)")
    parser.add_argument("--opponent", default="random", help="player spec of the other seat")
    parser.add_argument("--n-steps", type=int, default=2048, help="MaskablePPO rollout length per update")
    parser.add_argument("--games", type=int, default=400, help="duplicate-deal evaluation games")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.n_steps < 2:  # MaskablePPO normalizes advantages over a rollout: one step has no spread
        parser.error(f"--n-steps must be at least 2, got {args.n_steps}")
    if args.steps < args.n_steps:
        parser.error(f"--steps {args.steps} is less than one rollout (--n-steps {args.n_steps}); MaskablePPO "
                     f"trains by whole rollouts")
    if args.games < 1 or args.seed < 0:
        parser.error(f"--games must be at least 1 and --seed 0 or more, got {args.games} and {args.seed}")
    try:
        import gymnasium
        from sb3_contrib import MaskablePPO
    except ImportError:
        print("error: this example needs sb3-contrib: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    try:
        env = gymnasium.make("RoubaMonte-v0", opponents=args.opponent, seat="random")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, seed=args.seed, verbose=0, device="cpu")
    started = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - started
    print(f"MaskablePPO: {args.steps} steps in {seconds:.1f} s ({args.steps / seconds:.0f} steps/s)")
    policy = MaskablePPOPolicy(model, env.unwrapped.rules)
    result = evaluate([policy, args.opponent], rules=env.unwrapped.rules, games=args.games, seed=args.seed)
    stats = result.players[0]
    print(f"win rate vs {args.opponent}: {stats.win_rate:.1%} [{stats.win_low:.1%}, {stats.win_high:.1%}] "
          f"over {stats.games} duplicate games; mean margin {stats.mean_margin:+.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
