"""Rendering a game for people: text with card faces (``7♠ K♥``), or a picture (`rouba_env.envs.frames`)."""

from __future__ import annotations

from rouba_env.rules.engine import GameState
from rouba_env.rules.text import render_text


RENDER_MODES = ("ansi", "human", "rgb_array")
"""``ansi``: the text; ``human``: the text printed; ``rgb_array``: a ``uint8[H, W, 3]`` frame (videos)."""


def render_as(mode: str | None, state: GameState, viewer: int | None):
    """What an environment's ``render()`` returns in ``mode``, for ``viewer``'s seat (None: every hand).

    One place for both environments: a warning and None without a render mode, the text for ``ansi``,
    the text printed for ``human``, a frame for ``rgb_array``.
    """
    if mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or "
                              "'rgb_array'")
        return None
    if mode == "rgb_array":
        from rouba_env.envs.frames import render_frame

        return render_frame(state, viewer)
    text = render_text(state, viewer)
    if mode == "ansi":
        return text
    print(text + "\n")
    return None
