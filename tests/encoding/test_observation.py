"""The observation vector: layout, what each seat sees, and its named view (decode / encode_view)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, preset
from rouba_env.encoding.observation import NO_FLIPPED_CARD, ObservationEncoder, observation_layout
from rouba_env.rules.cards import rank_of
from rouba_env.rules.core import EMPTY_PILE, NO_SEAT
from rouba_env.rules.engine import apply_move, is_terminal, legal_moves, new_game, rank_counts
from tests.reference.engine import seen_counts
from tests.rules.scenario import RANKS, make_state
from tests.strategies import seated_preset


def test_layout_is_contiguous_and_documented_sizes():
    for m in range(2, 9):
        layout = observation_layout(m)
        stops = [s.stop for s in layout.values()]
        starts = [s.start for s in layout.values()]
        assert starts[0] == 0 and starts[1:] == stops[:-1]
        assert stops[-1] == 62 + 46 * m
        version_1 = observation_layout(m, version=1)
        assert max(s.stop for s in version_1.values()) == 62 + 19 * m
        assert all(layout[name] == block for name, block in version_1.items()), "version 2 only appends"


@pytest.mark.parametrize("hands, table, piles, current, move, passed, played", [
    # Seat 0 holds a 7 and a K; the table shows a 7 and a Q; seat 1's pile shows a 5.
    (["7 K", "2"], "7 Q", ["", "5"], 0, ("7", 0), ["Q", "5"], "7"),   # takes the 7: passes up the Q and the 5
    (["7 K", "2"], "7 Q", ["", "5"], 0, ("K", 1), ["7", "Q", "5"], "K"),  # discards a K: passes up all three
    (["7 K", "2"], "Q", ["K", ""], 0, ("K", 3), ["Q"], "K"),  # onto its own pile: its own top is not a steal
    (["2", "7"], "", ["", ""], 0, ("2", 1), [], "2"),  # nothing to take: nothing passed up
])
def test_table_talk_counts_what_could_be_taken_and_was_not(hands, table, piles, current, move, passed, played):
    config = RulesConfig(num_players=2, must_capture=False)
    state = make_state(config, hands=hands, table=table, piles=piles, deck="A A", current=current)
    from rouba_env.rules.engine import Move, apply_move

    state = apply_move(state, Move(RANKS[move[0]], move[1]))
    assert [rank for rank in range(13) if state.passed[current][rank]] == sorted(RANKS[r] for r in passed)
    assert state.played[current][RANKS[played]] == 1 and sum(state.played[current]) == 1
    obs = ObservationEncoder(config).encode(state, 1)
    lay = ObservationEncoder(config).layout
    seen_from_1 = obs[lay["passed"]].reshape(2, 13)[1]  # seat 0 is one place to seat 1's left
    assert [rank for rank in range(13) if seen_from_1[rank]] == sorted(RANKS[r] for r in passed)

def test_known_values_from_the_observers_point_of_view():
    config = RulesConfig(num_players=3)
    state = make_state(config, hands=["7 7 K", "2", "3 4"], table="7 Q", piles=["", "5 9", "J"], deck="A A", current=1)
    encoder = ObservationEncoder(config)
    obs = encoder.encode(state, 1)
    lay = encoder.layout
    assert obs[lay["hand"]][RANKS["2"]] == 1 and obs[lay["hand"]].sum() == 1
    assert obs[lay["table"]][RANKS["7"]] == 1 and obs[lay["table"]][RANKS["Q"]] == 1
    seen = obs[lay["seen"]]
    assert seen[RANKS["5"]] == seen[RANKS["9"]] == seen[RANKS["J"]] == seen[RANKS["7"]] == 1 and seen.sum() == 5
    tops = obs[lay["pile_top"]].reshape(3, 14)
    assert tops[0, RANKS["9"]] == 1, "own pile first"
    assert tops[1, RANKS["J"]] == 1, "then the seat to the left"
    assert tops[2, 13] == 1, "seat 0's pile is empty"
    assert obs[lay["pile_size"]].tolist() == pytest.approx([2 / 52, 1 / 52, 0.0])
    assert obs[lay["hand_size"]].tolist() == [1, 2, 3]
    assert obs[lay["dealer"]].tolist() == [0, 1, 0], "dealer is seat 2, one to the left of seat 1"
    assert obs[lay["to_act"]].tolist() == [1, 0, 0]
    assert obs[lay["deck"]][0] == pytest.approx(2 / 52)
    assert obs[lay["rules"]].tolist() == [0, 1, 0, 0, 0]


def test_padding_marks_absent_seats():
    config = RulesConfig()
    encoder = ObservationEncoder(config, max_players=4)
    obs = encoder.encode(new_game(config, np.random.default_rng(0)), 0)
    lay = encoder.layout
    assert obs[lay["present"]].tolist() == [1, 1, 0, 0]
    assert not obs[lay["pile_top"]].reshape(4, 14)[2:].any()
    assert ActionEncoding(config, 4).size == 26 * 7
    with pytest.raises(ValueError, match="max_players=1"):
        ObservationEncoder(config, max_players=1)


def shuffle_hidden(state, observer, rng):
    """A copy where opponents' hands and the deck are redealt among themselves (same sizes)."""
    hidden_owners = [s for s in range(state.config.num_players) if s != observer]
    if state.config.draw_from_deck:
        hidden_owners = []  # the flipped card is face up for everybody
    pool = [c for s in hidden_owners for c in state.hands[s]] + list(state.deck)
    pool = [pool[i] for i in rng.permutation(len(pool))]
    other = state.copy()
    for seat in hidden_owners:
        size = len(state.hands[seat])
        other.hands[seat], pool = pool[:size], pool[size:]
    other.deck = pool
    return other


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(PRESET_FIELDS)), num_players=st.integers(2, 8), seed=st.integers(0, 2**31))
def test_no_hidden_information_leaks(name, num_players, seed):
    config = seated_preset(name, num_players)
    encoder = ObservationEncoder(config, max_players=8)
    rng = np.random.default_rng(seed)
    state = new_game(config, rng)
    changed_somewhere = False
    while not is_terminal(state):
        for observer in range(num_players):
            other = shuffle_hidden(state, observer, rng)
            changed_somewhere |= other.hands != state.hands or other.deck != state.deck
            assert np.array_equal(encoder.encode(state, observer), encoder.encode(other, observer))
        moves = legal_moves(state)
        state = apply_move(state, moves[rng.integers(len(moves))])
    assert changed_somewhere, "the test must really permute hidden cards"


