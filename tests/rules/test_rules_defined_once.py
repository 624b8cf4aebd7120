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
    "steal": "rules/core.py", "cards_captured": "rules/core.py", "advance": "rules/core.py", "finish": "rules/core.py",
    "write_rewards": "rules/core.py", "move_index": "rules/core.py", "move_at": "rules/core.py",
    "shuffle_order": "rules/seeding.py", "seed_order": "rules/seeding.py", "write_final_rewards": "rules/scoring.py",
    "write_observation": "encoding/observation.py", "write_hidden": "encoding/observation.py",
}
"""Each rule's function and the one module that defines it (docs/layout.md, "Where each rule lives")."""
CARD_LEVEL_FORMS = {"rules/engine.py": {"start_game", "legal_moves"}}
"""The card-level API's functions of the same names (`rouba_env.start_game`, `rouba_env.legal_moves`): each
loads a `GameState` into the core, calls the rule there and reads the answer back, with no rule of its own
(`test_card_level_forms_hold_no_rule`)."""


def rule_functions() -> dict[str, dict[str, ast.FunctionDef]]:
    """Rule name -> {module (relative to the package): its top-level function of that name} (a leading
    underscore ignored)."""
    found: dict[str, dict[str, ast.FunctionDef]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in RULES:
                found.setdefault(node.name.lstrip("_"), {})[str(path.relative_to(PACKAGE))] = node
    return found


def definitions() -> dict[str, set[str]]:
    """Rule name -> modules defining a top-level function of that name."""
    return {rule: set(modules) for rule, modules in rule_functions().items()}


def test_every_rule_is_defined_in_its_one_module_only():
    found = definitions()
    for rule, home in RULES.items():
        others = found.get(rule, set()) - {home} - {module for module, names in CARD_LEVEL_FORMS.items()
                                                    if rule in names}
        assert home in found.get(rule, set()), f"{rule} is not defined in {home}"
        assert others == set(), f"{rule} is defined again in {sorted(others)}: call the one in {home}"


def test_card_level_forms_hold_no_rule():
    """A card-level form may not loop or branch over the game (a rule would): it checks its input, calls
    the core through `Position` and returns; and it names `Position` or another card-level form."""
    found = rule_functions()
    for module, names in CARD_LEVEL_FORMS.items():
        for name in names:
            function = found[name][module]
            loops = [node for node in ast.walk(function) if isinstance(node, (ast.For, ast.While, ast.comprehension))]
            assert not loops, f"{module}:{name} loops (line {loops[0].lineno}): a rule belongs in the core"
            called = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                      for node in ast.walk(function) if isinstance(node, ast.Call)}
            assert called & {"Position", "of", "deal", "deal_from_deck", "legal_moves"}, \
                f"{module}:{name} does not go through the core's Position"


def test_the_reference_engine_lives_in_the_tests():
    """The card-level reference is the tests' oracle, not a second implementation in the package."""
    reference = PACKAGE.parent / "tests" / "reference" / "engine.py"
    defined = {node.name.lstrip("_") for node in ast.parse(reference.read_text()).body
               if isinstance(node, ast.FunctionDef)}
    assert {"legal_moves", "play_move", "advance", "finish", "deal_hands", "table_talk"} <= defined


def test_the_layout_page_names_each_rules_home():
    page = (PACKAGE.parent / "docs" / "layout.md").read_text()
    for rule in RULES:
        assert rule in page, f"docs/layout.md does not say where {rule} lives"
