"""Rollout collection on Ray actors: slot split, the worker's batch, and training through an actor's death."""

import csv
import os
import signal
import threading
import time

import numpy as np
import pytest
import torch

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_training.network import ActorCritic
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import make_rules
from rouba_training.cli import config_from_args
from rouba_training.config import TrainConfig
from rouba_training.distributed import ACTOR_NAME, RayCollector, RolloutWorker, network_state, split_slots
from rouba_training.opponents import OpponentPool
from rouba_training.trainer import train

TINY = dict(num_envs=16, rollout_steps=4, minibatch_size=256, update_epochs=1, architecture="mlp", hidden_sizes=(16,),
            eval_interval=0, final_eval_games=0, checkpoint_interval=50, snapshot_interval=2,
            scripted_opponents=("greedy",), eval_opponents=("random",), progress=False,
            ray="local", rollout_workers=2)
KILL_POLL_SECONDS = 0.02


def test_split_slots_covers_every_slot_once():
    assert split_slots(10, 3) == [4, 3, 3]
    assert split_slots(2, 2) == [1, 1]
    with pytest.raises(ValueError, match="workers"):
        split_slots(2, 3)


def test_config_checks_ray_settings():
    with pytest.raises(ValueError, match="rollout_workers"):
        TrainConfig.of(rollout_workers=0)
    with pytest.raises(ValueError, match="num_envs"):
        TrainConfig.of(ray="local", rollout_workers=9, num_envs=8)
    assert TrainConfig.of(ray="auto").scale_out.ray == "auto"
    config, _ = config_from_args(["--ray", "local", "--rollout-workers", "3", "--no-progress"])
    assert config.scale_out.ray and config.scale_out.rollout_workers == 3 and not config.run.progress


def _setup(config: TrainConfig):
    tables = [make_rules(config.run.rules, num_players=n) for n in config.run.num_players]
    max_players = config.padded_players
    network = ActorCritic(ObservationEncoder(tables[0], max_players).size, ActionEncoding(tables[0], max_players).size,
                          config.network.hidden_sizes)
    scripted = {spec: [make_policy(spec, rules, max_players) for rules in tables] for spec in config.opponents.scripted_opponents}
    pool = OpponentPool(scripted, (config.opponents.self_play_weight, config.opponents.past_self_weight, config.opponents.scripted_weight),
                        config.opponents.pool_size)
    return tables, max_players, network, pool


def test_rollout_worker_collects_legal_learner_turns_with_the_shipped_weights():
    config = TrainConfig.of(**dict(TINY, num_players=(2, 3)))
    tables, max_players, network, pool = _setup(config)
    pool.add_snapshot(network, 7)
    worker = RolloutWorker(config.to_dict(), [t.to_dict() for t in tables], max_players, index=1, slots=[5, 3])
    pool_state = {"snapshots": [network_state(s) for s in pool.snapshots], "steps": list(pool.snapshot_steps)}
    batch, pid = worker.collect(network_state(network), pool_state, update=0)
    assert pid == os.getpid()
    assert worker.pool.snapshot_steps == [7]
    assert [runner.table.num_games for runner in worker.collector.games] == [5, 3]
    assert len(batch.actions) > 0
    assert batch.mask[np.arange(len(batch.actions)), batch.actions].all(), "every recorded action is legal"
    for name, tensor in worker.network.state_dict().items():
        assert torch.equal(tensor, network.state_dict()[name])


@pytest.mark.slow
def test_collector_restarts_a_killed_actor_and_keeps_collecting(ray_session):
    config = TrainConfig.of(**TINY)
    tables, max_players, network, pool = _setup(config)
    collector = RayCollector(config, tables, max_players, pool=pool, update=0)
    try:
        first = collector.collect(network)
        os.kill(collector.pids[1], signal.SIGKILL)
        second = collector.collect(network)
    finally:
        collector.close()
    assert collector.restarts == 1
    assert len(first.actions) > 0 and len(second.actions) > 0
    assert second.engine_steps >= config.run.num_envs * config.run.rollout_steps


@pytest.mark.slow
def test_training_goes_on_when_a_rollout_actor_dies(ray_session, tmp_path, capsys):
    """Kill one actor's process (found by its name) after the first update; the run must still finish."""
    config = TrainConfig.of(run_dir=str(tmp_path), total_steps=20_000, **TINY)
    metrics = tmp_path / "metrics.csv"
    finished = threading.Event()
    killed: dict = {}

    def kill_one_actor():
        while not metrics.exists() and not finished.is_set():
            time.sleep(KILL_POLL_SECONDS)
        actor = ray_session.get_actor(ACTOR_NAME.format(index=0))
        pid = ray_session.get(actor.pid.remote())
        killed["during_run"] = not finished.is_set()
        os.kill(pid, signal.SIGKILL)
        killed["pid"] = pid

    thread = threading.Thread(target=kill_one_actor, daemon=True)
    thread.start()
    try:
        final = train(config)
    finally:
        finished.set()
        thread.join()
    assert killed.get("during_run"), "the kill must happen while training runs"
    assert final["learner_steps"] >= config.run.total_steps
    with metrics.open(newline="") as stream:
        updates = [int(row["update"]) for row in csv.DictReader(stream)]
    assert updates == list(range(1, final["updates"] + 1))
    assert f"rollout actor 0 was restarted (process {killed['pid']} ->" in capsys.readouterr().err
