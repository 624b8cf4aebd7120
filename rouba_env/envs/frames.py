"""Pictures of a game (``render_mode="rgb_array"``): the table, every pile as a stack, and the hands.

A frame is a ``uint8[H, W, 3]`` array, as Gymnasium's ``RecordVideo`` and
PettingZoo's video tools expect. Drawn with Pillow (a dependency of the core
install) and its bundled font, so frames look the same on every machine.
One row per seat, in seat order: the seat's pile (its top card on a stack
whose depth grows with its size, and the size) and its hand, face up for the
viewer (every hand without a viewer), face down for the others; the table
cards and the deck above them.
"""

from __future__ import annotations

import numpy as np

from rouba_env.rules.cards import JOKER, RANK_NAMES, rank_of, suit_of
from rouba_env.rules.core import EMPTY_PILE
from rouba_env.rules.engine import GameState

CARD_W, CARD_H = 52, 74
"""Card size in pixels."""
GAP = 8
MARGIN = 14
HEADER_H = 34
ROW_H = CARD_H + 30
LABEL_W = 96
FRAME_W = 960
"""Frame width in pixels (the height grows with the number of seats; the size is fixed for one table)."""
FELT, FELT_DARK, INK = (29, 92, 54), (18, 61, 36), (244, 244, 239)
CARD_FACE, CARD_EDGE, CARD_BACK, HIGHLIGHT = (252, 252, 247), (125, 139, 130), (40, 84, 170), (255, 212, 121)
RED, BLACK = (192, 57, 43), (28, 28, 28)
RED_SUITS = (1, 2)
"""Suit indices drawn in red: hearts and diamonds (`rouba_env.rules.cards.SUIT_SYMBOLS`)."""
MAX_STACK_EDGES = 4
"""Edges drawn under a pile's top card: one per card beyond the top, at most this many."""


def frame_size(num_players: int) -> tuple[int, int]:
    """(height, width) of a frame for a table of ``num_players``."""
    return HEADER_H + ROW_H + num_players * ROW_H + MARGIN, FRAME_W


def render_frame(state: GameState, viewer: int | None = None) -> np.ndarray:
    """``uint8[H, W, 3]``: the game drawn from ``viewer``'s seat (None: every hand face up)."""
    from PIL import Image, ImageDraw, ImageFont

    height, width = frame_size(state.config.num_players)
    image = Image.new("RGB", (width, height), FELT)
    draw = ImageDraw.Draw(image)
    font, small = ImageFont.load_default(size=18), ImageFont.load_default(size=14)
    status = "game over" if state.current < 0 else f"player {state.current} to play"
    view = "every hand" if viewer is None else f"seen by player {viewer}"
    draw.rectangle((0, 0, width, HEADER_H), fill=FELT_DARK)
    draw.text((MARGIN, 8), f"rouba-monte  ·  turn {state.turn}  ·  {status}  ·  {view}", font=font, fill=INK)

    top = HEADER_H + 10
    if state.deck:
        _card_back(draw, MARGIN, top)
    draw.text((MARGIN, top + CARD_H - 6), f"deck {len(state.deck)}", font=small, fill=INK)
    x = MARGIN + LABEL_W + 2 * GAP
    draw.text((x, top - 8), "table", font=small, fill=INK)
    for card in state.table_cards:
        _card(draw, x, top + 8, card, font=font)
        x += CARD_W + GAP

    for seat in range(state.config.num_players):
        y = HEADER_H + ROW_H + seat * ROW_H + 8
        if seat == state.current:
            draw.rounded_rectangle((MARGIN - 6, y - 6, width - MARGIN, y + CARD_H + 18), radius=8, outline=HIGHLIGHT,
                                   width=3)
        name = f"player {seat}" + (" (you)" if seat == viewer else "")
        draw.text((MARGIN, y + 4), name, font=font, fill=INK)
        pile = state.piles[seat]
        px = MARGIN + LABEL_W + 2 * GAP
        draw.text((px, y + CARD_H + 2), f"pile {len(pile)}", font=small, fill=INK)
        if state.pile_tops[seat] == EMPTY_PILE:
            draw.rounded_rectangle((px, y + 10, px + CARD_W, y + 10 + CARD_H - 10), radius=6, outline=INK, width=1)
        else:
            for depth in range(min(MAX_STACK_EDGES, len(pile) - 1), 0, -1):
                _blank(draw, px + 3 * depth, y + 10 - 3 * depth)
            _card(draw, px, y + 10, pile[-1], font=font, named=state.pile_tops[seat])
        hx = px + CARD_W + 6 * GAP
        draw.text((hx, y + CARD_H + 2), f"hand {len(state.hands[seat])}", font=small, fill=INK)
        face_up = viewer is None or seat == viewer
        for index, card in enumerate(sorted(state.hands[seat]) if face_up else state.hands[seat]):
            cx = hx + index * (CARD_W + GAP)
            _card(draw, cx, y + 10, card, font=font) if face_up else _card_back(draw, cx, y + 10)
    return np.asarray(image, dtype=np.uint8).copy()


