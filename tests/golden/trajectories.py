"""Seeded games whose results must not change across refactors (see `test_golden.py`).

Each entry digests one reproducible computation: evaluation records of the
ladder's first games, a `VectorGame` trajectory (observations, masks,
rewards), PettingZoo AEC and Gymnasium episodes.
"""

from __future__ import annotations

import hashlib

import numpy as np

import rouba_env
from rouba_env.encoding.observation import observation_layout

GOLDEN_PRESETS = ("standard", "jokers", "take_all", "draw_from_deck", "leftovers")


def digest(*arrays) -> str:
    """sha256 of the arrays' dtype, shape and bytes, in order."""
    hasher = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(array)
        hasher.update(str(array.dtype).encode())
        hasher.update(str(array.shape).encode())
        hasher.update(array.tobytes())
    return hasher.hexdigest()[:24]


def version_1(obs) -> np.ndarray:
    """The observation entries pinned before the table talk was appended (observation version 1's prefix)."""
    obs = np.asarray(obs)
    for max_players in range(2, 9):
        if obs.shape[-1] == max(block.stop for block in observation_layout(max_players).values()):
            return obs[..., : observation_layout(max_players, version=1)["rules"].stop]
    raise ValueError(f"no padding gives observations of {obs.shape[-1]} entries")


def evaluation_scores(players, games, num_players=2, rules=None, seed=0) -> list:
    result = rouba_env.evaluate(players, rules=rules, games=games, num_players=num_players, seed=seed)
    return [list(record.seats) + list(record.scores) for record in result.records]


def vector_trajectory(preset: str, num_players: int, steps: int = 300, batch: int = 6) -> str:
    rules = rouba_env.preset(preset, num_players=num_players)
    game = rouba_env.VectorGame(rules, batch, seed=11)
    game.reset()
    rng = np.random.default_rng(5)
    parts = []
    for _ in range(steps):
        actions = game.random_actions(rng)
        parts.append(digest(version_1(game.obs), game.mask, game.current, actions))
        game.step(actions)
        # float32 as pinned: the rewards buffer is float64 now, with the same values
        parts.append(digest(game.rewards.astype(np.float32), game.done, game.final_scores))
    return digest(np.frombuffer("".join(parts).encode(), dtype=np.uint8))


def aec_episode(preset: str, num_players: int, seed: int = 3) -> str:
    env = rouba_env.env(rules=preset, num_players=num_players, reward="margin")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    parts = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        parts.append(digest(version_1(obs["observation"]), obs["action_mask"], np.float64(reward)))
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    full = env.unwrapped.state()  # seat 0's observation, then every hand and the deck
    size = env.unwrapped.encoder.size
    parts.append(digest(np.concatenate([version_1(full[:size]), full[size:]])))
    return digest(np.frombuffer("".join(parts).encode(), dtype=np.uint8))


def gym_episode(seed: int = 4) -> list:
    env = rouba_env.SingleAgentEnv(opponents="heuristic", seat="random", rules="standard", reward="margin")
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    parts = [digest(version_1(obs), info["action_mask"])]
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        parts.append(digest(version_1(obs), info["action_mask"]))
        total += reward
        steps += 1
        done = terminated or truncated
    return [steps, round(total, 9), list(info["scores"]), digest(np.frombuffer("".join(parts).encode(), dtype=np.uint8))]


def golden_values() -> dict:
    values = {
        "ladder_greedy_random": evaluation_scores(["greedy", "random"], 12),
        "ladder_heuristic_greedy": evaluation_scores(["heuristic", "greedy"], 12),
        "ladder_expert_heuristic": evaluation_scores(["expert:samples=24", "heuristic"], 4),
        "expert_endgame_three_players": evaluation_scores(["expert:samples=24", "heuristic", "greedy"], 6, 3),
        "heuristic_jokers_four": evaluation_scores(["heuristic", "greedy", "random", "heuristic"], 8, 4, "jokers"),
        "gym_episode": gym_episode(),
    }
    for preset in GOLDEN_PRESETS:
        for players in (2, 3):
            values[f"vector_{preset}_{players}"] = vector_trajectory(preset, players)
            values[f"aec_{preset}_{players}"] = aec_episode(preset, players)
    return values
