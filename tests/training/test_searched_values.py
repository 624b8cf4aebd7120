"""Searched action values (policy_objective searched_mirror): the posterior the trainer weighs worlds by is exact
Bayes, the searched values are the tree's exact action values of the collecting policy, a short run on ``mini``
reaches an equilibrium's neighbourhood, a run repeats from its checkpoint, and bad settings are refused."""

import shutil

import numpy as np
import pytest
import torch

from rouba_env import preset
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.posterior import WorldSearch
from rouba_env.solve.exploitability import counterfactual_action_values, policy_strategy
from rouba_env.solve.game_tree import GameTree
from rouba_env.table import OPEN_SEAT, Table
from rouba_training.cli import config_from_args
from rouba_training.config import TrainConfig
from rouba_training.network import make_network
from rouba_training.searched_values import DecisionSearch, NetworkPlayer, distinct_rows
from rouba_training.trainer import train
from tests.evaluation.test_local_best_response import assignments, exact_posterior
from tests.training.test_train import TINY, metric_rows

PEAKED = 300.0
"""A fresh network's policy head scaled by this much: a policy far from uniform, whose moves tell of its hand."""


def a_peaked_player(rules, seed: int) -> NetworkPlayer:
    torch.manual_seed(seed)
    network = make_network("mlp", ObservationEncoder(rules).size, ActionEncoding(rules).size, hidden_sizes=(32,),
                           max_players=2)
    with torch.no_grad():
        network.policy_head.weight.mul_(PEAKED)
    return NetworkPlayer(network.eval(), rules, 2, device=torch.device("cpu"))


def self_play_with_a_search(rules, player: NetworkPlayer, search: DecisionSearch, seed: int):
    """One self-play game of ``player`` in both seats, every decision noted for the search as the rollout notes
    them; every move so far as (seat, action) at each decision, in the order noted."""
    table = Table(rules, 1, reward="margin", illegal_action="raise")
    table.before_move = search.watch(table.game)
    table.seat([0], [[OPEN_SEAT, OPEN_SEAT]])
    table.start([0], [seed])
    rng = np.random.default_rng(seed)
    moves: list[tuple[int, int]] = []
    histories = []
    while not table.over[0]:
        seat = int(table.current[0])
        legal = table.mask[:1].sum(axis=1)
        action = int(player.act_batch(table.obs[:1], table.mask[:1], rng)[0])
        histories.append(list(moves))
        table.play([0], [action])
        search.note(np.array([0]), np.array([seat]), legal, first_batch_row=len(histories) - 1, rng=rng)
        moves.append((seat, action))
    return histories


def test_the_trainers_posterior_is_exact_bayes_over_every_deal_of_mini():
    rules = preset("mini")
    player = a_peaked_player(rules, 0)
    checked = 0
    for seed in range(12):
        search = DecisionSearch(rules, 2, reward="margin", worlds=1, share=1.0, cut=0)
        histories = self_play_with_a_search(rules, player, search, seed)
        world_search = WorldSearch(player, player, rules, 1)
        for pending in search.pending:
            if not any(pending.history):
                continue
            hands, weights = world_search.hands(pending.position, pending.row, pending.observer,
                                                decisions=pending.history, rng=np.random.default_rng(0))
            ours = assignments(hands, weights)
            observed = pending.position.observe_slots([pending.row], [pending.observer])[0]
            exact = exact_posterior(rules, player, histories[pending.batch_row], observed, pending.observer)
            assert ours.keys() == exact.keys()
            for hand, weight in exact.items():
                assert ours[hand] == pytest.approx(weight, rel=1e-6)  # the network's float32 probabilities
            checked += len(exact) > 1 and max(exact.values()) < 0.99
    assert checked >= 3  # decisions whose posterior weighed several hands, not all alike


def test_searched_values_are_the_trees_exact_action_values_of_the_collecting_policy_on_mini():
    rules = preset("mini")
    tree = GameTree(rules)
    player = a_peaked_player(rules, 1)
    exact = counterfactual_action_values(tree, policy_strategy(tree, player)[0])
    observations = np.asarray(tree.observations, np.float32)
    compared = 0
    for seed in range(6):
        search = DecisionSearch(rules, 2, reward="margin", worlds=4000, share=1.0, cut=0)
        self_play_with_a_search(rules, player, search, seed)
        pending = list(search.pending)
        outcome = search.run(player.network, device=torch.device("cpu"), batch_size=len(pending) + 20,
                             num_actions=ActionEncoding(rules).size, rng=np.random.default_rng(seed))
        assert outcome.searched.sum() == len(pending) and outcome.statistics["searched_decisions"] == len(pending)
        for decision in pending:
            obs = decision.position.observe_slots([decision.row], [decision.observer])[0]
            matches = np.flatnonzero((observations == obs).all(axis=1) & (tree.infoset_seat == decision.observer))
            if len(matches) != 1:  # the observation names more than one information set here: not comparable
                continue
            infoset = int(matches[0])
            slots = tree.slot_start[infoset] + np.arange(tree.infoset_size[infoset])
            values = outcome.values[decision.batch_row, tree.slot_action[slots]]
            searched = WorldSearch(player, player, rules, 4000).searched_values(
                decision.position, np.array([decision.row]), np.array([decision.observer]),
                histories=[decision.history], rng=np.random.default_rng(seed))
            errors = searched.standard_error[0, tree.slot_action[slots]]
            assert np.all(np.abs(values - exact[slots]) <= 4 * errors + 1e-9), (values, exact[slots], errors)
            assert np.all(np.abs(searched.mean[0, tree.slot_action[slots]] - exact[slots]) <= 4 * errors + 1e-9)
            illegal = np.ones(outcome.values.shape[1], dtype=bool)
            illegal[tree.slot_action[slots]] = False
            assert np.isnan(outcome.values[decision.batch_row, illegal]).all()
            compared += 1
    assert compared >= 8


