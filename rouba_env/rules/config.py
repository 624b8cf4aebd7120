"""Rules configuration: every choice that the rules leave to the table (see docs/rules.md).

`RulesConfig` is a frozen dataclass validated on construction, so an invalid
game can never start. `PRESETS` names the rules page and each of its variants.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from rouba_env.checks import is_int
from rouba_env.rules.cards import CARDS_PER_DECK, JOKERS_PER_DECK, NUM_SUITS

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

    def __post_init__(self) -> None:
        def fail(message: str) -> None:
            raise ValueError(f"invalid RulesConfig: {message}")

        # numpy integers and booleans (from arrays, sweeps) count as the plain values they hold.
        for name in ("num_players", "table_cards", "decks", "hand_size", "dealer"):
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
                 f"lower table_cards/hand_size or add decks")

    @property
    def total_cards(self) -> int:
        """Cards in play: natural cards plus jokers, over all decks."""
        return self.decks * (CARDS_PER_DECK + (JOKERS_PER_DECK if self.jokers else 0))

    @property
    def copies_per_rank(self) -> int:
        """How many cards of each natural rank the decks hold."""
        return self.decks * NUM_SUITS

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
}
"""Named rule sets: the rules page (`standard`) and one per variant."""


def preset(name: str, **overrides) -> RulesConfig:
    """The named preset, with optional field overrides (e.g. ``num_players=3``)."""
    if name not in PRESET_FIELDS:
        raise ValueError(f"unknown rules preset {name!r}; known presets: {sorted(PRESET_FIELDS)}")
    return RulesConfig(**{**PRESET_FIELDS[name], **overrides})


def make_rules(rules: "RulesConfig | str | dict | None" = None, **fields) -> RulesConfig:
    """A `RulesConfig` from a preset name, a dict, a config or None (standard), plus field overrides.

    An override that is no rules field is a TypeError naming the fields, as Python reports an
    unexpected keyword argument (the environments pass their leftover keyword arguments here, so a
    misspelt option is caught too; libraries such as TorchRL retry without an option on TypeError).
    """
    unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(RulesConfig)})
    if unknown:
        named = ", ".join(f"unexpected keyword argument {name!r}" for name in unknown)  # Python's own words
        raise TypeError(f"{named}: neither an option of this call nor a rules field "
                        f"({', '.join(f.name for f in dataclasses.fields(RulesConfig))})")
    if rules is None:
        rules = "standard"
    if isinstance(rules, str):
        return preset(rules, **fields)
    if isinstance(rules, dict):
        return RulesConfig.from_dict({**rules, **fields})
    if isinstance(rules, RulesConfig):
        return rules.replace(**fields) if fields else rules
    raise ValueError(f"rules must be a RulesConfig, a preset name, a dict or None; got {type(rules).__name__}")
