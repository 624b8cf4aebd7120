"""Batched engine: ``B`` independent games stepped together, for fast self-play.

`VectorGame` plays the same rules as `rouba_env.engine` (the reference) on
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

Backends: ``"numba"`` runs one compiled loop over the slots per call
(kernels compiled on first use, cached on disk); ``"numpy"`` is a vectorised
pure-numpy fallback (slower, no compilation); ``"auto"`` takes numba when it
can be imported. Only numpy is imported with this module.

Finished games (only without auto-reset, e.g. after `VectorGame.from_states`):
``current`` is -1, the mask is all zero, ``obs`` is seat 0's view of the final
position (``to_act`` all zero), and the slot's action is ignored.
"""

from __future__ import annotations

import numpy as np

from rouba_env import engine
from rouba_env.actions import ActionEncoding, resolve_max_players
from rouba_env.cards import NUM_RANKS, make_deck, rank_of
from rouba_env.config import RulesConfig
from rouba_env.engine import (
    EMPTY_PILE,
    NUM_RANK_SLOTS,
    TARGET_DISCARD,
    TARGET_PILE_OFFSET,
    TARGET_TABLE,
    TARGET_TABLE_JOKER,
    GameState,
    shuffle_order,
    splitmix64,
)
from rouba_env.observation import EMPTY_SLOT, PILE_TOP_SLOTS, RULE_FLAGS, ObservationEncoder

BACKENDS = ("auto", "numba", "numpy")
REWARD_MODES = engine.REWARD_MODES

R = NUM_RANK_SLOTS  # 14 rank slots: 13 ranks + joker
JR = NUM_RANKS  # joker rank slot / first joker kind
NUM_KINDS = engine.NUM_KINDS

_MASK63 = np.uint64((1 << 63) - 1)
_MASK64 = (1 << 64) - 1

# Indices into the int64 parameter vector handed to the kernels.
P_N, P_M, P_T, P_HAND, P_TABLE_CARDS, P_TAKE_ALL, P_MUST, P_LEFTOVERS, P_DRAW, P_FP, P_DEALER, P_TOTAL = range(12)
P_MARGIN, P_AUTO, P_D, P_A = range(12, 16)
P_O_TABLE, P_O_SEEN, P_O_TOP, P_O_PSIZE, P_O_HSIZE, P_O_PRESENT, P_O_DEALER, P_O_ACT, P_O_DECK = range(16, 25)
P_O_FLIP, P_O_RULES = range(25, 27)
NUM_PARAMS = 27


def slot_deal_seed(seed, slot, game) -> np.ndarray:
    """Deal seed of game ``game`` (0, 1, ...) in slot ``slot`` of a VectorGame with base ``seed``.

    ``h = splitmix64(seed mod 2**64)``, then ``h = splitmix64(h ^ slot)``, then
    ``h = splitmix64(h ^ game)``; the deal seed is ``h`` masked to 63 bits (so
    it is a valid `engine.start_game` seed). Pure and vectorised: the three
    arguments broadcast; returns a uint64 array of the broadcast shape.
    """
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        seed = np.uint64(int(seed) & _MASK64)
    seed, slot, game = np.broadcast_arrays(*(np.asarray(x).astype(np.uint64) for x in (seed, slot, game)))
    shape = seed.shape
    h = splitmix64(seed.ravel())  # 1-d: numpy wraps array arithmetic silently
    h = splitmix64(h ^ slot.ravel())
    h = splitmix64(h ^ game.ravel())
    return (h & _MASK63).reshape(shape)


def _base_ranks(config: RulesConfig) -> np.ndarray:
    """Rank (0..13) of each card of the unshuffled deck `make_deck` (the order `shuffle_order` permutes)."""
    return np.array([rank_of(card) for card in make_deck(config.decks, config.jokers)], dtype=np.int8)


# ----------------------------------------------------------------------------
# Kernels: plain Python loops over slots, compiled by numba (`_load_numba`).
# They call each other through module globals, which `_load_numba` rebinds to
# the compiled dispatchers. The numpy backend does not use them.
# ----------------------------------------------------------------------------


