"""A real client: sb3-contrib's MaskablePPO trains on RoubaMonte-v0."""

import numpy as np
import pytest

sb3_contrib = pytest.importorskip("sb3_contrib")


@pytest.mark.slow
def test_maskable_ppo_runs_a_few_thousand_steps():
    import gymnasium
    from sb3_contrib import MaskablePPO

    import rouba_env  # noqa: F401  (registers RoubaMonte-v0)

    env = gymnasium.make("RoubaMonte-v0", opponents="random", seat="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, verbose=0, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    obs, info = env.reset(seed=1)
    for _ in range(30):
        mask = env.unwrapped.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)], "the trained model only picks legal actions when masked"
        obs, reward, terminated, truncated, info = env.step(int(action))
        if terminated:
            assert reward in (-1.0, 0.0, 1.0)
            obs, info = env.reset()


@pytest.mark.slow
def test_example_script_trains_and_reports_a_win_rate():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, str(root / "examples" / "sb3_maskable_ppo.py"), "--steps", "256", "--n-steps", "128",
                             "--games", "8"], capture_output=True, text=True, timeout=300, cwd=root)
    assert result.returncode == 0, result.stderr
    assert "win rate vs random:" in result.stdout and "duplicate games" in result.stdout
