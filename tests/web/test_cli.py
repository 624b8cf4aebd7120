"""``rouba-play --web``: prints its address, serves, stops cleanly on Ctrl-C."""

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.signals import sigint_as_a_terminal_sends_it

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_play_web_serves_the_page(tmp_path):
    process = subprocess.Popen(
        ["rouba-play", "--web", "--port", "0", "--quiet",
         "--replays", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, preexec_fn=sigint_as_a_terminal_sends_it)
    try:
        first_line = process.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", first_line)
        assert match, f"no address printed: {first_line!r} {process.stderr.read() if process.poll() else ''}"
        with urllib.request.urlopen(match.group(1) + "api/options", timeout=30) as response:
            options = json.loads(response.read())
        assert options["replays"] is True and options["min_players"] == 2 and options["max_players"] == 8
        with urllib.request.urlopen(match.group(1), timeout=30) as response:
            assert b"rouba-monte" in response.read()
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err


def test_bad_options_are_clean_errors(tmp_path, capsys):
    from rouba_env.web.server import parse_args

    for argv, words in ((["--port", "70000"], "--port"), (["--replays", str(tmp_path / "none")], "not a folder"),
                        (["--ttl", "0"], "--ttl"), (["--max-games", "0"], "--max-games")):
        with pytest.raises(SystemExit) as exit_info:
            parse_args(argv)
        assert exit_info.value.code == 2 and words in capsys.readouterr().err


@pytest.mark.slow
def test_a_public_address_is_announced_with_a_warning():
    process = subprocess.Popen([sys.executable, "-m", "rouba_env", "play", "--web", "--host", "0.0.0.0", "--port", "0",
                                "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               preexec_fn=sigint_as_a_terminal_sends_it)
    try:
        first_line = process.stdout.readline()
        assert "http://0.0.0.0:" in first_line, first_line
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert "warning: listening on 0.0.0.0, not only on this machine" in err


def test_play_web_takes_the_terminal_flags_as_the_pages_preselection(capsys):
    from rouba_env.web.server import main, make_server, parse_args

    args = parse_args(["--opponents", "greedy", "random", "--rules", "jokers", "--seat", "2", "--seed", "5"])
    assert (args.opponents, args.rules, args.seat, args.seed) == (["greedy", "random"], "jokers", 2, 5)
    server = make_server(port=0, quiet=True, preselect={"opponents": ["greedy"], "seed": 5})
    try:
        assert server.preselect == {"opponents": ["greedy"], "seed": 5}
    finally:
        server.server_close()
    assert main(["--port", "0", "--opponents", "wizard"]) == 2
    assert "unknown player 'wizard'" in capsys.readouterr().err
    assert main(["--port", "0", "--opponents", "greedy", "--seat", "5"]) == 2
    assert "seat must be an int in 0..1" in capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--seed", "-3"], "seed must be null or an int"),
    (["--opponents", "expert:samples=x"], "samples must be a whole number"),
    (["--rules", "jokers", "--seat", "3"], "seat must be an int in 0..1"),
    (["--rules", "mini", "--opponents", *["random"] * 7], "rules 'mini' at 8 players: invalid RulesConfig"),
])
def test_a_preselection_the_page_could_not_use_is_refused_before_serving(flags, message, capsys):
    from rouba_env.web.server import main

    assert main(["--port", "0", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --opponents/--rules/--seat/--seed preselect a game the page could not start: ")
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("argv, named", [(["--port", "8080"], "--port goes"),
                                         (["--host=0.0.0.0", "--replays", "x"], "--host, --replays go")])
def test_browser_options_without_web_say_they_go_with_web(argv, named, capsys):
    from rouba_env.cli.play import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {named} with --web") and len(err.strip().splitlines()) == 1


def test_a_missing_ray_names_both_install_forms(monkeypatch):
    from rouba_env.evaluation.distributed import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(RuntimeError) as error:
        import_ray()
    assert "pip install 'ray[rllib]>=2.60,<2.61'" in str(error.value) and 'pip install -e ".[ray]"' in str(error.value)
