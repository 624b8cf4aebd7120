"""The one line on standard error while numba first compiles the package's code, and silence from a warm cache."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from rouba_env.compiled import COMPILE_NOTICE, CompileNotice

USE_A_KERNEL = "import numpy as np; from rouba_env.players.dense import dense; dense(np.ones((2, 3)), np.ones((3, 4)))"


def event(module: str):
    return SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=SimpleNamespace(__module__=module))})


def test_the_notice_names_only_our_functions_and_only_once(capsys):
    notice = CompileNotice()
    notice.on_start(event("someone_elses.kernels"))
    assert capsys.readouterr().err == ""
    notice.on_start(event("rouba_env.batched.kernels"))
    notice.on_start(event("rouba_env.players.dense"))
    assert capsys.readouterr().err == COMPILE_NOTICE + "\n"


@pytest.mark.slow
def test_a_cold_cache_says_so_once_and_a_warm_one_says_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", USE_A_KERNEL], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], [run.stderr for run in runs]
    assert runs[0].stderr.count(COMPILE_NOTICE) == 1
    assert COMPILE_NOTICE not in runs[1].stderr
