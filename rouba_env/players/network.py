"""Trained policies played in numpy: the actor-critic MLP's forward pass and the `NetworkPolicy` player.

Playing a checkpoint needs no torch: the weights are read by
`rouba_env.players.checkpoint` and the network (ReLU hidden layers, a policy
head with one logit per action and a value head, torch's layout) runs in the
compiled kernels of `rouba_env.players.dense`, which sum every output in one
fixed order: a position gets the same logits in any batch and with any thread
count. The trainer's torch network (`rouba_training.network`) saves exactly
these tensors.

Sampling default, everywhere: a checkpoint plays its most likely legal action
(``deterministic=True``), as in the trainer's evaluations; pass
``deterministic=False`` (spec ``checkpoint:2p,deterministic=false``) to sample
from its distribution with the caller's generator.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np

from rouba_env.encoding.observation import OBSERVATION_VERSION
from rouba_env.players.features import (
    action_repadding_index,
    extended_index,
    rank_context_index,
    rank_feature_index,
    repadding_index,
)
from rouba_env.checks import check_flag
from rouba_env.players.dense import dense, dense_rows, padded_layer
from rouba_env.players.base import BasePolicy
from rouba_env.players.checkpoint import (
    ALIAS_TABLE_SIZES,
    HAND_HEAD_BIAS,
    HAND_HEAD_WEIGHT,
    POLICY_HEAD,
    RANK_CONTEXT,
    RANK_JOKER_CONTEXT,
    RANK_JOKER_HEAD,
    RANK_MIX,
    RANK_MIX_CONTEXT,
    RANK_MIX_POOL,
    RANK_NATURAL_HEAD,
    RANK_TOKEN,
    RANK_TOKEN_CONTEXT,
    VALUE_HEAD,
    CheckpointTableMismatch,
    bias_of,
    critic_layer,
    load_checkpoint,
    mlp_hidden_layer,
    weight_of,
    read_hand_head,
    read_privileged_value,
    resolve_checkpoint,
)
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import NUM_RANK_SLOTS
from rouba_env.rules.scoring import TRAINING_REWARD, check_reward_mode
from rouba_env.streams import Randomness, uniform_rows

LOGIT_BOUND = 1e30
"""Logits are clipped to +-this before a choice: finite, and far beyond any trained network's."""
MASKED_LOGIT = -1e8
"""Logit given to illegal actions: far below any real logit, still finite in float32."""
RULES_THAT_MUST_MATCH = ("take_all", "must_capture", "leftovers_to_last_capturer", "draw_from_deck", "jokers",
                         "table_cards", "hand_size", "decks", "ranks", "suits")
"""Rule fields a policy can only play as trained; the table size may differ within its padding."""
DETERMINISTIC_DEFAULT = True
"""Checkpoints play their most likely legal action unless asked to sample."""
DEFAULT_VALUE_REWARD = TRAINING_REWARD
"""The training reward of a checkpoint whose metadata names none (the trainer's default)."""


def _layer(tensors: dict[str, np.ndarray], name: str) -> tuple[np.ndarray, np.ndarray]:
    """A Linear layer's (weight ``[in, out]``, bias) from checkpoint tensors, by the checkpoint's names."""
    return tensors[weight_of(name)].T.copy(), tensors[bias_of(name)]


