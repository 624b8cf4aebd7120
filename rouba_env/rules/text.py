"""A game as text with card faces (``7♠ K♥``): pure, for every front end (environments, terminal, OpenSpiel)."""

from __future__ import annotations

from rouba_env.rules.cards import RANK_NAMES, card_face
from rouba_env.rules.core import EMPTY_PILE
from rouba_env.rules.engine import GameState
from rouba_env.rules.scoring import scores


def render_text(state: GameState, viewer: int | None = None) -> str:
    """The table, every pile's top and size, the deck count and one hand.

    ``viewer`` is the seat whose hand is shown (default: the seat to act);
    other hands are shown only by their size.
    """
    config = state.config
    viewer = state.current if viewer is None else viewer
    lines = []
    status = "game over" if state.current < 0 else f"player {state.current} to play"
    lines.append(f"turn {state.turn}, {status}; deck: {len(state.deck)} cards; dealer: player {config.dealer}")
    table = " ".join(card_face(c) for c in state.table_cards) or "(empty)"
    lines.append(f"table: {table}")
    for seat in range(config.num_players):
        pile = state.piles[seat]
        if state.pile_tops[seat] == EMPTY_PILE:
            top = "empty"
        else:
            top_card = card_face(pile[-1])
            named = state.pile_tops[seat]
            shown = f"{top_card} (as {RANK_NAMES[named]})" if top_card == "Jkr" else top_card
            top = f"top {shown}, {len(pile)} cards"
        marker = ">" if seat == state.current else " "
        lines.append(f"{marker} player {seat}: pile {top}; {len(state.hands[seat])} in hand")
    if viewer is not None and viewer >= 0:
        hand = " ".join(card_face(c) for c in sorted(state.hands[viewer])) or "(empty)"
        lines.append(f"player {viewer}'s hand: {hand}")
    if state.current < 0:
        lines.append("final scores: " + ", ".join(f"player {s}: {p}" for s, p in enumerate(scores(state))))
    return "\n".join(lines)
