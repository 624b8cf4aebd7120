"""The package's compiled code built once per installation (`rouba_env.compiled`): one line on standard error
while it is built, and silence from every later process, whatever it runs."""

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import rouba_env
from rouba_env.compiled import (
    COMPILE_NOTICE, COMPILED_MODULES, EVERYTHING, HEALED_NOTICE, MARKER_PREFIX, PACKAGE_DIR, TABLES, WARM_UP_MODULE,
    WARM_UP_NOTICES, CompileNotice, ensure_compiled, marker_path,
)

USE_A_KERNEL = "import numpy as np; from rouba_env.players.dense import dense; dense(np.ones((2, 3)), np.ones((3, 4)))"
WARM_UP = "import rouba_env.compiled as c; c.ensure_compiled()"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ENTRY_POINTS = [  # different paths through the package, each in a fresh process: two examples and a command
    [sys.executable, str(EXAMPLES / "random_aec_play.py")],
    [sys.executable, str(EXAMPLES / "solve_mini.py")],
    [sys.executable, "-c", "import rouba_env; print(rouba_env.evaluate(['checkpoint:2p', 'expert:samples=2'], "
                           "games=2).format_table())"],
    [sys.executable, "-m", "rouba_env.cli.exploitability", "--rules", "mini", "--players", "heuristic"],
]
NOTICES = (*WARM_UP_NOTICES.values(), COMPILE_NOTICE)


def event(module: str):
    return SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=SimpleNamespace(__module__=module))})


def test_the_notice_names_only_our_functions_and_only_once(capsys):
    notice = CompileNotice()
    notice.on_start(event("someone_elses.kernels"))
    assert capsys.readouterr().err == ""
    notice.on_start(event("rouba_env.batched.kernels"))
    notice.on_start(event("rouba_env.players.dense"))
    assert capsys.readouterr().err == COMPILE_NOTICE + "\n"
    warming = CompileNotice()
    for stage in (TABLES, EVERYTHING):  # each stage's own line, once
        warming.warming = stage
        warming.on_start(event("rouba_env.solve.passes"))
        warming.on_start(event("rouba_env.batched.kernels"))
        assert capsys.readouterr().err == WARM_UP_NOTICES[stage] + "\n"


def test_the_list_of_compiled_modules_is_every_file_with_a_numba_function():
    """The marker's fingerprint covers every file whose change makes numba compile again."""
    compiled = sorted(str(path.relative_to(PACKAGE_DIR)) for path in PACKAGE_DIR.rglob("*.py")
                      if re.search(r"numba\.(njit|jit|vectorize)|@njit", path.read_text()))
    assert sorted(COMPILED_MODULES) == compiled


def test_the_marker_changes_with_a_compiled_file(tmp_path, monkeypatch):
    before = marker_path()
    copy = tmp_path / "rouba_env"
    for name in COMPILED_MODULES + (WARM_UP_MODULE,):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes((PACKAGE_DIR / name).read_bytes())
    monkeypatch.setattr("rouba_env.compiled.PACKAGE_DIR", copy)
    first = marker_path()
    (copy / COMPILED_MODULES[0]).write_bytes((PACKAGE_DIR / COMPILED_MODULES[0]).read_bytes() + b"\n")
    assert first.name.startswith(MARKER_PREFIX) and first != before and marker_path() != first


def test_a_warmed_installation_runs_two_different_entry_points_without_compiling():
    """After one warm-up (this process's, or an earlier one's), fresh processes load everything from the cache."""
    ensure_compiled()
    assert marker_path().exists()
    for command in ENTRY_POINTS:
        run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=Path(rouba_env.__file__).parent)
        assert run.returncode == 0, run.stderr
        assert not any(notice in run.stderr for notice in NOTICES), (command, run.stderr)


