"""The independent reference: the rules of rouba-monte written out card by card, in plain Python.

The oracle the equivalence and golden tests compare the package's rules core (`rouba_env.rules.core`,
compiled) with. Only the data it plays on is shared with the package (`rouba_env.rules.engine`'s
`GameState` and `Move`, and the moves' vocabulary); every rule here is its own. A `GameState` is plain data;
`new_game`, `apply_move` and the queries below never change their input
(`apply_move` returns a new state). Randomness enters only through the
`numpy.random.Generator` given to `new_game`, which draws one 63-bit *deal
seed*; the shuffle is a pure function of that seed (`shuffled_deck`), so that
the batched engine can reproduce any game from its seed alone.

Moves are `(kind, target)` pairs (see `Move`): which card is played and where
it goes. Seats are absolute here (0..n-1, turn order); pile targets are given
relative to the mover (0 = own pile, 1 = next seat to the left, ...).
"""

from __future__ import annotations


import numpy as np

from rouba_env.checks import is_int
from rouba_env.rules.cards import JOKER, JOKER_RANK, NUM_RANKS, RANK_BYTES, RANK_OF_CARD, rank_of
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.core import (  # noqa: F401  (the moves' vocabulary, defined once in the rules core)
    EMPTY_PILE,
    JOKER_KIND_OFFSET,
    NO_SEAT,
    NUM_KINDS,
    RANK_SLOTS,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
)
from rouba_env.rules.engine import MOVES, NUM_RANK_SLOTS, GameState, Move  # noqa: F401  (the shared data)
from rouba_env.rules.seeding import DEAL_SEED_BOUND, shuffled_deck


def new_game(config: RulesConfig, rng: np.random.Generator) -> GameState:
    """Shuffle with a deal seed drawn from ``rng`` and deal (see `start_game`)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return start_game(config, int(rng.integers(0, DEAL_SEED_BOUND)))


def start_game(config: RulesConfig, deal_seed: int) -> GameState:
    """Deal a new game from a 63-bit deal seed.

    Hands are dealt one card at a time starting left of the dealer, then the
    table is laid. With ``draw_from_deck`` nobody is dealt a hand: the table is
    laid and the first player flips the top card.
    """
    if not isinstance(deal_seed, (int, np.integer)) or not 0 <= int(deal_seed) < DEAL_SEED_BOUND:
        raise ValueError(f"deal_seed must be an int in [0, 2**63), got {deal_seed!r}")
    return deal_from_deck(config, shuffled_deck(config, int(deal_seed)))


def deal_from_deck(config: RulesConfig, deck: list[int]) -> GameState:
    """Deal a new game from a shuffled deck (cards are taken from its end), as `start_game` does.

    For callers that shuffle themselves: OpenSpiel's chance nodes choose the deck's order card by card.
    """
    n = config.num_players
    state = GameState(
        config=config,
        hands=[[] for _ in range(n)],
        table_cards=[],
        piles=[[] for _ in range(n)],
        pile_tops=[EMPTY_PILE] * n,
        deck=list(deck),
        current=config.first_player,
    )
    if config.draw_from_deck:
        _lay_table(state)
        _draw(state, state.current)
    else:
        _deal_hands(state)
        _lay_table(state)
    return state


def _lay_table(state: GameState) -> None:
    for _ in range(state.config.table_cards):
        state.table_cards.append(state.deck.pop())


def _draw(state: GameState, seat: int) -> None:
    """``draw_from_deck``: ``seat`` flips the deck's top card (a new hand: its table talk starts afresh)."""
    state.hands[seat].append(state.deck.pop())
    _forget_table_talk(state, seat)


def _forget_table_talk(state: GameState, seat: int) -> None:
    state.passed[seat] = [0] * NUM_RANKS
    state.played[seat] = [0] * NUM_RANK_SLOTS


def table_talk(state: GameState, mover: int, move: Move) -> tuple[list[int], int]:
    """(ranks the mover passes up, rank slot of the card it plays) for ``move`` before it is played.

    A natural rank is passed up when a card of it could be taken (it lies on the table, or another
    seat's pile shows it) and the move plays a card of another rank; a discarded joker shows no rank
    and so passes every takeable rank up. Public facts: every seat sees them.
    """
    kind, target = move
    n = state.config.num_players
    takeable = set(bytes(state.table_cards).translate(RANK_BYTES))
    tops = state.pile_tops
    for offset in range(1, n):
        takeable.add(tops[(mover + offset) % n])
    takeable.discard(EMPTY_PILE)
    takeable.discard(JOKER_RANK)
    is_joker = kind >= JOKER_KIND_OFFSET
    if not (is_joker and target == TARGET_DISCARD):
        takeable.discard(shown_rank(kind))
    return sorted(takeable), (JOKER_RANK if is_joker else kind)


