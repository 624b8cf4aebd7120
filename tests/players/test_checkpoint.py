"""Checkpoints without torch: saving, loading as a Policy, and a clear, cheap error for every crafted file."""

import json
import struct
import tracemalloc

import numpy as np
import pytest

import rouba_env
from rouba_env import preset
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.checkpoint import (
    MAX_METADATA_BYTES,
    shipped_dir,
    CheckpointError,
    write_checkpoint,
)
from rouba_env.players.network import load_policy
from rouba_env.players.registry import make_policy
from rouba_env.rules.engine import apply_move, is_terminal, new_game
from tests.players.helpers import random_tensors

CRAFTED_PEAK_BYTES = 5_000_000
"""A crafted checkpoint must be refused before anything big is allocated."""


@pytest.fixture
def saved(tmp_path):
    rules = preset("standard")
    write_checkpoint(tmp_path / "ckpt", random_tensors(rules, 4, (8,)), rules, max_players=4, hidden_sizes=(8,),
                     extra={"learner_steps": 10})
    return tmp_path / "ckpt"


def copy_with(saved, folder, metadata=None, weights=None):
    folder.mkdir()
    meta = json.loads((saved / "metadata.json").read_text())
    (folder / "metadata.json").write_text(metadata if isinstance(metadata, str) else json.dumps(meta | (metadata or {})))
    (folder / "model.safetensors").write_bytes(weights if weights is not None else (saved / "model.safetensors").read_bytes())
    return folder


def test_a_saved_policy_plays_legal_moves_at_2_3_and_4_seats(saved):
    for num_players in (2, 3, 4):
        rules = preset("standard", num_players=num_players)
        policy = make_policy(f"checkpoint:{saved}", rules)
        encoder, actions = ObservationEncoder(rules), ActionEncoding(rules)
        rng = np.random.default_rng(num_players)
        state = new_game(rules, rng)
        while not is_terminal(state):
            mask = actions.mask(state)
            action = policy.act(encoder.encode(state, state.current), mask, rng)
            assert mask[action]
            state = apply_move(state, actions.decode(action))


def test_the_weights_file_is_safetensors_not_pickle(saved):
    assert (saved / "model.safetensors").read_bytes()[8:9] == b"{", "safetensors starts with a JSON header"
    assert json.loads((saved / "metadata.json").read_text())["learner_steps"] == 10


def test_one_sampling_default_everywhere(saved):
    rules = preset("standard")
    assert load_policy(saved).deterministic is True
    assert rouba_env.load_policy(saved).deterministic is True
    assert make_policy(f"checkpoint:{saved}", rules).deterministic is True
    assert make_policy(f"checkpoint:{saved},deterministic=false", rules).deterministic is False


def header_with(saved, change):
    data = (saved / "model.safetensors").read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    change(header)
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data[8 + size:]


def crafted_cases(saved):
    """(name, metadata change or raw metadata, weights bytes or None, expected message)."""
    weights = (saved / "model.safetensors").read_bytes()
    nan = {**random_tensors(preset("standard"), 4, (8,))}
    nan["policy_head.bias"][3] = np.nan
    from safetensors.numpy import save

    return [
        ("huge hidden sizes", {"hidden_sizes": [12000, 12000]}, None, "hidden_sizes must be"),
        ("billion wide", {"hidden_sizes": [1000000000]}, None, "hidden_sizes must be"),
        ("negative size", {"hidden_sizes": [-5]}, None, "hidden_sizes must be"),
        ("string size", {"hidden_sizes": ["256"]}, None, "hidden_sizes must be"),
        ("too many layers", {"hidden_sizes": [8] * 50}, None, "hidden_sizes must be"),
        ("deep nesting", '{"a":' * 20000 + "1" + "}" * 20000, None, "not valid JSON"),
        ("huge metadata", json.dumps({"pad": "x" * (MAX_METADATA_BYTES + 1)}), None, "larger than the"),
        ("bool size", {"obs_size": True}, None, "must be an int"),
        ("wrong obs size", {"obs_size": 99}, None, "obs_size=99"),
        ("other version", {"observation_version": 0}, None, "observation encoding version 0"),
        ("bad rules", {"rules": {"num_players": 99}}, None, "rules are invalid"),
        ("padding too small", {"max_players": 1}, None, "max_players=1"),
        ("shape mismatch", {"hidden_sizes": [9]}, None, "tensor trunk.0.weight"),
        ("truncated", None, weights[:100], "damaged or truncated|outside the file"),
        ("empty", None, b"", "too short"),
        ("header claims 1 TB", None, struct.pack("<Q", 1 << 40) + weights[8:], "header claims"),
        ("header not json", None, struct.pack("<Q", 4) + b"nope" + weights[12:], "not valid JSON"),
        ("float64 tensor", None, header_with(saved, lambda h: h["value_head.bias"].update(dtype="F64")), "F32"),
        ("offsets outside", None, header_with(saved, lambda h: h["value_head.bias"].update(
            data_offsets=[10**12, 10**12 + 4])), "outside the file"),
        ("missing tensor", None, header_with(saved, lambda h: h.pop("value_head.bias")), "missing"),
        ("nan weights", None, save(nan), "non-finite"),
        ("foreign", '{"hello": 1}', None, "not a rouba_env policy checkpoint"),
        ("not json", "not json", None, "not valid JSON"),
    ]


