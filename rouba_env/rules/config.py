"""Rules configuration: every choice that the rules leave to the table (see docs/rules.md).

`RulesConfig` is a frozen dataclass validated on construction, so an invalid
game can never start. `PRESETS` names the rules page and each of its variants.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from rouba_env.checks import is_int
from rouba_env.rules.cards import JOKERS_PER_DECK, NUM_RANKS, NUM_SUITS, make_deck

MIN_PLAYERS = 2
MAX_PLAYERS = 8
MAX_PLAYERS_ONE_DECK = 4
"""Up to this many players the default is one deck; above it two."""
MAX_DECKS = 8
DEFAULT_HAND_SIZE = 4
DRAW_FROM_DECK_HAND_SIZE = 1
"""In ``draw_from_deck`` the only card a player holds is the one just flipped."""
DEFAULT_TABLE_CARDS = 4


@dataclass(frozen=True)
class RulesConfig:
    """The rules of one game of rouba-monte.

    Fields left as ``None`` take the rules page's default, resolved in
    ``__post_init__`` so that two equal games compare equal (so after it they are always ints).
    """

    num_players: int = 2
    """Players at the table, 2..8; seats 0..n-1 in turn order."""
    decks: int = None  # type: ignore[assignment]  # None asks for the default, set in __post_init__
    """Decks mixed together; default 1 up to 4 players, 2 above."""
    hand_size: int = None  # type: ignore[assignment]  # None asks for the default, set in __post_init__
    """Cards dealt to each player per deal; default 4 (1 with ``draw_from_deck``)."""
    table_cards: int = DEFAULT_TABLE_CARDS
    """Cards laid face up on the table at the start."""
    take_all: bool = False
    """A table capture takes every matching table card, not just one."""
    must_capture: bool = True
    """A card may go to the table only if it cannot capture (rule 8)."""
    leftovers_to_last_capturer: bool = False
    """Table cards left at the end go to the last player who captured or stole."""
    draw_from_deck: bool = False
    """Nobody holds cards: each turn the player flips the deck's top card and plays it."""
    jokers: bool = False
    """Two jokers per deck; a joker stands for any rank its player names."""
    dealer: int = None  # type: ignore[assignment]  # None asks for the default, set in __post_init__
    """Dealer's seat; default the last seat, so seat 0 plays first."""
    ranks: int = NUM_RANKS
    """Ranks in each deck, 1..13: the lowest ones, ace first (a research variant; the rules page has 13)."""
    suits: int = NUM_SUITS
    """Copies of each rank in each deck, 1..4 (a research variant; the rules page has 4)."""

    def __post_init__(self) -> None:
        def fail(message: str) -> None:
            raise ValueError(f"invalid RulesConfig: {message}")

        # numpy integers and booleans (from arrays, sweeps) count as the plain values they hold.
        for name in ("num_players", "table_cards", "decks", "hand_size", "dealer", "ranks", "suits"):
            value = getattr(self, name)
            if isinstance(value, np.integer):
                object.__setattr__(self, name, int(value))
        for name in ("take_all", "must_capture", "leftovers_to_last_capturer", "draw_from_deck", "jokers"):
            if isinstance(getattr(self, name), np.bool_):
                object.__setattr__(self, name, bool(getattr(self, name)))

        for name in ("num_players", "table_cards"):
            value = getattr(self, name)
            if not isinstance(value, int) or not is_int(value):
                fail(f"{name} must be an int, got {value!r}")
        for name, most in (("ranks", NUM_RANKS), ("suits", NUM_SUITS)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                fail(f"{name}={value!r}; allowed 1..{most}")
        for name in ("take_all", "must_capture", "leftovers_to_last_capturer", "draw_from_deck", "jokers"):
            if not isinstance(getattr(self, name), bool):
                fail(f"{name} must be True or False, got {getattr(self, name)!r}")
        if not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            fail(f"num_players={self.num_players}; allowed {MIN_PLAYERS}..{MAX_PLAYERS}")
        if self.decks is None:
            object.__setattr__(self, "decks", 1 if self.num_players <= MAX_PLAYERS_ONE_DECK else 2)
        if isinstance(self.decks, bool) or not isinstance(self.decks, int) or not 1 <= self.decks <= MAX_DECKS:
            fail(f"decks={self.decks!r}; allowed 1..{MAX_DECKS}")
        if self.hand_size is None:
            default = DRAW_FROM_DECK_HAND_SIZE if self.draw_from_deck else DEFAULT_HAND_SIZE
            object.__setattr__(self, "hand_size", default)
        if isinstance(self.hand_size, bool) or not isinstance(self.hand_size, int) or self.hand_size < 1:
            fail(f"hand_size={self.hand_size!r}; allowed: an int of at least 1")
        if self.draw_from_deck and self.hand_size != DRAW_FROM_DECK_HAND_SIZE:
            fail(f"hand_size={self.hand_size} with draw_from_deck; a player only ever holds the flipped card, "
                 f"so hand_size must be {DRAW_FROM_DECK_HAND_SIZE} (or left unset)")
        if self.table_cards < 0:
            fail(f"table_cards={self.table_cards}; allowed: 0 or more")
        if self.dealer is None:
            object.__setattr__(self, "dealer", self.num_players - 1)
        if isinstance(self.dealer, bool) or not isinstance(self.dealer, int) or not 0 <= self.dealer < self.num_players:
            fail(f"dealer={self.dealer!r}; allowed 0..{self.num_players - 1}")
        first_deal = self.table_cards + (0 if self.draw_from_deck else self.num_players * self.hand_size)
        needed = first_deal + (1 if self.draw_from_deck else 0)
        if needed > self.total_cards:
            what = "the table plus one card to flip" if self.draw_from_deck else "the first deal (hands plus table)"
            fail(f"{what} needs {needed} cards but {self.decks} deck(s) hold {self.total_cards}; "
                 f"lower table_cards/hand_size or add decks, ranks or suits")

    @property
    def total_cards(self) -> int:
        """Cards in play: natural cards plus jokers, over all decks."""
        return self.decks * (self.ranks * self.suits + (JOKERS_PER_DECK if self.jokers else 0))

    @property
    def copies_per_rank(self) -> int:
        """How many cards of each natural rank in the decks (ranks beyond `ranks` have none)."""
        return self.decks * self.suits

    @property
    def rank_copies(self) -> tuple[int, ...]:
        """Cards of each rank slot in the decks: 13 natural ranks (0 for the absent ones), then jokers."""
        jokers = self.decks * JOKERS_PER_DECK if self.jokers else 0
        return tuple(self.copies_per_rank if rank < self.ranks else 0 for rank in range(NUM_RANKS)) + (jokers,)

    def unshuffled_deck(self) -> list[int]:
        """Card codes of every deck in play, unshuffled (the order the deal seed's permutation applies to)."""
        return make_deck(self.decks, self.jokers, self.ranks, self.suits)

    @property
    def first_player(self) -> int:
        """The seat left of the dealer, who plays first after every deal."""
        return (self.dealer + 1) % self.num_players

    def replace(self, **changes) -> "RulesConfig":
        """A copy with some fields changed (and validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain dict of every field (resolved defaults included)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RulesConfig":
        """Inverse of `to_dict`; unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown RulesConfig field(s) {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)


PRESET_FIELDS: dict[str, dict] = {
    "standard": {},
    "draw_from_deck": {"draw_from_deck": True},
    "eight_table": {"table_cards": 8},
    "take_all": {"take_all": True},
    "leftovers": {"leftovers_to_last_capturer": True},
    "jokers": {"jokers": True},
    "free_discard": {"must_capture": False},
    "mini": {"ranks": 2, "suits": 4, "hand_size": 2, "table_cards": 2},
    "small": {"ranks": 3, "suits": 3, "hand_size": 2, "table_cards": 1},
    "medium": {"ranks": 4, "suits": 3, "hand_size": 2, "table_cards": 2},
    "mini3": {"num_players": 3, "ranks": 2, "suits": 4, "hand_size": 2, "table_cards": 2},
    "mini4": {"num_players": 4, "ranks": 2, "suits": 4, "hand_size": 2, "table_cards": 0},
    "small3": {"num_players": 3, "ranks": 3, "suits": 4, "hand_size": 2, "table_cards": 2},
}
"""Named rule sets: the rules page (`standard`), one per variant, and three small decks for research.

``mini`` (2 ranks x 4 suits: 8 cards, hands of 2, 2 table cards; a second deal of one card each),
``small`` (3 ranks x 3 suits: 9 cards, hands of 2, 1 table card; two deals of two) and ``medium`` (4 ranks
x 3 suits: 12 cards, hands of 2, 2 table cards; deals of two, two, then one) keep the rules page's play and
are small enough to solve exactly at 2 players (`rouba_env.solve.exploitability`). Three more seat their own
table: ``mini3`` (``mini``'s 8 cards at 3 seats: one deal of two each, 2 table cards), ``mini4`` (the same 8
cards at 4 seats: two each, nothing on the table; the smallest decks that deal three and four) and ``small3``
(3 ranks x 4 suits: 12 cards at 3 seats, hands of 2, 2 table cards; a second deal of four cards). Any preset
takes another table size as an override where its deck deals it.
"""


def preset(name: str, **overrides) -> RulesConfig:
    """The named preset, with optional field overrides (e.g. ``num_players=3``)."""
    if name not in PRESET_FIELDS:
        raise ValueError(f"unknown rules preset {name!r}; known presets: {sorted(PRESET_FIELDS)}")
    check_rules_fields(overrides)
    return RulesConfig(**{**PRESET_FIELDS[name], **overrides})


def check_rules_fields(fields: dict) -> None:
    """TypeError naming every key of ``fields`` that is no `RulesConfig` field, and the fields there are.

    In Python's own words for an unexpected keyword argument: the environments pass their leftover
    keyword arguments on as rules fields, so a misspelt option is caught too, and libraries such as
    TorchRL retry without an option on TypeError.
    """
    unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(RulesConfig)})
    if unknown:
        named = ", ".join(f"unexpected keyword argument {name!r}" for name in unknown)
        raise TypeError(f"{named}: neither an option of this call nor a rules field "
                        f"({', '.join(f.name for f in dataclasses.fields(RulesConfig))})")


def make_rules(rules: "RulesConfig | str | dict | None" = None, **fields) -> RulesConfig:
    """A `RulesConfig` from a preset name, a dict, a config or None (standard), plus field overrides.

    An override that is no rules field is a TypeError naming the fields (`check_rules_fields`).
    """
    check_rules_fields(fields)
    if rules is None:
        rules = "standard"
    if isinstance(rules, str):
        return preset(rules, **fields)
    if isinstance(rules, dict):
        return RulesConfig.from_dict({**rules, **fields})
    if isinstance(rules, RulesConfig):
        return rules.replace(**fields) if fields else rules
    raise ValueError(f"rules must be a RulesConfig, a preset name, a dict or None; got {type(rules).__name__}")
