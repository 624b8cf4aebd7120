"""Sections ``sb3`` (sb3-contrib's MaskablePPO, for comparison), ``vector_env`` (the batched vector env against
the sync one and VectorGame), ``evaluation`` (batched against one game at a time) and ``tree`` (the exact solver's tree)."""

from __future__ import annotations

import sys
import time

import numpy as np

from rouba_env.cli.benchmark.report import repeat, summarize
from rouba_env.rules.config import preset


def bench_sb3(args) -> list[dict]:
    """sb3-contrib MaskablePPO's learner steps/s on RoubaMonte-v0 (against random), for comparison."""
    try:
        import gymnasium
        import torch
        from sb3_contrib import MaskablePPO
    except ImportError:
        print("[benchmark] sb3: sb3-contrib is not installed, skipped", file=sys.stderr)
        return []
    torch.set_num_threads(1)
    steps = 2048 if args.quick else args.sb3_steps
    runs = []
    for index in range(1 if args.quick else args.trainer_repeats):
        env = gymnasium.make("RoubaMonte-v0", opponents="random", seat="random")
        model = MaskablePPO("MlpPolicy", env, seed=args.seed + index, verbose=0, device="cpu")
        start = time.perf_counter()
        model.learn(total_timesteps=steps)
        elapsed = time.perf_counter() - start
        runs.append({"steps_per_s": model.num_timesteps / elapsed, "games_per_s": None,
                     "steps": model.num_timesteps, "seconds": elapsed})
    return [{"variant": "sb3-contrib MaskablePPO, defaults", **summarize(runs)}]


def learner_steps_per_s(envs, seconds: float, seed: int) -> float:
    """A Gymnasium vector env's learner steps/s under masked random actions (one batched draw per step)."""
    from rouba_env.encoding.masks import sample_legal

    _obs, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = np.empty(envs.num_envs, dtype=np.int64)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        sample_legal(info["action_mask"], rng.random(envs.num_envs), actions)
        _obs, _reward, _terminated, _truncated, info = envs.step(actions)
        steps += envs.num_envs
    return steps / (time.perf_counter() - start)


VECTOR_ENV_OPPONENTS = ("random", "heuristic", "checkpoint:2p")
"""Opponents of the vector_env section."""


def bench_vector_env(args) -> list[dict]:
    """``gymnasium.make_vec("RoubaMonte-v0")``: the batched vector env against Gymnasium's SyncVectorEnv.

    For each opponent, N = `--vector-env-small` games both ways, measured alternately in each
    repeat so that the ratio shares the machine's load; against random also N = `--vector-env-large`
    on the batched env, as a share of `VectorGame`'s raw engine steps/s at the same N (measured
    alternately too). Learner steps: the learner's own decisions (the opponents' moves are extra).
    """
    import gymnasium

    from rouba_env.batched.game import VectorGame

    rules = preset(args.rules, num_players=args.players)
    seconds = 0.3 if args.quick else args.time_limit
    small, large = args.vector_env_small, args.vector_env_large
    rows = []
    for opponent in VECTOR_ENV_OPPONENTS:
        batched = gymnasium.make_vec("RoubaMonte-v0", num_envs=small, opponents=opponent, rules=rules)
        sync = gymnasium.make_vec("RoubaMonte-v0", num_envs=small, opponents=opponent, rules=rules,
                                  vectorization_mode="sync")
        learner_steps_per_s(batched, 0.2, args.seed)  # compiles or loads the kernels
        runs = []
        for index in range(args.repeats):
            fast = learner_steps_per_s(batched, seconds, args.seed + index)
            slow = learner_steps_per_s(sync, seconds, args.seed + index)
            runs.append({"steps_per_s": fast, "baseline_steps_per_s": slow, "ratio": fast / slow})
        rows.append({"variant": f"vs {opponent}, N={small}: batched / sync", "num_envs": small,
                     "games_per_s": None, **summarize(runs)})
    batched = gymnasium.make_vec("RoubaMonte-v0", num_envs=large, opponents="random", rules=rules)
    learner_steps_per_s(batched, 0.2, args.seed)
    game = VectorGame(rules, large, seed=args.seed)
    game.reset()
    rng = np.random.default_rng(args.seed)
    runs = []
    for index in range(args.repeats):
        fast = learner_steps_per_s(batched, seconds, args.seed + index)
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            game.step(game.random_actions(rng))
            calls += 1
        raw = calls * large / (time.perf_counter() - start)
        runs.append({"steps_per_s": fast, "baseline_steps_per_s": raw, "ratio": fast / raw})
    rows.append({"variant": f"vs random, N={large}: share of VectorGame", "num_envs": large,
                 "games_per_s": None, **summarize(runs)})
    return rows


def bench_evaluation(args) -> list[dict]:
    """`rouba_env.evaluate`: checkpoint:2p against heuristic, its chunks of thousands of games on one table,
    against the same games one at a time (a one-game chunk each, on the same table class).

    The same games both ways (the players are built once, outside the timing; start-up not counted).
    """
    from rouba_env.evaluation.duplicate import evaluate
    from rouba_env.evaluation.play import Chunk, play_chunk
    from rouba_env.players.registry import make_policy

    rules = preset(args.rules, num_players=2)
    players = [make_policy("checkpoint:2p", rules), make_policy("heuristic", rules)]
    games = 200 if args.quick else args.evaluation_games
    evaluate(players, rules=rules, games=2)  # compiles or loads the kernels
    runs = []
    for index in range(1 if args.quick else min(args.repeats, args.trainer_repeats)):
        start = time.perf_counter()
        result = evaluate(players, rules=rules, games=games, seed=args.seed + index)
        batched = time.perf_counter() - start
        start = time.perf_counter()
        for deal in range(games // 2):  # a deal is two games (both seatings); each game its own chunk
            for rotation in ((0, 1), (1, 0)):
                play_chunk(Chunk(rules.to_dict(), ("a", "b"), (rotation,), args.seed + index, range(deal, deal + 1)),
                           players)
        single = time.perf_counter() - start
        runs.append({"steps_per_s": None, "games_per_s": result.games / batched,
                     "baseline_games_per_s": result.games / single, "ratio": single / batched})
    row = summarize([{k: v for k, v in run.items() if v is not None} for run in runs])
    return [{"variant": f"checkpoint:2p vs heuristic, {games} games: batched / one at a time",
             "steps_per_s": None, **row}]


TREE_RULES = "small"
"""The rules whose whole game tree the ``tree`` section builds (77,280 histories)."""


def bench_tree(args) -> list[dict]:
    """Seconds to build the whole game tree of `TREE_RULES` (`rouba_env.solve.game_tree.GameTree`),
    as the exact solver does before it solves; "steps" are histories."""
    from rouba_env.solve.game_tree import GameTree

    rules = preset(TREE_RULES)

    def measure() -> dict:
        start = time.perf_counter()
        tree = GameTree(rules)
        seconds = time.perf_counter() - start
        return {"steps_per_s": tree.num_histories / seconds, "build_seconds": seconds,
                "histories": tree.num_histories}

    return [{"variant": f"GameTree({TREE_RULES!r})", "games_per_s": None, **repeat(args, measure)}]
