"""A Stable-Baselines3 ``VecEnv`` over the batched vector environment: sb3 and MaskablePPO train on it directly.

    from sb3_contrib import MaskablePPO
    from rouba_env.envs.sb3 import RoubaSB3VecEnv

    env = RoubaSB3VecEnv(64, opponents="heuristic")
    MaskablePPO("MlpPolicy", env).learn(100_000)

It follows sb3's conventions: a finished game is dealt anew in the same step
and its last observation is ``infos[i]["terminal_observation"]``;
``env.seed(s)`` seeds game ``i`` with ``s + i`` at the next ``reset``;
masks come from `RoubaSB3VecEnv.action_masks` and from
``env_method("action_masks")`` (what sb3-contrib's ``get_action_masks`` calls).
Needs stable-baselines3 (``pip install sb3-contrib`` brings it).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as error:  # pragma: no cover - exercised only without sb3
    raise ImportError("rouba_env.envs.sb3 needs stable-baselines3: pip install stable-baselines3 "
                      "(or sb3-contrib, for MaskablePPO)") from error

from gymnasium.vector import AutoresetMode

from rouba_env.checks import as_seed
from rouba_env.envs.vector_env import RoubaVectorEnv


class RoubaSB3VecEnv(VecEnv):
    """``num_envs`` games of a `RoubaVectorEnv` (same options) as an sb3 ``VecEnv``."""

    def __init__(self, num_envs: int = 1, **env_kwargs):
        mode = env_kwargs.pop("autoreset_mode", AutoresetMode.SAME_STEP)
        if mode not in (AutoresetMode.SAME_STEP, "same_step", AutoresetMode.SAME_STEP.value):
            raise ValueError(f"an sb3 VecEnv resets a finished game in the same step; autoreset_mode={mode!r} "
                             f"cannot be had here (RoubaVectorEnv offers next_step)")
        self.vector = RoubaVectorEnv(num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **env_kwargs)
        self.render_mode = None
        super().__init__(self.vector.num_envs, self.vector.single_observation_space,
                         self.vector.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self):
        """Deal every game (seeded by `seed` if it was called); the observations."""
        seeds = self._seeds if any(seed is not None for seed in self._seeds) else None
        obs, info = self.vector.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{"action_mask": mask} for mask in info["action_mask"]]
        return obs

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds game ``i`` with ``seed + i`` at the next `reset` (sb3's convention)."""
        return super().seed(as_seed(seed))

    def step_async(self, actions: np.ndarray) -> None:
        actions = np.asarray(actions)
        if actions.shape not in ((self.num_envs,), (self.num_envs, 1)):
            raise ValueError(f"actions must be one per game, shape ({self.num_envs},) (or ({self.num_envs}, 1)), "
                             f"got shape {actions.shape}")
        self._actions = actions.reshape(self.num_envs)

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("call step_async() before step_wait()")
        obs, rewards, terminated, truncated, info = self.vector.step(self._actions)
        self._actions = None
        infos: list[dict[str, Any]] = [{"seat": int(seat)} for seat in info["seat"]]
        for i in np.flatnonzero(terminated | truncated):
            final = info["final_obs"][i]
            infos[i] = {"terminal_observation": final, "TimeLimit.truncated": bool(truncated[i]),
                        "scores": info["final_info"]["scores"][i],
                        "illegal_action": bool(info["final_info"]["illegal_action"][i]),
                        "seat": int(info["final_info"]["seat"][i])}  # the finished game's learner seat
        return obs, rewards.astype(np.float32), terminated | truncated, infos

    def action_masks(self) -> np.ndarray:
        """bool[N, A]: each game's legal actions for the learner."""
        return self.vector.action_masks()

    def close(self) -> None:
        """Close the vector environment underneath."""
        self.vector.close()

    def _targets(self, indices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        targets = self._targets(indices)
        if attr_name == "seat":  # the learner's seat, per game
            return [int(self.vector.learner[i]) for i in targets]
        if attr_name == "render_mode":
            return [self.render_mode for _ in targets]
        if not hasattr(self.vector, attr_name):
            raise AttributeError(f"RoubaSB3VecEnv games have no attribute {attr_name!r}; per game: 'seat'; shared: "
                                 f"the RoubaVectorEnv's settings (rules, num_envs, dict_observation, ...)")
        value = getattr(self.vector, attr_name)
        return [value for _ in targets]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"the games of a RoubaSB3VecEnv share their settings; {attr_name!r} cannot be set "
                             f"per game")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        targets = self._targets(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in targets]
        raise AttributeError(f"RoubaSB3VecEnv games have no per-game method {method_name!r}; "
                             f"the only one is 'action_masks'")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._targets(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]
