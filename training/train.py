"""The PPO self-play training loop: one linear, readable `train` function.

Run it with ``python scripts/train.py`` (see `rouba_training.config.TrainConfig`).
A run folder holds ``checkpoint.pt`` (everything needed to resume: weights,
optimizer, opponent pool, counters, RNG states; loaded with
``weights_only=True``), ``policy/`` (the latest policy as safetensors +
metadata, loadable with ``checkpoint:RUN_DIR/policy``), ``metrics.csv``,
``eval.csv``, TensorBoard events under ``tb/``, ``final_eval.json`` and
``learning_curve.png``.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.config import make_rules
from rouba_training.network import ActorCritic, save_policy
from rouba_env.encoding.observation import OBSERVATION_VERSION, ObservationEncoder
from rouba_env.players.registry import make_policy
from rouba_training.config import TrainConfig
from rouba_training.periodic_evaluation import evaluate_network
from rouba_training.opponents import OpponentPool
from rouba_training.ppo import ppo_update
from rouba_training.rollout import TableRunner, merge

METRIC_FIELDS = [
    "update", "learner_steps", "engine_steps", "games", "seconds", "steps_per_second",
    "learning_rate", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
    "train_reward", "pool_size",
]
EVAL_FIELDS = ["update", "learner_steps", "opponent", "games", "win_rate", "win_low", "win_high",
               "mean_margin", "mean_score"]
SHAPE_FIELDS = ("num_players", "max_players", "hidden_sizes", "rules")
"""Settings a resumed run cannot change: they fix the network's input and output sizes."""
CHECKPOINT_FILE = "checkpoint.pt"
POLICY_DIR = "policy"


def _atomic_torch_save(obj, path: Path) -> None:
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(handle)
    try:
        torch.save(obj, temp)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _append_rows(path: Path, fields: list[str], rows: list[dict]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=fields)
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _truncate_rows(path: Path, last_update: int) -> None:
    """Drop rows written after the checkpoint we resume from (atomically)."""
    if not path.exists():
        return
    with path.open(newline="") as stream:
        reader = csv.DictReader(stream)
        fields = reader.fieldnames or []
        rows = [row for row in reader if int(row["update"]) <= last_update]
    handle, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(temp, path)


