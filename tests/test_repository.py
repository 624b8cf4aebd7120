"""The repository a contributor clones stays light: no big files, no per-game records, no finished runs' checkpoints."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_FILE_BYTES = 1024 * 1024
RUNS = "scripts/results/runs"
TO_BE_RESUMED: dict[str, str] = {
    "full_searched": "searched_2p on the full game from 2p (bash scripts/runs/searched_values.sh full_searched)",
}
"""Run folders whose ``checkpoint.pt`` stays in git because the run is to be carried on with --resume."""
BIG_FILES_ALLOWED: dict[str, str] = {
    f"{RUNS}/{folder}/checkpoint.pt": "a run to be carried on (TO_BE_RESUMED): its optimizer and opponent pool"
    for folder in TO_BE_RESUMED}
"""Tracked files allowed past MAX_FILE_BYTES outside checkpoints/, each with the reason it must be that big."""


def tracked_files() -> list[str]:
    try:
        listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in listing.stdout.decode().split("\0") if name and (ROOT / name).is_file()]


def test_no_tracked_file_over_a_megabyte_outside_the_shipped_checkpoints():
    big = {name: (ROOT / name).stat().st_size for name in tracked_files()
           if not name.startswith("checkpoints/") and name not in BIG_FILES_ALLOWED}
    assert {name: size for name, size in big.items() if size > MAX_FILE_BYTES} == {}


def test_result_files_hold_no_per_game_records():
    """Game records are re-created by the command a result names; the results keep the summaries."""
    holding = [name for name in tracked_files()
               if name.startswith("scripts/results/") and name.endswith(".json")
               and "\"game_records\"" in (ROOT / name).read_text()]
    assert holding == []


def test_only_runs_to_be_resumed_keep_their_checkpoint():
    kept = {Path(name).parent.name for name in tracked_files()
            if name.startswith(RUNS + "/") and name.endswith("/checkpoint.pt")}
    assert kept <= set(TO_BE_RESUMED), f"finished runs with a checkpoint in git: {sorted(kept - set(TO_BE_RESUMED))}"


RUN_FOLDER_FILES = {"eval.csv", "metrics.csv", "final_eval.json"}
"""What a finished run folder keeps besides its policy (``policy/``): its results and settings. Its
learning curve is drawn again from ``metrics.csv`` and ``eval.csv``; TensorBoard files are not kept."""


def test_run_folders_keep_their_results_and_policy_only():
    extra = []
    for name in tracked_files():
        if not name.startswith(RUNS + "/"):
            continue
        folder, _, rest = name[len(RUNS) + 1:].partition("/")
        if rest in RUN_FOLDER_FILES or rest.startswith("policy/") or "/" not in name[len(RUNS) + 1:]:
            continue
        if folder.endswith("_policy") and "/" not in rest:  # a folder that is a policy itself
            continue
        if rest == "checkpoint.pt" and folder in TO_BE_RESUMED:
            continue
        extra.append(name)
    assert extra == [], f"run folders keep results and the policy only: {extra[:5]}"


MAX_RESULTS_BYTES = 15 * 1024 * 1024
"""The tracked results (scripts/results/): summaries, settings and the policies something still uses."""


def test_the_tracked_results_stay_under_their_budget():
    """Checkpoints of runs to be resumed leave git when their runs end, so they are not counted."""
    resumed = {f"{RUNS}/{folder}/checkpoint.pt" for folder in TO_BE_RESUMED}
    total = sum((ROOT / name).stat().st_size for name in tracked_files()
                if name.startswith("scripts/results/") and name not in resumed)
    assert total <= MAX_RESULTS_BYTES, (f"scripts/results/ holds {total / 2**20:.1f} MiB tracked, more than "
                                        f"{MAX_RESULTS_BYTES / 2**20:.0f}: drop the policies and metrics of "
                                        f"superseded runs (keep eval.csv and final_eval.json)")
