"""PPO self-play training for rouba-monte (imports torch)."""
