#!/usr/bin/env python
"""Learning curves of several training runs against one opponent, with the other players' levels as lines;
or, with ``--nash-conv``, their exact NashConv on a solved deck.

    python scripts/plot_learning_curves.py --run "default (mlp)=runs/default" --run "rank=runs/rank" \\
        --levels scripts/results/ladder_expert_vs_heuristic.json scripts/results/ladder_heuristic_vs_greedy.json \\
        --out scripts/results/learning_curves_2p.png
    python scripts/plot_learning_curves.py --nash-conv --run "mini seed 1=scripts/results/runs/mini_default" \\
        --out scripts/results/default_recipe_nash_conv.png

Each ``--run LABEL=FOLDER`` is drawn from the folder's ``eval.csv`` (the
trainer's periodic evaluations, with their 95% intervals): the win rate
against ``--opponent`` by learner steps. Each ``--levels`` file is a
``rouba-evaluate`` JSON of two players, one of them ``--opponent``: the other
player's win rate against it becomes a horizontal line, so a curve can be read
against the scripted and search players. 50% (the opponent's own level) is
always drawn. ``--nash-conv`` draws each run's exact NashConv (the ``nash_conv`` column the trainer writes
on a deck small enough to solve) by learner steps, on a log scale. Needs matplotlib (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rouba_training.plots import PARITY, format_step_axis, pyplot, run_curve, save_figure


def level(path: Path, opponent: str) -> tuple[str, float]:
    """(player, its win rate against ``opponent``) from a two-player ``rouba-evaluate`` JSON."""
    data = json.loads(path.read_text())
    results = {row["label"]: row for row in data["results"]}
    others = [label for label in results if label != opponent]
    if opponent not in results or len(others) != 1:
        raise ValueError(f"{path} is not an evaluation of one player against {opponent!r} "
                         f"(players: {sorted(results)})")
    return others[0], float(results[others[0]]["win_rate"])


def parse_run(text: str) -> tuple[str, Path]:
    label, equals, folder = text.partition("=")
    if not equals or not label or not folder:
        raise argparse.ArgumentTypeError(f"a run is LABEL=FOLDER, got {text!r}")
    return label, Path(folder)


def nash_conv_curve(folder: Path) -> tuple[list[int], list[float]]:
    """(learner steps, NashConv) of a run folder's evaluations on a solved deck; ValueError where there are none."""
    from rouba_training.plots import EVAL_FILE, read_rows

    path = Path(folder) / EVAL_FILE
    if not path.is_file():
        raise ValueError(f"{folder} has no {EVAL_FILE}: not a finished or running training folder")
    points = sorted({int(row["learner_steps"]): float(row["nash_conv"]) for row in read_rows(path)
                     if row.get("nash_conv")}.items())
    if not points:
        raise ValueError(f"{path} has no exact NashConv (the deck is too large to solve)")
    return [step for step, _ in points], [value for _, value in points]


def plot_nash_conv(runs: list[tuple[str, Path]], out: Path, title: str | None) -> None:
    curves = [(label, nash_conv_curve(folder)) for label, folder in runs]
    figure, axes = pyplot().subplots(figsize=(8, 4.5))
    for label, (steps, values) in curves:
        axes.plot(steps, values, marker="o", markersize=3, label=label)
    axes.set_yscale("log")
    format_step_axis(axes)
    axes.set(xlabel="learner steps", ylabel="exact NashConv (log scale)",
             title=title or "Exact NashConv through the run")
    axes.grid(alpha=0.3, which="both")
    axes.legend(fontsize="small", loc="upper right")
    figure.tight_layout()
    save_figure(figure, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=parse_run, action="append", required=True, metavar="LABEL=FOLDER",
                        help="a training run folder to draw (repeat for several)")
    parser.add_argument("--levels", type=Path, nargs="*", default=[], metavar="JSON",
                        help="rouba-evaluate results of one player against --opponent, drawn as lines")
    parser.add_argument("--opponent", default="heuristic", help="the opponent of the curves (default: heuristic)")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    parser.add_argument("--title", default=None, help="plot title (default: names the opponent)")
    parser.add_argument("--nash-conv", action="store_true",
                        help="draw each run's exact NashConv (a solved deck) instead of its win rate")
    args = parser.parse_args(argv)
    if args.nash_conv:
        if args.levels:
            print("error: --levels are win rates; --nash-conv draws NashConv alone", file=sys.stderr)
            return 2
        try:
            plot_nash_conv(args.run, args.out, args.title)
        except (ValueError, OSError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"wrote {args.out}")
        return 0

    try:
        curves = [(label, run_curve(folder, args.opponent)) for label, folder in args.run]
        levels = [level(path, args.opponent) for path in args.levels]
    except (ValueError, OSError, KeyError, json.JSONDecodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    figure, axes = pyplot().subplots(figsize=(8, 4.5))
    for label, (steps, rate, low, high) in curves:
        axes.plot(steps, rate, marker="o", markersize=3, label=label)
        axes.fill_between(steps, low, high, alpha=0.15)
    axes.axhline(PARITY, color="black", linestyle="--", linewidth=1, label=f"{args.opponent} (parity)")
    for index, (player, rate) in enumerate(levels):
        axes.axhline(rate, color=f"C{len(curves) + index}", linestyle=":", linewidth=1.5,
                     label=f"{player} vs {args.opponent}: {rate:.1%}")
    format_step_axis(axes)
    axes.set(xlabel="learner steps", ylabel=f"win rate vs {args.opponent} (95% interval)",
             title=args.title or f"Learning curves against {args.opponent} (2 players, duplicate deals)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small", loc="lower right")
    figure.tight_layout()
    save_figure(figure, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
