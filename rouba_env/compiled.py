"""The package's compiled code, built once per installation, and the one line a user sees while it is built.

numba compiles a function at its first call and keeps the machine code on disk (``cache=True``). Left to
itself, a fresh installation would compile the engine in one process, the network players in the next
and the solver in a third, each time in the middle of someone's work. So the registered warm-up
(`rouba_env.warm_up`: every compiled path once, on tiny games) runs in two stages, each once per
installation, each leaving a marker beside numba's cache: `TABLES` (the batched rules engine, the encoders
and the environments: what a table plays with) when the first table is made, so that a first environment
step waits for that stage only, and `EVERYTHING` (the rest: the card-level engine, the players that search
or read a network, the exact solver) when the first of those is made. Later processes find the markers
and load each kernel from the cache at its first call. A marker names the files of compiled code (their
sizes and times), numba's and Python's versions: an edited or upgraded installation is warmed again.

While numba compiles one of our functions, a line goes to standard error (numba tells its listeners when
it compiles, never when it loads from its cache): the stage's `WARM_UP_NOTICES` line during a warm-up,
`COMPILE_NOTICE` at any other compile of ours in a process.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import os
import shutil
import sys
from pathlib import Path
from typing import Callable

import numba
import numba.core.event
from numba.core.caching import FunctionCache
from numba.core.dispatcher import Dispatcher

from rouba_env.files import FileWriteError, write_atomically
from rouba_env.rules import core

TABLES = "tables"
"""The warm-up's first stage: what a table (a `VectorGame`, an environment) plays with."""
EVERYTHING = "everything"
"""The warm-up's last stage: the rest of the package's compiled code (and the first stage, where it is cold)."""
TABLE_STAGE_PLAYERS = ("random", "greedy", "heuristic")
"""The scripted players that `TABLES` compiles (an environment's opponents): making one needs no more."""
WARM_UP_NOTICES = {
    TABLES: ("rouba_env: compiling the rules engine, encoders and environments once for this installation: about "
             "1.5 minutes, longer on a busy machine; later processes load them from numba's cache"),
    EVERYTHING: ("rouba_env: compiling the rest of its compiled code (card-level engine, network and search players, "
                 "exact solver) once for this installation: about 35 seconds, longer on a busy machine; later "
                 "processes load it from numba's cache"),
}
READ_ONLY_NOTICE = ("rouba_env: NUMBA_CACHE_DIR={folder} cannot be written here: numba's cache is read from a copy "
                    "of it in {copy}")
NOT_A_FOLDER_NOTICE = ("rouba_env: NUMBA_CACHE_DIR={folder} is not a folder: numba keeps its cache beside the "
                       "package's sources instead (or compiles in every process where it cannot)")
COMPILE_NOTICE = ("rouba_env: compiling code that numba's cache does not hold yet (up to a minute); later "
                  "processes load it from the cache")
HEALED_NOTICE = ("rouba_env: numba's cache of {function} in {folder} could not be read ({error}): compiling it "
                 "again and replacing it")
CANNOT_HEAL_NOTICE = ("rouba_env: numba's cache of {function} in {folder} could not be read ({error}) and cannot be "
                      "replaced there ({reason}): remove that folder (it is made again)")
PACKAGE_PREFIX = "rouba_env."
PACKAGE_DIR = Path(__file__).resolve().parent
COMPILED_MODULES = (
    "batched/kernels.py", "encoding/masks.py", "encoding/observation.py", "players/base.py", "players/dense.py",
    "players/network.py", "rules/buffers.py", "rules/core.py", "rules/engine.py", "rules/seeding.py",
    "solve/game_tree.py", "solve/passes.py", "streams.py",
)
"""The package's files that hold numba functions (a test keeps the list whole): what numba's cache depends on."""
WARM_UP_MODULE = "warm_up.py"
"""The warm-up's own file: a path added to it warms an installation again."""
MARKER_PREFIX = "rouba_env-compiled-"
"""Name of a marker file beside numba's cache of the rules core, followed by its stage and the installation's
fingerprint."""