def test_own_hand_is_visible():
    config = RulesConfig()
    a = make_state(config, hands=["7", "2"], table="K")
    b = make_state(config, hands=["8", "2"], table="K")
    encoder = ObservationEncoder(config)
    assert not np.array_equal(encoder.encode(a, 0), encoder.encode(b, 0))
    assert np.array_equal(encoder.encode(a, 1), encoder.encode(b, 1))


def test_draw_from_deck_shows_the_flipped_card_to_everyone():
    config = preset("draw_from_deck")
    state = new_game(config, np.random.default_rng(1))
    encoder = ObservationEncoder(config)
    flipped_rank = state.hands[state.current][0] // 4
    for seat in range(2):
        assert encoder.encode(state, seat)[encoder.layout["flipped"]][flipped_rank] == 1


def test_joker_pile_shows_its_named_rank():
    config = preset("jokers")
    state = make_state(config, hands=["2", "3"], piles=["", "A jk"], tops=[EMPTY_PILE, RANKS["5"]])
    encoder = ObservationEncoder(config)
    tops = encoder.encode(state, 0)[encoder.layout["pile_top"]].reshape(2, 14)
    assert tops[1, RANKS["5"]] == 1
    assert encoder.encode(state, 0)[encoder.layout["seen"]][13] == 1, "the joker counts as a seen joker"


# --- the named view: decode / encode_view -----------------------------------


def positions_of_every_preset():
    """(config, state) along seeded random games of every preset at 2..5 players, dealer at every seat."""
    rng = np.random.default_rng(2024)
    for name in sorted(PRESET_FIELDS):
        for num_players in range(2, 6):
            config = seated_preset(name, num_players).replace(dealer=(num_players + len(name)) % num_players)
            state = new_game(config, rng)
            while True:
                yield config, state
                if is_terminal(state):
                    break
                moves = legal_moves(state)
                state = apply_move(state, moves[rng.integers(len(moves))])