def _k_obs_row(obs, b, seat, p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current):
    """Observation of absolute ``seat`` in slot ``b`` into ``obs[b]`` (see `rouba_env.observation`)."""
    # Every parameter is read before the first store: the compiler cannot tell `obs` and `p` apart.
    n = p[P_N]
    o_table = p[P_O_TABLE]
    o_seen = p[P_O_SEEN]
    o_top = p[P_O_TOP]
    o_psize = p[P_O_PSIZE]
    o_hsize = p[P_O_HSIZE]
    o_present = p[P_O_PRESENT]
    o_dealer = p[P_O_DEALER]
    o_act = p[P_O_ACT]
    o_deck = p[P_O_DECK]
    o_flip = p[P_O_FLIP]
    o_rules = p[P_O_RULES]
    dealer = p[P_DEALER]
    draw = p[P_DRAW] != 0
    total = np.float32(p[P_TOTAL])
    cur = current[b]
    for i in range(obs.shape[1]):
        obs[b, i] = 0.0
    for r in range(14):
        obs[b, r] = np.float32(hands[b, seat, r])
        obs[b, o_table + r] = np.float32(table[b, r])
        obs[b, o_seen + r] = np.float32(seen[b, r])
    other = seat
    for o in range(n):
        t = np.int64(top[b, other])
        obs[b, o_top + o * 14 + (13 if t < 0 else t)] = 1.0
        obs[b, o_psize + o] = np.float32(pile[b, other]) / total
        obs[b, o_hsize + o] = np.float32(hand_tot[b, other])
        obs[b, o_present + o] = 1.0
        other += 1
        if other == n:
            other = 0
    offset = dealer - seat
    if offset < 0:
        offset += n
    obs[b, o_dealer + offset] = 1.0
    if cur >= 0:
        offset = cur - seat
        if offset < 0:
            offset += n
        obs[b, o_act + offset] = 1.0
        if draw:
            for r in range(14):
                obs[b, o_flip + r] = np.float32(hands[b, cur, r])
    obs[b, o_deck] = np.float32(deck_len[b]) / total
    for i in range(rules.shape[0]):
        obs[b, o_rules + i] = rules[i]


def _k_mask_row(mask, b, p, hands, table, top, current):
    """Legal-action mask of the seat to act in slot ``b`` into ``mask[b]`` (all zero when the game is over)."""
    n = p[P_N]
    T = p[P_T]
    take_all = p[P_TAKE_ALL] != 0
    must = p[P_MUST] != 0
    cur = current[b]
    for i in range(mask.shape[1]):
        mask[b, i] = 0
    if cur < 0:
        return
    has_joker = hands[b, cur, 13] > 0
    table_jokers = table[b, 13] > 0
    pile_bits = 0
    seat = cur
    for o in range(n):
        t = top[b, seat]
        if t >= 0:
            pile_bits |= 1 << t
            if hands[b, cur, t] > 0:
                mask[b, t * T + 3 + o] = 1
            if has_joker:
                mask[b, (13 + t) * T + 3 + o] = 1
        seat += 1
        if seat == n:
            seat = 0
    joker_table = table_jokers and not take_all
    joker_can_capture = False
    for r in range(13):
        on_table = table[b, r] > 0 or (take_all and table_jokers)
        can_capture = on_table or joker_table or ((pile_bits >> r) & 1) != 0
        if hands[b, cur, r] > 0:
            if on_table:
                mask[b, r * T] = 1
            if joker_table:
                mask[b, r * T + 2] = 1
            if not can_capture or not must:
                mask[b, r * T + 1] = 1
        if has_joker:
            if on_table:
                mask[b, (13 + r) * T] = 1
            if joker_table:
                mask[b, (13 + r) * T + 2] = 1
            if can_capture:
                joker_can_capture = True
    if has_joker and (not joker_can_capture or not must):
        mask[b, 13 * T + 1] = 1


def _k_deal_hands(b, p, hands, hand_tot, deck, deck_len):
    """One card at a time from the first player, up to the hand size each, until the deck runs out."""
    n = p[P_N]
    fp = p[P_FP]
    left = deck_len[b]
    for _ in range(p[P_HAND]):
        seat = fp
        for _o in range(n):
            if left == 0:
                deck_len[b] = 0
                return
            left -= 1
            r = deck[b, left]
            hands[b, seat, r] += 1
            hand_tot[b, seat] += 1
            seat += 1
            if seat == n:
                seat = 0
    deck_len[b] = left


def _k_start(b, order, base_ranks, p, hands, hand_tot, table, seen, pile, top, deck, deck_len, current, last_cap, turn):
    """Deal a new game in slot ``b`` from a shuffle ``order`` (a row of `engine.shuffle_order`)."""
    n = p[P_N]
    for s in range(n):
        for r in range(14):
            hands[b, s, r] = 0
        hand_tot[b, s] = 0
        pile[b, s] = 0
        top[b, s] = -1
    for r in range(14):
        table[b, r] = 0
    total = p[P_TOTAL]
    for j in range(total):
        deck[b, j] = base_ranks[order[j]]
    deck_len[b] = total
    last_cap[b] = -1
    turn[b] = 0
    fp = p[P_FP]
    if p[P_DRAW] == 0:
        _k_deal_hands(b, p, hands, hand_tot, deck, deck_len)
    left = deck_len[b]
    for _ in range(p[P_TABLE_CARDS]):
        left -= 1
        table[b, deck[b, left]] += 1
    if p[P_DRAW] != 0:
        left -= 1
        hands[b, fp, deck[b, left]] += 1
        hand_tot[b, fp] += 1
    deck_len[b] = left
    for r in range(14):
        seen[b, r] = table[b, r]
    current[b] = fp


