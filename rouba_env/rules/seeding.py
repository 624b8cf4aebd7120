"""Deal seeds and the shuffle: every deck order is a pure function of a 63-bit seed.

The reference engine (`start_game`) and the batched engine both shuffle with
`shuffle_order`, so any batched game can be replayed on the reference engine
from its seed alone. One scheme derives deal seeds from a base seed
(`slot_deal_seed`): the batched engine's games and a duplicate evaluation's
numbered deals (`numbered_deal_seeds`) both use it.
"""

from __future__ import annotations

import numba
import numpy as np

from rouba_env.checks import is_int
from rouba_env.rules.config import RulesConfig

DEAL_SEED_BITS = 63
DEAL_SEED_BOUND = 1 << DEAL_SEED_BITS
"""Deal seeds are ints in ``[0, DEAL_SEED_BOUND)``."""
_MASK63 = np.uint64(DEAL_SEED_BOUND - 1)
_MASK64 = (1 << 64) - 1
_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(values: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser on a uint64 array: a fast, well-mixed, stateless hash."""
    z = np.atleast_1d(values).astype(np.uint64, copy=True)
    z += _GOLDEN_GAMMA
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def shuffle_order(deal_seeds: np.ndarray, num_cards: int) -> np.ndarray:
    """Row i: a permutation of ``range(num_cards)`` that depends only on ``deal_seeds[i]``.

    Position ``j`` gets the key ``splitmix64(splitmix64(seed) ^ (j * golden gamma))``; sorting the keys
    (stably) gives the permutation. One compiled pass over a whole batch of seeds.
    """
    seeds = np.ascontiguousarray(np.asarray(deal_seeds, dtype=np.uint64).reshape(-1))
    orders = np.empty((len(seeds), num_cards), dtype=np.int64)
    _shuffle_orders(seeds, orders)
    return orders


@numba.njit(cache=True, nogil=True, inline="always")
def _mix(z):
    """`splitmix64` of one uint64."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True, inline="always")
def seed_order(seed, num_cards):
    """int64[num_cards]: `shuffle_order`'s permutation for one deal seed (a uint64), in compiled code."""
    keys = np.empty(num_cards, dtype=np.uint64)
    base = _mix(seed)
    for j in range(num_cards):
        keys[j] = _mix(base ^ (np.uint64(j) * np.uint64(0x9E3779B97F4A7C15)))
    return np.argsort(keys, kind="mergesort")


@numba.njit(cache=True, nogil=True)
def _shuffle_orders(seeds, orders):
    for i in range(seeds.shape[0]):
        orders[i] = seed_order(seeds[i], orders.shape[1])


def shuffled_deck(config: RulesConfig, deal_seed: int) -> list[int]:
    """The deck for a deal seed, bottom first (the last card is dealt first)."""
    deck = config.unshuffled_deck()
    order = shuffle_order(np.array([deal_seed], dtype=np.uint64), len(deck))[0]
    return [deck[i] for i in order]


def slot_deal_seed(seed, slot, game) -> np.ndarray:
    """Deal seed of game ``game`` (0, 1, ...) in slot ``slot`` of a batched game with base ``seed``.

    ``h = splitmix64(seed mod 2**64)``, then ``h = splitmix64(h ^ slot)``, then
    ``h = splitmix64(h ^ game)``; the deal seed is ``h`` masked to 63 bits (so
    it is a valid `start_game` seed). Pure and vectorised: the three
    arguments broadcast; returns a uint64 array of the broadcast shape.
    """
    if is_int(seed):
        seed = np.uint64(int(seed) & _MASK64)
    seed, slot, game = np.broadcast_arrays(*(np.asarray(x).astype(np.uint64) for x in (seed, slot, game)))
    shape = seed.shape
    h = splitmix64(seed.ravel())  # 1-d: numpy wraps array arithmetic silently
    h = splitmix64(h ^ slot.ravel())
    h = splitmix64(h ^ game.ravel())
    return (h & _MASK63).reshape(shape)


def numbered_deal_seeds(seed, deals) -> np.ndarray:
    """Deal seeds of deals number ``deals`` (0, 1, ...) of base ``seed``: `slot_deal_seed` of slot 0.

    A duplicate evaluation with seed ``s`` plays these deals, the ones slot 0 of a batched game with
    seed ``s`` deals in turn.
    """
    return slot_deal_seed(seed, 0, deals)
