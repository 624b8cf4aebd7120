"""Duplicate-deal evaluation on Ray gives exactly the local run's records and statistics."""

import json

import pytest

from rouba_env.evaluation.duplicate import evaluate


@pytest.mark.slow
@pytest.mark.parametrize("players, num_players", [(["heuristic", "random"], 2),
                                                  (["greedy", "random", "heuristic", "random"], 3)])
def test_ray_evaluation_equals_the_local_run(ray_session, players, num_players):
    from rouba_env.evaluation.distributed import evaluate_on_ray

    local = evaluate(players, games=60, num_players=num_players, seed=11)
    distributed = evaluate_on_ray(players, games=60, num_players=num_players, seed=11)
    assert distributed.records == local.records
    assert distributed.to_dict(include_timing=False) == local.to_dict(include_timing=False)


@pytest.mark.slow
def test_evaluate_command_with_ray_writes_the_local_results(ray_session, tmp_path):
    from rouba_env.cli.evaluate import main

    common = ["--players", "heuristic", "greedy", "--games", "40", "--seed", "3", "--no-progress"]
    assert main(common + ["--json", str(tmp_path / "local.json")]) == 0
    assert main(common + ["--ray", "--json", str(tmp_path / "ray.json")]) == 0
    local, distributed = (json.loads((tmp_path / name).read_text()) for name in ("local.json", "ray.json"))
    for result in (local, distributed):
        result.pop("command")
        for row in result["results"]:
            assert row.pop("ms_per_decision") > 0  # wall-clock time: the one thing that differs
    assert distributed == local


def test_ray_evaluation_refuses_policy_objects():
    pytest.importorskip("ray")
    from rouba_env.evaluation.distributed import evaluate_on_ray
    from rouba_env.players.base import RandomPolicy
    from rouba_env.rules.config import make_rules

    with pytest.raises(ValueError, match="specs"):
        evaluate_on_ray([RandomPolicy(make_rules("standard")), "random"], games=2)
