"""TorchRL on the batched engine: a small EnvBase over RoubaVectorEnv (N games per step, masks included)."""
import numpy as np
import torch
from tensordict import TensorDict
from torchrl.data import Binary, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase, TransformedEnv
from torchrl.envs.transforms import ActionMask
from torchrl.envs.utils import check_env_specs

from rouba_env.envs.vector_env import RoubaVectorEnv


class RoubaBatchedEnv(EnvBase):
    """``num_envs`` games stepped together; TorchRL resets the finished ones through ``_reset``."""

    def __init__(self, num_envs: int = 64, **env_kwargs):
        super().__init__(batch_size=torch.Size([num_envs]))
        # next_step: a finished game keeps its last observation until TorchRL asks for its reset
        self.games = RoubaVectorEnv(num_envs, autoreset_mode="next_step", **env_kwargs)
        size, actions = self.games.single_observation_space.shape[0], self.games.single_action_space.n
        self.observation_spec = Composite(observation=Unbounded((num_envs, size)),
                                          action_mask=Binary(actions, (num_envs, actions), dtype=torch.bool),
                                          shape=(num_envs,))
        self.action_spec = Categorical(actions, (num_envs,))
        self.reward_spec = Unbounded((num_envs, 1))
        flag = Categorical(2, (num_envs, 1), dtype=torch.bool)
        self.done_spec = Composite(done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=(num_envs,))
        self._seed: int | None = None
        self._dealt = False

    def _observation(self, obs, mask, **fields) -> TensorDict:
        return TensorDict({"observation": torch.as_tensor(obs), "action_mask": torch.as_tensor(mask, dtype=torch.bool),
                           **fields}, batch_size=self.batch_size)

    def _reset(self, tensordict=None, **kwargs) -> TensorDict:
        mask = None if tensordict is None or "_reset" not in tensordict.keys() else \
            tensordict["_reset"].reshape(-1).numpy()
        if not self._dealt or mask is None or mask.all():
            obs, info = self.games.reset(seed=self._seed)
            self._dealt, self._seed = True, None
        else:
            obs, info = self.games.reset(options={"reset_mask": mask})
        done = torch.zeros((*self.batch_size, 1), dtype=torch.bool)
        return self._observation(obs, info["action_mask"], done=done, terminated=done.clone(),
                                 truncated=done.clone())

    def _step(self, tensordict: TensorDict) -> TensorDict:
        obs, reward, terminated, truncated, info = self.games.step(tensordict["action"].numpy())
        column = lambda values: torch.as_tensor(values).reshape(-1, 1)  # noqa: E731
        return self._observation(obs, info["action_mask"], reward=column(reward.astype(np.float32)),
                                 done=column(terminated | truncated), terminated=column(terminated),
                                 truncated=column(truncated))

    def _set_seed(self, seed: int | None) -> None:
        self._seed = seed  # game i of the next full reset is dealt from seed + i


env = TransformedEnv(RoubaBatchedEnv(num_envs=64, opponents="heuristic", illegal_action="raise"), ActionMask())
check_env_specs(env)
env.set_seed(0)
rollout = env.rollout(200, break_when_any_done=False)  # finished games are dealt anew; masked random actions
print("TorchRL batched rollout:", tuple(rollout.batch_size), "games x steps,",
      int(rollout["next", "done"].sum()), "games finished")
