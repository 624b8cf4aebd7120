"""Gymnasium vector environments of `SingleAgentEnv` whose action masks are always usable.

``gymnasium.make_vec("RoubaMonte-v0", num_envs=N)`` comes here (the id's
``vector_entry_point``). The sub-environments reset in the same step as their
episode ends (``AutoresetMode.SAME_STEP``): every row of ``info["action_mask"]``
is then the mask of the decision the next ``step`` makes, never the empty mask
of a finished game. The finished episode's last observation and info are in
``info["final_obs"]`` and ``info["final_info"]``.

With ``vectorization_mode="sync"`` or ``"async"`` gymnasium builds the vector
environment itself and resets on the *next* step by default; pass
``vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}``
for the same guarantee, or give any action where a row's mask is empty (that
step only resets the game and ignores the action).
"""

from __future__ import annotations

import gymnasium
from gymnasium.vector import AutoresetMode

from rouba_env.checks import check_int


def make_vector_env(num_envs: int, asynchronous: bool = False, **env_kwargs) -> gymnasium.vector.VectorEnv:
    """``num_envs`` copies of `SingleAgentEnv(**env_kwargs)`, stepped in this process or in subprocesses."""
    from rouba_env.envs.single_agent import SingleAgentEnv

    num_envs = check_int("num_envs", num_envs, 1)
    env_kwargs.pop("max_episode_steps", None)  # games always end; gymnasium passes the spec's value (None)
    SingleAgentEnv(**env_kwargs)  # fail here, with our message, on bad arguments
    make_one = lambda: SingleAgentEnv(**env_kwargs)  # noqa: E731
    vector_class = gymnasium.vector.AsyncVectorEnv if asynchronous else gymnasium.vector.SyncVectorEnv
    return vector_class([make_one] * num_envs, autoreset_mode=AutoresetMode.SAME_STEP)
