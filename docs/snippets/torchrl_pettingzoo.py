"""TorchRL's PettingZooWrapper on the AEC environment, masks on (use_mask=True)."""
from torchrl.envs import PettingZooWrapper

import rouba_env

env = PettingZooWrapper(env=rouba_env.env(num_players=2, illegal_action="raise"), use_mask=True, categorical_actions=True)
rollout = env.rollout(100)  # random actions drawn within each turn's mask
print("TorchRL PettingZoo rollout of", rollout.batch_size[0], "steps")
