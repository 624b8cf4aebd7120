"""A shipped checkpoint as a player: the 2-player policy (numpy only, no torch) against the heuristic.

    python examples/checkpoint_opponent.py
"""

import numpy as np

import rouba_env

policy = rouba_env.load_policy("2p")  # a shipped name or a checkpoint folder
env = rouba_env.SingleAgentEnv(opponents="heuristic", seat=0)
rng = np.random.default_rng(0)
wins = 0
for game in range(10):
    obs, info = env.reset(seed=game)
    done = False
    while not done:
        action = policy.act(obs, info["action_mask"], rng)
        obs, reward, done, _, info = env.step(action)
    wins += reward > 0
    print(f"game {game}: scores {info['scores']} (the policy is seat 0)")
print(f"the 2p policy won {wins} of 10 games against heuristic")

# The same policy in a duplicate-deal evaluation, as a spec:
result = rouba_env.evaluate(["checkpoint:2p", "heuristic"], games=40, seed=0)
print(result.format_table())
