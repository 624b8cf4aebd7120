"""TorchRL's GymEnv: the mask in the observation (dict_observation=True) and the ActionMask transform."""
from torchrl.envs import GymEnv, TransformedEnv
from torchrl.envs.transforms import ActionMask

import rouba_env  # noqa: F401  (registers RoubaMonte-v0)

# illegal_action="raise": an illegal move would raise instead of ending the game quietly
env = TransformedEnv(GymEnv("RoubaMonte-v0", opponents="heuristic", dict_observation=True, illegal_action="raise"),
                     ActionMask())
rollout = env.rollout(100)  # random actions from the masked action spec: always legal
print("TorchRL rollout of", rollout.batch_size[0], "steps")
