"""The opponent pool for self-play: the current policy, past selves and scripted players."""

from __future__ import annotations

import copy

import numpy as np
import torch

from rouba_training.network import TrainerNetwork
from rouba_env.players.base import Policy

CURRENT_SELF = -1
"""Opponent id meaning "the learner's own current network" (its turns are not trained on)."""


class OpponentPool:
    """Chooses who plays the other seats of each new game.

    Ids ``0..len(scripted)-1`` are scripted players; ids from ``len(scripted)``
    on are frozen snapshots of the learner; `CURRENT_SELF` is the learner
    itself. Weights say how often each of the three kinds is drawn; with no
    snapshot yet, the past-self share goes to the current self.
    """

    def __init__(self, scripted: dict[str, list[Policy]], weights: tuple[float, float, float], pool_size: int):
        self.scripted_names = list(scripted)
        self.scripted = scripted
        """Per scripted spec, one policy per table size index."""
        self.snapshots: list[TrainerNetwork] = []
        self.snapshot_steps: list[int] = []
        total = sum(weights)
        self.self_weight, self.past_weight, self.scripted_weight = (w / total for w in weights)
        self.pool_size = pool_size

    def add_snapshot(self, network: TrainerNetwork, step: int) -> None:
        snapshot = copy.deepcopy(network).eval()
        for parameter in snapshot.parameters():
            parameter.requires_grad_(False)
        self.snapshots.append(snapshot)
        self.snapshot_steps.append(step)
        if len(self.snapshots) > self.pool_size:
            self.snapshots.pop(0)
            self.snapshot_steps.pop(0)

    def sample(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Opponent ids for ``count`` new games."""
        kinds = rng.random(count)
        ids = np.full(count, CURRENT_SELF, dtype=np.int64)
        scripted = kinds < self.scripted_weight
        if self.scripted_names:
            ids[scripted] = rng.integers(len(self.scripted_names), size=int(scripted.sum()))
        past = (kinds >= self.scripted_weight) & (kinds < self.scripted_weight + self.past_weight)
        if self.snapshots:
            ids[past] = len(self.scripted_names) + rng.integers(len(self.snapshots), size=int(past.sum()))
        return ids

    def snapshot_for(self, opponent_id: int) -> TrainerNetwork:
        return self.snapshots[opponent_id - len(self.scripted_names)]

    def state_dict(self) -> dict:
        return {"snapshots": [s.state_dict() for s in self.snapshots], "steps": list(self.snapshot_steps)}

    def load_state_dict(self, state: dict, template: TrainerNetwork) -> None:
        self.snapshots, self.snapshot_steps = [], []
        for weights, step in zip(state["snapshots"], state["steps"]):
            network = copy.deepcopy(template)
            network.load_state_dict(weights)
            self.add_snapshot(network, int(step))


class SnapshotPolicy:
    """A snapshot of the pool as a batch player of the table: sampled actions of that frozen network.

    It reads its network through the pool at every call, so the same player stays right when the
    pool is reloaded. Its sampling draws a torch seed from the table's Generator.
    """

    plays_in_batch = True

    def __init__(self, pool: OpponentPool, opponent_id: int):
        self.pool = pool
        self.opponent_id = opponent_id
        self.name = f"snapshot {opponent_id - len(pool.scripted_names)}"

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(obs[None, :], mask[None, :], rng)[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        network = self.pool.snapshot_for(self.opponent_id)
        device = next(network.parameters()).device
        generator = torch.Generator(device=device)
        generator.manual_seed(int(rng.integers(1 << 63)))
        return snapshot_actions(network, obs, mask, generator=generator, device=device)

    def __repr__(self) -> str:
        return f"<SnapshotPolicy {self.name}>"


@torch.no_grad()
def snapshot_actions(network: TrainerNetwork, obs: np.ndarray, mask: np.ndarray, *, generator: torch.Generator,
                     device: torch.device) -> np.ndarray:
    """Sampled actions of a frozen network for a batch (the learner's own sampling, untrained)."""
    from rouba_training.ppo import MaskedCategorical

    logits, _ = network(torch.as_tensor(obs, device=device))
    dist = MaskedCategorical(logits, torch.as_tensor(mask, device=device))
    return dist.sample(generator).cpu().numpy()
