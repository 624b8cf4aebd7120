"""The warm-started approximate best response: its start, its bound against the exact solver, resuming, bad input."""

import json

import numpy as np
import pytest
import torch

from rouba_env import preset
from rouba_env.batched.game import VectorGame
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.players.registry import make_policy
from rouba_env.solve.exploitability import best_response, policy_strategy
from rouba_env.solve.game_tree import GameTree
from rouba_training.best_response import exploiter_start
from rouba_training.cli import main as train_main
from rouba_training.config import TrainConfig, resolve_start
from rouba_training.learner import build_learner
from rouba_training.network import playing_network
from rouba_training.periodic_evaluation import EVAL_SEED
from rouba_training.trainer import train

TINY_EXPLOITER = dict(num_envs=16, rollout_steps=8, minibatch_size=256, update_epochs=1, eval_interval=0,
                      checkpoint_interval=1, progress=False)


@pytest.fixture(scope="module")
def mini_target(tmp_path_factory):
    """A small network trained briefly on ``mini``: far from equilibrium, so there is something to exploit."""
    folder = tmp_path_factory.mktemp("mini_target")
    train(TrainConfig.of(run_dir=str(folder), rules="mini", total_steps=400, architecture="rank", hidden_sizes=(16, 8),
                      scripted_opponents=("greedy",), eval_opponents=("random",), final_eval_games=0,
                      **TINY_EXPLOITER))
    return f"checkpoint:{folder / 'policy'}"


def test_a_warm_start_begins_at_the_targets_self_play_on_the_same_deals(tmp_path, mini_target):
    games = 200
    final = train(TrainConfig.of(run_dir=str(tmp_path), rules="mini", best_response=mini_target, total_steps=200,
                              final_eval_games=games, **TINY_EXPLOITER))
    start = final["best_response"]["start_evaluation"][0]
    assert final["best_response"]["start"].startswith(f"a copy of the target {mini_target}")
    rules = preset("mini")
    target = make_policy(mini_target, rules)
    self_play = evaluate([target, make_policy(mini_target, rules)], rules=rules, games=games, seed=EVAL_SEED).players[0]
    assert (start["games"], start["win_rate"], start["mean_margin"]) == (games, self_play.win_rate,
                                                                         self_play.mean_margin)
    assert start["bound"] == 0 and start["exact_value"] == pytest.approx(0, abs=1e-12)
    assert start["kind"] == "start" and start["learner_steps"] == 0


def test_the_bound_on_mini_stays_below_the_exact_exploitability(tmp_path, mini_target):
    final = train(TrainConfig.of(run_dir=str(tmp_path), rules="mini", best_response=mini_target, total_steps=3000,
                              final_eval_games=2000, **TINY_EXPLOITER))
    tree = GameTree(preset("mini"))
    strategy, _ = policy_strategy(tree, make_policy(mini_target, preset("mini")))
    exact = float(np.mean([best_response(tree, strategy, seat)[0] for seat in range(2)]))
    for row in final["best_response"]["start_evaluation"] + final["evaluation"]:
        assert row["exact_best_response"] == pytest.approx(exact)
        assert row["exact_value"] <= exact + 1e-9  # no strategy beats the best response
        assert row["bound_low"] <= exact  # the estimate's interval reaches down to the truth or below it


def test_an_exploiter_resumes_with_its_start_evaluation(tmp_path, mini_target):
    config = dict(run_dir=str(tmp_path), rules="mini", best_response=mini_target, final_eval_games=50,
                  **TINY_EXPLOITER)
    first = train(TrainConfig.of(**config, total_steps=200))
    final = train(TrainConfig.of(**config, total_steps=600), resume=True)
    assert final["learner_steps"] >= 600 > first["learner_steps"]
    assert final["best_response"]["start_evaluation"] == first["best_response"]["start_evaluation"]
    saved = json.loads((tmp_path / "final_eval.json").read_text())
    assert saved["best_response"]["start_evaluation"][0]["learner_steps"] == 0


def test_a_scripted_target_starts_from_the_strongest_shipped_network_that_plays_the_table():
    standard = [preset("standard", num_players=2)]
    assert exploiter_start("heuristic", "auto", standard).checkpoint == "2p"
    at_three = exploiter_start("heuristic", "auto", [preset("standard", num_players=3)])
    assert at_three.checkpoint is None  # mixed plays three seats, but reads version-1 observations
    fresh = exploiter_start("heuristic", "auto", [preset("mini")])
    assert fresh.checkpoint is None and "no shipped network plays these rules" in fresh.description
    copied = exploiter_start("checkpoint:2p", "auto", standard)
    assert copied.checkpoint == "2p" and "privileged critic" in copied.description


