"""Rollout collection on the batched engine, keeping only the learner's own turns.

Each game slot of a `VectorGame` has a learner seat (drawn per game) and an
opponent (drawn per game from the `OpponentPool`) that plays every other seat.
All slots step together; the learner's network acts where the learner (or its
current self as opponent) is to move, snapshots and scripted players act
elsewhere, and only the learner's turns are recorded. A game's result is
credited to the learner's seat on the step it ends, whoever made the last move.

Phase 1 runs ``rollout_steps`` engine steps. Phase 2 keeps stepping until
every game with recorded turns has ended (recording nothing new), so advantages
need no bootstrapping from unfinished games.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rouba_training.network import ActorCritic
from rouba_env.rules.config import RulesConfig
from rouba_env.batched.game import VectorGame
from rouba_training.opponents import CURRENT_SELF, OpponentPool, snapshot_actions
from rouba_training.ppo import MaskedCategorical, gae


@dataclass
class Batch:
    """Learner turns of one rollout, flattened."""

    obs: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    log_probs: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray
    games_finished: int
    learner_rewards: list[float]
    engine_steps: int


class SelfPlayGames:
    """One table size: its batched games and per-slot learner seats and opponents."""

    def __init__(self, rules: RulesConfig, table_index: int, num_envs: int, seed: int, max_players: int,
                 reward: str, pool: OpponentPool, rng: np.random.Generator):
        self.rules = rules
        self.table_index = table_index
        self.game = VectorGame(rules, num_envs, seed=seed, max_players=max_players, reward=reward)
        self.game.reset()
        self.pool = pool
        self.rng = rng
        self.learner_seat = rng.integers(rules.num_players, size=num_envs)
        self.opponent = pool.sample(num_envs, rng)
        self.episode_open = np.zeros(num_envs, dtype=bool)
        """The slot's current game has recorded learner turns."""

    def _new_games(self, slots: np.ndarray) -> None:
        self.learner_seat[slots] = self.rng.integers(self.rules.num_players, size=len(slots))
        self.opponent[slots] = self.pool.sample(len(slots), self.rng)

    def step(self, network: ActorCritic, device: torch.device, generator: torch.Generator,
             record: np.ndarray) -> dict:
        """One engine step of every slot; returns what the learner did where ``record`` allows."""
        game = self.game
        learner_turn = game.current == self.learner_seat
        own_network = learner_turn | (self.opponent == CURRENT_SELF)
        actions = np.zeros(game.batch_size, dtype=np.int64)
        recorded = learner_turn & record
        step = {"recorded": recorded, "values": np.zeros(game.batch_size, dtype=np.float32)}
        rows = np.flatnonzero(own_network)
        if len(rows):
            with torch.no_grad():
                logits, values = network(torch.as_tensor(game.obs[rows], device=device))
                dist = MaskedCategorical(logits, torch.as_tensor(game.mask[rows], device=device))
                chosen = dist.sample(generator)
                log_probs = dist.log_prob(chosen)
            actions[rows] = chosen.cpu().numpy()
            keep = recorded[rows]
            kept_rows = rows[keep]
            step["obs"] = game.obs[kept_rows].copy()
            step["mask"] = game.mask[kept_rows].copy()
            step["actions"] = actions[kept_rows].copy()
            step["log_probs"] = log_probs.cpu().numpy()[keep]
            step["values"][kept_rows] = values.cpu().numpy()[keep]
        others = ~own_network
        for opponent_id in np.unique(self.opponent[others]):
            rows = np.flatnonzero(others & (self.opponent == opponent_id))
            if opponent_id < len(self.pool.scripted_names):
                policy = self.pool.scripted[self.pool.scripted_names[opponent_id]][self.table_index]
                actions[rows] = policy.act_batch(game.obs[rows], game.mask[rows], self.rng)
            else:
                snapshot = self.pool.snapshot_for(int(opponent_id))
                actions[rows] = snapshot_actions(snapshot, game.obs[rows], game.mask[rows], generator, device)
        self.episode_open |= recorded
        game.step(actions)
        done = game.done.copy()
        slots = np.arange(game.batch_size)
        step["dones"] = done
        step["rewards"] = np.where(done, game.rewards[slots, self.learner_seat], 0.0).astype(np.float32)
        step["finished_rewards"] = step["rewards"][done & self.episode_open].tolist()
        self.episode_open &= ~done
        ended = np.flatnonzero(done)
        if len(ended):
            self._new_games(ended)
        return step

    def collect(self, network: ActorCritic, device: torch.device, generator: torch.Generator,
                rollout_steps: int, gamma: float, gae_lambda: float) -> Batch:
        """Phase 1 (record everything) then phase 2 (finish the open games)."""
        batch_size = self.game.batch_size
        steps = []
        record = np.ones(batch_size, dtype=bool)
        for _ in range(rollout_steps):
            steps.append(self.step(network, device, generator, record))
        record = self.episode_open.copy()
        while self.episode_open.any():
            steps.append(self.step(network, device, generator, record))
            record &= self.episode_open
        recorded = np.stack([s["recorded"] for s in steps])
        values = np.stack([s["values"] for s in steps])
        rewards = np.stack([s["rewards"] for s in steps])
        dones = np.stack([s["dones"] for s in steps])
        advantages = gae(values, recorded, rewards, dones, gamma, gae_lambda)
        flat = recorded.nonzero()
        with_turns = [s for s in steps if s["recorded"].any()]
        finished = [r for s in steps for r in s["finished_rewards"]]
        return Batch(
            obs=np.concatenate([s["obs"] for s in with_turns]),
            mask=np.concatenate([s["mask"] for s in with_turns]),
            actions=np.concatenate([s["actions"] for s in with_turns]),
            log_probs=np.concatenate([s["log_probs"] for s in with_turns]),
            values=values[flat],
            advantages=advantages[flat],
            returns=advantages[flat] + values[flat],
            games_finished=len(finished),
            learner_rewards=finished,
            engine_steps=len(steps) * batch_size,
        )


def merge(batches: list[Batch]) -> Batch:
    """One batch from the batches of several table sizes."""
    if len(batches) == 1:
        return batches[0]
    join = lambda name: np.concatenate([getattr(b, name) for b in batches])  # noqa: E731
    return Batch(
        obs=join("obs"), mask=join("mask"), actions=join("actions"), log_probs=join("log_probs"),
        values=join("values"), advantages=join("advantages"), returns=join("returns"),
        games_finished=sum(b.games_finished for b in batches),
        learner_rewards=[r for b in batches for r in b.learner_rewards],
        engine_steps=sum(b.engine_steps for b in batches),
    )
