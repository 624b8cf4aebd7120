"""Table-driven scenario tests: one or more per reading of the rules in docs/rules.md."""

import numpy as np
import pytest

from rouba_env.rules.cards import JOKER, NUM_SUITS, make_deck, rank_of
from rouba_env.rules.config import RulesConfig, preset
from tests.reference.engine import card_total
from rouba_env.rules.core import (
    EMPTY_PILE,
    JOKER_KIND_OFFSET,
    NO_SEAT,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
)
from rouba_env.rules.engine import Move, apply_move, is_terminal, legal_moves, new_game, start_game
from rouba_env.rules.scoring import lead_rewards, margin_rewards as margin_of_scores, outcome_rewards as outcome_of_scores, scores, winners


def outcome_rewards(state):
    return outcome_of_scores(scores(state))


def margin_rewards(state):
    return margin_of_scores(scores(state), state.config.total_cards)

from rouba_env.rules.seeding import shuffled_deck
from tests.rules.scenario import RANKS, cards, make_state

A, FIVE, SEVEN, NINE, K, Q = RANKS["A"], RANKS["5"], RANKS["7"], RANKS["9"], RANKS["K"], RANKS["Q"]
OWN, NEXT, SECOND = TARGET_PILE_OFFSET, TARGET_PILE_OFFSET + 1, TARGET_PILE_OFFSET + 2
STD2, STD3 = RulesConfig(), RulesConfig(num_players=3)


def ranks(codes):
    return sorted(rank_of(c) for c in codes)


# Each row: rule, config, state arguments, move, expected fields of the new state.
SCENARIOS = [
    (
        "capture takes ONE table card, played card on top",
        STD2,
        dict(hands=["7 2", "3"], table="7 7 K", deck=""),
        Move(SEVEN, TARGET_TABLE),
        dict(pile_sizes=[2, 0], tops=[SEVEN, EMPTY_PILE], table_ranks=ranks(cards("7 K"))),
    ),
    (
        "take_all takes every table card of the rank",
        preset("take_all"),
        dict(hands=["7 2", "3"], table="7 7 K"),
        Move(SEVEN, TARGET_TABLE),
        dict(pile_sizes=[3, 0], tops=[SEVEN, EMPTY_PILE], table_ranks=ranks(cards("K"))),
    ),
    (
        "suits do not matter: any 7 takes any 7",
        STD2,
        dict(hands=["7", "3"], table="7 7 7"),
        Move(SEVEN, TARGET_TABLE),
        dict(pile_sizes=[2, 0]),
    ),
    (
        "steal takes the whole pile, played card on top, victim empty",
        STD3,
        dict(hands=["9 2", "3", "4"], piles=["5", "K K 9", ""], table="J"),
        Move(NINE, NEXT),
        dict(pile_sizes=[5, 0, 0], tops=[NINE, EMPTY_PILE, EMPTY_PILE], current=1),
    ),
    (
        "steal of the seat two places left",
        STD3,
        dict(hands=["9", "3", "4"], piles=["", "", "2 9"], table="J"),
        Move(NINE, SECOND),
        dict(pile_sizes=[3, 0, 0], tops=[NINE, EMPTY_PILE, EMPTY_PILE]),
    ),
    (
        "own pile grows by one",
        STD2,
        dict(hands=["K 2", "3"], piles=["5 K", ""], table="J"),
        Move(K, OWN),
        dict(pile_sizes=[3, 0], tops=[K, EMPTY_PILE]),
    ),
    (
        "discard leaves the card on the table",
        STD2,
        dict(hands=["Q 2", "3"], table="J"),
        Move(Q, TARGET_DISCARD),
        dict(pile_sizes=[0, 0], table_ranks=ranks(cards("J Q"))),
    ),
    (
        "joker named as K captures a table K and shows K",
        preset("jokers"),
        dict(hands=["jk 2", "3"], table="K 4"),
        Move(JOKER_KIND_OFFSET + K, TARGET_TABLE),
        dict(pile_sizes=[2, 0], tops=[K, EMPTY_PILE], table_ranks=ranks(cards("4"))),
    ),
    (
        "joker steals any non-empty pile and lies as the pile's rank",
        preset("jokers"),
        dict(hands=["jk 2", "3"], piles=["", "A A 5"], table="4"),
        Move(JOKER_KIND_OFFSET + FIVE, NEXT),
        dict(pile_sizes=[4, 0], tops=[FIVE, EMPTY_PILE]),
    ),
    (
        "any card captures a joker lying on the table",
        preset("jokers"),
        dict(hands=["Q 2", "3"], table="jk 4"),
        Move(Q, TARGET_TABLE_JOKER),
        dict(pile_sizes=[2, 0], tops=[Q, EMPTY_PILE], table_ranks=ranks(cards("4"))),
    ),
    (
        "a joker that takes nothing goes to the table",
        preset("jokers"),
        dict(hands=["jk 2", "3"], table=""),
        Move(JOKER_KIND_OFFSET, TARGET_DISCARD),
        dict(pile_sizes=[0, 0], table_ranks=[rank_of(JOKER)]),
    ),
]


