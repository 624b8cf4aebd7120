"""A Gymnasium vector loop on the batched engine: 256 games against checkpoint:2p, masked random actions."""
import gymnasium
import numpy as np

import rouba_env  # noqa: F401  (registers RoubaMonte-v0)

envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=256, opponents="checkpoint:2p")
rng = np.random.default_rng(0)
obs, info = envs.reset(seed=0)
finished = []
while len(finished) < 512:
    mask = info["action_mask"].astype(bool)
    actions = (rng.random(mask.shape) * mask).argmax(axis=1)  # a random legal action in every game
    obs, reward, terminated, truncated, info = envs.step(actions)
    finished += reward[terminated].tolist()  # same-step autoreset: the row already holds the next game
print(f"random play vs checkpoint:2p: {len(finished)} games, mean reward {np.mean(finished):+.2f}")