class CompileNotice(numba.core.event.Listener):
    """Writes one line to standard error when numba first compiles a function of this package in a process:
    the stage's `WARM_UP_NOTICES` line while a stage is `warming`, `COMPILE_NOTICE` otherwise (each once)."""

    def __init__(self) -> None:
        self.told: set[str] = set()
        """The lines already written in this process (a stage's name, or `COMPILE_NOTICE`)."""
        self.warming = ""
        """The stage `ensure_compiled` is running in this process ("" when none)."""
        self.stages: dict[str, Callable[[], None]] = {}
        """The registered warm-up's stages, in the order they run (`register_warm_up`)."""

    def on_start(self, event: numba.core.event.Event) -> None:
        line = self.warming or COMPILE_NOTICE
        if line in self.told:
            return
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.startswith(PACKAGE_PREFIX):
            self.told.add(line)
            print(WARM_UP_NOTICES[self.warming] if self.warming else COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, event: numba.core.event.Event) -> None:
        pass


NOTICE = CompileNotice()
numba.core.event.register("numba:compile", NOTICE)


class HealingCache(FunctionCache):
    """numba's on-disk cache of one of our functions, which takes an entry it cannot read (a file cut short by a
    kill or a full disk, or garbled) as absent: it removes the function's damaged files, says so in one line,
    and numba compiles the function again and saves it in their place."""

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as error:  # noqa: BLE001 (whatever an unreadable entry raises: it is compiled again)
            self.remove_damaged(f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}")
            return None

    def remove_damaged(self, error: str) -> None:
        folder = Path(self._cache_path)
        base = glob.escape(self._impl.filename_base)
        files = [*folder.glob(f"{base}.nbi"), *folder.glob(f"{base}.*.nbc")]
        function = getattr(self._py_func, "__qualname__", repr(self._py_func))
        try:
            for path in files:
                path.unlink(missing_ok=True)
        except OSError as problem:
            self.disable()  # compiled in this process only
            print(CANNOT_HEAL_NOTICE.format(function=function, folder=folder, error=error,
                                            reason=problem.strerror or problem), file=sys.stderr, flush=True)
            return
        print(HEALED_NOTICE.format(function=function, folder=folder, error=error), file=sys.stderr, flush=True)


def copied_cache_folder(folder: Path) -> Path:
    """Where a read-only ``NUMBA_CACHE_DIR`` is copied: under the user's cache folder, by its path."""
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return home / "rouba_env" / "numba" / hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]


def writable_cache() -> None:
    """numba skips a ``NUMBA_CACHE_DIR`` it cannot write (a cache prepared in a container image or on a
    cluster's read-only disk) and compiles everything again elsewhere: such a folder's files are copied (those
    missing or older in the copy) to `copied_cache_folder`, which numba then reads and writes, said in one line.
    A ``NUMBA_CACHE_DIR`` that is not a folder is said in one line too."""
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if not configured:
        return
    folder = Path(configured)
    if folder.exists() and not folder.is_dir():
        print(NOT_A_FOLDER_NOTICE.format(folder=configured), file=sys.stderr, flush=True)
        return
    if not folder.is_dir() or os.access(folder, os.W_OK):
        return
    copy = copied_cache_folder(folder)
    try:
        for source in folder.rglob("*"):
            target = copy / source.relative_to(folder)
            if source.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            elif not target.exists() or target.stat().st_mtime_ns < source.stat().st_mtime_ns:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    except OSError as error:
        print(f"rouba_env: NUMBA_CACHE_DIR={configured} cannot be written and cannot be copied to {copy} "
              f"({error.strerror or error}): every process compiles what it runs", file=sys.stderr, flush=True)
        return
    setattr(numba.core.config, "CACHE_DIR", str(copy))  # numba's settings module, read as each cache is made
    os.environ["NUMBA_CACHE_DIR"] = str(copy)  # numba reads it again when it reloads its settings
    print(READ_ONLY_NOTICE.format(folder=configured, copy=copy), file=sys.stderr, flush=True)


