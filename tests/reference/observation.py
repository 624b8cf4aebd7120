"""The observation vector and the hidden cards of a card-level `GameState`, written out in plain Python.

An independent model of `rouba_env.encoding.observation.write_observation` and `write_hidden` (the rules
core's), which the equivalence tests compare them with; only the layout (`observation_layout`) is shared.
"""

from __future__ import annotations

import numpy as np

from rouba_env.encoding.actions import resolve_max_players
from rouba_env.encoding.observation import EMPTY_SLOT, PILE_TOP_SLOTS, RULE_FLAGS, observation_layout
from rouba_env.rules.cards import NUM_RANKS, rank_of
from rouba_env.rules.core import EMPTY_PILE
from rouba_env.rules.engine import NUM_RANK_SLOTS, GameState


def rank_counts(cards) -> list[int]:
    counts = [0] * NUM_RANK_SLOTS
    for card in cards:
        counts[rank_of(card)] += 1
    return counts


def observation(state: GameState, seat: int, max_players: int | None = None) -> np.ndarray:
    """float32[D]: what ``seat`` sees, rotated so that index 0 of every seat block is ``seat``."""
    config = state.config
    n, m = config.num_players, resolve_max_players(config, max_players)
    layout = observation_layout(m)
    out = np.zeros(max(block.stop for block in layout.values()), dtype=np.float32)
    total = np.float32(config.total_cards)
    out[layout["hand"]] = rank_counts(state.hands[seat])
    out[layout["table"]] = rank_counts(state.table_cards)
    out[layout["seen"]] = rank_counts(state.table_cards + [card for pile in state.piles for card in pile])
    for offset in range(n):
        other = (seat + offset) % n
        top = state.pile_tops[other]
        out[layout["pile_top"].start + offset * PILE_TOP_SLOTS + (EMPTY_SLOT if top == EMPTY_PILE else top)] = 1.0
        out[layout["pile_size"].start + offset] = np.float32(len(state.piles[other])) / total
        out[layout["hand_size"].start + offset] = len(state.hands[other])
        out[layout["present"].start + offset] = 1.0
        out[layout["passed"].start + offset * NUM_RANKS:][:NUM_RANKS] = state.passed[other]
        out[layout["played"].start + offset * NUM_RANK_SLOTS:][:NUM_RANK_SLOTS] = state.played[other]
    out[layout["dealer"].start + (config.dealer - seat) % n] = 1.0
    if state.current >= 0:
        out[layout["to_act"].start + (state.current - seat) % n] = 1.0
        if config.draw_from_deck:
            out[layout["flipped"]] = rank_counts(state.hands[state.current])
    out[layout["deck"].start] = np.float32(len(state.deck)) / total
    out[layout["rules"]] = [float(getattr(config, flag)) for flag in RULE_FLAGS]
    return out


def hidden(state: GameState, seat: int, max_players: int | None = None) -> np.ndarray:
    """float32[(m + 1) * 14]: every seat's hand per rank slot from ``seat``'s point of view, then the deck."""
    n, m = state.config.num_players, resolve_max_players(state.config, max_players)
    out = np.zeros((m + 1, NUM_RANK_SLOTS), dtype=np.float32)
    for offset in range(n):
        out[offset] = rank_counts(state.hands[(seat + offset) % n])
    out[-1] = rank_counts(state.deck)
    return out.ravel()
