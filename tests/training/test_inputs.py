"""The trainer's inputs checked at the door: settings from Python, TOML, flags and resume files, one set of limits."""

from pathlib import Path

import pytest
import torch

from rouba_env.players.checkpoint import MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH
from rouba_training.cli import main as train_main
from rouba_training.cli import load_toml
from rouba_training.config import LIMITS, TrainConfig
from tests.training.test_train import TINY_FLAGS

BAD_SETTINGS = [
    ("rules", "nope", "rules: unknown rules preset 'nope'"),
    ("scripted_opponents", ("nope",), "scripted_opponents: unknown player 'nope'"),
    ("eval_opponents", ("checkpoint:missing",), "eval_opponents: no checkpoint at 'missing'"),
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
    ("device", "tpu", "device must be cpu or cuda"),
]


@pytest.mark.parametrize("field,value,message", BAD_SETTINGS, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(BAD_SETTINGS)])
def test_every_bad_setting_is_refused_when_the_config_is_made(field, value, message):
    extra = {"architecture": "mlp"} if field == "hidden_sizes" else {}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        TrainConfig(**{field: value, **extra})


def test_the_limits_hold_the_defaults_and_the_documented_runs():
    default = TrainConfig()
    for name, (low, high) in LIMITS.items():
        assert low <= getattr(default, name) <= high, name
    TrainConfig(num_envs=LIMITS["num_envs"][1], architecture="mlp", hidden_sizes=(MAX_HIDDEN_WIDTH,) * MAX_HIDDEN_LAYERS)


def test_a_toml_config_passes_the_same_checks(tmp_path):
    path = tmp_path / "run.toml"
    for value in ("99999999999999999999", "50000000"):
        path.write_text(f"num_envs = {value}\n")
        with pytest.raises(ValueError, match="num_envs must be in 1..16384"):
            TrainConfig(**load_toml(path))
    path.write_text('ray_address = "10.0.0.1:6379"\n')
    with pytest.raises(ValueError, match="command line only"):
        load_toml(path)


def test_a_resume_trains_the_folder_the_user_named_and_never_joins_a_cluster_from_the_file(tmp_path, capsys,
                                                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = Path("runs/default")
    assert train_main(["--total-steps", "150", *TINY_FLAGS]) == 0
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    state["config"].update(run_dir=str(tmp_path / "elsewhere"), ray=True, ray_address="127.0.0.1:9", total_steps=900)
    torch.save(state, run / "checkpoint.pt")
    capsys.readouterr()
    assert train_main(["--resume"]) == 0
    out = capsys.readouterr().out
    assert "run folder: runs/default" in out and not (tmp_path / "elsewhere").exists()
    saved = torch.load(run / "checkpoint.pt", weights_only=True)
    assert saved["config"]["run_dir"] == "runs/default" and not saved["config"]["ray"]
    assert saved["config"]["ray_address"] == "" and saved["learner_steps"] >= 900


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
        write_checkpoint(tmp_path / "big", {}, preset("standard"), 2, (MAX_HIDDEN_WIDTH + 1,))
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
