"""The learning curve's axes read in whole learner steps, and a run of one update still shows its point."""

import pytest

pytest.importorskip("matplotlib")

from rouba_training.plots import format_step_axis, plot_learning_curve, pyplot, step_label  # noqa: E402
from rouba_training.run_folder import EVAL_FILE, METRICS_FILE  # noqa: E402


@pytest.mark.parametrize("steps, label", [(0, "0"), (300, "300"), (49_152, "49.152k"), (200_000, "200k"),
                                          (1_500_000, "1.5M"), (10_000_000, "10M"), (2e9, "2G")])
def test_a_step_count_reads_as_whole_steps_with_k_and_m(steps, label):
    assert step_label(steps) == label


def test_a_short_axis_has_no_milli_steps():
    plt = pyplot()
    figure, axis = plt.subplots()
    axis.set_xlim(0, 1)
    format_step_axis(axis)
    figure.canvas.draw()
    labels = [tick.get_text() for tick in axis.get_xticklabels() if tick.get_text()]
    plt.close(figure)
    assert labels and not any(label.endswith("m") for label in labels) and set(labels) <= {"0", "1"}


def test_a_run_of_one_update_plots_its_point(tmp_path):
    (tmp_path / METRICS_FILE).write_text("update,learner_steps,train_reward\n1,49152,0.25\n")
    (tmp_path / EVAL_FILE).write_text("update,learner_steps,opponent,games,win_rate,win_low,win_high\n"
                                      "1,49152,random,20,0.6,0.4,0.8\n")
    plt = pyplot()
    drawn = []
    original = plt.Axes.plot

    def recording(self, *args, **kwargs):
        lines = original(self, *args, **kwargs)
        drawn.extend(lines)
        return lines

    plt.Axes.plot = recording
    try:
        assert plot_learning_curve(tmp_path).is_file()
    finally:
        plt.Axes.plot = original
    reward = [line for line in drawn if list(line.get_ydata()) == [0.25]]
    assert reward and reward[0].get_marker() not in (None, "None", ""), "a single point shows as a marker"


@pytest.mark.parametrize("self_play, shown", [(True, "entropy"), (False, "train_reward")])
def test_the_middle_panel_shows_what_moves_in_the_run(tmp_path, monkeypatch, self_play, shown):
    """Self-play's training reward is a seat against itself (noise about 0): such a run shows its entropy."""
    import json

    (tmp_path / METRICS_FILE).write_text("update,learner_steps,train_reward,entropy\n1,100,0.01,0.5\n2,200,-0.01,0.3\n")
    (tmp_path / EVAL_FILE).write_text("update,learner_steps,opponent,games,win_rate,win_low,win_high\n"
                                      "2,200,random,20,0.6,0.4,0.8\n")
    (tmp_path / "policy").mkdir()
    weights = (0.0, 0.0) if self_play else (0.15, 0.6)
    (tmp_path / "policy" / "metadata.json").write_text(json.dumps(
        {"train_config": {"past_self_weight": weights[0], "scripted_weight": weights[1]}}))
    titles = []
    plt = pyplot()
    original = plt.Axes.set

    def recording(self, **kwargs):
        titles.append(kwargs.get("title"))
        return original(self, **kwargs)

    monkeypatch.setattr(plt.Axes, "set", recording)
    assert plot_learning_curve(tmp_path).is_file()
    assert ("Self-play: how sure the policy is" in titles) == self_play
    assert ("Training games (against the pool)" in titles) == (not self_play)
