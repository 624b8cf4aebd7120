"""The rules of play, compiled once: each rule a small function on a `Game`'s arrays.

A `Game` holds any number of game *slots* (one row of every array per slot);
each rule function works on one slot ``b`` of it, and `Rules` holds the
rules' parameters by name. The batched engine loops these functions over
thousands of slots; `rouba_env.single_game.SingleGame` runs them on a game of one slot,
so a single game and slot 0 of a batch are the same code.

The rules look only at ranks: a slot keeps rank counts of every hand, the
table and the seen cards, each pile's size and top, and its deck as ranks.
Card identity (suits) matters only to what people see (frames, the browser,
replays): with ``Rules.track_cards`` a slot also keeps the card codes of
every hand, the table, each pile and the deck, in the order the rules page's
table would show them, moved by the same functions.

Compiled code receives a game as one int16 buffer, its ``current`` seats and
one int64 parameter vector; `rouba_env.rules.buffers` lays them out and gives
them their named form (`Rules`, `Game`, declared in `rouba_env.rules.layout`),
which the rules here read.
"""

from __future__ import annotations

import numba
import numpy as np

from rouba_env.rules.cards import JOKER_RANK, NUM_RANKS, rank_of
from rouba_env.rules.layout import (  # noqa: F401  (the layout's markers, read by the rules and their callers)
    EMPTY_PILE, LAST_MOVE_FIELDS, NO_SEAT, RANK_SLOTS, TALK_PLAYED, TALK_SIZE, Game, Rules,
)
from rouba_env.rules.scoring import write_final_rewards

JOKER_SLOT = JOKER_RANK
JOKER_KIND_OFFSET = NUM_RANKS
"""Kinds 0..12 play a natural card of that rank; kind 13 + r plays a joker named as rank r."""
NUM_KINDS = 2 * NUM_RANKS
"""Card kinds a move can play: 13 natural ranks, then a joker named as each of them."""
TARGET_TABLE = 0
"""Capture a table card of the played (or named) rank."""
TARGET_DISCARD = 1
"""Leave the card face up on the table."""
TARGET_TABLE_JOKER = 2
"""Capture a joker lying on the table (any card may); unused with ``take_all``."""
TARGET_PILE_OFFSET = 3
"""Target ``3 + k`` is the pile of the seat ``k`` places to the mover's left (k = 0: own pile)."""

card_rank = numba.njit(cache=True, nogil=True, inline="always")(rank_of)
"""The cards' one rank rule, compiled."""
final_rewards = numba.njit(cache=True, nogil=True, inline="always")(write_final_rewards)
"""The rules' one definition of the final rewards, compiled."""


def move_index(kind, target, stride):
    """Where move (kind, target) sits in a move table with ``stride`` targets per kind.

    This is the action encoding's index (`rouba_env.encoding.actions`): ``stride = 3 + max_players``.
    """
    return kind * stride + target


def move_at(index, stride):
    """(kind, target) of a move table index: the inverse of `move_index`."""
    kind = index // stride
    return kind, index - kind * stride


index_of = numba.njit(cache=True, nogil=True, inline="always")(move_index)
move_of = numba.njit(cache=True, nogil=True, inline="always")(move_at)


# ------------------------------------------------------------------ dealing


@numba.njit(cache=True, nogil=True, inline="always")
def forget_table_talk(r: Rules, g: Game, b, seat):
    """A new hand: what the table said to ``seat`` starts afresh."""
    talk = g.talk[b, seat]
    for i in range(TALK_SIZE):
        talk[i] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def give_top_card(r: Rules, g: Game, b, seat):
    """Move the deck's top card into ``seat``'s hand."""
    left = g.deck_len[b] - 1
    g.deck_len[b] = left
    g.hands[b, seat, g.deck[b, left]] += 1
    if r.track_cards:
        g.hand_codes[b, seat, g.hand_count[b, seat]] = g.deck_codes[b, left]
    g.hand_count[b, seat] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def deal_hands(r: Rules, g: Game, b):
    """Deal one card at a time from left of the dealer, up to the hand size, until the deck runs out.

    A new deal: every seat's table talk starts afresh.
    """
    for seat in range(r.num_players):
        forget_table_talk(r, g, b, seat)
    for _ in range(r.hand_size):
        seat = r.first_player
        for _offset in range(r.num_players):
            if g.deck_len[b] == 0:
                return
            give_top_card(r, g, b, seat)
            seat += 1
            if seat == r.num_players:
                seat = 0


