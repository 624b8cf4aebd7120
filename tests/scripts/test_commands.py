"""The console commands: each runs, also as ``python -m``; every option has help and shows its default once."""

import argparse
import subprocess
import sys

import pytest

COMMANDS = ("train", "evaluate", "play", "benchmark")


def parsers():
    from rouba_env.cli import benchmark, evaluate, play
    from rouba_training.config import build_parser

    captured = {}
    original = argparse.ArgumentParser.parse_args

    def capture(self, args=None, namespace=None):
        captured[self.prog] = self
        raise SystemExit(0)

    argparse.ArgumentParser.parse_args = capture
    try:
        for module in (benchmark, evaluate, play):
            with pytest.raises(SystemExit):
                module.parse_args([])
    finally:
        argparse.ArgumentParser.parse_args = original
    captured["rouba-train"] = build_parser()
    return captured


def test_every_option_has_help_and_one_default():
    found = parsers()
    assert set(found) == {f"rouba-{name}" for name in COMMANDS}
    for prog, parser in found.items():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{prog} {action.option_strings} has no help"
                shown = formatter._get_help_string(action)
                assert shown.count("(default") <= 1 and "(default: None)" not in shown, (prog, shown)
        flags = [s for a in parser._actions for s in a.option_strings]
        for action in parser._actions:  # booleans are --x/--no-x everywhere
            if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
                raise AssertionError(f"{prog} {action.option_strings} is a one-way switch")
        assert len(flags) == len(set(flags))


def test_players_help_lists_the_known_specs():
    from rouba_env.players.registry import known_players

    text = parsers()["rouba-evaluate"].format_help().replace("\n", " ")
    for name in known_players():
        assert name in text
    assert "2p" in text and "mixed" in text


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_runs_as_script_and_as_module(command):
    for line in ([f"rouba-{command}", "--help"], [sys.executable, "-m", f"rouba_env.{command}", "--help"],
                 [sys.executable, "-m", "rouba_env", command, "--help"],
                 [sys.executable, "-m", f"rouba_env.cli.{command}", "--help"]):
        result = subprocess.run(line, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and f"rouba-{command}" in result.stdout, (line, result.stderr)
    bad = subprocess.run([sys.executable, "-m", "rouba_env", "nonsense"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown command 'nonsense'" in bad.stderr


def test_importing_the_evaluate_module_keeps_the_function_callable():
    import rouba_env
    import rouba_env.evaluate  # noqa: F401  (puts the module under the function's name)

    assert len(rouba_env.evaluate(["random", "greedy"], games=2).records) == 2
