"""sb3-contrib's MaskablePPO on the batched SB3 VecEnv: 64 games against heuristic at once."""
from sb3_contrib import MaskablePPO

from rouba_env.envs.sb3 import RoubaSB3VecEnv

env = RoubaSB3VecEnv(64, opponents="heuristic", seat="random")
env.seed(0)  # game i gets seed 0 + i at the next reset
model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=512, n_epochs=2, verbose=0, device="cpu")
model.learn(total_timesteps=4096)  # masks come from env.action_masks(), as MaskablePPO asks for them
print("MaskablePPO trained", model.num_timesteps, "steps")