def _k_deal(idx, orders, base_ranks, p, rules, hands, hand_tot, table, seen, pile, top, deck, deck_len, current,
            last_cap, turn, obs, mask):
    """Start new games in slots ``idx`` (shuffles ``orders[i]``) and write their observations and masks."""
    for i in range(idx.shape[0]):
        b = idx[i]
        _k_start(b, orders[i], base_ranks, p, hands, hand_tot, table, seen, pile, top, deck, deck_len, current,
                 last_cap, turn)
        _k_obs_row(obs, b, current[b], p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current)
        _k_mask_row(mask, b, p, hands, table, top, current)


def _k_check(actions, mask, current):
    """First live slot whose action is out of range or illegal, or -1."""
    A = mask.shape[1]
    for b in range(actions.shape[0]):
        if current[b] >= 0:
            a = actions[b]
            if a < 0 or a >= A or mask[b, a] == 0:
                return b
    return -1


def _k_step(actions, p, rules, hands, hand_tot, table, seen, pile, top, deck, deck_len, current, last_cap, turn,
            obs, mask, rewards, done, final_scores, ended):
    """Play one (checked) action per live slot; returns how many games ended (their slots in ``ended``)."""
    n = p[P_N]
    T = p[P_T]
    take_all = p[P_TAKE_ALL] != 0
    draw = p[P_DRAW] != 0
    auto = p[P_AUTO] != 0
    first_player = p[P_FP]
    leftovers = p[P_LEFTOVERS] != 0
    margin = p[P_MARGIN] != 0
    total_cards = p[P_TOTAL]
    n_ended = 0
    for b in range(actions.shape[0]):
        done[b] = False
        for s in range(n):
            rewards[b, s] = 0.0
        cur = current[b]
        if cur < 0:
            continue
        a = actions[b]
        kind = a // T
        target = a - kind * T
        if kind >= 13:
            card = 13
            rank = kind - 13
        else:
            card = kind
            rank = kind
        hands[b, cur, card] -= 1
        hand_tot[b, cur] -= 1
        seen[b, card] += 1
        if target == 1:
            table[b, card] += 1
        elif target == 0:
            if take_all:
                taken = table[b, rank] + table[b, 13]
                table[b, rank] = 0
                table[b, 13] = 0
            else:
                taken = 1
                table[b, rank] -= 1
            pile[b, cur] += taken + 1
            top[b, cur] = rank
            last_cap[b] = cur
        elif target == 2:
            table[b, 13] -= 1
            pile[b, cur] += 2
            top[b, cur] = rank
            last_cap[b] = cur
        else:
            victim = cur + target - 3
            if victim >= n:
                victim -= n
            if victim != cur:
                pile[b, cur] += pile[b, victim]
                pile[b, victim] = 0
                top[b, victim] = -1
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
                hand_tot[b, nxt] += 1
        else:
            seat = cur
            for _o in range(n):
                seat += 1
                if seat == n:
                    seat = 0
                if hand_tot[b, seat] > 0:
                    nxt = seat
                    break
            if nxt < 0 and deck_len[b] > 0:
                _k_deal_hands(b, p, hands, hand_tot, deck, deck_len)
                nxt = first_player  # the first player is always dealt the first card
        if nxt >= 0:
            current[b] = nxt
            _k_obs_row(obs, b, nxt, p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current)
            _k_mask_row(mask, b, p, hands, table, top, current)
            continue
        # Game over (engine._finish).
        current[b] = -1
        if leftovers and last_cap[b] >= 0:
            left_total = 0
            highest = -1
            for r in range(14):
                c = table[b, r]
                if c > 0:
                    left_total += c
                    if r < 13:
                        highest = r
                    table[b, r] = 0
            if left_total > 0:
                s = last_cap[b]
                if top[b, s] < 0:
                    top[b, s] = highest if highest >= 0 else 0
                pile[b, s] += left_total
        best = 0
        for s in range(n):
            if pile[b, s] > best:
                best = pile[b, s]
        n_best = 0
        total_points = 0
        for s in range(n):
            final_scores[b, s] = pile[b, s]
            total_points += pile[b, s]
            if pile[b, s] == best:
                n_best += 1
        if margin:
            for s in range(n):
                points = pile[b, s]
                rewards[b, s] = (points - (total_points - points) / (n - 1)) / total_cards
        else:
            for s in range(n):
                if pile[b, s] == best:
                    rewards[b, s] = 1.0 if n_best == 1 else 0.0
                else:
                    rewards[b, s] = -1.0
        done[b] = True
        if auto:
            ended[n_ended] = b
            n_ended += 1
        else:
            _k_obs_row(obs, b, 0, p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current)
            _k_mask_row(mask, b, p, hands, table, top, current)
    return n_ended


def _k_observe(seats, out, p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current):
    for b in range(seats.shape[0]):
        _k_obs_row(out, b, seats[b], p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current)


def _k_refresh(p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current, obs, mask):
    """Observation (seat to act, or seat 0 once over) and mask of every slot."""
    for b in range(obs.shape[0]):
        seat = current[b] if current[b] >= 0 else 0
        _k_obs_row(obs, b, seat, p, rules, hands, hand_tot, table, seen, pile, top, deck_len, current)
        _k_mask_row(mask, b, p, hands, table, top, current)


