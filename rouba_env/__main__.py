"""``python -m rouba_env COMMAND [options]``: the console commands without their scripts.

COMMAND is train, evaluate, play, benchmark or exploitability, the same as ``rouba-train`` and
the others. Each is found through its console-script entry point, so this
package names no command of the trainer's in its code.
"""

import sys
from importlib.metadata import entry_points

COMMANDS = {
    "train": "train a policy by PPO self-play (rouba-train)",
    "evaluate": "play players against each other on duplicate deals (rouba-evaluate)",
    "play": "play in the terminal or the browser (rouba-play)",
    "benchmark": "measure the environments' and the trainer's speed (rouba-benchmark)",
    "exploitability": "exact NashConv of players on a small deck, and its equilibrium (rouba-exploitability)",
}
"""Every command and what it does."""


def usage() -> str:
    lines = ["usage: python -m rouba_env COMMAND [options]   (COMMAND --help lists its options)", "", "commands:"]
    lines += [f"  {name:<14} {summary}" for name, summary in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if not argv:
        print(f"{usage()}\n\nerror: name a command", file=sys.stderr)
        return 2
    if argv[0] not in COMMANDS:
        print(f"{usage()}\n\nerror: unknown command {argv[0]!r}; choose one of {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    found = entry_points(group="console_scripts", name=f"rouba-{argv[0]}")
    if not found:
        print(f"error: the rouba-{argv[0]} command is not installed (reinstall the rouba_env package)", file=sys.stderr)
        return 2
    return next(iter(found)).load()(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
