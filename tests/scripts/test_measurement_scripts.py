"""The measurement scripts behind results figures run, with tiny budgets (no timing asserts)."""

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # each test starts a process


def test_steal_rate_counts_chances_and_steals():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "steal_rate.py"), "--games", "2",
                             "--players", "greedy"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.startswith("greedy: stole "), result.stderr


def test_bench_baseline_compares_this_tree_with_a_commit(tmp_path):
    out = tmp_path / "baseline.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_baseline.py"), "--ref", "HEAD",
                             "--repeats", "1", "--env-steps", "200", "--steps", "20000", "--baseline-batch", "256",
                             "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ratio" in result.stdout and out.is_file()


def test_bench_baseline_sections_give_each_row_its_ratio_and_noise():
    """The sections mode on two copies of this tree (no second compilation): each row of the section, per
    tree, with a ratio and the rounds' spread."""
    import argparse

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from bench_baseline import compare_sections
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    args = argparse.Namespace(sections=["aec_raw"], repeats=2, cpu=sorted(os.sched_getaffinity(0))[0], quick=True)
    rows = compare_sections(args, {"baseline": str(ROOT), "current": str(ROOT)})
    assert rows and all(row["variant"].startswith("aec_raw: ") for row in rows)
    for row in rows:
        assert row["ratio"] > 0 and set(row["noise"]) == {"baseline", "current"}
        assert len(row["runs"]["current"]) == len(row["runs"]["baseline"]) == 2


def test_exact_table_gives_each_recipe_its_median_and_range_over_seeds(tmp_path):
    """Three seeds' runs on mini, measured near 1M steps: the median and range; a missing deck says so."""
    header = "update,learner_steps,opponent,games,win_rate,kind,nash_conv\n"
    for seed, value in (("", 0.004), ("_seed2", 0.001), ("_seed3", 0.009)):
        run = tmp_path / "runs" / f"mini_default{seed}"
        run.mkdir(parents=True)
        (run / "eval.csv").write_text(header + f"40,1010000,random,200,0.5,periodic,{value}\n"
                                      f"40,1010000,greedy,200,0.5,periodic,{value}\n"
                                      f"80,2000000,random,200,0.5,periodic,0.5\n")
    # the first seed's 10M run, still under way, has measured 1M and 3M: it counts there, the shorter run elsewhere
    run = tmp_path / "runs" / "mini_default_10M"
    run.mkdir()
    (run / "eval.csv").write_text(header + "40,1000000,random,200,0.5,periodic,0.002\n"
                                  "120,3000000,random,200,0.5,periodic,0.0005\n")
    (tmp_path / "solver_small.json").write_text(json.dumps({"cfr": [{"iterations": 100, "nash_conv": 0.00094}]}))
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "exact_table.py"), "--results", str(tmp_path)],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in result.stdout.splitlines()}
    assert rows["default recipe, 1M steps"][0] == "0.0020 [0.0010, 0.0090] (3 seeds)"
    assert rows["default recipe, 3M steps"][0] == "0.00050 (1 seed)"  # the others' 2M lies outside 3M's tolerance
    assert rows["default recipe, 10M steps"][0] == "not run"
    assert rows["CFR+, 100 iterations"][1] == "0.000940"
    assert rows["`random`"][0] == "not run"


@pytest.mark.parametrize("policy, leaf_value", [("2p-0.3", "value head"), ("2p", "privileged value")])
def test_value_ranking_scores_each_estimator(tmp_path, policy, leaf_value):
    """A shared critic's checkpoint is ranked by its value head, a privileged critic's by that critic."""
    out = tmp_path / "ranking.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "value_ranking.py"), "--policy", policy,
                             "--positions", "2", "--samples", "4", "--truth-samples", "8", "--json", str(out)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "play-outs to the end" in result.stdout and leaf_value in result.stdout and out.is_file()


def test_hand_model_loss_compares_with_card_counting(tmp_path):
    out = tmp_path / "hands.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "hand_model_loss.py"), "--run-dir",
                             str(ROOT / "scripts" / "results" / "runs" / "try3_hand"), "--games", "1", "--json",
                             str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "(card counting)" in result.stdout and out.is_file()


def test_exploitability_timing_times_each_command(tmp_path):
    out = tmp_path / "timing.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "exploitability_timing.py"), "--rules", "mini",
                             "--json", str(out)], capture_output=True, text=True,
                            timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(json.loads(out.read_text())["rows"]) == 4


def test_evaluate_shipped_measures_every_cell_of_the_table(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "evaluate_shipped.py"), "--games", "2",
                             "--headline-games", "2", "--out", str(tmp_path)], capture_output=True, text=True,
                            timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(list(tmp_path.glob("*.json"))) == 16 and "| `mixed` | 4 players |" in result.stdout
    assert "`2p` against `2p-0.3`" in result.stdout


