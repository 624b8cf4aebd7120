"""Rollout collection on Ray actors, for training past one machine (``--ray local`` or ``--ray ADDRESS``).

The learner stays in the driver (`rouba_training.trainer.train`, with its PPO update,
checkpoints and evaluations unchanged); only the collection of a batch moves:

* `RayCollector` is the driver's `Collector`; ``rollout_workers`` actors each own a slice of every table size's game
  slots (``num_envs`` split as evenly as possible) as `SelfPlayGames` s on a
  `VectorGame`, a CPU copy of the policy and a copy of the opponent pool
  (the same scripted players; the learner's snapshots, sent when they change);
* each update the driver puts the current weights in Ray's object store once,
  every actor collects its share with them (phase 1 and 2 of
  `training.rollout`, advantages computed in the actor) and the driver merges
  the batches in actor order;
* an actor whose process dies is restarted by Ray (``max_restarts``) and the
  collect call it was running is retried (``max_task_retries``); the new
  process starts fresh games on its next call, so training goes on.

Randomness: actor ``k`` is collector ``k + 1`` of the run's one seeding scheme
(`rouba_training.seeds`): its deals, seats, opponents and sampling come from the run's
seed, ``k + 1`` and the first update it collects for (after a restart too), so a run
without faults repeats with the same seed and the same number of actors.

Ray is imported only here (and only when ``--ray`` is asked for); it comes
with ``pip install -e ".[ray]"``.
"""

from __future__ import annotations

import dataclasses
import os
import sys

import numpy as np
import torch

from rouba_env.evaluation.distributed import check_ray_address, import_ray, join_cluster
from rouba_env.rules.config import RulesConfig
from rouba_training.config import LOCAL_RAY, TrainConfig
from rouba_training.learner import build_learner
from rouba_training.opponents import OpponentPool
from rouba_training.seeds import collector_seeds
from rouba_training.rollout import Batch, LocalCollector, SelfPlayGames, merge

ACTOR_MAX_RESTARTS = 20
"""Times Ray restarts one rollout actor whose process died (and retries its call) before the run fails."""
ACTOR_CPUS = 1
"""Logical CPUs each rollout actor asks Ray for (its torch uses one thread)."""
ACTOR_NAME = "rouba-rollout-{index}"
"""Ray actor name of rollout actor ``index`` (in the run's namespace), so tools can find it."""


def split_slots(num_envs: int, workers: int) -> list[int]:
    """Game slots per worker: ``num_envs`` split as evenly as possible, the larger shares first."""
    if not 1 <= workers <= num_envs:
        raise ValueError(f"need 1 <= workers <= num_envs, got workers={workers}, num_envs={num_envs}")
    base, extra = divmod(num_envs, workers)
    return [base + (1 if index < extra else 0) for index in range(workers)]