@numba.njit(cache=True, nogil=True, inline="always")
def draw(r: Rules, g: Game, b, seat):
    """``draw_from_deck``: ``seat`` flips the deck's top card (a new hand: its table talk starts afresh)."""
    give_top_card(r, g, b, seat)
    forget_table_talk(r, g, b, seat)


@numba.njit(cache=True, nogil=True, inline="always")
def lay_table(r: Rules, g: Game, b):
    """Lay the table cards face up from the top of the deck."""
    for _ in range(r.table_cards):
        left = g.deck_len[b] - 1
        g.deck_len[b] = left
        rank = g.deck[b, left]
        g.table_cards[b, rank] += 1
        g.seen[b, rank] += 1
        if r.track_cards:
            g.table_codes[b, g.table_len[b]] = g.deck_codes[b, left]
        g.table_len[b] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def start_game(r: Rules, g: Game, b, order, deck_ranks, deck_codes):
    """Deal a new game in slot ``b`` from a shuffle ``order`` of the unshuffled deck.

    ``deck_ranks`` and ``deck_codes``: rank slot and code of each card of `RulesConfig.unshuffled_deck`;
    the deck is ``order`` applied to it, its last card on top (`rouba_env.rules.seeding.shuffle_order`).
    Hands are dealt one card at a time starting left of the dealer, then the table is laid. With
    ``draw_from_deck`` nobody is dealt a hand: the table is laid and the first player flips the top card.
    """
    g.hands[b] = 0
    g.talk[b] = 0
    g.hand_count[b] = 0
    g.pile[b] = 0
    g.top[b] = EMPTY_PILE
    g.table_cards[b] = 0
    g.seen[b] = 0
    deck = g.deck[b]
    for j in range(r.total_cards):
        deck[j] = deck_ranks[order[j]]
    if r.track_cards:
        cards = g.deck_codes[b]
        for j in range(r.total_cards):
            cards[j] = deck_codes[order[j]]
    g.deck_len[b] = r.total_cards
    g.table_len[b] = 0
    g.last_capturer[b] = NO_SEAT
    g.turn[b] = 0
    g.last_move[b, 0] = NO_SEAT
    if r.draw_from_deck:
        lay_table(r, g, b)
        draw(r, g, b, r.first_player)
    else:
        deal_hands(r, g, b)
        lay_table(r, g, b)
    g.current[b] = r.first_player


# ------------------------------------------------------------------ legal moves


@numba.njit(cache=True, nogil=True, inline="always")
def legal_moves(r: Rules, g: Game, b, out):
    """Mark every legal move of the seat to act in the move table ``out`` (all zero once the game is over).

    A card showing rank r may capture a table card of rank r (with ``take_all``
    a table joker also counts), capture a table joker (not with ``take_all``),
    or go on any pile whose top shows r (the own pile or a steal). It may be
    discarded only if it can capture nothing, unless ``must_capture`` is off.
    A joker may be named as any rank; a discarded joker is named nothing (its
    one discard move uses the first joker kind).
    """
    hands, table, tops, current = g.hands, g.table_cards, g.top, g.current
    for i in range(out.shape[0]):
        out[i] = 0
    mover = current[b]
    if mover < 0:
        return
    stride = r.move_stride
    has_joker = hands[b, mover, JOKER_SLOT] > 0
    table_jokers = table[b, JOKER_SLOT] > 0
    piles_showing = 0
    seat = mover
    for offset in range(r.num_players):
        top = tops[b, seat]
        if top >= 0:
            piles_showing |= 1 << top
            if hands[b, mover, top] > 0:
                out[index_of(top, TARGET_PILE_OFFSET + offset, stride)] = 1
            if has_joker:
                out[index_of(JOKER_KIND_OFFSET + top, TARGET_PILE_OFFSET + offset, stride)] = 1
        seat += 1
        if seat == r.num_players:
            seat = 0
    joker_on_table = table_jokers and not r.take_all
    joker_can_capture = False
    for rank in range(NUM_RANKS):
        on_table = table[b, rank] > 0 or (r.take_all and table_jokers)
        can_capture = on_table or joker_on_table or ((piles_showing >> rank) & 1) != 0
        if hands[b, mover, rank] > 0:
            if on_table:
                out[index_of(rank, TARGET_TABLE, stride)] = 1
            if joker_on_table:
                out[index_of(rank, TARGET_TABLE_JOKER, stride)] = 1
            if not can_capture or not r.must_capture:
                out[index_of(rank, TARGET_DISCARD, stride)] = 1
        if has_joker:
            if on_table:
                out[index_of(JOKER_KIND_OFFSET + rank, TARGET_TABLE, stride)] = 1
            if joker_on_table:
                out[index_of(JOKER_KIND_OFFSET + rank, TARGET_TABLE_JOKER, stride)] = 1
            if can_capture:
                joker_can_capture = True
    if has_joker and (not joker_can_capture or not r.must_capture):
        out[index_of(JOKER_KIND_OFFSET, TARGET_DISCARD, stride)] = 1