def test_a_vote_of_one_network_with_itself_plays_as_that_network(tmp_path):
    import rouba_env

    out = tmp_path / "vote.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "ensemble_strength.py"), "--networks", "2p", "2p",
                             "--games", "20", "--json", str(out)], capture_output=True, text=True, timeout=300,
                            cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    voted = json.loads(out.read_text())["results"][0]
    alone = rouba_env.evaluate(["checkpoint:2p", "heuristic"], games=20, seed=0).players[0]
    assert voted["label"] == "policy:vote(2p + 2p)"
    assert (voted["wins"], voted["mean_score"]) == (alone.wins, alone.mean_score)
    refused = subprocess.run([sys.executable, str(ROOT / "scripts" / "ensemble_strength.py"), "--networks", "2p"],
                             capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert refused.returncode == 2 and "at least two checkpoints" in refused.stderr


def test_ab_train_speed_times_the_default_recipe():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "ab_train_speed.py"), "--steps", "3000",
                             "--warmup-steps", "500", "--repeats", "1", "--num-envs", "32"], capture_output=True, text=True,
                            timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "learner steps/s" in result.stdout and "tree:" in result.stdout
    refused = subprocess.run([sys.executable, str(ROOT / "scripts" / "ab_train_speed.py"), "--repeats", "0"],
                             capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert refused.returncode == 2 and "--repeats must be at least 1, got 0" in refused.stderr


@pytest.mark.parametrize("argv, message", [
    (["--rules", "poker"], "unknown rules preset 'poker'"),
    (["--players", "heuristic", "wizard"], "unknown player 'wizard'"),
    (["--seed", "-1"], "--seed must be in 0.."),
    (["--games", str(10**12)], "--games must be in 2..1,000,000"),
    (["--num-players", "9"], "--num-players must be within 2..8"),
    (["--json", "/proc/no/such/folder/x.json"], "cannot write"),
])
def test_head_to_head_seats_refuses_bad_arguments_in_one_line(argv, message):
    players = [] if "--players" in argv else ["--players", "heuristic", "random"]
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "head_to_head_seats.py"), *players, *argv,
                             "--num-players", "2"] if "--num-players" not in argv else
                            [sys.executable, str(ROOT / "scripts" / "head_to_head_seats.py"), *players, *argv],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_head_to_head_seats_pools_both_lineups(tmp_path):
    """At 3 seats both lineups play (2 seats, then 1); at 2 seats one does; the pooled share is their
    games' mean."""
    out = tmp_path / "h2h.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "head_to_head_seats.py"), "--players",
                             "heuristic", "random", "--num-players", "2", "3", "--games", "12", "--json", str(out)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    two, three = json.loads(out.read_text())["results"]
    assert list(two["lineups"]) == ["forward"] and two["lineups"]["forward"]["seats"] == 1
    assert [lineup["seats"] for lineup in three["lineups"].values()] == [2, 1]
    pooled = sum(lineup["win_rate"] * lineup["games"] for lineup in three["lineups"].values()) / three["games"]
    assert three["win_rate"] == pytest.approx(pooled) and three["win_low"] <= three["win_rate"] <= three["win_high"]
    import rouba_env  # at 2 seats it is the ordinary head to head
    alone = rouba_env.evaluate(["heuristic", "random"], games=12, num_players=2, seed=0)
    assert two["win_rate"] == pytest.approx(alone.players[0].win_rate) and two["games"] == alone.games


def test_the_exploiter_table_lists_every_run_beside_the_exact_value():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "exploiter_table.py")], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    solved = {line.split("|")[1].strip(): line for line in lines if line.startswith("| mini_") or
              line.startswith("| small_")}
    assert "| 0.0741 |" in solved["mini_random"]  # random's exact exploitability on mini, from the run's own file
    runs = {path.parent.name for path in (ROOT / "scripts" / "results" / "abr").glob("*/final_eval.json")}
    assert runs <= {line.split("|")[1].strip() for line in lines if line.startswith("| ")}


def test_move_mix_counts_every_move_by_its_kind(tmp_path):
    out = tmp_path / "mix.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "move_mix.py"), "--rules", "small", "medium",
                             "--players", "random", "--games", "50", "--json", str(out)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert [row["rules"] for row in rows] == ["small", "medium"]
    assert [row["moves_per_game"] for row in rows] == [8.0, 10.0], "every card dealt is played once"
    assert [row["deals_per_game"] for row in rows] == [2.0, 3.0]
    assert all(abs(sum(row["shares"].values()) - 1) < 1e-12 for row in rows)


