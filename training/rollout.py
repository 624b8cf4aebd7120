"""Rollout collection on the batched table: the learner's turns, and in self-play every seat's.

Each game slot of a `Table` has a learner seat (drawn per game) and an
opponent (drawn per game from the `OpponentPool`) that plays every other seat.
The learner's network plays the open seats: the learner's own, and every
other seat where the opponent is its current self. Scripted players and
snapshots are seated at the table, which plays them in batch until an open
seat must act. So each round is one network decision per slot and the seated
opponents' replies. The learner's turns are recorded; with ``every_seat``, so
are the other seats' turns of a game against its current self (the same
network, so they are on-policy data too). Each seat's turns form their own
sequence, credited with that seat's final reward on the round the game ends,
whoever made the last move.

Phase 1 runs ``rollout_steps`` rounds. Phase 2 keeps playing rounds until
every game with recorded turns has ended (recording nothing new), so
advantages need no bootstrapping from unfinished games.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch

from rouba_training.network import TrainerNetwork
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.seeding import slot_deal_seed
from rouba_env.table import OPEN_SEAT, Table
from rouba_training.opponents import CURRENT_SELF, OpponentPool, SnapshotPolicy
from rouba_training.ppo import MaskedCategorical, gae
from rouba_training.searched_values import DecisionSearch


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
    hidden: np.ndarray | None = None
    """What each recorded turn's observation hid (every hand, the deck), for a privileged critic; else None."""
    searched_values: np.ndarray | None = None
    """float32[N, A]: the searched move values of the rows searched (NaN elsewhere), for searched_mirror."""
    searched: np.ndarray | None = None
    """bool[N]: the rows whose move values were searched."""
    search_statistics: dict[str, float] = field(default_factory=dict)


