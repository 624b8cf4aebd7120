"""The batched engine's compiled kernels: plain loops over game slots, compiled by numba.

Each slot holds one game as per-rank counts (see `rouba_env.batched.game`).
The kernels implement the rules once for the batched engine; the reference
engine `rouba_env.rules.engine` is the other implementation, and the two are
checked step by step against each other. Helpers used inside a loop are
inlined into their callers: a call passing a dozen arrays costs more than the work.
"""

from __future__ import annotations

import numba
import numpy as np

from rouba_env.encoding.actions import action_index, action_move
from rouba_env.encoding.observation import EMPTY_SLOT, PILE_TOP_SLOTS
from rouba_env.rules.cards import JOKER_RANK, NUM_RANKS
from rouba_env.rules.scoring import write_final_rewards
from rouba_env.rules.engine import (
    EMPTY_PILE,
    JOKER_KIND_OFFSET,
    NO_SEAT,
    NUM_RANK_SLOTS,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
)

RANK_SLOTS = NUM_RANK_SLOTS
"""Per-rank count arrays: 13 ranks, then the joker slot."""
JOKER_SLOT = JOKER_RANK
"""The joker's rank slot."""


# Indices into the int64 parameter vector handed to the kernels (`VectorGame` fills it): the rules ...
(PARAM_NUM_PLAYERS, PARAM_NUM_TARGETS, PARAM_HAND_SIZE, PARAM_TABLE_CARDS, PARAM_TAKE_ALL, PARAM_MUST_CAPTURE,
 PARAM_LEFTOVERS, PARAM_DRAW_FROM_DECK, PARAM_FIRST_PLAYER, PARAM_DEALER, PARAM_TOTAL_CARDS, PARAM_REWARD_MODE,
 PARAM_AUTO_RESET) = range(13)
"""`PARAM_REWARD_MODE` holds the index of the mode in `rouba_env.rules.scoring.REWARD_MODES`."""
NUM_RULE_PARAMS = 13
# ... and where each block of the observation vector starts (`observation_layout`, filled by `VectorGame`).
OBSERVATION_PARAM_BLOCKS = ("hand", "table", "seen", "pile_top", "pile_size", "hand_size", "present", "dealer",
                            "to_act", "deck", "flipped", "rules", "passed", "played")
"""The observation blocks whose start the kernels read, in parameter order."""
(PARAM_OBS_HAND, PARAM_OBS_TABLE, PARAM_OBS_SEEN, PARAM_OBS_PILE_TOP, PARAM_OBS_PILE_SIZE, PARAM_OBS_HAND_SIZE,
 PARAM_OBS_PRESENT, PARAM_OBS_DEALER, PARAM_OBS_TO_ACT, PARAM_OBS_DECK, PARAM_OBS_FLIPPED,
 PARAM_OBS_RULES, PARAM_OBS_PASSED, PARAM_OBS_PLAYED) = range(NUM_RULE_PARAMS,
                                                             NUM_RULE_PARAMS + len(OBSERVATION_PARAM_BLOCKS))
TALK_PLAYED = NUM_RANKS
"""A slot's ``talk[b, seat]`` row: 13 passed-up counts (natural ranks), then 14 played counts (rank slots)."""
TALK_SIZE = NUM_RANKS + NUM_RANK_SLOTS
NUM_PARAMS = NUM_RULE_PARAMS + len(OBSERVATION_PARAM_BLOCKS)

final_rewards = numba.njit(cache=True, nogil=True, inline="always")(write_final_rewards)
"""The rules' one definition of the final rewards, compiled."""
index_of = numba.njit(cache=True, nogil=True, inline="always")(action_index)
move_of = numba.njit(cache=True, nogil=True, inline="always")(action_move)
"""The action encoding's index formula and its inverse, compiled."""