def _blank(draw, x: int, y: int) -> None:
    draw.rounded_rectangle((x, y, x + CARD_W, y + CARD_H - 10), radius=6, fill=CARD_FACE, outline=CARD_EDGE)


def _card_back(draw, x: int, y: int) -> None:
    draw.rounded_rectangle((x, y, x + CARD_W, y + CARD_H - 10), radius=6, fill=CARD_BACK, outline=INK, width=2)


def _card(draw, x: int, y: int, card: int, *, font, named: int | None = None) -> None:
    """A card face: its rank (a joker: "Jk", and the rank it stands for on a pile) and its suit drawn as a shape."""
    _blank(draw, x, y)
    if card == JOKER:
        draw.text((x + 6, y + 4), "Jk", font=font, fill=RED)
        if named is not None and named != EMPTY_PILE:
            draw.text((x + 6, y + 30), f"={RANK_NAMES[named]}", font=font, fill=BLACK)
        return
    suit = suit_of(card)
    colour = RED if suit in RED_SUITS else BLACK
    draw.text((x + 6, y + 4), RANK_NAMES[rank_of(card)], font=font, fill=colour)
    _suit(draw, x + CARD_W // 2 + 4, y + CARD_H // 2 + 4, suit, colour=colour)


def _suit(draw, cx: int, cy: int, suit: int, *, colour) -> None:
    """Spade, heart, diamond or club (suits 0..3) centred at (cx, cy), about 18 pixels wide."""
    r = 5
    if suit == 2:  # diamond
        draw.polygon([(cx, cy - 10), (cx + 8, cy), (cx, cy + 10), (cx - 8, cy)], fill=colour)
    elif suit == 1:  # heart: two lobes over a point
        draw.ellipse((cx - 9, cy - 7, cx - 9 + 2 * r, cy - 7 + 2 * r), fill=colour)
        draw.ellipse((cx - 1, cy - 7, cx - 1 + 2 * r, cy - 7 + 2 * r), fill=colour)
        draw.polygon([(cx - 9, cy - 1), (cx + 9, cy - 1), (cx, cy + 10)], fill=colour)
    elif suit == 0:  # spade: a point over two lobes, and a stem
        draw.polygon([(cx, cy - 10), (cx + 9, cy + 1), (cx - 9, cy + 1)], fill=colour)
        draw.ellipse((cx - 9, cy - 3, cx - 9 + 2 * r, cy - 3 + 2 * r), fill=colour)
        draw.ellipse((cx - 1, cy - 3, cx - 1 + 2 * r, cy - 3 + 2 * r), fill=colour)
        draw.polygon([(cx, cy + 2), (cx + 4, cy + 10), (cx - 4, cy + 10)], fill=colour)
    else:  # club: three leaves and a stem
        for dx, dy in ((-5, 0), (5, 0), (0, -8)):
            draw.ellipse((cx + dx - r, cy + dy - r, cx + dx + r, cy + dy + r), fill=colour)
        draw.polygon([(cx, cy), (cx + 4, cy + 10), (cx - 4, cy + 10)], fill=colour)