def _k_sample(mask, u, out):
    """``out[b]``: the ``floor(u[b] * legal)``-th legal action of row ``b`` (0 when none is legal)."""
    A = mask.shape[1]
    for b in range(mask.shape[0]):
        count = 0
        for a in range(A):
            count += mask[b, a]
        out[b] = 0
        if count == 0:
            continue
        k = int(u[b] * count)
        if k >= count:
            k = count - 1
        for a in range(A):
            if mask[b, a] != 0:
                if k == 0:
                    out[b] = a
                    break
                k -= 1


_KERNEL_NAMES = (
    "_k_obs_row",
    "_k_mask_row",
    "_k_deal_hands",
    "_k_start",
    "_k_deal",
    "_k_check",
    "_k_step",
    "_k_observe",
    "_k_refresh",
    "_k_sample",
)
_INLINE_KERNELS = ("_k_obs_row", "_k_mask_row", "_k_deal_hands", "_k_start")
"""Helpers inlined into their callers (a call passing a dozen arrays costs more than the work)."""
_numba_kernels: dict | None = None
_numba_error: str | None = None


def _load_numba() -> dict | None:
    """Compile (or load from the on-disk cache) the kernels; None when numba cannot be imported."""
    global _numba_kernels, _numba_error
    if _numba_kernels is None and _numba_error is None:
        try:
            import numba
        except ImportError as error:  # pragma: no cover - depends on the environment
            _numba_error = str(error)
            return None
        namespace = globals()
        kernels = {}
        for name in _KERNEL_NAMES:  # callees first: callers resolve them as compiled globals
            inline = "always" if name in _INLINE_KERNELS else "never"
            kernels[name] = numba.njit(cache=True, nogil=True, inline=inline)(namespace[name])
            namespace[name] = kernels[name]
        _numba_kernels = kernels
    return _numba_kernels


def numba_available() -> bool:
    """True when the numba backend can be used."""
    return _load_numba() is not None


def _resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
    if backend == "numpy":
        return "numpy"
    if _load_numba() is None:
        if backend == "numba":
            raise ValueError(f"backend='numba' but numba cannot be imported ({_numba_error}); use 'numpy' or 'auto'")
        return "numpy"
    return "numba"


