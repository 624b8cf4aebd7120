#!/usr/bin/env python
"""This tree against an older commit in the same run: ``rouba_env.env()``, `VectorGame` and the Gymnasium env's
steps/s, and their ratios.

    python scripts/bench_baseline.py --ref 52bf126            # the check of a refactor: ratio >= 0.95
    python scripts/bench_baseline.py --ref v0.2.0 --repeats 9 --json scripts/results/baseline.json
    python scripts/bench_baseline.py --ref 4c9bb8a --whole-process --json scripts/results/default_speed.json

Each round runs one probe process per tree, pinned to the same core, the order
swapped every round; rates are steps per second of the probe's own CPU time, so
other work on a shared machine counts against neither side.

``--sections aec_vs_openspiel aec_wrapped vector evaluation`` runs those sections of ``rouba-benchmark``
instead, one whole benchmark process per tree and round (each pinned to the same core, the order swapped
every round), and reports each row's median throughput per tree, their ratio and the rounds' spread (the
noise): the speed check of a refactor of the benchmarked code.

    python scripts/bench_baseline.py --ref 7f32cbc --sections aec_vs_openspiel aec_wrapped vector evaluation \
        --repeats 3 --json scripts/results/issue50_speed.json

``--whole-process`` also times what a user runs, as whole processes with nothing set: ``rouba-evaluate
--players checkpoint:2p heuristic --games 2000`` for each tree, unpinned, while another process keeps
one core busy (alternating, as above); and this tree's 4,000 games with ``--workers 1`` against
``--workers 2`` on the otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rouba_env.cli.benchmark import SECTIONS, pin_to_one_core, print_table
from rouba_env.files import write_atomically

# The probe repeats the benchmark's AEC loop on purpose: it runs against older source trees too, so it
# may use only what every version offers.
BASELINE_PROBE = r"""
import json, sys, time
import numpy as np
import rouba_env
try:
    from rouba_env import VectorGame
except ImportError:  # older trees name the module rouba_env.vector
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
vector = calls * batch / (time.process_time() - started)
single = rouba_env.SingleAgentEnv(opponents="random", rules="standard")
obs, info = single.reset(seed=seed)
steps, started = 0, time.process_time()
while steps < steps_wanted:
    legal = np.flatnonzero(info["action_mask"])
    obs, reward, terminated, truncated, info = single.step(int(legal[rng.integers(len(legal))]))
    steps += 1
    if terminated or truncated:
        obs, info = single.reset()
gym = steps / (time.process_time() - started)
print(json.dumps({"aec_wrapped": aec, "vector": vector, "gym_random": gym, "source": rouba_env.__file__}))
"""
"""Measures ``rouba_env.env()``, a `VectorGame` and `SingleAgentEnv` against `random` with whatever ``rouba_env`` is first
on the path."""


def compare(args) -> list[dict]:
    """This tree against an older commit (``--baseline-ref``) in the same run: AEC and batched steps/s.

    The old source is taken with ``git archive``; each round runs one probe
    process per tree, pinned to the same core, the order swapped every round;
    rates are steps per second of the probe's own CPU time (a shared machine's
    other work does not count against either side); medians and the ratio
    (this tree / baseline) are reported.
    """

    return compare_trees(args, compare_probes)


def compare_trees(args, measure) -> list[dict]:
    """``measure(args, trees)`` with ``trees`` = {"baseline": the ``--ref`` source (taken with ``git
    archive``), "current": this tree}; [] (and a note) where git cannot give the old source."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", args.baseline_ref],
                                 capture_output=True)
        if archive.returncode != 0:
            print(f"[benchmark] baseline skipped: git cannot archive {args.baseline_ref!r} "
                  f"({archive.stderr.decode().strip()[:200]})", file=sys.stderr)
            return []
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        return measure(args, {"baseline": folder, "current": str(root)})