def _deal_hands(state: GameState) -> None:
    """Deal one card at a time from left of the dealer, up to the hand size, until the deck runs out."""
    config = state.config
    for seat in range(config.num_players):
        _forget_table_talk(state, seat)
    for _ in range(config.hand_size):
        for offset in range(config.num_players):
            if not state.deck:
                return
            state.hands[(config.first_player + offset) % config.num_players].append(state.deck.pop())


def rank_counts(cards: list[int]) -> list[int]:
    """Count of each rank (slot 13: jokers) among card codes."""
    counts = [0] * NUM_RANK_SLOTS
    ranks = RANK_OF_CARD
    for card in cards:
        counts[ranks[card]] += 1
    return counts


def is_terminal(state: GameState) -> bool:
    return state.current == NO_SEAT


def pile_seat(state: GameState, mover: int, target: int) -> int:
    """Absolute seat whose pile a pile target of ``mover`` points at."""
    return (mover + target - TARGET_PILE_OFFSET) % state.config.num_players


def legal_moves(state: GameState) -> list[Move]:
    """Every legal move of the seat to act, sorted by (kind, target); empty when the game is over.

    A card showing rank r may capture a table card of rank r (with ``take_all``
    a table joker also counts), capture a table joker (not with ``take_all``),
    or go on any pile whose top shows r (the own pile or a steal). It may be
    discarded only if it can capture nothing, unless ``must_capture`` is off.
    A joker may be named as any rank; a discarded joker is named nothing.
    """
    mover = state.current
    if mover == NO_SEAT:
        return []
    config = state.config
    n = config.num_players
    take_all = config.take_all
    must_capture = config.must_capture
    hand_ranks = set(bytes(state.hands[mover]).translate(RANK_BYTES))
    table_ranks = set(bytes(state.table_cards).translate(RANK_BYTES))
    table_jokers = JOKER_RANK in table_ranks
    joker_in_hand = JOKER_RANK in hand_ranks
    # Targets every card has whatever its rank, in increasing order, then the pile targets per top rank.
    any_rank_targets = [TARGET_TABLE_JOKER] if table_jokers and not take_all else []
    table_by_jokers = take_all and table_jokers
    pile_targets: dict[int, list[int]] = {}
    tops = state.pile_tops
    for offset in range(n):
        top = tops[(mover + offset) % n]
        if top != EMPTY_PILE:
            pile_targets.setdefault(top, []).append(TARGET_PILE_OFFSET + offset)
    moves = []
    joker_can_capture = False
    for rank in range(NUM_RANKS) if joker_in_hand else sorted(hand_ranks):
        targets = [TARGET_TABLE] if rank in table_ranks or table_by_jokers else []
        targets += any_rank_targets
        if rank in pile_targets:
            targets += pile_targets[rank]
        if rank in hand_ranks:
            if not targets or not must_capture:
                natural = sorted(targets + [TARGET_DISCARD])
            else:
                natural = targets
            row = MOVES[rank]
            moves.extend([row[target] for target in natural])
        if joker_in_hand and targets:
            joker_can_capture = True
    if joker_in_hand:
        for rank in range(NUM_RANKS):
            targets = [TARGET_TABLE] if rank in table_ranks or table_by_jokers else []
            targets += any_rank_targets
            if rank in pile_targets:
                targets += pile_targets[rank]
            row = MOVES[JOKER_KIND_OFFSET + rank]
            moves.extend([row[target] for target in targets])
        if not joker_can_capture or not must_capture:
            # A discarded joker is named nothing: its one discard move uses the first joker kind.
            moves.append(MOVES[JOKER_KIND_OFFSET][TARGET_DISCARD])
        moves.sort()
    return moves


def shown_rank(kind: int) -> int:
    """Rank a played kind shows: a natural card's own rank or a joker's named rank."""
    return kind - JOKER_KIND_OFFSET if kind >= JOKER_KIND_OFFSET else kind


def as_move(move) -> Move:
    """``move`` as a `Move` of two ints; ValueError for anything else (floats are not truncated)."""
    if not isinstance(move, (tuple, list)) or len(move) != 2:
        raise ValueError(f"a move is a (kind, target) pair of ints, got {move!r}")
    for part in move:
        if not is_int(part):
            raise ValueError(f"a move is a (kind, target) pair of ints, got {move!r}")
    return Move(int(move[0]), int(move[1]))


def apply_move(state: GameState, move: Move) -> GameState:
    """The state after the seat to act plays ``move``; ``state`` is left unchanged. ValueError if illegal."""
    move = as_move(move)
    check_legal(state, move)
    new = state.copy()
    play_move(new, move)
    return new


