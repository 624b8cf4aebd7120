#!/usr/bin/env python
"""Learner steps/s of the default recipe in the importing tree: a warm-up run, then timed runs.

    python scripts/ab_train_speed.py                      # this tree
    PYTHONPATH=/tmp/oldpath python scripts/ab_train_speed.py   # another tree, in the same sitting

``/tmp/oldpath`` holds two links into another checkout (``rouba_env`` -> its ``rouba_env``,
``rouba_training`` -> its ``training``), so two trees compare on one machine at one time
(`scripts/results/TRAINING_TRIES.md`, row 17). Writes nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import rouba_env
from rouba_training.config import TrainConfig
from rouba_training.trainer import train


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300_000, help="learner steps per timed run")
    parser.add_argument("--warmup-steps", type=int, default=120_000, help="learner steps of the untimed first run")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs")
    parser.add_argument("--num-envs", type=int, default=TrainConfig().run.num_envs,
                        help="games per table size (the default recipe's unless changed, for a quick check)")
    args = parser.parse_args(argv)
    for name, value in (("--steps", args.steps), ("--warmup-steps", args.warmup_steps), ("--repeats", args.repeats),
                        ("--num-envs", args.num_envs)):
        if value < 1:
            parser.error(f"{name} must be at least 1, got {value}")
    print(f"tree: {rouba_env.__file__}")
    settings = dict(eval_interval=0, final_eval_games=0, progress=False, num_envs=args.num_envs)
    with tempfile.TemporaryDirectory() as folder:
        train(TrainConfig.of(run_dir=folder, total_steps=args.warmup_steps, **settings))  # compiles, warms caches
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            final = train(TrainConfig.of(run_dir=folder, total_steps=args.steps, **settings))
            print(f"{final['learner_steps_per_second']:.0f} learner steps/s, {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
