"""JSON views of a game state for the browser: what one seat sees, or everything.

A card is ``{"code", "face", "rank", "rank_name", "suit"}`` (``suit`` is None
for a joker, ``rank`` is `JOKER_RANK` for one). Legal moves are grouped by the
hand card they play (its rank, or `JOKER_RANK` for a joker), then by target.
"""

from __future__ import annotations

from typing import Sequence

from rouba_env.encoding.actions import ActionEncoding, describe_move
from rouba_env.rules import core, engine, scoring
from rouba_env.rules.cards import JOKER, JOKER_RANK, RANK_NAMES, card_face, rank_name, rank_of, suit_of

PLACE_TABLE = "table"
"""Capture from the table."""
PLACE_DISCARD = "discard"
"""Leave the card face up on the table."""
PLACE_TABLE_JOKER = "table_joker"
"""Capture a joker lying on the table."""
PLACE_PILE = "pile"
"""Own pile or another seat's pile (a steal)."""
_TARGET_PLACES = {core.TARGET_TABLE: PLACE_TABLE, core.TARGET_DISCARD: PLACE_DISCARD,
                  core.TARGET_TABLE_JOKER: PLACE_TABLE_JOKER}


def card_json(card: int) -> dict:
    """A card code with what the page needs to draw it."""
    rank = rank_of(card)
    return {
        "code": int(card),
        "face": card_face(card),
        "rank": rank,
        "rank_name": rank_name(rank),
        "suit": None if card == JOKER else suit_of(card),
    }


def move_json(state: engine.GameState, move: engine.Move, encoding: ActionEncoding) -> dict:
    """One legal move of the seat to act: its action index, where it goes and its words."""
    kind, target = move
    is_joker = kind >= core.JOKER_KIND_OFFSET
    place = _TARGET_PLACES.get(target, PLACE_PILE)
    return {
        "action": encoding.encode(move),
        "kind": kind,
        "target": target,
        "place": place,
        "seat": engine.pile_seat(state, state.current, target) if place == PLACE_PILE else None,
        "named": RANK_NAMES[engine.shown_rank(kind)] if is_joker and target != core.TARGET_DISCARD else None,
        "label": describe_move(state, move),
    }


def legal_groups(state: engine.GameState, encoding: ActionEncoding) -> list[dict]:
    """Legal moves of the seat to act grouped by the hand card played, in rank order (jokers last)."""
    groups: dict[int, dict] = {}
    for move in map(encoding.decode, encoding.legal_actions(state)):  # the rules core's legal moves
        card_rank = JOKER_RANK if move.kind >= core.JOKER_KIND_OFFSET else move.kind
        group = groups.setdefault(card_rank, {"rank": card_rank, "rank_name": rank_name(card_rank), "moves": []})
        group["moves"].append(move_json(state, move, encoding))
    return [groups[rank] for rank in sorted(groups)]


def seat_view(state: engine.GameState, seat: int, name: str, show_hand: bool) -> dict:
    pile = state.piles[seat]
    shows = state.pile_tops[seat]
    return {
        "seat": seat,
        "name": name,
        "hand_size": len(state.hands[seat]),
        "hand": [card_json(card) for card in state.hands[seat]] if show_hand else None,
        "pile_size": len(pile),
        "pile_top": card_json(pile[-1]) if pile else None,
        "pile_shows": None if shows == core.EMPTY_PILE else RANK_NAMES[shows],
    }


def state_view(state: engine.GameState, names: Sequence[str], viewer: int | None,
               encoding: ActionEncoding | None = None) -> dict:
    """The state as seen from seat ``viewer`` (its own hand only), or everything when ``viewer`` is None.

    With ``encoding`` and the viewer to act, ``legal`` lists the viewer's legal
    moves (see `legal_groups`); otherwise it is empty.
    """
    config = state.config
    finished = engine.is_terminal(state)
    points = scoring.scores(state)
    seats = [seat_view(state, seat, names[seat], viewer is None or viewer == seat)
             for seat in range(config.num_players)]
    last = None
    if state.last_move is not None:
        seat, move, card = state.last_move
        last = {"seat": seat, "kind": move.kind, "target": move.target, "card": card_json(card)}
    return {
        "viewer": viewer,
        "num_players": config.num_players,
        "dealer": config.dealer,
        "turn": state.turn,
        "current": None if finished else state.current,
        "finished": finished,
        "deck_count": len(state.deck),
        "table": [card_json(card) for card in state.table_cards],
        "seats": seats,
        "last_move": last,
        "legal": legal_groups(state, encoding) if encoding is not None and viewer == state.current else [],
        "scores": points if finished else None,
        "winners": scoring.top_seats(points) if finished else None,
    }
