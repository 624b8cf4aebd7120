"""A short run of the default recipe whose learning is pinned (`test_short_run.py`, golden `short_run.json`).

The recipe's own settings (network, opponent pool, losses, schedule) with a small batch and few updates,
one torch thread, and periodic evaluations; what is pinned is every column of ``metrics.csv`` and
``eval.csv`` except the timing ones.

    python -m tests.training.short_run tests/training/short_run.json   # only when learning is meant to change
"""

import csv
import json
import sys
import tempfile
from pathlib import Path

from rouba_training.config import TrainConfig
from rouba_training.trainer import train

SETTINGS = dict(total_steps=2500, num_envs=32, rollout_steps=8, minibatch_size=256, snapshot_interval=2,
                eval_interval=3, eval_games=20, final_eval_games=20, torch_threads=1, progress=False)
TIMING_COLUMNS = ("seconds", "steps_per_second")


def rows(path: Path) -> list[dict]:
    with path.open(newline="") as stream:
        return [{key: value for key, value in row.items() if key not in TIMING_COLUMNS}
                for row in csv.DictReader(stream)]


def short_run(folder: Path) -> dict:
    """The pinned columns of a short default run in ``folder``."""
    train(TrainConfig.of(run_dir=str(folder), **SETTINGS))
    return {"metrics": rows(folder / "metrics.csv"), "eval": rows(folder / "eval.csv")}


GOLDEN = Path(__file__).with_name("short_run.json")

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        Path(sys.argv[1]).write_text(json.dumps(short_run(Path(scratch)), indent=1) + "\n")
