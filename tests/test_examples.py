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
    "solve_mini.py": ([], "heuristic NashConv 0.0571; wins 48.6% against the equilibrium"),
    "sb3_maskable_ppo.py": (["--steps", "256", "--n-steps", "128", "--games", "8"], "win rate vs random:"),
    "record_video.py": (["--episodes", "1", "--folder", "videos"], "recorded 1 videos in videos"),
    "cleanrl_ppo.py": (["--total-timesteps", "8192", "--num-envs", "64", "--eval-games", "40"],
                       "win rate vs heuristic:"),
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


@pytest.mark.parametrize("name, arguments, message", [
    ("cleanrl_ppo.py", ["--num-minibatches", "0"], "--num-minibatches must be at least 1, got 0"),
    ("cleanrl_ppo.py", ["--total-timesteps", "-5"], "--total-timesteps must be at least 1, got -5"),
    ("cleanrl_ppo.py", ["--total-timesteps", "100"], "less than one batch"),
    ("cleanrl_ppo.py", ["--eval-games", "-1"], "--eval-games must be at least 1, got -1"),
    ("sb3_maskable_ppo.py", ["--n-steps", "0"], "--n-steps must be at least 2, got 0"),
    ("sb3_maskable_ppo.py", ["--steps", "0"], "--steps 0 is less than one rollout"),
])
def test_an_example_refuses_bad_flags_before_training(name, arguments, message, tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / name), *arguments], capture_output=True,
                            text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "steps/s" not in result.stdout


SNIPPETS = {  # docs/snippets/*.py (the "Train with your own RL library" page): the library each one needs
    "sb3_vec_env.py": "sb3_contrib",
    "gymnasium_vector.py": "gymnasium",
    "torchrl_batched.py": "torchrl",
    "torchrl_gym.py": "torchrl",
    "torchrl_pettingzoo.py": "torchrl",
    "tianshou_pettingzoo.py": "tianshou",
}


def test_every_snippet_is_listed_and_shown():
    assert sorted(p.name for p in (ROOT / "docs" / "snippets").glob("*.py")) == sorted(SNIPPETS)
    page = (ROOT / "docs" / "libraries.md").read_text()
    for name in SNIPPETS:
        assert f'--8<-- "docs/snippets/{name}"' in page


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_runs_where_its_library_is_installed(name, tmp_path):
    library = SNIPPETS[name]
    pytest.importorskip(library, reason=f"{library} is not installed (pip install {library} runs docs/snippets/{name})")
    result = subprocess.run([sys.executable, str(ROOT / "docs" / "snippets" / name)], capture_output=True,
                            text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
