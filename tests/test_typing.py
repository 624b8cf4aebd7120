"""Type checkers see the environments' types (py.typed is shipped): nothing a user calls comes back as Any."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = """
import rouba_env
env = rouba_env.SingleAgentEnv()
reveal_type(env.reset(seed=0))
reveal_type(env.step(0))
aec = rouba_env.env()
reveal_type(aec)
reveal_type(aec.last())
"""


@pytest.mark.slow
def test_mypy_sees_the_environments_types(tmp_path):
    pytest.importorskip("mypy")
    snippet = tmp_path / "user_code.py"
    snippet.write_text(SNIPPET)
    result = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
                             "--no-incremental", str(snippet)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    revealed = [line.split("Revealed type is ", 1)[1] for line in result.stdout.splitlines() if "Revealed type" in line]
    assert len(revealed) == 4, result.stdout + result.stderr
    assert all(kind != '"Any"' for kind in revealed), revealed
    assert "float, bool, bool" in revealed[1] and "OrderEnforcing" in revealed[2]


@pytest.mark.slow
def test_gymnasium_makes_the_env_by_module_and_id_without_an_import_first():
    code = ("import sys, gymnasium\nassert 'rouba_env' not in sys.modules\n"
            "env = gymnasium.make('rouba_env:RoubaMonte-v0', opponents='heuristic')\nobs, info = env.reset(seed=0)\n"
            "print(obs.shape, int(info['action_mask'].sum()) > 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "(154,) True" in result.stdout, result.stderr


@pytest.mark.slow
def test_mypy_passes_on_the_package_with_the_projects_settings():
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], capture_output=True, text=True,
                            cwd=ROOT, timeout=900)
    assert result.returncode == 0 and "Success: no issues found" in result.stdout, result.stdout[-3000:]
