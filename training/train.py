"""The PPO self-play training loop: one linear, readable `train` function.

Run it with ``rouba-train`` (see `rouba_training.config.TrainConfig`). The run
folder's files and its guarantees are described in `rouba_training.run_folder`.
SIGINT (Ctrl-C) or SIGTERM finishes the current update, writes a checkpoint and
returns; checkpoints also come every ``checkpoint_interval`` updates and every
``checkpoint_minutes``, so a kill loses little.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch

from rouba_env.encoding.observation import OBSERVATION_VERSION
from rouba_env.evaluation.game_tree import solvable_tree
from rouba_env.files import write_atomically
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import make_rules
from rouba_env.vector_table import require_batch_player
from rouba_training.config import TrainConfig
from rouba_training.learner import RunProgress, build_learner
from rouba_training.network import ActorCritic, save_policy
from rouba_training.periodic_evaluation import evaluate_network
from rouba_training.plots import plot_learning_curve
from rouba_training.ppo import LOSS_STATS, REGULARIZER_STATS, Regularization, ppo_update
from rouba_training.regularizers import scheduled
from rouba_training.rollout import SelfPlayGames, merge
from rouba_training.run_folder import (
    EVAL_FILE,
    FINAL_EVAL_FILE,
    METRICS_FILE,
    POLICY_DIR,
    TENSORBOARD_DIR,
    RunFolderError,
    append_rows,
    is_complete,
    policy_update,
    prepare,
    read_resume_file,
    require_checkpoint,
    save_resume_file,
    truncate_rows,
)

METRIC_FIELDS = [
    "update", "learner_steps", "engine_steps", "games", "seconds", "steps_per_second",
    "learning_rate", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
    "train_reward", "pool_size", "hand_loss", "magnet_kl", "mirror_kl",
]
EVAL_FIELDS = ["update", "learner_steps", "opponent", "games", "win_rate", "win_low", "win_high",
               "mean_margin", "mean_score", "kind", "nash_conv"]
SHAPE_FIELDS = ("num_players", "max_players", "architecture", "hidden_sizes", "rules", "critic", "hand_coef")
"""Settings a resumed run cannot change: they fix the network's input and output sizes."""
EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""Exit codes of a run stopped by a signal (128 + the signal number), after its checkpoint is written."""


@contextlib.contextmanager
def stop_on_signals(signals=(signal.SIGINT, signal.SIGTERM)):
    """Within the block, SIGINT/SIGTERM only ask to stop (``received[0]`` names the signal); a second one stops at once."""
    received: list[signal.Signals] = []
    previous = {}

    def ask_to_stop(number, frame):
        if received:  # asked twice: stop now (the last checkpoint stays)
            signal.signal(number, previous[number])
            raise KeyboardInterrupt
        received.append(signal.Signals(number))
        print(f"\n{signal.Signals(number).name}: stopping after this update and writing a checkpoint "
              f"(send it again to stop at once)", file=sys.stderr, flush=True)

    try:
        for number in signals:
            previous[number] = signal.signal(number, ask_to_stop)
    except ValueError:  # not the main thread: signals stay as they are
        previous.clear()
    try:
        yield received
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def resume_command(config: TrainConfig) -> str:
    return f"rouba-train --resume --run-dir {config.run_dir}"


def train(config: TrainConfig, resume: bool = False, command: str | None = None, overwrite: bool = False,
          saved: dict | None = None) -> dict:
    """Train by PPO self-play; returns the final evaluation (also written to the run folder).

    ``resume`` carries on from the run folder's checkpoint (``saved``: that
    checkpoint already read by `read_resume_file`, else it is read here);
    ``overwrite`` deletes an earlier run in the folder. A run stopped by
    SIGINT/SIGTERM returns early with ``interrupted`` set to the signal's name. Resuming a run that has
    already trained ``total_steps`` and finished its final evaluation changes nothing and returns with
    ``complete`` set.
    """
    run_dir = Path(config.run_dir)
    # Everything the run will use is resolved before the folder is touched: a bad rules preset or player spec
    # fails here, leaving no empty run folder behind and losing no work later.
    max_players = config.padded_players
    tables = [make_rules(config.rules, num_players=n) for n in config.num_players]
    scripted = {spec: [make_policy(spec, rules, max_players) for rules in tables] for spec in config.scripted_opponents}
    for spec, policies in scripted.items():
        require_batch_player(policies[0], f"the trainer's opponent pool ({spec!r})")
    for spec in config.eval_opponents:
        for rules in tables:
            make_policy(spec, rules, max_players)
    if resume:
        require_checkpoint(run_dir)
        saved = read_resume_file(run_dir) if saved is None else saved
        if is_complete(run_dir, saved, config.total_steps):
            return {"complete": True, "learner_steps": saved["learner_steps"], "updates": saved["update"],
                    "seconds_training": round(saved["seconds"], 1), "evaluation": saved.get("latest_eval", []),
                    "interrupted": None}
    device = torch.device(config.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"--device {config.device} asked for, but torch sees no CUDA device")
    prepare(run_dir, resume, overwrite)
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    command = command or " ".join(["python"] + sys.argv)

    # Seeding: numpy for the engine, seats and opponents; torch for weights and sampling.
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    generator = torch.Generator(device=device)
    generator.manual_seed(config.seed)

    learner = build_learner(config, tables, max_players, device, scripted)
    network, optimizer, pool = learner.network, learner.optimizer, learner.pool
    run = RunProgress()
    if resume:
        fixed = sorted(k for k in SHAPE_FIELDS if saved["config"].get(k, config.to_dict()[k]) != config.to_dict()[k])
        if fixed:
            raise ValueError(f"--resume: {fixed} differ from the checkpoint's "
                             f"({ {k: saved['config'][k] for k in fixed} }); they fix the network's shape")
        try:
            # RNG states stay on the CPU; load_state_dict moves weights to the parameters' device.
            learner.load_state_dict(saved)
            rng.bit_generator.state = saved["numpy_rng"]
            torch.set_rng_state(saved["torch_rng"])
            generator.set_state(saved["generator"])
        except (RuntimeError, KeyError, ValueError, TypeError) as error:
            raise RunFolderError(f"cannot resume from {run_dir / 'checkpoint.pt'}: it does not match this run "
                                 f"({type(error).__name__}: {str(error).splitlines()[0][:200]})") from None
        run = RunProgress.from_saved(saved)
        truncate_rows(run_dir / METRICS_FILE, run.update)
        truncate_rows(run_dir / EVAL_FILE, run.update)
    if config.ray:  # rollout actors on a Ray cluster collect the batch (rouba_training.distributed)
        from rouba_training.distributed import RayCollector

        collector = RayCollector(config, tables, max_players, pool, run.update)
        collect = collector.collect
    else:
        runners = [
            SelfPlayGames(rules, index, config.num_envs, config.seed * 7919 + 104729 * index + run.update,
                          max_players, config.reward, pool, rng, config.records_every_seat)
            for index, rules in enumerate(tables)
        ]

        def collect(network: ActorCritic):
            return merge([runner.collect(network, device, generator, config.rollout_steps, config.gamma,
                                         config.gae_lambda) for runner in runners])

    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    # On resume, TensorBoard drops the points logged after the checkpoint (their step axis is learner steps).
    writer = SummaryWriter(str(run_dir / TENSORBOARD_DIR), purge_step=run.learner_steps + 1 if resume else None)
    bar = tqdm(total=config.total_steps, initial=min(run.learner_steps, config.total_steps), unit="step",
               disable=not config.progress, dynamic_ncols=True, desc="training")

    def save_checkpoint() -> None:
        # checkpoint.pt first: a kill before policy/ is rewritten is repaired on resume (policy from checkpoint).
        save_resume_file(run_dir, {
            "config": config.to_dict(), **learner.state_dict(), **run.state_dict(),
            "numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
            "generator": generator.get_state(), "observation_version": OBSERVATION_VERSION,
        })
        save_policy(run_dir / POLICY_DIR, learner.played(config), tables[0], max_players, extra={
            "learner_steps": run.learner_steps, "update": run.update, "command": command,
            "train_config": config.to_dict(), "num_players_trained": list(config.num_players),
            "evaluation": run.latest_eval,
        })

    if resume and policy_update(run_dir) != run.update:
        save_policy(run_dir / POLICY_DIR, learner.played(config), tables[0], max_players, extra={
            "learner_steps": run.learner_steps, "update": run.update, "command": command,
            "train_config": config.to_dict(), "num_players_trained": list(config.num_players),
            "evaluation": run.latest_eval,
        })

    def regularization() -> Regularization | None:
        """This update's KL terms, their weights on their schedules."""
        if config.magnet == "none" and config.mirror_coef == 0:
            return None
        progress = run.learner_steps / config.total_steps
        return Regularization(
            magnet_coef=scheduled(config.magnet_schedule, config.magnet_coef, progress, run.update,
                                  power=config.schedule_power),
            mirror_coef=scheduled(config.mirror_schedule, config.mirror_coef, progress, run.update,
                                  power=config.schedule_power),
            magnet=learner.magnet(config))

    trees = {rules: solvable_tree(rules, config.reward) for rules in tables}
    """The whole game tree of each table small enough to solve exactly: its NashConv joins every evaluation."""

    def run_evaluation(games_per_opponent: int, kind: str) -> list[dict]:
        rows = []
        for rules in tables:
            for row in evaluate_network(learner.played(config), rules, max_players, config.eval_opponents, games_per_opponent,
                                        tree=trees[rules]):
                row = {"update": run.update, "learner_steps": run.learner_steps, **row, "kind": kind}
                if len(tables) > 1:
                    row["opponent"] = f"{row['opponent']}@{rules.num_players}p"
                rows.append(row)
                writer.add_scalar(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"], run.learner_steps)
        return rows

    if not resume:
        save_checkpoint()  # update 0: even a kill during the first update leaves a run to resume
    last_checkpoint = time.monotonic()
    evaluation_seconds = 0.0  # periodic evaluations in this process
    due = config.eval_interval and run.update and run.update % config.eval_interval == 0
    if resume and due and not any(row.get("update") == run.update for row in run.latest_eval):
        # The run was stopped at an update whose evaluation the signal cut off: it is made now.
        run.latest_eval = run_evaluation(config.eval_games, "periodic")
        append_rows(run_dir / EVAL_FILE, EVAL_FIELDS, run.latest_eval)
    with stop_on_signals() as received:
        while run.learner_steps < config.total_steps and not received:
            started = time.perf_counter()
            for group in optimizer.param_groups:
                group["lr"] = scheduled(config.learning_rate_schedule, config.learning_rate,
                                        run.learner_steps / config.total_steps, run.update,
                                        config.learning_rate_floor, config.schedule_power)

            network.eval()
            batch = collect(network)
            stats = ppo_update(network, optimizer, batch, config, generator, device, run.update + 1,
                               regularization())
            learner.after_update(config, run.update + 1)
            size = len(batch.actions)
            seconds = time.perf_counter() - started
            run.record(batch, seconds)
            row = {
                "update": run.update, "learner_steps": run.learner_steps, "engine_steps": run.engine_steps,
                "games": run.games,
                "seconds": round(run.seconds, 2), "steps_per_second": round(size / seconds, 1),
                "learning_rate": optimizer.param_groups[0]["lr"],
                **{name: stats[name] for name in LOSS_STATS},
                "train_reward": float(np.mean(batch.learner_rewards)) if batch.learner_rewards else 0.0,
                "pool_size": len(pool.snapshots),
            }
            row.update({name: stats.get(name, 0.0) for name in REGULARIZER_STATS})
            append_rows(run_dir / METRICS_FILE, METRIC_FIELDS, [row])
            for name in METRIC_FIELDS[5:]:
                writer.add_scalar(f"train/{name}", row[name], run.learner_steps)
            bar.update(min(size, bar.total - bar.n))  # the last update runs past total_steps: the bar stops there
            bar.set_postfix(sps=f"{row['steps_per_second']:.0f}", reward=f"{row['train_reward']:+.2f}",
                            kl=f"{row['approx_kl']:.3f}", steps=run.learner_steps)

            if run.update % config.snapshot_interval == 0:
                pool.add_snapshot(network, run.learner_steps)
            if config.eval_interval and run.update % config.eval_interval == 0 and not received:
                evaluation_started = time.perf_counter()
                run.latest_eval = run_evaluation(config.eval_games, "periodic")
                evaluation_seconds += time.perf_counter() - evaluation_started
                append_rows(run_dir / EVAL_FILE, EVAL_FIELDS, run.latest_eval)
                solved = {r["nash_conv"] for r in run.latest_eval if "nash_conv" in r}
                bar.write(f"update {run.update}, {run.learner_steps} steps: " + ", ".join(
                    f"vs {r['opponent']} {r['win_rate']:.1%} [{r['win_low']:.1%}, {r['win_high']:.1%}]"
                    for r in run.latest_eval) + "".join(f", NashConv {value:.4f}" for value in sorted(solved)))
            minutes = (time.monotonic() - last_checkpoint) / 60
            if (run.update % config.checkpoint_interval == 0 or received
                    or (config.checkpoint_minutes and minutes >= config.checkpoint_minutes)):
                save_checkpoint()
                last_checkpoint = time.monotonic()
        interrupted = received[0].name if received else None

    bar.close()
    if config.ray:
        collector.close()
    final = {"learner_steps": run.learner_steps, "updates": run.update,
             "seconds_training": round(run.seconds, 1),
             "learner_steps_per_second": round(run.learner_steps / max(run.seconds, 1e-9), 1), "evaluation": [],
             "seconds_periodic_evaluations": round(evaluation_seconds, 1), "interrupted": interrupted}
    if interrupted:
        writer.close()
        final["resume_command"] = resume_command(config)
        return final
    save_checkpoint()
    if config.final_eval_games:
        started = time.perf_counter()
        final["evaluation"] = run_evaluation(config.final_eval_games, "final")
        final["seconds_final_evaluation"] = round(time.perf_counter() - started, 1)
        run.latest_eval = final["evaluation"]
        append_rows(run_dir / EVAL_FILE, EVAL_FIELDS, run.latest_eval)
        save_checkpoint()
    write_atomically(run_dir / FINAL_EVAL_FILE, json.dumps(final, indent=2) + "\n")
    plot_learning_curve(run_dir)
    writer.close()
    return final