@numba.njit(cache=True, nogil=True, inline="always")
def write_observation(obs, row, b, seat, p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current):
    """Observation of absolute ``seat`` in slot ``b`` into ``obs[row]`` (see `rouba_env.encoding.observation`)."""
    # Every parameter is read before the first store: the compiler cannot tell `obs` and `p` apart.
    n = p[PARAM_NUM_PLAYERS]
    o_hand = p[PARAM_OBS_HAND]
    o_table = p[PARAM_OBS_TABLE]
    o_seen = p[PARAM_OBS_SEEN]
    o_top = p[PARAM_OBS_PILE_TOP]
    o_psize = p[PARAM_OBS_PILE_SIZE]
    o_hsize = p[PARAM_OBS_HAND_SIZE]
    o_present = p[PARAM_OBS_PRESENT]
    o_dealer = p[PARAM_OBS_DEALER]
    o_act = p[PARAM_OBS_TO_ACT]
    o_deck = p[PARAM_OBS_DECK]
    o_flip = p[PARAM_OBS_FLIPPED]
    o_rules = p[PARAM_OBS_RULES]
    o_passed = p[PARAM_OBS_PASSED]
    o_played = p[PARAM_OBS_PLAYED]
    dealer = p[PARAM_DEALER]
    draw = p[PARAM_DRAW_FROM_DECK] != 0
    total = np.float32(p[PARAM_TOTAL_CARDS])
    cur = current[b]
    for i in range(obs.shape[1]):
        obs[row, i] = 0.0
    for r in range(RANK_SLOTS):
        obs[row, o_hand + r] = np.float32(hands[b, seat, r])
        obs[row, o_table + r] = np.float32(table[b, r])
        obs[row, o_seen + r] = np.float32(seen[b, r])
    other = seat
    for o in range(n):
        t = np.int64(top[b, other])
        obs[row, o_top + o * PILE_TOP_SLOTS + (EMPTY_SLOT if t < 0 else t)] = 1.0
        obs[row, o_psize + o] = np.float32(pile[b, other]) / total
        obs[row, o_hsize + o] = np.float32(hand_count[b, other])
        obs[row, o_present + o] = 1.0
        other += 1
        if other == n:
            other = 0
    offset = dealer - seat
    if offset < 0:
        offset += n
    obs[row, o_dealer + offset] = 1.0
    if cur >= 0:
        offset = cur - seat
        if offset < 0:
            offset += n
        obs[row, o_act + offset] = 1.0
        if draw:
            for r in range(RANK_SLOTS):
                obs[row, o_flip + r] = np.float32(hands[b, cur, r])
    obs[row, o_deck] = np.float32(deck_len[b]) / total
    for i in range(rules.shape[0]):
        obs[row, o_rules + i] = rules[i]
    other = seat
    for o in range(n):
        for r in range(NUM_RANKS):
            obs[row, o_passed + o * NUM_RANKS + r] = np.float32(talk[b, other, r])
        for r in range(RANK_SLOTS):
            obs[row, o_played + o * RANK_SLOTS + r] = np.float32(talk[b, other, TALK_PLAYED + r])
        other += 1
        if other == n:
            other = 0


@numba.njit(cache=True, nogil=True, inline="always")
def write_mask(mask, b, p, hands, table, top, current):
    """Legal-action mask of the seat to act in slot ``b`` into ``mask[b]`` (all zero when the game is over)."""
    n = p[PARAM_NUM_PLAYERS]
    num_targets = p[PARAM_NUM_TARGETS]
    take_all = p[PARAM_TAKE_ALL] != 0
    must = p[PARAM_MUST_CAPTURE] != 0
    cur = current[b]
    for i in range(mask.shape[1]):
        mask[b, i] = 0
    if cur < 0:
        return
    has_joker = hands[b, cur, JOKER_SLOT] > 0
    table_jokers = table[b, JOKER_SLOT] > 0
    pile_bits = 0
    seat = cur
    for o in range(n):
        t = top[b, seat]
        if t >= 0:
            pile_bits |= 1 << t
            if hands[b, cur, t] > 0:
                mask[b, index_of(t, TARGET_PILE_OFFSET + o, num_targets)] = 1
            if has_joker:
                mask[b, index_of((JOKER_KIND_OFFSET + t), TARGET_PILE_OFFSET + o, num_targets)] = 1
        seat += 1
        if seat == n:
            seat = 0
    joker_table = table_jokers and not take_all
    joker_can_capture = False
    for r in range(NUM_RANKS):
        on_table = table[b, r] > 0 or (take_all and table_jokers)
        can_capture = on_table or joker_table or ((pile_bits >> r) & 1) != 0
        if hands[b, cur, r] > 0:
            if on_table:
                mask[b, index_of(r, TARGET_TABLE, num_targets)] = 1
            if joker_table:
                mask[b, index_of(r, TARGET_TABLE_JOKER, num_targets)] = 1
            if not can_capture or not must:
                mask[b, index_of(r, TARGET_DISCARD, num_targets)] = 1
        if has_joker:
            if on_table:
                mask[b, index_of((JOKER_KIND_OFFSET + r), TARGET_TABLE, num_targets)] = 1
            if joker_table:
                mask[b, index_of((JOKER_KIND_OFFSET + r), TARGET_TABLE_JOKER, num_targets)] = 1
            if can_capture:
                joker_can_capture = True
    if has_joker and (not joker_can_capture or not must):
        mask[b, index_of(JOKER_KIND_OFFSET, TARGET_DISCARD, num_targets)] = 1


