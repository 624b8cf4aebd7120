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


def test_maskable_ppo_learns_on_the_batched_sb3_vec_env():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from rouba_env.envs.sb3 import RoubaSB3VecEnv

    env = RoubaSB3VecEnv(16, opponents="heuristic")
    env.seed(3)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256, n_epochs=1, seed=0, verbose=0, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    obs = env.reset()
    finished = 0
    for _ in range(60):
        masks = get_action_masks(env)
        assert masks.shape == (16, env.action_space.n) and masks.any(axis=1).all()
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[np.arange(16), actions].all(), "masked predictions are legal"
        obs, rewards, dones, infos = env.step(actions)
        for i in np.flatnonzero(dones):
            finished += 1
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert rewards[i] in (-1.0, 0.0, 1.0)
    assert finished >= 16


def test_sb3_vec_env_seeds_like_sb3_and_refuses_what_it_cannot_do():
    from rouba_env.envs.sb3 import RoubaSB3VecEnv

    first, second = RoubaSB3VecEnv(4, opponents="greedy"), RoubaSB3VecEnv(4, opponents="greedy")
    first.seed(11)
    second.seed(11)
    np.testing.assert_array_equal(first.reset(), second.reset())
    assert first.env_is_wrapped(object) == [False] * 4
    assert first.get_attr("num_envs", indices=[0, 1]) == [4, 4]
    with pytest.raises(AttributeError, match="action_masks"):
        first.env_method("render")
    with pytest.raises(AttributeError, match="share their settings"):
        first.set_attr("seat", 1)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_sb3_vec_env_refuses_a_bad_seed_when_it_is_given(seed):
    from rouba_env.envs.sb3 import RoubaSB3VecEnv

    env = RoubaSB3VecEnv(2, opponents="greedy")
    with pytest.raises(ValueError, match=f"seed must be None or an int >= 0, got {seed!r}"):
        env.seed(seed)


def test_sb3_vec_env_wants_one_action_per_game():
    from rouba_env.envs.sb3 import RoubaSB3VecEnv

    env = RoubaSB3VecEnv(2, opponents="greedy")
    env.reset()
    with pytest.raises(ValueError, match=r"one per game, shape \(2,\) .* got shape \(1,\)"):
        env.step_async(np.array([0]))
    first = env.action_masks().argmax(axis=1)
    env.step_async(first[:, None])  # sb3's (n, 1) of a Discrete space is one action per game too
    assert len(env.step_wait()[0]) == 2
    with pytest.raises(ValueError, match=r"got shape \(1, 2\)"):
        env.step_async(first[None, :])


def test_sb3_vec_env_infos_name_the_learners_seat_every_step():
    from rouba_env.envs.sb3 import RoubaSB3VecEnv

    env = RoubaSB3VecEnv(4, opponents="random", rules="mini")
    env.seed(3)
    env.reset()
    finished_seats = []
    for _ in range(40):
        seats = env.get_attr("seat")
        env.step_async(env.action_masks().argmax(axis=1))
        _obs, _rewards, dones, infos = env.step_wait()
        for index, (done, info) in enumerate(zip(dones, infos)):
            assert "seat" in info
            if done:
                assert info["seat"] == seats[index], "a finished game names the seat it was played from"
                finished_seats.append(info["seat"])
            else:
                assert info["seat"] == env.get_attr("seat", [index])[0]
    assert finished_seats, "some games ended"
