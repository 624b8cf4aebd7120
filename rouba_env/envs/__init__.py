"""Environments over the reference engine: PettingZoo AEC, Gymnasium single-agent, text rendering."""
