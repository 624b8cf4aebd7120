"""The batched engine: many games stepped together by compiled kernels, equal to the reference engine."""
