"""Environments over `rouba_env.single_game.SingleGame`: PettingZoo AEC, Gymnasium single-agent, text rendering."""
