#!/usr/bin/env python
"""Thin wrapper of ``rouba-train`` (see `rouba_env.cli.train`): train a policy by PPO self-play."""

import sys

from rouba_env.cli.train import main

if __name__ == "__main__":
    sys.exit(main())
