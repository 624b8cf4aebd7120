"""``python -m rouba_env.train``: the ``rouba-train`` command (see `rouba_env.cli.train`)."""

import sys

from rouba_env.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
