"""A masked loop over a Gymnasium vector environment: four games at once against the heuristic player.

    python examples/gym_vector_loop.py

`gymnasium.make_vec("RoubaMonte-v0", ...)` runs the games on the batched
engine and resets a finished game in the same step, so every row of
``info["action_mask"]`` always has a legal action.
"""

import gymnasium
import numpy as np

import rouba_env  # noqa: F401  (registers RoubaMonte-v0)

envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=4, opponents="heuristic")
obs, info = envs.reset(seed=0)
rng = np.random.default_rng(0)
rewards = []
while len(rewards) < 20:
    mask = info["action_mask"].astype(bool)
    actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
    obs, reward, terminated, truncated, info = envs.step(actions)
    rewards += reward[terminated].tolist()
envs.close()
print(f"random play vs heuristic: {len(rewards)} games, mean reward {np.mean(rewards):+.2f} (+1 win, -1 loss)")
