"""The batched engine: thousands of games stepped together by compiled kernels, random legal play.

    python examples/vector_game.py
"""

import time

import numpy as np

import rouba_env

game = rouba_env.VectorGame(rouba_env.preset("standard"), batch_size=4096, seed=0)
game.reset()
rng = np.random.default_rng(0)
actions = game.random_actions(rng)  # the first call compiles the kernels (or loads them from the cache)
finished, steps, started = 0, 0, time.perf_counter()
while finished < 20_000:
    game.random_actions(rng, out=actions)
    game.step(actions)
    finished += int(game.done.sum())
    steps += game.batch_size
seconds = time.perf_counter() - started
print(f"{finished} games, {steps} moves in {seconds:.1f} s; obs {game.obs.shape}, mask {game.mask.shape}")
print(f"game k of slot i replays exactly as rouba_env.start_game(rules, slot_deal_seed(seed, i, k)); "
      f"slot 0 now plays deal seed {int(game.deal_seeds[0])}")
