"""PPO self-play training for rouba-monte, installed as ``rouba_training`` (its modules import torch)."""