def compare_probes(args, trees: dict[str, str]) -> list[dict]:
    """The probe's rows (and with ``--whole-process`` the whole processes'), current against baseline."""
    scratch = tempfile.mkdtemp(dir=trees["baseline"])  # whole processes run here: their default files land in it
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    steps, batch = args.env_steps, args.baseline_batch
    for round_index in range(args.repeats):
        order = list(trees.items()) if round_index % 2 == 0 else list(trees.items())[::-1]
        for name, tree in order:  # alternate who goes first, so that drifts of the machine cancel
            environment = dict(os.environ, PYTHONPATH=tree)
            probe = subprocess.run([sys.executable, "-c", BASELINE_PROBE, str(steps), str(batch), str(args.seed),
                                    str(args.steps)], capture_output=True, text=True, env=environment,
                                   cwd=tree, check=True, preexec_fn=lambda: pin_to_one_core(None))
            result = json.loads(probe.stdout.strip().splitlines()[-1])
            if not result["source"].startswith(tree):
                raise RuntimeError(f"the {name} probe imported rouba_env from {result['source']}, not {tree}")
            runs[name].append(result)
    extra = whole_processes(args, trees, scratch) if args.whole_process else []
    rows = []
    for measure, label in (("aec_wrapped", "rouba_env.env()"), ("vector", f"VectorGame B={batch}"),
                           ("gym_random", "SingleAgentEnv vs random")):
        medians = {name: statistics.median(run[measure] for run in runs[name]) for name in trees}
        rows.append({"variant": f"{label}: current vs {args.baseline_ref}", "steps_per_s": medians["current"],
                     "baseline_steps_per_s": medians["baseline"], "ratio": medians["current"] / medians["baseline"],
                     "runs": [{"baseline": b[measure], "current": c[measure], "steps": steps}
                              for b, c in zip(runs["baseline"], runs["current"])]})
    return rows + extra


SECTION_RUNNER = "import sys; from rouba_env.cli.benchmark import main; sys.exit(main(sys.argv[1:]))"
THROUGHPUTS = ("steps_per_s", "games_per_s")
"""A benchmark row's throughput: the first of these it gives."""


def throughput(row: dict) -> float | None:
    """A benchmark row's steps/s, else its games/s (None for a row with neither)."""
    return next((row[key] for key in THROUGHPUTS if row.get(key)), None)


def compare_sections(args, trees: dict[str, str]) -> list[dict]:
    """Each row of the chosen ``rouba-benchmark`` sections, per tree: the median throughput over the rounds,
    the ratio current / baseline and each tree's spread (max / min - 1 over the rounds: the noise)."""
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as scratch:
        for round_index in range(args.repeats):
            order = list(trees.items()) if round_index % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                output = Path(scratch) / f"{name}-{round_index}.json"
                quick = ["--quick"] if args.quick else []
                subprocess.run([sys.executable, "-c", SECTION_RUNNER, "--only", *args.sections, "--cpu",
                                str(args.cpu), *quick, "--json", str(output)], env=dict(os.environ, PYTHONPATH=tree),
                               cwd=scratch, check=True, stdout=subprocess.DEVNULL)
                runs[name].append(json.loads(output.read_text())["sections"])
    rows = []
    for section in args.sections:
        for index, row in enumerate(runs["current"][0][section]["rows"]):
            variant = row["variant"]
            per_tree = {}
            for name in trees:
                found = [next((r for r in sections[section]["rows"] if r["variant"] == variant), None)
                         for sections in runs[name]]
                per_tree[name] = [value for r in found if r and (value := throughput(r)) is not None]
            if not per_tree["current"] or not per_tree["baseline"]:
                continue  # a row the baseline does not have, or one without a throughput
            current, baseline = (statistics.median(per_tree[name]) for name in ("current", "baseline"))
            rows.append({"variant": f"{section}: {variant}", "steps_per_s": current, "baseline_steps_per_s": baseline,
                         "ratio": current / baseline,
                         "noise": {name: max(values) / min(values) - 1 for name, values in per_tree.items()},
                         "runs": per_tree})
    return rows


