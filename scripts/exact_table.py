"""The exact benchmark table of the solvable decks: every player's and every recipe's exact NashConv.

    python scripts/exact_table.py              # Markdown, from scripts/results/

Rows: the scripted players (``exploitability_DECK.json``, written by ``rouba-exploitability --json``); each
training recipe at 1M, 3M and 10M learner steps, the median and range over its seeds, read from the exact
NashConv its runs measured at their evaluations (``runs/DECK_RECIPE[_seedN]/eval.csv``, the evaluation
nearest each step count, within `STEP_TOLERANCE`); CFR+ and MMD (moving magnet) by iterations
(``solver_DECK.json`` and ``mmd_DECK.json``, written by ``scripts/solver_scale.py --json``). Columns: the
decks. Where a run or a file is missing the cell says so. The runs and the solver files come from
``scripts/runs/issue49_queue.sh``.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "scripts" / "results"
DECKS = ("mini", "small", "medium")
STEPS = (1_000_000, 3_000_000, 10_000_000)
STEP_TOLERANCE = 0.15
"""An evaluation counts for a step count when it lies within this share of it."""
SEEDS = ("", "_seed2", "_seed3")
RECIPES = {
    "default recipe": ("default_10M", "default"),
    "0.4 pool recipe (`--config pool_2p`)": ("pool_10M", "pool", ""),
}
"""Row -> run-folder stems to try in order (``DECK_STEM`` plus a seed suffix; the stem "" is the folder ``DECK``,
the first runs of the pool recipe): the 10M runs where they exist."""
PLAYERS = ("random", "greedy", "heuristic", "expert")
ITERATIONS = (10, 100, 1_000)
MISSING = "not run"


def nash_conv_by_steps(eval_csv: Path) -> dict[int, float]:
    """Learner steps -> the exact NashConv measured at that evaluation (rows without one left out)."""
    found: dict[int, float] = {}
    with eval_csv.open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("nash_conv"):
                found[int(row["learner_steps"])] = float(row["nash_conv"])
    return found


def nearest(curve: dict[int, float], steps: int) -> float | None:
    """The NashConv of the evaluation nearest ``steps``, if one lies within `STEP_TOLERANCE` of it."""
    if not curve:
        return None
    at = min(curve, key=lambda measured: abs(measured - steps))
    return curve[at] if abs(at - steps) <= STEP_TOLERANCE * steps else None


def recipe_runs(results: Path, deck: str, stems: tuple[str, ...]) -> list[dict[int, float]]:
    """The curves of the first stem with any run on ``deck``, one per seed found."""
    for stem in stems:
        folders = [results / "runs" / (f"{deck}_{stem}{seed}" if stem else f"{deck}{seed}") for seed in SEEDS]
        curves = [nash_conv_by_steps(folder / "eval.csv") for folder in folders if (folder / "eval.csv").exists()]
        if curves:
            return curves
    return []


def spread(values: list[float]) -> str:
    """``median [low, high] (n)`` of the seeds' values, or the one value."""
    if not values:
        return MISSING
    if len(values) == 1:
        return f"{values[0]:.4f} (1 seed)"
    return f"{statistics.median(values):.4f} [{min(values):.4f}, {max(values):.4f}] ({len(values)} seeds)"


def player_cell(results: Path, deck: str, player: str) -> str:
    """The player's exact NashConv from ``exploitability_DECK.json`` or ``exploitability_DECK_PLAYER.json``."""
    for path in (results / f"exploitability_{deck}.json", results / f"exploitability_{deck}_{player}.json"):
        if path.exists():
            rows = [row for row in json.loads(path.read_text())["players"] if row["player"] == player]
            if rows:
                return f"{rows[0]['nash_conv']:.4f}"
    return MISSING


def solver_cell(results: Path, deck: str, method: str, iterations: int) -> str:
    """The NashConv of ``method`` (``cfr`` or ``mmd``) after ``iterations`` in ``solver_DECK.json`` or
    ``mmd_DECK.json``."""
    for name in (f"solver_{deck}.json", f"{method}_{deck}.json"):
        path = results / name
        if path.exists():
            for entry in json.loads(path.read_text()).get(method, []):
                if entry["iterations"] == iterations:
                    return f"{entry['nash_conv']:.6f}"
    return MISSING


def markdown(results: Path = RESULTS) -> str:
    lines = ["| row | " + " | ".join(f"`{deck}`" for deck in DECKS) + " |",
             "|---|" + "---:|" * len(DECKS)]
    for player in PLAYERS:
        lines.append(f"| `{player}` | " + " | ".join(player_cell(results, deck, player) for deck in DECKS) + " |")
    for row, stems in RECIPES.items():
        curves = {deck: recipe_runs(results, deck, stems) for deck in DECKS}
        for steps in STEPS:
            cells = [spread([value for curve in curves[deck] if (value := nearest(curve, steps)) is not None])
                     for deck in DECKS]
            lines.append(f"| {row}, {steps // 1_000_000}M steps | " + " | ".join(cells) + " |")
    for method, label in (("cfr", "CFR+"), ("mmd", "MMD, moving magnet")):
        for iterations in ITERATIONS:
            lines.append(f"| {label}, {iterations:,} iterations | "
                         + " | ".join(solver_cell(results, deck, method, iterations) for deck in DECKS) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results folder to read")
    args = parser.parse_args()
    if not args.results.is_dir():
        parser.error(f"--results {args.results} is not a folder")
    print(markdown(args.results))


if __name__ == "__main__":
    main()
