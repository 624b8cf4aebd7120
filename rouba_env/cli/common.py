"""What every command-line tool shares: the one-line error contract and a progress bar without hard dependencies."""

from __future__ import annotations

import argparse
import sys
from typing import Callable

EXIT_USAGE = 2
"""Exit status of a command that refused its input or could not read or write a file."""


def fail(message: str) -> int:
    """Print ``error: message`` on standard error (one line) and return `EXIT_USAGE`."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


class Progress:
    """A tqdm progress bar when tqdm is installed (the ``train`` extra), else a line every tenth of the work."""

    def __init__(self, total: int, unit: str, enabled: bool = True):
        self.total, self.unit, self.enabled, self.done, self._next_report = total, unit, enabled, 0, total / 10
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, unit=unit, desc=f"{unit}s", file=sys.stderr, dynamic_ncols=True)

    def update(self, count: int) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.update(count)
        elif self.enabled and self.done >= self._next_report:
            print(f"{self.done}/{self.total} {self.unit}s", file=sys.stderr, flush=True)
            self._next_report += self.total / 10

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def announce_run_folders(specs) -> None:
    """Tell on standard error which policy a ``checkpoint:RUN_FOLDER`` spec loads (the run's latest ``policy/``)."""
    from pathlib import Path

    from rouba_env.players.checkpoint import RUN_POLICY_DIR, read_metadata, resolve_checkpoint
    from rouba_env.players.registry import parse_spec

    for spec in dict.fromkeys(spec for spec in specs if isinstance(spec, str)):
        name, argument, _ = parse_spec(spec)
        if name != "checkpoint" or argument is None:
            continue
        folder = resolve_checkpoint(argument)
        if folder.name == RUN_POLICY_DIR and folder.parent == Path(argument):
            metadata = read_metadata(folder)
            print(f"{spec}: the run's latest policy, {folder} (update {metadata.get('update', '?')}, "
                  f"{metadata.get('learner_steps', '?')} learner steps)", file=sys.stderr)


def run_main(main: Callable[[list[str] | None], int]) -> None:
    """``sys.exit(main())`` for ``python -m`` and scripts."""
    sys.exit(main(None))


class HelpWithDefaults(argparse.HelpFormatter):
    """Adds "(default: X)" to an option's help once, unless the help already names its default or it has none."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("default" in text or action.default in (None, argparse.SUPPRESS) or not action.option_strings
                or (isinstance(action.default, (list, tuple)) and not action.default)):  # an empty list: none
            return text
        default = action.default
        if isinstance(default, bool):
            shown = "on" if default else "off"
        elif isinstance(default, (list, tuple)):
            shown = " ".join(map(str, default))
        else:
            shown = str(default)
        return f"{text} (default: {shown})"
