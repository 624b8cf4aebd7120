"""The trainer's inputs checked at the door: settings from Python, TOML, flags and resume files, one set of limits."""

from pathlib import Path

import pytest
import torch

from rouba_env.players.checkpoint import MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH
from rouba_training.cli import main as train_main
from rouba_training.cli import load_toml
from rouba_training.config import (
    DECK, DECK_DEFAULTS, DEFAULT, DEFAULTS, EXPLOITER, EXPLOITER_UNREGULARIZED, GIVEN, LIMITS, PROBE_SETTINGS, START,
    TrainConfig, exploiter_defaults, resolve_start,
)
from tests.training.test_train import TINY_FLAGS

BAD_SETTINGS = [
    ("rules", "nope", "rules: unknown rules preset 'nope'"),
    ("scripted_opponents", ("nope",), "scripted_opponents: unknown player 'nope'"),
    ("best_response", "nope", "best_response: unknown player 'nope'"),
    ("num_players", (2, 2), "each table size once"),
    ("num_players", (9,), "table sizes in 2..8"),
    ("seed", -1, "seed must be in 0.."),
    ("seed", 2**70, "seed must be in 0.."),
    ("seed", 10**5000, "an integer of about 5001 digits"),
    ("total_steps", 10**30, "total_steps must be in 1..1000000000000"),
    ("num_envs", 10**9, "num_envs must be in 1..16384"),
    ("num_envs", 50_000_000, "num_envs must be in 1..16384"),
    ("pool_size", 10**9, "pool_size must be in 1..256"),
    ("update_epochs", 10**6, "update_epochs must be in 1..100"),
    ("run_dir", "", "run_dir must name a folder"),
    ("run_dir", "  ", "run_dir must name a folder"),
    ("hidden_sizes", (10**6, 10**6), f"each in 1..{MAX_HIDDEN_WIDTH}"),
    ("hidden_sizes", (5000,), f"each in 1..{MAX_HIDDEN_WIDTH}"),
    ("hidden_sizes", (8,) * (MAX_HIDDEN_LAYERS + 1), f"1..{MAX_HIDDEN_LAYERS} widths"),
    ("learning_rate", float("nan"), "learning_rate must be a finite number"),
    ("minibatch_size", True, "minibatch_size must be int"),
    ("eval_games", 0, "eval_games must be at least 1"),
    ("eval_opponents", (), "eval_opponents is empty, but evaluations are asked for"),
    ("device", "tpu", "device must be cpu or cuda"),
]


@pytest.mark.parametrize("field,value,message", BAD_SETTINGS, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(BAD_SETTINGS)])
def test_every_bad_setting_is_refused_when_the_config_is_made(field, value, message):
    extra = {"architecture": "mlp"} if field == "hidden_sizes" else {}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        TrainConfig.of(**{field: value, **extra})


def test_the_limits_hold_the_defaults_and_the_documented_runs():
    default = TrainConfig()
    for name, (low, high) in LIMITS.items():
        assert low <= default.get(name) <= high, name
    TrainConfig.of(num_envs=LIMITS["num_envs"][1], architecture="mlp", hidden_sizes=(MAX_HIDDEN_WIDTH,) * MAX_HIDDEN_LAYERS)


def test_a_toml_config_passes_the_same_checks(tmp_path):
    path = tmp_path / "run.toml"
    for value in ("99999999999999999999", "50000000"):
        path.write_text(f"num_envs = {value}\n")
        with pytest.raises(ValueError, match="num_envs must be in 1..16384"):
            TrainConfig.of(**load_toml(path))
    path.write_text('ray = "10.0.0.1:6379"\n')
    with pytest.raises(ValueError, match="command line only"):
        load_toml(path)