@numba.njit(cache=True, nogil=True, inline="always")
def deal_hands(b, p, hands, hand_count, talk, deck, deck_len):
    """One card at a time from the first player, up to the hand size each, until the deck runs out.

    A new deal: every seat's table talk starts afresh.
    """
    n = p[PARAM_NUM_PLAYERS]
    fp = p[PARAM_FIRST_PLAYER]
    for s in range(n):
        for i in range(TALK_SIZE):
            talk[b, s, i] = 0
    left = deck_len[b]
    for _ in range(p[PARAM_HAND_SIZE]):
        seat = fp
        for _o in range(n):
            if left == 0:
                deck_len[b] = 0
                return
            left -= 1
            r = deck[b, left]
            hands[b, seat, r] += 1
            hand_count[b, seat] += 1
            seat += 1
            if seat == n:
                seat = 0
    deck_len[b] = left


@numba.njit(cache=True, nogil=True, inline="always")
def start_slot(b, order, base_ranks, p, hands, hand_count, table, seen, pile, top, talk, deck, deck_len, current, last_cap, turn):
    """Deal a new game in slot ``b`` from a shuffle ``order`` (a row of `rouba_env.rules.seeding.shuffle_order`)."""
    n = p[PARAM_NUM_PLAYERS]
    for s in range(n):
        for r in range(RANK_SLOTS):
            hands[b, s, r] = 0
        for i in range(TALK_SIZE):
            talk[b, s, i] = 0
        hand_count[b, s] = 0
        pile[b, s] = 0
        top[b, s] = EMPTY_PILE
    for r in range(RANK_SLOTS):
        table[b, r] = 0
    total = p[PARAM_TOTAL_CARDS]
    for j in range(total):
        deck[b, j] = base_ranks[order[j]]
    deck_len[b] = total
    last_cap[b] = NO_SEAT
    turn[b] = 0
    fp = p[PARAM_FIRST_PLAYER]
    if p[PARAM_DRAW_FROM_DECK] == 0:
        deal_hands(b, p, hands, hand_count, talk, deck, deck_len)
    left = deck_len[b]
    for _ in range(p[PARAM_TABLE_CARDS]):
        left -= 1
        table[b, deck[b, left]] += 1
    if p[PARAM_DRAW_FROM_DECK] != 0:
        left -= 1
        hands[b, fp, deck[b, left]] += 1
        hand_count[b, fp] += 1
    deck_len[b] = left
    for r in range(RANK_SLOTS):
        seen[b, r] = table[b, r]
    current[b] = fp


@numba.njit(cache=True, nogil=True, inline="never")
def deal_games(idx, orders, base_ranks, p, rules, hands, hand_count, table, seen, pile, top, talk, deck, deck_len, current,
            last_cap, turn, obs, mask):
    """Start new games in slots ``idx`` (shuffles ``orders[i]``) and write their observations and masks."""
    for i in range(idx.shape[0]):
        b = idx[i]
        start_slot(b, orders[i], base_ranks, p, hands, hand_count, table, seen, pile, top, talk, deck, deck_len, current,
                 last_cap, turn)
        write_observation(obs, b, b, current[b], p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current)
        write_mask(mask, b, p, hands, table, top, current)


