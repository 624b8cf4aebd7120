"""Smoke run of the ``rouba-benchmark`` command: it runs, writes its JSON, and every rate is positive (no timing asserts)."""

from __future__ import annotations

import json
import subprocess

import pytest
from pathlib import Path

pytestmark = pytest.mark.slow  # each test starts a process

ROOT = Path(__file__).resolve().parents[2]


def test_benchmark_quick_writes_json(tmp_path):
    out = tmp_path / "nested" / "results.json"
    completed = subprocess.run(
        ["rouba-benchmark", "--quick", "--repeats", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    assert "steps/s" in completed.stdout
    data = json.loads(out.read_text())
    assert [p.name for p in out.parent.iterdir()] == ["results.json"]  # no temp file left behind
    assert set(data["sections"]) == {"aec_wrapped", "aec_raw", "aec_vs_openspiel", "engine", "tree", "vector",
                                     "vector_env", "evaluation", "trainer", "sb3"}
    assert data["machine"]["numpy"] and data["settings"]["quick"] is True
    tree, = data["sections"].pop("tree")["rows"]
    assert tree["histories"] == 77_280 and tree["build_seconds"] > 0  # small's whole tree
    ours, idle, openspiel = data["sections"]["aec_vs_openspiel"]["rows"]
    assert idle["ratio"] == ours["steps_per_s"] / idle["steps_per_s"]
    assert openspiel["ratio"] == ours["steps_per_s"] / openspiel["steps_per_s"]  # the dev extra installs OpenSpiel
    for name, section in data["sections"].items():
        assert section["rows"], name
        for row in section["rows"]:
            if name in ("vector_env", "evaluation"):  # ratios against a baseline measured in the same run
                baseline = row.get("baseline_steps_per_s", row.get("baseline_games_per_s"))
                assert row["ratio"] > 0 and baseline > 0 and row["runs"], (name, row["variant"])
                continue
            assert row["steps_per_s"] > 0 and row.get("games_per_s", 0) >= 0, (name, row["variant"])
            assert row["runs"] and all(run["steps"] > 0 for run in row["runs"])
    assert {row["num_envs"] for row in data["sections"]["vector_env"]["rows"]} == {256, 4096}
    vector_rows = data["sections"]["vector"]["rows"]
    assert {row["batch_size"] for row in vector_rows} == {1, 256}
    assert all(row["step_only_per_s"] >= row["steps_per_s"] for row in vector_rows)


def test_benchmark_only_selects_sections(tmp_path):
    out = tmp_path / "engine.json"
    completed = subprocess.run(
        ["rouba-benchmark", "--quick", "--repeats", "1", "--only", "engine", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr
    assert list(json.loads(out.read_text())["sections"]) == ["engine"]


def test_benchmark_writes_no_file_unless_asked(tmp_path):
    completed = subprocess.run(
        ["rouba-benchmark", "--quick", "--repeats", "1", "--only", "engine"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    assert "steps/s" in completed.stdout and list(tmp_path.iterdir()) == []
    refused = subprocess.run(["rouba-benchmark", "--quick", "--only", "engine", "--json", "/proc/x.json"],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith("error: cannot write /proc/x.json")


@pytest.mark.parametrize("flags, message", [
    (["--steps", "0"], "--steps must be at least 1"), (["--steps", "-1"], "--steps must be at least 1"),
    (["--env-steps", "0"], "--env-steps must be at least 1"), (["--min-calls", "0"], "--min-calls must be"),
    (["--time-limit", "nan"], "--time-limit must be a finite"), (["--time-limit", "-1"], "--time-limit must be"),
    (["--trainer-steps", "0"], "--trainer-steps must be"), (["--trainer-repeats", "0"], "--trainer-repeats must"),
    (["--players", "9"], "--players must be in 2..8"), (["--seed", "-1"], "--seed must be in 0..9223372036854775807"),
    (["--seed", str(2**63)], "--seed must be in 0..9223372036854775807, got 9223372036854775808"),
    (["--batch-sizes", "0"], "batch sizes"), (["--batch-sizes", "-3"], "batch sizes"),
    (["--batch-sizes", "99999999999"], "batch sizes"), (["--cpu", "-1"], "--cpu must be 0 or more"),
    (["--cpu", "4096"], "--cpu 4096 is not a core this process may run on (allowed: "),
])
def test_benchmark_refuses_bad_settings_before_measuring(flags, message, tmp_path):
    completed = subprocess.run(["rouba-benchmark", *flags, "--json", str(tmp_path / "out.json")],
                               capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert completed.returncode == 2 and message in completed.stderr, completed.stderr
    assert "Traceback" not in completed.stderr and "[benchmark]" not in completed.stderr
    assert not (tmp_path / "out.json").exists()