def test_a_resume_trains_the_folder_the_user_named_and_never_joins_a_cluster_from_the_file(tmp_path, capsys,
                                                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = Path("runs/default")
    assert train_main(["--total-steps", "150", *TINY_FLAGS]) == 0
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    state["config"].update(run_dir=str(tmp_path / "elsewhere"), ray="127.0.0.1:9", total_steps=900)
    state["config"]["ray_address"] = "127.0.0.1:9"  # an earlier version's spelling: command line only as well
    torch.save(state, run / "checkpoint.pt")
    capsys.readouterr()
    assert train_main(["--resume"]) == 0
    out = capsys.readouterr().out
    assert "run folder: runs/default" in out and not (tmp_path / "elsewhere").exists()
    saved = torch.load(run / "checkpoint.pt", weights_only=True)
    assert saved["config"]["run_dir"] == "runs/default" and saved["config"]["ray"] == ""
    assert "ray_address" not in saved["config"] and saved["learner_steps"] >= 900


def test_a_resume_file_with_entries_that_are_not_ours_is_refused_unread(tmp_path, capsys):
    run = tmp_path / "run"
    assert train_main(["--run-dir", str(run), "--total-steps", "150", *TINY_FLAGS]) == 0
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    state["padding"] = torch.zeros(1_000_000)
    torch.save(state, run / "checkpoint.pt")
    capsys.readouterr()
    assert train_main(["--resume", "--run-dir", str(run), "--total-steps", "300"]) == 2
    assert "unknown entries ['padding']" in capsys.readouterr().err


def test_a_metrics_file_that_is_a_device_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    assert train_main(["--run-dir", str(run), "--total-steps", "150", *TINY_FLAGS]) == 0
    (run / "metrics.csv").unlink()
    (run / "metrics.csv").symlink_to("/dev/zero")
    capsys.readouterr()
    assert train_main(["--resume", "--run-dir", str(run), "--total-steps", "900"]) == 2
    assert "metrics.csv is not a regular file" in capsys.readouterr().err


def test_a_full_disk_during_torch_save_is_named(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    from rouba_env.files import FileWriteError, write_atomically

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: usage(10**9, 10**9, 1024))

    def torch_like_writer(path):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")

    with pytest.raises(FileWriteError, match="the disk is full"):
        write_atomically(tmp_path / "checkpoint.pt", torch_like_writer)
    assert list(tmp_path.iterdir()) == []


def test_the_docs_list_every_training_limit_as_the_code_has_it():
    text = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text()
    for name, (low, high) in LIMITS.items():
        assert f"| `{name}` | {low}..{high} |" in text, name


def test_the_checkpoint_writer_refuses_a_network_the_loader_would_refuse(tmp_path):
    from rouba_env.players.checkpoint import write_checkpoint
    from rouba_env.rules.config import preset

    with pytest.raises(ValueError, match="what a checkpoint may hold"):
        write_checkpoint(tmp_path / "big", {}, preset("standard"), max_players=2, hidden_sizes=(MAX_HIDDEN_WIDTH + 1,))
    assert not (tmp_path / "big").exists()


NO_TORCH = """import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoTorch())
"""
"""A process start as on a machine without torch: importing it fails, and it is not in sys.modules."""


def test_the_training_settings_read_without_torch():
    import subprocess
    import sys

    code = NO_TORCH + "from rouba_training.cli import main\nsys.exit(main(['--help']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "--total-steps" in result.stdout and "--critic" in result.stdout, result.stderr
    code = NO_TORCH + "from rouba_training.cli import main\nsys.exit(main([]))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "pip install 'torch>=2.2'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command, argv, message", [
    ("rouba_training.cli", ["--total-steps", "-5"], "total_steps must be in 1.."),
    ("rouba_training.cli", ["--bogus-flag"], "--bogus-flag"),
    ("rouba_training.cli", ["--rules", "small", "--eval-games", "0", "--eval-interval", "3"], "eval_games"),
    ("rouba_training.benchmark", ["--only", "bogus"], "bogus"),
    ("rouba_env.cli.evaluate", ["--games", "0"], "games"),
    ("rouba_env.cli.exploitability", ["--cfr", "-1"], "-1"),
])
def test_every_command_refuses_a_bad_flag_before_importing_torch(command, argv, message):
    """On a machine where torch cannot be imported, a bad flag or value still gets its own message (not the
    missing-torch one): each command reads its arguments before it imports torch."""
    import subprocess
    import sys

    code = NO_TORCH + f"from {command} import main\nsys.exit(main({argv!r}))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and message in result.stderr, result.stderr[-2000:]
    assert "torch" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("argv, message", [(["--seed", "x"], "--seed"), (["--bogus"], "--bogus"),
                                           (["--num-players", "two"], "--num-players")])
def test_a_flag_that_does_not_parse_is_named_and_nothing_is_made(tmp_path, capsys, argv, message):
    """tyro's own message for what cannot be read as the setting's type; exit status 2, no run folder."""
    from rouba_training.cli import main

    run = tmp_path / "run"
    with pytest.raises(SystemExit) as stop:
        main(["--run-dir", str(run), *argv])
    assert stop.value.code == 2 and message in capsys.readouterr().err
    assert not run.exists()


