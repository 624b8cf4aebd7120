"""``rouba-benchmark``: throughput of the rouba-monte environments, steps/s and games/s under random legal play.

Sections (``--only`` picks some; add one by writing ``def bench_x(args) -> list[dict]``
and registering it in `SECTIONS`):

* ``aec_wrapped``: ``rouba_env.env()`` (PettingZoo, order-enforcing wrapper);
* ``aec_raw``: ``rouba_env.raw_env()``;
* ``aec_vs_openspiel``: ``rouba_env.env()`` interleaved with OpenSpiel's C++ ``go_fish`` (observation
  tensor and mask at every decision; when OpenSpiel is installed) and with a do-nothing AEC env under
  the same loop (its limit), as ratios;
* ``engine``: the reference engine alone (``new_game`` / ``legal_moves`` / ``apply_move``);
* ``sb3``: sb3-contrib's MaskablePPO on ``RoubaMonte-v0``, for comparison (when installed);
* ``trainer``: added by the trainer (`rouba_training.benchmark`, the ``rouba-benchmark`` command);
* ``vector_env``: ``gymnasium.make_vec("RoubaMonte-v0")`` on the batched table, as
  ratios: against Gymnasium's SyncVectorEnv of `SingleAgentEnv`s (random, heuristic and
  ``checkpoint:2p`` opponents) and against `VectorGame`'s raw steps/s;
* ``evaluation``: `rouba_env.evaluate` on the batched table against one game at a time;
* ``tree``: seconds to build the whole game tree of ``small`` (what the exact solver builds first);
* ``vector``: `rouba_env.batched.game.VectorGame` at several batch sizes.
  Actions are drawn with ``VectorGame.random_actions`` (one batched pass over
  the masks); ``steps_per_s`` includes that cost, ``step_only_per_s`` leaves it
  out and ``sample_ns_per_action`` reports it. Games/s is steps/s over the mean
  game length (measured on 256 complete games).

Every figure is the median over ``--repeats`` runs; each run stops after its step
budget or ``--time-limit`` seconds, whichever comes first. The process is pinned
to one core unless ``--no-pin``; ``--load N`` keeps N other processes busy meanwhile (a shared
machine). Nothing sets thread variables: what is measured is what a user gets. The table is
printed; ``--json PATH`` also writes the results.

    rouba-benchmark                 # full run
    rouba-benchmark --quick         # smoke run, a few seconds
    rouba-benchmark --only vector --batch-sizes 1024 65536
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import rouba_env
from rouba_env.cli.common import HelpWithDefaults
from rouba_env.files import check_writable, write_atomically
from rouba_env.rules import engine
from rouba_env.rules.config import PRESET_FIELDS, preset
from rouba_env.rules.seeding import DEAL_SEED_BOUND

SCHEMA_VERSION = 1


# ---------------------------------------------------------------- helpers


def pin_to_one_core(cpu: int | None) -> int | None:
    """Restrict this process to one CPU (the first allowed one by default); the CPU used, or None."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        allowed = sorted(os.sched_getaffinity(0))
        chosen = allowed[0] if cpu is None else cpu
        os.sched_setaffinity(0, {chosen})
        return chosen
    except OSError:
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(pinned: int | None) -> dict:
    info = {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "pinned_cpu": pinned,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": None,
        "numba_threads": os.environ.get("NUMBA_NUM_THREADS"),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    try:
        import numba

        info["numba"] = numba.__version__
    except ImportError:
        pass
    return info


def summarize(runs: list[dict]) -> dict:
    """Median of every numeric field over the runs, plus the raw runs."""
    keys = [k for k in runs[0] if isinstance(runs[0][k], (int, float))]
    row = {k: statistics.median(run[k] for run in runs) for k in keys}
    row["runs"] = runs
    return row


def repeat(args, measure: Callable[[], dict]) -> dict:
    return summarize([measure() for _ in range(args.repeats)])


# --------------------------------------------------------------- sections


def aec_random_play(make_env, rules, rng: np.random.Generator, env_steps: int, time_limit: float) -> dict:
    """Steps/s of a PettingZoo AEC env under random legal play: ``agent_iter``, ``last``, a random legal
    action from the mask, ``step``, a new game at the end of each."""
    env = make_env(rules=rules)
    env.reset(seed=int(rng.integers(2**31)))
    steps = games = 0
    start = time.perf_counter()
    while True:
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
                steps += 1
            env.step(action)
        games += 1
        elapsed = time.perf_counter() - start
        if steps >= env_steps or elapsed >= time_limit:
            break
        env.reset()
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "seconds": elapsed}


