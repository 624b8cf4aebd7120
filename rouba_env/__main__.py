"""``python -m rouba_env COMMAND [options]``: the console commands without their scripts.

COMMAND is train, evaluate, play or benchmark (the same as ``rouba-train`` etc.;
each also runs as ``python -m rouba_env.COMMAND``).
"""

import sys

COMMANDS = ("train", "evaluate", "play", "benchmark")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    usage = f"usage: python -m rouba_env {{{','.join(COMMANDS)}}} [options]  (COMMAND --help for its options)"
    if argv and argv[0] in ("-h", "--help"):
        print(usage)
        return 0
    if not argv or argv[0] not in COMMANDS:
        given = repr(argv[0]) if argv else "none"
        print(f"{usage}\nerror: unknown command {given}", file=sys.stderr)
        return 2
    import importlib

    return importlib.import_module(f"rouba_env.cli.{argv[0]}").main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
