"""Environments over `rouba_env.table.Table`: PettingZoo AEC, Gymnasium single-agent, text rendering."""