@numba.njit(cache=True, nogil=True, inline="never")
def first_illegal(actions, mask, current):
    """First live slot whose action is out of range or illegal, or -1."""
    num_actions = mask.shape[1]
    for b in range(actions.shape[0]):
        if current[b] >= 0:
            a = actions[b]
            if a < 0 or a >= num_actions or mask[b, a] == 0:
                return b
    return -1


@numba.njit(cache=True, nogil=True, inline="never")
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


@numba.njit(cache=True, nogil=True, inline="always")
def play_slot(b, a, p, rules, hands, hand_count, table, seen, pile, top, talk, deck, deck_len, current, last_cap, turn,
              obs, mask, rewards, done, final_scores):
    """Play the (checked) action ``a`` in slot ``b`` if its game is live; True if that ended the game.

    Without auto-reset the finished slot shows seat 0's view and an empty mask.
    """
    n = p[PARAM_NUM_PLAYERS]
    num_targets = p[PARAM_NUM_TARGETS]
    take_all = p[PARAM_TAKE_ALL] != 0
    draw = p[PARAM_DRAW_FROM_DECK] != 0
    auto = p[PARAM_AUTO_RESET] != 0
    first_player = p[PARAM_FIRST_PLAYER]
    leftovers = p[PARAM_LEFTOVERS] != 0
    reward_mode = p[PARAM_REWARD_MODE]
    total_cards = p[PARAM_TOTAL_CARDS]
    done[b] = False
    for s in range(n):
        rewards[b, s] = 0.0
    cur = current[b]
    if cur < 0:
        return False
    kind, target = move_of(a, num_targets)
    if kind >= JOKER_KIND_OFFSET:
        card = JOKER_SLOT
        rank = kind - JOKER_KIND_OFFSET
    else:
        card = kind
        rank = kind
    # What the table said (engine.table_talk): ranks that could be taken and were not, then the card played.
    shown = -1 if (kind >= JOKER_KIND_OFFSET and target == TARGET_DISCARD) else rank
    for r in range(NUM_RANKS):
        if r == shown:
            continue
        takeable = table[b, r] > 0
        if not takeable:
            other = cur
            for _o in range(n - 1):
                other += 1
                if other == n:
                    other = 0
                if top[b, other] == r:
                    takeable = True
                    break
        if takeable:
            talk[b, cur, r] += 1
    talk[b, cur, TALK_PLAYED + card] += 1
    hands[b, cur, card] -= 1
    hand_count[b, cur] -= 1
    seen[b, card] += 1
    if target == TARGET_DISCARD:
        table[b, card] += 1
    elif target == TARGET_TABLE:
        if take_all:
            taken = table[b, rank] + table[b, JOKER_SLOT]
            table[b, rank] = 0
            table[b, JOKER_SLOT] = 0
        else:
            taken = 1
            table[b, rank] -= 1
        pile[b, cur] += taken + 1
        top[b, cur] = rank
        last_cap[b] = cur
    elif target == TARGET_TABLE_JOKER:
        table[b, JOKER_SLOT] -= 1
        pile[b, cur] += 2
        top[b, cur] = rank
        last_cap[b] = cur
    else:
        victim = cur + target - TARGET_PILE_OFFSET
        if victim >= n:
            victim -= n
        if victim != cur:
            pile[b, cur] += pile[b, victim]
            pile[b, victim] = 0
            top[b, victim] = EMPTY_PILE
            last_cap[b] = cur
        pile[b, cur] += 1
        top[b, cur] = rank
    turn[b] += 1
    # Pass the turn (engine._advance).
    nxt = -1
    if draw:
        if deck_len[b] > 0:
            nxt = cur + 1
            if nxt == n:
                nxt = 0
            left = deck_len[b] - 1
            deck_len[b] = left
            hands[b, nxt, deck[b, left]] += 1
            hand_count[b, nxt] += 1
            for i in range(TALK_SIZE):  # a new hand: its table talk starts afresh
                talk[b, nxt, i] = 0
    else:
        seat = cur
        for _o in range(n):
            seat += 1
            if seat == n:
                seat = 0
            if hand_count[b, seat] > 0:
                nxt = seat
                break
        if nxt < 0 and deck_len[b] > 0:
            deal_hands(b, p, hands, hand_count, talk, deck, deck_len)
            nxt = first_player  # the first player is always dealt the first card
    if nxt >= 0:
        current[b] = nxt
        write_observation(obs, b, b, nxt, p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current)
        write_mask(mask, b, p, hands, table, top, current)
        return False
    # Game over (engine._finish).
    current[b] = NO_SEAT
    if leftovers and last_cap[b] >= 0:
        left_total = 0
        highest = -1
        for r in range(RANK_SLOTS):
            c = table[b, r]
            if c > 0:
                left_total += c
                if r < NUM_RANKS:
                    highest = r
                table[b, r] = 0
        if left_total > 0:
            s = last_cap[b]
            if top[b, s] < 0:
                top[b, s] = highest if highest >= 0 else 0
            pile[b, s] += left_total
    for s in range(n):
        final_scores[b, s] = pile[b, s]
    final_rewards(reward_mode, pile[b], total_cards, rewards[b])
    done[b] = True
    if not auto:
        write_observation(obs, b, b, 0, p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current)
        write_mask(mask, b, p, hands, table, top, current)
    return True