@pytest.mark.slow
def test_a_cold_cache_is_warmed_once_and_then_serves_every_entry_point(tmp_path):
    """A fresh cache: the first environment compiles the first stage only (its game then compiles nothing more),
    the first game tree the rest, each with one line said; every later process says nothing."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    play_a_game = [sys.executable, str(EXAMPLES / "random_aec_play.py")]
    first = subprocess.run(play_a_game, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    assert first.stderr == WARM_UP_NOTICES[TABLES] + "\n", first.stderr
    assert [path.name.split("-")[2] for path in tmp_path.rglob(f"{MARKER_PREFIX}*")] == [TABLES]
    rest = subprocess.run([sys.executable, "-c", WARM_UP], env=env, capture_output=True, text=True, timeout=900)
    assert rest.returncode == 0, rest.stderr
    assert rest.stderr == WARM_UP_NOTICES[EVERYTHING] + "\n", rest.stderr
    for command in ENTRY_POINTS:
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        assert not any(notice in run.stderr for notice in NOTICES), (command, run.stderr)
    # then the engine's cache files are cut short (a kill or a full disk mid-write) or garbled: a game still plays,
    # each damaged function said once and compiled again, and the next process loads it all in silence
    damage_cache(tmp_path)
    healed = subprocess.run(play_a_game, env=env, capture_output=True, text=True, timeout=600)
    assert healed.returncode == 0, healed.stderr
    assert "could not be read" in healed.stderr, healed.stderr
    again = subprocess.run(play_a_game, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stderr == "", again.stderr


def damage_cache(folder: Path) -> None:
    """Cut the batched engine's cache data short, garble the rules engine's, garble the encoders' indexes: what
    any game plays through."""
    for pattern, cut in (("kernels.*.nbc", True), ("engine.*.nbc", False), ("observation.*.nbi", False)):
        paths = sorted(folder.rglob(pattern))
        assert paths, pattern
        for path in paths:
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 3] if cut else bytes(reversed(data)))


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "garbled index"])  # garbled data: the cold-cache test above
def test_a_damaged_cache_entry_is_compiled_again_said_once_and_replaced(tmp_path, damage):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", USE_A_KERNEL], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    for path in tmp_path.rglob("dense.dense_rows-*.nbi" if damage == "garbled index" else "dense.dense_rows-*.nbc"):
        data = path.read_bytes()
        path.write_bytes({"truncated": data[:100], "empty": b""}.get(damage, bytes(reversed(data))))
    runs = [subprocess.run([sys.executable, "-c", USE_A_KERNEL], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], [run.stderr for run in runs]
    said = HEALED_NOTICE.split("{function}")[0]
    assert runs[0].stderr.count(said) == 1 and "dense_rows" in runs[0].stderr, runs[0].stderr
    assert runs[1].stderr == "", "healed: the next process loads it from the cache"


@pytest.mark.slow
def test_code_outside_the_warm_up_says_so_once_and_a_warm_one_says_nothing(tmp_path):
    """A kernel compiled at its first call, with no table made: the short notice, once, then silence."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", USE_A_KERNEL], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], [run.stderr for run in runs]
    assert runs[0].stderr.count(COMPILE_NOTICE) == 1
    assert COMPILE_NOTICE not in runs[1].stderr


ODD_ACTIONS = """
import warnings
import numpy as np
import rouba_env

def outcomes():
    env = rouba_env.env(num_players=2)
    seen = []
    for action in [10**30, 2**64, -2**63 - 1, -1, True, 1.0, np.int64(10**18), np.uint64(2**64 - 1)]:
        env.reset(seed=1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            env.step(action)
        seen.append((repr(action), all(env.terminations.values()), [str(w.message).split(";")[0] for w in caught]))
    return seen
"""


def test_odd_actions_take_the_illegal_action_path_whether_the_code_was_compiled_here_or_loaded():
    """The same answer in this process and in a fresh one that loads every kernel from numba's cache."""
    namespace: dict = {}
    exec(ODD_ACTIONS, namespace)
    here = namespace["outcomes"]()
    assert all(ended and len(said) == 1 and "illegal action" in said[0] for _, ended, said in here), here
    run = subprocess.run([sys.executable, "-c", ODD_ACTIONS + "\nprint(repr(outcomes()))"], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == repr(here)
    assert not any(notice in run.stderr for notice in NOTICES), run.stderr


READ_ONLY = """
import os
prepared = os.environ["NUMBA_CACHE_DIR"]
real_access = os.access
def access(path, mode, *args, **kwargs):  # as a read-only mount answers: root's bits would say writable
    if mode & os.W_OK and os.path.abspath(str(path)).startswith(os.path.abspath(prepared)):
        return False
    return real_access(path, mode, *args, **kwargs)
os.access = access
"""


@pytest.mark.slow
def test_a_prepared_cache_that_cannot_be_written_serves_from_a_copy_without_compiling(tmp_path):
    prepared, home = tmp_path / "prepared", tmp_path / "home"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(prepared), "XDG_CACHE_HOME": str(home)}
    first = subprocess.run([sys.executable, "-c", USE_A_KERNEL], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and COMPILE_NOTICE in first.stderr, first.stderr
    before = {path: path.read_bytes() for path in prepared.rglob("*") if path.is_file()}
    runs = [subprocess.run([sys.executable, "-c", READ_ONLY + USE_A_KERNEL], env=env, capture_output=True, text=True,
                           timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert run.stderr.count("cannot be written here: numba's cache is read from a copy") == 1, run.stderr
        assert COMPILE_NOTICE not in run.stderr, "the prepared code is loaded, not compiled again"
    assert {path: path.read_bytes() for path in prepared.rglob("*") if path.is_file()} == before
    assert any((home / "rouba_env" / "numba").rglob("*.nbc"))


def test_a_numba_cache_dir_that_is_a_file_is_said_in_one_line(tmp_path):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(not_a_folder)}
    run = subprocess.run([sys.executable, "-c", "import rouba_env"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count(f"NUMBA_CACHE_DIR={not_a_folder} is not a folder") == 1, run.stderr
