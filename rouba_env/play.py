"""``python -m rouba_env.play``: the ``rouba-play`` command (see `rouba_env.cli.play`)."""

import sys

from rouba_env.cli.play import main

if __name__ == "__main__":
    sys.exit(main())
