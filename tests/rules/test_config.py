import pytest

from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, make_rules, preset


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"num_players": 9}, "num_players=9; allowed 2..8"),
        ({"num_players": 1}, "num_players=1; allowed 2..8"),
        ({"hand_size": 0}, "hand_size=0"),
        ({"table_cards": 60}, "needs 68 cards but 1 deck(s) hold 52"),
        ({"table_cards": -1}, "table_cards=-1"),
        ({"decks": 0}, "decks=0"),
        ({"dealer": 2}, "dealer=2; allowed 0..1"),
        ({"num_players": 8, "decks": 1, "hand_size": 7}, "needs 60 cards but 1 deck(s) hold 52"),
        ({"draw_from_deck": True, "hand_size": 4}, "hand_size must be 1"),
        ({"draw_from_deck": True, "table_cards": 52}, "the table plus one card to flip needs 53"),
        ({"take_all": "yes"}, "take_all must be True or False"),
        ({"num_players": 2.5}, "num_players must be an int"),
    ],
)
def test_invalid_configs_say_what_is_wrong(fields, message):
    with pytest.raises(ValueError) as error:
        RulesConfig(**fields)
    assert message in str(error.value)


def test_defaults_follow_decisions():
    assert RulesConfig().decks == 1
    assert RulesConfig(num_players=4).decks == 1
    assert RulesConfig(num_players=5).decks == 2
    assert RulesConfig(num_players=8).total_cards == 104
    assert RulesConfig().hand_size == 4 and RulesConfig().table_cards == 4
    assert RulesConfig(draw_from_deck=True).hand_size == 1
    assert RulesConfig(num_players=3).dealer == 2 and RulesConfig(num_players=3).first_player == 0
    assert RulesConfig(jokers=True).total_cards == 54
    assert RulesConfig(decks=2, jokers=True).copies_per_rank == 8


def test_presets_cover_every_variant():
    assert preset("standard") == RulesConfig()
    assert preset("draw_from_deck").draw_from_deck
    assert preset("eight_table").table_cards == 8
    assert preset("take_all").take_all
    assert preset("leftovers").leftovers_to_last_capturer
    assert preset("jokers").jokers
    assert not preset("free_discard").must_capture
    assert preset("jokers", num_players=3).num_players == 3
    assert (preset("mini").ranks, preset("mini").suits, preset("mini").total_cards) == (2, 4, 8)
    assert preset("small").total_cards == 9
    assert [(preset(name).num_players, preset(name).total_cards) for name in ("mini3", "mini4", "small3")] == [
        (3, 8), (4, 8), (3, 12)]
    assert preset("mini3", num_players=2) == preset("mini"), "mini3 is mini's deck at three seats"
    assert len(PRESET_FIELDS) == 13
    with pytest.raises(ValueError, match="unknown rules preset 'nope'"):
        preset("nope")


def test_round_trip_and_unknown_fields():
    config = RulesConfig(num_players=5, take_all=True)
    assert RulesConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown RulesConfig field"):
        RulesConfig.from_dict({"players": 3})
    assert make_rules("take_all", num_players=3) == RulesConfig(num_players=3, take_all=True)
    assert make_rules(config.to_dict()) == config
    with pytest.raises(ValueError, match="rules must be"):
        make_rules(42)


def test_deck_composition():
    config = RulesConfig(ranks=3, suits=2, hand_size=1, table_cards=2)
    assert config.total_cards == 6
    assert config.unshuffled_deck() == [0, 1, 4, 5, 8, 9]  # ace, 2 and 3 in the first two suits
    assert config.rank_copies == (2, 2, 2) + (0,) * 10 + (0,)
    assert RulesConfig(ranks=2, suits=1, jokers=True, decks=2, hand_size=1, table_cards=0).rank_copies == (
        (2, 2) + (0,) * 11 + (4,))
    assert RulesConfig().unshuffled_deck() == list(range(52))
    assert RulesConfig(ranks=13, suits=4) == RulesConfig()


@pytest.mark.parametrize("fields, message", [
    (dict(ranks=0), "ranks=0; allowed 1..13"),
    (dict(ranks=14), "ranks=14; allowed 1..13"),
    (dict(suits=0), "suits=0; allowed 1..4"),
    (dict(suits=2.0), "suits=2.0; allowed 1..4"),
    (dict(ranks=True), "ranks=True; allowed 1..13"),
    (dict(ranks=2, suits=2), "the first deal .* needs 12 cards but 1 deck.s. hold 4"),
    (dict(ranks=3, suits=2, hand_size=1, table_cards=5), "needs 7 cards but 1 deck.s. hold 6"),
])
def test_bad_deck_compositions_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        RulesConfig(**fields)
