"""The batched engine's compiled loops: the rules core (`rouba_env.rules.core`) run over game slots.

Every kernel takes a game as one tuple ``game = (params, buffer, current)``
(`rouba_env.rules.buffers.GameArrays`' parameter vector, int16 buffer and seats
to act) and names it with `rules_of`, `game_of` and `observation_starts`; the
arrays a kernel writes come as one tuple too (``shown = (obs, mask)``, or
``out = (obs, mask, rewards, done, final_scores, ended)``). Plain tuples, not
named ones: numba reads a plain tuple's type from its arguments' fingerprints,
a named tuple's by a slower path that costs a microsecond on every call.
The rules themselves live in the core; these loops only say which slots to
deal, step or observe and where the observations, masks and rewards go.
"""

from __future__ import annotations

import numba

from rouba_env.encoding.observation import observation_starts, write_hidden, write_observation
from rouba_env.rules.buffers import game_of, rules_of
from rouba_env.rules.core import legal_moves, move_of, play_move, start_game, write_rewards
from rouba_env.rules.seeding import seed_order


@numba.njit(cache=True, nogil=True, inline="always")
def show(r, g, o, b, obs, mask):
    """Observation of the seat to act (seat 0 once the game is over) and the mask of slot ``b``."""
    write_observation(r, o, g, b, g.current[b] if g.current[b] >= 0 else 0, obs)
    legal_moves(r, g, b, mask)


@numba.njit(cache=True, nogil=True, inline="always")
def play_slot(r, g, o, b, action, out):
    """Play the (checked) ``action`` in live slot ``b``; True if that ended the game.

    Writes the next observation and mask of the slot into ``out`` (without auto-reset, a finished slot shows
    seat 0's view and an empty mask), and on the last move every seat's reward and final score.
    """
    obs, mask, rewards, _, final_scores, _ = out
    for s in range(r.num_players):
        rewards[b, s] = 0.0
    kind, target = move_of(action, r.move_stride)
    ended = play_move(r, g, b, kind, target)
    if ended:
        for s in range(r.num_players):
            final_scores[b, s] = g.pile[b, s]
        write_rewards(r, g, b, rewards[b])
    if not ended or not r.auto_reset:
        show(r, g, o, b, obs[b], mask[b])
    return ended


@numba.njit(cache=True, nogil=True)
def deal_games(game, slots, orders, deck, shown):
    """Start new games in ``slots`` (shuffles ``orders[i]`` of ``deck = (ranks, cards)``) and write their
    observations and masks into ``shown = (obs, mask)``."""
    p, buffer, current = game
    deck_ranks, deck_cards = deck
    obs, mask = shown
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    for i in range(slots.shape[0]):
        b = slots[i]
        start_game(r, g, b, orders[i], deck_ranks, deck_cards)
        show(r, g, o, b, obs[b], mask[b])


@numba.njit(cache=True, nogil=True)
def deal_slot(game, b, seed, deck, shown):
    """Start the game of deal seed ``seed`` (a uint64; `shuffle_order`'s order of ``deck = (ranks, cards)``) in
    slot ``b`` and write its observation and mask into ``shown`` (that slot's rows): a one-game table's
    whole deal, in one call."""
    p, buffer, current = game
    deck_ranks, deck_cards = deck
    r, g = rules_of(p), game_of(p, buffer, current)
    start_game(r, g, b, seed_order(seed, deck_ranks.shape[0]), deck_ranks, deck_cards)
    show(r, g, observation_starts(p), b, shown[0], shown[1])


NOT_PLAYED = -2
"""`play_if_legal`'s answer when the action is not legal now (nothing changes)."""


@numba.njit(cache=True, nogil=True)
def play_if_legal(game, b, shown, action):
    """Play ``action`` in slot ``b`` if it is legal there now (its entry of the slot's mask in ``shown = (obs,
    mask)`` is set) and show the position after it (seat 0's view and an empty mask once the game is over).
    Returns the seat to act next, `NO_SEAT` if the move ended the game, or `NOT_PLAYED` (nothing changed).
    A one-game table's whole move."""
    p, buffer, current = game
    obs, mask = shown
    if current[b] < 0 or action < 0 or action >= mask.shape[0] or mask[action] == 0:
        return NOT_PLAYED
    r, g = rules_of(p), game_of(p, buffer, current)
    kind, target = move_of(action, r.move_stride)
    play_move(r, g, b, kind, target)
    show(r, g, observation_starts(p), b, obs, mask)
    return current[b]


@numba.njit(cache=True, nogil=True)
def step_slots(game, slots, actions, out):
    """Play ``actions[i]`` (checked) in slot ``slots[i]`` where its game is live, writing ``out = (obs, mask,
    rewards, done, final_scores, ended)``; returns how many games ended (their slots in ``ended``)."""
    p, buffer, current = game
    _, _, rewards, done, _, ended = out
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    count = 0
    for i in range(slots.shape[0]):
        b = slots[i]
        done[b] = False
        if current[b] < 0:
            for s in range(rewards.shape[1]):
                rewards[b, s] = 0.0
            continue
        if play_slot(r, g, o, b, actions[i], out):
            done[b] = True
            ended[count] = b
            count += 1
    return count


@numba.njit(cache=True, nogil=True)
def first_illegal(actions, mask, current):
    """First live slot whose action is out of range or illegal, or -1."""
    num_actions = mask.shape[1]
    for b in range(actions.shape[0]):
        if current[b] >= 0:
            a = actions[b]
            if a < 0 or a >= num_actions or mask[b, a] == 0:
                return b
    return -1


@numba.njit(cache=True, nogil=True)
def illegal_rows(slots, actions, mask, current, bad):
    """Indices ``i`` whose ``actions[i]`` is out of range or illegal in live slot ``slots[i]``, into ``bad``; their count."""
    num_actions = mask.shape[1]
    count = 0
    for i in range(slots.shape[0]):
        b = slots[i]
        a = actions[i]
        if current[b] < 0 or a < 0 or a >= num_actions or mask[b, a] == 0:
            bad[count] = i
            count += 1
    return count


@numba.njit(cache=True, nogil=True)
def observe_slot_seats(game, slots, seats, out):
    """Row ``i`` of ``out``: slot ``slots[i]`` seen from absolute seat ``seats[i]``."""
    p, buffer, current = game
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    for i in range(slots.shape[0]):
        write_observation(r, o, g, slots[i], seats[i], out[i])


@numba.njit(cache=True, nogil=True)
def observe_one(game, b, seat, out):
    """``out``: slot ``b`` seen from absolute seat ``seat``."""
    p, buffer, current = game
    write_observation(rules_of(p), observation_starts(p), game_of(p, buffer, current), b, seat, out)


@numba.njit(cache=True, nogil=True)
def hidden_of_slots(game, slots, seats, out):
    """Row ``i`` of ``out``: what seat ``seats[i]`` of slot ``slots[i]`` cannot see (`ObservationEncoder.hidden`)."""
    p, buffer, current = game
    r, g = rules_of(p), game_of(p, buffer, current)
    for i in range(slots.shape[0]):
        write_hidden(r, g, slots[i], seats[i], out[i])


@numba.njit(cache=True, nogil=True)
def refresh_all(game, shown):
    """Observation (seat to act, or seat 0 once over) and mask of every slot, into ``shown = (obs, mask)``."""
    p, buffer, current = game
    obs, mask = shown
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    for b in range(obs.shape[0]):
        show(r, g, o, b, obs[b], mask[b])