def expected_view_values(state, seat):
    """What an observer at ``seat`` should read, taken directly from the state."""
    config = state.config
    n = config.num_players
    seats = [(seat + offset) % n for offset in range(n)]
    flipped = NO_FLIPPED_CARD
    if config.draw_from_deck and not is_terminal(state):
        (flipped,) = [rank_of(card) for card in state.hands[state.current]]
    return {
        "hand": rank_counts(state.hands[seat]),
        "table_cards": rank_counts(state.table_cards),
        "seen": seen_counts(state),
        "pile_tops": [state.pile_tops[s] for s in seats],
        "pile_sizes": [len(state.piles[s]) for s in seats],
        "hand_sizes": [len(state.hands[s]) for s in seats],
        "seat": seat,
        "dealer_offset": (config.dealer - seat) % n,
        "to_act_offset": NO_SEAT if is_terminal(state) else (state.current - seat) % n,
        "deck_size": len(state.deck),
        "flipped": flipped,
    }


@pytest.mark.parametrize("padding", [0, 3])
def test_decode_reads_the_state_and_encode_view_inverts_it(padding):
    """Over every preset and 2..5 players: the view holds the state's values; re-encoding gives the same bits."""
    checked = 0
    encoders = {}
    for config, state in positions_of_every_preset():
        n = config.num_players
        encoder = encoders.get((config, padding))
        if encoder is None:
            encoder = encoders[(config, padding)] = ObservationEncoder(config, max_players=n + padding)
        obs = np.stack([encoder.encode(state, seat) for seat in range(n)])
        view = encoder.decode(obs)
        for seat in range(n):
            for field, expected in expected_view_values(state, seat).items():
                actual = getattr(view, field)[seat]
                if field in ("pile_tops", "pile_sizes", "hand_sizes"):
                    actual = actual[:n]
                assert np.array_equal(actual, expected), (config, seat, field, actual, expected)
        assert view.present[:, :n].all() and not view.present[:, n:].any()
        assert (view.pile_tops[:, n:] == EMPTY_PILE).all() and not view.hand_sizes[:, n:].any()
        again = encoder.encode_view(view)
        assert again.dtype == np.float32 and again.view(np.uint32).tolist() == obs.view(np.uint32).tolist()
        checked += 1
    assert checked > 500


def test_decode_takes_one_observation_as_a_batch_of_one():
    config = preset("draw_from_deck", num_players=3)
    encoder = ObservationEncoder(config)
    state = new_game(config, np.random.default_rng(3))
    obs = encoder.encode(state, 1)
    view = encoder.decode(obs)
    assert view.batch_size == 1 and view.seat.tolist() == [1]
    assert view.flipped.tolist() == [rank_of(state.hands[state.current][0])]
    assert np.array_equal(encoder.encode_view(view)[0], obs)
    with pytest.raises(ValueError, match="shape"):
        encoder.decode(obs[:-1])


def test_encode_view_rejects_a_seat_that_does_not_match_the_dealer():
    config = RulesConfig(num_players=3)
    encoder = ObservationEncoder(config)
    view = encoder.decode(encoder.encode(new_game(config, np.random.default_rng(0)), 0))
    view.seat = (view.seat + 1) % 3
    with pytest.raises(ValueError, match="dealer"):
        encoder.encode_view(view)


@pytest.mark.parametrize("name", ["standard", "jokers", "draw_from_deck", "take_all"])
def test_encode_is_the_plain_python_model(name):
    """`encode` (the rules core's observation on a state loaded into one slot) against the tests' model,
    every seat of positions along random games; a pickled encoder encodes the same."""
    import pickle

    from tests.reference import engine
    from tests.reference import observation as reference

    config = preset(name, num_players=3)
    encoder = ObservationEncoder(config, max_players=4)
    copy = pickle.loads(pickle.dumps(encoder))
    rng = np.random.default_rng(3)
    state = engine.new_game(config, rng)
    while not engine.is_terminal(state):
        for seat in range(3):
            expected = reference.observation(state, seat, 4)
            assert np.array_equal(encoder.encode(state, seat), expected)
            assert np.array_equal(copy.encode(state, seat), expected)
            assert np.array_equal(encoder.hidden(state, seat), reference.hidden(state, seat, 4))
        moves = engine.legal_moves(state)
        state = engine.apply_move(state, moves[rng.integers(len(moves))])
