"""Tianshou's PettingZooEnv: each observation carries the legal actions as ``mask``."""
import numpy as np
from tianshou.env import PettingZooEnv

import rouba_env

env = PettingZooEnv(rouba_env.env(num_players=2))
rng = np.random.default_rng(0)
obs, info = env.reset(seed=0)
moves = 0
while True:
    action = int(rng.choice(np.flatnonzero(obs["mask"])))  # what tianshou's masked policies read
    obs, rewards, terminated, truncated, info = env.step(action)
    moves += 1
    if terminated or truncated:
        break
print("Tianshou PettingZooEnv game of", moves, "moves; final rewards", list(rewards))
