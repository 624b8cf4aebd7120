"""Environments over `rouba_env.table.SingleGame`: PettingZoo AEC, Gymnasium single-agent, text rendering."""
