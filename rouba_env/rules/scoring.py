"""Scores and final rewards, written once for every environment, player and trainer.

The reward functions take the final scores (cards per seat) so that the
reference engine, the environments and the expert's rollouts share them; the
batched engine compiles the same function (`write_final_rewards`) into its step.
"""

from __future__ import annotations

from typing import Sequence

REWARD_MODES = ("outcome", "margin", "lead")
"""Final-reward modes (`write_final_rewards`); compiled code numbers them by their index here."""


OUTCOME, MARGIN, LEAD = (REWARD_MODES.index(mode) for mode in ("outcome", "margin", "lead"))
ENVIRONMENT_REWARD = "outcome"
"""The default reward of every environment and table (+1 sole win, 0 shared top, -1 loss): what a user of
PettingZoo classic or Gymnasium expects, and what evaluations count."""
TRAINING_REWARD = "margin"
"""The trainer's default reward, and so RLlib's and what a checkpoint's value head estimates when its
metadata names none: a denser signal that learns faster (`rouba_training.config.TrainConfig.reward`)."""
ZERO_SUM_REWARD = "margin"
"""The OpenSpiel game's returns: zero-sum at every table size, as OpenSpiel's algorithms expect."""
"""Reward modes by number, as compiled code (the batched engine's kernels) passes them."""


def write_final_rewards(mode: int, points, total_cards: int, out) -> None:
    """``out[s]``: seat ``s``'s final reward of reward mode number ``mode`` (`REWARD_MODES`) for ``points``.

    The one definition of the rewards, for both engines: plain loops over
    arrays, so the batched engine compiles this very function with numba and
    the reference engine calls it as it is (`final_rewards`).

    * outcome: +1 to a sole top score, 0 to players tied for the top, -1 to the rest;
    * margin: own score minus the mean of the others, over the cards in play;
    * lead: own score minus the best other score, over the cards in play
      (positive only for a sole winner; with 2 players the same as margin).
    """
    n = len(points)
    best = points[0]
    total = 0
    for s in range(n):
        total += points[s]
        if points[s] > best:
            best = points[s]
    tied = 0
    for s in range(n):
        if points[s] == best:
            tied += 1
    for s in range(n):
        if mode == MARGIN:
            out[s] = (points[s] - (total - points[s]) / (n - 1)) / total_cards
        elif mode == LEAD:
            best_other = -1
            for other in range(n):
                if other != s and points[other] > best_other:
                    best_other = points[other]
            out[s] = (points[s] - best_other) / total_cards
        elif points[s] == best:
            out[s] = 1.0 if tied == 1 else 0.0
        else:
            out[s] = -1.0


def top_seats(points: Sequence[int]) -> list[int]:
    """Seats with the top score (several on a tie)."""
    best = max(points)
    return [seat for seat, p in enumerate(points) if p == best]


def final_rewards(mode: str, points: Sequence[int], total_cards: int) -> list[float]:
    """Rewards of a reward mode (`REWARD_MODES`) for final scores (`write_final_rewards`)."""
    check_reward_mode(mode)
    out = [0.0] * len(points)
    write_final_rewards(REWARD_MODES.index(mode), list(points), total_cards, out)
    return out


def outcome_rewards(points: Sequence[int]) -> list[float]:
    """+1 to a sole winner, 0 to players tied for the top, -1 to the rest."""
    return final_rewards("outcome", points, 1)


def margin_rewards(points: Sequence[int], total_cards: int) -> list[float]:
    """Own score minus the mean of the others, divided by the number of cards in play."""
    return final_rewards("margin", points, total_cards)


def lead_rewards(points: Sequence[int], total_cards: int) -> list[float]:
    """Own score minus the best other score, divided by the number of cards in play."""
    return final_rewards("lead", points, total_cards)


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
