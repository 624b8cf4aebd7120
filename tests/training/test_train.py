"""End-to-end training runs: tiny, but every part of the loop runs, including kills, interrupts and bad files."""

import csv
import errno
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from rouba_env import preset
from rouba_env.single_game import SingleGame
from rouba_training.cli import main as train_main
from rouba_env.players.registry import make_policy
from rouba_training.cli import config_from_args, load_toml
from rouba_training.config import REMOVED_SETTINGS, TrainConfig
from rouba_training.run_folder import RunFolderError, policy_update
from rouba_training.trainer import train
from tests.signals import sigint_as_a_terminal_sends_it

ROOT = Path(__file__).resolve().parents[2]
TINY = dict(total_steps=1500, num_envs=16, rollout_steps=8, minibatch_size=256, update_epochs=1,
            architecture="mlp", hidden_sizes=(16,), eval_interval=2, eval_games=4, final_eval_games=4, checkpoint_interval=1,
            snapshot_interval=1, scripted_opponents=("greedy",), eval_opponents=("random",), progress=False)
TINY_FLAGS = ["--num-envs", "16", "--rollout-steps", "8", "--minibatch-size", "256", "--update-epochs", "1",
              "--architecture", "mlp", "--hidden-sizes", "16", "--eval-interval", "0", "--final-eval-games", "0",
              "--scripted-opponents", "greedy", "--no-progress"]


def metric_rows(run_dir: Path) -> list[dict]:
    with (run_dir / "metrics.csv").open(newline="") as stream:
        return list(csv.DictReader(stream))


def tensorboard_steps(run_dir: Path, tag: str = "train/policy_loss") -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(run_dir / "tb"))  # the run as TensorBoard shows it (purges applied)
    accumulator.Reload()
    return [event.step for event in accumulator.Scalars(tag)] if tag in accumulator.Tags()["scalars"] else []


def assert_consistent(run_dir: Path) -> dict:
    """checkpoint.pt, policy/, metrics.csv and TensorBoard agree; no temporary files; files readable by others."""
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    assert policy_update(run_dir) == saved["update"], "policy/ is from the checkpoint's update"
    rows = metric_rows(run_dir)
    assert [int(r["update"]) for r in rows] == list(range(1, saved["update"] + 1))
    steps = tensorboard_steps(run_dir)
    assert steps == sorted(set(steps)) and steps[-1] == saved["learner_steps"], "TensorBoard trimmed to the checkpoint"
    leftovers = [p.name for p in run_dir.rglob("*.tmp")]
    assert not leftovers, leftovers
    for path in (run_dir / "checkpoint.pt", run_dir / "policy" / "model.safetensors", run_dir / "metrics.csv"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o044 == 0o044, f"{path} is readable by others"
    return saved


def start(run_dir: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "rouba_training.cli", "--run-dir", str(run_dir), "--total-steps", "10000000",
               "--checkpoint-interval", "3", *TINY_FLAGS, *extra]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_as_a_terminal_sends_it)


def wait_for_rows(process: subprocess.Popen, run_dir: Path, count: int) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if (run_dir / "metrics.csv").exists() and len(metric_rows(run_dir)) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run did not get to {count} updates: {process.communicate()[1]}")


@pytest.mark.slow
def test_tiny_training_run_writes_everything(tmp_path):
    final = train(TrainConfig.of(run_dir=str(tmp_path), **TINY))
    for name in ("checkpoint.pt", "metrics.csv", "eval.csv", "final_eval.json", "learning_curve.png",
                 "policy/model.safetensors", "policy/metadata.json"):
        assert (tmp_path / name).exists(), name
    assert final["learner_steps"] >= 1500 and final["evaluation"][0]["opponent"] == "random"
    assert final["interrupted"] is None
    with (tmp_path / "eval.csv").open(newline="") as stream:
        kinds = [row["kind"] for row in csv.DictReader(stream)]
    assert set(kinds) == {"periodic", "final"} and kinds[-1] == "final", "eval.csv tells the final rows apart"
    saved = assert_consistent(tmp_path)
    assert saved["learner_steps"] == final["learner_steps"]
    policy = make_policy(f"checkpoint:{tmp_path / 'policy'}", preset("standard"))
    obs = np.zeros((3, policy.encoder.size), dtype=np.float32)
    mask = np.zeros((3, policy.actions.size), dtype=np.int8)
    mask[:, [5, 9]] = 1
    assert set(policy.act_batch(obs, mask, np.random.default_rng(0)).tolist()) <= {5, 9}


@pytest.mark.slow
def test_same_seed_same_run(tmp_path):
    config = dict(TINY, total_steps=600, final_eval_games=0, eval_interval=0)
    train(TrainConfig.of(run_dir=str(tmp_path / "a"), **config))
    train(TrainConfig.of(run_dir=str(tmp_path / "b"), **config))
    columns = ["learner_steps", "policy_loss", "value_loss", "entropy", "train_reward"]
    a, b = metric_rows(tmp_path / "a"), metric_rows(tmp_path / "b")
    assert [[r[c] for c in columns] for r in a] == [[r[c] for c in columns] for r in b]


