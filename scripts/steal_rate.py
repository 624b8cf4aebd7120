#!/usr/bin/env python
"""How often a player who could steal the opponent's pile does steal it (two players, standard rules).

    python scripts/steal_rate.py --games 150 --seed 0

The number behind ``search:passed_steal``: a pile left standing says the last mover probably lacked its rank.
"""

from __future__ import annotations

import argparse

import numpy as np

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.registry import make_policy
from rouba_env.rules import engine
from rouba_env.rules.cards import rank_of
from rouba_env.rules.config import preset
from rouba_env.rules.core import TARGET_PILE_OFFSET


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", nargs="+", default=["heuristic", "checkpoint:2p"], help="player specs")
    parser.add_argument("--games", type=int, default=150, help="self-play games per player")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rules = preset("standard")
    encoder, actions = ObservationEncoder(rules), ActionEncoding(rules)
    for spec in args.players:
        player = make_policy(spec, rules)
        rng = np.random.default_rng(args.seed)
        could = stole = 0
        for _ in range(args.games):
            state = engine.new_game(rules, rng)
            while not engine.is_terminal(state):
                seat = state.current
                other = 1 - seat
                top = state.pile_tops[other]
                able = bool(state.piles[other]) and any(rank_of(card) == top for card in state.hands[seat])
                move = actions.decode(player.act(encoder.encode(state, seat), actions.mask(state), rng))
                if able:
                    could += 1
                    stole += move.target == TARGET_PILE_OFFSET + 1
                state = engine.apply_move(state, move)
        print(f"{spec}: stole {stole} of {could} chances ({stole / max(could, 1):.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