# ------------------------------------------------------------------ playing a move


@numba.njit(cache=True, nogil=True, inline="always")
def shown_rank(kind):
    """Rank a played kind shows: a natural card's own rank or a joker's named rank."""
    return kind - JOKER_KIND_OFFSET if kind >= JOKER_KIND_OFFSET else kind


@numba.njit(cache=True, nogil=True, inline="always")
def hand_slot(kind):
    """The rank slot of the card a move of ``kind`` takes from the hand: its rank, or the joker slot."""
    return JOKER_SLOT if kind >= JOKER_KIND_OFFSET else kind


@numba.njit(cache=True, nogil=True, inline="always")
def pile_seat(r: Rules, mover, target):
    """Absolute seat whose pile a pile target of ``mover`` points at."""
    seat = mover + target - TARGET_PILE_OFFSET
    return seat - r.num_players if seat >= r.num_players else seat


@numba.njit(cache=True, nogil=True, inline="always")
def table_talk(r: Rules, g: Game, b, mover, kind, target):
    """Record what ``mover`` tells the table by playing (kind, target), before it is played.

    A natural rank is passed up when a card of it could be taken (it lies on the table, or another
    seat's pile shows it) and the move plays a card of another rank; a discarded joker shows no rank
    and so passes every takeable rank up. The card's rank slot is counted as played. Public facts.
    """
    table, tops, talk = g.table_cards[b], g.top[b], g.talk[b, mover]
    is_joker = kind >= JOKER_KIND_OFFSET
    shown = -1 if (is_joker and target == TARGET_DISCARD) else shown_rank(kind)
    for rank in range(NUM_RANKS):
        if rank == shown:
            continue
        takeable = table[rank] > 0
        seat = mover
        for _offset in range(r.num_players - 1):
            if takeable:
                break
            seat += 1
            if seat == r.num_players:
                seat = 0
            takeable = tops[seat] == rank
        if takeable:
            talk[rank] += 1
    talk[TALK_PLAYED + (JOKER_SLOT if is_joker else kind)] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def take_from_hand(r: Rules, g: Game, b, seat, slot):
    """Take a card of rank slot ``slot`` from ``seat``'s hand (the first such in hand); its code, or ``slot``."""
    g.hands[b, seat, slot] -= 1
    count = g.hand_count[b, seat] - 1
    g.hand_count[b, seat] = count
    if not r.track_cards:
        return slot
    cards = g.hand_codes[b, seat]
    i = 0
    while card_rank(cards[i]) != slot:
        i += 1
    card = cards[i]
    for j in range(i, count):
        cards[j] = cards[j + 1]
    return card