@pytest.mark.slow
def test_mixed_table_sizes_share_one_network(tmp_path):
    final = train(TrainConfig.of(run_dir=str(tmp_path), num_players=(2, 3), **dict(TINY, total_steps=800)))
    assert {r["opponent"] for r in final["evaluation"]} == {"random@2p", "random@3p"}


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [2, 4, 7])
def test_sigkill_at_any_point_then_resume_leaves_a_consistent_folder(tmp_path, kill_after):
    run_dir = tmp_path / "run"
    process = start(run_dir, "--seed", "3")
    wait_for_rows(process, run_dir, kill_after)
    time.sleep(0.01 * kill_after)  # somewhere inside the next update or checkpoint write
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    written = len(metric_rows(run_dir))
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    assert written - saved["update"] <= 3, "at most one checkpoint interval (3 updates) is lost"
    target = saved["learner_steps"] + 300
    resumed = subprocess.run([sys.executable, "-m", "rouba_training.cli", "--resume", "--run-dir", str(run_dir),
                              "--total-steps", str(target)], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr
    assert f"total_steps: 10000000 -> {target}" in resumed.stdout, "the changed setting is shown as old -> new"
    after = assert_consistent(run_dir)
    assert after["update"] > saved["update"] and list(after["config"]["hidden_sizes"]) == [16], "saved settings restored"
    assert after["config"]["num_envs"] == 16 and after["config"]["seed"] == 3


@pytest.mark.slow
def test_sigint_and_sigterm_checkpoint_then_resume_carries_on(tmp_path):
    run_dir = tmp_path / "run"
    for number, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        process = start(run_dir, *(["--resume"] if number == signal.SIGTERM else []))
        wait_for_rows(process, run_dir, len(metric_rows(run_dir)) + 2 if (run_dir / "metrics.csv").exists() else 2)
        process.send_signal(number)
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == code, stderr
        assert "Traceback" not in stderr and "rouba-train --resume --run-dir" in stdout
        saved = assert_consistent(run_dir)
        assert saved["update"] == len(metric_rows(run_dir)), "the interrupted update was checkpointed"


def test_fresh_run_into_a_used_folder_needs_overwrite_or_resume(tmp_path, capsys):
    flags = ["--run-dir", str(tmp_path), "--total-steps", "200", *TINY_FLAGS]
    assert train_main(flags) == 0
    first = metric_rows(tmp_path)
    assert train_main(flags) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert metric_rows(tmp_path) == first, "nothing appended"
    assert train_main(flags + ["--overwrite"]) == 0
    assert [r["update"] for r in metric_rows(tmp_path)] == [r["update"] for r in first]
    assert len(list((tmp_path / "tb").iterdir())) == 1, "one TensorBoard events file"
    assert train_main(flags + ["--resume", "--overwrite"]) == 2
    assert "exclude each other" in capsys.readouterr().err
    assert train_main(["--resume", "--run-dir", str(tmp_path / "nothing"), "--no-progress"]) == 2
    assert "no checkpoint.pt" in capsys.readouterr().err


FIELD_DAMAGE = {"negative update": {"update": -5}, "nan seconds": {"seconds": float("nan")},
                "latest_eval an int": {"latest_eval": 5}, "latest_eval bytes": {"latest_eval": b"rows"},
                "a latest_eval row holding bytes": {"latest_eval": [{"opponent": b"heuristic", "win_rate": 0.5}]}}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "not a dict", "missing field", "wrong network",
                                    *FIELD_DAMAGE])
