"""``examples/rllib_selfplay.py`` runs once, as a user would start it (a tiny budget)."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_rllib_selfplay_example_runs(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "rllib_selfplay.py"), "--num-players", "3",
                             "--iterations", "2", "--snapshot-interval", "1", "--train-batch-size", "300",
                             "--num-env-runners", "0", "--eval-games", "6"],
                            capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "IllegalActionWarning" not in result.stderr, "no warning of ours (RLlib's pre-check is off)"
    assert "heuristic" in result.stdout and "pool None" not in result.stdout
    assert "a project checkpoint" in result.stdout and (tmp_path / "runs/rllib_selfplay/policy/metadata.json").is_file()
