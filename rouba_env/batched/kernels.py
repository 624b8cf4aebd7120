"""The batched engine's compiled loops: the rules core (`rouba_env.rules.core`) run over game slots.

Every kernel takes a game as `rouba_env.rules.buffers.GameArrays` hands it to
compiled code (its parameter vector ``p``, int16 ``buffer`` and ``current``
seats) and names it with `rules_of`, `game_of` and `observation_starts`. The
arrays come one by one, not grouped in a tuple: numba reads a tuple
argument's type by walking it on every call, which the one-game path (a
kernel call per move) cannot afford.
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
def play_slot(r, g, o, b, action, obs, mask, rewards, final_scores):
    """Play the (checked) ``action`` in live slot ``b``; True if that ended the game.

    Writes the next observation and mask of the slot (without auto-reset, a finished slot shows seat 0's
    view and an empty mask), and on the last move every seat's reward and final score.
    """
    for s in range(r.num_players):
        rewards[s] = 0.0
    kind, target = move_of(action, r.move_stride)
    ended = play_move(r, g, b, kind, target)
    if ended:
        for s in range(r.num_players):
            final_scores[s] = g.pile[b, s]
        write_rewards(r, g, b, rewards)
    if not ended or not r.auto_reset:
        show(r, g, o, b, obs, mask)
    return ended


@numba.njit(cache=True, nogil=True)
def deal_games(p, buffer, current, slots, orders, deck_ranks, deck_codes, obs, mask):
    """Start new games in ``slots`` (shuffles ``orders[i]``) and write their observations and masks."""
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    for i in range(slots.shape[0]):
        b = slots[i]
        start_game(r, g, b, orders[i], deck_ranks, deck_codes)
        show(r, g, o, b, obs[b], mask[b])


@numba.njit(cache=True, nogil=True)
def deal_slot(p, buffer, current, b, seed, deck_ranks, deck_codes, obs, mask):
    """Start the game of deal seed ``seed`` (a uint64; `shuffle_order`'s deck) in slot ``b`` and write its
    observation and mask: a one-game table's whole deal, in one call."""
    r, g = rules_of(p), game_of(p, buffer, current)
    start_game(r, g, b, seed_order(seed, deck_ranks.shape[0]), deck_ranks, deck_codes)
    show(r, g, observation_starts(p), b, obs, mask)


NOT_PLAYED = -2
"""`play_if_legal`'s answer when the action is not legal now (nothing changes)."""


@numba.njit(cache=True, nogil=True)
def play_if_legal(p, buffer, current, b, obs, mask, action):
    """Play ``action`` in slot ``b`` if it is legal there now (its ``mask`` entry is set) and show the position
    after it (seat 0's view and an empty mask once the game is over). Returns the seat to act next,
    `NO_SEAT` if the move ended the game, or `NOT_PLAYED` (nothing changed). A one-game table's whole move."""
    if current[b] < 0 or action < 0 or action >= mask.shape[0] or mask[action] == 0:
        return NOT_PLAYED
    r, g = rules_of(p), game_of(p, buffer, current)
    kind, target = move_of(action, r.move_stride)
    play_move(r, g, b, kind, target)
    show(r, g, observation_starts(p), b, obs, mask)
    return current[b]


@numba.njit(cache=True, nogil=True)
def step_slots(p, buffer, current, slots, actions, obs, mask, rewards, done, final_scores, ended):
    """Play ``actions[i]`` (checked) in slot ``slots[i]`` where its game is live; returns how many games
    ended (their slots in ``ended``)."""
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    count = 0
    for i in range(slots.shape[0]):
        b = slots[i]
        done[b] = False
        if current[b] < 0:
            for s in range(rewards.shape[1]):
                rewards[b, s] = 0.0
            continue
        if play_slot(r, g, o, b, actions[i], obs[b], mask[b], rewards[b], final_scores[b]):
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
def observe_slot_seats(p, buffer, current, slots, seats, out):
    """Row ``i`` of ``out``: slot ``slots[i]`` seen from absolute seat ``seats[i]``."""
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    for i in range(slots.shape[0]):
        write_observation(r, o, g, slots[i], seats[i], out[i])


@numba.njit(cache=True, nogil=True)
def observe_one(p, buffer, current, b, seat, out):
    """``out``: slot ``b`` seen from absolute seat ``seat``."""
    write_observation(rules_of(p), observation_starts(p), game_of(p, buffer, current), b, seat, out)


@numba.njit(cache=True, nogil=True)
def hidden_of_slots(p, buffer, current, slots, seats, out):
    """Row ``i`` of ``out``: what seat ``seats[i]`` of slot ``slots[i]`` cannot see (`ObservationEncoder.hidden`)."""
    r, g = rules_of(p), game_of(p, buffer, current)
    for i in range(slots.shape[0]):
        write_hidden(r, g, slots[i], seats[i], out[i])


@numba.njit(cache=True, nogil=True)
def refresh_all(p, buffer, current, obs, mask):
    """Observation (seat to act, or seat 0 once over) and mask of every slot."""
    r, g, o = rules_of(p), game_of(p, buffer, current), observation_starts(p)
    for b in range(obs.shape[0]):
        show(r, g, o, b, obs[b], mask[b])
