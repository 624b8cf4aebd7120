"""Every example runs once, as a user would start it."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {
    "random_aec_play.py": ([], "scores:"),
    "gym_vector_loop.py": ([], "random play vs heuristic: 2"),
    "checkpoint_opponent.py": ([], "the 2p policy wins"),
    "vector_game.py": ([], "games,"),
    "sb3_maskable_ppo.py": (["--steps", "256", "--n-steps", "128", "--games", "8"], "win rate vs random:"),
    "record_video.py": (["--episodes", "1", "--folder", "videos"], "recorded 1 videos in videos"),
}


def test_every_example_is_listed():
    assert sorted(p.name for p in (ROOT / "examples").glob("*.py")) == sorted([*EXAMPLES, "rllib_selfplay.py"])
    assert (ROOT / "tests" / "ray" / "test_rllib_example.py").is_file(), "rllib_selfplay.py runs in tests/ray"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name, tmp_path):
    arguments, expected = EXAMPLES[name]
    result = subprocess.run([sys.executable, str(ROOT / "examples" / name), *arguments], capture_output=True,
                            text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout
