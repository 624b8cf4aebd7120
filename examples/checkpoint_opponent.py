"""A shipped checkpoint as a player: the 2-player policy (numpy only, no torch) against the heuristic.

    python examples/checkpoint_opponent.py            # 400 duplicate games, then three single games

Strength first: the win rate over 400 duplicate-deal games with its Wilson 95%
interval. Then three single games played through the Gymnasium environment,
to show the loop; three games say little (a stronger player loses many single
games on its cards alone).
"""

import numpy as np

import rouba_env

# Its strength: the policy as a spec, over duplicate deals (each deal played from both seats).
result = rouba_env.evaluate(["checkpoint:2p", "heuristic"], games=400, seed=0)
print(result.format_table())
stats = result.players[0]
print(f"the 2p policy wins {stats.win_rate:.1%} [{stats.win_low:.1%}, {stats.win_high:.1%}] of "
      f"{stats.games} duplicate games against heuristic")

# The same policy loaded as an object, playing seat 0 of the Gymnasium env against heuristic in seat 1.
policy = rouba_env.load_policy("2p")  # a shipped name, a checkpoint folder or a training run folder
env = rouba_env.SingleAgentEnv(opponents="heuristic", seat=0)
rng = np.random.default_rng(0)
for game in range(3):
    obs, info = env.reset(seed=game)
    done = False
    while not done:
        action = policy.act(obs, info["action_mask"], rng)
        obs, reward, done, _, info = env.step(action)
    mine, theirs = info["scores"]
    print(f"single game {game}: 2p (seat 0) {mine} cards, heuristic (seat 1) {theirs}; reward {reward:+.0f}")
