"""Batched engine: ``B`` independent games stepped together, for fast self-play.

`VectorGame` plays the same rules as `rouba_env.rules.engine` (the reference) on
per-rank count arrays: suits never matter to the rules, so a slot keeps only
rank counts of every hand, the table and the seen cards, each pile's size and
top, and its deck as an array of ranks with a length (top card last). Every
step writes the observation and the action mask of the seat to act into
preallocated buffers; they are bit-identical to `ObservationEncoder.encode`
and `ActionEncoding.mask` on the equivalent reference state.

Deal seeds: game ``k`` (0, 1, 2, ... counted per slot, every game started by
`VectorGame.reset` or by an auto-reset counts) in slot ``i`` of a
``VectorGame`` with base ``seed`` is ``engine.start_game(config, s)`` with
``s = slot_deal_seed(seed, i, k)``; `VectorGame.deal_seeds` holds the seed of
the game currently in each slot.

Every call runs one compiled loop over the slots (`rouba_env.batched.kernels`,
compiled by numba on first use and cached on disk).

Finished games (only without auto-reset, e.g. after `VectorGame.from_states`):
``current`` is -1, the mask is all zero, ``obs`` is seat 0's view of the final
position (``to_act`` all zero), and the slot's action is ignored.
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Callable

import numpy as np

import rouba_env.batched.kernels as kernels
from rouba_env.compiled import TABLES, ensure_compiled
from rouba_env.checks import check_flag, check_int, is_int
from rouba_env.encoding.actions import ActionEncoding, resolve_max_players
from rouba_env.encoding.masks import sample_legal
from rouba_env.encoding.observation import ObservationEncoder, observation_params
from rouba_env.rules import engine
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.buffers import STATE_FIELDS, GameArrays, deck_arrays
from rouba_env.rules.engine import GameState, load_slot, read_state
from rouba_env.rules.scoring import ENVIRONMENT_REWARD, check_reward_mode
from rouba_env.rules.seeding import shuffle_order, slot_deal_seed


MAX_GAMES = 1 << 20
"""Most game slots one batched game (or table, or vector env) holds: about a kilobyte of state each."""


SHOWN_VALUES = 5
"""How many of a refused list's values an error names."""


def shown_values(values) -> str:
    """A refused list of indices or seeds as the caller gave it: its first values, as written."""
    try:
        items = list(values)
    except TypeError:
        return repr(values)
    more = f", ... ({len(items)} in all)" if len(items) > SHOWN_VALUES else ""
    return "[" + ", ".join(repr(item) for item in items[:SHOWN_VALUES]) + more + "]"


