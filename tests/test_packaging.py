"""The wheel as users install it: shipped checkpoints inside, no generic top-level package, commands that run."""

import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLAY_A_CHECKPOINT = """
import sys
import numpy as np
import rouba_env
from rouba_env import make_policy, preset
policy = rouba_env.load_policy("2p")
assert policy.deterministic, "one sampling default: the most likely legal action"
mixed = make_policy("checkpoint:mixed", preset("standard", num_players=3))
env = rouba_env.SingleAgentEnv(opponents=mixed, seat=0, num_players=3)
obs, info = env.reset(seed=0)
action = make_policy("checkpoint:3p", preset("standard", num_players=3)).act(obs, info["action_mask"],
                                                                         np.random.default_rng(0))
assert info["action_mask"][action]
assert "torch" not in sys.modules, "playing a checkpoint needs no torch"
result = rouba_env.evaluate(["checkpoint:mixed", "greedy", "random"], games=6, seed=0)
assert len(result.records) == 6
print(result.format_table())
print("played", rouba_env.__version__)
"""


@pytest.mark.slow
def test_playing_a_checkpoint_imports_no_torch(tmp_path):
    result = subprocess.run([sys.executable, "-c", PLAY_A_CHECKPOINT], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_the_wheel_in_a_fresh_venv(tmp_path):
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("rouba_env-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top_level == {"rouba_env", "rouba_training"}, "nothing installs under a generic name such as training"
    for shipped in ("rouba_env/checkpoints/2p/model.safetensors", "rouba_env/checkpoints/mixed/metadata.json",
                    "rouba_env/py.typed", "rouba_env/web/static/index.html", "rouba_training/configs/rank_2p.toml"):
        assert shipped in names, shipped

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True,
                               text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    played = subprocess.run([str(python), "-c", PLAY_A_CHECKPOINT], capture_output=True, text=True, cwd=elsewhere)
    assert played.returncode == 0 and f"played {version('rouba_env')}" in played.stdout, played.stderr
    assert "rating (openskill PlackettLuce)" in played.stdout, "the core install rates 3 players, without torch"
    game = subprocess.run([str(bin_dir / "rouba-play"), "--opponents", "checkpoint:2p", "--seed", "1"],
                          input="1\n" * 40, capture_output=True, text=True, cwd=elsewhere, timeout=300)
    assert game.returncode == 0 and "cards" in game.stdout, game.stderr
    for command in ("rouba-exploitability", "rouba-benchmark", "rouba-evaluate"):  # every package installed
        helped = subprocess.run([str(bin_dir / command), "--help"], capture_output=True, text=True, cwd=elsewhere)
        assert helped.returncode == 0 and "usage" in helped.stdout, (command, helped.stderr[-2000:])
    solver = subprocess.run([str(python), "-c", "import rouba_env.solve.game_tree, rouba_env.beliefs"],
                            capture_output=True, text=True, cwd=elsewhere)
    assert solver.returncode == 0, solver.stderr
    train = subprocess.run([str(bin_dir / "rouba-train")], capture_output=True, text=True, cwd=elsewhere)
    assert train.returncode == 2 and "pip install 'torch>=2.2'" in train.stderr and '-e ".[train]"' in train.stderr


@pytest.mark.parametrize("missing", ["torch", "ray"])
def test_rllib_support_without_its_extra_names_the_extra(missing):
    blocked = f"import sys; sys.modules[{missing!r}] = None\ntry:\n    import rouba_env.rllib\nexcept ImportError as e:\n    print(e)"
    result = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120)
    assert "needs the ray extra" in result.stdout and "pip install 'ray[rllib]" in result.stdout, result.stderr


def test_install_hints_name_the_extras_packages_as_pyproject_lists_them():
    import tomllib

    from rouba_env.extras import EXTRA_PACKAGES

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for extra, packages in EXTRA_PACKAGES.items():
        assert tuple(extras[extra]) == packages, extra


@pytest.mark.slow
def test_the_sdist_holds_what_a_clone_has(tmp_path):
    import tarfile

    built = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    names = {"/".join(name.split("/")[1:]) for name in tarfile.open(next(tmp_path.glob("*.tar.gz"))).getnames()}
    for wanted in ("CHANGELOG.md", "docs/rules.md", "examples/checkpoint_opponent.py", "training/configs/rank_2p.toml",
                   "checkpoints/2p/model.safetensors", "tests/test_table.py", "tests/golden/golden.json"):
        assert wanted in names, wanted
    assert not any("__pycache__" in name for name in names)


def test_every_package_folder_is_in_the_wheels_list():
    """A new folder with an ``__init__.py`` must join pyproject's ``packages``, or the wheel leaves it out."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "rouba_env").rglob("__init__.py")}
    folders |= {"rouba_training" for _ in (ROOT / "training").glob("__init__.py")}
    assert folders - listed == set()


def test_the_metadata_names_its_authors():
    from importlib.metadata import metadata

    assert "rouba_env developers" in (metadata("rouba_env")["Author"] or "")


def test_the_players_import_nothing_from_the_floors_above_them():
    """players/ reads rules, encodings, the tables, the batched engine and the OpenSpiel game only."""
    import ast

    above = ("rouba_env.envs", "rouba_env.evaluation", "rouba_env.solve", "rouba_env.web", "rouba_env.rllib", "rouba_env.cli",
             "rouba_training")
    package = Path(__file__).resolve().parents[1] / "rouba_env"

    def imported(path: Path) -> list[str]:
        names = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names.append(node.module or "")
            elif isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
        return names

    for path in (package / "players").glob("*.py"):
        assert not any(name.startswith(above) for name in imported(path)), path.name
    game = imported(package / "openspiel.py")
    assert not any(name.startswith(("rouba_env.players", *above)) for name in game), "the game sits below the players"


def test_the_main_job_and_the_tests_install_one_environment():
    """The README's two commands: the train extra holds the versions the test command's extras pin (ray's
    gymnasium, moviepy's pillow bound), so running the tests in the main job's environment downgrades nothing."""
    import tomllib

    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    gymnasium = [package for package in extras["ray"] if package.startswith("gymnasium")]
    assert gymnasium and set(gymnasium) <= set(extras["train"])
    assert any(package.startswith("pillow") and "<12" in package for package in extras["train"])