def test_equal_rows_are_read_once_and_every_row_gets_its_own_back():
    rng = np.random.default_rng(0)
    distinct = rng.standard_normal((5, 7)).astype(np.float32)
    picks = rng.integers(5, size=40)
    rows = distinct[picks]
    first, inverse = distinct_rows(rows)
    assert len(first) == 5 and np.array_equal(rows[first][inverse], rows)
    assert len(distinct_rows(rows[:0])[0]) == 0


SEARCHED = dict(TINY, rules="mini", policy_objective="searched_mirror", mirror_coef=1.0, search_worlds=4,
                self_play_weight=1.0, past_self_weight=0.0, scripted_weight=0.0, scripted_opponents=(),
                snapshot_interval=100)


def test_a_searched_run_logs_its_values_errors_and_repeats_from_its_checkpoint(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    settings = dict(SEARCHED, total_steps=200, final_eval_games=0, eval_interval=0)
    train(TrainConfig.of(run_dir=str(first), **settings))
    shutil.copytree(first, second)
    for folder in (first, second):
        train(TrainConfig.of(run_dir=str(folder), **dict(settings, total_steps=500)), resume=True)
    timing = ("seconds", "steps_per_second", "search_seconds")
    rows, again = ([{k: v for k, v in row.items() if k not in timing} for row in metric_rows(folder)]
                   for folder in (first, second))
    assert len(rows) >= 3 and rows == again, "the same checkpoint, the same worlds and values"
    rows = metric_rows(first)
    for row in rows:
        assert float(row["searched_decisions"]) > 0
        assert 0 < float(row["searched_advantage_error"]) < float(row["searched_value_error"]) < 1
        assert float(row["search_seconds"]) > 0


@pytest.mark.slow
def test_a_short_searched_run_on_mini_comes_within_0_001_of_an_equilibrium(tmp_path):
    config, _ = config_from_args(["--config", "searched_2p", "--rules", "mini", "--run-dir", str(tmp_path),
                                  "--total-steps", "240000", "--eval-interval", "0", "--final-eval-games", "200",
                                  "--no-progress"])
    final = train(config)
    nash_conv = {row["nash_conv"] for row in final["evaluation"]}
    assert len(nash_conv) == 1 and nash_conv.pop() <= 0.001


@pytest.mark.parametrize("settings, message", [
    (dict(search_worlds=0), "search_worlds must be"),
    (dict(search_worlds=1025), "search_worlds must be"),
    (dict(search_share=0.0), "search_share is the share of decisions searched, in (0, 1]: got 0.0"),
    (dict(search_share=1.5), "search_share must be"),
    (dict(search_cut=3, vf_coef=0.0), "search_cut=3 stands the critic's estimate"),
    (dict(num_players=(3,)), "searched_mirror searches two-seat tables"),
    (dict(scripted_weight=0.5), "pure self-play"),
    (dict(past_self_weight=0.5), "pure self-play"),
    (dict(every_seat="off"), "pure self-play"),
    (dict(ray="local"), "leave ray out"),
    (dict(mirror_coef=0.0), "mirror_coef must be above 0"),
])
def test_bad_search_settings_are_refused_before_any_work(settings, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        TrainConfig.of(**dict(dict(policy_objective="searched_mirror", mirror_coef=1.0), **settings))


@pytest.mark.parametrize("name, value", [("search_worlds", 8), ("search_share", 0.5), ("search_cut", 2)])
def test_a_search_setting_without_the_search_is_refused(name, value):
    with pytest.raises(ValueError, match=f"{name}={value} sets the search of policy_objective=searched_mirror"):
        TrainConfig.of(**{name: value})


@pytest.mark.parametrize("flags, said", [(["--search-worlds", "0"], "search_worlds"),
                                         (["--search-share", "1.5"], "search_share"),
                                         (["--search-cut", "4", "--vf-coef", "0"], "search_cut=4")])
def test_the_command_refuses_a_bad_search_in_one_line_and_creates_nothing(tmp_path, capsys, flags, said):
    from rouba_training.cli import main as train_main

    run = tmp_path / "run"
    assert train_main(["--config", "searched_2p", "--rules", "mini", "--run-dir", str(run), *flags]) == 2
    error = capsys.readouterr().err
    assert said in error and error.count("\n") == 1, error
    assert not run.exists()
