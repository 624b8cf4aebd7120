"""Searched action values: the learning signal of ``policy_objective`` searched_mirror.

At each decision a batch searches (those with a choice, each with probability ``search_share``), the acting
seat's view is all the learner has; `rouba_env.posterior.WorldSearch` draws ``search_worlds`` positions from the
posterior that the collecting policy's own action probabilities imply along the other seat's moves (the seat's
own hand known), plays every legal move out in each of them with the collecting policy in both seats (sampling),
the same worlds for every move, and takes each move's mean reward as its value (optionally cut after
``search_cut`` moves, the critic's estimate standing for the rest). The mirror step is fitted to those values
(`rouba_training.losses.mirror_fit_target`). The learner's observation never sees a hidden card: only the
searched values, computed from public information and the policy, carry what the worlds held.

The posterior is the policy's as it collects the batch: the other seat's past moves (from earlier batches too,
in a game that spans two) are weighed by the network that collected this one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from rouba_env.batched.game import VectorGame
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.posterior import DecisionRecorder, TargetDecision, WorldSearch
from rouba_env.rules.config import RulesConfig
from rouba_training.network import TrainerNetwork, masked_logits, playing_network

HASH_SEED = 0x5EA4C4
"""Seeds the fixed projection that groups equal observations (`distinct_rows`): any projection is exact."""
SEARCH_HANDS = 256
"""The other seat's possible hands weighed at a searched decision: every one where there are at most this many,
else this many drawn from the deal (the posterior's cost is a read of the network per hand at each decision the
other seat made with it, and a full game's first hand has far more possible hands than this)."""
NETWORK_CHUNK = 1024
"""Rows per forward pass of the searching network: a rank network's tokens for this many rows stay in the
processor's cache (far larger passes are slower a row)."""
CHUNK_DECISIONS = 512
"""Decisions searched together: their worlds x legal moves are played out as one batch (memory bound)."""


class NetworkPlayer:
    """A frozen trainer network as a table player: sampled moves, exact action probabilities, and its critic's
    estimate of a seat's reward (for a playout cut short)."""

    plays_in_batch = True

    def __init__(self, network: TrainerNetwork, rules: RulesConfig, max_players: int, *, device: torch.device):
        self.network, self.actor, self.device = network, playing_network(network), device
        self.rules = rules
        self.encoder = ObservationEncoder(rules, max_players)
        self.name = "the collecting policy"

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return int(self.act_batch(obs[None, :], mask[None, :], rng)[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A sampled move for each row: one uniform a row from ``rng`` against its moves' cumulative
        probabilities."""
        probabilities, inverse = self.distinct_probabilities(obs, mask)
        cumulative = np.cumsum(probabilities, axis=1)[inverse]
        drawn = rng.random(len(inverse)) * cumulative[:, -1]
        return np.argmax(cumulative > drawn[:, None], axis=1)  # the first move whose share holds the draw

    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float64[B, A]: the probability `act_batch` plays each action."""
        probabilities, inverse = self.distinct_probabilities(obs, mask)
        return probabilities[inverse]

    @torch.no_grad()
    def distinct_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(float64[D, A], inverse[B]): the move probabilities of each distinct (observation, mask) row, read
        once (a search's worlds repeat many), and each row's place among them."""
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        first, inverse = distinct_rows(np.concatenate([obs, np.asarray(mask, dtype=np.float32)], axis=1))
        distinct = torch.as_tensor(obs[first], device=self.device)
        legal = torch.as_tensor(np.asarray(mask)[first], device=self.device)
        parts = [legal_softmax(self.actor(distinct[start:start + NETWORK_CHUNK])[0],
                               legal[start:start + NETWORK_CHUNK]).double().cpu().numpy()
                 for start in range(0, len(first), NETWORK_CHUNK)]
        return (np.concatenate(parts) if parts else np.zeros((0, np.shape(mask)[1]))), inverse

    @torch.no_grad()
    def state_values(self, game: VectorGame, slots: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """float64[K]: the critic's estimate of seat ``seats[i]``'s reward in game ``slots[i]`` (its own view;
        a privileged critic also reads the hidden cards, which a world holds)."""
        obs = torch.as_tensor(game.observe_slots(slots, seats), device=self.device)
        hidden = (torch.as_tensor(game.hidden(slots, seats), device=self.device)
                  if self.network.reads_hidden else None)
        parts = [self.network(obs[start:start + NETWORK_CHUNK],
                              None if hidden is None else hidden[start:start + NETWORK_CHUNK])[1]
                 for start in range(0, len(obs), NETWORK_CHUNK)]
        return torch.cat(parts).double().cpu().numpy() if parts else np.zeros(0)


def legal_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """[B, A]: the softmax of each row's logits over its legal actions (0 elsewhere), as `MaskedCategorical`'s
    ``probs`` in one pass."""
    return torch.softmax(masked_logits(logits, legal), dim=1)


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse): the index of one row of each distinct value of ``rows`` (2-d), and for every row the
    position of its value in ``first`` (``rows[first][inverse] == rows``, exactly: rows are grouped by a hash
    and any row unlike its group's first keeps a place of its own)."""
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    weights = np.random.default_rng(HASH_SEED).standard_normal(rows.shape[1])
    keys = rows.astype(np.float64) @ weights
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    unlike = np.flatnonzero((rows != rows[first[inverse]]).any(axis=1))
    if unlike.size:  # a hash shared by different rows (never seen): each such row stands alone
        inverse = inverse.copy()
        inverse[unlike] = len(first) + np.arange(unlike.size)
        first = np.concatenate([first, unlike])
    return first, inverse


@dataclass
class PendingDecision:
    """A decision to search: where it stood (row ``row`` of a round's copied positions), whose it was, the
    other seats' decisions in their current hands then (one list per seat), and its row in the batch."""

    position: VectorGame
    row: int
    observer: int
    history: list[list[TargetDecision]]
    batch_row: int


@dataclass
class SearchOutcome:
    """A batch's searched values and what they cost."""

    values: np.ndarray
    """float32[N, A]: each searched decision's move values (NaN on rows not searched, and on illegal moves)."""
    searched: np.ndarray
    """bool[N]: the rows searched."""
    statistics: dict[str, float]


SEARCH_STATS = ("searched_decisions", "searched_value_error", "searched_advantage_error", "search_seconds")
"""What a batch's search reports in ``metrics.csv``: the decisions searched, the mean standard error of a
searched value and of a value less its decision's mean over the legal moves, and the seconds it took."""


class DecisionSearch:
    """One table's searched decisions: it records every move (the hands' evidence), picks the decisions to
    search as the batch is collected, and searches them when it is complete (`run`)."""

    def __init__(self, rules: RulesConfig, max_players: int, *, reward: str, worlds: int, share: float, cut: int):
        self.rules, self.max_players, self.reward = rules, max_players, reward
        self.worlds, self.share, self.cut = worlds, share, cut
        self.recorder: DecisionRecorder | None = None
        self.pending: list[PendingDecision] = []

    def watch(self, game: VectorGame) -> DecisionRecorder:
        """The move hook that keeps the table's decisions (every seat's)."""
        self.recorder = DecisionRecorder(game)
        return self.recorder

    def new_games(self, slots: np.ndarray) -> None:
        if self.recorder is not None:
            self.recorder.forget(slots)

    def note(self, slots: np.ndarray, seats: np.ndarray, legal_moves: np.ndarray, *, first_batch_row: int,
             rng: np.random.Generator) -> None:
        """The round just played at ``slots`` (every slot, in the order the recorder kept them), of which
        ``slots`` were recorded into the batch from row ``first_batch_row`` on: those with a choice are
        searched with probability ``share``."""
        recorder = self.recorder
        assert recorder is not None and recorder.latest is not None
        position = recorder.latest
        choice = legal_moves > 1
        drawn = rng.random(len(slots)) < self.share if self.share < 1 else np.ones(len(slots), dtype=bool)
        for index in np.flatnonzero(choice & drawn).tolist():
            slot, seat = int(slots[index]), int(seats[index])
            _, decision = recorder.decisions[slot][-1]
            history = recorder.others_decisions(slot, seat, decision.deck_len)
            self.pending.append(PendingDecision(position, decision.row, seat, history, first_batch_row + index))

    def run(self, network: TrainerNetwork, *, device: torch.device, batch_size: int, num_actions: int,
            rng: np.random.Generator) -> SearchOutcome:
        """Search every pending decision with ``network`` (the collecting policy) and forget them."""
        started = time.perf_counter()
        player = NetworkPlayer(network, self.rules, self.max_players, device=device)
        search = WorldSearch(player, player, self.rules, self.worlds, reward=self.reward, cut=self.cut,
                             value=player.state_values if self.cut else None, exact_hands=SEARCH_HANDS,
                             drawn_hands=SEARCH_HANDS)
        values = np.full((batch_size, num_actions), np.nan, dtype=np.float32)
        searched = np.zeros(batch_size, dtype=bool)
        value_errors, advantage_errors = [], []
        groups: dict[int, list[PendingDecision]] = {}
        for decision in self.pending:
            groups.setdefault(id(decision.position), []).append(decision)
        for group in groups.values():
            for start in range(0, len(group), CHUNK_DECISIONS):
                chunk = group[start:start + CHUNK_DECISIONS]
                result = search.searched_values(
                    chunk[0].position, np.array([d.row for d in chunk]), np.array([d.observer for d in chunk]),
                    histories=[d.history for d in chunk], rng=rng)
                rows = np.array([d.batch_row for d in chunk])
                legal = np.isfinite(result.mean)
                values[rows] = np.where(legal, result.mean, np.nan)
                searched[rows] = True
                value_errors.append(result.standard_error[legal])
                advantage_errors.append(result.advantage_error[legal])
        self.pending = []
        statistics = {
            "searched_decisions": float(searched.sum()),
            "searched_value_error": float(np.concatenate(value_errors).mean()) if value_errors else 0.0,
            "searched_advantage_error": float(np.concatenate(advantage_errors).mean()) if advantage_errors else 0.0,
            "search_seconds": time.perf_counter() - started,
        }
        return SearchOutcome(values, searched, statistics)
