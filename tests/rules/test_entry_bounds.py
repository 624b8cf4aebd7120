"""No input, however made, reaches compiled code out of range: every public door to the rules core answers
a hand-made state, slot, seat or move it cannot hold with a ValueError naming it, never a crash."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rouba_env.batched.game import VectorGame
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.rules import engine
from rouba_env.rules.config import preset

CONFIG = preset("standard")
WILD = st.one_of(st.integers(-2**70, 2**70), st.integers(-3, 60), st.sampled_from([2**15, 2**31, 2**63, -2**63]))
FIELDS = ["current", "last_capturer", "turn", "hand_card", "table_card", "pile_card", "deck_card", "pile_top",
          "passed", "played", "last_move_seat", "last_move_kind", "last_move_target", "last_move_card"]


def spoiled(field: str, value: int) -> engine.GameState:
    """A dealt game with one field set to ``value``."""
    state = engine.start_game(CONFIG, 11)
    state = engine.apply_move(state, engine.legal_moves(state)[0])
    if field in ("current", "last_capturer", "turn"):
        setattr(state, field, value)
    elif field.endswith("_card") and not field.startswith("last_move"):
        place = {"hand_card": state.hands[0], "table_card": state.table_cards, "pile_card": state.piles[0],
                 "deck_card": state.deck}[field]
        if not place:
            place.append(value)
        place[0] = value
    elif field == "pile_top":
        state.pile_tops[1] = value
    elif field in ("passed", "played"):
        getattr(state, field)[0][0] = value
    else:
        seat, (kind, target), card = state.last_move
        parts = {"last_move_seat": seat, "last_move_kind": kind, "last_move_target": target, "last_move_card": card}
        parts[field] = value
        state.last_move = (parts["last_move_seat"], engine.Move(parts["last_move_kind"], parts["last_move_target"]),
                           parts["last_move_card"])
    return state


DOORS = {
    "legal_moves": engine.legal_moves,
    "Position.of": engine.Position.of,
    "encode": lambda state: ObservationEncoder(CONFIG).encode(state, 0),
    "mask": lambda state: ActionEncoding(CONFIG).mask(state),
    "from_states": lambda state: VectorGame.from_states(CONFIG, [state]),
}


@pytest.mark.parametrize("door", DOORS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=WILD)
def test_a_hand_made_state_is_taken_or_refused_by_name_at_every_door(door, field, value):
    state = spoiled(field, value)
    try:
        DOORS[door](state)
    except ValueError as error:
        assert "state" in str(error), f"{door} refused {field}={value} without naming the state: {error}"


@settings(max_examples=80, deadline=None)
@given(slot=WILD, seat=WILD, kind=WILD, target=WILD)
def test_slots_seats_and_moves_out_of_range_are_refused(slot, seat, kind, target):
    game = VectorGame(CONFIG, 3)
    game.reset(0)
    if not (0 <= slot < 3 and 0 <= seat < CONFIG.num_players):
        with pytest.raises(ValueError, match="observe_one takes a slot"):
            game.observe_one(slot, seat)
    if not 0 <= slot < 3:
        with pytest.raises(ValueError, match="slots must be in 0..2|arrays of integers within int64"):
            game.play_checked(np.array([slot], dtype=object), np.array([0]))
    position = engine.Position.of(engine.start_game(CONFIG, 3))
    if not (0 <= kind < 26 and 0 <= target < 4):
        with pytest.raises(ValueError, match="cannot be played here"):
            position.child(engine.Move(kind, target))


def test_named_fields_in_the_messages():
    cases = {("current", 2**40): "state.current must be a seat", ("hand_card", 99): "state.hands[0] holds 99",
             ("turn", 2**15): "state.turn must be in 0..32767", ("pile_top", 13): "state.pile_tops[1]",
             ("last_move_kind", 99): "state.last_move", ("passed", -1): "state.passed[0]"}
    for (field, value), words in cases.items():
        with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
            engine.legal_moves(spoiled(field, value))