def test_every_crafted_checkpoint_fails_cheaply_with_a_clear_error(saved, tmp_path):
    for index, (name, metadata, weights, message) in enumerate(crafted_cases(saved)):
        folder = copy_with(saved, tmp_path / f"case{index}", metadata, weights)
        tracemalloc.start()
        try:
            with pytest.raises(CheckpointError, match=message):
                load_policy(folder)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < CRAFTED_PEAK_BYTES, (name, peak)


def test_load_errors_say_what_is_wrong(saved):
    with pytest.raises(FileNotFoundError, match="no checkpoint at 'nothing-here'"):
        load_policy("nothing-here")
    with pytest.raises(CheckpointError, match="trained with other rules"):
        load_policy(saved, rules=preset("jokers"))
    with pytest.raises(CheckpointError, match="plays at most 4 players, not 5"):
        load_policy(saved, rules=preset("standard", num_players=5, decks=1))
    with pytest.raises(CheckpointError, match="plays at most 4 players, not 5"):  # not its 5-player default's decks
        load_policy(saved, rules=preset("standard", num_players=5))
    with pytest.raises(CheckpointError, match=r"\['table_cards'\] differ"):
        load_policy(saved, rules=preset("eight_table"))
    with pytest.raises(ValueError, match="needs a path or name"):
        make_policy("checkpoint", preset("standard"))
    with pytest.raises(ValueError, match="deterministic must be true or false"):
        make_policy(f"checkpoint:{saved},deterministic=maybe", preset("standard"))
    assert rouba_env.load_policy(saved).name.startswith("checkpoint:")


def test_shipped_checkpoints_load_and_play():
    names = sorted(p.name for p in shipped_dir().iterdir() if (p / "metadata.json").exists())
    assert names == ["2p", "2p-0.3", "mixed"]
    for name in names:
        meta = json.loads((shipped_dir() / name / "metadata.json").read_text())
        rules = preset("standard", num_players=min(meta["max_players"], 2))
        policy = make_policy(f"checkpoint:{name}", rules)
        state = new_game(rules, np.random.default_rng(0))
        mask = ActionEncoding(rules).mask(state)
        assert mask[policy.act(ObservationEncoder(rules).encode(state, 0), mask, np.random.default_rng(1))]


def test_shipped_names_cover_two_three_and_four_players():
    for name, players in (("2p", 2), ("3p", 3), ("4p", 4), ("mixed", 4)):
        rules = preset("standard", num_players=players)
        policy = make_policy(f"checkpoint:{name}", rules)
        state = new_game(rules, np.random.default_rng(players))
        mask = ActionEncoding(rules).mask(state)
        assert mask[policy.act(ObservationEncoder(rules).encode(state, 0), mask, np.random.default_rng(0))]
    with pytest.raises(CheckpointError, match="plays at most 2 players, not 3"):
        make_policy("checkpoint:2p", preset("standard", num_players=3))


def test_a_run_folder_means_its_latest_policy(saved, tmp_path, capsys):
    from rouba_env.cli.evaluate import main as evaluate_main

    run = tmp_path / "run"
    (run / "policy").mkdir(parents=True)
    for name in ("metadata.json", "model.safetensors"):
        (run / "policy" / name).write_bytes((saved / name).read_bytes())
    policy = make_policy(f"checkpoint:{run}", preset("standard"))
    assert policy.network.obs_size == load_policy(saved).network.obs_size
    assert evaluate_main(["--players", f"checkpoint:{run}", "random", "--games", "2", "--no-progress",
                          "--json", str(tmp_path / "out.json")]) == 0
    assert f"checkpoint:{run}: the run's latest policy, {run / 'policy'}" in capsys.readouterr().err
    with pytest.raises(CheckpointError, match="metadata.json is missing"):
        make_policy(f"checkpoint:{tmp_path / 'out.json'}", preset("standard"))


