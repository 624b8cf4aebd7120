#!/usr/bin/env python
"""What the exact solver costs on a research deck: the tree's build, a best response, CFR+ and MMD by iterations.

    python scripts/solver_scale.py --rules medium --cfr 300 --json scripts/results/solver_medium.json
    python scripts/solver_scale.py --rules medium --cfr 0 --mmd 1000 --json scripts/results/mmd_medium.json

Prints and writes (after every measurement, so a stopped run keeps what it measured): the tree's counts,
seconds to build it and the process's peak memory after, seconds for the exact NashConv of the uniform
strategy (two best responses), and CFR+'s NashConv (of its average) and magnetic mirror descent's (of its last
iterate, the magnet moving) at iterations 1, 2, 5, 10, 20, 50, ... with the mean seconds an iteration took.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from rouba_env.files import write_atomically
from rouba_env.rules.config import preset
from rouba_env.solve.exploitability import MAX_ITERATIONS, CFRPlus, MagneticMirrorDescent, nash_conv
from rouba_env.solve.game_tree import GameTree

SOLVABLE = ("mini", "small", "medium")
MMD_TEMPERATURE, MMD_STEP_SIZE, MMD_MAGNET_RATE = 0.05, 1.0, 0.1
"""MMD's settings: the best of those tried on ``small`` (``docs/solving.md``: NashConv 0.0012 at 2,000 steps)."""


def peak_memory_gb() -> float:
    """The process's peak resident memory so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def measured_iterations(total: int) -> list[int]:
    """1, 2, 5, 10, 20, 50, ... up to ``total``, and ``total``."""
    marks, scale = [], 1
    while scale <= total:
        marks += [mark for mark in (scale, 2 * scale, 5 * scale) if mark <= total]
        scale *= 10
    return sorted(set(marks + [total]))


def parse_args(argv=None) -> argparse.Namespace:
    """The command line; a bad flag or count exits with status 2 and argparse's message."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="medium", choices=SOLVABLE)
    parser.add_argument("--cfr", type=int, default=100, help=f"CFR+ iterations (0..{MAX_ITERATIONS:,})")
    parser.add_argument("--mmd", type=int, default=0, help=f"MMD iterations (0..{MAX_ITERATIONS:,}), temperature "
                        f"{MMD_TEMPERATURE}, step size {MMD_STEP_SIZE}, magnet rate {MMD_MAGNET_RATE}")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here as they come")
    args = parser.parse_args(argv)
    for flag, value in (("--cfr", args.cfr), ("--mmd", args.mmd)):
        if not 0 <= value <= MAX_ITERATIONS:
            parser.error(f"{flag} must be in 0..{MAX_ITERATIONS:,}, got {value}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    report: dict = {"rules": args.rules, "command": f"python scripts/solver_scale.py --rules {args.rules} "
                                                   f"--cfr {args.cfr} --mmd {args.mmd}"
                                                   + (f" --json {args.json}" if args.json else "")}

    def save() -> None:
        if args.json is not None:
            write_atomically(args.json, json.dumps(report, indent=2) + "\n")

    started = time.perf_counter()
    tree = GameTree(preset(args.rules))
    report |= {"tree": tree.summary(), "build_seconds": round(time.perf_counter() - started, 1),
               "peak_memory_gb_after_build": round(peak_memory_gb(), 2)}
    print(report)
    save()
    started = time.perf_counter()
    uniform = nash_conv(tree, tree.uniform_strategy())
    report |= {"uniform_nash_conv": uniform, "nash_conv_seconds": round(time.perf_counter() - started, 1)}
    print(f"uniform strategy: NashConv {uniform:.4f} in {report['nash_conv_seconds']} s")
    save()
    solvers = (("cfr", "CFR+", CFRPlus(tree), args.cfr),
               ("mmd", "MMD", MagneticMirrorDescent(tree, MMD_TEMPERATURE, MMD_STEP_SIZE, MMD_MAGNET_RATE), args.mmd))
    for key, name, solver, total in solvers:
        marks, spent, curve = set(measured_iterations(total)), 0.0, []
        for iteration in range(1, total + 1):
            started = time.perf_counter()
            solver.iterate(measure=False)
            spent += time.perf_counter() - started
            if iteration in marks:
                value = nash_conv(tree, solver.solution())
                curve.append({"iterations": iteration, "nash_conv": value, "seconds": round(spent, 1)})
                report |= {key: curve, f"{key}_seconds_per_iteration": round(spent / iteration, 2),
                           "peak_memory_gb": round(peak_memory_gb(), 2)}
                print(f"{name} {iteration}: NashConv {value:.6f} after {spent:.0f} s of iterations")
                save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
