"""The exact solver at three and four seats: the decks laid out for them, CFR+, the command, the trainer's column."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rouba_env.cli import exploitability as command
from rouba_env.solve.exploitability import CFRPlus, best_response, exploitability, nash_conv
from rouba_env.solve.game_tree import GameTree, check_solvable
from rouba_env.rules.config import preset


@pytest.mark.parametrize("name, seats, deals, histories, infosets_per_seat", [
    ("mini3", 3, 70, 1678, [51, 78, 96]),
    ("mini4", 4, 70, 2902, [33, 56, 82, 92]),
])
def test_the_seat_presets_deal_their_tables(name, seats, deals, histories, infosets_per_seat):
    """The counts docs/solving.md gives; ``mini3`` is ``mini``'s deck at three seats."""
    tree = GameTree(preset(name))
    assert tree.num_players == seats
    summary = tree.summary()
    assert (summary["deals"], summary["histories"], summary["information_sets_per_seat"]) == (
        deals, histories, infosets_per_seat)
    if name == "mini3":
        assert GameTree(preset("mini", num_players=3)).summary() == summary


def test_small3_is_solvable_and_seats_three():
    rules = preset("small3")
    assert rules.num_players == 3 and rules.total_cards == 12 and check_solvable(rules) == 34_650


@pytest.mark.parametrize("name", ["mini3", "mini4"])
def test_cfr_plus_runs_at_more_seats_and_its_nash_conv_falls(name):
    """Nothing guarantees that CFR+ reaches a Nash equilibrium past two seats; on these decks it does (the
    figure is measured, so the test allows a margin over docs/solving.md's 1e-6 at 1,000 iterations)."""
    tree = GameTree(preset(name))
    solver = CFRPlus(tree)
    for iteration in range(1, 101):
        solver.iterate(measure=iteration in (10, 100))
    (_, early), (_, late) = solver.history
    assert late < early and late < 1e-3 < nash_conv(tree, tree.uniform_strategy())
    result = exploitability(tree, solver.solution())
    assert len(result.gains) == tree.num_players and min(result.gains) >= -1e-12
    assert sum(result.values) == pytest.approx(0.0, abs=1e-12), "the margin reward is zero-sum at every table"


def test_a_best_response_at_three_seats_answers_both_others():
    """Seat 2's best response against the uniform profile gains, and playing it changes nothing for a seat
    whose own strategy it keeps."""
    tree = GameTree(preset("mini3"))
    uniform = tree.uniform_strategy()
    value, profile = best_response(tree, uniform, 2)
    assert value > exploitability(tree, uniform).values[2]
    mine = tree.infoset_seat[tree.slot_infoset] == 2
    assert np.array_equal(profile[~mine], uniform[~mine])
    assert set(np.unique(profile[mine])) <= {0.0, 1.0}


def test_the_command_prints_every_seat(tmp_path, capsys):
    out = tmp_path / "mini3.json"
    argv = ["--rules", "mini3", "--players", "random", "heuristic", "--cfr", "20", "--json", str(out), "--no-progress"]
    assert command.main(argv) == 0
    printed = capsys.readouterr()
    assert "mini3, 3 seats: 70 deals, 1,678 histories, 225 information sets" in printed.err
    assert printed.out.splitlines()[0].split()[:7] == ["player", "NashConv", "value", "s0", "BR", "s0", "BR"]
    assert "BR s2" in printed.out and "BR s3" not in printed.out
    data = json.loads(out.read_text())
    rows = data["players"]
    assert data["num_players"] == 3 and data["rules"] == "mini3"
    assert [len(row["best_response_values"]) for row in rows] == [3, 3, 3]
    assert rows[0]["nash_conv"] == pytest.approx(0.282142857, abs=1e-8)
    assert command.main(["--rules", "mini", "--num-players", "3", "--players", "random", "--no-progress"]) == 0
    assert "mini, 3 seats: 70 deals, 1,678 histories" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--rules", "mini3", "--num-players", "9", "--players", "random"], "--num-players: invalid choice: 9"),
    (["--rules", "mini3", "--num-players", "1", "--players", "random"], "--num-players: invalid choice: 1"),
])
def test_the_command_refuses_a_table_outside_two_to_eight(argv, message, capsys):
    with pytest.raises(SystemExit):
        command.main(argv)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--rules", "standard", "--num-players", "3", "--players", "random"], "distinct deck orders, more than"),
    (["--rules", "mini", "--num-players", "4", "--players", "random"], "the first deal (hands plus table) needs 10"),
    (["--rules", "mini", "--num-players", "5", "--players", "random"], "the exact solutions seat 2..4 players"),
])
def test_the_command_refuses_a_deck_in_one_line(argv, message, capsys):
    assert command.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_the_lbr_alone_plays_five_seats_and_compares_with_the_solver_only_in_its_units(tmp_path, capsys):
    """Past four seats the local best response still plays (no tree); under another reward than the margin its
    bound is not set beside the solver's value, which is in other units; an estimated value is called so."""
    out = tmp_path / "five.json"
    assert command.main(["--rules", "mini", "--num-players", "5", "--players", "random", "--lbr", "10",
                         "--lbr-worlds", "1", "--json", str(out), "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert data["num_players"] == 5 and "tree" not in data and data["lbr"][0]["games"] == 10
    capsys.readouterr()
    assert command.main(["--rules", "mini3", "--players", "random", "--reward", "outcome", "--lbr", "6",
                         "--lbr-worlds", "1", "--no-progress"]) == 0
    assert "exploitability (NashConv" not in capsys.readouterr().out
    assert command.main(["--rules", "mini3", "--players", "random", "--lbr", "6", "--lbr-worlds", "1",
                         "--no-progress"]) == 0
    assert "; exact exploitability (NashConv / 3)" in capsys.readouterr().out


def test_magnetic_mirror_descent_runs_at_three_seats_and_approaches_nash():
    from rouba_env.solve.exploitability import MagneticMirrorDescent

    tree = GameTree(preset("mini3"))
    solver = MagneticMirrorDescent(tree, temperature=0.05, step_size=1.0, magnet_rate=0.1)
    for step in range(1, 201):
        solver.iterate(measure=step in (1, 200))
    (_, first), (_, last) = solver.history
    assert last < first / 10, solver.history


@pytest.mark.parametrize("spec", ["greedy", "heuristic"])
def test_the_scripted_players_probabilities_are_their_play_at_four_seats(spec):
    """On ``mini4`` two moves can be worth the same value reached by two sums (a third each way): a tie that
    ``act`` breaks at random must be a tie in ``action_probabilities`` too, or the exact NashConv and the local best
    response's posterior read another player than the one that plays."""
    from rouba_env.players.registry import make_policy
    from rouba_env.solve.exploitability import policy_strategy
    from tests.solve.test_exploitability import MovesOnly

    tree = GameTree(preset("mini4"))
    player = make_policy(spec, tree.rules)
    exact, _ = policy_strategy(tree, player)
    sampled, _ = policy_strategy(tree, MovesOnly(player), samples=400, rng=np.random.default_rng(0))
    assert np.abs(sampled - exact).max() < 0.1, "the distribution act_batch samples from"