def test_the_3p_and_4p_aliases_play_their_table_size():
    assert load_policy("3p").rules.num_players == 3 and load_policy("4p").rules.num_players == 4
    assert load_policy("mixed").rules.num_players == 2


def test_shipped_names_always_mean_the_shipped_checkpoints(tmp_path, monkeypatch):
    from rouba_env.players.checkpoint import CheckpointError, resolve_checkpoint, shipped_dir
    from rouba_env.players.checkpoint import write_checkpoint
    from rouba_env.players.network import load_policy
    from rouba_env.players.registry import make_policy
    from rouba_env.rules.config import preset
    from tests.players.helpers import random_tensors

    rules = preset("standard")
    write_checkpoint(tmp_path / "2p", random_tensors(rules, 2, (8,)), rules, max_players=2, hidden_sizes=(8,))
    monkeypatch.chdir(tmp_path)
    assert resolve_checkpoint("2p") == shipped_dir() / "2p"
    assert resolve_checkpoint("./2p").resolve() == (tmp_path / "2p").resolve(), "a local folder is a path"
    assert load_policy("2p ").network.obs_size == load_policy("2p").network.obs_size
    assert make_policy("checkpoint:2p ", rules).name == make_policy("checkpoint:2p", rules).name
    local = load_policy("./2p")
    assert type(local.network).__name__ == "MLP" and type(load_policy("2p").network).__name__ == "RankNetwork"
    with pytest.raises(CheckpointError, match="cannot open checkpoint"):
        load_policy("x" * 300)


def test_a_version_1_checkpoint_reads_its_prefix_of_todays_observation():
    from rouba_env.batched.game import VectorGame
    from rouba_env.encoding.observation import OBSERVATION_VERSION, observation_layout

    policy = load_policy("2p-0.3")  # trained on observation version 1
    assert policy.network_version == 1 < OBSERVATION_VERSION
    game = VectorGame(policy.rules, 256, seed=5)
    game.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        game.step(game.random_actions(rng))
    prefix = observation_layout(2, version=1)["rules"].stop
    assert game.obs.shape[1] > prefix and game.obs[:, prefix:].any(), "today's observation carries the table talk"
    logits, _ = policy.network.forward(game.obs[:, :prefix])
    expected = np.where(game.mask.astype(bool), logits, -np.inf).argmax(axis=1)
    np.testing.assert_array_equal(policy.act_batch(game.obs, game.mask, rng), expected)


def test_a_new_checkpoint_records_the_version_it_was_trained_on(tmp_path):
    from rouba_env.encoding.observation import OBSERVATION_VERSION

    rules = preset("standard")
    folder = write_checkpoint(tmp_path / "new", random_tensors(rules, 2, (8,)), rules, max_players=2, hidden_sizes=(8,))
    assert json.loads((folder / "metadata.json").read_text())["observation_version"] == OBSERVATION_VERSION
    assert load_policy(folder).network_version == OBSERVATION_VERSION


def test_the_0_3_network_stays_reachable_by_name():
    """``checkpoint:2p-0.3`` is 0.3.0's 2p, frozen, for head-to-head comparisons whatever 2p becomes."""
    import hashlib

    old = (shipped_dir() / "2p-0.3" / "model.safetensors").read_bytes()
    assert hashlib.sha256(old).hexdigest()[:16] == "4da220c543c414b5", "0.3.0's weights, unchanged"
    assert json.loads((shipped_dir() / "2p-0.3" / "metadata.json").read_text())["observation_version"] == 1
    assert make_policy("checkpoint:2p-0.3", preset("standard")).network.obs_size == 100 and len(old) > 0


def privileged_tensors(rules, max_players, widths=(6,), seed=0):
    encoder = ObservationEncoder(rules, max_players)
    rng = np.random.default_rng(seed)
    tensors, width = {}, encoder.size + encoder.hidden_size
    for layer, size in enumerate([*widths, 1]):
        tensors[f"{2 * layer}.weight"] = rng.normal(size=(size, width)).astype(np.float32)
        tensors[f"{2 * layer}.bias"] = rng.normal(size=size).astype(np.float32)
        width = size
    return tensors