def check_legal(state: GameState, move: Move, legal: list[Move] | None = None) -> None:
    """ValueError naming the move and the legal ones unless ``move`` is legal (``legal``: precomputed moves)."""
    legal = legal_moves(state) if legal is None else legal
    if move not in legal:
        raise ValueError(f"illegal move {move} for seat {state.current}; legal moves: {legal}")


def play_move(state: GameState, move: Move) -> None:
    """Play a move already known to be legal, changing ``state`` in place (the environments' fast path).

    `apply_move` is the checked, pure form; both run this one implementation of the rules.
    """
    config = state.config
    mover = state.current
    kind, target = move
    rank = shown_rank(kind)
    passed, played_slot = table_talk(state, mover, move)
    seat_passed = state.passed[mover]
    for passed_rank in passed:
        seat_passed[passed_rank] += 1
    state.played[mover][played_slot] += 1
    hand = state.hands[mover]
    ranks = RANK_OF_CARD
    card = JOKER
    if kind < JOKER_KIND_OFFSET:
        for card in hand:  # the first card of the rank in hand
            if ranks[card] == rank:
                break
    hand.remove(card)
    pile = state.piles[mover]
    if target == TARGET_DISCARD:
        state.table_cards.append(card)
    elif target == TARGET_TABLE:
        if config.take_all:
            taken = [c for c in state.table_cards if ranks[c] in (rank, JOKER_RANK)]
            state.table_cards = [c for c in state.table_cards if ranks[c] not in (rank, JOKER_RANK)]
        else:
            index = next(i for i, c in enumerate(state.table_cards) if ranks[c] == rank)
            taken = [state.table_cards.pop(index)]
        pile.extend(taken)
        pile.append(card)
        state.pile_tops[mover] = rank
        state.last_capturer = mover
    elif target == TARGET_TABLE_JOKER:
        state.table_cards.remove(JOKER)
        pile.extend((JOKER, card))
        state.pile_tops[mover] = rank
        state.last_capturer = mover
    else:
        victim = pile_seat(state, mover, target)
        if victim != mover:
            pile.extend(state.piles[victim])
            state.piles[victim] = []
            state.pile_tops[victim] = EMPTY_PILE
            state.last_capturer = mover
        pile.append(card)
        state.pile_tops[mover] = rank
    state.turn += 1
    state.last_move = (mover, MOVES[kind][target], card)
    _advance(state, mover)


def _advance(state: GameState, mover: int) -> None:
    """Pass the turn to the left, dealing again or ending the game as the rules say."""
    config = state.config
    n = config.num_players
    if config.draw_from_deck:
        if state.deck:
            state.current = (mover + 1) % n
            _draw(state, state.current)
            return
        _finish(state)
        return
    for offset in range(1, n + 1):
        seat = (mover + offset) % n
        if state.hands[seat]:
            state.current = seat
            return
    if state.deck:
        _deal_hands(state)
        state.current = next(
            (config.first_player + offset) % n
            for offset in range(n)
            if state.hands[(config.first_player + offset) % n]
        )
        return
    _finish(state)


def _finish(state: GameState) -> None:
    """End the game; with ``leftovers_to_last_capturer`` the table goes under that seat's pile.

    If that pile is empty, the leftovers form it with the highest natural rank
    on top (a pile of leftover jokers only shows ace: a joker shows its name).
    """
    state.current = NO_SEAT
    if state.config.leftovers_to_last_capturer and state.last_capturer != NO_SEAT and state.table_cards:
        seat = state.last_capturer
        leftovers = sorted(state.table_cards, key=lambda card: (card != JOKER, rank_of(card)))
        if state.pile_tops[seat] == EMPTY_PILE:
            state.pile_tops[seat] = 0 if leftovers[-1] == JOKER else rank_of(leftovers[-1])
        state.piles[seat] = leftovers + state.piles[seat]
        state.table_cards = []


def seen_counts(state: GameState) -> list[int]:
    """Public card memory: cards of each rank that have been face up (table and piles)."""
    counts = rank_counts(state.table_cards)
    ranks = RANK_OF_CARD
    for pile in state.piles:
        for card in pile:
            counts[ranks[card]] += 1
    return counts


def card_total(state: GameState) -> int:
    """Cards in hands, table, piles and deck: always `config.total_cards`."""
    return sum(map(len, state.hands)) + len(state.table_cards) + sum(map(len, state.piles)) + len(state.deck)


def match_rules(config: RulesConfig, games: int) -> list[RulesConfig]:
    """Rules of each game of a match: the dealer moves one seat to the left every game."""
    if games < 1:
        raise ValueError(f"a match needs at least one game, got games={games}")
    n = config.num_players
    return [config.replace(dealer=(config.dealer + game) % n) for game in range(games)]
