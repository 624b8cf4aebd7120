"""One word for each thing (docs/glossary.md): the glossary says each term once, and the code uses its names."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from rouba_env.rules.engine import GameState
from rouba_env.rules.layout import Game

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"


def glossary_terms() -> list[str]:
    return re.findall(r"^\| \*\*([^*]+)\*\* \|", GLOSSARY.read_text(), flags=re.MULTILINE)


def test_the_glossary_says_each_term_once():
    terms = glossary_terms()
    assert len(terms) >= 10 and len(terms) == len({term.lower() for term in terms}), terms


def test_the_face_up_cards_are_table_cards_and_card_codes_are_codes():
    assert "table" not in Game._fields and "table_cards" in Game._fields
    assert {"hand_codes", "table_codes", "pile_codes", "deck_codes"} <= set(Game._fields)
    assert not {name for name in Game._fields if name.endswith("_cards")} - {"table_cards"}
    fields = {field.name for field in dataclasses.fields(GameState)}
    assert "table_cards" in fields and "table" not in fields


def test_an_environment_holds_its_one_game_as_single_game():
    import rouba_env
    from rouba_env.envs.single_agent import SingleAgentEnv
    from rouba_env.single_game import SingleGame

    for env in (rouba_env.env().unwrapped, SingleAgentEnv()):
        assert isinstance(env.single_game, SingleGame) and not hasattr(env, "table")


def assigned_attributes(path: Path) -> set[str]:
    """Every ``self.NAME = ...`` in a source file."""
    return {target.attr for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name) and target.value.id == "self"}


@pytest.mark.parametrize("path, meant", [
    ("rouba_env/envs/aec.py", "single_game"), ("rouba_env/envs/single_agent.py", "single_game"),
    ("rouba_env/rllib/env.py", "single_game"), ("rouba_env/web/games.py", "single_game"), ("rouba_env/solve/game_tree.py", "buckets"), ("training/trainer.py", "rules_per_size"),
])
def test_no_attribute_called_table_means_anything_but_a_table(path, meant):
    attributes = assigned_attributes(ROOT / path)
    assert meant in attributes and not {"table", "tables"} & attributes, path