BUSY_LOOP = "while True: pass"
WHOLE_PROCESS_EVALUATION = ["-m", "rouba_env", "evaluate", "--players", "checkpoint:2p", "heuristic"]


def wall_seconds(command: list[str], tree: str, cwd: str) -> float:
    """Wall seconds of ``python COMMAND`` with ``tree`` first on the path, run from ``cwd``."""
    started = time.perf_counter()
    subprocess.run([sys.executable, *command], env=dict(os.environ, PYTHONPATH=tree), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def whole_processes(args, trees: dict[str, str], scratch: str) -> list[dict]:
    """`rouba-evaluate` of 2,000 games per tree under one busy core, and --workers 1 against 2 (this tree)."""
    evaluation = WHOLE_PROCESS_EVALUATION + ["--games", "2000", "--seed", "11"]
    for tree in trees.values():  # compile or load each tree's kernels outside the timing
        wall_seconds(WHOLE_PROCESS_EVALUATION + ["--games", "20"], tree, scratch)
    seconds: dict[str, list[float]] = {name: [] for name in trees}
    for round_index in range(args.repeats):
        busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP])
        try:
            order = list(trees.items()) if round_index % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                seconds[name].append(wall_seconds(evaluation, tree, scratch))
        finally:
            busy.kill()
            busy.wait()
    workers: dict[str, list[float]] = {"1": [], "2": []}
    for _ in range(args.repeats):
        for count in workers:
            workers[count].append(wall_seconds(WHOLE_PROCESS_EVALUATION + ["--games", "4000", "--workers", count],
                                               trees["current"], scratch))
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    worker_medians = {count: statistics.median(values) for count, values in workers.items()}
    return [
        {"variant": f"rouba-evaluate 2000 games, one core busy: {args.baseline_ref} s / current s",
         "steps_per_s": None, "seconds": medians["current"], "baseline_seconds": medians["baseline"],
         "ratio": medians["baseline"] / medians["current"], "runs": seconds},
        {"variant": "rouba-evaluate 4000 games, idle: --workers 2 s / --workers 1 s", "steps_per_s": None,
         "seconds": worker_medians["2"], "baseline_seconds": worker_medians["1"],
         "ratio": worker_medians["2"] / worker_medians["1"], "runs": workers},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", required=True, help="git commit or tag to compare this tree with")
    parser.add_argument("--repeats", type=int, default=7, help="rounds (medians are reported)")
    parser.add_argument("--env-steps", type=int, default=20_000, help="AEC steps per probe")
    parser.add_argument("--steps", type=int, default=2_000_000, help="VectorGame steps per probe")
    parser.add_argument("--baseline-batch", type=int, default=4096, help="VectorGame batch size")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and random actions")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--sections", nargs="+", default=None, metavar="SECTION",
                        help="compare these rouba-benchmark sections instead (module docstring)")
    parser.add_argument("--cpu", type=int, default=0, help="the core the --sections runs are pinned to")
    parser.add_argument("--quick", action="store_true", help="--sections: rouba-benchmark's smoke run")
    parser.add_argument("--whole-process", action="store_true",
                        help="also time whole rouba-evaluate processes (module docstring)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    unknown = [name for name in args.sections or () if name not in SECTIONS]
    if unknown:
        parser.error(f"--sections {' '.join(unknown)}: not a section of rouba-benchmark ({', '.join(SECTIONS)})")
    if args.cpu not in os.sched_getaffinity(0):
        parser.error(f"--cpu {args.cpu} is not a core this process may run on ({sorted(os.sched_getaffinity(0))})")
    args.baseline_ref = args.ref
    if args.sections:
        rows = compare_trees(args, compare_sections)
    else:
        rows = compare(args)
    if not rows:
        return 2
    print_table({"baseline": rows})
    if args.json is not None:
        write_atomically(args.json, json.dumps({"ref": args.ref, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
