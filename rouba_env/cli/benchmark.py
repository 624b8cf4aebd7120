"""``rouba-benchmark``: throughput of the rouba-monte environments, steps/s and games/s under random legal play.

Sections (``--only`` picks some; add one by writing ``def bench_x(args) -> list[dict]``
and registering it in `SECTIONS`):

* ``aec_wrapped``: ``rouba_env.env()`` (PettingZoo, order-enforcing wrapper);
* ``aec_raw``: ``rouba_env.raw_env()``;
* ``engine``: the reference engine alone (``new_game`` / ``legal_moves`` / ``apply_move``);
* ``vector``: `rouba_env.batched.game.VectorGame` at several batch sizes.
  Actions are drawn with ``VectorGame.random_actions`` (one batched pass over
  the masks); ``steps_per_s`` includes that cost, ``step_only_per_s`` leaves it
  out and ``sample_ns_per_action`` reports it. Games/s is steps/s over the mean
  game length (measured on 256 complete games).

Every figure is the median over ``--repeats`` runs; each run stops after its step
budget or ``--time-limit`` seconds, whichever comes first. The process is pinned
to one core and numba to one thread. Results go to ``--json`` (written atomically).

    rouba-benchmark                 # full run
    rouba-benchmark --quick         # smoke run, a few seconds
    rouba-benchmark --only vector --batch-sizes 1024 65536
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import datetime
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

import rouba_env
from rouba_env.cli.common import HelpWithDefaults
from rouba_env.files import write_atomically
from rouba_env.rules import engine
from rouba_env.rules.config import PRESET_FIELDS, preset

DEFAULT_JSON = "scripts/results/results.json"
PRE_REFACTOR_COMMIT = "fc2dfe3b3eacf33486cddf095945c3c86ebec586"
"""The last commit before the layout refactor (0.1.0's code with the golden tests): the baseline section's default."""
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


def _aec_rows(args, make_env, name: str) -> list[dict]:
    rules = preset(args.rules, num_players=args.players)
    rng = np.random.default_rng(args.seed)

    def measure() -> dict:
        env = make_env(rules=rules)
        env.reset(seed=int(rng.integers(2**31)))
        steps = games = 0
        start = time.perf_counter()
        while True:
            for agent in env.agent_iter():
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
            if steps >= args.env_steps or elapsed >= args.time_limit:
                break
            env.reset()
        return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "seconds": elapsed}

    return [{"variant": f"{name} {args.rules} {args.players}p", **repeat(args, measure)}]


def bench_aec_wrapped(args) -> list[dict]:
    return _aec_rows(args, rouba_env.env, "env()")


def bench_aec_raw(args) -> list[dict]:
    return _aec_rows(args, rouba_env.raw_env, "raw_env()")


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


TRAINER_NETWORKS = {"rank": {}, "mlp": {"architecture": "mlp", "hidden_sizes": (256, 256)}}
"""The trainer section's networks: the default (rank) and 0.2.0's MLP, measured alternately in one run."""


def bench_trainer(args) -> list[dict]:
    """Our PPO trainer's learner steps/s (collection on the batched engine plus updates), default settings.

    The default rank network and 0.2.0's MLP run alternately, so their ratio shares the machine's load.
    """
    import torch

    from rouba_training.config import TrainConfig
    from rouba_training.train import train

    torch.set_num_threads(1)
    steps = 30_000 if args.quick else args.trainer_steps
    runs: dict[str, list[dict]] = {name: [] for name in TRAINER_NETWORKS}
    for index in range(1 if args.quick else args.trainer_repeats):
        for name, network in TRAINER_NETWORKS.items():
            with tempfile.TemporaryDirectory() as run_dir:
                config = TrainConfig(run_dir=run_dir, seed=args.seed + index, total_steps=steps, eval_interval=0,
                                     final_eval_games=0, progress=False, torch_threads=1, **network,
                                     **({"num_envs": 64} if args.quick else {}))
                final = train(config, command="benchmark")
            runs[name].append({"steps_per_s": final["learner_steps_per_second"], "games_per_s": None,
                               "steps": final["learner_steps"], "seconds": final["seconds_training"]})
    rank, mlp = summarize(runs["rank"]), summarize(runs["mlp"])
    return [{"variant": "training/ PPO, default config (rank network)", **rank,
             "ratio_to_mlp": rank["steps_per_s"] / mlp["steps_per_s"]},
            {"variant": "training/ PPO, default config with 0.2.0's MLP (256-256)", **mlp}]


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


# The probe repeats `_aec_rows`' loop on purpose: it runs against an older source tree, which has no
# rouba_env.cli.benchmark to import it from, so it may use only what every version offers.
BASELINE_PROBE = r"""
import json, sys, time
import numpy as np
import rouba_env
try:
    from rouba_env import VectorGame
except ImportError:  # before the layout refactor
    from rouba_env.vector import VectorGame
steps_wanted, batch, seed, vector_steps = (int(value) for value in sys.argv[1:5])
rng = np.random.default_rng(seed)
env = rouba_env.env()
env.reset(seed=seed)
steps, started = 0, time.process_time()
while steps < steps_wanted:
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(len(legal))])
            steps += 1
        env.step(action)
    env.reset()