def test_a_damaged_resume_file_is_one_error_line(tmp_path, capsys, damage):
    flags = ["--run-dir", str(tmp_path), "--total-steps", "150", *TINY_FLAGS]
    assert train_main(flags) == 0
    checkpoint = tmp_path / "checkpoint.pt"
    data = checkpoint.read_bytes()
    if damage == "garbage":
        checkpoint.write_bytes(b"\x80\x04not really a pickle" * 10)
    elif damage == "truncated":
        checkpoint.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        checkpoint.write_bytes(b"")
    elif damage == "not a dict":
        torch.save([1, 2, 3], checkpoint)
    elif damage == "missing field":
        state = torch.load(checkpoint, weights_only=True)
        del state["optimizer"]
        torch.save(state, checkpoint)
    elif damage in FIELD_DAMAGE:
        state = torch.load(checkpoint, weights_only=True)
        state.update(FIELD_DAMAGE[damage])
        torch.save(state, checkpoint)
    else:
        state = torch.load(checkpoint, weights_only=True)
        state["network"] = {"nonsense": torch.zeros(2)}
        torch.save(state, checkpoint)
    capsys.readouterr()
    damaged = checkpoint.read_bytes()
    assert train_main(["--resume", "--run-dir", str(tmp_path), "--total-steps", "40000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot resume from") and str(checkpoint) in err[0], err
    assert checkpoint.read_bytes() == damaged, "a refused resume writes nothing"


@pytest.mark.parametrize("code, cause", [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "read-only")])
def test_disk_errors_are_one_line_and_keep_the_last_checkpoint(tmp_path, capsys, monkeypatch, code, cause):
    flags = ["--run-dir", str(tmp_path), "--total-steps", "150", *TINY_FLAGS]
    assert train_main(flags) == 0
    before = (tmp_path / "checkpoint.pt").read_bytes()
    import rouba_env.files

    def failing_replace(source, target):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(rouba_env.files.os, "replace", failing_replace)
    capsys.readouterr()
    assert train_main(["--resume", "--run-dir", str(tmp_path), "--total-steps", "40000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot write") and cause in err[0], err
    assert (tmp_path / "checkpoint.pt").read_bytes() == before
    assert not list(tmp_path.rglob("*.tmp"))


def test_config_errors_and_toml(tmp_path):
    with pytest.raises(ValueError, match="num_envs must be in 1..16384"):
        TrainConfig.of(num_envs=0)
    with pytest.raises(ValueError, match="table sizes in 2..8"):
        TrainConfig.of(num_players=(9,))
    with pytest.raises(ValueError, match="learning_rate must be a finite number"):
        TrainConfig.of(learning_rate=float("nan"))
    with pytest.raises(ValueError, match="seed must be int"):
        TrainConfig.of(seed="7")
    with pytest.raises(ValueError, match="hidden_sizes must be a list of int"):
        TrainConfig.of(hidden_sizes=64)
    assert TrainConfig.of(seed=np.int64(3)).run.seed == 3
    good = tmp_path / "run.toml"
    good.write_text('total_steps = 1000\nnum_players = [2, 3]\nlearning_rate = 1\n')
    config, resume = config_from_args(["--config", str(good), "--seed", "7"])
    assert config.run.total_steps == 1000 and config.run.num_players == (2, 3) and config.run.seed == 7 and not resume
    bad = tmp_path / "bad.toml"
    bad.write_text("total_stepz = 5\n")
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['total_stepz'\]"):
        load_toml(bad)
    bad.write_text('total_steps = "many"\n')
    with pytest.raises(ValueError, match=r"total_steps must be int, got 'many' \(in .*bad.toml\)"):
        load_toml(bad)
    bad.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ValueError, match=r"config file .*bad.toml is nested too deeply"):
        load_toml(bad)


def test_a_resumed_run_takes_its_device_from_the_command_line_only():
    from rouba_training.cli import build_config, parse_request

    saved = TrainConfig.of(device="cpu").to_dict() | {"device": "cuda"}
    config, _ = build_config(parse_request(["--resume"]), saved)
    assert config.run.device == "cpu", "a run started on a GPU resumes where it is now"
    config, _ = build_config(parse_request(["--resume", "--device", "cuda"]), saved)
    assert config.run.device == "cuda"


def test_resuming_lists_a_change_to_a_setting_newer_than_the_run():
    """A run saved before a setting existed resumes with its default, and a flag for it is listed."""
    from rouba_training.cli import build_config, parse_request

    saved = {key: value for key, value in TrainConfig().to_dict().items() if key != "support_coef"}
    config, changes = build_config(parse_request(["--resume"]), saved)
    assert config.regularizers.support_coef == 0.0 and changes == []
    config, changes = build_config(parse_request(["--resume", "--support-coef", "0.02"]), saved)
    assert config.regularizers.support_coef == 0.02 and changes == [("support_coef", 0.0, 0.02)]


