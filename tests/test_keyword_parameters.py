"""Call sites read by keyword: no function of the package, the trainer or the scripts takes more than
`MAX_POSITIONAL` positional parameters beyond ``self``/``cls``; the rest are keyword-only.

Functions compiled by numba cannot have keyword-only parameters (numba cannot bind them when one
compiled function calls another), so they group their arrays into structures instead (`Rules`, `Game`,
the solver's `Links`, `Reach` and `LayerValues`) and take at most `MAX_COMPILED_POSITIONAL`: a structure,
a structure, a slot, a seat, a move's kind and target at most. `DISPATCH_BOUND` kernels are the
exception, with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("rouba_env", "training", "scripts")
MAX_POSITIONAL = 4
MAX_COMPILED_POSITIONAL = 6
DISPATCH_BOUND = ("deal_games", "deal_slot", "play_slot", "play_if_legal", "step_slots")
"""The batched engine's per-move and per-step kernels, which take their arrays one by one: numba reads a
tuple argument's type by walking it on every call (0.13 us for a tuple of three arrays, measured), and the
one-game path calls one of these per move (a tenth of an AEC step's time went to it)."""
COMPILED_DECORATORS = ("njit", "jit", "vectorize", "guvectorize")


def is_compiled(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """True for a function compiled by numba (decorated ``@numba.njit(...)``, ``@njit`` and the like)."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in COMPILED_DECORATORS:
            return True
    return False


def too_positional(source: str, where: str = "<source>") -> list[str]:
    """``where:line name (n positional)`` for each function of ``source`` with more than `MAX_POSITIONAL`
    positional parameters beyond a leading ``self`` or ``cls`` (more than `MAX_COMPILED_POSITIONAL` for a
    compiled function)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names = [argument.arg for argument in node.args.posonlyargs + node.args.args]
        if names and names[0] in ("self", "cls"):
            names = names[1:]
        if is_compiled(node) and node.name in DISPATCH_BOUND:
            continue
        if len(names) > (MAX_COMPILED_POSITIONAL if is_compiled(node) else MAX_POSITIONAL):
            found.append(f"{where}:{node.lineno} {node.name} ({len(names)} positional)")
    return found


def test_the_check_finds_a_planted_function_with_six_positional_parameters():
    planted = "def plant(a, b, c, d, e, f):\n    return a\n\nclass Pot:\n    def grow(self, a, b, c, d, e):\n        pass\n"
    assert too_positional(planted) == ["<source>:1 plant (6 positional)", "<source>:5 grow (5 positional)"]
    fixed = "def plant(a, b, c, *, d, e, f):\n    return a\n\n@numba.njit(cache=True)\ndef kernel(a, b, c, d, e):\n    pass\n"
    assert too_positional(fixed) == []
    kernel = "@numba.njit(cache=True)\ndef kernel(a, b, c, d, e, f, g):\n    pass\n"
    assert too_positional(kernel) == ["<source>:2 kernel (7 positional)"]


def test_no_function_takes_more_than_four_positional_parameters():
    found = []
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += too_positional(path.read_text(), str(path.relative_to(ROOT)))
    assert found == [], ("make the parameters past the third or fourth keyword-only (a compiled function: group "
                         "its arrays into a structure):\n" + "\n".join(found))


MAX_MODULE_LINES = 700
"""A module past this many lines holds two things; split it (as the rules core and its buffers were)."""


def test_no_module_of_the_package_is_over_700_lines():
    long = {str(path.relative_to(ROOT)): lines for path in sorted((ROOT / "rouba_env").rglob("*.py"))
            if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}"
