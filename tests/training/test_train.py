"""End-to-end training runs: tiny, but every part of the loop runs."""

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from rouba_env.players.registry import make_policy
from rouba_env import preset
from rouba_training.config import TrainConfig, config_from_args, load_toml
from rouba_training.train import train

ROOT = Path(__file__).resolve().parents[2]
TINY = dict(total_steps=1500, num_envs=16, rollout_steps=8, minibatch_size=256, update_epochs=1,
            hidden_sizes=(16,), eval_interval=2, eval_games=4, final_eval_games=4, checkpoint_interval=1,
            snapshot_interval=1, scripted_opponents=("greedy",), eval_opponents=("random",), progress=False)


def metric_rows(run_dir: Path) -> list[dict]:
    with (run_dir / "metrics.csv").open(newline="") as stream:
        return list(csv.DictReader(stream))


@pytest.mark.slow
def test_tiny_training_run_writes_everything(tmp_path):
    final = train(TrainConfig(run_dir=str(tmp_path), **TINY))
    for name in ("checkpoint.pt", "metrics.csv", "eval.csv", "final_eval.json", "learning_curve.png",
                 "policy/model.safetensors", "policy/metadata.json"):
        assert (tmp_path / name).exists(), name
    assert list((tmp_path / "tb").iterdir()), "TensorBoard events"
    assert final["learner_steps"] >= 1500 and final["evaluation"][0]["opponent"] == "random"
    rows = metric_rows(tmp_path)
    assert [int(r["update"]) for r in rows] == list(range(1, len(rows) + 1))
    policy = make_policy(f"checkpoint:{tmp_path / 'policy'}", preset("standard"))
    obs = np.zeros((3, policy.encoder.size), dtype=np.float32)
    mask = np.zeros((3, policy.actions.size), dtype=np.int8)
    mask[:, [5, 9]] = 1
    assert set(policy.act_batch(obs, mask, np.random.default_rng(0)).tolist()) <= {5, 9}
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert state["learner_steps"] == final["learner_steps"]


@pytest.mark.slow
def test_same_seed_same_run(tmp_path):
    config = dict(TINY, total_steps=600, final_eval_games=0, eval_interval=0)
    train(TrainConfig(run_dir=str(tmp_path / "a"), **config))
    train(TrainConfig(run_dir=str(tmp_path / "b"), **config))
    columns = ["learner_steps", "policy_loss", "value_loss", "entropy", "train_reward"]
    a, b = metric_rows(tmp_path / "a"), metric_rows(tmp_path / "b")
    assert [[r[c] for c in columns] for r in a] == [[r[c] for c in columns] for r in b]


@pytest.mark.slow
def test_mixed_table_sizes_share_one_network(tmp_path):
    final = train(TrainConfig(run_dir=str(tmp_path), num_players=(2, 3), **dict(TINY, total_steps=800)))
    assert {r["opponent"] for r in final["evaluation"]} == {"random@2p", "random@3p"}


@pytest.mark.slow
def test_resume_after_a_kill(tmp_path):
    run_dir = tmp_path / "run"
    command = [sys.executable, str(ROOT / "scripts" / "train.py"), "--run-dir", str(run_dir),
               "--total-steps", "200000", "--num-envs", "16", "--rollout-steps", "8", "--minibatch-size", "256",
               "--update-epochs", "1", "--hidden-sizes", "16", "--eval-interval", "0", "--final-eval-games", "0",
               "--checkpoint-interval", "1", "--scripted-opponents", "greedy", "--progress", "false"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    checkpoint = run_dir / "checkpoint.pt"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if checkpoint.exists() and len(metric_rows(run_dir)) >= 3:
            break
        time.sleep(0.2)
    assert process.poll() is None, process.stderr.read().decode()
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    saved = torch.load(checkpoint, weights_only=True)
    resumed = subprocess.run(command[:5] + [str(saved["learner_steps"] + 500)] + command[6:] + ["--resume"],
                             cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    rows = metric_rows(run_dir)
    updates = [int(r["update"]) for r in rows]
    assert updates == list(range(1, len(rows) + 1)), "no update lost or repeated"
    assert updates[-1] > saved["update"]
    assert int(rows[saved["update"]]["learner_steps"]) > saved["learner_steps"]


def test_config_errors_and_toml(tmp_path):
    with pytest.raises(ValueError, match="num_envs must be positive"):
        TrainConfig(num_envs=0)
    with pytest.raises(ValueError, match="table sizes in 2..8"):
        TrainConfig(num_players=(9,))
    good = tmp_path / "run.toml"
    good.write_text('total_steps = 1000\nnum_players = [2, 3]\nlearning_rate = 1\n')
    config, resume = config_from_args(["--config", str(good), "--seed", "7"])
    assert config.total_steps == 1000 and config.num_players == (2, 3) and config.seed == 7 and not resume
    bad = tmp_path / "bad.toml"
    bad.write_text("total_stepz = 5\n")
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['total_stepz'\]"):
        load_toml(bad)
    bad.write_text('total_steps = "many"\n')
    with pytest.raises(ValueError, match="total_steps in .* must be int"):
        load_toml(bad)


@pytest.mark.slow
def test_train_script_rejects_bad_settings():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), "--num-envs", "0"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "num_envs must be positive" in result.stderr
    assert "Traceback" not in result.stderr


def test_resume_refuses_a_different_network_shape(tmp_path):
    config = dict(TINY, total_steps=300, final_eval_games=0, eval_interval=0)
    train(TrainConfig(run_dir=str(tmp_path), **config))
    with pytest.raises(ValueError, match=r"--resume: \['hidden_sizes'\] differ"):
        train(TrainConfig(run_dir=str(tmp_path), **dict(config, hidden_sizes=(32,), total_steps=600)), resume=True)
    with pytest.raises(FileNotFoundError, match="no checkpoint.pt"):
        train(TrainConfig(run_dir=str(tmp_path / "empty"), **config), resume=True)


@pytest.mark.slow
def test_a_checkpoint_can_join_the_opponent_pool(tmp_path):
    final = train(TrainConfig(run_dir=str(tmp_path), **dict(TINY, total_steps=400, scripted_opponents=("checkpoint:2p",),
                                                            scripted_weight=1.0, final_eval_games=0, eval_interval=0)))
    assert final["learner_steps"] >= 400
