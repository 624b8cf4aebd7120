"""How long each command takes to refuse a bad flag, as a whole process with nothing set.

    python scripts/refusal_time.py                  # median wall seconds of 3 runs per command
    python scripts/refusal_time.py --json scripts/results/refusal_time.json

Every command reads and checks its arguments before it imports torch or compiles anything, so a refusal
costs the interpreter's start and the package's import only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rouba_env.files import write_atomically

BAD_CALLS = {
    "rouba-train --total-steps -5": ["rouba_training.cli", "--total-steps", "-5"],
    "rouba-train --bogus-flag": ["rouba_training.cli", "--bogus-flag"],
    "rouba-evaluate --players random --games 0": ["rouba_env.cli.evaluate", "--players", "random", "--games", "0"],
    "rouba-exploitability --cfr -1": ["rouba_env.cli.exploitability", "--cfr", "-1"],
    "rouba-benchmark --only bogus": ["rouba_training.benchmark", "--only", "bogus"],
}
"""Each command's bad call, as ``python -m MODULE ARGS``."""
RUNNER = "import sys, runpy; sys.argv = sys.argv[1:]; runpy.run_module(sys.argv[0], run_name='__main__')"


def refusal_seconds(call: list[str]) -> float:
    """Wall seconds of one whole process that must refuse ``call`` (a ValueError if it did not exit 2)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", RUNNER, *call], capture_output=True, text=True, timeout=300)
    seconds = time.perf_counter() - started
    if done.returncode != 2:
        raise ValueError(f"{' '.join(call)} exited {done.returncode}, not 2: {done.stderr[-300:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per command (the median is reported)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if not 1 <= args.repeats <= 100:
        parser.error(f"--repeats must be in 1..100, got {args.repeats}")
    rows = {}
    for name, call in BAD_CALLS.items():
        runs = [refusal_seconds(call) for _ in range(args.repeats)]
        rows[name] = {"median_seconds": statistics.median(runs), "runs": runs}
        print(f"{name:<45} refused in {rows[name]['median_seconds']:.2f} s (median of {args.repeats})", flush=True)
    if args.json is not None:
        write_atomically(args.json, json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