def test_solver_scale_measures_the_tree_cfr_and_mmd(tmp_path):
    out = tmp_path / "solver.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "solver_scale.py"), "--rules", "mini",
                             "--cfr", "20", "--mmd", "10", "--json", str(out)], capture_output=True, text=True,
                            timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["tree"]["information_sets"] == 215
    assert [point["iterations"] for point in report["cfr"]] == [1, 2, 5, 10, 20]
    assert report["cfr"][-1]["nash_conv"] < report["cfr"][0]["nash_conv"]
    assert [point["iterations"] for point in report["mmd"]] == [1, 2, 5, 10]
    assert report["mmd"][-1]["nash_conv"] < report["mmd"][0]["nash_conv"]


def test_refusal_time_runs_every_bad_call_and_checks_it_is_refused(tmp_path):
    out = tmp_path / "refusal.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "refusal_time.py"), "--repeats", "1", "--json",
                             str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 5 and all(len(row["runs"]) == 1 for row in rows.values())


def test_capacity_check_fits_the_network_to_cfr_follows_mirror_descent_and_breaks_a_policy_down_by_depth(tmp_path):
    out = tmp_path / "capacity.json"
    policy = ROOT / "scripts" / "results" / "runs" / "mini_default" / "policy"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "capacity_check.py"), "--rules", "mini",
                             "--cfr", "100", "--distill", "--epochs", "200", "--batch", "32", "--every", "10",
                             "--exact-pg", "--exact-fit", "--pg-steps", "30", "--policy", str(policy),
                             "--json", str(out)],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["cfr_nash_conv"] < 1e-3
    distill = [point["nash_conv"] for point in report["distill"]["curve"]]
    assert [point["epoch"] for point in report["distill"]["curve"]] == list(range(10, 201, 10))
    assert distill[-1] < 0.01, "the network holds mini's equilibrium once fitted to it"
    exact = [point["nash_conv"] for point in report["exact_pg"]["curve"]]
    assert [point["step"] for point in report["exact_pg"]["curve"]] == [10, 20, 30]
    assert exact[-1] < 0.02 < exact[0], "mirror descent on exact values falls from the fresh network's play"
    fitted = report["exact_fit"]["curve"]
    assert [point["step"] for point in fitted] == [10, 20, 30]
    assert fitted[-1]["nash_conv"] < 0.01 < fitted[0]["nash_conv"], "the fitted mirror step falls as the tabular one"
    assert fitted[-1]["target_nash_conv"] < fitted[0]["target_nash_conv"], "each step's closed-form target improves"
    assert all(point["target_nash_conv"] < 1.5 * point["nash_conv"] for point in fitted), "the fit follows its target"
    layers = report["breakdown"]["layers"]
    assert layers and all(row["choice_sets"] > 0 for row in layers)
    assert all(row["equilibrium_here"] >= 0 and row["network_only_here"] >= 0 for row in layers)
    reach = report["breakdown"]["reach"]
    sets, samples = [row["set_share"] for row in reach], [row["sample_share"] for row in reach]
    assert sets == sorted(sets) and samples == sorted(samples) and 0 <= samples[0] and samples[-1] <= 1
    assert all(0 <= row["equilibrium_there"] for row in reach)
    assert reach[-1]["choice_sets"] > reach[0]["choice_sets"], "a higher threshold takes in more sets"