def guard_caches() -> None:
    """Give every cached numba function of the package a `HealingCache` (called once by the package's
    ``__init__``, with the notice's registration), in a writable copy of a read-only ``NUMBA_CACHE_DIR``
    (`writable_cache`)."""
    writable_cache()
    for name in COMPILED_MODULES:
        module = importlib.import_module(PACKAGE_PREFIX + name[: -len(".py")].replace("/", "."))
        for value in vars(module).values():
            if (isinstance(value, Dispatcher) and getattr(value.py_func, "__module__", None) == module.__name__
                    and type(getattr(value, "_cache", None)) is FunctionCache):
                setattr(value, "_cache", HealingCache(value.py_func))  # where numba's dispatcher keeps its cache


def register_warm_up(stages: dict[str, Callable[[], None]]) -> None:
    """The stages `ensure_compiled` runs on a cold installation, `TABLES` then `EVERYTHING`
    (`rouba_env.warm_up.WARM_UP_STAGES`, registered by the package's ``__init__``, which sits above every layer
    that warm-up touches)."""
    if list(stages) != [TABLES, EVERYTHING]:
        raise ValueError(f"the warm-up's stages are {[TABLES, EVERYTHING]}, in that order; got {list(stages)}")
    NOTICE.stages = dict(stages)


def fingerprint() -> str:
    """The installation as numba's cache sees it: each `COMPILED_MODULES` file's size and time (and the
    warm-up's), numba's and Python's versions (16 hex digits)."""
    digest = hashlib.sha256(f"{numba.__version__} {sys.version}".encode())
    for name in COMPILED_MODULES + (WARM_UP_MODULE,):
        info = os.stat(PACKAGE_DIR / name)
        digest.update(f"{name} {info.st_size} {info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def cache_folder() -> Path:
    """Where numba keeps the rules core's compiled code (beside the sources, or under ``NUMBA_CACHE_DIR``)."""
    return Path(getattr(core.play_move, "_cache")._cache_path)  # numba's own record of where it caches


def marker_path(stage: str = EVERYTHING) -> Path:
    """The marker `ensure_compiled` leaves once ``stage`` of the installation's code is compiled."""
    return cache_folder() / f"{MARKER_PREFIX}{stage}-{fingerprint()}"


def ensure_compiled(stage: str = EVERYTHING) -> None:
    """Compile (or load) the package's kernels up to ``stage`` now (`TABLES`, or `EVERYTHING`: both stages),
    each stage that this installation has not warmed yet.

    Called where a table, a game tree or a player that runs compiled code is made, so that a command or an
    environment never stops in the middle of a game to compile. A no-op inside the warm-up itself, and where
    numba cannot keep a cache (a read-only installation without ``NUMBA_CACHE_DIR``: each kernel is then
    compiled at its first call).
    """
    if NOTICE.warming or not NOTICE.stages:
        return
    if stage not in NOTICE.stages:
        raise ValueError(f"stage must be one of {list(NOTICE.stages)}, got {stage!r}")
    for name, warm_up in NOTICE.stages.items():
        marker = marker_path(name)
        writable = os.access(marker.parent if marker.parent.exists() else marker.parent.parent, os.W_OK)
        if not marker.exists() and writable:
            NOTICE.warming = name
            try:
                warm_up()
            finally:
                NOTICE.warming = ""
            current = {marker_path(other).name for other in NOTICE.stages}
            for old in marker.parent.glob(f"{MARKER_PREFIX}*"):  # an earlier version's markers
                if old.name not in current:
                    old.unlink(missing_ok=True)
            try:
                write_atomically(marker, "compiled\n")
            except FileWriteError:
                pass  # numba's cache folder went away or filled up: the next process warms up again
        if name == stage:
            return
