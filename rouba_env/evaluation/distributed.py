"""Duplicate-deal evaluation spread over a Ray cluster (``rouba-evaluate --ray``).

The deals are cut into the same chunks as a multi-process run
(`rouba_env.evaluation.duplicate`), each chunk is one Ray task, and the
records are gathered and sorted before the statistics: every game's deal and
randomness depend only on (seed, deal, lineup, rotation), so the results equal
a local run with the same seed, whatever the cluster.

Players are given as specs; a ``checkpoint:PATH`` must be readable at that
path on every node. Needs Ray (``pip install -e ".[ray]"``); it is imported
only when these functions are called.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from rouba_env.evaluation.duplicate import evaluate
from rouba_env.evaluation.play import GameRecord, Chunk, play_chunk
from rouba_env.evaluation.results import EvaluationResult
from rouba_env.rules.config import RulesConfig

TASK_CPUS = 1
"""Logical CPUs one chunk's task asks for (it plays its games one after another)."""


def import_ray():
    """The ``ray`` module, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError:
        from rouba_env.extras import install_hint

        raise RuntimeError(f"--ray needs Ray: {install_hint('ray')}") from None
    return ray


RAY_CONNECT_TIMEOUT_S = 5.0
"""Seconds to wait for a Ray cluster's address to answer before giving up (Ray itself waits minutes)."""


def ray_address_problem(address: str) -> str | None:
    """What is wrong with the spelling of a Ray cluster's ``address`` (None: ``auto`` or a HOST:PORT)."""
    if address == "auto":
        return None
    host, separator, port = address.rpartition(":")
    if not separator or not host or " " in address or not port.isdigit() or not 0 < int(port) < 65536:
        return f"Ray address {address!r} must be HOST:PORT (e.g. 127.0.0.1:6379, a port in 1..65535) or auto"
    return None


def check_ray_address(address: str) -> None:
    """A RuntimeError naming ``address`` unless it is ``auto`` or a HOST:PORT that accepts a connection now."""
    import socket

    problem = ray_address_problem(address)
    if problem is not None:
        raise RuntimeError(problem)
    if address == "auto":
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_CONNECT_TIMEOUT_S).close()
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else (error.strerror or str(error))
        raise RuntimeError(f"cannot reach a Ray cluster at {address}: {reason} (within "
                           f"{RAY_CONNECT_TIMEOUT_S:g} s); is `ray start --head` running there?") from None


def connect(address: str | None = None) -> bool:
    """Join the Ray cluster at ``address`` (or start a local Ray when None/empty); True if this call started it.

    An already initialised Ray (e.g. by the caller) is used as it is.
    """
    ray = import_ray()
    if address:
        check_ray_address(address)  # even with a Ray already running here: the address asked for must answer
    if ray.is_initialized():
        return False
    if address:
        join_cluster(ray, address)
    else:
        ray.init(include_dashboard=False, configure_logging=False)
    return True


def join_cluster(ray, address: str, **options) -> None:
    """``ray.init(address=...)``; a RuntimeError saying what Ray said when the address does not hold a Ray
    cluster (Ray raises a ConnectionError, which would read as a file's error)."""
    try:
        ray.init(address=address, configure_logging=False, **options)
    except (ConnectionError, TimeoutError) as error:
        raise RuntimeError(f"cannot join a Ray cluster at {address}: Ray said: "
                           f"{str(error).splitlines()[0] if str(error) else type(error).__name__}") from None


def ray_chunk_runner(chunks: Iterable[Chunk]) -> Iterable[list[GameRecord]]:
    """Play every chunk as a Ray task; yield each chunk's records as it finishes (any order)."""
    ray = import_ray()
    play = ray.remote(num_cpus=TASK_CPUS)(play_chunk)
    pending = [play.remote(chunk) for chunk in chunks]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


def evaluate_on_ray(
    players: Sequence[str],
    rules: RulesConfig | str | dict | None = None,
    games: int = 200,
    *,
    num_players: int | None = None,
    seed: int = 0,
    address: str | None = None,
    progress: Callable[[int], None] | None = None,
    record_moves: bool = False,
    fill: str = "cycle",
) -> EvaluationResult:
    """`rouba_env.evaluate` with the games played on a Ray cluster; the same results as a local run.

    ``address``: a running cluster to join (``auto``, ``HOST:PORT``); None starts
    a local Ray for this call (and stops it afterwards). Other arguments as in
    `rouba_env.evaluation.duplicate.evaluate`; players must be spec strings.
    """
    not_specs = [player for player in players if not isinstance(player, str)]
    if not_specs:
        raise ValueError(f"evaluation on Ray needs player specs (a Policy object cannot be shipped), got {not_specs!r}")
    ray = import_ray()
    started = connect(address)
    try:
        cpus = max(TASK_CPUS, int(ray.cluster_resources().get("CPU", TASK_CPUS)))
        return evaluate(players, rules=rules, games=games, num_players=num_players, seed=seed,
                        workers=cpus // TASK_CPUS, progress=progress, chunk_runner=ray_chunk_runner,
                        record_moves=record_moves, fill=fill)
    finally:
        if started:
            ray.shutdown()
