"""The exact benchmark table of the solvable decks: every player's and every recipe's exact NashConv.

    python scripts/exact_table.py              # Markdown, from scripts/results/

Rows: the scripted players (``exploitability_DECK.json``, written by ``rouba-exploitability --json``); each
training recipe at 1M, 3M and 10M learner steps, the median and range over its seeds, read from the exact
NashConv its runs measured at their evaluations (``runs/DECK_RECIPE[_seedN]/eval.csv``, the evaluation
nearest each step count, within `STEP_TOLERANCE`); CFR+ and MMD (moving magnet) by iterations
(``solver_DECK.json`` and ``mmd_DECK.json``, written by ``scripts/solver_scale.py --json``). Columns: the
decks. Where a run or a file is missing the cell says so. The runs and the solver files come from
``scripts/runs/exact_table.sh`` (the default recipe's shorter runs on mini and small: ``default_recipe.sh``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
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
"""Row -> run-folder stems to try in order for each seed (``DECK_STEM`` plus a seed suffix; the stem "" is the
folder ``DECK``, the first runs of the pool recipe): a seed's 10M run where it has measured the step count."""
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


def recipe_values(results: Path, deck: str, stems: tuple[str, ...], steps: int) -> list[float]:
    """One NashConv per seed at ``steps``: for each seed, from the first stem whose run measured it (a
    seed's 10M run where it has reached ``steps``, else its shorter run)."""
    values = []
    for seed in SEEDS:
        for stem in stems:
            eval_csv = results / "runs" / (f"{deck}_{stem}{seed}" if stem else f"{deck}{seed}") / "eval.csv"
            value = nearest(nash_conv_by_steps(eval_csv), steps) if eval_csv.exists() else None
            if value is not None:
                values.append(value)
                break
    return values


SMALL = 0.001
"""Below this a NashConv is shown by two significant digits, not four decimals (which would read 0.0000)."""


def shown(value: float) -> str:
    if value >= SMALL or value <= 0:
        return f"{value:.4f}"
    return f"{value:.{1 - math.floor(math.log10(value))}f}"


def spread(values: list[float]) -> str:
    """``median [low, high] (n)`` of the seeds' values, or the one value."""
    if not values:
        return MISSING
    if len(values) == 1:
        return f"{shown(values[0])} (1 seed)"
    return f"{shown(statistics.median(values))} [{shown(min(values))}, {shown(max(values))}] ({len(values)} seeds)"


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
        for steps in STEPS:
            cells = [spread(recipe_values(results, deck, stems, steps)) for deck in DECKS]
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
