"""Exact NashConv against training time for runs on a solvable deck: each run's eval.csv (NashConv at every
evaluation) read against its metrics.csv (the training seconds at that update, evaluations left out).

    python scripts/plot_nash_conv_time.py --out scripts/results/searched_medium_time.png \
        "default recipe=scripts/results/runs/medium_default" "searched values=scripts/results/runs/medium_searched"

Each argument is LABEL=RUN_DIR; runs sharing a label (seeds) are drawn in one colour. Prints each run's points.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def curve(run_dir: Path) -> list[tuple[float, float]]:
    """(training minutes, NashConv) at each evaluation of the run."""
    with (run_dir / "metrics.csv").open(newline="") as stream:
        seconds = {int(row["update"]): float(row["seconds"]) for row in csv.DictReader(stream)}
    points = {}
    with (run_dir / "eval.csv").open(newline="") as stream:
        for row in csv.DictReader(stream):
            if row.get("nash_conv") and int(row["update"]) in seconds:
                points[int(row["update"])] = (seconds[int(row["update"])] / 60, float(row["nash_conv"]))
    return [points[update] for update in sorted(points)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="LABEL=RUN_DIR")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    parser.add_argument("--target", type=float, default=0.01, help="a horizontal line at this NashConv")
    args = parser.parse_args(argv)
    runs = []
    for item in args.runs:
        label, separator, folder = item.partition("=")
        if not separator or not (Path(folder) / "eval.csv").is_file():
            parser.error(f"{item!r}: expected LABEL=RUN_DIR naming a run folder with eval.csv and metrics.csv")
        runs.append((label, Path(folder)))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    colours: dict[str, str] = {}
    for label, folder in runs:
        points = curve(folder)
        print(f"{label} ({folder}): " + ", ".join(f"{minutes:.0f} min {value:.4f}" for minutes, value in points))
        first = label not in colours  # one legend entry a label, however many seeds
        colour = colours.setdefault(label, f"C{len(colours)}")
        axes.plot([m for m, _ in points], [v for _, v in points], color=colour, marker=".",
                  label=label if first else None)
    axes.axhline(args.target, color="grey", linestyle="--", linewidth=1)
    axes.set_yscale("log")
    axes.set_xlabel("training minutes (one core; evaluations left out)")
    axes.set_ylabel("exact NashConv")
    axes.legend()
    figure.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
