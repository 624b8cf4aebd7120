"""The one line a user sees while the package's compiled code is built: once per machine, never from a warm cache.

numba compiles the batched engine and the networks' kernels at their first
call and keeps the machine code on disk (``cache=True``). Building it takes
the better part of a minute, during which a command would otherwise sit
silent. numba tells its listeners when it compiles (never when it loads from
its cache), so the notice below goes to standard error at the first compile
of one of our functions in a process, from every command and environment.
"""

from __future__ import annotations

import sys

import numba.core.event

COMPILE_NOTICE = ("rouba_env: compiling the batched engine and the network kernels, once per machine "
                  "(about a minute); later runs start at once")
PACKAGE_PREFIX = "rouba_env."


class CompileNotice(numba.core.event.Listener):
    """Writes `COMPILE_NOTICE` to standard error when numba first compiles a function of this package."""

    def __init__(self) -> None:
        self.told = False

    def on_start(self, event: numba.core.event.Event) -> None:
        if self.told:
            return
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.startswith(PACKAGE_PREFIX):
            self.told = True
            print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, event: numba.core.event.Event) -> None:
        pass


NOTICE = CompileNotice()
numba.core.event.register("numba:compile", NOTICE)
