"""How many threads torch uses for an update, when the user has not said (``torch_threads`` 0).

Torch's own default, a thread per core, is the fastest on an idle machine, and several times slower than one
thread when another process keeps a core busy: a thread that finds its core taken holds up the rest at every
operation. And no count fixed in advance suits both. So the trainer looks: while a batch is collected, the
cores that other processes did not use (the idle time in ``/proc/stat`` plus this process's own CPU time) are
the ones an update can have, and torch gets that many threads, at least one; where ``/proc/stat`` cannot be
read, one thread for every `CORES_PER_TORCH_THREAD` usable cores.

A thread count changes the order of torch's sums, so a run whose count moved does not repeat to the last digit;
``torch_threads`` set to a number fixes it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch

CORES_PER_TORCH_THREAD = 4
"""Without ``/proc/stat``: one torch thread for this many usable cores, at least one."""
PROC_STAT = Path("/proc/stat")
IDLE_FIELDS = (3, 4)
"""The idle and iowait columns of a ``cpuN`` line of ``/proc/stat`` (after the name)."""


def usable_cores() -> set[int]:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))


def static_torch_threads() -> int:
    """The thread count when the idle cores cannot be read: a quarter of the usable cores, at least one."""
    return max(1, len(usable_cores()) // CORES_PER_TORCH_THREAD)


def idle_ticks(cores: set[int]) -> int | None:
    """The idle time of ``cores`` so far, in clock ticks (None where ``/proc/stat`` cannot be read)."""
    try:
        lines = PROC_STAT.read_text().splitlines()
    except OSError:
        return None
    total = 0
    for line in lines:
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cores:
            total += sum(int(fields[index]) for index in IDLE_FIELDS)
    return total


class TorchThreads:
    """Sets torch's thread count: ``fixed`` when above 0, else before each update from the idle cores seen
    while the batch was collected (see the module's docstring)."""

    def __init__(self, fixed: int, *, adaptive: bool = True):
        self.fixed = fixed
        self.cores = usable_cores()
        self.ticks_per_second = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.adaptive = adaptive and not fixed and idle_ticks(self.cores) is not None
        self.count = fixed or static_torch_threads()
        self._started: tuple[float, int] | None = None
        torch.set_num_threads(self.count)

    def collection_started(self) -> None:
        if self.adaptive:
            self._started = (time.monotonic(), time.process_time(), idle_ticks(self.cores) or 0)

    def before_update(self) -> int:
        """Set and return the thread count for the update that follows a collection."""
        if self.adaptive and self._started is not None:
            began, own_began, ticks = self._started
            seconds = time.monotonic() - began
            now = idle_ticks(self.cores)
            if now is not None and seconds > 0:
                idle = (now - ticks) / self.ticks_per_second
                free_cores = (idle + time.process_time() - own_began) / seconds
                count = max(1, min(len(self.cores), round(free_cores)))
                if count != self.count:
                    torch.set_num_threads(count)
                    self.count = count
        return self.count
