"""Checkpoints: saving, loading as a Policy, and clear errors for anything wrong."""

import json

import numpy as np
import pytest

from rouba_env import preset
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.players.network import SHIPPED_DIR, ActorCritic, load_policy, save_policy
from rouba_env.rules.engine import apply_move, is_terminal, new_game
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.players.registry import make_policy


@pytest.fixture
def saved(tmp_path):
    rules = preset("standard")
    network = ActorCritic(ObservationEncoder(rules, 4).size, ActionEncoding(rules, 4).size, (8,))
    save_policy(tmp_path / "ckpt", network, rules, 4, extra={"learner_steps": 10})
    return tmp_path / "ckpt"


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


def test_load_errors_say_what_is_wrong(saved, tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint at 'nothing-here'"):
        load_policy("nothing-here")
    with pytest.raises(ValueError, match="trained with other rules"):
        load_policy(saved, rules=preset("jokers"))
    with pytest.raises(ValueError, match="plays at most 4 players, not 5"):
        load_policy(saved, rules=preset("standard", num_players=5, decks=1))
    truncated = tmp_path / "truncated"
    truncated.mkdir()
    (truncated / "metadata.json").write_text((saved / "metadata.json").read_text())
    (truncated / "model.safetensors").write_bytes((saved / "model.safetensors").read_bytes()[:100])
    with pytest.raises(ValueError, match="not a readable safetensors file"):
        load_policy(truncated)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "metadata.json").write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a rouba_env policy checkpoint"):
        load_policy(foreign)
    (foreign / "metadata.json").write_text("not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_policy(foreign)
    old = tmp_path / "old"
    old.mkdir()
    meta = json.loads((saved / "metadata.json").read_text())
    (old / "metadata.json").write_text(json.dumps(meta | {"observation_version": 0}))
    (old / "model.safetensors").write_bytes((saved / "model.safetensors").read_bytes())
    with pytest.raises(ValueError, match="observation encoding version 0"):
        load_policy(old)
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "metadata.json").write_text(json.dumps(meta | {"hidden_sizes": [9]}))
    (wrong / "model.safetensors").write_bytes((saved / "model.safetensors").read_bytes())
    with pytest.raises(ValueError, match="does not match the network"):
        load_policy(wrong)
    with pytest.raises(ValueError, match="needs a path or name"):
        make_policy("checkpoint", preset("standard"))


def test_shipped_checkpoints_load_and_play():
    names = sorted(p.name for p in SHIPPED_DIR.iterdir() if (p / "metadata.json").exists())
    assert names, "checkpoints/ ships at least one policy"
    for name in names:
        meta = json.loads((SHIPPED_DIR / name / "metadata.json").read_text())
        rules = preset("standard", num_players=min(meta["max_players"], 2))
        policy = make_policy(f"checkpoint:{name}", rules)
        mask = ActionEncoding(rules).mask(new_game(rules, np.random.default_rng(0)))
        obs = ObservationEncoder(rules).encode(new_game(rules, np.random.default_rng(0)), 0)
        assert mask[policy.act(obs, mask, np.random.default_rng(1))]


def test_damaged_metadata_fields_and_other_table_rules_are_named(saved, tmp_path):
    meta = json.loads((saved / "metadata.json").read_text())
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.safetensors").write_bytes((saved / "model.safetensors").read_bytes())
    (broken / "metadata.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "obs_size"}))
    with pytest.raises(ValueError, match="field 'obs_size' is missing"):
        load_policy(broken)
    with pytest.raises(ValueError, match=r"\['table_cards'\] differ"):
        load_policy(saved, rules=preset("eight_table"))
    import rouba_env

    assert rouba_env.load_policy(saved).name.startswith("checkpoint:")


def test_shipped_names_cover_two_three_and_four_players():
    for name, players in (("2p", 2), ("3p", 3), ("4p", 4), ("mixed", 4)):
        rules = preset("standard", num_players=players)
        policy = make_policy(f"checkpoint:{name}", rules)
        state = new_game(rules, np.random.default_rng(players))
        mask = ActionEncoding(rules).mask(state)
        assert mask[policy.act(ObservationEncoder(rules).encode(state, 0), mask, np.random.default_rng(0))]
    with pytest.raises(ValueError, match="plays at most 2 players, not 3"):
        make_policy("checkpoint:2p", preset("standard", num_players=3))
