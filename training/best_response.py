"""The warm-started approximate best response: how much a dedicated learner takes from a frozen player.

The exploiter trains with PPO against the frozen target alone (the target plays as it plays for users,
greedy unless its spec says ``deterministic=false``), holding every seat the target does not. Where the
target is a network the exploiter starts as an exact copy of it (its actor and, where the checkpoint ships
one, its privileged critic), so its first evaluation is the target's self-play: a win rate of one seat's
share and a margin of 0, the bound it can only move up from. For a scripted target there is no copy: it
starts from the strongest shipped network that plays the table, else from a fresh network, and says which.

Any fixed strategy's seat-averaged margin against the target is a lower bound on the target's
exploitability (NashConv / 2 at two seats: the seat-averaged value a best response takes from it), in the
margin reward's units, the exact solver's. `exploitability_bound` turns an evaluation row into that bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rouba_env.encoding.observation import OBSERVATION_VERSION
from rouba_env.players.checkpoint import CheckpointTableMismatch, load_checkpoint
from rouba_env.players.registry import make_policy, parse_spec
from rouba_env.rules.config import RulesConfig
from rouba_env.solve.exploitability import best_response, policy_strategy
from rouba_env.solve.game_tree import GameTree

SHIPPED_BY_STRENGTH = ("2p", "mixed")
"""Shipped networks a scripted target's exploiter may start from, strongest first (the first that plays
every table of the run with the trainer's observations is taken)."""
START_CHOICES = ("auto", "fresh")
"""`TrainConfig.best_response_start` besides a checkpoint spec (``checkpoint:PATH`` or ``checkpoint:NAME``)."""
WARM_LEARNING_RATE = 2e-4
"""A copy is already a good policy and a large first step throws it away: the exploiter's default step."""
FRESH_LEARNING_RATE = 1e-3
"""A fresh exploiter learns at the trainer's usual step."""
EXPLOITER_ENTROPY = 0.0
"""A best response needs no exploration bonus against a fixed opponent; the copy's own spread explores."""
EXPLOITER_EVAL_GAMES = 10_000
"""Duplicate-deal games against the target at the start and at the end (both seatings of 5,000 deals)."""


@dataclass(frozen=True)
class NetworkStart:
    """Where a learner's network starts (an exploiter's, or a run's `start_from`): a checkpoint's weights, or
    fresh (``checkpoint`` None)."""

    checkpoint: str | None
    """The checkpoint's path or shipped name."""
    description: str
    """How the start is said in the output."""
    metadata: dict | None = None
    """The checkpoint's metadata: its network's shape."""

    @property
    def has_privileged_critic(self) -> bool:
        return self.metadata is not None and "privileged_value" in self.metadata


def checkpoint_argument(spec: str) -> str | None:
    """The path or name of a ``checkpoint:...`` spec; None for any other player."""
    name, argument, _ = parse_spec(spec)
    return argument if name == "checkpoint" else None


def exploiter_start(target: str, start: str, rules_per_size: list[RulesConfig]) -> NetworkStart:
    """Resolve `TrainConfig.best_response_start` for ``target`` on the run's ``rules_per_size``.

    ``auto``: a copy of the target if it is a network, else the strongest shipped network that plays every
    table (`SHIPPED_BY_STRENGTH`), else fresh; ``fresh``; or a checkpoint spec, which must play every table.
    """
    if start == "fresh":
        return NetworkStart(None, "a fresh network (asked for)")
    if start == "auto":
        copied = checkpoint_argument(target)
        why = f"the target {target} is scripted: there is no copy to start from"
        if copied is not None:
            try:
                return _from_checkpoint(copied, rules_per_size, f"a copy of the target {target}")
            except OlderObservations as error:
                why = str(error)
        for name in SHIPPED_BY_STRENGTH:
            try:
                return _from_checkpoint(name, rules_per_size, f"the shipped network {name} ({why})")
            except CheckpointTableMismatch:  # another table or observation layout
                continue
        return NetworkStart(None, f"a fresh network ({why}, and no shipped network plays these rules)")
    if checkpoint_argument(start) is None:
        raise ValueError(f"best_response_start must be auto, fresh or a checkpoint spec (checkpoint:PATH or "
                         f"checkpoint:NAME), got {start!r}")
    return checkpoint_start(start, rules_per_size)


