import numpy as np
import pytest

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.config import RulesConfig, preset
from rouba_env.rules.core import (
    JOKER_KIND_OFFSET,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
)
from rouba_env.rules.engine import Move
from tests.rules.scenario import RANKS, make_state

SEVEN, K = RANKS["7"], RANKS["K"]


def test_index_formula_and_padding():
    actions = ActionEncoding(RulesConfig(num_players=3), max_players=4)
    assert actions.num_targets == 7 and actions.size == 26 * 7
    assert actions.encode(Move(SEVEN, TARGET_PILE_OFFSET + 2)) == SEVEN * 7 + 5
    assert actions.decode(SEVEN * 7 + 5) == Move(SEVEN, TARGET_PILE_OFFSET + 2)
    with pytest.raises(ValueError, match="absent at a 3-player table"):
        actions.decode(SEVEN * 7 + 6)
    with pytest.raises(ValueError, match="out of range"):
        actions.decode(actions.size)
    with pytest.raises(ValueError, match="out of range"):
        actions.decode(-1)


DESCRIPTIONS = [
    (RulesConfig(num_players=3), dict(hands=["7", "2", "3"], piles=["", "", "5 5 5 5 5 5 5 5 5 5 5 7"]),
     Move(SEVEN, TARGET_PILE_OFFSET + 2), "7 steals player 2's pile of 12 cards"),
    (RulesConfig(), dict(hands=["7", "2"], table="7"), Move(SEVEN, TARGET_TABLE), "7 captures a 7 from the table"),
    (RulesConfig(), dict(hands=["8", "2"], table="8"), Move(7, TARGET_TABLE), "8 captures an 8 from the table"),
    (RulesConfig(), dict(hands=["A", "2"], table="A"), Move(0, TARGET_TABLE), "A captures an A from the table"),
    (preset("take_all"), dict(hands=["7", "2"], table="7 7"), Move(SEVEN, TARGET_TABLE),
     "7 captures every 7 on the table (2 cards)"),
    (RulesConfig(), dict(hands=["K", "2"]), Move(K, TARGET_DISCARD), "K goes to the table"),
    (RulesConfig(), dict(hands=["K", "2"], piles=["K", ""]), Move(K, TARGET_PILE_OFFSET), "K goes on own pile (2 cards)"),
    (preset("jokers"), dict(hands=["jk", "2"], piles=["", "K"]), Move(JOKER_KIND_OFFSET + K, TARGET_PILE_OFFSET + 1),
     "joker as K steals player 1's pile of 1 card"),
    (preset("jokers"), dict(hands=["7", "2"], table="jk"), Move(SEVEN, TARGET_TABLE_JOKER),
     "7 captures the joker on the table"),
    (preset("jokers"), dict(hands=["jk", "2"]), Move(JOKER_KIND_OFFSET, TARGET_DISCARD), "joker goes to the table"),
]


@pytest.mark.parametrize("config, arguments, move, text", DESCRIPTIONS, ids=[d[3] for d in DESCRIPTIONS])
def test_describe(config, arguments, move, text):
    state = make_state(config, **arguments)
    actions = ActionEncoding(config)
    assert actions.describe(state, actions.encode(move)) == text


def test_the_viewers_pile_is_your_pile():
    from rouba_env.encoding.actions import describe_move

    state = make_state(RulesConfig(num_players=3), hands=["7", "2", "3"], piles=["", "", "5 5 7"])
    move = Move(SEVEN, TARGET_PILE_OFFSET + 2)
    assert describe_move(state, move, viewer=2) == "7 steals your pile of 3 cards"
    assert describe_move(state, move, viewer=1) == "7 steals player 2's pile of 3 cards"


@pytest.mark.parametrize("name", ["standard", "jokers", "take_all", "free_discard", "draw_from_deck"])
def test_mask_is_the_card_level_models_legal_moves(name):
    """`mask` and `legal_actions` (the rules core's on a loaded state) against `engine.legal_moves`."""
    from tests.reference import engine

    config = preset(name, num_players=3)
    encoding = ActionEncoding(config, max_players=4)
    rng = np.random.default_rng(8)
    state = engine.new_game(config, rng)
    while not engine.is_terminal(state):
        legal = engine.legal_moves(state)
        assert np.array_equal(encoding.mask(state), encoding.mask_of(legal))
        assert encoding.legal_actions(state) == [encoding.encode(move) for move in legal]
        assert not encoding.mask(state, (state.current + 1) % 3).any()
        state = engine.apply_move(state, legal[rng.integers(len(legal))])
