"""Smoke runs of the ``rouba-play`` command with typed input."""

import re
import subprocess
from pathlib import Path

import pytest

from tests.signals import sigint_as_a_terminal_sends_it

pytestmark = pytest.mark.slow  # each test starts a process

ROOT = Path(__file__).resolve().parents[2]


def play(args, typed):
    return subprocess.run(["rouba-play", *args], input=typed,
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_a_whole_game_with_bad_input_asked_again():
    result = play(["--opponents", "greedy", "--seed", "3"], "x\n99\n" + "1\n" * 40)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("please type a number") == 2, "bad input is asked again"
    assert "player 1 (greedy):" in out, "opponent moves are shown"
    assert re.search(r"player 1 \(greedy\): .* \(\d+\.\d\d s\)\n", out), "each with the seconds it took"
    assert not re.search(r"you: .* s\)\n", out), "your own moves are not timed"
    assert "your moves:" in out and "player 0's hand:" in out
    assert "final scores" in out and ("wins" in out or "tie between" in out)
    assert "Traceback" not in result.stderr


def test_three_players_quit_and_end_of_input():
    quit_result = play(["--opponents", "random", "heuristic", "--seat", "1"], "q\n")
    assert quit_result.returncode == 0 and "bye!" in quit_result.stdout
    eof_result = play(["--opponents", "random"], "")
    assert eof_result.returncode == 0 and "Traceback" not in eof_result.stderr


def test_a_deck_laid_out_for_four_seats_seats_four_and_says_how_many_opponents_it_needs():
    four = play(["--rules", "mini4", "--seed", "3"], "q\n")
    assert four.returncode == 0 and "rouba-monte, 4 players" in four.stdout
    wrong = play(["--rules", "mini3", "--opponents", "heuristic"], "")
    assert wrong.returncode == 2 and "rules mini3 seat 3 players: name 2 opponents with --opponents, got 1" in (
        wrong.stderr)


def test_bad_opponent_spec_is_a_clean_error():
    result = play(["--opponents", "wizard"], "")
    assert result.returncode == 2 and "unknown player 'wizard'" in result.stderr
    assert "Traceback" not in result.stderr
    missing = play(["--opponents", "checkpoint:does-not-exist"], "")
    assert missing.returncode == 2 and "no checkpoint" in missing.stderr


def test_ctrl_c_at_the_prompt_stops_cleanly_with_status_130():
    import signal
    import time

    process = subprocess.Popen(["rouba-play", "--opponents", "greedy",
                                "--seed", "3"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT, preexec_fn=sigint_as_a_terminal_sends_it)
    deadline = time.monotonic() + 60
    seen = ""
    while "move [" not in seen and time.monotonic() < deadline:
        seen += process.stdout.read(1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130 and "stopped" in out and "Traceback" not in err, (process.returncode, err)


def test_a_single_legal_move_is_played_without_asking(capsys, monkeypatch):
    from rouba_env.cli.play import choose_move
    from rouba_env.rules.config import RulesConfig
    from rouba_env.encoding.actions import ActionEncoding
    from tests.rules.scenario import make_state

    state = make_state(RulesConfig(num_players=2), hands=["7", "2"], table="", deck="", current=0)
    encoding = ActionEncoding(state.config)
    moves = [encoding.decode(action) for action in encoding.legal_actions(state)]
    assert len(moves) == 1
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail("asked although nothing is to choose"))
    assert choose_move(state, moves) == moves[0]
    assert "only one legal move: playing it" in capsys.readouterr().out