def _aec_rows(args, make_env, name: str) -> list[dict]:
    rules = preset(args.rules, num_players=args.players)
    rng = np.random.default_rng(args.seed)
    measure = lambda: aec_random_play(make_env, rules, rng, args.env_steps, args.time_limit)  # noqa: E731
    return [{"variant": f"{name} {args.rules} {args.players}p", **repeat(args, measure)}]


def bench_aec_wrapped(args) -> list[dict]:
    return _aec_rows(args, rouba_env.env, "env()")


def bench_aec_raw(args) -> list[dict]:
    return _aec_rows(args, rouba_env.raw_env, "raw_env()")


IDLE_GAME_LENGTH = 40
"""Moves of a do-nothing AEC env's game (about a game of rouba-monte at 2 players)."""
IDLE_LEGAL_ACTIONS = 3
"""Legal actions in a do-nothing AEC env's mask (about as many as a rouba-monte position has)."""


def idle_env(rules):
    """A PettingZoo AEC env that does nothing: fixed observation and mask, the turn passes, a game lasts
    `IDLE_GAME_LENGTH` moves; under our order-enforcing wrapper. Under the same loop it shows the loop's
    own cost, the limit of any AEC env."""
    from gymnasium import spaces
    from pettingzoo import AECEnv

    from rouba_env.envs.aec import OrderEnforcing

    size, actions = rouba_env.ObservationEncoder(rules).size, rouba_env.ActionEncoding(rules).size

    class IdleEnv(AECEnv):
        metadata = {"name": "idle_v0", "render_modes": []}

        def __init__(self):
            super().__init__()
            self.possible_agents = [f"player_{seat}" for seat in range(rules.num_players)]
            self.observation = np.zeros(size, dtype=np.float32)
            self.action_mask = np.zeros(actions, dtype=np.int8)
            self.action_mask[:IDLE_LEGAL_ACTIONS] = 1
            self.action_spaces = {agent: spaces.Discrete(actions) for agent in self.possible_agents}

        def reset(self, seed=None, options=None):
            self.agents = list(self.possible_agents)
            self.rewards = {agent: 0.0 for agent in self.agents}
            self._cumulative_rewards = dict(self.rewards)
            self.terminations = {agent: False for agent in self.agents}
            self.truncations = dict(self.terminations)
            self.infos = {agent: {} for agent in self.agents}
            self.agent_selection, self.moves = self.agents[0], 0

        def observe(self, agent):
            return {"observation": self.observation.copy(), "action_mask": self.action_mask.copy()}

        def step(self, action):
            if self.terminations[self.agent_selection]:
                self._was_dead_step(action)
                return
            self.moves += 1
            self._cumulative_rewards[self.agent_selection] = 0.0
            if self.moves == IDLE_GAME_LENGTH:
                self.terminations = {agent: True for agent in self.agents}
            else:
                seat = self.possible_agents.index(self.agent_selection)
                self.agent_selection = self.possible_agents[(seat + 1) % len(self.possible_agents)]

    return OrderEnforcing(IdleEnv())


def openspiel_random_play(game_name: str, rng: np.random.Generator, env_steps: int, time_limit: float) -> dict:
    """Decisions/s of an OpenSpiel game (C++) driven from Python as the AEC loop drives ours, in the cheapest
    faithful way: at every decision the mover's observation tensor (as OpenSpiel returns it, a list) and
    its legal actions (the mask's content), then a random legal action; chance outcomes are sampled by
    their probabilities with one uniform draw (not counted as steps)."""
    import pyspiel

    game = pyspiel.load_game(game_name)
    steps = games = 0
    start = time.perf_counter()
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                threshold, total = rng.random(), 0.0
                for outcome, probability in state.chance_outcomes():
                    total += probability
                    if threshold < total:
                        break
                state.apply_action(outcome)
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            steps += 1
        games += 1
        elapsed = time.perf_counter() - start
        if steps >= env_steps or elapsed >= time_limit:
            break
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "seconds": elapsed}