class VectorGame:
    """``batch_size`` games of one rules config, stepped together.

    Args:
        config: the rules (a `RulesConfig`).
        batch_size: number of game slots ``B``.
        seed: base seed of the deals (see `slot_deal_seed`), an int in 0..2**63 - 1 (as every seed a user gives).
        max_players: pad observations and actions to this many seats (as the encoders do).
        auto_reset: a slot whose game ended starts its next game in the same step.
        reward: ``"outcome"`` (+1 sole winner, 0 tied top, -1 others), ``"margin"`` or
            ``"lead"`` (`rouba_env.rules.scoring`).
        track_cards: also keep every card's code (suits), so that `position` can show the cards;
            the rules never need them.

    Call `reset` before the first `step`. Buffers ``obs``, ``mask``, ``current``,
    ``rewards``, ``done``, ``final_scores`` and ``deal_seeds`` are refreshed in
    place; copy them to keep them.
    """

    def __init__(
        self,
        config: RulesConfig,
        batch_size: int,
        *,
        seed: int = 0,
        max_players: int | None = None,
        auto_reset: bool = True,
        reward: str = ENVIRONMENT_REWARD,
        track_cards: bool = False,
    ):
        if not isinstance(config, RulesConfig):
            raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
        self.batch_size = check_int("batch_size", batch_size, 1, MAX_GAMES)
        self.seed = check_int("seed", seed, 0, engine.DEAL_SEED_BOUND - 1)
        check_flag("auto_reset", auto_reset)
        check_flag("track_cards", track_cards)
        check_reward_mode(reward)
        self.config = config
        self.max_players = resolve_max_players(config, max_players)
        self.auto_reset = bool(auto_reset)
        self.reward_mode = reward

        ensure_compiled(TABLES)
        encoder = ObservationEncoder(config, self.max_players)
        actions = ActionEncoding(config, self.max_players)
        self.obs_size = encoder.size
        self.hidden_size = encoder.hidden_size
        self.num_actions = actions.size
        self.num_players = n = config.num_players
        self.num_targets = actions.num_targets
        self.total_cards = config.total_cards
        self.track_cards = bool(track_cards)
        B = self.batch_size
        self.arrays = GameArrays(config, B, move_stride=actions.num_targets, reward=reward, auto_reset=self.auto_reset,
                                 track_cards=self.track_cards,
                                 extra_params=observation_params(self.max_players))
        """The slots' state as the rules core keeps it (`rouba_env.rules.core`)."""
        self._deck_ranks, self._deck_codes = deck_arrays(config)
        self._games = np.zeros(B, dtype=np.uint64)  # games started so far in each slot
        self._ended = np.zeros(B, dtype=np.int64)
        self._actions = np.zeros(B, dtype=np.int64)
        self._slots = np.arange(B, dtype=np.int64)
        # Outputs.
        self.obs = np.zeros((B, self.obs_size), dtype=np.float32)
        self.mask = np.zeros((B, self.num_actions), dtype=np.int8)
        self.current = self.arrays.current
        self.rewards = np.zeros((B, n), dtype=np.float64)
        self.done = np.zeros(B, dtype=bool)
        self.final_scores = np.zeros((B, n), dtype=np.int64)
        self.deal_seeds = np.zeros(B, dtype=np.uint64)
        self._started = False

    # ------------------------------------------------------------------ API

    @property
    def started(self) -> bool:
        """Whether the slots hold games (after `reset`, `deal`, or made as copies of other slots)."""
        return self._started

    def reset(self, seed: int | None = None) -> None:
        """Start a new game in every slot (the next game ``k`` of each slot).

        With ``seed``, the base seed is replaced and the game counters restart
        at 0, so ``reset(seed=s)`` replays the deals of ``VectorGame(..., seed=s)``.
        """
        if seed is not None:
            self.seed = check_int("seed", seed, 0, engine.DEAL_SEED_BOUND - 1)
            self._games[:] = 0
        self.rewards[:] = 0.0
        self.done[:] = False
        self.final_scores[:] = 0
        self._start_games(self._slots)
        self._started = True

    def step(self, actions) -> None:
        """Play one action per slot (indices of `ActionEncoding`); refreshes the buffers."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        acts = self._as_actions(actions)
        bad = self._first_illegal(acts)
        if bad >= 0:
            legal = np.flatnonzero(self.mask[bad]).tolist()
            raise ValueError(
                f"illegal action {int(acts[bad])} in slot {bad} (seat {int(self.current[bad])} to act); "
                f"legal actions: {legal}"
            )
        self._play_legal(self._slots, acts)  # every slot: a finished game's action is ignored

    def step_slots(self, slots, actions) -> np.ndarray:
        """Play ``actions[i]`` in slot ``slots[i]`` only; every other slot is left as it is.

        Each listed slot must hold a live game and the action must be legal
        (ValueError otherwise, before anything is played). ``done`` and
        ``rewards`` are refreshed for the listed slots only. Returns the slots
        whose game ended (with auto-reset, already dealt their next game).
        """
        if not self._started:
            raise RuntimeError("call reset() before step_slots()")
        slots, acts = self.as_slots(slots), np.asarray(actions)
        if acts.shape != slots.shape or (acts.size and acts.dtype.kind not in "iu"):
            raise ValueError(f"actions must be {len(slots)} integers (one per slot), got shape {acts.shape}")
        acts = np.ascontiguousarray(acts, dtype=np.int64)  # one compiled signature of the loops
        bad = self.illegal_rows(slots, acts)
        if len(bad):
            i = int(bad[0])
            raise ValueError(f"illegal action {int(acts[i])} in slot {int(slots[i])} (seat {int(self.current[slots[i]])} "
                             f"to act); legal actions: {np.flatnonzero(self.mask[slots[i]]).tolist()}")
        return self._play_legal(slots, acts)

    def illegal_rows(self, slots: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Indices ``i`` (into ``slots``) whose action is not legal now: out of range, masked, or the game is over.
        ``slots`` must be int64 slots of this game (a ValueError otherwise), ``actions`` int64."""
        if len(slots) and (slots.min() < 0 or slots.max() >= self.batch_size):
            raise ValueError(f"slots must be in 0..{self.batch_size - 1}, got {slots.min()}..{slots.max()}")
        bad = np.empty(len(slots), dtype=np.int64)
        return bad[: kernels.illegal_rows(slots, actions, self.mask, self.current, bad)]

    def play_checked(self, slots: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Play ``actions[i]`` in slot ``slots[i]`` (int64 arrays), each legal there: a ValueError names the
        first slot out of range or action that is not legal, before anything is played. The slots whose game
        ended, as `play` answers them; for a caller that has checked the actions already (one compiled pass
        confirms it)."""
        try:
            slots, actions = (np.ascontiguousarray(slots, dtype=np.int64),
                              np.ascontiguousarray(actions, dtype=np.int64))
        except (OverflowError, TypeError, ValueError):
            raise ValueError("slots and actions must be arrays of integers within int64") from None
        if slots.shape != actions.shape or slots.ndim != 1:
            raise ValueError(f"slots and actions must be two 1-D arrays of one length, got shapes {slots.shape} "
                             f"and {actions.shape}")
        bad = self.illegal_rows(slots, actions)
        if len(bad):
            i = int(bad[0])
            raise ValueError(f"action {int(actions[i])} is not legal in slot {int(slots[i])}")
        return self._play_legal(slots, actions)

    def _play_legal(self, slots: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """`step_slots` on slots and actions this game has checked (int64, in range, legal)."""
        arrays = self.arrays
        n_ended = kernels.step_slots(arrays.params, arrays.buffer, self.current, slots, actions, self.obs, self.mask,
                                     self.rewards, self.done, self.final_scores, self._ended)
        ended = self._ended[:n_ended].copy()
        if n_ended and self.auto_reset:
            self._start_games(ended)
        return ended

    def deal(self, slots, deal_seeds) -> None:
        """Start the game of ``deal_seeds[i]`` (`engine.start_game`'s deal) in slot ``slots[i]``.

        For callers that choose every deal themselves (the batched table); ``deal_seeds`` records them.
        """
        slots = self.as_slots(slots)
        seeds = np.asarray(deal_seeds)
        if seeds.shape != slots.shape or (seeds.size and seeds.dtype.kind not in "iu"):
            raise ValueError(f"deal_seeds must be {len(slots)} integers in [0, 2**63) (one per slot), got "
                             f"{shown_values(deal_seeds)}")
        if seeds.size and (seeds.min() < 0 or seeds.max() >= engine.DEAL_SEED_BOUND):
            raise ValueError(f"deal seeds must be in [0, 2**63), got {seeds.min()}..{seeds.max()}")
        seeds = seeds.astype(np.uint64)
        self.deal_seeds[slots] = seeds
        self.done[slots] = False
        self.rewards[slots] = 0.0
        self._deal(slots, seeds)
        self._started = True

    def deal_decks(self, slots, decks) -> None:
        """Start the game of each deck ``decks[i]`` (card codes, bottom first, as `engine.deal_from_deck`
        takes them) in slot ``slots[i]``: for callers that choose the deck's order card by card (the game
        tree, OpenSpiel's chance nodes). ``deal_seeds`` are 0 there."""
        slots = self.as_slots(slots)
        decks = [list(deck) for deck in decks]
        if len(decks) != len(slots):
            raise ValueError(f"{len(slots)} slots but {len(decks)} decks")
        unshuffled = self.config.unshuffled_deck()
        positions: dict[int, list[int]] = {}
        for index, card in enumerate(unshuffled):
            positions.setdefault(card, []).append(index)
        orders = np.empty((len(decks), self.total_cards), dtype=np.int64)
        for row, deck in enumerate(decks):
            if sorted(deck) != sorted(unshuffled):
                raise ValueError(f"decks[{row}] is not an order of these rules' {self.total_cards} cards")
            taken: dict[int, int] = {}
            for j, card in enumerate(deck):
                orders[row, j] = positions[card][taken.get(card, 0)]
                taken[card] = taken.get(card, 0) + 1
        self.deal_seeds[slots] = 0
        self.done[slots] = False
        self.rewards[slots] = 0.0
        arrays = self.arrays
        kernels.deal_games(arrays.params, arrays.buffer, self.current, slots, orders, self._deck_ranks,
                           self._deck_codes, self.obs, self.mask)
        self._started = True

    def children(self, parents: np.ndarray, actions: np.ndarray, *, reward: str | None = None) -> "VectorGame":
        """A new game (``auto_reset=False``) whose slot ``i`` is slot ``parents[i]`` after ``actions[i]``
        (legal there): one layer of a game tree expanded in one call. ``reward``: the reward mode its games end
        with (default: this game's)."""
        # Contiguous int64 as every caller passes them (np.nonzero's columns are strided views): one compiled
        # signature of each loop, not a second compilation.
        parents = np.ascontiguousarray(parents, dtype=np.int64)
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        child = VectorGame(self.config, max(len(parents), 1), max_players=self.max_players, auto_reset=False,
                           reward=self.reward_mode if reward is None else reward, track_cards=self.track_cards)
        source, target = self.arrays, child.arrays
        for name in STATE_FIELDS:
            getattr(target, name)[: len(parents)] = getattr(source, name)[parents]
        child.current[: len(parents)] = self.current[parents]
        child._started = True
        slots = np.arange(len(parents), dtype=np.int64)
        child.mask[: len(parents)] = self.mask[parents]
        bad = child.illegal_rows(slots, actions)
        if len(bad):
            i = int(bad[0])
            raise ValueError(f"action {int(actions[i])} is not legal in slot {int(parents[i])}")
        child._play_legal(slots, actions)
        return child

    def copies(self, slots, *, track_cards: bool | None = None) -> "VectorGame":
        """A new game (``auto_reset=False``) whose slot ``i`` is a copy of slot ``slots[i]`` as it stands (a slot
        may be copied more than once): a position kept to look at again, or the root of a search's worlds.
        ``track_cards`` False copies a game that names its cards without their names (its rank slots only)."""
        if not self._started:
            raise RuntimeError("call reset() (or deal()) before copying slots")
        slots = self.as_slots(slots, repeats=True)
        tracked = self.track_cards if track_cards is None else bool(track_cards)
        if tracked and not self.track_cards:
            raise ValueError("a game that keeps no card names cannot be copied with them (track_cards=True)")
        copy = VectorGame(self.config, max(len(slots), 1), max_players=self.max_players, auto_reset=False,
                          reward=self.reward_mode, track_cards=tracked)
        for name in STATE_FIELDS:
            target = getattr(copy.arrays, name)
            if target.size:  # a card-name field is empty in a copy without them
                target[: len(slots)] = getattr(self.arrays, name)[slots]
        copy.current[: len(slots)] = self.current[slots]
        copy.obs[: len(slots)], copy.mask[: len(slots)] = self.obs[slots], self.mask[slots]
        copy._started = True
        return copy

    def hidden_cards(self, slots, observers) -> np.ndarray:
        """int64[K, 14]: the rank slots that seat ``observers[i]`` (or one seat for every row) cannot see in slot
        ``slots[i]``, counted: every other seat's hand and the deck (a pile shows only its size and top to
        everyone, and the rules keep no more of it)."""
        slots, seats = self._rows_and_observers(slots, observers)
        arrays = self.arrays
        counts = arrays.hands[slots].astype(np.int64).sum(axis=1) - arrays.hands[slots, seats].astype(np.int64)
        deck = arrays.deck[slots].astype(np.int64)
        in_deck = np.arange(deck.shape[1])[None, :] < arrays.deck_len[slots][:, None]
        width = counts.shape[1]
        flat = (np.arange(len(slots))[:, None] * width + deck)[in_deck]
        return counts + np.bincount(flat, minlength=len(slots) * width).reshape(len(slots), width)

    def with_hidden(self, slots, observers, hidden: np.ndarray) -> "VectorGame":
        """A new game whose slot ``i`` is slot ``slots[i]`` with the cards seat ``observers[i]`` (or one seat for
        every row) cannot see dealt anew: ``hidden[i]`` lists rank slots, the hand of each other seat in turn
        from the observer's left, then the deck from its bottom to its top, and must hold the same cards as the
        slot's own hidden ones (`hidden_cards`; a row longer than that ends in -1s). A world a searching player
        or a local best response imagines, every public fact kept; ``obs`` and ``mask`` are those of the new
        positions. A game that names its cards (``track_cards``) gives worlds without their names.
        """
        slots, seats = self._rows_and_observers(slots, observers)
        hidden = np.asarray(hidden)
        if hidden.ndim != 2 or hidden.shape[0] != len(slots) or (hidden.size and hidden.dtype.kind not in "iu"):
            raise ValueError(f"hidden must be integer rank slots of shape ({len(slots)}, cards), got shape "
                             f"{hidden.shape} and dtype {hidden.dtype}")
        expected = self.hidden_cards(slots, seats)
        lengths = expected.sum(axis=1)
        columns = np.arange(hidden.shape[1])
        inside = columns[None, :] < lengths[:, None]
        if (lengths > hidden.shape[1]).any() or (hidden[~inside] != -1).any():
            raise ValueError(f"each row of hidden holds its slot's {lengths.tolist()[:10]} hidden cards, then -1s")
        if hidden.size and ((hidden[inside] < 0) | (hidden[inside] >= expected.shape[1])).any():
            raise ValueError(f"hidden holds rank slots 0..{expected.shape[1] - 1}")
        given = np.zeros_like(expected)
        rows = np.broadcast_to(np.arange(len(slots))[:, None], hidden.shape)
        np.add.at(given, (rows[inside], hidden[inside]), 1)
        if (given != expected).any():
            row = int(np.flatnonzero((given != expected).any(axis=1))[0])
            raise ValueError(f"hidden[{row}] holds other cards than the ones seat {int(seats[row])} cannot see in "
                             f"slot {int(slots[row])}")
        world = self.copies(slots, track_cards=False)  # a world's hidden cards are rank slots, named by none
        arrays, n, k = world.arrays, self.num_players, len(slots)
        others = (seats[:, None] + np.arange(1, n)[None, :]) % n  # [K, n-1]: the other seats from the left
        sizes = arrays.hand_count[np.arange(k)[:, None], others].astype(np.int64)
        ends = np.cumsum(sizes, axis=1)  # where each other hand's cards end in a row
        part = (columns[None, :, None] >= ends[:, None, :]).sum(axis=2)  # [K, L]: 0..n-2 a hand, n-1 the deck
        in_hand = inside & (part < n - 1)
        hands = np.zeros((k, n - 1, expected.shape[1]), dtype=np.int64)
        np.add.at(hands, (rows[in_hand], part[in_hand], hidden[in_hand]), 1)
        arrays.hands[np.arange(k)[:, None], others] = hands
        in_deck = inside & (part == n - 1)
        arrays.deck[rows[in_deck], (columns[None, :] - ends[:, -1:])[in_deck]] = hidden[in_deck]
        world._refresh_all()
        return world

    def _rows_and_observers(self, slots, observers) -> tuple[np.ndarray, np.ndarray]:
        """(slots, seats) for reading what seats cannot see: ``observers`` one seat for every row, or one a row."""
        slots = np.atleast_1d(np.asarray(slots))
        observers = np.asarray(observers)
        if observers.ndim == 0:
            observers = np.full(slots.shape, observers)
        return self._as_slots_and_seats(slots, observers)

    def _as_slots_and_seats(self, slots, seats) -> tuple[np.ndarray, np.ndarray]:
        """(slots, seats) as int64 arrays after checking them: one seat in 0..n-1 for each slot.

        For reading positions only, so a slot may come more than once (seen from several seats).
        """
        if not self._started:
            raise RuntimeError("call reset() (or deal()) before reading positions")
        slots = self.as_slots(slots, repeats=True)
        seats = np.asarray(seats)
        if seats.shape != slots.shape or (seats.size and seats.dtype.kind not in "iu"):
            raise ValueError(f"seats must be {len(slots)} integer seats (one per slot), got shape {seats.shape}")
        seats = np.ascontiguousarray(seats, dtype=np.int64)
        if seats.size and (seats.min() < 0 or seats.max() >= self.num_players):
            raise ValueError(f"seats must be in 0..{self.num_players - 1}")
        return slots, seats

    def as_slots(self, slots, repeats: bool = False) -> np.ndarray:
        """``slots`` as an int64 array after checking them (each in range; none twice unless ``repeats``)."""
        given = slots
        slots = np.asarray(slots)
        if slots.ndim != 1 or (slots.size and slots.dtype.kind not in "iu"):
            raise ValueError(f"slots must be a 1-d array of slot indices in 0..{self.batch_size - 1}, got "
                             f"{shown_values(given)}")
        slots = np.ascontiguousarray(slots, dtype=np.int64)  # one compiled signature of the loops
        if slots.size and (slots.min() < 0 or slots.max() >= self.batch_size):
            outside = slots[(slots < 0) | (slots >= self.batch_size)]
            raise ValueError(f"slots must be in 0..{self.batch_size - 1}, got {int(outside[0])}")
        # Increasing slots (what np.flatnonzero gives) cannot repeat; otherwise count them.
        if not repeats and slots.size > 1 and not (slots[1:] > slots[:-1]).all() and np.bincount(slots).max() > 1:
            raise ValueError("slots must not repeat")
        return slots

    def observe(self, seat_view, out: np.ndarray | None = None) -> np.ndarray:
        """float32[B, D]: the observation of absolute seat ``seat_view[b]`` in each slot (same encoding as ``obs``)."""
        if not self._started:
            raise RuntimeError("call reset() before observe()")
        seats = np.asarray(seat_view)
        if seats.ndim == 0:
            seats = np.full(self.batch_size, seats)
        if seats.shape != (self.batch_size,) or seats.dtype.kind not in "iu":
            raise ValueError(f"seat_view must be {self.batch_size} integer seats, got shape {seats.shape}")
        seats = seats.astype(np.int64)
        if seats.size and (seats.min() < 0 or seats.max() >= self.num_players):
            raise ValueError(f"seats must be in 0..{self.num_players - 1}")
        if out is None:
            out = np.empty((self.batch_size, self.obs_size), dtype=np.float32)
        elif out.shape != (self.batch_size, self.obs_size) or out.dtype != np.float32:
            raise ValueError(f"out must be float32[{self.batch_size}, {self.obs_size}]")
        kernels.observe_slot_seats(self.arrays.params, self.arrays.buffer, self.current, self._slots, seats, out)
        return out

    def observe_slots(self, slots, seats) -> np.ndarray:
        """float32[K, D]: row ``i`` is slot ``slots[i]`` seen from absolute seat ``seats[i]`` (as `observe`)."""
        slots, seats = self._as_slots_and_seats(slots, seats)
        out = np.empty((len(slots), self.obs_size), dtype=np.float32)
        kernels.observe_slot_seats(self.arrays.params, self.arrays.buffer, self.current, slots, seats, out)
        return out

    def hidden(self, slots, seats) -> np.ndarray:
        """float32[K, H]: what seat ``seats[i]`` of slot ``slots[i]`` cannot see (a privileged critic's input).

        The same vector as `ObservationEncoder.hidden` of the equivalent reference state.
        """
        slots, seats = self._as_slots_and_seats(slots, seats)
        out = np.empty((len(slots), self.hidden_size), dtype=np.float32)
        kernels.hidden_of_slots(self.arrays.params, self.arrays.buffer, self.current, slots, seats, out)
        return out

    def random_actions(self, rng: np.random.Generator, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per slot (0 where none is legal), chosen in one batched pass."""
        if out is None:
            out = np.empty(self.batch_size, dtype=np.int64)
        u = rng.random(self.batch_size)
        sample_legal(self.mask, u, out)
        return out

    def scores(self) -> np.ndarray:
        """int64[B, n]: cards in each seat's pile now (the final scores once a game is over)."""
        if not self._started:
            raise RuntimeError("call reset() (or deal()) before scores()")
        return self.arrays.pile.astype(np.int64)

    @property
    def turns(self) -> np.ndarray:
        """int64[B]: moves played so far in each slot's current game."""
        return self.arrays.turn.astype(np.int64)

    @classmethod
    def from_states(
        cls,
        config: RulesConfig,
        states: list[GameState],
        *,
        max_players: int | None = None,
        reward: str = ENVIRONMENT_REWARD,
        track_cards: bool = False,
    ) -> "VectorGame":
        """A VectorGame (``auto_reset=False``) holding copies of reference-engine states, one per slot.

        Finished states stay finished: their mask is all zero, their action is
        ignored, and ``done`` is only True on the step that ends a game.
        ``deal_seeds`` are 0 (a state does not know its seed).
        """
        states = list(states)
        if not states:
            raise ValueError("from_states needs at least one state")
        game = cls(config, len(states), max_players=max_players, auto_reset=False, reward=reward,
                   track_cards=track_cards)
        n = config.num_players
        decks = Counter(config.unshuffled_deck())
        for b, state in enumerate(states):
            if not isinstance(state, GameState):
                raise ValueError(f"states[{b}] is a {type(state).__name__}, not a GameState")
            if state.config != config:
                raise ValueError(f"states[{b}] was played under other rules: {state.config} != {config}")
            cards = Counter([*state.deck, *state.table_cards, *(c for hand in state.hands for c in hand),
                             *(c for pile in state.piles for c in pile)])
            extra = cards - decks
            if len(state.hands) != n or extra:
                raise ValueError(f"states[{b}] holds {cards.total()} cards in {len(state.hands)} hands, "
                                 f"{extra.total()} of them more than the decks have; the rules have "
                                 f"{game.total_cards} cards and {n} seats")
            game._load(b, state)
        game._refresh_all()
        game._started = True
        return game

    def position(self, slot: int) -> GameState:
        """The game in ``slot`` as a `GameState` with every card named (needs ``track_cards``).

        A copy for views (renderers, the browser, replays): changing it changes nothing here.
        """
        if not self.track_cards:
            raise ValueError("position() names the cards: make the VectorGame with track_cards=True")
        if not self._started:
            raise RuntimeError("call reset() (or deal()) before position()")
        b = check_int("slot", slot, 0, self.batch_size - 1)
        return read_state(self.config, self.arrays.views(self.arrays.buffer), self.current, b)

    def observe_one(self, slot: int, seat: int) -> np.ndarray:
        """float32[D]: slot ``slot`` seen from absolute seat ``seat``."""
        if not (type(slot) is int and type(seat) is int and 0 <= slot < self.batch_size  # the fast path: ints
                and 0 <= seat < self.num_players) and not (is_int(slot) and 0 <= slot < self.batch_size
                                                           and is_int(seat) and 0 <= seat < self.num_players):
            raise ValueError(f"observe_one takes a slot 0..{self.batch_size - 1} and a seat 0..{self.num_players - 1}, "
                             f"got slot {slot!r} and seat {seat!r}")
        out = np.empty(self.obs_size, dtype=np.float32)
        kernels.observe_one(self.arrays.params, self.arrays.buffer, self.current, slot, seat, out)
        return out

    def slot_player(self, slot: int) -> Callable[[int], int]:
        """A function that plays an action (an int) in ``slot`` if it is legal there now and shows the
        position after it (``obs``, ``mask``). It returns the seat to act next, -1 if the game ended, or
        `NOT_PLAYED` (the action is not legal now: nothing changed). It leaves ``rewards``,
        ``final_scores`` and ``done`` alone: a table of one game calls it every move."""
        a = self.arrays
        return partial(kernels.play_if_legal, a.params, a.buffer, self.current, slot, self.obs[slot], self.mask[slot])

    def slot_dealer(self, slot: int) -> Callable[[int], None]:
        """A function that starts the game of a deal seed (an int in [0, 2**63), not checked: the caller
        checks it) in ``slot`` and shows it, as `deal` does for one slot in one compiled call: a table of
        one game calls it every game."""
        a = self.arrays
        deal, params, buffer, current = kernels.deal_slot, a.params, a.buffer, self.current
        deck_ranks, deck_codes, obs, mask = self._deck_ranks, self._deck_codes, self.obs[slot], self.mask[slot]

        def deal_in_slot(deal_seed: int) -> None:
            self.deal_seeds[slot] = deal_seed
            self.done[slot] = False
            self.rewards[slot] = 0.0
            deal(params, buffer, current, slot, np.uint64(deal_seed), deck_ranks, deck_codes, obs, mask)
            self._started = True
        return deal_in_slot

    # ------------------------------------------------------------ internals

    def _load(self, b: int, state: GameState) -> None:
        """Write a reference state into slot ``b`` (its cards too with ``track_cards``)."""
        load_slot(self.arrays.params, self.arrays.buffer, self.arrays.current, b, state=state)

    def _as_actions(self, actions) -> np.ndarray:
        acts = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
        if acts.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {acts.shape}")
        if acts.dtype == np.int64 and acts.flags.c_contiguous and acts.flags.writeable:
            return acts  # a read-only array is copied below: to numba it is another type, another compilation
        if acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {acts.dtype}")
        if acts.dtype == np.uint64 and acts.size and acts.max() > np.iinfo(np.int64).max:
            raise ValueError("actions out of range")
        self._actions[:] = acts
        return self._actions

    def _first_illegal(self, acts: np.ndarray) -> int:
        return int(kernels.first_illegal(acts, self.mask, self.current))

    def _start_games(self, slots: np.ndarray) -> None:
        """Deal the next game of each slot in ``slots`` (batched shuffle) and write its obs and mask."""
        games = self._games[slots]
        seeds = slot_deal_seed(self.seed, slots, games)
        self._games[slots] = games + np.uint64(1)
        self.deal_seeds[slots] = seeds
        self._deal(slots, seeds)

    def _deal(self, slots: np.ndarray, seeds: np.ndarray) -> None:
        orders = shuffle_order(seeds, self.total_cards)
        arrays = self.arrays
        kernels.deal_games(arrays.params, arrays.buffer, self.current, np.ascontiguousarray(slots, dtype=np.int64),
                           orders, self._deck_ranks, self._deck_codes, self.obs, self.mask)

    def _refresh_all(self) -> None:
        kernels.refresh_all(self.arrays.params, self.arrays.buffer, self.current, self.obs, self.mask)
