"""Scripted agents (placeholder until the agents issue lands: only `random` exists yet)."""