OPENSPIEL_REFERENCE_GAME = "go_fish"
"""The OpenSpiel card game whose C++ implementation, with observations, our AEC env is measured against."""


def bench_aec_vs_openspiel(args) -> list[dict]:
    """``rouba_env.env()``, a do-nothing AEC env and (when installed) OpenSpiel's go_fish, interleaved
    run by run under the same loop; the ratios are ours over go_fish's and over the do-nothing env's."""
    rules = preset(args.rules, num_players=args.players)
    rng = np.random.default_rng(args.seed)
    try:
        import pyspiel  # noqa: F401
        have_openspiel = True
    except ImportError:
        have_openspiel = False
    runs: dict[str, list[dict]] = {"ours": [], "idle": [], "openspiel": []}
    for _ in range(args.repeats):
        runs["ours"].append(aec_random_play(rouba_env.env, rules, rng, args.env_steps, args.time_limit))
        runs["idle"].append(aec_random_play(lambda rules: idle_env(rules), rules, rng, args.env_steps,
                                            args.time_limit))
        if have_openspiel:
            runs["openspiel"].append(openspiel_random_play(OPENSPIEL_REFERENCE_GAME, rng, args.env_steps,
                                                           args.time_limit))
    ours, idle = summarize(runs["ours"]), summarize(runs["idle"])
    rows = [{"variant": f"env() {args.rules} {args.players}p", **ours},
            {"variant": "do-nothing AEC env (the loop's limit)", **idle,
             "baseline_steps_per_s": idle["steps_per_s"], "ratio": ours["steps_per_s"] / idle["steps_per_s"]}]
    if have_openspiel:
        theirs = summarize(runs["openspiel"])
        rows.append({"variant": f"OpenSpiel {OPENSPIEL_REFERENCE_GAME} (C++, observation + mask)", **theirs,
                     "baseline_steps_per_s": theirs["steps_per_s"],
                     "ratio": ours["steps_per_s"] / theirs["steps_per_s"]})
    else:
        rows.append({"variant": f"OpenSpiel {OPENSPIEL_REFERENCE_GAME}: not installed (pip install open_spiel)",
                     "steps_per_s": None, "games_per_s": None})
    return rows


def bench_engine(args) -> list[dict]:
    rules = preset(args.rules, num_players=args.players)
    rng = np.random.default_rng(args.seed)

    def measure() -> dict:
        steps = games = 0
        start = time.perf_counter()
        while True:
            state = engine.new_game(rules, rng)
            while not engine.is_terminal(state):
                moves = engine.legal_moves(state)
                state = engine.apply_move(state, moves[rng.integers(len(moves))])
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
    from rouba_env.batched.kernels import sample_legal

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
    """`rouba_env.evaluate`: checkpoint:2p against heuristic on the batched table and one game at a time.

    The same games both ways (the players are built once, outside the timing; start-up not counted).
    """
    from rouba_env.evaluation.duplicate import evaluate
    from rouba_env.players.registry import make_policy

    rules = preset(args.rules, num_players=2)
    players = [make_policy("checkpoint:2p", rules), make_policy("heuristic", rules)]
    games = 200 if args.quick else args.evaluation_games
    evaluate(players, rules=rules, games=2, engine="batched")  # compiles or loads the kernels
    runs = []
    for index in range(1 if args.quick else min(args.repeats, args.trainer_repeats)):
        timings = {}
        for engine_name in ("batched", "single"):
            start = time.perf_counter()
            result = evaluate(players, rules=rules, games=games, seed=args.seed + index, engine=engine_name)
            timings[engine_name] = time.perf_counter() - start
        runs.append({"steps_per_s": None, "games_per_s": result.games / timings["batched"],
                     "baseline_games_per_s": result.games / timings["single"],
                     "ratio": timings["single"] / timings["batched"]})
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


SECTIONS: dict[str, Callable] = {
    "aec_wrapped": bench_aec_wrapped,
    "aec_raw": bench_aec_raw,
    "aec_vs_openspiel": bench_aec_vs_openspiel,
    "engine": bench_engine,
    "vector": bench_vector,
    "vector_env": bench_vector_env,
    "evaluation": bench_evaluation,
    "sb3": bench_sb3,
    "tree": bench_tree,
}
"""Section name -> function(args) returning rows (dicts with ``variant``, ``steps_per_s``, ``games_per_s``).

The trainer adds its own section (``trainer``) when the command runs as ``rouba-benchmark``
(`rouba_training.benchmark`), so this package never imports the trainer."""


