"""The documentation site builds in strict mode (a broken link or reference fails), with tables from the code."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_site_builds_strictly_with_generated_tables_and_the_example_files(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=600,
                            env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for page in ("aec", "gymnasium", "batched"):
        assert "pile_top" in (tmp_path / page / "index.html").read_text(), f"{page}: the generated spaces"
    environments = (tmp_path / "environments" / "index.html").read_text()
    assert "<!-- observation-table -->" not in environments and "pile_top" in environments
    assert "python_rouba_monte" in (tmp_path / "openspiel" / "index.html").read_text()
    assert "a 2-player table has 130 actions" in environments
    training = (tmp_path / "training" / "index.html").read_text()
    assert "--total-steps" in training and "--rollout-workers" in training, "every TrainConfig field"
    assert '<code style="white-space: nowrap">--best-response</code></td>\n<td>(none)</td>' in training, \
        "flags do not wrap, and an empty default says so"
    examples = (tmp_path / "examples" / "index.html").read_text()
    for path in (ROOT / "examples").glob("*.py"):
        assert path.name in examples
    assert "load_policy" in examples, "the example files themselves are shown"
    api = (tmp_path / "api" / "index.html").read_text()
    assert api.count("SingleAgentEnv") > 1
    for name in ("rouba_env.envs.aec.raw_env", "rouba_env.envs.single_agent.SingleAgentEnv",
                 "rouba_env.envs.vector_env.RoubaVectorEnv", "rouba_env.batched.game.VectorGame",
                 "rouba_env.table.Table", "rouba_env.vector_table.VectorTable", "rouba_env.rules.config.RulesConfig",
                 "rouba_env.players.registry.make_policy", "rouba_env.evaluation.duplicate.evaluate",
                 "rouba_training.config.TrainConfig", "rouba_training.train.train"):
        assert f'<h3 id="{name}"' in api, f"the API reference names {name} under its own heading"
    assert "opponent_model" not in api and "rollout_actions" not in api, "internals are hidden"
