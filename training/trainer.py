"""The PPO self-play training loop: a `Trainer` whose state is what a checkpoint saves, one method a step.

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
from rouba_env.solve.game_tree import solvable_tree
from rouba_env.files import write_atomically
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import make_rules
from rouba_training.best_response import describe_bound, exact_target, exploitability_bound
from rouba_training.config import TrainConfig, resolve_start
from rouba_training.learner import RunProgress, build_learner
from rouba_training.network import save_policy
from rouba_training.periodic_evaluation import evaluate_network
from rouba_training.plots import plot_learning_curve
from rouba_training.losses import loss_statistics
from rouba_training.ppo import Regularization, ppo_update
from rouba_training.regularizers import scheduled, scheduled_until
from rouba_training.rollout import Collector, LocalCollector, SelfPlayGames
from rouba_training.searched_values import SEARCH_STATS, DecisionSearch
from rouba_training.seeds import collector_seeds
from rouba_training.threads import TorchThreads
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

RUN_FIELDS = ("update", "learner_steps", "engine_steps", "games", "seconds", "steps_per_second")
"""The columns of ``metrics.csv`` that count the run (TensorBoard's axis is learner_steps)."""
UPDATE_FIELDS = ("learning_rate", "train_reward", "pool_size")
"""The update's own columns, before its loss terms' statistics (`metric_fields`)."""


def metric_fields() -> list[str]:
    """The columns of ``metrics.csv``: the run's counts, the update's, every loss term's statistics
    (`rouba_training.losses.loss_statistics`) and the search's."""
    return [*RUN_FIELDS, *UPDATE_FIELDS, *loss_statistics(), *SEARCH_STATS]


EVAL_FIELDS = ["update", "learner_steps", "opponent", "games", "win_rate", "win_low", "win_high",
               "mean_margin", "mean_score", "kind", "nash_conv", "margin_low", "margin_high", "bound", "bound_low",
               "bound_high", "exact_value", "exact_best_response"]
SHAPE_FIELDS = ("num_players", "max_players", "architecture", "hidden_sizes", "rules", "critic", "hand_coef",
                "policy_objective")
"""Settings a resumed run cannot change: they fix the network's input and output sizes (and its heads)."""
BEFORE_SHAPE_FIELDS = {"policy_objective": "clipped"}
"""What a run saved before a shape field existed held at it."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Signals that ask a run to stop after its update (a second one stops it at once)."""
EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""Exit codes of a run stopped by a signal (128 + the signal number), after its checkpoint is written."""


@contextlib.contextmanager
def stop_on_signals(signals=STOP_SIGNALS):
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
    return f"rouba-train --resume --run-dir {config.run.run_dir}"


class Trainer:
    """One training run: its settings, its state and the steps of its loop.

    The state is what a checkpoint saves (`state_dict`): the learner (network, optimizer, opponent pool,
    moving average, magnet), the run's progress and the random generators (numpy for the engine, seats
    and opponents; torch for weights and sampling). Each step of the loop is one method: the collector's
    ``collect`` (a `Collector`: this process, or Ray actors with ``ray``), `update`, `evaluate`,
    `save_checkpoint`; `run` strings them together.
    """

    def __init__(self, config: TrainConfig, *, resume: bool = False, command: str | None = None,
                 overwrite: bool = False, saved: dict | None = None):
        self.config = config = resolve_start(config)  # the files it names read, its network start's settings
        self.resume = resume
        self.run_dir = run_dir = Path(config.run.run_dir)
        # Everything the run will use is resolved before the folder is touched: a bad rules preset or player
        # spec fails here, leaving no empty run folder behind and losing no work later.
        self.max_players = config.padded_players
        self.rules_per_size = [make_rules(config.run.rules, num_players=n) for n in config.run.num_players]
        scripted = self._make_opponents()
        self.complete: dict | None = None
        """The answer of a run that has already trained ``total_steps`` and made its final evaluation."""
        if resume:
            require_checkpoint(run_dir)
            saved = read_resume_file(run_dir) if saved is None else saved
            if is_complete(run_dir, saved, config.run.total_steps):
                self.complete = {"complete": True, "learner_steps": saved["learner_steps"],
                                 "updates": saved["update"], "seconds_training": round(saved["seconds"], 1),
                                 "evaluation": saved.get("latest_eval", []), "interrupted": None}
                return
        self.device = device = torch.device(config.run.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"--device {config.run.device} asked for, but torch sees no CUDA device")
        self._join_ray_and_prepare_folder(overwrite=overwrite)
        # with Ray the batch is collected elsewhere, and the idle cores say nothing about the update
        self.threads = TorchThreads(config.run.torch_threads, adaptive=not config.scale_out.ray and device.type == "cpu")
        self.command = command or " ".join(["python"] + sys.argv)
        self._start_learner(scripted=scripted, saved=saved)
        self.collector = self.make_collector()
        self.trees = {rules: solvable_tree(rules, config.run.reward) for rules in self.rules_per_size}
        """The whole game tree of each table small enough to solve exactly: its NashConv joins every evaluation."""
        self.targets = {rules: exact_target(tree, config.opponents.best_response, rules, self.max_players)
                        for rules, tree in self.trees.items() if tree is not None and config.opponents.best_response}
        """A best response's target on each solvable table: how it plays and its exact best response's value."""
        from torch.utils.tensorboard import SummaryWriter

        # On resume, TensorBoard drops the points logged after the checkpoint (their step axis is learner steps).
        self.writer = SummaryWriter(str(run_dir / TENSORBOARD_DIR),
                                    purge_step=self.run_progress.learner_steps + 1 if resume else None)

    def _make_opponents(self) -> dict:
        """The scripted opponents, spec -> one player per table; the evaluation opponents are made too, and
        dropped, so that a bad spec fails before the run folder is touched."""
        config, rules_per_size, max_players = self.config, self.rules_per_size, self.max_players
        scripted = {spec: [make_policy(spec, rules, max_players) for rules in rules_per_size]
                    for spec in config.opponents.scripted_opponents}
        for spec in config.evaluation.eval_opponents:
            for rules in rules_per_size:
                make_policy(spec, rules, max_players)
        return scripted

    def _join_ray_and_prepare_folder(self, *, overwrite: bool) -> None:
        """Join the Ray cluster (with ``ray``) before the run folder is touched, so that a bad address changes
        nothing there, then prepare the folder; a cluster started here is shut down if that fails."""
        config = self.config
        started_ray = None
        if config.scale_out.ray:
            from rouba_training.distributed import join_ray

            started_ray = join_ray(config)
        self.started_ray = started_ray
        try:
            prepare(self.run_dir, self.resume, overwrite)
        except BaseException:
            if started_ray:
                import ray

                ray.shutdown()
            raise

    def _start_learner(self, *, scripted: dict, saved: dict | None) -> None:
        """Seed the random generators, build the learner and, on resume, load the checkpoint into them and cut
        the run's CSV files back to its update."""
        config, rules_per_size, device = self.config, self.rules_per_size, self.device
        first = collector_seeds(config.run.seed, len(rules_per_size))  # the trainer is collector 0 (rouba_training.seeds)
        self.rng = first.generator()
        torch.manual_seed(first.torch_seed)
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(first.torch_seed)
        self.learner = build_learner(config, rules_per_size, self.max_players, device=device, scripted=scripted)
        self.network_start = config.network_start()
        self.run_progress = RunProgress()
        if self.resume:
            self.load_state_dict(saved)
            truncate_rows(self.run_dir / METRICS_FILE, self.run_progress.update)
            truncate_rows(self.run_dir / EVAL_FILE, self.run_progress.update)

    # ---------------------------------------------------------------- the state

    def state_dict(self) -> dict:
        """What a checkpoint holds: the settings, the learner, the progress and the random generators."""
        return {"config": self.config.to_dict(), "config_sources": self.config.sources, **self.learner.state_dict(), **self.run_progress.state_dict(),
                "numpy_rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "generator": self.generator.get_state(), "observation_version": OBSERVATION_VERSION}

    def load_state_dict(self, saved: dict) -> None:
        """Carry on from a checkpoint of this run; a ValueError if it changes the network's shape."""
        config = self.config
        asked = config.to_dict()
        held = {k: saved["config"].get(k, BEFORE_SHAPE_FIELDS.get(k, asked[k])) for k in SHAPE_FIELDS}
        fixed = sorted(k for k in SHAPE_FIELDS if held[k] != asked[k])
        if fixed:
            raise ValueError(f"--resume: {fixed} differ from the checkpoint's "
                             f"({ {k: held[k] for k in fixed} }); they fix the network's shape")
        try:
            # RNG states stay on the CPU; load_state_dict moves weights to the parameters' device.
            self.learner.load_state_dict(saved)
            self.rng.bit_generator.state = saved["numpy_rng"]
            torch.set_rng_state(saved["torch_rng"])
            self.generator.set_state(saved["generator"])
        except (RuntimeError, KeyError, ValueError, TypeError) as error:
            raise RunFolderError(f"cannot resume from {self.run_dir / 'checkpoint.pt'}: it does not match this run "
                                 f"({type(error).__name__}: {str(error).splitlines()[0][:200]})") from None
        self.run_progress = RunProgress.from_saved(saved)

    def save_checkpoint(self) -> None:
        # checkpoint.pt first: a kill before policy/ is rewritten is repaired on resume (policy from checkpoint).
        save_resume_file(self.run_dir, self.state_dict())
        self.save_policy()

    def save_policy(self) -> None:
        """The played network, with the run's settings and latest evaluation, as the run's policy folder."""
        run, config = self.run_progress, self.config
        save_policy(self.run_dir / POLICY_DIR, self.learner.network, self.rules_per_size[0], max_players=self.max_players,
                    extra={
            "learner_steps": run.learner_steps, "update": run.update, "command": self.command,
            "train_config": config.to_dict(), "train_config_sources": config.sources,
            "num_players_trained": list(config.run.num_players),
            "evaluation": run.latest_eval,
        })

    # ---------------------------------------------------------------- the steps

    def make_collector(self) -> Collector:
        """Where the batches come from: Ray actors with ``ray``, else this process."""
        config, rules_per_size = self.config, self.rules_per_size
        if config.scale_out.ray:  # rollout actors on a Ray cluster collect the batch (rouba_training.distributed)
            from rouba_training.distributed import RayCollector

            return RayCollector(config, rules_per_size, self.max_players, pool=self.learner.pool,
                                update=self.run_progress.update, started_ray=self.started_ray)
        deal_seeds = collector_seeds(config.run.seed, len(rules_per_size), 0, self.run_progress.update).deal_seeds
        games = [SelfPlayGames(rules, index, config.run.num_envs, seed=deal_seeds[index], max_players=self.max_players,
                               reward=config.run.reward, pool=self.learner.pool, rng=self.rng,
                               every_seat=config.records_every_seat, search=self.decision_search(rules))
                 for index, rules in enumerate(rules_per_size)]
        return LocalCollector(games, device=self.device, generator=self.generator,
                              rollout_steps=config.run.rollout_steps, gamma=config.ppo.gamma,
                              gae_lambda=config.ppo.gae_lambda)

    def decision_search(self, rules) -> DecisionSearch | None:
        """What searches a table's decisions (policy_objective searched_mirror), else None."""
        ppo = self.config.ppo
        if ppo.policy_objective != "searched_mirror":
            return None
        return DecisionSearch(rules, self.max_players, reward=self.config.run.reward, worlds=ppo.search_worlds,
                              share=ppo.search_share, cut=ppo.search_cut)

    def regularization(self) -> Regularization | None:
        """This update's KL terms, their weights on their schedules; None when every weight is 0 now."""
        config, learner = self.config, self.learner
        if config.regularizers.magnet == "none" and config.regularizers.mirror_coef == 0 and config.regularizers.support_coef == 0:
            return None
        progress = self.run_progress.learner_steps / config.run.total_steps
        update = self.run_progress.update
        terms = Regularization(
            magnet_coef=scheduled(config.regularizers.magnet_schedule, config.regularizers.magnet_coef, progress, update,
                                  power=config.regularizers.schedule_power),
            mirror_coef=scheduled(config.regularizers.mirror_schedule, config.regularizers.mirror_coef, progress, update,
                                  power=config.regularizers.schedule_power),
            magnet=learner.magnet(config.regularizers),
            support_coef=scheduled_until(config.regularizers.support_schedule, config.regularizers.support_coef, progress, update,
                                         until=config.regularizers.support_until, power=config.regularizers.schedule_power))
        return terms if terms.magnet_coef > 0 or terms.mirror_coef > 0 or terms.support_coef > 0 else None

    def update(self) -> dict:
        """Collect a batch and train on it; the update's row of ``metrics.csv``."""
        config, learner, run = self.config, self.learner, self.run_progress
        network, optimizer = learner.network, learner.optimizer
        started = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = scheduled(config.ppo.learning_rate_schedule, config.ppo.learning_rate,
                                    run.learner_steps / config.run.total_steps, run.update,
                                    floor=config.ppo.learning_rate_floor, power=config.ppo.learning_rate_power)
        network.eval()
        self.threads.collection_started()
        batch = self.collector.collect(network)
        self.threads.before_update()
        stats = ppo_update(network, optimizer, batch, ppo=config.ppo, regularization=self.regularization(),
                           generator=self.generator, device=self.device, update=run.update + 1)
        learner.after_update()
        size = len(batch.actions)
        seconds = time.perf_counter() - started
        run.record(batch, seconds)
        row = {
            "update": run.update, "learner_steps": run.learner_steps, "engine_steps": run.engine_steps,
            "games": run.games,
            "seconds": round(run.seconds, 2), "steps_per_second": round(size / seconds, 1),
            "learning_rate": optimizer.param_groups[0]["lr"],
            "train_reward": float(np.mean(batch.learner_rewards)) if batch.learner_rewards else 0.0,
            "pool_size": len(learner.pool.snapshots),
            **stats,
            **{name: batch.search_statistics.get(name, 0.0) for name in SEARCH_STATS},
        }
        fields = metric_fields()
        append_rows(self.run_dir / METRICS_FILE, fields, [row])
        for name in fields:
            if name not in RUN_FIELDS:
                self.writer.add_scalar(f"train/{name}", row[name], run.learner_steps)
        if run.update % config.opponents.snapshot_interval == 0:
            learner.pool.add_snapshot(network, run.learner_steps)
        return row | {"batch_size": size}

    def evaluate(self, games_per_opponent: int, kind: str) -> list[dict]:
        """Duplicate-deal games against ``eval_opponents`` (and the exact NashConv of a solvable table),
        recorded in ``eval.csv`` as the run's latest evaluation."""
        run, config = self.run_progress, self.config
        rows = []
        for rules in self.rules_per_size:
            target = self.targets.get(rules)
            for row in evaluate_network(self.learner.network, rules, self.max_players,
                                        opponents=config.evaluation.eval_opponents,
                                        games=games_per_opponent, tree=self.trees[rules],
                                        target=None if target is None else target.strategy):
                row = {"update": run.update, "learner_steps": run.learner_steps, **row, "kind": kind}
                if config.opponents.best_response:
                    row |= exploitability_bound(row, rules)
                    if target is not None:
                        row["exact_best_response"] = target.best_response_value
                if len(self.rules_per_size) > 1:
                    row["opponent"] = f"{row['opponent']}@{rules.num_players}p"
                rows.append(row)
                self.writer.add_scalar(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"], run.learner_steps)
        run.latest_eval = rows
        append_rows(self.run_dir / EVAL_FILE, EVAL_FIELDS, rows)
        return rows

    def run(self, catch_signals: bool = True) -> dict:
        """Train to ``total_steps`` (or until SIGINT/SIGTERM), evaluate at the end; the final answer.

        ``catch_signals=False`` leaves SIGINT and SIGTERM as they are: a caller that measures or embeds a run
        (the benchmark) is stopped by them at once, without the run's own stop-and-checkpoint message.
        """
        if self.complete is not None:
            return self.complete
        config, run = self.config, self.run_progress
        from tqdm import tqdm

        bar = tqdm(total=config.run.total_steps, initial=min(run.learner_steps, config.run.total_steps), unit="step",
                   disable=not config.run.progress, dynamic_ncols=True, desc="training")
        last_checkpoint = self._begin_run(bar)
        with stop_on_signals(STOP_SIGNALS if catch_signals else ()) as received:
            self._train_until_stopped(bar, received=received, last_checkpoint=last_checkpoint)
            interrupted = received[0].name if received else None
        bar.close()
        self.collector.close()
        return self._finish_run(interrupted)

    def _begin_run(self, bar) -> float:
        """Before the first update: say how the network starts; on a new run, evaluate a best response's start
        and write update 0's checkpoint; on resume, make the evaluation a stop cut off. Returns the time
        (monotonic) that the minutes between checkpoints count from."""
        config, run = self.config, self.run_progress
        if self.resume and policy_update(self.run_dir) != run.update:
            self.save_policy()
        if config.opponents.best_response:
            bar.write(f"approximate best response to {config.opponents.best_response}: the exploiter starts as "
                      f"{self.network_start.description}")
        elif self.network_start is not None and not self.resume:
            bar.write(f"the network starts as {self.network_start.description}")
        if not self.resume:
            if config.opponents.best_response and config.evaluation.final_eval_games:
                run.start_eval = self.evaluate(config.evaluation.final_eval_games, "start")
                for row in run.start_eval:
                    bar.write(f"start: {describe_bound(row)}")
            self.save_checkpoint()  # update 0: even a kill during the first update leaves a run to resume
        last_checkpoint = time.monotonic()
        if not run.total_steps_asked or run.total_steps_asked[-1] != config.run.total_steps:
            run.total_steps_asked.append(config.run.total_steps)
        due = config.evaluation.eval_interval and run.update and run.update % config.evaluation.eval_interval == 0
        if self.resume and due and not any(row.get("update") == run.update for row in run.latest_eval):
            # The run was stopped at an update whose evaluation the signal cut off: it is made now.
            evaluation_started = time.perf_counter()
            self.evaluate(config.evaluation.eval_games, "periodic")
            run.evaluation_seconds += time.perf_counter() - evaluation_started
        return last_checkpoint

    def _train_until_stopped(self, bar, *, received: list[signal.Signals], last_checkpoint: float) -> None:
        """Update until ``total_steps`` or a stop signal, evaluating and writing checkpoints when they are due."""
        config, run = self.config, self.run_progress
        while run.learner_steps < config.run.total_steps and not received:
            steps_before = run.learner_steps
            row = self.update()
            bar.update(min(row["batch_size"], bar.total - bar.n))  # the last update runs past total_steps
            bar.set_postfix(sps=f"{row['steps_per_second']:.0f}", reward=f"{row['train_reward']:+.2f}",
                            kl=f"{row['approx_kl']:.3f}", steps=run.learner_steps)
            if config.evaluation_due(run.update, steps_before, run.learner_steps) and not received:
                evaluation_started = time.perf_counter()
                rows = self.evaluate(config.evaluation.eval_games, "periodic")
                run.evaluation_seconds += time.perf_counter() - evaluation_started
                solved = {r["nash_conv"] for r in rows if "nash_conv" in r}
                bar.write(f"update {run.update}, {run.learner_steps} steps: " + ", ".join(
                    f"vs {r['opponent']} {r['win_rate']:.1%} [{r['win_low']:.1%}, {r['win_high']:.1%}]"
                    for r in rows) + "".join(f", NashConv {value:.4f}" for value in sorted(solved)))
            minutes = (time.monotonic() - last_checkpoint) / 60
            if (run.update % config.run.checkpoint_interval == 0 or received
                    or (config.run.checkpoint_minutes and minutes >= config.run.checkpoint_minutes)):
                self.save_checkpoint()
                last_checkpoint = time.monotonic()

    def _finish_run(self, interrupted: str | None) -> dict:
        """The run's answer; unless a signal ``interrupted`` it, after the final checkpoint, the final
        evaluation, ``final_eval.json`` and the learning curve."""
        config, run = self.config, self.run_progress
        final = {"learner_steps": run.learner_steps, "updates": run.update,
                 "seconds_training": round(run.seconds, 1),
                 "learner_steps_per_second": round(run.learner_steps / max(run.seconds, 1e-9), 1), "evaluation": [],
                 "seconds_periodic_evaluations": round(run.evaluation_seconds, 1), "interrupted": interrupted,
                 "total_steps": config.run.total_steps, "total_steps_asked": list(run.total_steps_asked)}
        if interrupted:
            self.writer.close()
            final["resume_command"] = resume_command(config)
            return final
        self.save_checkpoint()
        if config.evaluation.final_eval_games:
            started = time.perf_counter()
            final["evaluation"] = self.evaluate(config.evaluation.final_eval_games, "final")
            final["seconds_final_evaluation"] = round(time.perf_counter() - started, 1)
            self.save_checkpoint()
        if config.opponents.best_response:
            final["best_response"] = {"target": config.opponents.best_response, "start": self.network_start.description,
                                      "start_evaluation": run.start_eval}
        write_atomically(self.run_dir / FINAL_EVAL_FILE, json.dumps(final, indent=2) + "\n")
        plot_learning_curve(self.run_dir)
        self.writer.close()
        return final


def train(config: TrainConfig, *, resume: bool = False, command: str | None = None, overwrite: bool = False,
          saved: dict | None = None, catch_signals: bool = True) -> dict:
    """Train by PPO self-play; returns the final evaluation (also written to the run folder).

    ``resume`` carries on from the run folder's checkpoint (``saved``: that
    checkpoint already read by `read_resume_file`, else it is read here);
    ``overwrite`` deletes an earlier run in the folder. A run stopped by
    SIGINT/SIGTERM returns early with ``interrupted`` set to the signal's name. Resuming a run that has
    already trained ``total_steps`` and finished its final evaluation changes nothing and returns with
    ``complete`` set. ``catch_signals=False`` leaves the signals to the caller (`Trainer.run`).
    """
    return Trainer(config, resume=resume, command=command, overwrite=overwrite, saved=saved).run(catch_signals)
