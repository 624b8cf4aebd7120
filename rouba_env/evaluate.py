"""``python -m rouba_env.evaluate``: the ``rouba-evaluate`` command (see `rouba_env.cli.evaluate`).

``rouba_env.evaluate`` is also the evaluation function. Importing this module
puts the module under that name, so the module is made callable as that same
function: ``rouba_env.evaluate([...])`` keeps working either way.
"""

import sys
import types

from rouba_env.cli.evaluate import main
from rouba_env.evaluation.duplicate import evaluate as evaluate_players


class CallableEvaluateModule(types.ModuleType):
    """This module, callable as `rouba_env.evaluation.duplicate.evaluate`."""

    def __call__(self, *args, **kwargs):
        return evaluate_players(*args, **kwargs)


sys.modules[__name__].__class__ = CallableEvaluateModule

if __name__ == "__main__":
    sys.exit(main())
