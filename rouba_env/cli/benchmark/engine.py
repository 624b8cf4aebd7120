"""Sections ``engine`` (one card-level game on the rules core, `engine.Position`) and ``vector`` (`VectorGame` at
several batch sizes)."""

from __future__ import annotations

import time

import numpy as np

from rouba_env.cli.benchmark.report import repeat
from rouba_env.rules import engine
from rouba_env.rules.config import preset


def bench_engine(args) -> list[dict]:
    rules = preset(args.rules, num_players=args.players)
    rng = np.random.default_rng(args.seed)

    def measure() -> dict:
        steps = games = 0
        start = time.perf_counter()
        while True:
            position = engine.Position.deal(rules, engine.shuffled_deck(rules, int(rng.integers(engine.DEAL_SEED_BOUND))))
            while not engine.is_terminal(position):
                moves = position.legal_moves()
                position = position.child(moves[rng.integers(len(moves))])
                steps += 1
            games += 1
            elapsed = time.perf_counter() - start
            if steps >= args.env_steps or elapsed >= args.time_limit:
                break
        return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "seconds": elapsed}

    return [{"variant": f"engine {args.rules} {args.players}p", **repeat(args, measure)}]


def mean_game_length(rules, games: int = 256, seed: int = 0) -> float:
    """Mean moves per game under random play, from ``games`` complete games (no auto-reset)."""
    from rouba_env.batched.game import VectorGame

    game = VectorGame(rules, games, seed=seed, auto_reset=False)
    game.reset()
    rng = np.random.default_rng(seed)
    while (game.current >= 0).any():
        game.step(game.random_actions(rng))
    return float(game.turns.mean())


def bench_vector(args) -> list[dict]:
    """Games/s is steps/s over the mean game length: counting ``done`` per run would be quantised, since
    slots that start together stay in step when every game has the same length (48 moves at 2 players)."""
    from rouba_env.batched.game import VectorGame

    rules = preset(args.rules, num_players=args.players)
    game_length = mean_game_length(rules, seed=args.seed)
    rows = []
    for batch in args.batch_sizes:
        compile_start = time.perf_counter()
        game = VectorGame(rules, batch, seed=args.seed)
        game.reset()
        rng = np.random.default_rng(args.seed)
        actions = game.random_actions(rng)
        game.step(actions)  # first call: numba loads or compiles its kernels
        setup_s = time.perf_counter() - compile_start

        def measure() -> dict:
            calls = games = 0
            t_step = t_sample = 0.0
            budget = max(args.min_calls, -(-args.steps // batch))
            start = time.perf_counter()
            while calls < budget and time.perf_counter() - start < args.time_limit:
                t0 = time.perf_counter()
                game.random_actions(rng, out=actions)
                t1 = time.perf_counter()
                game.step(actions)
                t2 = time.perf_counter()
                t_sample += t1 - t0
                t_step += t2 - t1
                games += int(np.count_nonzero(game.done))
                calls += 1
            steps = calls * batch
            return {
                "steps_per_s": steps / (t_step + t_sample),
                "step_only_per_s": steps / t_step,
                "games_per_s": steps / (t_step + t_sample) / game_length,
                "games_ended": games,
                "sample_ns_per_action": 1e9 * t_sample / steps,
                "steps": steps,
                "seconds": t_step + t_sample,
            }

        row = {"variant": f"VectorGame B={batch}", "batch_size": batch,
               "setup_s": setup_s, "mean_game_length": game_length, **repeat(args, measure)}
        rows.append(row)
    return rows
