"""What a run trains and where it stands: the learner (its network and everything that learns beside it) and
the run's progress, each one object whose ``state_dict`` is its part of the checkpoint.

`build_learner` makes the learner for the single-process trainer (`rouba_training.trainer`) and the Ray
rollout actors (`rouba_training.distributed`) alike, so both play the same network against the same pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.registry import make_policy
from rouba_env.rules.config import RulesConfig
from rouba_training.config import RegularizerSettings, TrainConfig
from rouba_training.network import load_checkpoint_weights, make_network, soften_policy
from rouba_training.opponents import OpponentPool
from rouba_training.regularizers import WeightAverage

ADAM_EPSILON = 1e-5


@dataclass
class Learner:
    """The network, its optimizer, the opponent pool, and the moving average of the weights."""

    network: torch.nn.Module
    optimizer: torch.optim.Optimizer
    pool: OpponentPool
    average: WeightAverage | None = None
    """The moving average of the weights (``weight_average``): the ``ema`` magnet."""

    def magnet(self, regularizers: RegularizerSettings) -> torch.nn.Module | None:
        """The magnet's network (None: the uniform policy, or no magnet)."""
        if regularizers.magnet == "ema":
            return self.average.network if self.average is not None else None
        return None

    def after_update(self) -> None:
        """Move the average after an update."""
        if self.average is not None:
            self.average.update(self.network)

    def state_dict(self) -> dict:
        state = {"network": self.network.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "pool": self.pool.state_dict()}
        if self.average is not None:
            state["weight_average"] = self.average.state_dict()
        return state

    def load_state_dict(self, saved: dict) -> None:
        """From a checkpoint; one made before the average was asked for starts it from its network."""
        self.network.load_state_dict(saved["network"])
        self.optimizer.load_state_dict(saved["optimizer"])
        self.pool.load_state_dict(saved["pool"], self.network)
        if self.average is not None:
            self.average.load_state_dict(saved.get("weight_average", {"decay": self.average.decay,
                                                                       "network": saved["network"]}))


def build_learner(config: TrainConfig, rules_per_size: list[RulesConfig], max_players: int, *, device: torch.device,
                  scripted: dict | None = None) -> Learner:
    """The learner of ``config``: its network (seeded by torch's global generator), Adam, and the pool of
    scripted opponents (``scripted``: one policy per table size for each spec, made here when not given)
    with room for snapshots."""
    encoder = ObservationEncoder(rules_per_size[0], max_players)
    num_actions = ActionEncoding(rules_per_size[0], max_players).size
    shape = config.network
    network = make_network(shape.architecture, encoder.size, num_actions, hidden_sizes=shape.hidden_sizes,
                           max_players=max_players,
                           critic=shape.critic, hidden_size=encoder.hidden_size, hand_head=config.ppo.hand_coef > 0,
                           action_values=config.ppo.policy_objective == "mirror_fit")
    start = config.network_start()  # an exploiter starts as a copy of its target where it can
    if start is not None and start.checkpoint is not None:
        load_checkpoint_weights(network, start.checkpoint)
        if config.opponents.best_response:
            soften_policy(network, config.opponents.best_response_temperature)
    network = network.to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=config.ppo.learning_rate, eps=ADAM_EPSILON)
    if scripted is None:
        scripted = {spec: [make_policy(spec, rules, max_players) for rules in rules_per_size]
                    for spec in config.opponents.scripted_opponents}
    opponents = config.opponents
    pool = OpponentPool(scripted, (opponents.self_play_weight, opponents.past_self_weight, opponents.scripted_weight),
                        opponents.pool_size)
    decay = config.regularizers.weight_average
    return Learner(network, optimizer, pool, WeightAverage(network, decay) if decay else None)


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
    evaluation_seconds: float = 0.0
    """Seconds of periodic evaluations over every session of the run."""
    total_steps_asked: list[int] = field(default_factory=list)
    """The total_steps of each session that asked for a new one (the first, then each resume that changed it)."""

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
                "start_eval": self.start_eval, "evaluation_seconds": float(self.evaluation_seconds),
                "total_steps_asked": list(self.total_steps_asked)}

    @classmethod
    def from_saved(cls, saved: dict) -> "RunProgress":
        return cls(saved["learner_steps"], saved["engine_steps"], saved["games"], saved["update"],
                   saved["seconds"], list(saved.get("latest_eval", [])), list(saved.get("start_eval", [])),
                   float(saved.get("evaluation_seconds", 0.0)), list(saved.get("total_steps_asked", [])))
