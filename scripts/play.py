#!/usr/bin/env python
"""Thin wrapper of ``rouba-play`` (see `rouba_env.cli.play`)."""

import sys

from rouba_env.cli.play import main

if __name__ == "__main__":
    sys.exit(main())
