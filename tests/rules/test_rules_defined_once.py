"""Each rule of play is defined once in the package: the rules core (and the observation, the shuffle and the
scoring in their one module each). A second definition anywhere else in `rouba_env` fails here."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rouba_env"
RULES = {
    "start_game": "rules/core.py", "deal_hands": "rules/core.py", "lay_table": "rules/core.py",
    "draw": "rules/core.py", "legal_moves": "rules/core.py", "table_talk": "rules/core.py",
    "play_move": "rules/core.py", "take_from_hand": "rules/core.py", "discard": "rules/core.py",
    "capture": "rules/core.py", "take_from_table": "rules/core.py", "take_all_from_table": "rules/core.py",
    "steal": "rules/core.py", "advance": "rules/core.py", "finish": "rules/core.py",
    "write_rewards": "rules/core.py", "move_index": "rules/core.py", "move_at": "rules/core.py",
    "shuffle_order": "rules/seeding.py", "write_final_rewards": "rules/scoring.py",
    "write_observation": "encoding/observation.py", "write_hidden": "encoding/observation.py",
}
"""Each rule's function and the one module that defines it (docs/layout.md, "Where each rule lives")."""
REFERENCE_STILL_IN_PACKAGE = {
    "rules/engine.py": {"start_game", "deal_hands", "lay_table", "draw", "legal_moves", "table_talk",
                        "play_move", "advance", "finish"},
}
"""The card-level reference engine's own versions, until it moves under tests/ as the oracle (issue 37):
this set may only shrink."""


def definitions() -> dict[str, set[str]]:
    """Rule name -> modules (relative to the package) defining a top-level function of that name (a leading
    underscore ignored)."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in RULES:
                found.setdefault(node.name.lstrip("_"), set()).add(str(path.relative_to(PACKAGE)))
    return found


def test_every_rule_is_defined_in_its_one_module_only():
    found = definitions()
    for rule, home in RULES.items():
        others = found.get(rule, set()) - {home} - {module for module, names in REFERENCE_STILL_IN_PACKAGE.items()
                                                    if rule in names}
        assert home in found.get(rule, set()), f"{rule} is not defined in {home}"
        assert others == set(), f"{rule} is defined again in {sorted(others)}: call the one in {home}"


def test_the_reference_engines_copies_only_shrink():
    found = definitions()
    for module, names in REFERENCE_STILL_IN_PACKAGE.items():
        still = {rule for rule, modules in found.items() if module in modules}
        assert still <= names, f"{module} gained rule functions: {sorted(still - names)}"


def test_the_layout_page_names_each_rules_home():
    page = (PACKAGE.parent / "docs" / "layout.md").read_text()
    for rule in RULES:
        assert rule in page, f"docs/layout.md does not say where {rule} lives"
