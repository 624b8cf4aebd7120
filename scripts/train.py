#!/usr/bin/env python
"""Thin wrapper of ``rouba-train`` (see `rouba_training.cli`): train a policy by PPO self-play."""

import sys

from rouba_training.cli import main

if __name__ == "__main__":
    sys.exit(main())
