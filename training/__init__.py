"""PPO self-play training for rouba-monte, installed as ``rouba_training``.

``from rouba_training import train, TrainConfig, Trainer`` gives the trainer; the names are loaded on first
use, so that ``rouba-train`` reads and checks its flags before it imports torch (which takes seconds).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["train", "Trainer", "TrainConfig"]
_WHERE = {"train": "rouba_training.trainer", "Trainer": "rouba_training.trainer", "TrainConfig": "rouba_training.config"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'rouba_training' has no attribute {name!r}")
