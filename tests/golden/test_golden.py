"""Today's seeded results, pinned: refactors must reproduce them exactly.

`golden.json` was written by ``python -m tests.golden.make_golden`` before
the layout refactor. A mismatch means a change of behaviour: games,
observations, masks, rewards or evaluation results differ for the same seeds.
"""

import json
from pathlib import Path

import pytest

from tests.golden.trajectories import GOLDEN_PRESETS, aec_episode, evaluation_scores, gym_episode, vector_trajectory

PINNED = json.loads((Path(__file__).parent / "golden.json").read_text())


@pytest.mark.parametrize("name, players, games, seats, rules", [
    ("ladder_greedy_random", ["greedy", "random"], 12, 2, None),
    ("ladder_heuristic_greedy", ["heuristic", "greedy"], 12, 2, None),
    ("ladder_expert_heuristic", ["expert:samples=24", "heuristic"], 4, 2, None),
    ("expert_endgame_three_players", ["expert:samples=24", "heuristic", "greedy"], 6, 3, None),
    ("heuristic_jokers_four", ["heuristic", "greedy", "random", "heuristic"], 8, 4, "jokers"),
])
def test_evaluation_records_unchanged(name, players, games, seats, rules):
    assert evaluation_scores(players, games, seats, rules) == PINNED[name]


@pytest.mark.parametrize("preset", GOLDEN_PRESETS)
@pytest.mark.parametrize("num_players", [2, 3])
def test_vector_trajectory_unchanged(preset, num_players):
    assert vector_trajectory(preset, num_players) == PINNED[f"vector_{preset}_{num_players}"]


@pytest.mark.parametrize("preset", GOLDEN_PRESETS)
@pytest.mark.parametrize("num_players", [2, 3])
def test_aec_episode_unchanged(preset, num_players):
    assert aec_episode(preset, num_players) == PINNED[f"aec_{preset}_{num_players}"]


def test_gym_episode_unchanged():
    assert gym_episode() == PINNED["gym_episode"]