@numba.njit(cache=True, nogil=True, inline="always")
def add_to_pile(r: Rules, g: Game, b, seat, card):
    if r.track_cards:
        g.pile_codes[b, seat, g.pile[b, seat]] = card
    g.pile[b, seat] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def discard(r: Rules, g: Game, b, slot, card):
    """Leave the card face up on the table."""
    g.table_cards[b, slot] += 1
    if r.track_cards:
        g.table_codes[b, g.table_len[b]] = card
    g.table_len[b] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def cards_captured(take_all, target, rank_on_table, jokers_on_table, target_pile):
    """How many cards a move brings onto the mover's pile besides the played card.

    A table capture takes one card of the played rank (``rank_on_table`` of them lie there; with
    ``take_all`` it takes all of them and the ``jokers_on_table`` too); capturing a table joker takes
    it; a steal takes the whole pile it is played on (``target_pile`` cards: `steal` moves that pile);
    the own pile and a discard take nothing. `capture` and the players' move values count with it.
    """
    if target == TARGET_TABLE:
        return rank_on_table + jokers_on_table if take_all else 1
    if target == TARGET_TABLE_JOKER:
        return 1
    if target > TARGET_PILE_OFFSET:
        return target_pile
    return 0


@numba.njit(cache=True, nogil=True)
def cards_captured_each(take_all, targets, rank_on_table, jokers_on_table, target_piles):
    """int64[K]: `cards_captured` of K moves at once (the players' move values ask it of every legal move)."""
    out = np.empty(targets.shape[0], np.int64)
    for k in range(targets.shape[0]):
        out[k] = cards_captured(take_all, targets[k], rank_on_table[k], jokers_on_table[k], target_piles[k])
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def take_from_table(r: Rules, g: Game, b, seat, rank, count):
    """Move the first ``count`` table cards of ``rank`` (in table order) onto ``seat``'s pile."""
    g.table_cards[b, rank] -= count
    if r.track_cards:
        cards = g.table_codes[b]
        kept = 0
        for i in range(g.table_len[b]):
            if count > 0 and card_rank(cards[i]) == rank:
                add_to_pile(r, g, b, seat, cards[i])
                count -= 1
            else:
                cards[kept] = cards[i]
                kept += 1
        g.table_len[b] = kept
    else:
        g.pile[b, seat] += count
        g.table_len[b] -= count


@numba.njit(cache=True, nogil=True, inline="always")
def take_all_from_table(r: Rules, g: Game, b, seat, rank, taken):
    """``take_all``: move every table card of ``rank`` and every table joker (``taken`` cards), in table
    order, onto the pile."""
    g.table_cards[b, rank] = 0
    g.table_cards[b, JOKER_SLOT] = 0
    if r.track_cards:
        cards = g.table_codes[b]
        kept = 0
        for i in range(g.table_len[b]):
            card_slot = card_rank(cards[i])
            if card_slot == rank or card_slot == JOKER_SLOT:
                add_to_pile(r, g, b, seat, cards[i])
            else:
                cards[kept] = cards[i]
                kept += 1
        g.table_len[b] = kept
    else:
        g.pile[b, seat] += taken
        g.table_len[b] -= taken


@numba.njit(cache=True, nogil=True, inline="always")
def capture(r: Rules, g: Game, b, mover, target, rank):
    """Capture from the table with a card showing ``rank``: a card of that rank (with ``take_all``, all of
    them and every table joker), or a table joker (`TARGET_TABLE_JOKER`). The played card goes on top."""
    count = cards_captured(r.take_all, target, g.table_cards[b, rank], g.table_cards[b, JOKER_SLOT], 0)
    if target == TARGET_TABLE_JOKER:
        take_from_table(r, g, b, mover, JOKER_SLOT, count)
    elif r.take_all:
        take_all_from_table(r, g, b, mover, rank, count)
    else:
        take_from_table(r, g, b, mover, rank, count)
    g.last_capturer[b] = mover


@numba.njit(cache=True, nogil=True, inline="always")
def steal(r: Rules, g: Game, b, mover, victim):
    """Take the whole pile of ``victim`` (whose top shows the played rank) under the played card."""
    if r.track_cards:
        for i in range(g.pile[b, victim]):
            add_to_pile(r, g, b, mover, g.pile_codes[b, victim, i])
    else:
        g.pile[b, mover] += g.pile[b, victim]
    g.pile[b, victim] = 0
    g.top[b, victim] = EMPTY_PILE
    g.last_capturer[b] = mover


