"""Duplicate-deal evaluation with confidence intervals and ratings."""
