"""The benchmark's machine details, medians over repeats and its table: what every section shares."""

from __future__ import annotations

import json
import os
import platform
import statistics
from pathlib import Path
from typing import Callable

import numpy as np

from rouba_env.files import write_atomically


SCHEMA_VERSION = 1



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
