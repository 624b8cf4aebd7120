"""The game's layout is declared once (`rouba_env.rules.layout.GAME_FIELDS`, `Rules`): the named forms, the
buffer's views and the compiled readers (`game_of`, `rules_of`) agree with the declaration, order included."""

import ast
import math
import typing
from pathlib import Path

import numba
import numpy as np
import pytest

from rouba_env.rules import buffers, layout
from rouba_env.rules.buffers import GameArrays, game_of, rules_of
from rouba_env.rules.config import make_rules

RULES_DIR = Path(layout.__file__).resolve().parent


def test_the_named_game_lists_the_declared_fields_in_their_order():
    assert layout.Game._fields == tuple(name for name, _, _ in layout.GAME_FIELDS)
    assert layout.STATE_FIELDS == tuple(name for name, dtype, _ in layout.GAME_FIELDS if dtype == "int16")
    annotated = [name for name in typing.get_type_hints(GameArrays) if name in dict.fromkeys(layout.Game._fields)]
    assert tuple(annotated) == layout.STATE_FIELDS, "GameArrays names every buffer field, in buffer order"


@pytest.mark.parametrize("track_cards", [False, True])
def test_every_view_of_a_buffer_has_its_declared_shape(track_cards):
    config = make_rules("standard", num_players=3)
    arrays = GameArrays(config, 5, move_stride=6, reward="margin", auto_reset=False, track_cards=track_cards)
    sizes = {"B": 5, "n": 3, "C": config.total_cards, "H": config.hand_size if track_cards else 0,
             "T": config.total_cards if track_cards else 0}
    for name, dtype, shape in layout.GAME_FIELDS:
        view = getattr(arrays, name)
        assert view.shape == layout.field_shape(shape, sizes) and view.dtype == np.dtype(dtype), name
    assert arrays.buffer.size == sum(math.prod(layout.field_shape(shape, sizes)) for name, _, shape in
                                     layout.GAME_FIELDS if name in layout.STATE_FIELDS)


@numba.njit
def _summarize(array):
    flat = array.ravel()
    least = np.int64(flat.min()) if flat.size else np.int64(-1)
    greatest = np.int64(flat.max()) if flat.size else np.int64(-1)
    return np.int64(flat.size), np.int64(array.ndim), least, greatest


def _every_field_reader():
    """A compiled function giving (size, ndim, least value, greatest value) of each field of `game_of`'s game,
    in its order (its source lists the game's fields by index, as many as `GAME_FIELDS` declares)."""
    lines = "".join(f"    summary.append(summarize(game[{index}]))\n" for index in range(len(layout.GAME_FIELDS)))
    source = f"def every_field(p, buffer, current):\n    game = game_of(p, buffer, current)\n    summary = []\n{lines}" \
             f"    return summary\n"
    namespace = {"game_of": game_of, "summarize": _summarize}
    exec(compile(source, "<every_field>", "exec"), namespace)  # the test's own template, no input
    return numba.njit(namespace["every_field"])


def test_the_compiled_game_reads_each_declared_field_where_the_buffer_holds_it():
    config = make_rules("jokers", num_players=3)
    batch = 4
    arrays = GameArrays(config, batch, move_stride=6, reward="margin", auto_reset=False, track_cards=True)
    sizes = {"B": batch, "n": 3, "C": config.total_cards, "H": config.hand_size, "T": config.total_cards}
    for index, (name, _, _) in enumerate(layout.GAME_FIELDS):
        getattr(arrays, name)[...] = index + 1  # every field its own mark
    summary = _every_field_reader()(arrays.params, arrays.buffer, arrays.current)
    expected = []
    for index, (name, _, shape) in enumerate(layout.GAME_FIELDS):
        size = math.prod(layout.field_shape(shape, sizes))
        mark = index + 1 if size else -1
        expected.append((size, len(shape), mark, mark))
    assert [tuple(map(int, row)) for row in summary] == expected


def test_the_compiled_rules_read_each_parameter_in_the_declared_order():
    arrays = GameArrays(make_rules("standard"), 1, move_stride=5, reward="margin", auto_reset=False,
                        track_cards=False)
    for index, (name, kind) in enumerate(typing.get_type_hints(layout.Rules).items()):
        params = arrays.params.copy()
        params[:len(layout.Rules._fields)] = 0
        params[index] = 7
        rules = rules_of(params)
        assert rules[index] == (True if kind is bool else 7), name
        assert not any(value for other, value in enumerate(rules) if other != index), name
    assert len(layout.Rules._fields) == buffers.RULE_PARAMS


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module} | {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}


def test_the_rules_core_and_the_buffers_do_not_import_each_other():
    assert "rouba_env.rules.buffers" not in _imports(RULES_DIR / "core.py")
    assert "rouba_env.rules.core" not in _imports(RULES_DIR / "buffers.py")
    assert not {"rouba_env.rules.core", "rouba_env.rules.buffers"} & _imports(RULES_DIR / "layout.py")
