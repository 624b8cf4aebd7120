"""A refused run changes nothing in its folder: the Ray address is checked and joined before the folder is
touched, and what Ray says reaches the user as Ray's words."""

import re
from pathlib import Path

import pytest

from rouba_env.evaluation.distributed import join_cluster, ray_address_problem
from rouba_training.cli import main as train_main
from rouba_training.config import TrainConfig
from tests.training.test_train import TINY_FLAGS


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("address", ["127.0.0.1:1", "foo", "host:0", "host:70000", "a b:6379"])
def test_a_bad_ray_address_keeps_every_file_of_an_earlier_run_and_creates_no_folder(tmp_path, capsys, address):
    run = tmp_path / "run"
    assert train_main(["--run-dir", str(run), "--rules", "mini", "--total-steps", "100", *TINY_FLAGS]) == 0
    before = folder_bytes(run)
    assert {"checkpoint.pt", "metrics.csv"} <= set(before)
    capsys.readouterr()
    assert train_main(["--run-dir", str(run), "--overwrite", "--rules", "mini", "--ray", address, *TINY_FLAGS]) == 2
    error = capsys.readouterr().err
    assert address.split(":")[0] in error and error.count("\n") == 1, error
    assert folder_bytes(run) == before, "nothing deleted, nothing written"
    fresh = tmp_path / "fresh"
    assert train_main(["--run-dir", str(fresh), "--rules", "mini", "--ray", address, *TINY_FLAGS]) == 2
    assert not fresh.exists(), "no empty run folder"


@pytest.mark.parametrize("address, allowed", [("auto", True), ("127.0.0.1:6379", True), ("[::1]:6379", True),
                                              ("foo", False), ("host:", False), (":6379", False),
                                              ("host:65536", False), ("host:port", False)])
def test_a_ray_address_is_spelled_auto_or_host_and_port(address, allowed):
    assert (ray_address_problem(address) is None) == allowed
    if allowed:
        assert TrainConfig.of(ray=address).scale_out.ray == address
    else:
        with pytest.raises(ValueError, match="ray must be local, auto or HOST:PORT"):
            TrainConfig.of(ray=address)


def test_a_cluster_that_is_not_ray_is_reported_in_rays_words_not_as_a_file():
    class NotRay:
        @staticmethod
        def init(**options):
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379 after 30 s")

    with pytest.raises(RuntimeError, match="cannot join a Ray cluster at h:1: Ray said: Failed to connect"):
        join_cluster(NotRay, "h:1")


def test_flags_that_would_do_nothing_are_refused_with_the_flag_they_need(tmp_path, capsys, monkeypatch):
    with pytest.raises(ValueError, match="best_response_temperature=2.0 softens an exploiter's network start: it "
                                         "needs best_response"):
        TrainConfig.of(best_response_temperature=2.0)
    with pytest.raises(ValueError, match="best_response_start='fresh' starts from no network"):
        TrainConfig.of(best_response="random", best_response_start="fresh", best_response_temperature=2.0)
    assert train_main(["--config", "pool_2p", "--config", "rank_2p", "--run-dir", str(tmp_path / "r")]) == 2
    assert "--config is given 2 times" in capsys.readouterr().err and not (tmp_path / "r").exists()
    from rouba_env.cli.exploitability import main as exploitability_main

    for flags in (["--lbr-worlds", "16"], ["--lbr-rollout", "random"]):
        with pytest.raises(SystemExit):
            exploitability_main(["--rules", "mini", "--players", "heuristic", *flags])
        assert f"{flags[0]} sets the local best response: it needs --lbr GAMES" in capsys.readouterr().err


def test_a_shipped_config_name_means_the_shipped_file_and_a_path_a_local_one(tmp_path, monkeypatch):
    from rouba_training.cli import SHIPPED_CONFIGS, config_path, load_toml

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pool_2p").write_text('total_steps = 5\n')
    assert config_path("pool_2p") == SHIPPED_CONFIGS / "pool_2p.toml"
    assert load_toml("pool_2p")["scripted_weight"] == 0.6
    assert load_toml("./pool_2p") == {"total_steps": 5}


