"""Hypothesis strategies shared by every test module (defined here once)."""

from __future__ import annotations

from hypothesis import strategies as st

from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, preset

SEEDS = st.integers(0, 2**32 - 1)
"""Seeds for numpy generators and deals."""


@st.composite
def preset_configs(draw):
    """Any preset at 2..8 players, sometimes with another hand size, table size or dealer."""
    name = draw(st.sampled_from(sorted(PRESET_FIELDS)))
    num_players = draw(st.integers(2, 8))
    base = preset(name, num_players=num_players)
    fields = {}
    if not base.draw_from_deck and draw(st.booleans()):
        fields["hand_size"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        fields["table_cards"] = draw(st.integers(0, 8))
    if draw(st.booleans()):
        fields["dealer"] = draw(st.integers(0, num_players - 1))
    try:
        return base.replace(**fields)
    except ValueError:
        return base


@st.composite
def any_rules(draw):
    """Any combination of rule fields (decks, variants, sizes, dealer) that `RulesConfig` accepts."""
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
    )
    if not draw_from_deck:
        fields["hand_size"] = draw(st.integers(1, 7))
    try:
        return RulesConfig(**fields)
    except ValueError:
        return RulesConfig(num_players=n, dealer=fields["dealer"], jokers=fields["jokers"])