@pytest.mark.slow
def test_train_command_rejects_bad_settings_in_one_line():
    for script in (["rouba-train"], [sys.executable, "-m", "rouba_env", "train"]):
        result = subprocess.run([*script, "--num-envs", "0"], capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 2 and result.stderr.strip() == "error: num_envs must be in 1..16384, got 0"


def test_resume_refuses_a_different_network_shape(tmp_path):
    config = dict(TINY, total_steps=300, final_eval_games=0, eval_interval=0)
    train(TrainConfig.of(run_dir=str(tmp_path), **config))
    with pytest.raises(ValueError, match=r"--resume: \['hidden_sizes'\] differ"):
        train(TrainConfig.of(run_dir=str(tmp_path), **dict(config, hidden_sizes=(32,), total_steps=60_000)), resume=True)
    with pytest.raises(ValueError, match=r"--resume: \['policy_objective'\] differ .*'clipped'"):
        train(TrainConfig.of(run_dir=str(tmp_path), **dict(config, policy_objective="mirror_fit", mirror_coef=1.0,
                                                             total_steps=60_000)), resume=True)
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    del saved["config"]["policy_objective"]  # a run saved before the setting existed trained the clipped surrogate
    torch.save(saved, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=r"--resume: \['policy_objective'\] differ"):
        train(TrainConfig.of(run_dir=str(tmp_path), **dict(config, policy_objective="mirror_fit", mirror_coef=1.0,
                                                             total_steps=60_000)), resume=True)
    with pytest.raises(RunFolderError, match="no checkpoint.pt"):
        train(TrainConfig.of(run_dir=str(tmp_path / "empty"), **config), resume=True)


@pytest.mark.slow
def test_a_checkpoint_can_join_the_opponent_pool(tmp_path):
    final = train(TrainConfig.of(run_dir=str(tmp_path), **dict(TINY, total_steps=400, scripted_opponents=("checkpoint:2p",),
                                                            scripted_weight=1.0, final_eval_games=0, eval_interval=0)))
    assert final["learner_steps"] >= 400
    assert json.loads((tmp_path / "policy" / "metadata.json").read_text())["update"] >= 1


def test_best_response_probe_trains_against_the_probed_player_alone(tmp_path, capsys):
    flags = ["--run-dir", str(tmp_path), "--total-steps", "600", "--num-envs", "16", "--rollout-steps", "8",
             "--minibatch-size", "256", "--update-epochs", "1", "--hidden-sizes", "16", "8", "--eval-interval", "0",
             "--final-eval-games", "8", "--snapshot-interval", "1", "--no-progress", "--best-response", "greedy",
             "--best-response-start", "fresh"]
    assert train_main(flags) == 0
    out = capsys.readouterr().out
    assert "approximate best response to greedy; the exploiter started as a fresh network (asked for)" in out
    assert "2 players, at the start: 8 games against greedy" in out
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert list(saved["config"]["scripted_opponents"]) == ["greedy"]
    assert (saved["config"]["self_play_weight"], saved["config"]["past_self_weight"]) == (0, 0)
    final = json.loads((tmp_path / "final_eval.json").read_text())
    assert [row["opponent"] for row in final["evaluation"]] == ["greedy"]
    assert [row["kind"] for row in final["best_response"]["start_evaluation"]] == ["start"]


def test_the_probe_reports_each_table_size(tmp_path, capsys):
    flags = ["--run-dir", str(tmp_path), "--total-steps", "600", "--num-envs", "16", "--rollout-steps", "8",
             "--minibatch-size", "256", "--update-epochs", "1", "--hidden-sizes", "16", "8", "--eval-interval", "0",
             "--final-eval-games", "6", "--no-progress", "--best-response", "greedy", "--num-players", "2", "3",
             "--best-response-start", "fresh"]
    assert train_main(flags) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " players, after " in line]
    assert len(lines) == 2
    assert lines[0].startswith("2 players, after") and lines[1].startswith("3 players, after")


def test_best_response_refuses_conflicting_settings():
    with pytest.raises(ValueError, match="self_play_weight must be left out or be 0.0"):
        TrainConfig.of(best_response="greedy", self_play_weight=0.9)
    config = TrainConfig.of(best_response="greedy")
    assert config.run.total_steps == 3_000_000 and config.run.run_dir == "runs/best_response"


def test_a_rank_network_trains_and_its_policy_plays(tmp_path):
    final = train(TrainConfig.of(run_dir=str(tmp_path), **dict(TINY, total_steps=600, architecture="rank",
                                                            hidden_sizes=(16, 8))))
    assert final["evaluation"]
    policy = make_policy(f"checkpoint:{tmp_path / 'policy'}", preset("standard", num_players=2))
    assert json.loads((tmp_path / "policy" / "metadata.json").read_text())["architecture"] == "rank"
    assert policy.name.startswith("checkpoint:")


