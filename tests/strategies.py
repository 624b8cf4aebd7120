"""Hypothesis strategies shared by every test module (defined here once)."""

from __future__ import annotations

from hypothesis import strategies as st

from rouba_env.rules.config import MAX_DECKS, PRESET_FIELDS, RulesConfig, preset

SEEDS = st.integers(0, 2**32 - 1)
"""Seeds for numpy generators and deals."""


def seated_preset(name: str, num_players: int) -> RulesConfig:
    """The preset at ``num_players`` seats, with as many decks as its first deal needs (``mini`` and ``small``
    deal only two players from one deck)."""
    for decks in (None, *range(2, MAX_DECKS + 1)):
        try:
            return preset(name, num_players=num_players, **({} if decks is None else {"decks": decks}))
        except ValueError as error:
            refused = error
    raise refused


@st.composite
def preset_configs(draw):
    """Any preset at 2..8 players, sometimes with another hand size, table size, dealer or deck composition."""
    name = draw(st.sampled_from(sorted(PRESET_FIELDS)))
    num_players = draw(st.integers(2, 8))
    base = seated_preset(name, num_players)
    fields = {}
    if not base.draw_from_deck and draw(st.booleans()):
        fields["hand_size"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        fields["table_cards"] = draw(st.integers(0, 8))
    if draw(st.booleans()):
        fields["dealer"] = draw(st.integers(0, num_players - 1))
    if draw(st.booleans()):
        fields["ranks"] = draw(st.integers(1, 13))
        fields["suits"] = draw(st.integers(1, 4))
    try:
        return base.replace(**fields)
    except ValueError:
        return base


@st.composite
def any_rules(draw):
    """Any combination of rule fields (decks and their composition, variants, sizes, dealer) that `RulesConfig` accepts."""
    n = draw(st.integers(2, 8))
    draw_from_deck = draw(st.booleans())
    fields = dict(
        num_players=n,
        decks=draw(st.integers(1, 3)),
        draw_from_deck=draw_from_deck,
        take_all=draw(st.booleans()),
        must_capture=draw(st.booleans()),
        leftovers_to_last_capturer=draw(st.booleans()),
        jokers=draw(st.booleans()),
        dealer=draw(st.integers(0, n - 1)),
        table_cards=draw(st.integers(0, 9)),
        ranks=draw(st.sampled_from([13, 13, 1, 2, 3, 5, 8])),
        suits=draw(st.sampled_from([4, 4, 1, 2, 3])),
    )
    if not draw_from_deck:
        fields["hand_size"] = draw(st.integers(1, 7))
    try:
        return RulesConfig(**fields)
    except ValueError:
        return RulesConfig(num_players=n, dealer=fields["dealer"], jokers=fields["jokers"])