@numba.njit(cache=True, nogil=True, inline="never")
def step_slots(slots, actions, p, rules, hands, hand_count, table, seen, pile, top, talk, deck, deck_len, current, last_cap,
               turn, obs, mask, rewards, done, final_scores, ended):
    """Play ``actions[i]`` (checked) in slot ``slots[i]`` only; returns how many games ended (their slots in ``ended``)."""
    n_ended = 0
    for i in range(slots.shape[0]):
        b = slots[i]
        if play_slot(b, actions[i], p, rules, hands, hand_count, table, seen, pile, top, talk, deck, deck_len, current, last_cap,
                     turn, obs, mask, rewards, done, final_scores):
            ended[n_ended] = b
            n_ended += 1
    return n_ended


@numba.njit(cache=True, nogil=True, inline="never")
def observe_seats(seats, out, p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current):
    for b in range(seats.shape[0]):
        write_observation(out, b, b, seats[b], p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current)


@numba.njit(cache=True, nogil=True, inline="never")
def observe_slot_seats(slots, seats, out, p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current):
    """Row ``i`` of ``out``: slot ``slots[i]`` seen from seat ``seats[i]``."""
    for i in range(slots.shape[0]):
        write_observation(out, i, slots[i], seats[i], p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len,
                          current)


@numba.njit(cache=True, nogil=True, inline="never")
def hidden_of_slots(slots, seats, out, n, hands, deck, deck_len):
    """Row ``i`` of ``out``: what seat ``seats[i]`` of slot ``slots[i]`` cannot see (`ObservationEncoder.hidden`)."""
    for i in range(slots.shape[0]):
        b = slots[i]
        for j in range(out.shape[1]):
            out[i, j] = 0.0
        other = seats[i]
        for o in range(n):
            for r in range(RANK_SLOTS):
                out[i, o * RANK_SLOTS + r] = np.float32(hands[b, other, r])
            other += 1
            if other == n:
                other = 0
        deck_start = out.shape[1] - RANK_SLOTS
        for j in range(deck_len[b]):
            out[i, deck_start + deck[b, j]] += 1.0


@numba.njit(cache=True, nogil=True, inline="never")
def refresh_all(p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current, obs, mask):
    """Observation (seat to act, or seat 0 once over) and mask of every slot."""
    for b in range(obs.shape[0]):
        seat = current[b] if current[b] >= 0 else 0
        write_observation(obs, b, b, seat, p, rules, hands, hand_count, table, seen, pile, top, talk, deck_len, current)
        write_mask(mask, b, p, hands, table, top, current)


@numba.njit(cache=True, nogil=True, inline="never")
def sample_legal(mask, u, out):
    """``out[b]``: the ``floor(u[b] * legal)``-th legal action of row ``b`` (0 when none is legal)."""
    num_actions = mask.shape[1]
    for b in range(mask.shape[0]):
        count = 0
        for a in range(num_actions):
            count += mask[b, a]
        out[b] = 0
        if count == 0:
            continue
        k = int(u[b] * count)
        if k >= count:
            k = count - 1
        for a in range(num_actions):
            if mask[b, a] != 0:
                if k == 0:
                    out[b] = a
                    break
                k -= 1


