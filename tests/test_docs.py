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
    assert ('<code style="white-space: nowrap">--best-response</code></td>\n<td><code>opponents</code></td>\n'
            '<td>(none)</td>') in training, \
        "flags do not wrap, and an empty default says so"
    examples = (tmp_path / "examples" / "index.html").read_text()
    for path in (ROOT / "examples").glob("*.py"):
        assert path.name in examples
    assert "load_policy" in examples, "the example files themselves are shown"
    api = (tmp_path / "api" / "index.html").read_text()
    assert api.count("SingleAgentEnv") > 1
    for name in ("rouba_env.envs.aec.raw_env", "rouba_env.envs.single_agent.SingleAgentEnv",
                 "rouba_env.envs.vector_env.RoubaVectorEnv", "rouba_env.batched.game.VectorGame",
                 "rouba_env.single_game.SingleGame", "rouba_env.table.Table", "rouba_env.rules.config.RulesConfig",
                 "rouba_env.players.registry.make_policy", "rouba_env.evaluation.duplicate.evaluate",
                 "rouba_training.config.TrainConfig", "rouba_training.trainer.train"):
        assert f'<h3 id="{name}"' in api, f"the API reference names {name} under its own heading"
    assert "opponent_model" not in api and "rollout_actions" not in api, "internals are hidden"


API_PAGE = ROOT / "docs" / "api.md"
UNDOCUMENTED_BY_DIRECTIVE = {"__version__"}
"""Exports the API page describes in prose (a plain string has no docstring to render)."""


def api_page_entries() -> list[tuple[str, object]]:
    """(name, object) of every ``::: path`` entry of the API page and of the members its options list."""
    import importlib
    import re

    entries = []
    text = API_PAGE.read_text()
    for match in re.finditer(r"^::: ([\w.]+)\n((?:    .*\n)*)", text, flags=re.MULTILINE):
        path, options = match.group(1), match.group(2)
        parts = path.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                target = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attribute in parts[cut:]:
                target = getattr(target, attribute)
            break
        members = re.search(r"members: \[([^\]]*)\]", options.replace("\n", " "))
        if members:
            entries += [(name, getattr(target, name)) for name in re.split(r"[\s,]+", members.group(1)) if name]
        else:
            entries.append((parts[-1], target))
    return entries


def imported_names(source: str) -> list[tuple[str, str]]:
    """(module, name) of every ``from rouba_env... import name`` / ``from rouba_training...`` in Python source."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("rouba_env", "rouba_training"):
            found += [(node.module, alias.name) for alias in node.names]
    return found


def names_the_pages_and_examples_import() -> list[tuple[str, str, str]]:
    """(where, module, name) for the imports of the examples, the snippets and the pages' Python blocks."""
    import re

    sources = [(path.name, path.read_text()) for path in sorted((ROOT / "examples").glob("*.py"))]
    sources += [(path.name, path.read_text()) for path in sorted((ROOT / "docs" / "snippets").glob("*.py"))]
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL):
            if block.startswith(">>>"):  # a session: its input lines only
                block = "\n".join(line[4:] for line in block.splitlines() if line.startswith((">>> ", "... ")))
            sources.append((page.name, block))
    return [(where, module, name) for where, source in sources for module, name in imported_names(source)]


def is_documented(name: str, value, entries) -> bool:
    """A class, function or module by identity; a constant by its name and value (small ints are shared)."""
    import inspect

    if inspect.isclass(value) or inspect.isfunction(value) or inspect.ismodule(value):
        return any(value is documented for _, documented in entries)
    return any(name == documented_name and value is documented for documented_name, documented in entries)


def test_the_api_page_documents_every_export():
    import rouba_env

    pytest.importorskip("ray")  # the page documents rouba_env.rllib (the ray extra) and the trainer (torch)
    pytest.importorskip("torch")
    entries = api_page_entries()
    missing = [name for name in rouba_env.__all__ if name not in UNDOCUMENTED_BY_DIRECTIVE
               and not is_documented(name, getattr(rouba_env, name), entries)]
    assert missing == [], f"exported but absent from docs/api.md: {missing}"
    for name in UNDOCUMENTED_BY_DIRECTIVE:
        assert f"`rouba_env.{name}`" in API_PAGE.read_text()


@pytest.mark.parametrize("package", ["rouba_env.solve", "rouba_training"])
def test_the_api_page_documents_every_export_of_the_solver_and_the_trainer(package):
    import importlib

    pytest.importorskip("torch")
    module = importlib.import_module(package)
    entries = api_page_entries()
    missing = [name for name in module.__all__ if not is_documented(name, getattr(module, name), entries)]
    assert missing == [], f"{package} exports, but docs/api.md lacks: {missing}"


def test_the_api_page_documents_what_the_pages_and_examples_import():
    import importlib
    import inspect

    pytest.importorskip("ray")  # the RLlib example imports rouba_env.rllib
    entries = api_page_entries()
    missing = []
    for where, module, name in names_the_pages_and_examples_import():
        value = getattr(importlib.import_module(module), name)
        if not inspect.ismodule(value) and not is_documented(name, value, entries):
            missing.append(f"{where}: {module}.{name}")
    assert missing == [], f"imported by a page or example but absent from docs/api.md: {missing}"


def test_every_method_the_examples_call_on_a_documented_class_has_a_docstring():
    """A user reading an example finds each method it calls in the API reference, with words."""
    import ast
    import inspect

    pytest.importorskip("ray")
    pytest.importorskip("torch")
    called = {node.func.attr for path in sorted((ROOT / "examples").glob("*.py"))
              for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    missing = []
    for _, value in api_page_entries():
        if not inspect.isclass(value):
            continue
        for name in sorted(called):
            owner = next((klass for klass in value.__mro__ if name in vars(klass)), None)
            if name.startswith("_") or owner is None or not owner.__module__.startswith(("rouba_env", "rouba_training")):
                continue
            method = vars(owner)[name]
            if callable(method) and not (getattr(method, "__doc__", None) or "").strip():
                missing.append(f"{owner.__module__}.{owner.__name__}.{name}")
    assert sorted(set(missing)) == [], f"methods the examples call without a docstring: {sorted(set(missing))}"
