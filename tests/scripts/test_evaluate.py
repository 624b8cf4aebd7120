"""Smoke runs of the ``rouba-evaluate`` command."""

import json
import subprocess

import pytest
from pathlib import Path

pytestmark = pytest.mark.slow  # each test starts a process

ROOT = Path(__file__).resolve().parents[2]


def evaluate(*args):
    return subprocess.run(["rouba-evaluate", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_tiny_run_prints_a_table_and_writes_json(tmp_path):
    out = tmp_path / "eval" / "result.json"
    result = evaluate("--players", "greedy", "random", "--games", "4", "--seed", "3", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "greedy" in result.stdout and "win %" in result.stdout and str(out) in result.stdout
    data = json.loads(out.read_text())
    assert data["games"] == 4 and data["players"] == ["greedy", "random"] and data["seed"] == 3
    assert {row["label"] for row in data["results"]} == {"greedy", "random"}
    assert not list(out.parent.glob("*.tmp")), "written atomically, no temp file left"


def test_specs_are_cycled_over_more_seats(tmp_path):
    out = tmp_path / "four.json"
    result = evaluate("--players", "greedy", "random", "--num-players", "4", "--games", "4",
                      "--rules", "take_all", "--no-progress", "--json", str(out))
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["players"] == ["greedy", "random", "greedy#2", "random#2"]
    assert data["rules"]["take_all"] is True and data["ratings"]


def test_bad_spec_is_a_clean_error(tmp_path):
    result = evaluate("--players", "wizard", "random", "--games", "2", "--json", str(tmp_path / "x.json"))
    assert result.returncode == 2
    assert "unknown player 'wizard'" in result.stderr and "Traceback" not in result.stderr
    bad_option = evaluate("--players", "expert:samples=zero", "random", "--games", "2")
    assert bad_option.returncode == 2 and "samples" in bad_option.stderr and "Traceback" not in bad_option.stderr
    assert not (tmp_path / "x.json").exists()