class MLP:
    """The actor-critic network's forward pass from its tensors (torch ``state_dict`` names and layout)."""

    def __init__(self, tensors: dict[str, np.ndarray], hidden_layers: int):
        self.trunk = [_layer(tensors, mlp_hidden_layer(i)) for i in range(hidden_layers)]
        self.policy = _layer(tensors, POLICY_HEAD)
        self.value = _layer(tensors, VALUE_HEAD)
        self.obs_size = self.trunk[0][0].shape[0]
        self.num_actions = self.policy[0].shape[1]

    def forward(self, obs: np.ndarray, with_value: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(logits float32[B, A], value float32[B], or None without ``with_value``) for observations float32[B, D]."""
        hidden = np.asarray(obs, dtype=np.float32)
        for weight, bias in self.trunk:
            hidden = dense(hidden, weight, bias, relu=True)
        logits = dense(hidden, *self.policy)
        return logits, dense(hidden, *self.value)[:, 0] if with_value else None


class PrivilegedValue:
    """The trainer's privileged critic, from its tensors: the value of a position for the seat to act, read
    from its observation and what the observation hides (`ObservationEncoder.hidden`: every hand and the deck).

    It cannot play (a player never sees the hidden cards); a search can score its determinizations with it,
    each of which is a full position.
    """

    def __init__(self, tensors: dict[str, np.ndarray]):
        layers = len(tensors) // 2
        self.layers = [_layer(tensors, critic_layer(i)) for i in range(layers)]
        self.input_size = self.layers[0][0].shape[0]

    def forward(self, obs: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        """float32[B]: values for observations float32[B, D] and hidden cards float32[B, H]."""
        values = np.concatenate([np.asarray(obs, np.float32), np.asarray(hidden, np.float32)], axis=1)
        for index, (weight, bias) in enumerate(self.layers):
            values = dense(values, weight, bias, relu=index < len(self.layers) - 1)
        return values[:, 0]


HAND_SMOOTHING = 0.01
"""Share of card counting mixed into a hand head's distribution, so that no possible card has probability 0."""


def hand_distribution(predicted: np.ndarray, unseen: np.ndarray, smoothing: float = HAND_SMOOTHING) -> np.ndarray:
    """float64[..., 14]: the rank of one card of a hidden hand as a hand head tells it.

    ``predicted``: the head's counts per rank slot for that hand (`NetworkPolicy.predicted_hidden`), clipped at 0
    and normalized over the ranks still unseen (``unseen``, the same shape); mixed with card counting (every
    unseen card equally likely) by ``smoothing``, and card counting alone where the head names no unseen rank.
    """
    unseen = np.asarray(unseen, dtype=np.float64)
    counting = unseen / np.maximum(unseen.sum(axis=-1, keepdims=True), 1.0)
    model = np.where(unseen > 0, np.maximum(np.asarray(predicted, dtype=np.float64), 0.0), 0.0)
    totals = model.sum(axis=-1, keepdims=True)
    model = np.where(totals > 0, model / np.where(totals > 0, totals, 1.0), counting)
    return (1 - smoothing) * model + smoothing * counting


class RankWeights(NamedTuple):
    """A rank network's tensors as the compiled forward reads them: ``[in, out]`` weights, float32."""

    context: np.ndarray
    context_bias: np.ndarray
    token: np.ndarray
    token_context: np.ndarray
    token_bias: np.ndarray
    mix: np.ndarray
    mix_pool: np.ndarray
    mix_context: np.ndarray
    mix_bias: np.ndarray
    heads: np.ndarray
    """Natural head then joker head, side by side, zero columns after: ``[token width, 2 * targets + pad]``.
    The narrow layers (heads, joker context, value) are padded (`padded_layer`): their first outputs count."""
    natural_bias: np.ndarray
    joker_context: np.ndarray
    joker_bias: np.ndarray
    value: np.ndarray
    value_bias: np.ndarray


@numba.njit(cache=True, nogil=True)
def _add_row_relu(tokens, row):
    """In place: ``tokens[s] = max(tokens[s] + row, 0)`` for float32[S, W] and float32[1, W]."""
    zero = np.float32(0.0)
    for s in range(tokens.shape[0]):
        for w in range(tokens.shape[1]):
            value = tokens[s, w] + row[0, w]
            tokens[s, w] = value if value > zero else zero


@numba.njit(cache=True, nogil=True)
def _slot_mean(tokens, out):
    """``out[0] =`` the mean over the slots of float32[S, W], summed in slot order."""
    out[:] = np.float32(0.0)
    for s in range(tokens.shape[0]):
        for w in range(tokens.shape[1]):
            out[0, w] += tokens[s, w]
    out /= np.float32(tokens.shape[0])


@numba.njit(cache=True, nogil=True)
def _rank_forward(obs, index, weights, out):
    """The rank network on float32[B, D] observations, one row at a time, into ``out = (logits, values,
    final_tokens)``: logits[B, A], values[B] (where ``values`` has B entries) and, where ``final_tokens`` has
    B rows, each row's final tokens float32[S, W] (for the hand head).

    ``index = (first, second, context_index)``: ``first``/``second`` are int64[S, F] indices into the
    observation extended by a 0 and a 1 (`extended_index`), a token's features the products of the two;
    ``context_index`` the context's entries. Every product runs `dense`'s kernels on the row's own
    slots, so a row's numbers never depend on the rows beside it.
    """
    first, second, context_index = index
    logits, values, final_tokens = out
    batch, size = obs.shape
    slots, feature_count = first.shape
    width = weights.mix.shape[0]
    (extended, features, context_in, context, tokens, mixed, row, pooled, mean, heads, joker, value_in, value,
     no_bias) = _rank_buffers(obs, first, weights, context_index.shape[0])
    for b in range(batch):
        extended[:size] = obs[b]
        for s in range(slots):
            for f in range(feature_count):
                features[s, f] = extended[first[s, f]] * extended[second[s, f]]
        for i in range(context_index.shape[0]):
            context_in[0, i] = obs[b, context_index[i]]
        dense_rows(context_in, weights.context, weights.context_bias, True, context)
        dense_rows(features, weights.token, no_bias[:width], False, tokens)
        dense_rows(context, weights.token_context, weights.token_bias, False, row)
        _add_row_relu(tokens, row)
        _slot_mean(tokens, mean)
        dense_rows(mean, weights.mix_pool, no_bias[:width], False, pooled)
        dense_rows(context, weights.mix_context, no_bias[:width], False, row)
        for w in range(width):
            row[0, w] = (pooled[0, w] + row[0, w]) + weights.mix_bias[w]
        dense_rows(tokens, weights.mix, no_bias[:width], False, mixed)
        _add_row_relu(mixed, row)
        dense_rows(mixed, weights.heads, no_bias[: weights.heads.shape[1]], False, heads)
        dense_rows(mixed[slots - 1:], weights.joker_context, weights.joker_bias, False, joker)
        _write_rank_logits(heads, joker, weights.natural_bias, logits[b])
        if values.shape[0] == batch:
            _slot_mean(mixed, mean)
            value_in[0, :width] = mean[0]
            value_in[0, width:] = context[0]
            dense_rows(value_in, weights.value, weights.value_bias, False, value)
            values[b] = value[0, 0]
        if final_tokens.shape[0] == batch:
            final_tokens[b] = mixed


@numba.njit(cache=True, nogil=True)
def _rank_buffers(obs, first, weights, context_size):
    """The arrays `_rank_forward` writes each row's pass into, made once for the batch: (extended observation,
    features, context input, context, tokens, mixed tokens, row, pooled, mean, heads, joker context, value
    input, value, a zero bias)."""
    size = obs.shape[1]
    slots, feature_count = first.shape
    width = weights.mix.shape[0]
    extended = np.empty(size + 2, np.float32)
    extended[size], extended[size + 1] = 0.0, 1.0
    features = np.empty((slots, feature_count), np.float32)
    context_in = np.empty((1, context_size), np.float32)
    context = np.empty((1, weights.context.shape[1]), np.float32)
    tokens = np.empty((slots, width), np.float32)
    mixed = np.empty((slots, width), np.float32)
    row = np.empty((1, width), np.float32)
    pooled = np.empty((1, width), np.float32)
    mean = np.empty((1, width), np.float32)
    heads = np.empty((slots, weights.heads.shape[1]), np.float32)
    joker = np.empty((1, weights.joker_context.shape[1]), np.float32)
    value_in = np.empty((1, width + context.shape[1]), np.float32)
    value = np.empty((1, weights.value.shape[1]), np.float32)
    no_bias = np.zeros(max(width, weights.heads.shape[1]), np.float32)
    return (extended, features, context_in, context, tokens, mixed, row, pooled, mean, heads, joker, value_in, value,
            no_bias)


@numba.njit(cache=True, nogil=True)
def _write_rank_logits(heads, joker, natural_bias, logits):
    """One row's logits[A] from its heads' outputs: natural kinds, then joker kinds, one logit per target."""
    targets = natural_bias.shape[0]
    kinds = heads.shape[0] - 1  # one kind per slot but the joker's
    for s in range(kinds):
        for t in range(targets):
            logits[s * targets + t] = heads[s, t] + natural_bias[t]
            logits[(kinds + s) * targets + t] = heads[s, targets + t] + joker[0, t]


class RankNetwork:
    """The rank-shared actor-critic's forward pass (``architecture="rank"``; torch twin: ``RankActorCritic``).

    One token per rank slot (`rank_feature_index`: what the observation says
    about that rank), read by the same weights for every rank, so what the
    network learns about sevens it knows about kings. A context embedding of
    the entries that name no rank (`rank_context_index`: pile and hand sizes,
    seats, deck, rules) joins every token; a second layer mixes in the mean
    of all tokens. Relabelling the natural ranks of a position relabels its
    logits the same way and leaves its value unchanged. A natural card of rank ``r`` and a joker named
    ``r`` get their logits (one per target) from token ``r`` (the joker's also
    from the joker token); the value reads the mean token and the context.
    ``hidden_sizes`` is (context width, token width).
    """

    def __init__(self, tensors: dict[str, np.ndarray], max_players: int, version: int = OBSERVATION_VERSION):
        def linear(name: str) -> np.ndarray:
            return tensors[weight_of(name)].T.copy()

        def bias(name: str) -> np.ndarray:
            return tensors[bias_of(name)]

        heads, _ = padded_layer(np.concatenate([linear(RANK_NATURAL_HEAD), linear(RANK_JOKER_HEAD)], axis=1),
                                np.zeros(2 * len(bias(RANK_NATURAL_HEAD)), np.float32))
        self.weights = RankWeights(
            linear(RANK_CONTEXT), bias(RANK_CONTEXT), linear(RANK_TOKEN), linear(RANK_TOKEN_CONTEXT),
            bias(RANK_TOKEN), linear(RANK_MIX), linear(RANK_MIX_POOL), linear(RANK_MIX_CONTEXT), bias(RANK_MIX),
            heads, bias(RANK_NATURAL_HEAD), *padded_layer(linear(RANK_JOKER_CONTEXT), bias(RANK_JOKER_HEAD)),
            *padded_layer(linear(VALUE_HEAD), bias(VALUE_HEAD)))
        first, second = rank_feature_index(max_players, version)
        self.context_index = rank_context_index(max_players, version)
        self.obs_size = int(max(first.max(), second.max(), self.context_index.max())) + 1
        self.first, self.second = extended_index(first, self.obs_size), extended_index(second, self.obs_size)
        self.num_actions = 2 * (self.first.shape[0] - 1) * self.weights.natural_bias.shape[0]

    def _run(self, obs: np.ndarray, with_value: bool, with_tokens: bool = False):
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        batch = obs.shape[0]
        logits = np.empty((batch, self.num_actions), np.float32)
        values = np.empty(batch if with_value else 0, np.float32)
        slots, width = self.first.shape[0], self.weights.mix.shape[0]
        tokens = np.empty((batch, slots, width) if with_tokens else (0, slots, width), np.float32)
        _rank_forward(obs, (self.first, self.second, self.context_index), self.weights, (logits, values, tokens))
        return logits, values, tokens

    def forward(self, obs: np.ndarray, with_value: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(logits float32[B, A], value float32[B], or None without ``with_value``) for observations float32[B, D]."""
        logits, values, _ = self._run(obs, with_value)
        return logits, values if with_value else None

    def hidden_cards(self, obs: np.ndarray, hand_head: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """float32[B, H]: a hand head's prediction (``(weight, bias)``, read from each rank's token) of every
        seat's cards per rank and the deck's, in `ObservationEncoder.hidden`'s layout."""
        tokens = self._run(obs, with_value=False, with_tokens=True)[2]
        batch, slots, width = tokens.shape
        per_rank = dense(tokens.reshape(batch * slots, width), *hand_head).reshape(batch, slots, -1)
        return per_rank.transpose(0, 2, 1).reshape(batch, -1)  # [B, seats + deck, R] flattened


FORWARD_ROWS = 256
"""Rows per forward pass of a large batch: its intermediate arrays then stay in the processor's cache."""


@numba.njit(cache=True, nogil=True)
def _row_hashes(rows):
    """uint64[B]: an FNV-1a hash of each row's bits (uint32[B, D])."""
    hashes = np.empty(rows.shape[0], np.uint64)
    for b in range(rows.shape[0]):
        value = np.uint64(0xCBF29CE484222325)
        for d in range(rows.shape[1]):
            value = (value ^ np.uint64(rows[b, d])) * np.uint64(0x100000001B3)
        hashes[b] = value
    return hashes


def distinct_rows(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(first, inverse) with ``obs[first][inverse]`` equal to ``obs`` bit for bit, ``first`` the first row of
    each distinct observation; None when every row is distinct. Rows are grouped by a hash of their bits and
    then compared in full, so a collision never merges two different rows."""
    bits = np.ascontiguousarray(obs, dtype=np.float32).view(np.uint32)
    _, first, inverse = np.unique(_row_hashes(bits), return_index=True, return_inverse=True)
    if len(first) == len(obs) or not (bits[first][inverse] == bits).all():
        return None
    return first, inverse


def forward_in_chunks(network, obs: np.ndarray, with_value: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``network.forward(obs)`` in chunks of `FORWARD_ROWS` rows (the same values, faster for large batches);
    without ``with_value`` only the logits (the value is None). A row repeated in the batch (the same position
    in several imagined worlds) is computed once: a row's numbers depend on that row alone."""
    repeated = distinct_rows(obs) if len(obs) > 1 else None
    if repeated is not None:
        first, inverse = repeated
        logits, value = forward_in_chunks(network, obs[first], with_value)
        return logits[inverse], None if value is None else value[inverse]
    if len(obs) <= FORWARD_ROWS:
        return network.forward(obs, with_value)
    parts = [network.forward(obs[start:start + FORWARD_ROWS], with_value) for start in range(0, len(obs), FORWARD_ROWS)]
    logits = np.concatenate([logits for logits, _ in parts])
    return logits, np.concatenate([value for _, value in parts]) if with_value else None


def network_from_tensors(tensors: dict[str, np.ndarray], metadata: dict):
    """The numpy network a checkpoint's (validated) metadata describes: `MLP` or `RankNetwork`."""
    if metadata.get("architecture", "mlp") == "rank":
        return RankNetwork(tensors, int(metadata["max_players"]), int(metadata["observation_version"]))
    return MLP(tensors, len(metadata["hidden_sizes"]))


class NetworkPolicy(BasePolicy):
    """A `Policy` backed by an `MLP` or a `RankNetwork`: the argmax of (or a sample from) its masked distribution.

    ``max_players`` is the padding of the observations it will be given; when
    the network was trained with another padding (``network_players``), the
    observations and masks are re-padded on the way in and the actions mapped
    back on the way out, so one checkpoint serves any table it can seat.
    """

    def __init__(self, network: MLP | RankNetwork, rules: RulesConfig, max_players: int | None = None,
                 *,
                 network_players: int | None = None, deterministic: bool = DETERMINISTIC_DEFAULT,
                 name: str = "network", reward: str = DEFAULT_VALUE_REWARD,
                 network_version: int = OBSERVATION_VERSION):
        super().__init__(rules, max_players)
        check_flag("deterministic", deterministic)
        env_players = self.encoder.max_players
        network_players = env_players if network_players is None else network_players
        if network_players < rules.num_players:
            raise ValueError(f"network seats {network_players} players, the table has {rules.num_players}")
        self.network_version = network_version
        """The observation version the network was trained on (an older one reads the prefix it knows)."""
        same_layout = network_players == env_players and network_version == OBSERVATION_VERSION
        self._obs_index = None if same_layout else repadding_index(env_players, network_players, network_version)
        self._action_index = None
        if network_players != env_players:
            # network action -> env action
            self._action_index = action_repadding_index(rules.num_players, env_players, network_players)
        expected_obs = len(self._obs_index) if self._obs_index is not None else self.encoder.size
        expected_actions = len(self._action_index) if self._action_index is not None else self.actions.size
        if network.obs_size != expected_obs or network.num_actions != expected_actions:
            raise ValueError(
                f"network expects observations of {network.obs_size} and {network.num_actions} actions, "
                f"but {network_players}-seat padding gives {expected_obs} and {expected_actions}"
            )
        self.network = network
        self.deterministic = bool(deterministic)
        self.name = name
        self.reward = check_reward_mode(reward)
        """The reward the network was trained on: what its value head estimates."""
        self.value_head_trained = True
        """False for a checkpoint trained with a privileged critic: that critic took the value head's place in
        training, so the head's output means nothing (`load_policy` reads it from the metadata)."""
        self.hand_head: tuple[np.ndarray, np.ndarray] | None = None
        """A rank network's hand head, (weight[W, k], bias[k]) (`load_policy` sets it where the checkpoint has
        one): see `predicted_hidden`."""
        self.privileged_value: PrivilegedValue | None = None
        """A checkpoint's privileged critic (`load_policy` sets it where the checkpoint has one), for a search's
        leaves. It reads observations at the network's own padding (``network_players`` seats)."""

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(logits float32[B, A], value float32[B]) for this player's observations, in its action encoding.

        The value is the network's estimate of the acting seat's training reward
        (`reward`) from here to the end. Actions the network's padding cannot
        express (none, for a table it can seat) get `MASKED_LOGIT`.
        """
        logits, value = self._padded_forward(obs, with_value=True)
        assert value is not None  # asked for with the logits
        return logits, value

    def action_values(self, obs: np.ndarray) -> np.ndarray:
        """float32[B, A]: the network's logit of every action of this player's encoding (the search's prior)."""
        return self._padded_forward(obs, with_value=False)[0]

    def predicted_hidden(self, obs: np.ndarray) -> np.ndarray:
        """float32[B, m + 1, 14]: the hand head's guess of each seat's cards per rank slot (relative seats of the
        network's own padding ``m``, 0 the observer) and the deck's, from this player's observations."""
        if self.hand_head is None:
            raise ValueError(f"{self.name} has no hand head (train with rouba-train --hand-coef)")
        obs = self._network_observations(np.asarray(obs, dtype=np.float32).reshape(-1, self.encoder.size))
        assert isinstance(self.network, RankNetwork)  # load_policy sets a hand head on rank networks only
        return self.network.hidden_cards(obs, self.hand_head).reshape(len(obs), -1, NUM_RANK_SLOTS)

    def _network_observations(self, obs: np.ndarray) -> np.ndarray:
        """float32[B, D]: this table's observations laid out at the network's own padding (zeros for seats it lacks)."""
        if self._obs_index is None:
            return obs
        return np.where(self._obs_index >= 0, obs[:, self._obs_index], np.float32(0.0))

    def _padded_forward(self, obs: np.ndarray, with_value: bool) -> tuple[np.ndarray, np.ndarray | None]:
        obs = self._network_observations(np.asarray(obs, dtype=np.float32).reshape(-1, self.encoder.size))
        logits, value = forward_in_chunks(self.network, obs, with_value)
        if self._action_index is None:
            return logits, value
        values = np.full((len(obs), self.actions.size), MASKED_LOGIT, dtype=np.float32)
        expressible = self._action_index >= 0
        values[:, self._action_index[expressible]] = logits[:, expressible]
        return values, value

    plays_in_batch = True

    def _network_logits(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bounded logits[B, A'], legal bool[B, A']) in the network's own action encoding.

        Whatever the weights make of them (an overflow to -inf, a NaN), legal actions stay finite and
        above every illegal one, so the choice is always legal. Logits already within the bounds come
        back as the network's float32 (exact in float64); others as clipped float64.
        """
        obs, legal = self.checked(obs, mask)
        obs = self._network_observations(obs)
        if self._action_index is not None:
            legal = np.where(self._action_index >= 0, legal[:, self._action_index], False)
        logits, _ = forward_in_chunks(self.network, obs, with_value=False)
        if logits.size and -LOGIT_BOUND <= logits.min() and logits.max() <= LOGIT_BOUND:  # False for a NaN
            return logits, legal
        return np.clip(np.nan_to_num(logits.astype(np.float64), nan=-LOGIT_BOUND), -LOGIT_BOUND, LOGIT_BOUND), legal

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: Randomness) -> np.ndarray:
        logits, legal = self._network_logits(obs, mask)
        if not self.deterministic:
            # Gumbel-max sampling with the caller's generator keeps play reproducible.
            logits = logits + -np.log(-np.log(uniform_rows(rng, *logits.shape).clip(1e-300, 1.0)))
        choice = np.where(legal, logits, -np.inf).argmax(axis=1)
        if self._action_index is not None:
            choice = self._action_index[choice]
        return choice.astype(np.int64)

    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float64[B, A]: the probability `act_batch` plays each action: the softmax over the legal
        actions, or with ``deterministic`` all of it on the first legal action of the highest logit."""
        logits, legal = self._network_logits(obs, mask)
        masked = np.where(legal, logits.astype(np.float64), -np.inf)
        if self.deterministic:
            own = np.zeros(masked.shape)
            own[np.arange(len(masked)), masked.argmax(axis=1)] = 1.0
        else:
            own = np.exp(masked - masked.max(axis=1, keepdims=True))
            own /= own.sum(axis=1, keepdims=True)
        if self._action_index is None:
            return own
        probabilities = np.zeros((len(own), self.actions.size))
        expressible = self._action_index >= 0
        probabilities[:, self._action_index[expressible]] = own[:, expressible]
        return probabilities


def load_policy(path_or_name: str | Path, rules: RulesConfig | None = None, max_players: int | None = None,
                deterministic: bool = DETERMINISTIC_DEFAULT) -> NetworkPolicy:
    """A `Policy` from a checkpoint path or shipped name (``2p``, ``mixed``, ``3p``, ``4p``).

    ``rules`` defaults to the checkpoint's own. Rules it was not trained for
    (other variant flags, or more seats than its padding) are an error.
    """
    tensors, metadata = load_checkpoint(path_or_name)
    trained = RulesConfig.from_dict(metadata["rules"])
    name = path_or_name.strip() if isinstance(path_or_name, str) else None
    if rules is None and name in ALIAS_TABLE_SIZES:
        trained = RulesConfig.from_dict({**metadata["rules"], "num_players": ALIAS_TABLE_SIZES[name],
                                         "dealer": None})
    trained_max = int(metadata["max_players"])
    if rules is not None and not isinstance(rules, RulesConfig):
        raise ValueError(f"rules must be a RulesConfig or None, got {rules!r}")
    rules = trained if rules is None else rules
    if rules.num_players > trained_max:  # first: a bigger table's defaults (more decks) differ as a consequence
        raise CheckpointTableMismatch(f"checkpoint {path_or_name!r} plays at most {trained_max} players, "
                                      f"not {rules.num_players}")
    differences = [name for name in RULES_THAT_MUST_MATCH if getattr(rules, name) != getattr(trained, name)]
    if differences:
        raise CheckpointTableMismatch(f"checkpoint {path_or_name!r} was trained with other rules: {differences} "
                                      f"differ (trained: { {d: getattr(trained, d) for d in differences} })")
    network = network_from_tensors(tensors, metadata)
    reward = metadata.get("train_config", {}).get("reward", DEFAULT_VALUE_REWARD)
    policy = NetworkPolicy(network, rules, max_players, network_players=trained_max, deterministic=deterministic,
                           name=f"checkpoint:{path_or_name}", reward=reward,
                           network_version=int(metadata["observation_version"]))
    policy.value_head_trained = metadata.get("train_config", {}).get("critic", "shared") != "privileged"
    folder = resolve_checkpoint(path_or_name)
    critic = read_privileged_value(folder, metadata)
    if critic is not None:
        policy.privileged_value = PrivilegedValue(critic)
    hands = read_hand_head(folder, metadata)
    if hands is not None:
        policy.hand_head = (hands[HAND_HEAD_WEIGHT].T.copy(), hands[HAND_HEAD_BIAS])
    return policy


def checkpoint_player(rules: RulesConfig, max_players: int | None, argument: str | None = None,
                      deterministic: str = "true") -> NetworkPolicy:
    """The ``checkpoint:PATH_OR_NAME[,deterministic=false]`` player spec (see `rouba_env.players.registry`)."""
    if argument is None:
        raise ValueError("a checkpoint spec needs a path or name: checkpoint:PATH or checkpoint:2p")
    if deterministic not in ("true", "false"):
        raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
    return load_policy(argument, rules, max_players, deterministic=deterministic == "true")
