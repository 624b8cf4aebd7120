"""``rouba-benchmark``: throughput of the rouba-monte environments, steps/s and games/s under random legal play.

Sections (``--only`` picks some; add one by writing ``def bench_x(args) -> list[dict]`` in a module of
this package and registering it in `SECTIONS`; `report` holds what the sections share):

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
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from rouba_env.cli.common import HelpWithDefaults
from rouba_env.files import check_writable
from rouba_env.rules.config import PRESET_FIELDS
from rouba_env.rules.seeding import DEAL_SEED_BOUND
from rouba_env.cli.benchmark.aec import bench_aec_raw, bench_aec_vs_openspiel, bench_aec_wrapped
from rouba_env.cli.benchmark.engine import bench_engine, bench_vector
from rouba_env.cli.benchmark.envs import bench_evaluation, bench_sb3, bench_tree, bench_vector_env
from rouba_env.cli.benchmark.report import (SCHEMA_VERSION, machine_info, pin_to_one_core, print_table, summarize,
                                            write_json_atomically)

__all__ = ["main", "parse_args", "check_settings", "pin_to_one_core", "print_table", "summarize", "SECTIONS"]


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
        try:
            write_json_atomically(args.json, data)
        except OSError as error:  # the disk filled up, say, during the run: the table above is kept
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
