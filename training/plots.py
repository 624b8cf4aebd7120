"""Learning curves from a run folder's CSV files: the run's own ``learning_curve.png`` and the helpers that
`scripts/plot_learning_curves.py` draws several runs with.

Plotting needs matplotlib (the ``train`` extra); reading the curves does not.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rouba_env.files import write_atomically
from rouba_training.run_folder import CURVE_FILE, EVAL_FILE, METRICS_FILE

PARITY = 0.5
"""An even match: the line every win-rate plot draws."""
TOO_FEW_POINTS = 2
"""A curve of fewer evaluations than this is a point, and the plot says so."""


def read_rows(path: Path) -> list[dict]:
    """The rows of a run's CSV file (``[]`` when it does not exist yet)."""
    if not path.is_file():
        return []
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def opponent_curve(rows: list[dict], opponent: str) -> tuple[list[int], list[float], list[float], list[float]]:
    """(learner steps, win rate, low, high) of the evaluation rows against ``opponent``."""
    mine = [row for row in rows if row["opponent"] == opponent]
    return ([int(float(row["learner_steps"])) for row in mine], [float(row["win_rate"]) for row in mine],
            [float(row["win_low"]) for row in mine], [float(row["win_high"]) for row in mine])


def run_curve(folder: Path, opponent: str) -> tuple[list[int], list[float], list[float], list[float]]:
    """`opponent_curve` of a run folder's ``eval.csv``; ValueError when it has none, or none against ``opponent``."""
    path = Path(folder) / EVAL_FILE
    if not path.is_file():
        raise ValueError(f"{folder} has no {EVAL_FILE}: not a finished or running training folder")
    curve = opponent_curve(read_rows(path), opponent)
    if not curve[0]:
        raise ValueError(f"{path} has no evaluation against {opponent!r}")
    return curve


def pyplot():
    """matplotlib's pyplot on the file-only backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def step_label(steps: float) -> str:
    """A count of learner steps as a tick reads it: 1.5M, 200k, 300 (whole steps; never milli-steps)."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(steps) >= scale:
            return f"{steps / scale:g}{suffix}"
    return f"{steps:.0f}"


def format_step_axis(axis) -> None:
    """Learner steps as 1.5M, not 1500000, in whole steps: tick labels that never run together."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: step_label(value)))
    axis.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))


def save_figure(figure, path: Path) -> Path:
    """Write ``figure`` as a PNG atomically, then close it."""
    try:
        write_atomically(path, lambda temp: figure.savefig(temp, dpi=110, format="png"))
    finally:
        pyplot().close(figure)
    return path


def self_play_only(run_dir: Path) -> bool:
    """Whether the run in ``run_dir`` trains against its current self alone (its saved settings, in the policy
    folder's metadata; False when they cannot be read)."""
    try:
        settings = json.loads((Path(run_dir) / "policy" / "metadata.json").read_text())["train_config"]
        return float(settings["past_self_weight"]) == 0 and float(settings["scripted_weight"]) == 0
    except (OSError, ValueError, KeyError, TypeError):
        return False


def plot_learning_curve(run_dir: Path) -> Path | None:
    """learning_curve.png: evaluation win rates (with intervals), training reward and, on a solved table, the
    exact NashConv, against learner steps. None while the run has no metrics yet."""
    plt = pyplot()
    run_dir = Path(run_dir)
    metrics = read_rows(run_dir / METRICS_FILE)
    if not metrics:
        return None
    rows = read_rows(run_dir / EVAL_FILE)
    solved = [r for r in rows if r.get("nash_conv")]
    figure, axes = plt.subplots(1, 3 if solved else 2, figsize=(16 if solved else 11, 4))
    left, right = axes[0], axes[1]
    for opponent in dict.fromkeys(r["opponent"] for r in rows):
        steps, rate, low, high = opponent_curve(rows, opponent)
        left.plot(steps, rate, marker="o", label=f"vs {opponent}")
        left.fill_between(steps, low, high, alpha=0.2)
    left.axhline(PARITY, color="grey", linestyle="--", linewidth=1)
    points = len({r["update"] for r in rows})
    title = "Evaluation (duplicate deals)"
    if points < TOO_FEW_POINTS:
        title += f": {points} evaluation{'' if points == 1 else 's'}, no curve yet"
    left.set(xlabel="learner steps", ylabel="win rate (95% interval)", title=title, ylim=(0, 1))
    if left.get_legend_handles_labels()[0]:
        left.legend(fontsize="small")
    self_play = self_play_only(run_dir)
    # Self-play's training reward is a seat's result against itself (noise about 0): its policy's entropy moves.
    column, label, panel = (("entropy", "policy entropy over the legal moves", "Self-play: how sure the policy is")
                            if self_play else
                            ("train_reward", "mean final training reward", "Training games (against the pool)"))
    right.plot([int(r["learner_steps"]) for r in metrics], [float(r[column]) for r in metrics],
               marker="o" if len(metrics) < TOO_FEW_POINTS else None)  # one point shows as a point
    right.set(xlabel="learner steps", ylabel=label, title=panel)
    if solved:
        measured = {int(r["update"]): (int(r["learner_steps"]), float(r["nash_conv"])) for r in solved}
        steps, values = zip(*(measured[update] for update in sorted(measured)))
        axes[2].plot(steps, values, marker="o")
        axes[2].set(xlabel="learner steps", ylabel="NashConv (0: an equilibrium)", ylim=(0, None),
                    title="Exact exploitability of the sampling policy")
    for axis in axes:
        format_step_axis(axis)
    figure.tight_layout()
    return save_figure(figure, run_dir / CURVE_FILE)