def network_state(network: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A CPU copy of a network's weights, ready to ship to other processes."""
    return {name: tensor.detach().to("cpu", copy=True) for name, tensor in network.state_dict().items()}


class RolloutWorker:
    """The body of one rollout actor (a plain class: Ray wraps it with `ray.remote` in `RayCollector`)."""

    def __init__(self, config: dict, rules_per_size: list[dict], max_players: int, *, index: int, slots: list[int]):
        self.config = TrainConfig.of(**config)
        self.rules_per_size = [RulesConfig.from_dict(table) for table in rules_per_size]
        self.max_players = max_players
        self.index = index
        self.slots = slots
        """Game slots of this actor per table size."""
        torch.set_num_threads(self.config.run.torch_threads or ACTOR_CPUS)
        learner = build_learner(self.config, self.rules_per_size, max_players, device=torch.device("cpu"))  # the driver's own
        self.network, self.pool = learner.network.eval(), learner.pool
        self.pool_steps: list[int] | None = None
        """Snapshot steps of the pool copy held (None: none received yet)."""
        self.collector: LocalCollector | None = None

    def pid(self) -> int:
        """This actor's process id (for monitoring, and for the fault test that kills it)."""
        return os.getpid()

    def _start(self, update: int) -> None:
        """Fresh games, seats and randomness for a first collect at ``update``."""
        # Actor k is collector k + 1: collector 0 is the single-process trainer (rouba_training.seeds).
        config = self.config
        seeds = collector_seeds(config.run.seed, len(self.rules_per_size), self.index + 1, update)
        rng = seeds.generator()
        generator = torch.Generator()
        generator.manual_seed(seeds.torch_seed)
        games = [SelfPlayGames(rules, table_index, slots, seed=seeds.deal_seeds[table_index],
                               max_players=self.max_players,
                               reward=config.run.reward, pool=self.pool, rng=rng, every_seat=config.records_every_seat)
                 for table_index, (rules, slots) in enumerate(zip(self.rules_per_size, self.slots))]
        self.collector = LocalCollector(games, device=torch.device("cpu"), generator=generator,
                                        rollout_steps=config.run.rollout_steps, gamma=config.ppo.gamma,
                                        gae_lambda=config.ppo.gae_lambda)

    def collect(self, weights: dict, pool: dict, update: int) -> tuple[Batch, int]:
        """One batch with the given weights and pool: (batch, pid of the process that collected it)."""
        if pool["steps"] != self.pool_steps:
            self.pool.load_state_dict(pool, self.network)
            self.pool_steps = list(pool["steps"])
        self.network.load_state_dict(weights)
        if self.collector is None:
            self._start(update)
        return self.collector.collect(self.network), os.getpid()


def join_ray(config: TrainConfig) -> bool:
    """Join the Ray cluster of ``config.scale_out.ray`` (or start a local one for ``local``) unless Ray is
    running in this process already; True if this call did. A RuntimeError saying what is wrong (the address
    does not answer, or Ray's own words) comes before a run touches its folder."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    workers = config.scale_out.rollout_workers
    if config.scale_out.ray != LOCAL_RAY:
        check_ray_address(config.scale_out.ray)
        join_cluster(ray, config.scale_out.ray, namespace=f"rouba-train-{os.getpid()}", log_to_driver=True)
    else:
        # Embedded: a local Ray on this machine, with a logical CPU for every actor
        # (the actors then share the cores with the learner).
        ray.init(num_cpus=max(os.cpu_count() or 1, workers * ACTOR_CPUS), include_dashboard=False,
                 namespace=f"rouba-train-{os.getpid()}", configure_logging=False)
    return True


class RayCollector:
    """The driver's side: starts (or joins) Ray, creates the rollout actors and gathers their batches.

    ``collect(network)`` returns one merged `Batch` like the single-process
    collector; ``close()`` ends the actors (and the local Ray it started).
    """

    def __init__(self, config: TrainConfig, rules_per_size: list[RulesConfig], max_players: int, *, pool: OpponentPool,
                 update: int, started_ray: bool | None = None):
        ray = import_ray()
        self.ray = ray
        self.pool = pool
        self.update = update
        self.started_ray = join_ray(config) if started_ray is None else started_ray
        """This run started (or joined) Ray, so `close` ends its part (`join_ray`, called before the run
        folder is touched, says so)."""
        workers = config.scale_out.rollout_workers
        available = ray.cluster_resources().get("CPU", 0)
        if available < workers * ACTOR_CPUS:
            raise RuntimeError(f"rollout_workers={workers} needs {workers * ACTOR_CPUS} CPUs, but the Ray cluster "
                               f"has {available:g}; lower --rollout-workers or add nodes")
        actor_class = ray.remote(RolloutWorker)
        shares = [split_slots(config.run.num_envs, workers) for _ in rules_per_size]
        rules_dicts = [rules.to_dict() for rules in rules_per_size]
        self.actors = [
            actor_class.options(name=ACTOR_NAME.format(index=index), num_cpus=ACTOR_CPUS,
                                max_restarts=ACTOR_MAX_RESTARTS, max_task_retries=ACTOR_MAX_RESTARTS).remote(
                config.to_dict(), rules_dicts, max_players, index=index, slots=[share[index] for share in shares])
            for index in range(workers)
        ]
        self.pids = ray.get([actor.pid.remote() for actor in self.actors])
        self.restarts = 0
        """Actor processes found replaced since the start (each reported on stderr)."""
        self._pool_ref, self._pool_steps = None, None

    def collect(self, network: torch.nn.Module) -> Batch:
        """Every actor collects its share with the current weights; their batches merged in actor order."""
        ray = self.ray
        if self._pool_steps != self.pool.snapshot_steps:
            self._pool_ref = ray.put({"snapshots": [network_state(s) for s in self.pool.snapshots],
                                      "steps": list(self.pool.snapshot_steps)})
            self._pool_steps = list(self.pool.snapshot_steps)
        weights_ref = ray.put(network_state(network))
        results = ray.get([actor.collect.remote(weights_ref, self._pool_ref, self.update) for actor in self.actors])
        self.update += 1
        for index, (_, pid) in enumerate(results):
            if pid != self.pids[index]:
                print(f"note: rollout actor {index} was restarted (process {self.pids[index]} -> {pid})",
                      file=sys.stderr)
                self.pids[index] = pid
                self.restarts += 1
        merged = merge([batch for batch, _ in results])
        # Arrays fetched from the object store are read-only views; torch wants writable ones.
        copies = {field.name: np.array(value) for field in dataclasses.fields(merged)
                  if isinstance(value := getattr(merged, field.name), np.ndarray) and not value.flags.writeable}
        return dataclasses.replace(merged, **copies)

    def close(self) -> None:
        """End the actors, and the local Ray if this collector started it."""
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)
        self.actors = []
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False
