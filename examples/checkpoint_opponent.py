"""A shipped checkpoint as a player: the 2-player policy (numpy only, no torch) against the heuristic.

    python examples/checkpoint_opponent.py            # three games shown move by move, then 400 duplicate games

A handful of games says little about strength (one player can win 3 of 10 or
8 of 10 by luck), so the win rate comes from the duplicate-deal evaluator,
with its Wilson 95% interval.
"""

import numpy as np

import rouba_env

policy = rouba_env.load_policy("2p")  # a shipped name, a checkpoint folder or a training run folder
env = rouba_env.SingleAgentEnv(opponents="heuristic", seat=0)
rng = np.random.default_rng(0)
for game in range(3):
    obs, info = env.reset(seed=game)
    done = False
    while not done:
        action = policy.act(obs, info["action_mask"], rng)
        obs, reward, done, _, info = env.step(action)
    print(f"game {game}: scores {info['scores']} (the policy is seat 0), reward {reward:+.0f}")

# Its strength: the same policy as a spec, over duplicate deals (each deal played from both seats).
result = rouba_env.evaluate(["checkpoint:2p", "heuristic"], games=400, seed=0)
print(result.format_table())
stats = result.players[0]
print(f"the 2p policy wins {stats.win_rate:.1%} [{stats.win_low:.1%}, {stats.win_high:.1%}] of "
      f"{stats.games} duplicate games against heuristic")