# ------------------------------------------------------------------- main


def parse_args(argv=None, sections: dict[str, Callable] | None = None) -> argparse.Namespace:
    sections = sections or SECTIONS
    parser = argparse.ArgumentParser(prog="rouba-benchmark", description=__doc__.split("\n\n")[0],
                                     formatter_class=HelpWithDefaults)
    parser.add_argument("--only", nargs="+", choices=sorted(sections), metavar="SECTION", default=None,
                        help=f"run only these sections ({', '.join(sections)}; default: every one)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per measurement (the median is reported)")
    parser.add_argument("--steps", type=int, default=2_000_000,
                        help="VectorGame: game steps (all slots together) per run")
    parser.add_argument("--min-calls", type=int, default=20, help="VectorGame: at least this many step() calls per run")
    parser.add_argument("--env-steps", type=int, default=20_000, help="AEC and engine: game steps per run")
    parser.add_argument("--time-limit", type=float, default=2.0, help="seconds after which a run stops early")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 256, 4096, 16384],
                        help="VectorGame: numbers of games stepped together")
    parser.add_argument("--rules", default="standard", choices=sorted(PRESET_FIELDS), help="rules preset")
    parser.add_argument("--players", type=int, default=2, help="table size")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and random actions")
    parser.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the first allowed one)")
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                        help="pin this process to one core; --no-pin leaves it on every core, as a user's "
                             "process runs (where the players' threads could fight the engine)")
    parser.add_argument("--load", type=int, default=0,
                        help="processes that keep a core busy while the sections run (0: none), to measure "
                             "a shared machine")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the results (and the machine's details) to this JSON file "
                             "(default: print the table only)")
    parser.add_argument("--vector-env-small", type=int, default=256,
                        help="vector_env: games of the batched / sync comparison")
    parser.add_argument("--vector-env-large", type=int, default=4096,
                        help="vector_env: games of the comparison with VectorGame's raw steps")
    parser.add_argument("--evaluation-games", type=int, default=2000, help="evaluation: games per run")
    parser.add_argument("--trainer-steps", type=int, default=600_000, help="trainer: learner steps per run")
    parser.add_argument("--sb3-steps", type=int, default=10_240, help="sb3: MaskablePPO steps per run")
    parser.add_argument("--trainer-repeats", type=int, default=3, help="trainer and sb3: runs (median reported)")
    parser.add_argument("--quick", action=argparse.BooleanOptionalAction, default=False,
                        help="tiny budgets: a smoke run of every section")
    args = parser.parse_args(argv)
    problem = check_settings(args)
    if problem:
        parser.error(problem)
    if args.quick:
        args.repeats = min(args.repeats, 2)
        args.steps, args.min_calls, args.env_steps, args.time_limit = 20_000, 3, 300, 0.3
        args.batch_sizes = [b for b in args.batch_sizes if b <= 256] or [1]
    return args


MAX_LOAD = 64
"""Most busy processes `--load` starts."""
BUSY_LOOP = "while True: pass"
MAX_BATCH_SIZE = 1 << 20
"""Most games one measurement steps together (about a kilobyte of state each)."""


