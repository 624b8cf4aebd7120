"""Network players compute the same numbers for a row whatever the batch, the BLAS threads or the engine."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from rouba_env.batched.game import VectorGame
from rouba_env.players.dense import dense, padded_layer
from rouba_env.players.network import RankNetwork, load_policy

SHIPPED = ("2p", "2p-0.3", "mixed")


def sequential_reference(x, weight, bias, relu):
    """One float32 multiply and one float32 add per term, in the order of k: what `dense` promises."""
    total = np.zeros((x.shape[0], weight.shape[1]), np.float32)
    for k in range(x.shape[0] and x.shape[1]):
        total = total + x[:, k:k + 1] * weight[k]
    total = total + bias
    return np.maximum(total, np.float32(0.0)) if relu else total


@pytest.mark.parametrize("rows, inner, width", [(1, 1, 1), (3, 5, 10), (4, 13, 64), (9, 64, 64), (14, 64, 5),
                                                (6, 192, 1), (17, 7, 128)])
@pytest.mark.parametrize("relu", [False, True])
def test_dense_sums_each_output_in_order(rows, inner, width, relu):
    rng = np.random.default_rng(rows * 1000 + inner + width)
    x = (rng.standard_normal((rows, inner)) * (rng.random((rows, inner)) < 0.5)).astype(np.float32)
    weight = rng.standard_normal((inner, width)).astype(np.float32)
    bias = rng.standard_normal(width).astype(np.float32)
    got = dense(x, weight, bias, relu=relu)
    assert np.array_equal(got, sequential_reference(x, weight, bias, relu))
    alone = np.concatenate([dense(x[row:row + 1], weight, bias, relu=relu) for row in range(rows)])
    assert np.array_equal(got, alone)


def test_padded_layers_keep_their_outputs():
    rng = np.random.default_rng(5)
    x, weight, bias = rng.standard_normal((5, 7)), rng.standard_normal((7, 10)), rng.standard_normal(10)
    padded_weight, padded_bias = padded_layer(weight, bias)
    assert padded_weight.shape == (7, 16) and padded_bias.shape == (16,)
    out = dense(x, padded_weight, padded_bias)
    assert np.array_equal(out[:, :10], dense(x, weight, bias)) and not out[:, 10:].any()


def test_dense_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match=r"x\[B, K\] and weight\[K, J\].*\(2, 3\).*\(4, 5\)"):
        dense(np.zeros((2, 3)), np.zeros((4, 5)))
    with pytest.raises(ValueError, match="bias must have 5 entries"):
        dense(np.zeros((2, 4)), np.zeros((4, 5)), np.zeros(3))
    with pytest.raises(ValueError, match="out must be C-contiguous float32 of shape"):
        dense(np.zeros((2, 4)), np.zeros((4, 5)), out=np.zeros((2, 5)))


def positions(name: str, count: int = 1500):
    """(observations, masks, policy): positions of random play at the checkpoint's own table."""
    policy = load_policy(name)
    game = VectorGame(policy.rules, 128, seed=3)
    game.reset()
    rng = np.random.default_rng(4)
    seen, masks = [], []
    while sum(len(o) for o in seen) < count:
        seen.append(game.obs.copy())
        masks.append(game.mask.copy())
        game.step(game.random_actions(rng))
    return np.concatenate(seen)[:count], np.concatenate(masks)[:count], policy


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_networks_are_batch_and_thread_invariant(name):
    obs, masks, policy = positions(name)
    network = policy.network
    with threadpool_limits(1):
        whole, values = network.forward(obs)
    with threadpool_limits(2):
        two_threads, two_values = network.forward(obs)
        alone = [network.forward(obs[row:row + 1]) for row in range(0, len(obs), 37)]
    chunks = [network.forward(obs[start:start + 7]) for start in range(0, len(obs), 7)]
    assert np.array_equal(whole, two_threads) and np.array_equal(values, two_values)
    assert np.array_equal(whole, np.concatenate([logits for logits, _ in chunks]))
    assert np.array_equal(values, np.concatenate([value for _, value in chunks]))
    assert np.array_equal(whole[::37], np.concatenate([logits for logits, _ in alone]))
    with threadpool_limits(2):
        moves = policy.act_batch(obs, masks, np.random.default_rng(0))
    one_at_a_time = [policy.act(obs[row], masks[row], np.random.default_rng(0)) for row in range(0, len(obs), 37)]
    assert moves[::37].tolist() == one_at_a_time


