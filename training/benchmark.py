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


def thread_choices() -> dict[str, int]:
    """Torch thread settings the section measures on the default network: the default (0: chosen by the
    trainer before each update), one thread, and every core this process may use (torch's own default)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return {"default": 0, "1": 1, **({str(cores): cores} if cores > 1 else {})}


def bench_trainer(args) -> list[dict]:
    """Our PPO trainer's learner steps/s (collection on the batched engine plus updates), default settings.

    Measured alternately, so that ratios share the machine's load: the default rank network with the
    trainer's own torch thread count, with one thread and with one per core, and the MLP.
    """
    try:
        import torch  # noqa: F401
    except ImportError:
        print("[benchmark] trainer: torch is not installed (pip install torch), skipped", file=sys.stderr)
        return []

    from rouba_training.config import TrainConfig
    from rouba_training.trainer import train

    steps = 30_000 if args.quick else args.trainer_steps
    variants = {f"rank, threads {name}": {"torch_threads": threads} for name, threads in thread_choices().items()}
    variants["mlp, threads default"] = {**TRAINER_NETWORKS["mlp"], "torch_threads": 0}
    runs: dict[str, list[dict]] = {name: [] for name in variants}
    for index in range(1 if args.quick else args.trainer_repeats):
        for name, settings in variants.items():
            with tempfile.TemporaryDirectory() as run_dir:
                config = TrainConfig.of(run_dir=run_dir, seed=args.seed + index, total_steps=steps, eval_interval=0,
                                     final_eval_games=0, progress=False, **settings,
                                     **({"num_envs": 64} if args.quick else {}))
                final = train(config, command="benchmark", catch_signals=False)  # a stop is the benchmark's
            runs[name].append({"steps_per_s": final["learner_steps_per_second"], "games_per_s": None,
                               "steps": final["learner_steps"], "seconds": final["seconds_training"]})
    summaries = {name: summarize(rows) for name, rows in runs.items()}
    default, mlp = summaries["rank, threads default"], summaries.pop("mlp, threads default")
    best = max(summary["steps_per_s"] for summary in summaries.values())
    rows = [{"variant": "training/ PPO, default config (rank network), torch threads: default (chosen per update)",
             **default,
             "ratio_to_best_threads": default["steps_per_s"] / best, "ratio_to_mlp": default["steps_per_s"] / mlp["steps_per_s"]}]
    rows += [{"variant": f"training/ PPO, default config (rank network), torch threads: {name.split()[-1]}", **summary,
              "ratio_to_best_threads": summary["steps_per_s"] / best}
             for name, summary in summaries.items() if name != "rank, threads default"]
    rows.append({"variant": "training/ PPO, default config with the MLP (256-256)", **mlp})
    return rows


def main(argv: list[str] | None = None) -> int:
    return benchmark_main(argv, extra_sections={"trainer": bench_trainer})


if __name__ == "__main__":
    sys.exit(main())
