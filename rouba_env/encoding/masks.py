"""A uniformly random legal action drawn from a mask: one rule for the batched engine's random moves and the
players' uniform choices, so the two draw the same move from the same uniform."""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def sample_legal(mask, u, out):
    """``out[b]``: the ``floor(u[b] * legal)``-th legal action of row ``b`` (0 when none is legal)."""
    num_actions = mask.shape[1]
    for b in range(mask.shape[0]):
        count = 0
        for a in range(num_actions):
            count += mask[b, a]
        out[b] = 0
        if count == 0:
            continue
        k = int(u[b] * count)
        if k >= count:
            k = count - 1
        for a in range(num_actions):
            if mask[b, a] != 0:
                if k == 0:
                    out[b] = a
                    break
                k -= 1
