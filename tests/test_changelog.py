"""CHANGELOG.md is true to the code: every flag it names is one that the command it is given to takes today, or
one the changelog says was removed (for rouba-train, a setting the trainer still refuses with what replaces it,
`REMOVED_SETTINGS`). A section may name a flag that a newer one says was removed (it is history); one that
its own version removed it may name only as removed."""

from __future__ import annotations

import argparse
import dataclasses
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHANGELOG = ROOT / "CHANGELOG.md"
MENTION = re.compile(r"(?P<command>rouba-[a-z]+|scripts/\w+\.py|mkdocs|pytest|pip)"
                     r"|(?<![\w-])(?P<flag>--[a-z][a-z0-9-]*)")
OTHER_TOOLS = ("mkdocs", "pytest", "pip")
"""Commands of other projects: their flags are theirs."""
PLACEHOLDER = re.compile(r"--(no-)?[a-z]")
"""``--x`` and ``--no-x``: the shape of a flag, not one."""
SAYS_REMOVED = re.compile(r"\b(removed|gone)\b", re.IGNORECASE)


def train_flags() -> set[str]:
    """rouba-train's flags: its command flags and every `TrainConfig` field (a bool also as ``--no-NAME``)."""
    from rouba_training.cli import command_fields

    flags = {"--help"}
    for field in dataclasses.fields(command_fields()):
        flag = "--" + field.name.replace("_", "-")
        flags.add(flag)
        if field.type in (bool, "bool"):
            flags.add("--no-" + flag[2:])
    return flags


@cache
def command_flags() -> dict[str, set[str]]:
    """Each console command's flags, from its parser (rouba-play's with those of its browser play, ``--web``)."""
    from rouba_env.cli import benchmark, evaluate, exploitability, play
    from rouba_env.web import server

    captured = {}

    def capture(self, args=None, namespace=None):
        captured[self.prog] = {flag for action in self._actions for flag in action.option_strings}
        raise SystemExit(0)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", capture)
        for module in (benchmark, evaluate, exploitability, play, server):
            with pytest.raises(SystemExit):
                module.parse_args([])
    captured["rouba-play"] |= captured.pop("rouba-play --web")
    captured["rouba-train"] = train_flags()
    return captured


def items(text: str) -> list[str]:
    """The changelog's list items (and headings), each with its continuation lines."""
    return [item for item in re.split(r"\n(?=- |#)", text) if item.strip()]


def flags_said_removed(text: str) -> set[str]:
    """The flags named in the items of ``text`` that say something was removed."""
    return {match.group("flag") for item in items(text) if SAYS_REMOVED.search(item)
            for match in MENTION.finditer(item) if match.group("flag")}


def untrue_flags(text: str) -> list[str]:
    """Each flag in ``text`` that the command it follows in its item does not take (with no command before it:
    that no command takes), unless its own item, or one of a newer section (``## ...``), says it was removed."""
    from rouba_training.config import REMOVED_SETTINGS

    flags = command_flags()
    every_flag = set().union(*flags.values())
    wrong = []
    removed_since: set[str] = set()
    for section in re.split(r"\n(?=## )", text):  # the newest first
        for item in items(section):
            command = None
            for match in MENTION.finditer(item):
                if match.group("command"):
                    command = match.group("command")
                    continue
                flag = match.group("flag")
                if PLACEHOLDER.fullmatch(flag) or command in OTHER_TOOLS:
                    continue
                if command is None:
                    taken = flag in every_flag
                elif command.startswith("scripts/"):
                    script = ROOT / command
                    taken = script.is_file() and f'"{flag}"' in script.read_text()
                else:
                    taken = flag in flags.get(command, set())
                if taken:
                    continue
                removed = flag in removed_since or flag in flags_said_removed(item)
                setting = flag[2:].replace("-", "_").removeprefix("no_")
                if command == "rouba-train" or command is None and setting in REMOVED_SETTINGS:
                    removed = removed and setting in REMOVED_SETTINGS  # refused, saying what replaces it
                if not removed:
                    wrong.append(f"{command or 'no command'} {flag}: {' '.join(item.split())[:100]}")
        removed_since |= flags_said_removed(section)
    return wrong


def test_every_flag_is_taken_today_or_said_to_be_removed():
    assert untrue_flags(CHANGELOG.read_text()) == []


def test_the_check_tells_a_gone_flag_from_a_removed_one():
    """What the check reads: the flag after its command, a removal said in its item, the trainer's refusals."""
    assert untrue_flags("- `rouba-train --total-steps N` and `rouba-evaluate --games N`.\n") == []
    assert untrue_flags("- `rouba-evaluate --total-steps N`.\n") != []  # not rouba-evaluate's
    assert untrue_flags("- `rouba-train --play-average`: the average played.\n") != []
    assert untrue_flags("- **Removed**: `rouba-train --play-average`.\n") == []  # in REMOVED_SETTINGS
    assert untrue_flags("- **Removed**: `rouba-train --never-was`.\n") != []  # the trainer refuses it by name
    assert untrue_flags("## 2\n- `--engine` is gone.\n## 1\n- `rouba-play --engine` plays.\n") == []  # said since
    assert untrue_flags("## 1\n- `--engine` is gone.\n- `rouba-play --engine` plays.\n") != []  # not in that version
    assert untrue_flags("- `scripts/solver_scale.py --cfr N`; `--nonsense` alone.\n") != []
