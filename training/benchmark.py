"""``rouba-benchmark``: the environments' benchmark (`rouba_env.cli.benchmark`) plus the trainer's section.

``trainer``: our PPO trainer's learner steps/s with the default settings, the
rank network and the MLP (256-256) measured alternately in one run, so their ratio
shares the machine's load::

    rouba-benchmark --only trainer
"""

from __future__ import annotations

import sys
import tempfile

from rouba_env.cli.benchmark import main as benchmark_main
from rouba_env.cli.benchmark import summarize


TRAINER_NETWORKS = {"rank": {}, "mlp": {"architecture": "mlp", "hidden_sizes": (256, 256)}}
"""The trainer section's networks: the default (rank) and the MLP (256-256), measured alternately in one run."""


def bench_trainer(args) -> list[dict]:
    """Our PPO trainer's learner steps/s (collection on the batched engine plus updates), default settings.

    The default rank network and the MLP run alternately, so their ratio shares the machine's load.
    """
    try:
        import torch
    except ImportError:
        print("[benchmark] trainer: torch is not installed (pip install torch), skipped", file=sys.stderr)
        return []

    from rouba_training.config import TrainConfig
    from rouba_training.train import train

    torch.set_num_threads(1)
    steps = 30_000 if args.quick else args.trainer_steps
    runs: dict[str, list[dict]] = {name: [] for name in TRAINER_NETWORKS}
    for index in range(1 if args.quick else args.trainer_repeats):
        for name, network in TRAINER_NETWORKS.items():
            with tempfile.TemporaryDirectory() as run_dir:
                config = TrainConfig(run_dir=run_dir, seed=args.seed + index, total_steps=steps, eval_interval=0,
                                     final_eval_games=0, progress=False, torch_threads=1, **network,
                                     **({"num_envs": 64} if args.quick else {}))
                final = train(config, command="benchmark", catch_signals=False)  # a stop is the benchmark's
            runs[name].append({"steps_per_s": final["learner_steps_per_second"], "games_per_s": None,
                               "steps": final["learner_steps"], "seconds": final["seconds_training"]})
    rank, mlp = summarize(runs["rank"]), summarize(runs["mlp"])
    return [{"variant": "training/ PPO, default config (rank network)", **rank,
             "ratio_to_mlp": rank["steps_per_s"] / mlp["steps_per_s"]},
            {"variant": "training/ PPO, default config with the MLP (256-256)", **mlp}]


def main(argv: list[str] | None = None) -> int:
    return benchmark_main(argv, extra_sections={"trainer": bench_trainer})


if __name__ == "__main__":
    sys.exit(main())
