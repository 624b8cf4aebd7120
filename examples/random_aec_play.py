"""Random legal play in the PettingZoo AEC environment, three players, with card faces on screen.

    python examples/random_aec_play.py
"""

import numpy as np

import rouba_env

env = rouba_env.env(num_players=3, render_mode="ansi")
env.reset(seed=42)
rng = np.random.default_rng(0)
for agent in env.agent_iter():
    obs, reward, terminated, truncated, info = env.last()
    action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
    env.step(action)
print(env.render())
print("scores:", info["scores"])
