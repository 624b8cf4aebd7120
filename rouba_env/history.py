"""What was played at a batched table: each slot's decisions of the game under way, as the evidence a search
weighs the hidden hands by (`rouba_env.posterior`).

A decision keeps the table as it stood (a copied slot of the `VectorGame`, its hidden cards included: a search
deals them anew before it reads a position, so only what the observer saw reaches its choices) and the move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rouba_env.batched.game import VectorGame


@dataclass
class TargetDecision:
    """One decision of the target: the table as it stood (a copied slot) and the move it made."""

    position: VectorGame
    row: int
    action: int
    deck_len: int
    """The deck's size then: a new hand is dealt only from the deck, so an equal size means the same hand."""


class DecisionRecorder:
    """The batched table's move hook that keeps, per slot, the decisions of the current game (a copied position
    each, the seat and the move); a seat's decisions since its current hand was dealt are its hand's evidence.

    ``skip_seats[slot]``: a seat whose decisions are not kept there (the observer's own, which tell nothing
    about the other hand); None keeps every seat's. `forget` drops a slot's decisions when a new game starts
    there.
    """

    def __init__(self, game: VectorGame, skip_seats: np.ndarray | None = None):
        self.game, self.skip_seats = game, skip_seats
        self.decisions: dict[int, list[tuple[int, TargetDecision]]] = {}
        self.latest: VectorGame | None = None
        """The positions of the last round recorded (row ``i``: the ``i``-th slot of that round)."""

    def __call__(self, slots: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> None:
        kept_rows = np.arange(len(slots)) if self.skip_seats is None else np.flatnonzero(
            seats != self.skip_seats[slots])
        if not kept_rows.size:
            return
        self.latest = kept = self.game.copies(slots[kept_rows])
        deck_len = self.game.arrays.deck_len
        for row, index in enumerate(kept_rows.tolist()):
            slot = int(slots[index])
            self.decisions.setdefault(slot, []).append(
                (int(seats[index]), TargetDecision(kept, row, int(actions[index]), int(deck_len[slot]))))

    def hand_decisions(self, slot: int, seat: int, deck_len: int) -> list[TargetDecision]:
        """``seat``'s decisions in ``slot`` while the deck held ``deck_len`` cards (its current hand's, when that
        is the deck's size now), oldest first."""
        return [decision for who, decision in self.decisions.get(slot, [])
                if who == seat and decision.deck_len == deck_len]

    def others_decisions(self, slot: int, observer: int, deck_len: int) -> list[list[TargetDecision]]:
        """Each seat's but ``observer``'s decisions in ``slot`` while the deck held ``deck_len`` cards (`hand_decisions`),
        one list per seat from ``observer``'s left: the evidence of the hands ``observer`` cannot see."""
        n = self.game.num_players
        return [self.hand_decisions(slot, (observer + j) % n, deck_len) for j in range(1, n)]

    def forget(self, slots: np.ndarray) -> None:
        """New games start at ``slots``: their earlier decisions tell nothing of the new hands."""
        for slot in np.asarray(slots).tolist():
            self.decisions.pop(int(slot), None)
