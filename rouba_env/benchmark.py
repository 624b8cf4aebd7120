"""``python -m rouba_env.benchmark``: the ``rouba-benchmark`` command (see `rouba_env.cli.benchmark`)."""

import sys

from rouba_env.cli.benchmark import main

if __name__ == "__main__":
    sys.exit(main())