@pytest.mark.parametrize("architecture, hidden_sizes", [("rank", (16, 8)), ("mlp", (16,))])
def test_a_privileged_critic_trains_resumes_and_the_saved_policy_is_the_actor_alone(tmp_path, architecture,
                                                                                   hidden_sizes):
    from safetensors.numpy import load_file

    settings = dict(TINY, total_steps=600, architecture=architecture, hidden_sizes=hidden_sizes, critic="privileged")
    final = train(TrainConfig.of(run_dir=str(tmp_path), **settings))
    assert final["evaluation"] and np.isfinite(float(metric_rows(tmp_path)[-1]["value_loss"]))
    names = set(load_file(str(tmp_path / "policy" / "model.safetensors")))
    assert names and not any(name.startswith(("critic", "actor")) for name in names), "only the actor plays"
    policy = make_policy(f"checkpoint:{tmp_path / 'policy'}", preset("standard", num_players=2))
    assert policy.name.startswith("checkpoint:")
    # The critic ships beside the actor, for a search's leaves; its numpy forward is torch's.
    critic = load_file(str(tmp_path / "policy" / "privileged_value.safetensors"))
    layers = [torch.nn.Linear(*critic[f"{2 * i}.weight"].shape[::-1]) for i in range(len(critic) // 2)]
    twin = torch.nn.Sequential(*[part for layer in layers for part in (layer, torch.nn.ReLU())][:-1])
    twin.load_state_dict({name: torch.from_numpy(array) for name, array in critic.items()})
    rng = np.random.default_rng(0)
    obs = rng.random((5, policy.encoder.size), dtype=np.float32)
    hidden = rng.integers(0, 3, (5, policy.encoder.hidden_size)).astype(np.float32)
    with torch.no_grad():
        expected = twin(torch.from_numpy(np.concatenate([obs, hidden], axis=1))).numpy()[:, 0]
    assert np.allclose(policy.privileged_value.forward(obs, hidden), expected, atol=1e-5)
    search = make_policy(f"search:policy={tmp_path / 'policy'},value=privileged,depth=1,samples=4",
                         preset("standard", num_players=2))
    table = SingleGame(preset("standard"))
    table.start_deal(3)
    for _ in range(6):
        seat = table.current
        assert table.play(search.act(table.observation(seat), table.mask(seat), rng), "search")
    with pytest.raises(ValueError, match="give depth=1 or more"):
        make_policy(f"search:policy={tmp_path / 'policy'},value=privileged", preset("standard"))
    with pytest.raises(ValueError, match="trained with a privileged critic, which took the head's place"):
        make_policy(f"search:policy={tmp_path / 'policy'},depth=1", preset("standard"))
    assert not policy.value_head_trained and make_policy("checkpoint:2p-0.3", preset("standard")).value_head_trained
    resumed = train(TrainConfig.of(run_dir=str(tmp_path), **dict(settings, total_steps=900)), resume=True)
    assert resumed["learner_steps"] >= 900
    with pytest.raises(ValueError, match="critic"):
        train(TrainConfig.of(run_dir=str(tmp_path), **dict(settings, total_steps=120_000, critic="shared")), resume=True)


@pytest.mark.parametrize("path", sorted((ROOT / "training" / "configs").glob("*.toml")), ids=lambda p: p.name)
def test_each_documented_config_file_trains(tmp_path, path):
    """Every file under training/configs is valid and runs (shrunk to a tiny run by flags, which win over it)."""
    load_toml(path)
    flags = ["--config", str(path), "--run-dir", str(tmp_path), "--total-steps", "200", "--num-envs", "8",
             "--rollout-steps", "4", "--minibatch-size", "128", "--update-epochs", "1", "--eval-interval", "0",
             "--final-eval-games", "0", "--no-progress"]
    assert train_main(flags) == 0
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert saved["config"]["architecture"] == load_toml(path).get("architecture", TrainConfig().network.architecture)


def folder_snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_resuming_a_finished_run_says_it_is_complete_and_changes_nothing(tmp_path, capsys):
    from rouba_training.cli import main

    run = tmp_path / "run"
    train(TrainConfig.of(run_dir=str(run), **{**TINY, "total_steps": 300, "eval_interval": 0}))
    before = folder_snapshot(run)
    for _ in range(2):
        assert main(["--resume", "--run-dir", str(run)]) == 0
        out = capsys.readouterr().out
        assert "is complete" in out and "--total-steps N" in out and "not applied" not in out
    assert main(["--resume", "--run-dir", str(run), "--learning-rate", "0.01"]) == 0
    assert "not applied, since nothing is trained: learning_rate" in capsys.readouterr().out
    assert folder_snapshot(run) == before, "eval.csv, tb/ and every other file stay as they were"
    assert train(TrainConfig.of(run_dir=str(run), **{**TINY, "total_steps": 300}), resume=True)["complete"]
    assert folder_snapshot(run) == before


@pytest.mark.parametrize("argv", [
    ["--rules", "nope"], ["--resume"], ["--eval-opponents", "nope"], ["--scripted-opponents", "checkpoint:missing"],
    ["--best-response", "checkpoint:2p", "--rules", "mini"], ["--best-response", "greedy", "--best-response-start", "x"],
    pytest.param(["--device", "cuda"], marks=pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is there")),
])
def test_a_command_that_fails_on_its_arguments_leaves_no_run_folder(tmp_path, capsys, argv):
    from rouba_training.cli import main

    run = tmp_path / "run"
    assert main(["--run-dir", str(run), *TINY_FLAGS, *argv]) == 2
    assert capsys.readouterr().err.startswith("error:")
    assert not run.exists()


def test_a_shipped_config_is_named_without_a_path(tmp_path, monkeypatch):
    from rouba_training.cli import shipped_configs

    monkeypatch.chdir(tmp_path)  # away from the repository: the name alone must do
    assert {"rank_2p", "rank_mixed"} <= set(shipped_configs())
    config, _ = config_from_args(["--config", "rank_2p"])
    assert config.network.architecture == load_toml(ROOT / "training" / "configs" / "rank_2p.toml").get("architecture")
    with pytest.raises(ValueError, match="does not exist .shipped configs: hand_head_2p, mini_support, pool_2p, rank_2p, rank_mixed"):
        config_from_args(["--config", "rank_3p"])


def test_the_shipped_2p_config_is_the_shipped_2p_checkpoints_recipe():
    """``--config rank_2p`` trains what ``checkpoint:2p`` was trained with, up to where and how it ran."""
    config, _ = config_from_args(["--config", "rank_2p"])
    shipped = json.loads((ROOT / "checkpoints" / "2p" / "metadata.json").read_text())["train_config"]
    how_it_ran = {"run_dir", "torch_threads", "progress", "ray"}
    settings = json.loads(json.dumps(config.to_dict()))
    # settings removed since were at the values they have when unused, so the recipe is what it was
    assert all(shipped[k] == unused for k, (unused, _) in REMOVED_SETTINGS.items() if k in shipped)
    assert {k: v for k, v in settings.items() if k not in how_it_ran and k in shipped} == \
        {k: v for k, v in shipped.items() if k not in how_it_ran and k not in REMOVED_SETTINGS}
    # settings added since hold the values that stand for how the network was trained then: the defaults of
    # that time, which are the 0.4 pool recipe's (pool_2p)
    pool_recipe = {k: v for k, v in load_toml(ROOT / "training" / "configs" / "pool_2p.toml").items() if k != "run_dir"}
    defaults = json.loads(json.dumps(TrainConfig.of(**pool_recipe).to_dict()))
    assert {k: v for k, v in settings.items() if k not in shipped} == {k: defaults[k] for k in settings
                                                                        if k not in shipped}


@pytest.mark.parametrize("path,message", [("/dev/zero", "is not a regular file"), ("/tmp", "is not a regular file")])
def test_a_config_that_is_no_settings_file_is_refused_at_once(path, message):
    with pytest.raises(ValueError, match=message):
        load_toml(Path(path))


@pytest.mark.parametrize("architecture, hidden_sizes, critic", [("rank", (16, 8), "shared"),
                                                                ("mlp", (16,), "privileged")])
def test_a_hand_head_trains_its_loss_down_is_logged_and_is_not_saved(tmp_path, architecture, hidden_sizes, critic):
    from safetensors.numpy import load_file

    settings = dict(TINY, total_steps=1500, architecture=architecture, hidden_sizes=hidden_sizes, critic=critic,
                    hand_coef=1.0)
    final = train(TrainConfig.of(run_dir=str(tmp_path), **settings))
    losses = [float(row["hand_loss"]) for row in metric_rows(tmp_path)]
    assert final["evaluation"] and all(np.isfinite(losses)) and losses[-1] < losses[0], losses
    names = set(load_file(str(tmp_path / "policy" / "model.safetensors")))
    assert not any(name.startswith("hand_head") for name in names), "the head only shapes training"
    assert make_policy(f"checkpoint:{tmp_path / 'policy'}", preset("standard", num_players=2)).name


@pytest.mark.parametrize("architecture, hidden_sizes, critic", [("rank", (16, 8), "shared"), ("mlp", (16,), "shared"),
                                                                 ("rank", (16, 8), "privileged")])
def test_the_mirror_fit_trains_its_action_values_is_logged_and_saves_the_policy_alone(tmp_path, architecture,
                                                                                      hidden_sizes, critic):
    from safetensors.numpy import load_file

    settings = dict(TINY, total_steps=1500, architecture=architecture, hidden_sizes=hidden_sizes, critic=critic,
                    policy_objective="mirror_fit", mirror_coef=1.0)
    final = train(TrainConfig.of(run_dir=str(tmp_path), **settings))
    rows = metric_rows(tmp_path)
    learned = ["action_value_loss"] + (["action_value_distillation"] if critic == "privileged" else [])
    for name in learned:
        losses = [float(row[name]) for row in rows]
        assert all(np.isfinite(losses)) and losses[-1] < losses[0], (name, losses)
    if critic == "shared":
        assert all(float(row["action_value_distillation"]) == 0.0 for row in rows), "no teacher, no distillation"
    assert final["evaluation"]
    assert all(float(row["mirror_kl"]) > 0 for row in rows[1:]), "the policy moves each update"
    saved = [name for path in (tmp_path / "policy").glob("*.safetensors") for name in load_file(str(path))]
    assert saved and not any("action_value_head" in name for name in saved), "the heads only serve training"
    assert make_policy(f"checkpoint:{tmp_path / 'policy'}", preset("standard", num_players=2)).name


def test_a_privileged_mirror_fit_run_resumes_with_its_critics_action_values_and_warm_starts_a_copy(tmp_path):
    from rouba_training.network import load_checkpoint_weights, make_network, network_tensors

    settings = dict(TINY, total_steps=600, final_eval_games=0, eval_interval=0, critic="privileged",
                    policy_objective="mirror_fit", mirror_coef=1.0)
    train(TrainConfig.of(run_dir=str(tmp_path), **settings))
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)["network"]
    assert any(name.startswith("privileged_action_value_head.") for name in saved), "resuming needs the teacher"
    updates = len(metric_rows(tmp_path))
    train(TrainConfig.of(run_dir=str(tmp_path), **dict(settings, total_steps=1200)), resume=True)
    assert len(metric_rows(tmp_path)) > updates
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)["network"]
    copy = make_network("mlp", saved["actor.trunk.0.weight"].shape[1], saved["actor.policy_head.weight"].shape[0],
                        hidden_sizes=(16,), max_players=2, critic="privileged",
                        hidden_size=saved["critic.0.weight"].shape[1] - saved["actor.trunk.0.weight"].shape[1],
                        action_values=True)
    load_checkpoint_weights(copy, str(tmp_path / "policy"))
    for name, tensor in network_tensors(copy.actor).items():
        assert np.array_equal(tensor, saved["actor." + name].numpy()), name
    assert all(torch.equal(tensor, saved["critic." + name]) for name, tensor in copy.critic.state_dict().items())


@pytest.mark.parametrize("settings, message", [
    (dict(mirror_coef=0.0), "mirror_coef must be above 0, got 0.0"),
    (dict(mirror_schedule="linear"), "needs mirror_schedule='constant', got 'linear'"),
    (dict(hand_coef=1.0), "needs hand_coef=0.0, got 1.0"),
    (dict(clip_coef=0.3), "clip_coef=0.3 has no effect with policy_objective=mirror_fit"),
])
def test_the_mirror_fit_refuses_settings_it_cannot_take(settings, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        TrainConfig.of(policy_objective="mirror_fit", **settings)


def test_an_evaluation_cut_off_by_a_stop_is_made_on_resume(tmp_path):
    first = train(TrainConfig.of(run_dir=str(tmp_path), **dict(TINY, total_steps=600, eval_interval=0,
                                                            final_eval_games=0)))
    stopped_at = first["updates"]  # as if a signal had stopped the run when this update's evaluation was due
    assert not (tmp_path / "eval.csv").exists()
    final = train(TrainConfig.of(run_dir=str(tmp_path), **dict(TINY, total_steps=900, eval_interval=stopped_at,
                                                            final_eval_games=0)), resume=True)
    with (tmp_path / "eval.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [(int(r["update"]), r["kind"]) for r in rows][0] == (stopped_at, "periodic")
    assert final["learner_steps"] >= 900


def test_a_run_on_a_solvable_deck_measures_its_nash_conv_at_each_evaluation(tmp_path):
    final = train(TrainConfig.of(run_dir=str(tmp_path), rules="mini", **dict(TINY, total_steps=600)))
    with (tmp_path / "eval.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert {row["kind"] for row in rows} == {"periodic", "final"}
    assert all(0.0 < float(row["nash_conv"]) < 1.0 for row in rows), rows
    assert final["evaluation"][0]["nash_conv"] == float(rows[-1]["nash_conv"])
    standard = train(TrainConfig.of(run_dir=str(tmp_path / "standard"), **dict(TINY, total_steps=300)))
    assert "nash_conv" not in standard["evaluation"][0], "measured only where the game can be solved"
    three = TrainConfig.of(run_dir=str(tmp_path / "mini3"), rules="mini3", **dict(TINY, total_steps=300))
    assert three.run.num_players == (3,), "a deck laid out for three seats plays at three"
    final = train(three)
    assert 0.0 < final["evaluation"][0]["nash_conv"] < 1.0 and final["evaluation"][0]["games"] % 3 == 0


def test_a_hand_head_ships_with_a_rank_network_and_a_search_draws_its_samples_by_it(tmp_path):
    from rouba_training.network import make_network

    settings = dict(TINY, total_steps=400, architecture="rank", hidden_sizes=(16, 8), hand_coef=1.0)
    train(TrainConfig.of(run_dir=str(tmp_path), **settings))
    assert (tmp_path / "policy" / "hand_head.safetensors").is_file()
    policy = make_policy(f"checkpoint:{tmp_path / 'policy'}", preset("standard"))
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    network = make_network("rank", policy.encoder.size, policy.actions.size, hidden_sizes=(16, 8), max_players=2,
                           critic="shared",
                           hidden_size=policy.encoder.hidden_size, hand_head=True)
    network.load_state_dict(saved["network"])
    obs = np.random.default_rng(0).random((4, policy.encoder.size), dtype=np.float32)
    with torch.no_grad():
        expected = network.forward_with_hands(torch.from_numpy(obs))[2].numpy()
    assert np.allclose(policy.predicted_hidden(obs).reshape(4, -1), expected, atol=1e-5), "numpy twin of torch's"
    search = make_policy(f"search:policy={tmp_path / 'policy'},beliefs=hand,samples=4", preset("standard"))
    table, rng = SingleGame(preset("standard")), np.random.default_rng(1)
    table.start_deal(5)
    for _ in range(6):
        seat = table.current
        assert table.play(search.act(table.observation(seat), table.mask(seat), rng), "search")
    with pytest.raises(ValueError, match="has no hand head"):
        make_policy("search:beliefs=hand", preset("standard"))


@pytest.mark.parametrize("catch_signals", [True, False])
def test_a_run_catches_the_stop_signals_unless_its_caller_keeps_them(tmp_path, monkeypatch, catch_signals):
    """The benchmark's trainer section keeps SIGTERM: its stop is not a user's stop-and-checkpoint."""
    installed = []
    real_signal = signal.signal
    monkeypatch.setattr(signal, "signal", lambda number, handler: installed.append(number) or real_signal(number, handler))
    train(TrainConfig.of(run_dir=str(tmp_path), **dict(TINY, total_steps=200, eval_interval=0)),
          catch_signals=catch_signals)
    assert (signal.SIGTERM in installed) == catch_signals


@pytest.mark.parametrize("idle_cores, own_cores, cores, threads", [
    (0.0, 1.0, 2, 1), (0.3, 1.0, 2, 1), (0.9, 1.0, 2, 2), (0.1, 1.9, 2, 2), (5.0, 1.0, 2, 2), (2.2, 1.0, 4, 3),
    (0.0, 1.0, 16, 1), (0.0, 0.2, 2, 1)])
def test_torch_gets_the_cores_no_other_process_used_during_collection(monkeypatch, idle_cores, own_cores, cores,
                                                                       threads):
    from rouba_training import threads as threads_module

    clock = iter([100.0, 101.0])  # one second of collection
    own = iter([10.0, 10.0 + own_cores])  # this process's CPU seconds
    ticks = iter([0, 0, round(idle_cores * 100)])  # at construction, at the start, after the collection
    monkeypatch.setattr(threads_module, "usable_cores", lambda: set(range(cores)))
    monkeypatch.setattr(threads_module, "idle_ticks", lambda cores: next(ticks))
    monkeypatch.setattr(threads_module.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(threads_module.time, "process_time", lambda: next(own))
    monkeypatch.setattr(threads_module.os, "sysconf", lambda name: 100)
    before = torch.get_num_threads()
    try:
        chooser = threads_module.TorchThreads(0)
        chooser.collection_started()
        assert chooser.before_update() == threads == torch.get_num_threads()
        assert threads_module.TorchThreads(5).before_update() == 5, "a count given is kept"
    finally:
        torch.set_num_threads(before)


def test_without_proc_stat_torch_gets_a_thread_per_four_cores(monkeypatch):
    from rouba_training import threads as threads_module

    monkeypatch.setattr(threads_module, "idle_ticks", lambda cores: None)
    before = torch.get_num_threads()
    try:
        for cores, threads in ((1, 1), (2, 1), (8, 2), (16, 4)):
            monkeypatch.setattr(threads_module, "usable_cores", lambda cores=cores: set(range(cores)))
            chooser = threads_module.TorchThreads(0)
            chooser.collection_started()
            assert chooser.before_update() == threads
    finally:
        torch.set_num_threads(before)


def test_a_run_with_nothing_set_gives_torch_the_idle_cores(tmp_path, monkeypatch):
    from rouba_training import threads as threads_module

    ticks = iter(range(0, 10**12, 10**9))  # every core idle all the time
    monkeypatch.setattr(threads_module, "usable_cores", lambda: {0, 1, 2})
    monkeypatch.setattr(threads_module, "idle_ticks", lambda cores: next(ticks))
    before = torch.get_num_threads()
    try:
        train(TrainConfig.of(run_dir=str(tmp_path), **dict(TINY, total_steps=100, final_eval_games=0, eval_interval=0)))
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def test_a_resumed_runs_summary_counts_every_sessions_evaluations_and_its_shortening(tmp_path):
    """Periodic evaluations before a stop count in the final summary; a resume that changes total_steps is
    recorded there."""
    run = tmp_path / "run"
    config = {**TINY, "total_steps": 1500, "eval_interval": 1, "eval_games": 2000, "final_eval_games": 0}
    first = train(TrainConfig.of(run_dir=str(run), **{**config, "total_steps": 600}))
    assert first["seconds_periodic_evaluations"] > 0 and first["total_steps_asked"] == [600]
    final = train(TrainConfig.of(run_dir=str(run), **config), resume=True)
    assert final["seconds_periodic_evaluations"] >= first["seconds_periodic_evaluations"] > 0
    assert final["total_steps"] == 1500 and final["total_steps_asked"] == [600, 1500]
    assert json.loads((run / "final_eval.json").read_text())["total_steps_asked"] == [600, 1500]