@numba.njit(cache=True, nogil=True, inline="always")
def play_move(r: Rules, g: Game, b, kind, target):
    """The seat to act plays the (legal) move (kind, target); then the turn passes. True if the game ended.

    The card leaves the hand (a natural card: the first of its rank in hand; a joker shows the rank it
    is named as) and becomes public. It is discarded, captures from the table, lands on the own pile, or
    steals the pile it is played on; in every case but a discard it becomes the top of the mover's pile.
    """
    mover = g.current[b]
    rank = shown_rank(kind)
    slot = hand_slot(kind)
    table_talk(r, g, b, mover, kind, target)
    card = take_from_hand(r, g, b, mover, slot)
    g.seen[b, slot] += 1
    if target == TARGET_DISCARD:
        discard(r, g, b, slot, card)
    else:
        if target == TARGET_TABLE or target == TARGET_TABLE_JOKER:
            capture(r, g, b, mover, target, rank)
        else:
            victim = pile_seat(r, mover, target)
            if victim != mover:
                steal(r, g, b, mover, victim)
        add_to_pile(r, g, b, mover, card)
        g.top[b, mover] = rank
    g.turn[b] += 1
    g.last_move[b, 0] = mover
    g.last_move[b, 1] = kind
    g.last_move[b, 2] = target
    g.last_move[b, 3] = card
    return advance(r, g, b, mover)


# ------------------------------------------------------------------ passing the turn, the end


@numba.njit(cache=True, nogil=True, inline="always")
def advance(r: Rules, g: Game, b, mover):
    """Pass the turn to the left, dealing again or ending the game as the rules say; True if it ended.

    With ``draw_from_deck`` the next seat flips the deck's top card while there is one. Otherwise the
    next seat to the left with cards plays; when every hand is empty and the deck is not, new hands
    are dealt and the first player (always dealt the first card) plays.
    """
    n = r.num_players
    if r.draw_from_deck:
        if g.deck_len[b] > 0:
            nxt = mover + 1 if mover + 1 < n else 0
            g.current[b] = nxt
            draw(r, g, b, nxt)
            return False
    else:
        seat, hand_count = mover, g.hand_count[b]
        for _offset in range(n):
            seat += 1
            if seat == n:
                seat = 0
            if hand_count[seat] > 0:
                g.current[b] = seat
                return False
        if g.deck_len[b] > 0:
            deal_hands(r, g, b)
            g.current[b] = r.first_player
            return False
    finish(r, g, b)
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def finish(r: Rules, g: Game, b):
    """End the game; with ``leftovers_to_last_capturer`` the table goes under that seat's pile.

    If that pile is empty, the leftovers form it with the highest natural rank
    on top (a pile of leftover jokers only shows ace: a joker shows its name).
    """
    g.current[b] = NO_SEAT
    seat = g.last_capturer[b]
    left = g.table_len[b]
    if not r.leftovers_to_last_capturer or seat < 0 or left == 0:
        return
    highest, table = -1, g.table_cards[b]
    for rank in range(RANK_SLOTS):
        if table[rank] > 0 and rank < NUM_RANKS:
            highest = rank
        table[rank] = 0
    if g.top[b, seat] < 0:
        g.top[b, seat] = highest if highest >= 0 else 0
    if r.track_cards:
        size = g.pile[b, seat]
        pile = g.pile_codes[b, seat]
        for i in range(size - 1, -1, -1):  # the leftovers go under the pile
            pile[i + left] = pile[i]
        cards = g.table_codes[b]
        placed = 0
        for k in range(RANK_SLOTS):  # jokers first, then by rank, each in table order
            slot = JOKER_SLOT if k == 0 else k - 1
            for i in range(left):
                if card_rank(cards[i]) == slot:
                    pile[placed] = cards[i]
                    placed += 1
    g.pile[b, seat] += left
    g.table_len[b] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def write_rewards(r: Rules, g: Game, b, out):
    """Each seat's final reward (`rouba_env.rules.scoring.write_final_rewards`) of slot ``b`` into ``out``."""
    final_rewards(r.reward_mode, g.pile[b], r.total_cards, out)