@pytest.mark.parametrize("games, problem", [([10**30], "got [1000000000000000000000000000000]"),
                                            ([1.0], "got [1.0]"), ([True], "got [True]"), ([7], "got 7")])
def test_the_tables_refusals_name_the_value_given(games, problem):
    from rouba_env import preset
    from rouba_env.table import Table

    table = Table(preset("mini"), 2)
    with pytest.raises(ValueError, match=re.escape(problem)):
        table.start(games, [1])
    with pytest.raises(ValueError, match=re.escape("got [18446744073709551616]")):
        table.start([0], [2**64])


@pytest.mark.parametrize("seat", [5, -1, 10**30, 1.5])
def test_a_single_games_mask_refuses_a_seat_outside_the_table(seat):
    from rouba_env import preset
    from rouba_env.single_game import SingleGame

    game = SingleGame(preset("mini"))
    game.start_deal(1)
    with pytest.raises(ValueError, match=re.escape(f"seat {seat!r} out of range 0..1")):
        game.mask(seat)


@pytest.mark.parametrize("total_steps, batch, interval", [(400_000, 30_000, 10), (1000, 170, 10), (4000, 1000, 2),
                                                           (10_000, 2_400, 10)])
def test_evaluations_scale_with_a_short_budget(total_steps, batch, interval):
    config = TrainConfig.of(total_steps=total_steps, eval_interval=interval)
    steps, evaluated = 0, 0
    for update in range(1, 10_000):
        if steps >= total_steps:
            break
        evaluated += config.evaluation_due(update, steps, steps + batch)
        steps += batch
    assert evaluated >= min(4, update - 1), (evaluated, update - 1)
    assert not TrainConfig.of(total_steps=total_steps, eval_interval=0).evaluation_due(10, 0, total_steps)


def test_the_default_runs_curve_is_every_tenth_update_alone():
    config = TrainConfig.of()
    batch = 1024 * 28
    due = [update for update in range(1, 200) if config.evaluation_due(update, (update - 1) * batch, update * batch)]
    assert due == list(range(10, 200, 10))


def test_a_short_run_evaluates_at_least_four_times(tmp_path):
    assert train_main(["--run-dir", str(tmp_path), "--rules", "mini", "--total-steps", "1000", *TINY_FLAGS,
                       "--eval-interval", "10", "--eval-games", "4"]) == 0
    import csv

    with (tmp_path / "metrics.csv").open() as stream:
        updates = len(list(csv.DictReader(stream)))
    with (tmp_path / "eval.csv").open() as stream:
        evaluated = {row["update"] for row in csv.DictReader(stream)}
    assert updates >= 4 and len(evaluated) >= 4, (updates, evaluated)


def test_a_config_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    import os

    from rouba_training.cli import load_toml

    fifo = tmp_path / "settings.toml"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is not a regular file"):
        load_toml(str(fifo))  # opening a FIFO would wait for a writer forever
    with pytest.raises(ValueError, match="is not a regular file"):
        load_toml(str(tmp_path))


@pytest.mark.parametrize("field", ["best_response", "scripted_opponents", "eval_opponents"])
def test_a_player_spec_with_spaces_around_it_is_refused(field):
    value = " random" if field == "best_response" else (" random",)
    with pytest.raises(ValueError, match=re.escape(f"{field}: ' random' has spaces around it; write the spec as "
                                                   f"'random'")):
        TrainConfig.of(**{field: value})


def test_a_resumed_exploiter_refuses_another_target_naming_the_target(tmp_path, capsys):
    run = tmp_path / "exploiter"
    flags = ["--run-dir", str(run), "--rules", "mini", "--total-steps", "100", "--final-eval-games", "0",
             "--num-envs", "16", "--rollout-steps", "8", "--no-progress"]
    assert train_main([*flags, "--best-response", "random"]) == 0
    capsys.readouterr()
    before = folder_bytes(run)
    assert train_main([*flags, "--resume", "--best-response", "greedy", "--total-steps", "200"]) == 2
    error = capsys.readouterr().err
    assert "exploiter of best_response='random'" in error and "scripted_opponents" not in error, error
    assert folder_bytes(run) == before