def test_a_network_start_fixes_the_shape_to_the_checkpoints():
    config = resolve_start(TrainConfig.of(best_response="checkpoint:2p"))
    assert (config.network.architecture, config.network.hidden_sizes, config.network.critic) == ("rank", (128, 64), "privileged")
    assert config.evaluation.final_eval_games >= 10_000 and config.ppo.learning_rate < 1e-3


BAD_EXPLOITERS = [
    (["--best-response", "nope"], "best_response: unknown player 'nope'"),
    (["--best-response", "checkpoint:2p", "--rules", "mini"], "cannot play rules 'mini'"),
    (["--best-response", "greedy", "--total-steps", "0"], "total_steps must be in 1.."),
    (["--best-response", "greedy", "--total-steps", "-5"], "total_steps must be in 1.."),
    (["--best-response", "greedy", "--best-response-steps", "0"], "--best-response-steps was removed: an exploiter's "
                                                                   "budget is --total-steps N"),
    (["--best-response", "greedy", "--total-steps", str(10**13)], "total_steps must be in 1..1000000000000"),
    (["--best-response", "greedy", "--best-response-start", "bogus"], "best_response_start must be auto, fresh"),
    (["--best-response", "greedy", "--best-response-temperature", "0.5"], "best_response_temperature must be in"),
    (["--best-response-start", "fresh"], "it needs best_response"),
    (["--best-response", "greedy", "--hidden-sizes", "16", "8"], "hidden_sizes must be left out or be"),
]


BAD_STARTS = [
    (["--start-from", "checkpoint:2p", "--rules", "mini"], "start_from='checkpoint:2p': checkpoint '2p' was trained "
                                                           "with other rules"),
    (["--start-from", "auto"], "a network starts fresh or from a checkpoint spec"),
    (["--start-from", "checkpoint:2p", "--hidden-sizes", "64", "32"], "hidden_sizes must be left out or be"),
    (["--start-from", "checkpoint:2p", "--best-response", "heuristic"], "leave start_from out"),
    (["--start-from", "checkpoint:/no/such/folder"], "no checkpoint at '/no/such/folder'"),
]


@pytest.mark.parametrize("flags,message", BAD_EXPLOITERS + BAD_STARTS)
def test_bad_exploiter_and_start_settings_get_one_line_before_any_work(tmp_path, capsys, flags, message):
    run_dir = tmp_path / "run"
    assert train_main(["--run-dir", str(run_dir), "--no-progress", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0], err
    assert not run_dir.exists()


def test_a_network_of_older_observations_is_exploited_from_the_strongest_shipped_network():
    start = exploiter_start("checkpoint:2p-0.3", "auto", [preset("standard", num_players=2)])
    assert start.checkpoint == "2p" and "reads observations of version 1" in start.description
    with pytest.raises(ValueError, match="cannot be trained on"):
        exploiter_start("greedy", "checkpoint:2p-0.3", [preset("standard", num_players=2)])


def test_a_run_starts_from_a_checkpoint_with_its_weights_and_shape(tmp_path, mini_target):
    """start_from copies the checkpoint's actor (the first update's collecting policy plays exactly as it does)
    and takes its network's shape."""
    config = TrainConfig.of(run_dir=str(tmp_path), rules="mini", start_from=mini_target, total_steps=200,
                            final_eval_games=0, scripted_opponents=("greedy",), eval_opponents=("random",),
                            **TINY_EXPLOITER)
    config = resolve_start(config)  # the checkpoint read when the run starts
    assert config.network.hidden_sizes == (16, 8) and config.sources["hidden_sizes"] == "start"  # not the trainer's
    rules = preset("mini")
    learner = build_learner(config, [rules], 2, device=torch.device("cpu"))
    target = make_policy(mini_target, rules)  # greedy: the first legal move of the highest logit
    game = VectorGame(rules, 64, seed=3)
    game.reset()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        logits = playing_network(learner.network)(torch.as_tensor(game.obs))[0].numpy()
    legal = game.mask.astype(bool)
    copied = np.where(legal, logits, -np.inf).argmax(axis=1)
    np.testing.assert_array_equal(copied, target.act_batch(game.obs, game.mask, rng))
    final = train(config)
    assert final["learner_steps"] >= 200