REMOVED_FLAGS = [
    (["--policy-loss", "neurd"], "--policy-loss was removed: the NeuRD policy term is gone"),
    (["--neurd-clip", "5"], "--neurd-clip was removed"),
    (["--neurd-threshold=3"], "--neurd-threshold was removed"),
    (["--magnet-interval", "10"], "--magnet-interval was removed: it refreshed the snapshot magnet"),
    (["--magnet", "snapshot"], "--magnet snapshot was removed: .* --magnet ema"),
    (["--play-average"], "--play-average was removed"),
    (["--no-play-average"], "--no-play-average was removed"),
    (["--best-response-steps", "100"], "--best-response-steps was removed: an exploiter's budget is --total-steps N"),
    (["--ray-address", "auto"], "--ray-address was removed: it is now --ray ADDRESS"),
    (["--ray"], "--ray now says where Ray runs: --ray local"),
    (["--ray", "--no-progress"], "--ray now says where Ray runs"),
    (["--no-ray"], "leave --ray out"),
]


@pytest.mark.parametrize("flags, message", REMOVED_FLAGS, ids=[" ".join(f) for f, _ in REMOVED_FLAGS])
def test_a_flag_of_an_earlier_version_is_refused_naming_what_replaces_it(flags, message, capsys, tmp_path):
    assert train_main([*flags, "--run-dir", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and __import__("re").search(message, error), error
    assert not (tmp_path / "run").exists()


def test_a_toml_key_of_an_earlier_version_is_refused_naming_what_replaces_it(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text("play_average = true\n")
    with pytest.raises(ValueError, match="play_average in .* was removed: playing the moving average"):
        load_toml(path)


@pytest.mark.parametrize("old, resumes", [
    ({"policy_loss": "ppo", "neurd_clip": 100.0, "play_average": False, "magnet_interval": 50,
      "best_response_steps": 3_000_000, "ray_address": "10.0.0.1:6379", "ray": False}, True),
    ({"policy_loss": "neurd"}, False),
    ({"play_average": True}, False),
    ({"magnet": "snapshot"}, False),
])
def test_a_run_saved_with_a_removed_setting_resumes_only_at_its_unused_value(tmp_path, capsys, old, resumes):
    run = tmp_path / "run"
    assert train_main(["--run-dir", str(run), "--total-steps", "150", *TINY_FLAGS]) == 0
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    state["config"].update(old)
    torch.save(state, run / "checkpoint.pt")
    capsys.readouterr()
    code = train_main(["--resume", "--run-dir", str(run), "--total-steps", "1500", "--no-progress"])
    error = capsys.readouterr().err
    if resumes:
        assert code == 0, error
        saved = torch.load(run / "checkpoint.pt", weights_only=True)
        assert saved["learner_steps"] >= 1500 and not {"policy_loss", "play_average"} & set(saved["config"])
    else:
        name = next(iter(old))
        assert code == 2 and f"this run was trained with {name}=" in error and "was removed" in error, error


def test_settings_are_grouped_by_concern_and_spelled_flat():
    from rouba_training.config import GROUP_OF, GROUPS

    config = TrainConfig.of(rules="small", magnet_coef=0.1, eval_games=10, critic="privileged", rollout_workers=3)
    assert (config.run.rules, config.regularizers.magnet_coef, config.evaluation.eval_games,
            config.network.critic, config.scale_out.rollout_workers) == ("small", 0.1, 10, "privileged", 3)
    assert set(config.to_dict()) == set(GROUP_OF) and TrainConfig.of(**config.to_dict()) == config
    assert list(GROUPS) == ["run", "ppo", "regularizers", "opponents", "evaluation", "network", "scale_out"]
    with pytest.raises(ValueError, match="unknown setting 'magnet_strength'"):
        TrainConfig.of(magnet_strength=1.0)
    with pytest.raises(ValueError, match="architecture must be one of rank, mlp, got 'cnn'"):
        TrainConfig.of(architecture="cnn")


def test_making_a_config_reads_no_file_and_the_run_start_reads_the_checkpoints_it_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = TrainConfig.of(eval_opponents=("checkpoint:missing",), start_from="checkpoint:elsewhere")
    assert config.sources["eval_opponents"] == GIVEN
    with pytest.raises(ValueError, match="eval_opponents: no checkpoint at 'missing'"):
        resolve_start(config)
    with pytest.raises(ValueError, match="scripted_opponents: unknown player 'nope'"):  # a spec's syntax at once
        TrainConfig.of(scripted_opponents=("nope",))


@pytest.mark.parametrize("deck", sorted(DECK_DEFAULTS))
def test_a_given_value_equal_to_the_trainers_default_survives_on_every_deck(deck):
    taken = TrainConfig.of(rules=deck)
    for name, value in DECK_DEFAULTS[deck].items():
        assert taken.get(name) == value and taken.sources[name] == DECK
        given = TrainConfig.of(rules=deck, **{name: DEFAULTS[name]})
        assert given.get(name) == DEFAULTS[name] and given.sources[name] == GIVEN, name


def test_a_given_value_equal_to_the_trainers_default_survives_in_an_exploiter():
    exploiter = resolve_start(TrainConfig.of(best_response="checkpoint:2p"))
    regularized = {**{name: DEFAULTS[name] for name in EXPLOITER_UNREGULARIZED}, "learning_rate": DEFAULTS["learning_rate"],
                   "ent_coef": DEFAULTS["ent_coef"], "final_eval_games": DEFAULTS["final_eval_games"]}
    given = resolve_start(TrainConfig.of(best_response="checkpoint:2p", **regularized))
    for name, value in regularized.items():
        assert exploiter.sources[name] == EXPLOITER, name
        assert given.get(name) == value and given.sources[name] == GIVEN, name
    assert exploiter.ppo.learning_rate != DEFAULTS["learning_rate"] and exploiter.regularizers.magnet == "none"
    assert exploiter.network.critic == "privileged" and exploiter.sources["critic"] == START
    assert exploiter.sources["num_envs"] == DEFAULT and exploiter.run.num_envs == DEFAULTS["num_envs"]  # no deck's
    for name in PROBE_SETTINGS:
        assert exploiter.get(name) == exploiter_defaults("checkpoint:2p")[name]
    with pytest.raises(ValueError, match="scripted_weight must be left out or be 1.0, got 0.5"):
        TrainConfig.of(best_response="heuristic", scripted_weight=0.5)


def test_a_table_the_deck_cannot_deal_is_refused_naming_the_rules_and_the_table():
    with pytest.raises(ValueError, match="rules 'mini3' at 4 players: invalid RulesConfig: the first deal"):
        TrainConfig.of(rules="mini3", num_players=(4,))


def test_an_exploiter_on_a_three_seat_deck_keeps_the_decks_table_not_its_budget():
    exploiter = TrainConfig.of(rules="mini3", best_response="heuristic")
    assert exploiter.run.num_players == (3,) and exploiter.sources["num_players"] == DECK
    assert exploiter.sources["num_envs"] == exploiter.sources["total_steps"] == DEFAULT
    assert TrainConfig.of(rules="mini3", num_players=(2,)).run.num_players == (2,), "a table given is kept"


def test_the_command_line_gives_only_the_flags_it_names():
    from rouba_training.cli import config_from_args

    config, _ = config_from_args(["--rules", "mini", "--num-envs", "1024", "--no-progress"])
    assert config.run.num_envs == 1024 and config.sources["num_envs"] == GIVEN
    assert config.run.total_steps == DECK_DEFAULTS["mini"]["total_steps"] and config.sources["total_steps"] == DECK
    assert config.sources["progress"] == GIVEN and config.sources["seed"] == DEFAULT


def test_a_mini_run_given_1024_games_trains_with_1024_and_saves_where_each_setting_came_from(tmp_path):
    import json

    run_dir = tmp_path / "run"
    assert train_main(["--rules", "mini", "--num-envs", "1024", "--rollout-steps", "1", "--total-steps", "1",
                       "--eval-interval", "0", "--final-eval-games", "0", "--architecture", "mlp",
                       "--hidden-sizes", "8", "--no-progress", "--run-dir", str(run_dir)]) == 0
    metadata = json.loads((run_dir / "policy" / "metadata.json").read_text())
    assert metadata["train_config"]["num_envs"] == 1024 and metadata["learner_steps"] >= 1024
    sources = metadata["train_config_sources"]
    assert sources["num_envs"] == sources["rules"] == GIVEN and sources["seed"] == DEFAULT
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    assert saved["config_sources"] == sources