def checkpoint_start(spec: str, rules_per_size: list[RulesConfig]) -> NetworkStart:
    """The start from the checkpoint spec ``spec`` (``checkpoint:PATH`` or ``checkpoint:NAME``), which must play
    every table of the run with the trainer's observations (else `CheckpointTableMismatch`)."""
    argument = checkpoint_argument(spec)
    if argument is None:
        raise ValueError(f"a network starts fresh or from a checkpoint spec (checkpoint:PATH or checkpoint:NAME), "
                         f"got {spec!r}")
    return _from_checkpoint(argument, rules_per_size, f"the network {spec}")


def start_shape(start: NetworkStart) -> dict:
    """The settings a network start fixes: its network's shape and critic."""
    assert start.metadata is not None  # a checkpoint's start
    return {"architecture": start.metadata["architecture"], "hidden_sizes": tuple(start.metadata["hidden_sizes"]),
            "max_players": int(start.metadata["max_players"]),
            "critic": "privileged" if start.has_privileged_critic else "shared"}


class OlderObservations(CheckpointTableMismatch):
    """A checkpoint reads an older observation layout than the trainer's networks: it plays, but cannot train."""


def _from_checkpoint(argument: str, rules_per_size: list[RulesConfig], description: str) -> NetworkStart:
    """The start from a checkpoint that plays every table with today's observations (else
    `CheckpointTableMismatch`)."""
    for rules in rules_per_size:
        make_policy(f"checkpoint:{argument}", rules)
    _, metadata = load_checkpoint(argument)
    if int(metadata["observation_version"]) != OBSERVATION_VERSION:
        raise OlderObservations(f"{argument}'s network reads observations of version {metadata['observation_version']}"
                                f", the trainer's of version {OBSERVATION_VERSION}: it cannot be trained on")
    parts = "its actor and privileged critic" if "privileged_value" in metadata else "its actor and value head"
    return NetworkStart(argument, f"{description} ({parts})", metadata)


def exploitability_bound(row: dict, rules: RulesConfig) -> dict:
    """The lower bound an evaluation row against the target gives, in the margin reward's units.

    The evaluator's margin is in cards (own score minus the others' mean, seat-averaged over duplicate
    deals); the margin reward divides it by the cards in play. With the row's 95% interval.
    """
    cards = rules.total_cards
    bound = {"bound": row["mean_margin"] / cards}
    if row.get("margin_low") is not None:
        bound |= {"bound_low": row["margin_low"] / cards, "bound_high": row["margin_high"] / cards}
    return bound


@dataclass(frozen=True)
class ExactTarget:
    """A target on a solvable table: how it plays at every information set, and what a best response to it
    takes (the mean over the seats of the best response's value: NashConv / 2 for a symmetric zero-sum game)."""

    strategy: np.ndarray
    best_response_value: float


def exact_target(tree: GameTree, spec: str, rules: RulesConfig, max_players: int) -> ExactTarget:
    """The target ``spec`` as the exact solver sees it on ``tree`` (as it plays for users)."""
    strategy, _ = policy_strategy(tree, make_policy(spec, rules, max_players), rng=np.random.default_rng(0))
    values = [best_response(tree, strategy, seat)[0] for seat in range(tree.num_players)]
    return ExactTarget(strategy, float(np.mean(values)))


def describe_bound(row: dict) -> str:
    """One line of an evaluation row against the target: win rate, margin and the bound, with intervals."""
    line = (f"{row['games']} games against {row['opponent']}: win rate {row['win_rate']:.1%} "
            f"[{row['win_low']:.1%}, {row['win_high']:.1%}], margin {row['mean_margin']:+.3f} cards; "
            f"exploitability lower bound {row['bound']:+.4f}")
    if "bound_low" in row:
        line += f" [{row['bound_low']:+.4f}, {row['bound_high']:+.4f}]"
    if "exact_value" in row:
        line += (f"; exact: this exploiter {row['exact_value']:+.4f}, the best response "
                 f"{row['exact_best_response']:+.4f}")
    return line
