"""What a run trains and where it stands: the learner (its network and everything that learns beside it) and
the run's progress, each one object whose ``state_dict`` is its part of the checkpoint.

`build_learner` makes the learner for the single-process trainer (`rouba_training.train`) and the Ray
rollout actors (`rouba_training.distributed`) alike, so both play the same network against the same pool.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import RulesConfig
from rouba_training.config import TrainConfig
from rouba_training.best_response import exploiter_start
from rouba_training.network import load_checkpoint_weights, make_network, soften_policy
from rouba_training.opponents import OpponentPool
from rouba_training.regularizers import WeightAverage

ADAM_EPSILON = 1e-5


@dataclass
class Learner:
    """The network, its optimizer, the opponent pool, and the optional moving average and snapshot magnet."""

    network: torch.nn.Module
    optimizer: torch.optim.Optimizer
    pool: OpponentPool
    average: WeightAverage | None = None
    """The moving average of the weights (``weight_average``): played with ``play_average``, the ``ema`` magnet."""
    snapshot_magnet: torch.nn.Module | None = None
    """The ``snapshot`` magnet: the network as it was, refreshed every ``magnet_interval`` updates."""

    def played(self, config: TrainConfig) -> torch.nn.Module:
        """The network that is evaluated and exported: the moving average with ``play_average``, else the learner."""
        return self.average.network if config.play_average and self.average is not None else self.network

    def magnet(self, config: TrainConfig) -> torch.nn.Module | None:
        """The magnet's network (None: the uniform policy, or no magnet)."""
        if config.magnet == "ema":
            return self.average.network if self.average is not None else None
        return self.snapshot_magnet if config.magnet == "snapshot" else None

    def after_update(self, config: TrainConfig, update: int) -> None:
        """Move the average and refresh the snapshot magnet after update number ``update``."""
        if self.average is not None:
            self.average.update(self.network)
        if self.snapshot_magnet is not None and update % config.magnet_interval == 0:
            self.snapshot_magnet.load_state_dict(self.network.state_dict())

    def state_dict(self) -> dict:
        state = {"network": self.network.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "pool": self.pool.state_dict()}
        if self.average is not None:
            state["weight_average"] = self.average.state_dict()
        if self.snapshot_magnet is not None:
            state["snapshot_magnet"] = self.snapshot_magnet.state_dict()
        return state

    def load_state_dict(self, saved: dict) -> None:
        """From a checkpoint; one made before the average or the snapshot was asked for starts them from its
        network."""
        self.network.load_state_dict(saved["network"])
        self.optimizer.load_state_dict(saved["optimizer"])
        self.pool.load_state_dict(saved["pool"], self.network)
        if self.average is not None:
            self.average.load_state_dict(saved.get("weight_average", {"decay": self.average.decay,
                                                                       "network": saved["network"]}))
        if self.snapshot_magnet is not None:
            self.snapshot_magnet.load_state_dict(saved.get("snapshot_magnet", saved["network"]))


def build_learner(config: TrainConfig, tables: list[RulesConfig], max_players: int, device: torch.device,
                  scripted: dict | None = None) -> Learner:
    """The learner of ``config``: its network (seeded by torch's global generator), Adam, and the pool of
    scripted opponents (``scripted``: one policy per table size for each spec, made here when not given)
    with room for snapshots."""
    encoder = ObservationEncoder(tables[0], max_players)
    num_actions = ActionEncoding(tables[0], max_players).size
    network = make_network(config.architecture, encoder.size, num_actions, config.hidden_sizes, max_players,
                           config.critic, encoder.hidden_size, config.hand_coef > 0)
    if config.best_response:  # the exploiter starts as a copy of its target where it can
        start = exploiter_start(config.best_response, config.best_response_start, tables)
        if start.checkpoint is not None:
            load_checkpoint_weights(network, start.checkpoint)
            soften_policy(network, config.best_response_temperature)
    network = network.to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=config.learning_rate, eps=ADAM_EPSILON)
    if scripted is None:
        scripted = {spec: [make_policy(spec, rules, max_players) for rules in tables]
                    for spec in config.scripted_opponents}
    pool = OpponentPool(scripted, (config.self_play_weight, config.past_self_weight, config.scripted_weight),
                        config.pool_size)
    average = WeightAverage(network, config.weight_average) if config.weight_average else None
    snapshot = copy.deepcopy(network).eval() if config.magnet == "snapshot" else None
    return Learner(network, optimizer, pool, average, snapshot)


@dataclass
class RunProgress:
    """Where a run stands: what it has trained and played, its training time, and its latest evaluation."""

    learner_steps: int = 0
    engine_steps: int = 0
    games: int = 0
    update: int = 0
    seconds: float = 0.0
    """Training seconds over every session of the run (evaluations and checkpoints aside)."""
    latest_eval: list[dict] = field(default_factory=list)
    start_eval: list[dict] = field(default_factory=list)
    """An approximate best response's evaluation before its first update (empty for other runs)."""

    def record(self, batch, seconds: float) -> None:
        """Count one update's batch, collected and trained on in ``seconds``."""
        self.update += 1
        self.learner_steps += len(batch.actions)
        self.engine_steps += batch.engine_steps
        self.games += batch.games_finished
        self.seconds += seconds

    def state_dict(self) -> dict:
        return {"learner_steps": self.learner_steps, "engine_steps": self.engine_steps, "games": self.games,
                "update": self.update, "seconds": float(self.seconds), "latest_eval": self.latest_eval,
                "start_eval": self.start_eval}

    @classmethod
    def from_saved(cls, saved: dict) -> "RunProgress":
        return cls(saved["learner_steps"], saved["engine_steps"], saved["games"], saved["update"],
                   saved["seconds"], list(saved.get("latest_eval", [])), list(saved.get("start_eval", [])))
