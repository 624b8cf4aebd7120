#!/usr/bin/env python
"""What a user gets with nothing set, against 0.4.0 on the same machine in the same run (docs/benchmarks.md).

    python scripts/default_speed.py                 # about five minutes; let nothing else run
    python scripts/default_speed.py --rounds 3      # quicker, noisier

Three measurements, each as whole processes, alternating between this checkout and a checkout of
0.4.0 (commit 4c9bb8a, unpacked with ``git archive`` into a temporary folder and put first on
``PYTHONPATH``), so that both share the machine's state:

* the AEC env, ``rouba_env.env(num_players=2)`` under random legal play, pinned to one core;
* ``rouba-evaluate --players checkpoint:2p heuristic --games 2000`` as a whole process, unpinned,
  while another process keeps one core busy;
* this checkout's evaluation of 4,000 games with ``--workers 1`` and ``--workers 2``, idle machine.

No thread variable is set anywhere. Writes ``scripts/results/default_speed.json``.
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

from rouba_env.files import write_atomically

ROOT = Path(__file__).resolve().parents[1]
RELEASE_0_4_0 = "4c9bb8a"
AEC_LOOP = """
import sys, time
import numpy as np
import rouba_env
env = rouba_env.env(num_players=2)
rng = np.random.default_rng(0)
def run(seconds):
    env.reset(seed=int(rng.integers(2**31)))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
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
    return steps / (time.perf_counter() - start)
run(0.5)
print(run(float(sys.argv[1])))
"""
BUSY_LOOP = "while True: pass"


def environment(source: Path) -> dict[str, str]:
    """This process's environment with ``source`` first on the import path (and no thread variable added)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")])}


def check_source(source: Path, env: dict[str, str]) -> None:
    found = subprocess.run([sys.executable, "-c", "import rouba_env; print(rouba_env.__file__)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    if not Path(found).resolve().is_relative_to(source.resolve()):
        raise SystemExit(f"error: rouba_env was imported from {found}, not from {source}")


def timed(command: list[str], env: dict[str, str], cwd: Path, cpu: int | None = None) -> float:
    """Wall seconds of a whole process (pinned to ``cpu`` when given)."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   preexec_fn=pin)
    return time.perf_counter() - start


def aec_steps_per_s(env: dict[str, str], cwd: Path, seconds: float) -> float:
    output = subprocess.run([sys.executable, "-c", AEC_LOOP, str(seconds)], env=env, cwd=cwd, check=True,
                            capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    return float(output.stdout.strip().splitlines()[-1])


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "runs": values}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating runs of each measurement")
    parser.add_argument("--aec-seconds", type=float, default=3.0, help="seconds of AEC play per run")
    parser.add_argument("--json", type=Path, default=ROOT / "scripts" / "results" / "default_speed.json")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.aec_seconds <= 0:
        parser.error("--rounds must be at least 1 and --aec-seconds above 0")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        old_source = scratch / "rouba_env-0.4.0"
        old_source.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", RELEASE_0_4_0], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_source)], input=archive, check=True)
        sources = {"today": environment(ROOT), "0.4.0": environment(old_source)}
        for name, env in sources.items():
            check_source(ROOT if name == "today" else old_source, env)
        work = scratch / "work"  # the evaluations write their default JSON here
        work.mkdir()
        evaluate = [sys.executable, "-m", "rouba_env", "evaluate", "--players", "checkpoint:2p", "heuristic",
                    "--games", "2000", "--seed", "11"]
        for env in sources.values():  # compile or load each version's kernels once, outside the timing
            timed(evaluate[:-4] + ["--games", "20"], env, work)
        aec: dict[str, list[float]] = {name: [] for name in sources}
        evaluation: dict[str, list[float]] = {name: [] for name in sources}
        for round_index in range(args.rounds):
            print(f"round {round_index + 1}/{args.rounds}", file=sys.stderr, flush=True)
            for name, env in sources.items():
                aec[name].append(aec_steps_per_s(env, work, args.aec_seconds))
            busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP])
            try:
                for name, env in sources.items():
                    evaluation[name].append(timed(evaluate, env, work))
            finally:
                busy.kill()
                busy.wait()
        workers: dict[str, list[float]] = {"1": [], "2": []}
        for _ in range(args.rounds):
            for count in workers:
                workers[count].append(timed(evaluate[:-4] + ["--games", "4000", "--seed", "0", "--workers", count],
                                            sources["today"], work))
    data = {
        "command": "python scripts/default_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(),
        "aec_steps_per_s": {name: summary(values) for name, values in aec.items()},
        "aec_ratio_today_over_0.4.0": statistics.median(aec["today"]) / statistics.median(aec["0.4.0"]),
        "evaluate_2000_games_one_core_busy_s": {name: summary(values) for name, values in evaluation.items()},
        "evaluate_speedup_over_0.4.0": statistics.median(evaluation["0.4.0"]) / statistics.median(evaluation["today"]),
        "evaluate_4000_games_idle_s_by_workers": {count: summary(values) for count, values in workers.items()},
        "workers_2_over_workers_1": statistics.median(workers["2"]) / statistics.median(workers["1"]),
    }
    write_atomically(args.json, json.dumps(data, indent=2) + "\n")
    print(json.dumps({key: value for key, value in data.items() if not isinstance(value, dict)}, indent=2))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
