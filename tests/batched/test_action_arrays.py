"""Action arrays of any integer dtype, read-only or not, contiguous or not, step the batched engine without
a second compilation of its loops (they are converted once at the door)."""

import numpy as np

from rouba_env.batched import kernels
from rouba_env.batched.game import VectorGame
from rouba_env.rules.config import preset

LOOPS = (kernels.step_slots, kernels.first_illegal)


def read_only(actions: np.ndarray) -> np.ndarray:
    actions = actions.copy()
    actions.flags.writeable = False
    return actions


VARIANTS = {
    "read-only int64": read_only,
    "int8": lambda actions: actions.astype(np.int8),
    "uint16": lambda actions: actions.astype(np.uint16),
    "int32": lambda actions: actions.astype(np.int32),
    "strided int64": lambda actions: np.repeat(actions, 2)[::2],
    "read-only strided": lambda actions: np.lib.stride_tricks.as_strided(np.repeat(actions, 2)[::2],
                                                                         writeable=False),
    "list": lambda actions: actions.tolist(),
}


def test_every_kind_of_action_array_steps_on_the_loops_compiled_once():
    game = VectorGame(preset("standard"), 8, seed=0)
    game.reset(seed=0)
    rng = np.random.default_rng(0)
    game.step(game.random_actions(rng))  # the loops' one signature, compiled (or loaded) here
    compiled = [len(loop.signatures) for loop in LOOPS]
    for name, variant in VARIANTS.items():
        before = game.current.copy()
        game.step(variant(game.random_actions(rng).copy()))
        assert not np.array_equal(before, game.current) or game.done.any(), name
        assert [len(loop.signatures) for loop in LOOPS] == compiled, f"{name} compiled the loops again"