def test_a_privileged_value_ships_beside_the_actor_and_is_checked_like_it(tmp_path):
    rules = preset("standard")
    critic = privileged_tensors(rules, 2)
    write_checkpoint(tmp_path / "ckpt", random_tensors(rules, 2, (8,)), rules, max_players=2, hidden_sizes=(8,),
                     privileged_value=critic)
    policy = load_policy(tmp_path / "ckpt")
    assert json.loads((tmp_path / "ckpt" / "metadata.json").read_text())["privileged_value"] == {
        "widths": [6], "hidden_size": ObservationEncoder(rules, 2).hidden_size}
    obs = np.ones((2, policy.encoder.size), np.float32)
    hidden = np.zeros((2, policy.encoder.hidden_size), np.float32)
    inputs = np.concatenate([obs, hidden], axis=1)
    expected = np.maximum(inputs @ critic["0.weight"].T + critic["0.bias"], 0) @ critic["2.weight"].T + critic["2.bias"]
    assert np.allclose(policy.privileged_value.forward(obs, hidden), expected[:, 0], atol=1e-4)
    assert load_policy("2p-0.3").privileged_value is None, "checkpoints without one load as before"
    assert load_policy("2p").privileged_value is not None, "the shipped 2p carries its critic for the search"
    with pytest.raises(ValueError, match="privileged_value tensors must have the shapes"):
        write_checkpoint(tmp_path / "bad", random_tensors(rules, 2, (8,)), rules, max_players=2, hidden_sizes=(8,),
                         privileged_value={**critic, "2.bias": np.zeros(3, np.float32)})
    meta = json.loads((tmp_path / "ckpt" / "metadata.json").read_text())
    for name, change, message in [
        ("malformed", {"privileged_value": {"widths": "many"}}, "privileged_value must be"),
        ("wider than the file", {"privileged_value": {"widths": [7], "hidden_size": meta["privileged_value"]["hidden_size"]}},
         "tensor 0.weight"),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "metadata.json").write_text(json.dumps(meta | change))
        for file in ("model.safetensors", "privileged_value.safetensors"):
            (folder / file).write_bytes((tmp_path / "ckpt" / file).read_bytes())
        with pytest.raises(CheckpointError, match=message):
            load_policy(folder)
    (tmp_path / "ckpt" / "privileged_value.safetensors").unlink()
    with pytest.raises(CheckpointError, match="has no privileged_value.safetensors"):
        load_policy(tmp_path / "ckpt")


def test_a_hand_head_ships_with_a_rank_network_only_and_is_checked(tmp_path):
    from rouba_env.players.checkpoint import rank_network_shapes

    rules = preset("standard")
    meta = {"obs_size": ObservationEncoder(rules, 2).size, "num_actions": ActionEncoding(rules, 2).size,
            "max_players": 2, "hidden_sizes": [8, 4], "observation_version": 2, "architecture": "rank"}
    rng = np.random.default_rng(0)
    tensors = {name: rng.normal(size=shape).astype(np.float32) for name, shape in rank_network_shapes(meta).items()}
    hands = {"weight": rng.normal(size=(3, 4)).astype(np.float32), "bias": np.zeros(3, np.float32)}
    write_checkpoint(tmp_path / "rank", tensors, rules, max_players=2, hidden_sizes=(8, 4), architecture="rank",
                     hand_head=hands)
    policy = load_policy(tmp_path / "rank")
    assert policy.predicted_hidden(np.zeros((2, policy.encoder.size), np.float32)).shape == (2, 3, 14)
    with pytest.raises(ValueError, match="has no hand head"):
        load_policy("2p").predicted_hidden(np.zeros((1, policy.encoder.size), np.float32))
    with pytest.raises(CheckpointError, match="rank networks only"):
        write_checkpoint(tmp_path / "mlp", random_tensors(rules, 2, (8,)), rules, max_players=2, hidden_sizes=(8,),
                         hand_head=hands)
    with pytest.raises(ValueError, match="hand_head tensors must have the shapes"):
        write_checkpoint(tmp_path / "bad", tensors, rules, max_players=2, hidden_sizes=(8, 4), architecture="rank",
                         hand_head={**hands, "bias": np.zeros(5, np.float32)})
    (tmp_path / "rank" / "hand_head.safetensors").unlink()
    with pytest.raises(CheckpointError, match="has no hand_head.safetensors"):
        load_policy(tmp_path / "rank")
