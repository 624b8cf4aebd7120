"""Shared helpers of the player tests: a rules strategy, observations of hand-built states, complete states."""

import numpy as np

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.checkpoint import expected_shapes
from rouba_env.players.registry import make_policy
from tests.reference import engine
from rouba_env.rules.cards import rank_of
from rouba_env.rules.core import TARGET_PILE_OFFSET
from rouba_env.rules.engine import Move
from tests.rules.scenario import RANKS

OWN, NEXT, SECOND = TARGET_PILE_OFFSET, TARGET_PILE_OFFSET + 1, TARGET_PILE_OFFSET + 2
CHEAP_EXPERT = "expert:samples=1,max_scale=1"
"""Smallest search: legality and plumbing, not strength."""


def play_checked(config, specs, seed):
    """Play one game with ``specs`` cycled over the seats; assert every chosen action is in the mask."""
    rng = np.random.default_rng(seed)
    encoder, encoding = ObservationEncoder(config), ActionEncoding(config)
    players = [make_policy(specs[seat % len(specs)], config) for seat in range(config.num_players)]
    state = engine.new_game(config, rng)
    while not engine.is_terminal(state):
        obs, mask = encoder.encode(state, state.current), encoding.mask(state)
        action = players[state.current].act(obs, mask, rng)
        assert mask[action] == 1, f"{players[state.current].name} chose illegal action {action}"
        state = engine.apply_move(state, encoding.decode(action))  # the engine re-checks legality
    return state


def random_position(config, rng, turns):
    """The state after up to ``turns`` random legal moves from a new game."""
    state = engine.new_game(config, rng)
    for _ in range(turns):
        if engine.is_terminal(state):
            break
        moves = engine.legal_moves(state)
        state = engine.apply_move(state, moves[rng.integers(len(moves))])
    return state


def observe(state, seat=None):
    """(observation, mask) of ``seat`` (default: the seat to act)."""
    config = state.config
    seat = state.current if seat is None else seat
    return ObservationEncoder(config).encode(state, seat), ActionEncoding(config).mask(state)


def action_of(config, kind, target):
    return ActionEncoding(config).encode(Move(kind, target))


def complete_state(config, hands, table, tops, sizes, deck_size=0):
    """A state holding exactly the decks' cards: the given hands and table, the rest in piles and deck.

    Pile ``s`` gets ``sizes[s]`` cards with rank ``tops[s]`` on top (None: empty pile).
    """
    pool = {}
    for card in config.unshuffled_deck():
        pool.setdefault(rank_of(card), []).append(card)

    def take(rank):
        return pool[rank].pop()

    state_hands = [[take(RANKS[word]) for word in hand.split()] for hand in hands]
    state_table = [take(RANKS[word]) for word in table.split()]
    piles = [[take(RANKS[top])] if top else [] for top in tops]
    rest = [card for cards in pool.values() for card in cards]
    assert len(rest) == sum(sizes) - sum(1 for top in tops if top) + deck_size, "every card must be placed"
    for seat, size in enumerate(sizes):
        if tops[seat]:
            piles[seat] = rest[: size - 1] + piles[seat]
            rest = rest[size - 1 :]
    pile_tops = [RANKS[top] if top else engine.EMPTY_PILE for top in tops]
    return engine.GameState(config=config, hands=state_hands, table_cards=state_table, piles=piles,
                            pile_tops=pile_tops, deck=rest, current=0, last_capturer=1)


def random_tensors(rules, max_players, hidden, seed=0):
    """Random MLP weights of a checkpoint for ``rules`` padded to ``max_players`` (hidden widths ``hidden``)."""
    meta = {"obs_size": ObservationEncoder(rules, max_players).size,
            "num_actions": ActionEncoding(rules, max_players).size, "hidden_sizes": list(hidden)}
    rng = np.random.default_rng(seed)
    return {name: rng.normal(0, 0.3, shape).astype(np.float32) for name, shape in expected_shapes(meta).items()}