class SelfPlayGames:
    """One table size: its batched table and per-slot learner seats and opponents.

    Deal ``k`` of slot ``i`` is ``slot_deal_seed(seed, i, k)``, as `VectorGame`'s own auto-reset deals.
    """

    def __init__(self, rules: RulesConfig, table_index: int, num_envs: int, *, seed: int, max_players: int,
                 reward: str, pool: OpponentPool, rng: np.random.Generator, every_seat: bool = False,
                 search: DecisionSearch | None = None):
        self.rules = rules
        self.search = search
        """Searches the move values of the recorded decisions (searched_mirror; pure self-play): None for none."""
        self.every_seat = every_seat
        """Record every seat's turns in games against the current self (else the learner seat's only)."""
        self.table_index = table_index
        self.moves = 0
        """Moves played so far, by every seat."""
        self.table = Table(rules, num_envs, max_players=max_players, reward=reward, illegal_action="raise",
                                 before_move=self._count_moves)
        self._recorder = None if search is None else search.watch(self.table.game)
        self._batch_rows = 0
        """Rows recorded so far in the batch being collected."""
        self.pool = pool
        self.rng = rng
        self.seed = seed
        self._player_ids: dict[int, int] = {}
        self._games = np.zeros(num_envs, dtype=np.uint64)
        self._slots = np.arange(num_envs, dtype=np.int64)
        self.learner_seat = np.zeros(num_envs, dtype=np.int64)
        self.opponent = np.zeros(num_envs, dtype=np.int64)
        self.episode_open = np.zeros(num_envs, dtype=bool)
        """The slot's current game has recorded learner turns."""
        self._new_games(self._slots)

    def _count_moves(self, slots: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> None:
        self.moves += len(slots)
        if self._recorder is not None:
            self._recorder(slots, seats, actions)

    def _player_id(self, opponent_id: int) -> int:
        """The table's id of a pool opponent (a scripted player, or a snapshot seen through the pool)."""
        if opponent_id not in self._player_ids:
            if opponent_id < len(self.pool.scripted_names):
                player = self.pool.scripted[self.pool.scripted_names[opponent_id]][self.table_index]
            else:
                player = SnapshotPolicy(self.pool, opponent_id)
            self._player_ids[opponent_id] = self.table.add_player(player)
        return self._player_ids[opponent_id]

    def _new_games(self, slots: np.ndarray) -> None:
        """Draw each slot's learner seat and opponent, seat them, deal, and let seated opponents open."""
        n = self.rules.num_players
        if self.search is not None:
            self.search.new_games(slots)
        self.learner_seat[slots] = self.rng.integers(n, size=len(slots))
        self.opponent[slots] = self.pool.sample(len(slots), self.rng)
        opponents = np.array([OPEN_SEAT if o == CURRENT_SELF else self._player_id(int(o))
                              for o in self.opponent[slots].tolist()], dtype=np.int64)
        seats = np.repeat(opponents[:, None], n, axis=1)
        seats[np.arange(len(slots)), self.learner_seat[slots]] = OPEN_SEAT
        self.table.seat(slots, seats)
        games = self._games[slots]
        self._games[slots] = games + np.uint64(1)
        self.table.start(slots, slot_deal_seed(self.seed, slots, games).astype(np.int64))

    def step(self, network: TrainerNetwork, device: torch.device, generator: torch.Generator,
             record: np.ndarray) -> dict:
        """One round of every slot; returns what the learner did where ``record`` allows."""
        table = self.table
        table.play_seated(self.rng)  # the seated opponents move until the network's seat is to act
        obs, mask = table.obs, table.mask
        acting = table.current
        recorded = (acting == self.learner_seat) & record
        if self.every_seat:
            recorded |= (self.opponent == CURRENT_SELF) & record
        hidden = None
        if network.reads_hidden:  # every slot has a live game and an open seat to act
            hidden = table.game.hidden(self._slots, table.current)
        with torch.no_grad():
            logits, values = network(torch.as_tensor(obs, device=device),
                                     None if hidden is None else torch.as_tensor(hidden, device=device))
            dist = MaskedCategorical(logits, torch.as_tensor(mask, device=device))
            chosen = dist.sample(generator)
            log_probs = dist.log_prob(chosen)
        actions = chosen.cpu().numpy()
        step = {
            "recorded": recorded,
            "acting": acting.copy(),
            "values": np.where(recorded, values.cpu().numpy(), 0.0).astype(np.float32),
            "obs": obs[recorded],
            "mask": mask[recorded],
            "actions": actions[recorded],
            "log_probs": log_probs.cpu().numpy()[recorded],
            "hidden": None if hidden is None else hidden[recorded],
        }
        self.episode_open |= recorded
        ended = table.play(self._slots, actions, who="the learner's network")
        if self.search is not None:
            rows = np.flatnonzero(recorded)
            self.search.note(rows, acting[rows], step["mask"].sum(axis=1), first_batch_row=self._batch_rows,
                             rng=self.rng)
        self._batch_rows += int(recorded.sum())
        ended = np.union1d(ended, table.play_seated(self.rng))
        done = np.zeros(len(self._slots), dtype=bool)
        done[ended] = True
        seat_rewards = np.zeros((len(self._slots), self.rules.num_players), dtype=np.float32)
        if len(ended):
            seat_rewards[ended] = table.final_rewards(ended)
        learner_rewards = seat_rewards[self._slots, self.learner_seat]
        step["dones"] = done
        step["rewards"] = seat_rewards
        step["finished_rewards"] = learner_rewards[done & self.episode_open].tolist()
        self.episode_open &= ~done
        if len(ended):
            self._new_games(ended)
        return step

    def collect(self, network: TrainerNetwork, device: torch.device, *, generator: torch.Generator,
                rollout_steps: int, gamma: float, gae_lambda: float) -> Batch:
        """Phase 1 (record everything) then phase 2 (finish the open games)."""
        batch_size = len(self._slots)
        moves_before = self.moves
        self._batch_rows = 0
        steps = []
        record = np.ones(batch_size, dtype=bool)
        for _ in range(rollout_steps):
            steps.append(self.step(network, device, generator, record))
        record = self.episode_open.copy()
        while self.episode_open.any():
            steps.append(self.step(network, device, generator, record))
            record &= self.episode_open
        advantages, values, flat = seat_advantages(steps, self.rules.num_players, gamma, gae_lambda)
        finished = [r for s in steps for r in s["finished_rewards"]]
        searched = None if self.search is None else self.search.run(
            network, device=device, batch_size=self._batch_rows, num_actions=steps[0]["mask"].shape[1],
            rng=self.rng)
        return Batch(
            obs=np.concatenate([s["obs"] for s in steps]),
            mask=np.concatenate([s["mask"] for s in steps]),
            actions=np.concatenate([s["actions"] for s in steps]),
            log_probs=np.concatenate([s["log_probs"] for s in steps]),
            values=values[flat],
            advantages=advantages[flat],
            returns=advantages[flat] + values[flat],
            games_finished=len(finished),
            learner_rewards=finished,
            engine_steps=self.moves - moves_before,
            hidden=None if steps[0]["hidden"] is None else np.concatenate([s["hidden"] for s in steps]),
            searched_values=None if searched is None else searched.values,
            searched=None if searched is None else searched.searched,
            search_statistics={} if searched is None else searched.statistics,
        )


def seat_advantages(steps: list[dict], num_players: int, gamma: float,
                    gae_lambda: float) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """(advantages[T, B], values[T, B], the recorded (round, slot) pairs in batch order) of a rollout.

    Each seat's recorded turns of a slot form one sequence for `gae`, with that seat's final reward:
    the rounds ``[T, B]`` are spread into ``[T, B * seats]``, one column per (slot, seat).
    """
    recorded = np.stack([s["recorded"] for s in steps])
    acting = np.stack([s["acting"] for s in steps])
    values = np.stack([s["values"] for s in steps])
    rewards = np.stack([s["rewards"] for s in steps])  # [T, B, seats]
    dones = np.stack([s["dones"] for s in steps])
    rounds, slots = recorded.shape
    seat_of = np.arange(num_players)
    by_seat = recorded[:, :, None] & (acting[:, :, None] == seat_of)
    spread = gae(np.where(by_seat, values[:, :, None], 0.0).reshape(rounds, -1), by_seat.reshape(rounds, -1),
                 rewards.reshape(rounds, -1), np.repeat(dones, num_players, axis=1), gamma=gamma, gae_lambda=gae_lambda)
    advantages = np.where(by_seat, spread.reshape(rounds, slots, num_players), 0.0).sum(axis=2)
    return advantages.astype(np.float32), values, recorded.nonzero()


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
        hidden=None if batches[0].hidden is None else join("hidden"),
    )  # no searched values: a search plays one table size (searched_mirror is two seats alone)



class Collector(Protocol):
    """Where a batch comes from: ``collect(network)`` plays the next round of games with ``network`` and
    returns one `Batch` (every table size's, merged); ``close()`` ends what the collector started."""

    def collect(self, network: TrainerNetwork) -> Batch: ...

    def close(self) -> None: ...


class LocalCollector:
    """The `Collector` of this process: one `SelfPlayGames` per table size, stepped one after another."""

    def __init__(self, games: list[SelfPlayGames], *, device: torch.device, generator: torch.Generator,
                 rollout_steps: int, gamma: float, gae_lambda: float):
        self.games, self.device, self.generator = games, device, generator
        self.rollout_steps, self.gamma, self.gae_lambda = rollout_steps, gamma, gae_lambda

    def collect(self, network: TrainerNetwork) -> Batch:
        return merge([games.collect(network, self.device, generator=self.generator, rollout_steps=self.rollout_steps,
                                    gamma=self.gamma, gae_lambda=self.gae_lambda) for games in self.games])

    def close(self) -> None:
        """Nothing to end: the games live in this process."""