def plot_learning_curve(run_dir: Path) -> Path | None:
    """learning_curve.png: evaluation win rates (with intervals) and training reward against learner steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eval_path, metrics_path = run_dir / "eval.csv", run_dir / "metrics.csv"
    if not metrics_path.exists():
        return None
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    if eval_path.exists():
        with eval_path.open(newline="") as stream:
            rows = list(csv.DictReader(stream))
        for opponent in dict.fromkeys(r["opponent"] for r in rows):
            mine = [r for r in rows if r["opponent"] == opponent]
            x = [int(r["learner_steps"]) for r in mine]
            left.plot(x, [float(r["win_rate"]) for r in mine], marker="o", label=f"vs {opponent}")
            left.fill_between(x, [float(r["win_low"]) for r in mine], [float(r["win_high"]) for r in mine], alpha=0.2)
    left.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    left.set(xlabel="learner steps", ylabel="win rate (95% interval)", title="Evaluation (duplicate deals)", ylim=(0, 1))
    if left.get_legend_handles_labels()[0]:
        left.legend(fontsize="small")
    with metrics_path.open(newline="") as stream:
        metrics = list(csv.DictReader(stream))
    right.plot([int(r["learner_steps"]) for r in metrics], [float(r["train_reward"]) for r in metrics])
    right.set(xlabel="learner steps", ylabel="mean final training reward", title="Training games (mixed opponents)")
    figure.tight_layout()
    path = run_dir / "learning_curve.png"
    handle, temp = tempfile.mkstemp(dir=run_dir, suffix=".png")
    os.close(handle)
    figure.savefig(temp, dpi=110)
    plt.close(figure)
    os.replace(temp, path)
    return path


def train(config: TrainConfig, resume: bool = False, command: str | None = None) -> dict:
    """Train by PPO self-play; returns the final evaluation (also written to the run folder)."""
    run_dir = Path(config.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    device = torch.device(config.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda asked for, but torch sees no CUDA device")
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    command = command or " ".join(["python"] + sys.argv)

    # Seeding: numpy for the engine, seats and opponents; torch for weights and sampling.
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    generator = torch.Generator(device=device)
    generator.manual_seed(config.seed)

    max_players = config.padded_players
    tables = [make_rules(config.rules, num_players=n) for n in config.num_players]
    obs_size = ObservationEncoder(tables[0], max_players).size
    num_actions = ActionEncoding(tables[0], max_players).size
    network = ActorCritic(obs_size, num_actions, config.hidden_sizes).to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate, eps=1e-5)
    scripted = {spec: [make_policy(spec, rules, max_players) for rules in tables] for spec in config.scripted_opponents}
    pool = OpponentPool(scripted, (config.self_play_weight, config.past_self_weight, config.scripted_weight),
                        config.pool_size)

    learner_steps, engine_steps, games, update, elapsed = 0, 0, 0, 0, 0.0
    latest_eval: list[dict] = []
    checkpoint_path = run_dir / CHECKPOINT_FILE
    if resume:
        if not checkpoint_path.exists():
            raise FileNotFoundError(f"--resume: no {CHECKPOINT_FILE} in {run_dir}")
        # RNG states must stay on the CPU; load_state_dict moves weights to the parameters' device.
        saved = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
        changed = sorted(k for k, v in saved["config"].items() if config.to_dict().get(k) != v)
        fixed = sorted(set(changed) & set(SHAPE_FIELDS))
        if fixed:
            raise ValueError(f"--resume: {fixed} differ from the checkpoint's "
                             f"({ {k: saved['config'][k] for k in fixed} }); they fix the network's shape")
        if set(changed) - {"total_steps"}:
            print(f"note: resuming with changed settings {changed}", file=sys.stderr)
        network.load_state_dict(saved["network"])
        optimizer.load_state_dict(saved["optimizer"])
        pool.load_state_dict(saved["pool"], network)
        learner_steps, engine_steps, games = saved["learner_steps"], saved["engine_steps"], saved["games"]
        update, elapsed = saved["update"], saved["seconds"]
        latest_eval = list(saved.get("latest_eval", []))
        rng.bit_generator.state = saved["numpy_rng"]
        torch.set_rng_state(saved["torch_rng"])
        generator.set_state(saved["generator"])
        _truncate_rows(run_dir / "metrics.csv", update)
        _truncate_rows(run_dir / "eval.csv", update)
    if config.ray:  # rollout actors on a Ray cluster collect the batch (training/distributed.py)
        from rouba_training.distributed import RayCollector

        collector = RayCollector(config, tables, max_players, pool, update)
        collect = collector.collect
    else:
        runners = [
            TableRunner(rules, index, config.num_envs, config.seed * 7919 + 104729 * index + update, max_players,
                        config.reward, pool, rng)
            for index, rules in enumerate(tables)
        ]

        def collect(network: ActorCritic):
            return merge([runner.collect(network, device, generator, config.rollout_steps, config.gamma,
                                         config.gae_lambda) for runner in runners])

    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    writer = SummaryWriter(str(run_dir / "tb"))
    bar = tqdm(total=config.total_steps, initial=min(learner_steps, config.total_steps), unit="step",
               disable=not config.progress, dynamic_ncols=True, desc="training")

    def save_checkpoint() -> None:
        save_policy(run_dir / POLICY_DIR, network, tables[0], max_players, extra={
            "learner_steps": learner_steps, "update": update, "command": command,
            "train_config": config.to_dict(), "num_players_trained": list(config.num_players),
            "evaluation": latest_eval,
        })
        _atomic_torch_save({
            "config": config.to_dict(), "network": network.state_dict(), "optimizer": optimizer.state_dict(),
            "pool": pool.state_dict(), "learner_steps": learner_steps, "engine_steps": engine_steps,
            "games": games, "update": update, "seconds": elapsed, "numpy_rng": rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(), "generator": generator.get_state(),
            "observation_version": OBSERVATION_VERSION, "latest_eval": latest_eval,
        }, checkpoint_path)

    def run_evaluation(games_per_opponent: int) -> list[dict]:
        rows = []
        for rules in tables:
            for row in evaluate_network(network, rules, max_players, config.eval_opponents, games_per_opponent):
                row = {"update": update, "learner_steps": learner_steps, **row}
                if len(tables) > 1:
                    row["opponent"] = f"{row['opponent']}@{rules.num_players}p"
                rows.append(row)
                writer.add_scalar(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"], learner_steps)
        return rows

    while learner_steps < config.total_steps:
        started = time.perf_counter()
        fraction_left = 1.0 - learner_steps / config.total_steps
        for group in optimizer.param_groups:
            group["lr"] = config.learning_rate * fraction_left

        network.eval()
        batch = collect(network)
        stats = ppo_update(network, optimizer, batch, config, generator, device, update + 1)
        size = len(batch.actions)

        update += 1
        learner_steps += size
        engine_steps += batch.engine_steps
        games += batch.games_finished
        seconds = time.perf_counter() - started
        elapsed += seconds
        row = {
            "update": update, "learner_steps": learner_steps, "engine_steps": engine_steps, "games": games,
            "seconds": round(elapsed, 2), "steps_per_second": round(size / seconds, 1),
            "learning_rate": optimizer.param_groups[0]["lr"],
            **stats,
            "train_reward": float(np.mean(batch.learner_rewards)) if batch.learner_rewards else 0.0,
            "pool_size": len(pool.snapshots),
        }
        _append_rows(run_dir / "metrics.csv", METRIC_FIELDS, [row])
        for name in METRIC_FIELDS[5:]:
            writer.add_scalar(f"train/{name}", row[name], learner_steps)
        bar.update(min(size, config.total_steps - bar.n))
        bar.set_postfix(sps=f"{row['steps_per_second']:.0f}", reward=f"{row['train_reward']:+.2f}",
                        kl=f"{row['approx_kl']:.3f}")

        if update % config.snapshot_interval == 0:
            pool.add_snapshot(network, learner_steps)
        if config.eval_interval and update % config.eval_interval == 0:
            latest_eval = run_evaluation(config.eval_games)
            _append_rows(run_dir / "eval.csv", EVAL_FIELDS, latest_eval)
            bar.write(f"update {update}, {learner_steps} steps: " + ", ".join(
                f"vs {r['opponent']} {r['win_rate']:.1%} [{r['win_low']:.1%}, {r['win_high']:.1%}]" for r in latest_eval))
        if update % config.checkpoint_interval == 0:
            save_checkpoint()

    bar.close()
    if config.ray:
        collector.close()
    save_checkpoint()
    final = {"learner_steps": learner_steps, "updates": update, "seconds_training": round(elapsed, 1),
             "learner_steps_per_second": round(learner_steps / max(elapsed, 1e-9), 1), "evaluation": []}
    if config.final_eval_games:
        started = time.perf_counter()
        final["evaluation"] = run_evaluation(config.final_eval_games)
        final["seconds_final_evaluation"] = round(time.perf_counter() - started, 1)
        latest_eval = final["evaluation"]
        _append_rows(run_dir / "eval.csv", EVAL_FIELDS, latest_eval)
        save_checkpoint()
    handle, temp = tempfile.mkstemp(dir=run_dir, suffix=".tmp")
    with os.fdopen(handle, "w") as stream:
        json.dump(final, stream, indent=2)
    os.replace(temp, run_dir / "final_eval.json")
    plot_learning_curve(run_dir)
    writer.close()
    return final