def test_capacity_checks_fitted_mirror_step_on_noisy_values_stays_above_the_exact_ones(tmp_path):
    curves = {}
    for noise, errors, sampled in ((0.0, "fresh", 0), (1.0, "fresh", 0), (1.0, "fixed", 0), (0.0, "fresh", 3)):
        out = tmp_path / f"noise{noise}{errors}{sampled}.json"
        result = subprocess.run([sys.executable, str(ROOT / "scripts" / "capacity_check.py"), "--rules", "mini",
                                 "--cfr", "1", "--exact-fit", "--pg-steps", "30", "--every", "30",
                                 "--pg-value-noise", str(noise), "--pg-value-errors", errors,
                                 "--pg-sampled-decisions", str(sampled), "--json", str(out)],
                                capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert result.returncode == 0, result.stderr[-2000:]
        report = json.loads(out.read_text())["exact_fit"]
        assert (report["value_noise"], report["value_errors"], report["sampled_decisions"]) == (noise, errors, sampled)
        assert 0 < report["choice_share"] < 1
        curves[noise, errors, sampled] = report["curve"][-1]["nash_conv"]
    exact = curves[0.0, "fresh", 0]
    assert exact < 0.01 < min(curves[1.0, "fresh", 0], curves[1.0, "fixed", 0]), curves
    assert curves[1.0, "fresh", 0] != curves[1.0, "fixed", 0], "fixed errors are not the fresh ones"
    assert curves[0.0, "fresh", 3] > 2 * exact, "three decisions a step teach less than every set"
    refusals = {("--pg-value-noise", "-1"): "--pg-value-noise must be at least 0, got -1.0",
                ("--pg-sampled-decisions", "-1"): "--pg-sampled-decisions must be at least 0, got -1",
                ("--pg-value-noise", "0.1"): "--pg-value-noise changes --exact-fit only",
                ("--pg-sampled-decisions", "10"): "--pg-sampled-decisions changes --exact-fit only",
                ("--exact-fit", "--pg-value-errors", "fixed"): "--pg-value-errors fixed needs a --pg-value-noise above 0"}
    for flags, message in refusals.items():
        refused = subprocess.run([sys.executable, str(ROOT / "scripts" / "capacity_check.py"), *flags],
                                 capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert refused.returncode == 2 and message in refused.stderr, (flags, refused.stderr[-500:])


def test_capacity_checks_value_errors_are_fresh_each_step_or_fixed_for_the_run():
    spec = importlib.util.spec_from_file_location("capacity_check", ROOT / "scripts" / "capacity_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fresh = module.ValueErrors(500, scale=0.2, fixed=False, seed=3)
    fixed = module.ValueErrors(500, scale=0.2, fixed=True, seed=3)
    first, second = fresh.draw(), fresh.draw()
    assert not np.array_equal(first, second) and abs(first.std() - 0.2) < 0.03
    assert np.array_equal(fixed.draw(), fixed.draw()) and abs(fixed.draw().std() - 0.2) < 0.03
    assert not np.array_equal(module.ValueErrors(500, scale=0.2, fixed=True, seed=4).draw(), fixed.draw())
    assert not module.ValueErrors(7, scale=0.0, fixed=False, seed=3).draw().any()


def test_capacity_check_refuses_a_share_outside_zero_to_one():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "capacity_check.py"), "--uniform-share", "1.5"],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 2 and "--uniform-share must be in [0, 1], got 1.5" in result.stderr


def test_capacity_check_scores_a_mirror_fit_runs_action_values_and_refuses_a_run_without_them(tmp_path):
    tiny = ["--rules", "mini", "--total-steps", "3000", "--num-envs", "32", "--rollout-steps", "8",
            "--minibatch-size", "256", "--eval-interval", "0", "--final-eval-games", "0", "--no-progress"]
    fit = ["--policy-objective", "mirror_fit", "--mirror-coef", "1"]
    runs = {"fit": fit, "fit_privileged": [*fit, "--critic", "privileged"], "clipped": []}
    for name, extra in runs.items():
        trained = subprocess.run([sys.executable, "-m", "rouba_training.cli", "--run-dir", str(tmp_path / name),
                                  *tiny, *extra], capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert trained.returncode == 0, trained.stderr[-2000:]
    out = tmp_path / "values.json"
    command = [sys.executable, str(ROOT / "scripts" / "capacity_check.py"), "--rules", "mini", "--cfr", "1"]
    for name in ("fit", "fit_privileged"):  # the actor's head, read with or without a critic beside it
        result = subprocess.run([*command, "--action-values", str(tmp_path / name), "--json", str(out)],
                                capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert result.returncode == 0, result.stderr[-2000:]
        report = json.loads(out.read_text())["action_values"]
        assert report["learner_steps"] >= 3000 and report["nash_conv"] > 0
        assert -1 <= report["advantage_correlation"] <= 1 and math.isfinite(report["advantage_slope"])
        assert report["exact_advantage_std"] > 0 and report["head_advantage_std"] > 0
        spread = report["exact_advantage_std"], report["head_advantage_std"]
        assert abs(spread[0] - spread[1]) <= report["advantage_error_std"] <= sum(spread), "the difference's spread"
        assert report["state_value_error"] > 0
    refused = subprocess.run([*command, "--action-values", str(tmp_path / "clipped")],
                             capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert refused.returncode != 0 and "has no action-value head" in refused.stderr


def test_capacity_check_compares_a_searched_runs_values_and_update_with_the_exact_ones(tmp_path):
    """On mini, early in a run: the searched advantages err by about what the exact ones measure, and one update
    of the run moves its policy towards the exact closed-form step; the run's folder is left as it was."""
    from rouba_training.cli import main as train_main

    run = tmp_path / "run"
    assert train_main(["--config", "searched_2p", "--rules", "mini", "--total-steps", "8000", "--run-dir", str(run),
                       "--final-eval-games", "0", "--eval-interval", "0", "--no-progress"]) == 0
    before = {path.name: path.read_bytes() for path in run.rglob("*") if path.is_file()}
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "capacity_check.py"), "--rules", "mini",
                             "--cfr", "1", "--searched-values", str(run), "--json", str(tmp_path / "out.json")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    checked = json.loads((tmp_path / "out.json").read_text())["searched_values"]
    assert checked["compared"] > 0 and 0 < checked["advantage_error_rms"] < 0.5
    assert checked["kl_to_exact_step_after"] < checked["kl_to_exact_step_before"]
    assert {path.name: path.read_bytes() for path in run.rglob("*") if path.is_file()} == before
