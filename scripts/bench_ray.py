#!/usr/bin/env python
"""Learner steps/s of the trainer: single process, Ray with 1 and 2 rollout actors, and a two-node Ray cluster.

    pip install -e ".[ray]"
    python scripts/bench_ray.py --updates 6 --warmup 2

Every setup trains the same short run (``--num-envs``, ``--rollout-steps``;
no evaluation, no checkpoints between updates) in this one invocation, so the
numbers share the machine's load. Steps/s is over the updates after
``--warmup`` (actor start-up and numba loading excluded): learner steps over
wall-clock seconds of collection plus PPO update. The two-node cluster is
simulated on this machine by `ray.cluster_utils.Cluster` (two raylets, one
logical CPU each, one actor on each). The single-process trainer runs first
and again last (so a drift of the machine's load shows), with torch's default
threads and with one thread (each rollout actor uses one). Results go to
``--json`` (written atomically).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from rouba_env.files import write_atomically

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "ray_scaling.json"
STEPS_PER_ENGINE_STEP = 0.55
"""Rough learner steps per (slot, rollout step) of a 2-player run, to size total_steps for the wanted updates."""


def steady_steps_per_second(run_dir: Path, warmup: int) -> tuple[float, int]:
    """(learner steps/s over the updates after ``warmup``, number of those updates) from metrics.csv."""
    with (run_dir / "metrics.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    if len(rows) <= warmup:
        raise RuntimeError(f"only {len(rows)} updates ran; need more than --warmup={warmup}")
    start, end = rows[warmup - 1] if warmup else None, rows[-1]
    steps = int(end["learner_steps"]) - (int(start["learner_steps"]) if start else 0)
    seconds = float(end["seconds"]) - (float(start["seconds"]) if start else 0.0)
    return steps / seconds, len(rows) - warmup


def run(name: str, settings: dict, args: argparse.Namespace, work: Path) -> dict:
    from rouba_training.config import TrainConfig
    from rouba_training.trainer import train

    run_dir = work / name.replace(" ", "_").replace(",", "")
    total = int((args.updates + 0.5) * args.num_envs * args.rollout_steps * STEPS_PER_ENGINE_STEP)
    config = TrainConfig.of(run_dir=str(run_dir), total_steps=total, num_envs=args.num_envs,
                         rollout_steps=args.rollout_steps, eval_interval=0, final_eval_games=0,
                         checkpoint_interval=10 ** 6, progress=False, seed=args.seed, **settings)
    started = time.perf_counter()
    train(config)
    steps_per_second, updates = steady_steps_per_second(run_dir, args.warmup)
    row = {"setup": name, "learner_steps_per_second": round(steps_per_second), "updates_measured": updates,
           "wall_seconds_with_startup": round(time.perf_counter() - started, 1), "settings": settings}
    print(f"{name:<32} {row['learner_steps_per_second']:>8} steps/s  ({updates} updates, "
          f"{row['wall_seconds_with_startup']} s with start-up)", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=6, help="updates per setup (about)")
    parser.add_argument("--warmup", type=int, default=2, help="first updates left out of the rate")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--rollout-steps", type=int, default=48)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    if args.updates <= args.warmup or args.warmup < 0:
        parser.error("need --updates > --warmup >= 0")
    import ray
    from ray.cluster_utils import Cluster

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        rows.append(run("single process", {}, args, work))
        rows.append(run("single process, 1 torch thread", {"torch_threads": 1}, args, work))
        for workers in (1, 2):
            ray.init(num_cpus=max(os.cpu_count() or 1, workers), include_dashboard=False, configure_logging=False)
            try:
                rows.append(run(f"ray, {workers} actor{'s' * (workers > 1)}, one node",
                                {"ray": "local", "rollout_workers": workers}, args, work))
            finally:
                ray.shutdown()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        cluster.add_node(num_cpus=1)
        try:
            ray.init(address=cluster.address, configure_logging=False)
            rows.append(run("ray, 2 actors, two nodes", {"ray": cluster.address, "rollout_workers": 2}, args, work))
        finally:
            ray.shutdown()
            cluster.shutdown()
        rows.append(run("single process, again", {}, args, work))
    data = {
        "what": "learner steps/s of PPO self-play training (collection + update), after warm-up",
        "command": " ".join(["python", "scripts/bench_ray.py", *(sys.argv[1:] if argv is None else argv)]),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "ray": ray.__version__},
        "num_envs": args.num_envs, "rollout_steps": args.rollout_steps, "results": rows,
    }
    write_atomically(args.json, json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