def check_settings(args) -> str | None:
    """Why the settings cannot be measured (one line naming the flag and what it allows), or None."""
    from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS

    counts = {"--repeats": args.repeats, "--steps": args.steps, "--min-calls": args.min_calls,
              "--env-steps": args.env_steps, "--trainer-steps": args.trainer_steps, "--sb3-steps": args.sb3_steps,
              "--trainer-repeats": args.trainer_repeats, "--evaluation-games": args.evaluation_games}
    for flag, value in counts.items():
        if value < 1:
            return f"{flag} must be at least 1, got {value}"
    if not math.isfinite(args.time_limit) or args.time_limit <= 0:
        return f"--time-limit must be a finite number of seconds above 0, got {args.time_limit}"
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        return f"--players must be in {MIN_PLAYERS}..{MAX_PLAYERS}, got {args.players}"
    if not 0 <= args.seed < DEAL_SEED_BOUND:
        return f"--seed must be in 0..{DEAL_SEED_BOUND - 1}, got {args.seed}"
    if not 0 <= args.load <= MAX_LOAD:
        return f"--load must be in 0..{MAX_LOAD} busy processes, got {args.load}"
    if args.cpu is not None and not args.pin:
        return "--cpu names the core to pin to: it cannot go with --no-pin"
    if args.cpu is not None and args.cpu < 0:
        return f"--cpu must be 0 or more, got {args.cpu}"
    if args.cpu is not None and hasattr(os, "sched_getaffinity") and args.cpu not in os.sched_getaffinity(0):
        allowed = ", ".join(map(str, sorted(os.sched_getaffinity(0))))
        return f"--cpu {args.cpu} is not a core this process may run on (allowed: {allowed})"
    sizes = [*args.batch_sizes, args.vector_env_small, args.vector_env_large]
    for size in sizes:
        if not 1 <= size <= MAX_BATCH_SIZE:
            return f"batch sizes (--batch-sizes, --vector-env-*) must be in 1..{MAX_BATCH_SIZE}, got {size}"
    return None


def format_rate(value: float | None) -> str:
    if value is None:
        return "-"
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f}{unit}"
    return f"{value:.1f}"


def print_table(sections: dict[str, list[dict]]) -> None:
    """The rows as a table whose columns line up whatever the length of a variant's name."""
    width = max([len(row["variant"]) for rows in sections.values() for row in rows] + [len("variant")])
    header = f"{'section':<12} {'variant':<{width}} {'steps/s':>9} {'games/s':>9}  notes"
    print(header)
    print("-" * len(header))
    for name, rows in sections.items():
        for row in rows:
            notes = []
            if "ratio" in row:
                baseline = row.get("baseline_steps_per_s", row.get("baseline_games_per_s"))
                notes.append(f"baseline {format_rate(baseline)}/s, ratio {row['ratio']:.2f}x")
            if "build_seconds" in row:
                notes.append(f"built in {row['build_seconds']:.2f} s ({row['histories']:,} histories)")
            if "step_only_per_s" in row:
                notes.append(f"step only {format_rate(row['step_only_per_s'])}/s")
                notes.append(f"sampling {row['sample_ns_per_action']:.1f} ns/action")
                notes.append(f"{row['mean_game_length']:.1f} moves/game")
            print(f"{name:<12} {row['variant']:<{width}} {format_rate(row['steps_per_s']):>9} "
                  f"{format_rate(row.get('games_per_s')):>9}  {', '.join(notes)}")


def write_json_atomically(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(data, indent=2) + "\n")


def main(argv=None, extra_sections: dict[str, Callable] | None = None) -> int:
    """Run the benchmark; ``extra_sections`` (name -> function(args)) join `SECTIONS` (the trainer's, say)."""
    sections = {**SECTIONS, **(extra_sections or {})}
    args = parse_args(argv, sections)
    if args.json is not None:
        try:
            check_writable(args.json)
        except OSError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    pinned = pin_to_one_core(args.cpu) if args.pin else None
    names = args.only or list(sections)
    where = f"pinned to cpu {pinned}" if pinned is not None else "not pinned (every core)"
    which = "every section (--only picks some)" if args.only is None else "sections " + ", ".join(names)
    print(f"[benchmark] {where}, {args.load} busy process(es) beside it; {which}"
          + ("" if args.quick or args.only else ": several minutes, --quick for a smoke run"), file=sys.stderr, flush=True)
    started = time.perf_counter()
    results: dict[str, list[dict]] = {}
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(args.load)]
    try:
        for name in names:
            print(f"[benchmark] {name} ...", file=sys.stderr, flush=True)
            results[name] = sections[name](args)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    settings = {k: v for k, v in vars(args).items() if k != "json"}
    data: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {**machine_info(pinned), "busy_processes": args.load},
        "settings": settings,
        "sections": {name: {"rows": rows} for name, rows in results.items()},
        "wall_seconds": time.perf_counter() - started,
    }
    print_table(results)
    print(f"\n({where}, {args.load} busy process(es), numpy {data['machine']['numpy']}, "
          f"numba {data['machine']['numba']})")
    if args.json is not None:
        write_json_atomically(args.json, data)
        print(f"results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