def slot_mean(tokens: np.ndarray) -> np.ndarray:
    total = np.zeros((tokens.shape[0], tokens.shape[2]), np.float32)
    for slot in range(tokens.shape[1]):
        total = total + tokens[:, slot]
    return total / np.float32(tokens.shape[1])


def layer_by_layer(network: RankNetwork, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rank network written out with `dense`, a batch at a time (the compiled forward goes row by row)."""
    w = network.weights
    batch = len(obs)
    extended = np.concatenate([obs, np.zeros((batch, 1), np.float32), np.ones((batch, 1), np.float32)], axis=1)
    features = extended[:, network.first] * extended[:, network.second]
    slots = features.shape[1]
    context = dense(obs[:, network.context_index], w.context, w.context_bias, relu=True)
    tokens = dense(features.reshape(batch * slots, -1), w.token).reshape(batch, slots, -1)
    tokens = np.maximum(tokens + dense(context, w.token_context, w.token_bias)[:, None], np.float32(0.0))
    mean = slot_mean(tokens)
    row = (dense(mean, w.mix_pool) + dense(context, w.mix_context)) + w.mix_bias
    mixed = dense(tokens.reshape(batch * slots, -1), w.mix).reshape(batch, slots, -1)
    mixed = np.maximum(mixed + row[:, None], np.float32(0.0))
    heads = dense(mixed.reshape(batch * slots, -1), w.heads).reshape(batch, slots, -1)[:, :-1]
    targets = w.natural_bias.shape[0]
    joker = dense(mixed[:, -1], w.joker_context, w.joker_bias)[:, :targets]
    logits = np.concatenate([heads[:, :, :targets] + w.natural_bias,
                             heads[:, :, targets:2 * targets] + joker[:, None]], axis=1)
    value_in = np.concatenate([slot_mean(mixed), context], axis=1)
    return logits.reshape(batch, -1), dense(value_in, w.value, w.value_bias)[:, 0]


@pytest.mark.parametrize("name", SHIPPED)
def test_compiled_rank_forward_is_the_network_written_out(name):
    obs, _, policy = positions(name, 300)
    network = policy.network
    logits, values = network.forward(obs)
    expected_logits, expected_values = layer_by_layer(network, obs)
    assert np.array_equal(logits, expected_logits) and np.array_equal(values, expected_values)


def test_a_repeated_row_is_computed_once_with_the_same_numbers(monkeypatch):
    from rouba_env.players import network

    policy = load_policy("2p")
    game = VectorGame(policy.rules, 6, max_players=2)
    game.reset(3)
    obs = np.concatenate([game.obs, game.obs[[0, 0, 4, 0]]]).astype(np.float32)
    first, inverse = network.distinct_rows(obs)
    assert len(first) == 6 and np.array_equal(obs[first][inverse], obs)
    computed = []
    plain_forward = policy.network.forward
    monkeypatch.setattr(policy.network, "forward", lambda rows, *args: computed.append(len(rows)) or
                        plain_forward(rows, *args))
    logits, values = network.forward_in_chunks(policy.network, obs)
    assert computed == [6]
    reference, reference_values = plain_forward(obs)
    assert np.array_equal(logits, reference) and np.array_equal(values, reference_values)


def test_rows_whose_hashes_collide_are_not_merged(monkeypatch):
    from rouba_env.players import network

    monkeypatch.setattr(network, "_row_hashes", lambda bits: np.zeros(len(bits), np.uint64))
    obs = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert network.distinct_rows(obs) is None
