#!/usr/bin/env python
"""Thin wrapper of ``rouba-benchmark`` (see `rouba_training.benchmark`)."""

import sys

from rouba_training.benchmark import main

if __name__ == "__main__":
    sys.exit(main())
