"""``gymnasium.make_vec("RoubaMonte-v0")``, sync and async: a masked loop always has a legal action to take."""

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import rouba_env  # noqa: F401  (registers RoubaMonte-v0)

STEPS = 240  # about five games per sub-environment


def masked_loop(envs, seed=0, steps=STEPS):
    """The README's loop: a random legal action per sub-environment from ``info["action_mask"]``."""
    rng = np.random.default_rng(seed)
    obs, info = envs.reset(seed=seed)
    finished = 0
    for _ in range(steps):
        mask = info["action_mask"].astype(bool)
        assert mask.any(axis=1).all(), "every sub-environment has a legal action"
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        obs, reward, terminated, truncated, info = envs.step(actions)
        finished += int(terminated.sum())
        assert obs.shape == envs.observation_space.shape
    envs.close()
    return finished


def test_make_vec_default_resets_in_the_same_step():
    envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=3)
    assert masked_loop(envs) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_sync_and_async_with_same_step_autoreset(mode):
    envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=2, vectorization_mode=mode,
                              vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, opponents="greedy")
    assert masked_loop(envs) >= 4


def test_next_step_autoreset_only_empties_the_mask_when_the_action_is_ignored():
    envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=3, vectorization_mode="sync")
    rng = np.random.default_rng(1)
    obs, info = envs.reset(seed=1)
    previous_terminated = np.zeros(3, dtype=bool)
    empties = 0
    for _ in range(STEPS):
        mask = info["action_mask"].astype(bool)
        empty = ~mask.any(axis=1)
        assert np.array_equal(empty, previous_terminated), "only a finished game has an empty mask"
        empties += int(empty.sum())
        actions = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask])
        obs, reward, previous_terminated, truncated, info = envs.step(actions)
    assert empties >= 6


def test_bad_vector_arguments_name_the_value():
    with pytest.raises(ValueError, match="unknown reward"):
        gymnasium.make_vec("RoubaMonte-v0", num_envs=2, reward="score")
