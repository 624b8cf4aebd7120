"""The PettingZoo AEC environment under a versioned name, as PettingZoo's own games are named.

    from rouba_env import rouba_monte_v0
    env = rouba_monte_v0.env(num_players=3)

The same environment as `rouba_env.env` / `rouba_env.raw_env`; the suffix is bumped when the
environment changes in a way that changes results (the observation layout has its own version,
`rouba_env.OBSERVATION_VERSION`, which its checkpoints record).
"""

from rouba_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