def _check_int(name: str, value, low: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")
    return int(value)


class VectorGame:
    """``batch_size`` games of one rules config, stepped together.

    Args:
        config: the rules (a `RulesConfig`).
        batch_size: number of game slots ``B``.
        seed: base seed of the deals (see `slot_deal_seed`), an int >= 0.
        max_players: pad observations and actions to this many seats (as the encoders do).
        auto_reset: a slot whose game ended starts its next game in the same step.
        backend: ``"numba"``, ``"numpy"`` or ``"auto"`` (numba when importable).
        reward: ``"outcome"`` (+1 sole winner, 0 tied top, -1 others) or ``"margin"``
            (`engine.margin_rewards`).

    Call `reset` before the first `step`. Buffers ``obs``, ``mask``, ``current``,
    ``rewards``, ``done``, ``final_scores`` and ``deal_seeds`` are refreshed in
    place; copy them to keep them.
    """

    def __init__(
        self,
        config: RulesConfig,
        batch_size: int,
        seed: int = 0,
        max_players: int | None = None,
        auto_reset: bool = True,
        backend: str = "auto",
        reward: str = "outcome",
    ):
        if not isinstance(config, RulesConfig):
            raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
        self.batch_size = _check_int("batch_size", batch_size, 1)
        self.seed = _check_int("seed", seed, 0)
        if not isinstance(auto_reset, (bool, np.bool_)):
            raise ValueError(f"auto_reset must be True or False, got {auto_reset!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"unknown reward {reward!r}; choose one of {REWARD_MODES}")
        self.config = config
        self.max_players = resolve_max_players(config, max_players)
        self.auto_reset = bool(auto_reset)
        self.reward_mode = reward
        self.backend = _resolve_backend(backend)
        self._kernels = _numba_kernels if self.backend == "numba" else None

        encoder = ObservationEncoder(config, self.max_players)
        actions = ActionEncoding(config, self.max_players)
        self.obs_size = encoder.size
        self.num_actions = actions.size
        self.num_players = n = config.num_players
        self.num_targets = actions.num_targets
        self.total_cards = config.total_cards
        B, C, m = self.batch_size, config.total_cards, self.max_players
        lay = encoder.layout
        params = np.zeros(NUM_PARAMS, dtype=np.int64)
        params[P_N], params[P_M], params[P_T] = n, m, actions.num_targets
        params[P_HAND], params[P_TABLE_CARDS] = config.hand_size, config.table_cards
        params[P_TAKE_ALL], params[P_MUST] = config.take_all, config.must_capture
        params[P_LEFTOVERS], params[P_DRAW] = config.leftovers_to_last_capturer, config.draw_from_deck
        params[P_FP], params[P_DEALER], params[P_TOTAL] = config.first_player, config.dealer, C
        params[P_MARGIN], params[P_AUTO] = reward == "margin", self.auto_reset
        params[P_D], params[P_A] = self.obs_size, self.num_actions
        for index, block in ((P_O_TABLE, "table"), (P_O_SEEN, "seen"), (P_O_TOP, "pile_top"),
                             (P_O_PSIZE, "pile_size"), (P_O_HSIZE, "hand_size"), (P_O_PRESENT, "present"),
                             (P_O_DEALER, "dealer"), (P_O_ACT, "to_act"), (P_O_DECK, "deck"),
                             (P_O_FLIP, "flipped"), (P_O_RULES, "rules")):
            params[index] = lay[block].start
        if lay["hand"].start != 0 or PILE_TOP_SLOTS != R or EMPTY_SLOT != JR or len(RULE_FLAGS) != 5:
            raise RuntimeError("observation layout changed; rouba_env.vector must be updated")  # pragma: no cover
        self._params = tuple(int(value) for value in params)  # a tuple: compiled code keeps it in registers
        self._rules = np.array([float(getattr(config, flag)) for flag in RULE_FLAGS], dtype=np.float32)
        self._base_ranks = _base_ranks(config)

        # Game state, one row per slot.
        self._hands = np.zeros((B, n, R), dtype=np.int16)
        self._hand_tot = np.zeros((B, n), dtype=np.int16)
        self._table = np.zeros((B, R), dtype=np.int16)
        self._seen = np.zeros((B, R), dtype=np.int16)
        self._pile = np.zeros((B, n), dtype=np.int16)
        self._top = np.full((B, n), EMPTY_PILE, dtype=np.int8)
        self._deck = np.zeros((B, C), dtype=np.int8)
        self._deck_len = np.zeros(B, dtype=np.int16)
        self._last_cap = np.full(B, -1, dtype=np.int16)
        self._turn = np.zeros(B, dtype=np.int32)
        self._games = np.zeros(B, dtype=np.uint64)  # games started so far in each slot
        self._ended = np.zeros(B, dtype=np.int64)
        self._actions = np.zeros(B, dtype=np.int64)
        self._slots = np.arange(B, dtype=np.int64)
        # Outputs.
        self.obs = np.zeros((B, self.obs_size), dtype=np.float32)
        self.mask = np.zeros((B, self.num_actions), dtype=np.int8)
        self.current = np.full(B, -1, dtype=np.int64)
        self.rewards = np.zeros((B, n), dtype=np.float32)
        self.done = np.zeros(B, dtype=bool)
        self.final_scores = np.zeros((B, n), dtype=np.int64)
        self.deal_seeds = np.zeros(B, dtype=np.uint64)
        self._started = False

    # ------------------------------------------------------------------ API

    def reset(self, seed: int | None = None) -> None:
        """Start a new game in every slot (the next game ``k`` of each slot).

        With ``seed``, the base seed is replaced and the game counters restart
        at 0, so ``reset(seed=s)`` replays the deals of ``VectorGame(..., seed=s)``.
        """
        if seed is not None:
            self.seed = _check_int("seed", seed, 0)
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
        if self._kernels is not None:
            n_ended = self._kernels["_k_step"](
                acts, self._params, self._rules, self._hands, self._hand_tot, self._table, self._seen, self._pile,
                self._top, self._deck, self._deck_len, self.current, self._last_cap, self._turn, self.obs, self.mask,
                self.rewards, self.done, self.final_scores, self._ended,
            )
            if n_ended:
                self._start_games(self._ended[:n_ended])
        else:
            ended = self._np_step(acts)
            if self.auto_reset and ended.size:
                self._start_games(ended)

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
        if self._kernels is not None:
            self._kernels["_k_observe"](
                seats, out, self._params, self._rules, self._hands, self._hand_tot, self._table, self._seen,
                self._pile, self._top, self._deck_len, self.current,
            )
        else:
            self._np_encode(seats, out)
        return out

    def random_actions(self, rng: np.random.Generator, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per slot (0 where none is legal), chosen in one batched pass."""
        if out is None:
            out = np.empty(self.batch_size, dtype=np.int64)
        u = rng.random(self.batch_size)
        if self._kernels is not None:
            self._kernels["_k_sample"](self.mask, u, out)
        else:
            count = self.mask.sum(axis=1, dtype=np.int64)
            k = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
            cumulative = np.cumsum(self.mask, axis=1, dtype=np.int16)
            out[:] = np.argmax(cumulative > k[:, None], axis=1)
            out[count == 0] = 0
        return out

    def scores(self) -> np.ndarray:
        """int64[B, n]: cards in each seat's pile now (the final scores once a game is over)."""
        return self._pile.astype(np.int64)

    @property
    def turns(self) -> np.ndarray:
        """int64[B]: moves played so far in each slot's current game."""
        return self._turn.astype(np.int64)

    @classmethod
    def from_states(
        cls,
        config: RulesConfig,
        states: list[GameState],
        max_players: int | None = None,
        backend: str = "auto",
        reward: str = "outcome",
    ) -> "VectorGame":
        """A VectorGame (``auto_reset=False``) holding copies of reference-engine states, one per slot.

        Finished states stay finished: their mask is all zero, their action is
        ignored, and ``done`` is only True on the step that ends a game.
        ``deal_seeds`` are 0 (a state does not know its seed).
        """
        states = list(states)
        if not states:
            raise ValueError("from_states needs at least one state")
        game = cls(config, len(states), max_players=max_players, auto_reset=False, backend=backend, reward=reward)
        n = config.num_players
        for b, state in enumerate(states):
            if not isinstance(state, GameState):
                raise ValueError(f"states[{b}] is a {type(state).__name__}, not a GameState")
            if state.config != config:
                raise ValueError(f"states[{b}] was played under other rules: {state.config} != {config}")
            if len(state.deck) > game.total_cards or len(state.hands) != n:
                raise ValueError(f"states[{b}] does not fit the rules")  # pragma: no cover
            for seat in range(n):
                game._hands[b, seat] = engine.rank_counts(state.hands[seat])
                game._hand_tot[b, seat] = len(state.hands[seat])
                game._pile[b, seat] = len(state.piles[seat])
                game._top[b, seat] = state.pile_tops[seat]
            game._table[b] = engine.rank_counts(state.table)
            game._seen[b] = engine.seen_counts(state)
            game._deck_len[b] = len(state.deck)
            game._deck[b, : len(state.deck)] = [rank_of(card) for card in state.deck]
            game.current[b] = state.current
            game._last_cap[b] = state.last_capturer
            game._turn[b] = state.turn
        game._refresh_all()
        game._started = True
        return game

    # ------------------------------------------------------------ internals

    def _as_actions(self, actions) -> np.ndarray:
        acts = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
        if acts.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {acts.shape}")
        if acts.dtype == np.int64 and acts.flags.c_contiguous:
            return acts
        if acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {acts.dtype}")
        if acts.dtype == np.uint64 and acts.size and acts.max() > np.iinfo(np.int64).max:
            raise ValueError("actions out of range")
        self._actions[:] = acts
        return self._actions

    def _first_illegal(self, acts: np.ndarray) -> int:
        if self._kernels is not None:
            return int(self._kernels["_k_check"](acts, self.mask, self.current))
        live = self.current >= 0
        in_range = (acts >= 0) & (acts < self.num_actions)
        legal = np.zeros(self.batch_size, dtype=bool)
        legal[in_range] = self.mask[in_range.nonzero()[0], acts[in_range]] != 0
        bad = np.flatnonzero(live & ~legal)
        return int(bad[0]) if bad.size else -1

    def _start_games(self, slots: np.ndarray) -> None:
        """Deal the next game of each slot in ``slots`` (batched shuffle) and write its obs and mask."""
        games = self._games[slots]
        seeds = slot_deal_seed(self.seed, slots, games)
        self._games[slots] = games + np.uint64(1)
        self.deal_seeds[slots] = seeds
        orders = shuffle_order(seeds, self.total_cards)
        if self._kernels is not None:
            self._kernels["_k_deal"](
                np.ascontiguousarray(slots, dtype=np.int64), orders, self._base_ranks, self._params, self._rules,
                self._hands, self._hand_tot, self._table, self._seen, self._pile, self._top, self._deck,
                self._deck_len, self.current, self._last_cap, self._turn, self.obs, self.mask,
            )
        else:
            self._np_start(slots, orders)
            self._np_refresh(slots)

    def _refresh_all(self) -> None:
        if self._kernels is not None:
            self._kernels["_k_refresh"](
                self._params, self._rules, self._hands, self._hand_tot, self._table, self._seen, self._pile,
                self._top, self._deck_len, self.current, self.obs, self.mask,
            )
        else:
            self._np_refresh(self._slots)

    # ------------------------------------------------- numpy backend

    def _np_refresh(self, slots: np.ndarray) -> None:
        """Observation (seat to act, or seat 0 when over) and mask of ``slots``."""
        seats = np.maximum(self.current[slots], 0)
        self.obs[slots] = self._np_encode(seats, np.empty((len(slots), self.obs_size), np.float32), slots)
        self.mask[slots] = self._np_mask(slots)

    def _np_encode(self, seats: np.ndarray, out: np.ndarray, slots: np.ndarray | None = None) -> np.ndarray:
        p = self._params
        n = self.num_players
        slots = self._slots if slots is None else slots
        rows = np.arange(len(slots))
        out[:] = 0.0
        out[:, :R] = self._hands[slots, seats]
        out[:, p[P_O_TABLE]:p[P_O_TABLE] + R] = self._table[slots]
        out[:, p[P_O_SEEN]:p[P_O_SEEN] + R] = self._seen[slots]
        others = (seats[:, None] + np.arange(n)) % n
        tops = self._top[slots[:, None], others].astype(np.int64)
        columns = p[P_O_TOP] + np.arange(n) * PILE_TOP_SLOTS + np.where(tops < 0, EMPTY_SLOT, tops)
        out[rows[:, None], columns] = 1.0
        total = np.float32(self.total_cards)
        out[:, p[P_O_PSIZE]:p[P_O_PSIZE] + n] = self._pile[slots[:, None], others].astype(np.float32) / total
        out[:, p[P_O_HSIZE]:p[P_O_HSIZE] + n] = self._hand_tot[slots[:, None], others]
        out[:, p[P_O_PRESENT]:p[P_O_PRESENT] + n] = 1.0
        out[rows, p[P_O_DEALER] + (self.config.dealer - seats) % n] = 1.0
        current = self.current[slots]
        live = np.flatnonzero(current >= 0)
        out[live, p[P_O_ACT] + (current[live] - seats[live]) % n] = 1.0
        out[:, p[P_O_DECK]] = self._deck_len[slots].astype(np.float32) / total
        if self.config.draw_from_deck:
            out[live, p[P_O_FLIP]:p[P_O_FLIP] + R] = self._hands[slots[live], current[live]]
        out[:, p[P_O_RULES]:p[P_O_RULES] + len(self._rules)] = self._rules
        return out

    def _np_mask(self, slots: np.ndarray) -> np.ndarray:
        config = self.config
        n, T = self.num_players, self.num_targets
        out = np.zeros((len(slots), NUM_KINDS, T), dtype=np.int8)
        current = self.current[slots]
        live = np.flatnonzero(current >= 0)
        b = slots[live]
        c = current[live]
        hand = self._hands[b, c]
        table = self._table[b]
        table_jokers = table[:, JR] > 0
        on_table = (table[:, :JR] > 0) | (config.take_all & table_jokers)[:, None]  # [L, 13]
        joker_table = table_jokers & (not config.take_all)  # [L]
        tops = self._top[b[:, None], (c[:, None] + np.arange(n)) % n]  # [L, n]
        on_pile = tops[:, None, :] == np.arange(NUM_RANKS)[None, :, None]  # [L, 13, n]
        can_capture = on_table | joker_table[:, None] | on_pile.any(axis=2)  # [L, 13]
        has = hand[:, :JR] > 0
        sub = np.zeros((len(live), NUM_KINDS, T), dtype=bool)
        sub[:, :JR, TARGET_TABLE] = has & on_table
        sub[:, :JR, TARGET_TABLE_JOKER] = has & joker_table[:, None]
        sub[:, :JR, TARGET_PILE_OFFSET:TARGET_PILE_OFFSET + n] = has[:, :, None] & on_pile
        sub[:, :JR, TARGET_DISCARD] = has & ~(can_capture & config.must_capture)
        joker = hand[:, JR] > 0
        sub[:, JR:, TARGET_TABLE] = joker[:, None] & on_table
        sub[:, JR:, TARGET_TABLE_JOKER] = (joker & joker_table)[:, None]
        sub[:, JR:, TARGET_PILE_OFFSET:TARGET_PILE_OFFSET + n] = joker[:, None, None] & on_pile
        sub[:, JR, TARGET_DISCARD] = joker & ~(can_capture.any(axis=1) & config.must_capture)
        out[live] = sub
        return out.reshape(len(slots), -1)

    def _np_deal_hands(self, slots: np.ndarray) -> None:
        config = self.config
        n = self.num_players
        count = config.hand_size * n
        left = self._deck_len[slots].astype(np.int64)
        j = np.arange(count)
        valid = j[None, :] < left[:, None]
        positions = np.maximum(left[:, None] - 1 - j[None, :], 0)
        ranks = self._deck[slots[:, None], positions].astype(np.int64)
        seats = (config.first_player + j % n) % n
        flat = ((slots[:, None] * n + seats[None, :]) * R + ranks)[valid]
        np.add.at(self._hands.reshape(-1), flat, 1)
        np.add.at(self._hand_tot.reshape(-1), (slots[:, None] * n + seats[None, :])[valid], 1)
        self._deck_len[slots] = left - np.minimum(left, count)

    def _np_start(self, slots: np.ndarray, orders: np.ndarray) -> None:
        config = self.config
        C = self.total_cards
        self._hands[slots] = 0
        self._hand_tot[slots] = 0
        self._table[slots] = 0
        self._pile[slots] = 0
        self._top[slots] = EMPTY_PILE
        self._deck[slots] = self._base_ranks[orders]
        self._deck_len[slots] = C
        self._last_cap[slots] = -1
        self._turn[slots] = 0
        if not config.draw_from_deck:
            self._np_deal_hands(slots)
        left = self._deck_len[slots].astype(np.int64)
        k = config.table_cards
        if k:
            ranks = self._deck[slots[:, None], left[:, None] - 1 - np.arange(k)[None, :]].astype(np.int64)
            np.add.at(self._table.reshape(-1), (slots[:, None] * R + ranks).ravel(), 1)
            left = left - k
        fp = config.first_player
        if config.draw_from_deck:
            ranks = self._deck[slots, left - 1].astype(np.int64)
            np.add.at(self._hands.reshape(-1), (slots * self.num_players + fp) * R + ranks, 1)
            self._hand_tot[slots, fp] += 1
            left = left - 1
        self._deck_len[slots] = left
        self._seen[slots] = self._table[slots]
        self.current[slots] = fp

    def _np_step(self, acts: np.ndarray) -> np.ndarray:
        """Numpy backend of `step`; returns the slots whose game ended."""
        config = self.config
        n, T = self.num_players, self.num_targets
        self.done[:] = False
        self.rewards[:] = 0.0
        live = np.flatnonzero(self.current >= 0)
        c = self.current[live]
        a = acts[live]
        kind, target = np.divmod(a, T)
        joker = kind >= JR
        card = np.where(joker, JR, kind)
        rank = np.where(joker, kind - JR, kind)
        self._hands[live, c, card] -= 1
        self._hand_tot[live, c] -= 1
        self._seen[live, card] += 1
        # Discard.
        sel = target == TARGET_DISCARD
        self._table[live[sel], card[sel]] += 1
        # Table capture.
        sel = target == TARGET_TABLE
        b, s, r = live[sel], c[sel], rank[sel]
        if config.take_all:
            taken = self._table[b, r] + self._table[b, JR]
            self._table[b, r] = 0
            self._table[b, JR] = 0
        else:
            taken = 1
            self._table[b, r] -= 1
        self._pile[b, s] += taken + 1
        # Table joker capture.
        sel = target == TARGET_TABLE_JOKER
        self._table[live[sel], JR] -= 1
        self._pile[live[sel], c[sel]] += 2
        # Own pile or steal.
        sel = target >= TARGET_PILE_OFFSET
        victim = (c + target - TARGET_PILE_OFFSET) % n
        steal = sel & (victim != c)
        b, s, v = live[steal], c[steal], victim[steal]
        self._pile[b, s] += self._pile[b, v]
        self._pile[b, v] = 0
        self._top[b, v] = EMPTY_PILE
        self._pile[live[sel], c[sel]] += 1
        # Pile tops and last capturer.
        sel = target != TARGET_DISCARD
        self._top[live[sel], c[sel]] = rank[sel]
        sel = (target == TARGET_TABLE) | (target == TARGET_TABLE_JOKER) | steal
        self._last_cap[live[sel]] = c[sel]
        self._turn[live] += 1
        # Pass the turn.
        if config.draw_from_deck:
            has_deck = self._deck_len[live] > 0
            b = live[has_deck]
            nxt = (c[has_deck] + 1) % n
            left = self._deck_len[b].astype(np.int64) - 1
            ranks = self._deck[b, left]
            self._deck_len[b] = left
            self._hands[b, nxt, ranks] += 1
            self._hand_tot[b, nxt] += 1
            self.current[b] = nxt
            finished = live[~has_deck]
        else:
            seats = (c[:, None] + np.arange(1, n + 1)) % n
            holding = self._hand_tot[live[:, None], seats] > 0
            found = holding.any(axis=1)
            first = np.argmax(holding, axis=1)
            self.current[live[found]] = seats[found, first[found]]
            rest = live[~found]
            has_deck = self._deck_len[rest] > 0
            redeal = rest[has_deck]
            if redeal.size:
                self._np_deal_hands(redeal)
                self.current[redeal] = config.first_player
            finished = rest[~has_deck]
        if finished.size:
            self._np_finish(finished)
        if live.size:
            self._np_refresh(live)
        return finished

    def _np_finish(self, finished: np.ndarray) -> None:
        config = self.config
        n = self.num_players
        self.current[finished] = -1
        if config.leftovers_to_last_capturer:
            capturer = self._last_cap[finished].astype(np.int64)
            table = self._table[finished]
            left_total = table.sum(axis=1)
            sel = (capturer >= 0) & (left_total > 0)
            b, s, table = finished[sel], capturer[sel], table[sel]
            natural = table[:, :JR] > 0
            highest = np.where(natural.any(axis=1), JR - 1 - np.argmax(natural[:, ::-1], axis=1), 0)
            empty = self._top[b, s] < 0
            self._top[b[empty], s[empty]] = highest[empty]
            self._pile[b, s] += left_total[sel].astype(np.int16)
            self._table[b] = 0
        points = self._pile[finished].astype(np.int64)
        self.final_scores[finished] = points
        if self.reward_mode == "margin":
            total = points.sum(axis=1, keepdims=True)
            self.rewards[finished] = (points - (total - points) / (n - 1)) / config.total_cards
        else:
            best = points.max(axis=1, keepdims=True)
            top = points == best
            sole = top.sum(axis=1, keepdims=True) == 1
            self.rewards[finished] = np.where(top, np.where(sole, 1.0, 0.0), -1.0)
        self.done[finished] = True


__all__ = ["BACKENDS", "VectorGame", "numba_available", "slot_deal_seed"]
