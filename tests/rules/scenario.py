"""Hand-built game states for rule scenario tests."""

from __future__ import annotations

from rouba_env.rules.cards import JOKER, NUM_SUITS
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import EMPTY_PILE
from rouba_env.rules.engine import GameState

RANKS = {"A": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6, "8": 7, "9": 8, "10": 9, "J": 10, "Q": 11, "K": 12}


def cards(text: str) -> list[int]:
    """Card codes from ranks separated by spaces ("7 7 K jk"); suits cycle so that copies differ."""
    codes = []
    for index, word in enumerate(text.split()):
        codes.append(JOKER if word == "jk" else RANKS[word] * NUM_SUITS + index % NUM_SUITS)
    return codes


def make_state(
    config: RulesConfig,
    hands: list[str],
    table: str = "",
    piles: list[str] | None = None,
    deck: str = "",
    current: int = 0,
    tops: list[int] | None = None,
) -> GameState:
    """A state from rank strings; a pile's top rank is its last card's unless ``tops`` names it."""
    n = config.num_players
    piles = piles if piles is not None else [""] * n
    pile_cards = [cards(p) for p in piles]
    if tops is None:
        tops = [EMPTY_PILE if not p else p[-1] // NUM_SUITS for p in pile_cards]
    return GameState(
        config=config,
        hands=[cards(h) for h in hands],
        table_cards=cards(table),
        piles=pile_cards,
        pile_tops=list(tops),
        deck=cards(deck),
        current=current,
    )
