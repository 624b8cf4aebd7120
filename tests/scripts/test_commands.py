"""The console commands: each runs, also as ``python -m``; every option has help and shows its default once."""

import argparse
import subprocess
import sys

import pytest

COMMANDS = ("train", "evaluate", "play", "benchmark", "exploitability")
MODULES = {"train": "rouba_training.cli", "evaluate": "rouba_env.cli.evaluate", "play": "rouba_env.cli.play",
           "benchmark": "rouba_training.benchmark", "exploitability": "rouba_env.cli.exploitability"}
"""Where each command's code lives (the trainer's commands in the trainer's package)."""


def parsers():
    """The argparse parsers of the commands built on argparse (rouba-train's flags come from tyro)."""
    from rouba_env.cli import benchmark, evaluate, exploitability, play

    captured = {}
    original = argparse.ArgumentParser.parse_args

    def capture(self, args=None, namespace=None):
        captured[self.prog] = self
        raise SystemExit(0)

    argparse.ArgumentParser.parse_args = capture
    try:
        for module in (benchmark, evaluate, play, exploitability):
            with pytest.raises(SystemExit):
                module.parse_args([])
    finally:
        argparse.ArgumentParser.parse_args = original
    return captured


def test_every_option_has_help_and_one_default():
    found = parsers()
    assert set(found) == {f"rouba-{name}" for name in COMMANDS if name != "train"}
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


def test_exploitability_help_names_the_decks_it_can_solve():
    text = " ".join(parsers()["rouba-exploitability"].format_help().split())
    assert "medium, mini, mini3, mini4, small, small3 are solved exactly" in text and "only probed with --lbr" in text


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_runs_as_script_and_as_module(command):
    for line in ([f"rouba-{command}", "--help"], [sys.executable, "-m", "rouba_env", command, "--help"],
                 [sys.executable, "-m", MODULES[command], "--help"]):
        result = subprocess.run(line, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and f"rouba-{command}" in result.stdout, (line, result.stderr)


def test_python_m_rouba_env_lists_the_commands():
    from rouba_env.__main__ import COMMANDS as LISTED, main

    assert set(LISTED) == set(COMMANDS)
    bare = subprocess.run([sys.executable, "-m", "rouba_env"], capture_output=True, text=True, timeout=120)
    assert bare.returncode == 2 and all(f"  {name} " in bare.stderr for name in COMMANDS), bare.stderr
    bad = subprocess.run([sys.executable, "-m", "rouba_env", "nonsense"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown command 'nonsense'" in bad.stderr
    assert main(["--help"]) == 0


def test_rouba_env_never_imports_the_trainer():
    """The package boundary runs one way: rouba_training imports rouba_env, never the reverse (not even lazily)."""
    import ast
    from pathlib import Path

    import rouba_env

    offenders = []
    for path in Path(rouba_env.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(name.split(".")[0] == "rouba_training" for name in names):
                offenders.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    node.value.startswith("rouba_training") or "import rouba_training" in node.value
                    or "from rouba_training" in node.value):  # importlib names and code in strings
                offenders.append(f"{path.name}:{node.lineno} (in a string)")
    assert not offenders, offenders


def test_rouba_train_help_shows_every_setting_with_its_help_and_default(capsys):
    """Flags made by tyro from TrainConfig: each field a flag with its help, booleans as --x/--no-x."""
    from rouba_training.cli import main
    from rouba_training.cli import COMMAND_FLAGS
    from rouba_training.config import field_docs, setting_fields

    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.replace("│", " ").split())
    for name in [*COMMAND_FLAGS, *(field.name for field in setting_fields())]:
        flag = "--" + name.replace("_", "-")
        assert f"{flag} " in text or f"{flag}, " in text, flag
    for field in setting_fields():
        if field.type == "bool":
            assert f"--no-{field.name.replace('_', '-')}" in text
    assert " ".join(field_docs()["total_steps"].split()[:4]) in text and "(default: None)" not in text
    assert "rank_2p" in text, "--config names the shipped configs"


def test_the_benchmark_table_lines_up_with_long_variant_names(capsys):
    from rouba_env.cli.benchmark import print_table

    long_name = "a much longer variant name than the usual thirty-four characters"
    print_table({"vector": [{"variant": "short", "steps_per_s": 1000.0},
                            {"variant": long_name, "steps_per_s": 2.5e6, "games_per_s": 10.0}]})
    header, _, first, second = capsys.readouterr().out.splitlines()
    column_end = header.index("steps/s") + len("steps/s")
    assert first.index("1.00k") + len("1.00k") == second.index("2.50M") + len("2.50M") == column_end