aec = steps / (time.process_time() - started)
game = VectorGame(rouba_env.preset("standard"), batch, seed=seed)
game.reset()
actions = game.random_actions(rng)
game.step(actions)
calls, started = 0, time.process_time()
while calls * batch < vector_steps:
    game.random_actions(rng, out=actions)
    game.step(actions)
    calls += 1
print(json.dumps({"aec_wrapped": aec, "vector": calls * batch / (time.process_time() - started),
                  "source": rouba_env.__file__}))
"""
"""Measures ``rouba_env.env()`` and a `VectorGame` with whatever ``rouba_env`` is first on the path."""


def bench_baseline(args) -> list[dict]:
    """This tree against an older commit (``--baseline-ref``) in the same run: AEC and batched steps/s.

    The old source is taken with ``git archive``; each round runs one probe
    process per tree, pinned to the same core, the order swapped every round;
    rates are steps per second of the probe's own CPU time (a shared machine's
    other work does not count against either side); medians and the ratio
    (this tree / baseline) are reported.
    """
    import subprocess

    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", args.baseline_ref],
                                 capture_output=True)
        if archive.returncode != 0:
            print(f"[benchmark] baseline skipped: git cannot archive {args.baseline_ref!r} "
                  f"({archive.stderr.decode().strip()[:200]})", file=sys.stderr)
            return []
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        trees = {"baseline": folder, "current": str(root)}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        steps, batch = args.env_steps, args.baseline_batch
        for round_index in range(args.repeats):
            order = list(trees.items()) if round_index % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:  # alternate who goes first, so that drifts of the machine cancel
                environment = dict(os.environ, PYTHONPATH=tree)
                probe = subprocess.run([sys.executable, "-c", BASELINE_PROBE, str(steps), str(batch), str(args.seed),
                                        str(args.steps)],
                                       capture_output=True, text=True, env=environment, cwd=tree, check=True)
                result = json.loads(probe.stdout.strip().splitlines()[-1])
                if not result["source"].startswith(tree):
                    raise RuntimeError(f"the {name} probe imported rouba_env from {result['source']}, not {tree}")
                runs[name].append(result)
    rows = []
    for measure, label in (("aec_wrapped", "rouba_env.env()"), ("vector", f"VectorGame B={batch}")):
        medians = {name: statistics.median(run[measure] for run in runs[name]) for name in trees}
        rows.append({"variant": f"{label}: current vs {args.baseline_ref}", "steps_per_s": medians["current"],
                     "baseline_steps_per_s": medians["baseline"], "ratio": medians["current"] / medians["baseline"],
                     "runs": [{"baseline": b[measure], "current": c[measure], "steps": steps}
                              for b, c in zip(runs["baseline"], runs["current"])]})
    return rows


SECTIONS: dict[str, Callable] = {
    "aec_wrapped": bench_aec_wrapped,
    "aec_raw": bench_aec_raw,
    "engine": bench_engine,
    "vector": bench_vector,
    "trainer": bench_trainer,
    "sb3": bench_sb3,
    "baseline": bench_baseline,
}
"""Section name -> function(args) returning rows (dicts with ``variant``, ``steps_per_s``, ``games_per_s``)."""
DEFAULT_SECTIONS = [name for name in SECTIONS if name != "baseline"]
"""Sections run without ``--only``; the comparison with an older commit is asked for by name."""


# ------------------------------------------------------------------- main


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rouba-benchmark", description=__doc__.split("\n\n")[0],
                                     formatter_class=HelpWithDefaults)
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), metavar="SECTION", default=None,
                        help=f"run only these sections ({', '.join(SECTIONS)}; default: every one but baseline)")
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
    parser.add_argument("--json", default=DEFAULT_JSON, help="where to write the results")
    parser.add_argument("--trainer-steps", type=int, default=600_000, help="trainer: learner steps per run")
    parser.add_argument("--sb3-steps", type=int, default=10_240, help="sb3: MaskablePPO steps per run")
    parser.add_argument("--trainer-repeats", type=int, default=3, help="trainer and sb3: runs (median reported)")
    parser.add_argument("--baseline-ref", default=PRE_REFACTOR_COMMIT,
                        help="baseline section: the git commit or tag to compare this tree with")
    parser.add_argument("--baseline-batch", type=int, default=4096, help="baseline section: VectorGame batch size")
    parser.add_argument("--quick", action=argparse.BooleanOptionalAction, default=False,
                        help="tiny budgets: a smoke run of every section")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats = min(args.repeats, 2)
        args.steps, args.min_calls, args.env_steps, args.time_limit = 20_000, 3, 300, 0.3
        args.batch_sizes = [b for b in args.batch_sizes if b <= 256] or [1]
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def format_rate(value: float | None) -> str:
    if value is None:
        return "-"
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f}{unit}"
    return f"{value:.1f}"


def print_table(sections: dict[str, list[dict]]) -> None:
    header = f"{'section':<12} {'variant':<34} {'steps/s':>9} {'games/s':>9}  notes"
    print(header)
    print("-" * len(header))
    for name, rows in sections.items():
        for row in rows:
            notes = []
            if "ratio" in row:
                notes.append(f"baseline {format_rate(row['baseline_steps_per_s'])}/s, ratio {row['ratio']:.2f}x")
            if "step_only_per_s" in row:
                notes.append(f"step only {format_rate(row['step_only_per_s'])}/s")
                notes.append(f"sampling {row['sample_ns_per_action']:.1f} ns/action")
                notes.append(f"{row['mean_game_length']:.1f} moves/game")
            print(f"{name:<12} {row['variant']:<34} {format_rate(row['steps_per_s']):>9} "
                  f"{format_rate(row.get('games_per_s')):>9}  {', '.join(notes)}")


def write_json_atomically(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(data, indent=2) + "\n")


def main(argv=None) -> int:
    args = parse_args(argv)
    pinned = pin_to_one_core(args.cpu)
    names = args.only or DEFAULT_SECTIONS
    started = time.perf_counter()
    results: dict[str, list[dict]] = {}
    for name in names:
        print(f"[benchmark] {name} ...", file=sys.stderr, flush=True)
        results[name] = SECTIONS[name](args)
    settings = {k: v for k, v in vars(args).items() if k != "json"}
    data = {
        "schema": SCHEMA_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(pinned),
        "settings": settings,
        "sections": {name: {"rows": rows} for name, rows in results.items()},
        "wall_seconds": time.perf_counter() - started,
    }
    write_json_atomically(Path(args.json), data)
    print_table(results)
    print(f"\nresults: {args.json}  (pinned to cpu {pinned}, numpy {data['machine']['numpy']}, "
          f"numba {data['machine']['numba']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
