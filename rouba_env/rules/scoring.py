"""Scores and final rewards, written once for every environment, player and trainer.

The reward functions take the final scores (cards per seat) so that the
reference engine, the environments and the expert's rollouts share them; the
batched engine computes the same numbers inside its compiled step.
"""

from __future__ import annotations

from typing import Sequence

REWARD_MODES = ("outcome", "margin", "lead")
"""Final-reward modes: `outcome_rewards`, `margin_rewards` and `lead_rewards` (the batched engine's
kernels number them by their index here)."""


def top_seats(points: Sequence[int]) -> list[int]:
    """Seats with the top score (several on a tie)."""
    best = max(points)
    return [seat for seat, p in enumerate(points) if p == best]


def outcome_rewards(points: Sequence[int]) -> list[float]:
    """+1 to a sole winner, 0 to players tied for the top, -1 to the rest."""
    top = top_seats(points)
    return [(1.0 if len(top) == 1 else 0.0) if seat in top else -1.0 for seat in range(len(points))]


def margin_rewards(points: Sequence[int], total_cards: int) -> list[float]:
    """Own score minus the mean of the others, divided by the number of cards in play."""
    n = len(points)
    total = sum(points)
    return [(p - (total - p) / (n - 1)) / total_cards for p in points]


def lead_rewards(points: Sequence[int], total_cards: int) -> list[float]:
    """Own score minus the best other score, divided by the number of cards in play.

    Positive only for a sole winner: at 3 or more players it rewards beating the
    leader rather than the average (with 2 players it equals `margin_rewards`).
    """
    rewards = []
    for seat, p in enumerate(points):
        best_other = max(q for other, q in enumerate(points) if other != seat)
        rewards.append((p - best_other) / total_cards)
    return rewards


def final_rewards(mode: str, points: Sequence[int], total_cards: int) -> list[float]:
    """Rewards of a reward mode (`REWARD_MODES`) for final scores."""
    if mode == "outcome":
        return outcome_rewards(points)
    if mode == "margin":
        return margin_rewards(points, total_cards)
    if mode == "lead":
        return lead_rewards(points, total_cards)
    raise ValueError(f"unknown reward {mode!r}; choose one of {REWARD_MODES}")


def check_reward_mode(mode) -> str:
    """``mode`` if it is one of `REWARD_MODES`, else a ValueError naming the allowed ones."""
    if not isinstance(mode, str) or mode not in REWARD_MODES:
        raise ValueError(f"unknown reward {mode!r}; choose one of {REWARD_MODES}")
    return mode


def scores(state) -> list[int]:
    """Cards in each seat's pile (one point per card) of a reference-engine `GameState`."""
    return [len(pile) for pile in state.piles]


def winners(state) -> list[int]:
    """Seats with the top score in a reference-engine `GameState` (several on a tie)."""
    return top_seats(scores(state))
