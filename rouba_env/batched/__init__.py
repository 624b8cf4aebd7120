"""The batched engine: many games stepped together by compiled kernels, equal to the reference engine."""

from rouba_env.batched.game import VectorGame

__all__ = ["VectorGame"]
