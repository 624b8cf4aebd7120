"""scripts/plot_learning_curves.py draws runs' eval.csv and players' levels, and refuses what it cannot draw."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("plot_learning_curves", ROOT / "scripts" / "plot_learning_curves.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plots_runs_and_levels_and_reports_bad_input(tmp_path, capsys):
    script = load_script()
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.csv").write_text(
        "update,learner_steps,opponent,games,win_rate,win_low,win_high,mean_margin,mean_score\n"
        "10,1000,heuristic,100,0.55,0.45,0.64,1.0,25.0\n20,2000,heuristic,100,0.6,0.5,0.69,2.0,26.0\n"
        "20,2000,random,100,0.8,0.7,0.87,9.0,30.0\n")
    level = tmp_path / "expert.json"
    level.write_text(json.dumps({"results": [{"label": "expert", "win_rate": 0.58},
                                             {"label": "heuristic", "win_rate": 0.42}]}))
    out = tmp_path / "curves.png"
    assert script.main(["--run", f"mine={run}", "--levels", str(level), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert script.run_curve(run, "heuristic")[1] == [0.55, 0.6]
    assert script.level(level, "heuristic") == ("expert", 0.58)

    assert script.main(["--run", f"mine={run}", "--opponent", "expert", "--out", str(out)]) == 2
    assert "no evaluation against 'expert'" in capsys.readouterr().err
    assert script.main(["--run", f"mine={tmp_path}", "--out", str(out)]) == 2
    assert "has no eval.csv" in capsys.readouterr().err


def test_nash_conv_curves_read_the_exact_column_and_refuse_a_deck_without_one(tmp_path, capsys):
    script = load_script()
    solved, unsolved = tmp_path / "solved", tmp_path / "unsolved"
    for folder in (solved, unsolved):
        folder.mkdir()
    header = "update,learner_steps,opponent,games,win_rate,win_low,win_high,mean_margin,mean_score,kind,nash_conv\n"
    (solved / "eval.csv").write_text(header + "10,1000,heuristic,100,0.5,0.4,0.6,0,20,periodic,0.03\n"
                                     "10,1000,random,100,0.6,0.5,0.7,1,21,periodic,0.03\n"
                                     "20,2000,heuristic,100,0.5,0.4,0.6,0,20,periodic,0.004\n")
    (unsolved / "eval.csv").write_text(header + "10,1000,heuristic,100,0.5,0.4,0.6,0,20,periodic,\n")
    assert script.nash_conv_curve(solved) == ([1000, 2000], [0.03, 0.004])
    out = tmp_path / "nash_conv.png"
    assert script.main(["--nash-conv", "--run", f"mine={solved}", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert script.main(["--nash-conv", "--run", f"mine={unsolved}", "--out", str(out)]) == 2
    assert "no exact NashConv" in capsys.readouterr().err
