"""Functions read in one screen: none in the package or the trainer runs past `MAX_FUNCTION_LINES` lines
(from its ``def`` to its last line, docstring included; decorators not counted). A longer one is split by
concern, into functions that each say what they do."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("rouba_env", "training")
MAX_FUNCTION_LINES = 60


def too_long(source: str, where: str = "<source>") -> list[str]:
    """``where:line name (n lines)`` for each function of ``source`` longer than `MAX_FUNCTION_LINES` lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_the_check_finds_a_planted_long_function_and_method():
    def body(lines: int, indent: str) -> str:
        return "".join(f"{indent}x = {i}\n" for i in range(lines))

    fits = f"def plant():\n{body(59, '    ')}\nclass Pot:\n    def grow(self):\n{body(59, '        ')}"
    assert too_long(fits) == []
    longer = f"def plant():\n{body(60, '    ')}\nclass Pot:\n    async def grow(self):\n{body(60, '        ')}"
    assert too_long(longer) == ["<source>:1 plant (61 lines)", "<source>:64 grow (61 lines)"]


def test_no_function_is_over_60_lines():
    found = []
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += too_long(path.read_text(), str(path.relative_to(ROOT)))
    assert found == [], (f"split these functions by concern into functions of at most {MAX_FUNCTION_LINES} "
                         "lines:\n" + "\n".join(found))
