#!/usr/bin/env python
"""Thin wrapper of ``rouba-evaluate`` (see `rouba_env.cli.evaluate`)."""

import sys

from rouba_env.cli.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
