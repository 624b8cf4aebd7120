"""The batched engine: many games stepped together on the compiled rules core (`rouba_env.rules.core`)."""

from rouba_env.batched.game import VectorGame

__all__ = ["VectorGame"]