@pytest.mark.parametrize("rule, config, arguments, move, expected", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_rule_scenarios(rule, config, arguments, move, expected):
    state = make_state(config, **arguments)
    before = card_total(state)
    after = apply_move(state, move)
    assert card_total(after) == before
    if "pile_sizes" in expected:
        assert [len(p) for p in after.piles] == expected["pile_sizes"]
    if "tops" in expected:
        assert after.pile_tops == expected["tops"]
    if "table_ranks" in expected:
        assert ranks(after.table_cards) == expected["table_ranks"]
    if "current" in expected:
        assert after.current == expected["current"]
    played = after.last_move[2]
    if move.target != TARGET_DISCARD:
        assert after.piles[0][-1] == played, "the played card goes on top of the pile"
    assert state.piles == make_state(config, **arguments).piles, "apply_move must not change its input"


# Each row: rule, config, state arguments, moves that must be legal, moves that must not.
LEGALITY = [
    (
        "discard is illegal for a card that can capture (rule 8)",
        STD2,
        dict(hands=["7 Q", "3"], table="7"),
        [Move(SEVEN, TARGET_TABLE), Move(Q, TARGET_DISCARD)],
        [Move(SEVEN, TARGET_DISCARD)],
    ),
    (
        "free_discard: discarding is always legal",
        preset("free_discard"),
        dict(hands=["7", "3"], table="7"),
        [Move(SEVEN, TARGET_TABLE), Move(SEVEN, TARGET_DISCARD)],
        [],
    ),
    (
        "the choice is per card: a non-matching card may be played though another captures",
        STD2,
        dict(hands=["7 Q", "3"], table="7", piles=["", "7"]),
        [Move(Q, TARGET_DISCARD), Move(SEVEN, TARGET_TABLE), Move(SEVEN, NEXT)],
        [Move(SEVEN, TARGET_DISCARD)],
    ),
    (
        "rule 7: a card matching table and piles chooses one target",
        STD3,
        dict(hands=["7", "3", "4"], table="7", piles=["2 7", "7", "7"]),
        [Move(SEVEN, TARGET_TABLE), Move(SEVEN, OWN), Move(SEVEN, NEXT), Move(SEVEN, SECOND)],
        [Move(SEVEN, TARGET_DISCARD)],
    ),
    (
        "an empty pile cannot be stolen",
        STD2,
        dict(hands=["7", "3"], table="", piles=["", ""]),
        [Move(SEVEN, TARGET_DISCARD)],
        [Move(SEVEN, NEXT), Move(SEVEN, OWN)],
    ),
    (
        "a steal needs the top rank, not a card deeper in the pile",
        STD2,
        dict(hands=["7", "3"], table="", piles=["", "7 K"]),
        [Move(SEVEN, TARGET_DISCARD)],
        [Move(SEVEN, NEXT)],
    ),
    (
        "a joker may capture any table rank but must capture when it can",
        preset("jokers"),
        dict(hands=["jk", "3"], table="4 K"),
        [Move(JOKER_KIND_OFFSET + RANKS["4"], TARGET_TABLE), Move(JOKER_KIND_OFFSET + K, TARGET_TABLE)],
        [Move(JOKER_KIND_OFFSET, TARGET_DISCARD), Move(JOKER_KIND_OFFSET + Q, TARGET_TABLE)],
    ),
    (
        "a joker on the table lets any card capture, so no discard under must_capture",
        preset("jokers"),
        dict(hands=["Q", "3"], table="jk"),
        [Move(Q, TARGET_TABLE_JOKER)],
        [Move(Q, TARGET_DISCARD), Move(Q, TARGET_TABLE)],
    ),
    (
        "take_all with a table joker: the TABLE target takes it with the rank",
        preset("jokers", take_all=True),
        dict(hands=["Q", "3"], table="jk"),
        [Move(Q, TARGET_TABLE)],
        [Move(Q, TARGET_TABLE_JOKER), Move(Q, TARGET_DISCARD)],
    ),
    (
        "a named joker on a pile is taken by the next card of that rank",
        preset("jokers"),
        dict(hands=["5", "3"], table="", piles=["", "A jk"], tops=[EMPTY_PILE, FIVE]),
        [Move(FIVE, NEXT)],
        [Move(FIVE, TARGET_DISCARD)],
    ),
]


@pytest.mark.parametrize("rule, config, arguments, legal, illegal", LEGALITY, ids=[row[0] for row in LEGALITY])
def test_legality(rule, config, arguments, legal, illegal):
    moves = set(legal_moves(make_state(config, **arguments)))
    for move in legal:
        assert move in moves, f"{move} should be legal"
    for move in illegal:
        assert move not in moves, f"{move} should be illegal"


def test_illegal_move_raises_with_the_legal_list():
    state = make_state(STD2, hands=["7", "3"], table="7")
    with pytest.raises(ValueError, match=r"illegal move .* legal moves: \[Move\(kind=6, target=0\)\]"):
        apply_move(state, Move(SEVEN, TARGET_DISCARD))


def test_deal_one_card_at_a_time_from_left_of_dealer_then_table():
    config = RulesConfig(num_players=3, dealer=0)
    deck = shuffled_deck(config, 1234)
    state = start_game(config, 1234)
    order = deck[::-1]  # the top of the deck is its last card
    for round_index in range(config.hand_size):
        for offset, seat in enumerate((1, 2, 0)):
            assert state.hands[seat][round_index] == order[round_index * 3 + offset]
    dealt = config.hand_size * 3
    assert state.table_cards == order[dealt : dealt + config.table_cards]
    assert state.current == 1, "the player left of the dealer plays first"
    assert sorted(deck) == sorted(make_deck(1, False))


def play_out_hands(state, rng):
    """Play random legal moves until the next deal or the end; return the states seen."""
    seen = [state]
    while not is_terminal(state) and any(state.hands):
        moves = legal_moves(state)
        state = apply_move(state, moves[rng.integers(len(moves))])
        seen.append(state)
        if all(len(h) == state.config.hand_size for h in state.hands):
            break
    return seen


def test_redeal_keeps_table_and_piles_and_left_of_dealer_starts():
    config = RulesConfig(num_players=2, dealer=0)
    state = make_state(config, hands=["7", ""], table="K", piles=["", "2 3"], deck="4 5 6 8 9 10 J Q", current=0)
    after = apply_move(state, Move(SEVEN, TARGET_DISCARD))
    assert [len(h) for h in after.hands] == [4, 4]
    assert after.deck == []
    assert ranks(after.table_cards) == ranks(cards("K 7"))
    assert [len(p) for p in after.piles] == [0, 2]
    assert after.current == 1, "after a deal the player left of the dealer plays first"


def test_uneven_redeal_when_the_deck_runs_short():
    config = RulesConfig(num_players=3)  # dealer 2: the deal starts at seat 0
    state = make_state(config, hands=["7", "", ""], table="K", deck="4 5 6 8 9", current=0)
    after = apply_move(state, Move(SEVEN, TARGET_DISCARD))
    assert [len(h) for h in after.hands] == [2, 2, 1]
    order = [apply_move(after, legal_moves(after)[0])]
    while not is_terminal(order[-1]):
        order.append(apply_move(order[-1], legal_moves(order[-1])[0]))
    movers = [after.current] + [s.current for s in order[:-1]]
    assert movers == [0, 1, 2, 0, 1], "players with empty hands are skipped"
    assert is_terminal(order[-1])


def test_game_ends_when_deck_and_hands_are_empty_and_leftovers_go_to_nobody():
    state = make_state(STD2, hands=["Q", ""], table="K 3", piles=["", "2 2"], current=0)
    after = apply_move(state, Move(Q, TARGET_DISCARD))
    assert is_terminal(after) and after.current == NO_SEAT
    assert scores(after) == [0, 2]
    assert ranks(after.table_cards) == ranks(cards("K 3 Q")), "table leftovers go to nobody"


def test_leftovers_to_last_capturer():
    config = preset("leftovers")
    state = make_state(config, hands=["3", "Q"], table="3 K", piles=["", "2 2"], current=0)
    state = apply_move(state, Move(RANKS["3"], TARGET_TABLE))
    assert state.last_capturer == 0
    end = apply_move(state, Move(Q, TARGET_DISCARD))
    assert is_terminal(end)
    assert scores(end) == [4, 2] and end.table_cards == []
    assert end.pile_tops[0] == RANKS["3"], "leftovers go under the pile; its top stays"


def test_leftovers_form_an_empty_pile_with_the_highest_rank_on_top():
    config = preset("leftovers")
    state = make_state(config, hands=["", "Q"], table="4 K", piles=["", "9 9"], current=1)
    state.last_capturer = 0
    end = apply_move(state, Move(Q, TARGET_DISCARD))
    assert scores(end) == [3, 2] and end.pile_tops[0] == K


def test_scores_winners_and_rewards():
    state = make_state(STD3, hands=["", "", ""], piles=["2 2 2", "3 3 3", "4"], current=NO_SEAT)
    assert scores(state) == [3, 3, 1]
    assert winners(state) == [0, 1]
    assert outcome_rewards(state) == [0.0, 0.0, -1.0], "tied top players get 0"
    margins = margin_rewards(state)
    assert margins[2] == pytest.approx((1 - 3) / 52)
    sole = make_state(STD2, hands=["", ""], piles=["2 2 2", "3"], current=NO_SEAT)
    assert outcome_rewards(sole) == [1.0, -1.0]


@pytest.mark.parametrize("points, expected", [
    ([3, 3, 1], [0, 0, -2]),            # tied leaders: 0; the last is 2 behind the best other
    ([5, 2, 1, 0], [3, -3, -4, -5]),    # only the sole winner is positive; everyone else measures to the leader
    ([7, 4], [3, -3]),                  # two players: the same as the margin reward
])
def test_lead_reward_is_own_score_minus_the_best_other(points, expected):
    total = 52
    assert lead_rewards(points, total) == pytest.approx([e / total for e in expected])
    if len(points) == 2:
        assert lead_rewards(points, total) == pytest.approx(margin_of_scores(points, total))


def test_draw_from_deck_flips_and_must_play_the_flipped_card():
    config = preset("draw_from_deck")
    state = start_game(config, 99)
    assert [len(h) for h in state.hands] == [1, 0], "only the player to act holds the flipped card"
    assert len(state.table_cards) == config.table_cards
    rng = np.random.default_rng(0)
    turns = 0
    while not is_terminal(state):
        flipped = state.hands[state.current][0]
        moves = legal_moves(state)
        assert {m.kind for m in moves} == {rank_of(flipped)}
        state = apply_move(state, moves[rng.integers(len(moves))])
        turns += 1
    assert turns == config.total_cards - config.table_cards
    assert state.deck == [] and not any(state.hands)


def test_eight_cards_on_the_table():
    state = start_game(preset("eight_table"), 5)
    assert len(state.table_cards) == 8 and all(len(h) == 4 for h in state.hands)


def test_hand_size_is_configurable():
    state = start_game(RulesConfig(hand_size=6), 5)
    assert [len(h) for h in state.hands] == [6, 6]


def test_jokers_two_per_deck():
    deck = shuffled_deck(RulesConfig(num_players=5, jokers=True), 3)
    assert deck.count(JOKER) == 4 and len(deck) == 108


def test_two_decks_above_four_players():
    state = start_game(RulesConfig(num_players=5), 7)
    assert card_total(state) == 104
    counts = np.bincount([c // NUM_SUITS for c in state.deck + sum(state.hands, []) + state.table_cards], minlength=13)
    assert (counts == 8).all()


def test_dealer_moves_left_each_game_of_a_match():
    from rouba_env.rules.engine import match_rules

    configs = match_rules(RulesConfig(num_players=3), games=4)
    assert [c.dealer for c in configs] == [2, 0, 1, 2]
    assert [c.first_player for c in configs] == [0, 1, 2, 0]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_checked_fact_every_game_lasts_48_turns(num_players):
    config = RulesConfig(num_players=num_players)
    rng = np.random.default_rng(num_players)
    for _ in range(20):
        state = new_game(config, rng)
        while not is_terminal(state):
            assert card_total(state) == 52
            moves = legal_moves(state)
            state = apply_move(state, moves[rng.integers(len(moves))])
        assert state.turn == 48
