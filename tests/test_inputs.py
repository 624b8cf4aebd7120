"""Every public entry point refuses bad arguments with an error naming the value and what is allowed."""

import numpy as np
import pytest

from rouba_env.table import IllegalPlayerAction

import rouba_env
from rouba_env import RulesConfig, SingleAgentEnv, preset
from rouba_env.players.base import BasePolicy
from rouba_env.players.registry import make_policy
from rouba_env.rules import engine


class ReturnsAlways(BasePolicy):
    """A broken player: always the same action, legal or not."""

    def __init__(self, rules, action):
        super().__init__(rules)
        self.action, self.name = action, f"returns-{action!r}"

    def act(self, obs, mask, rng):
        return self.action


@pytest.mark.parametrize("bad", [1_000_000, -1, 2.5, "3", None])
def test_a_player_returning_a_bad_action_is_named(bad):
    rules = preset("standard")
    env = SingleAgentEnv(opponents=ReturnsAlways(rules, bad), seat=1)
    # One rule for every front end: the table names the player, its seat and the legal actions.
    message = r"player <ReturnsAlways returns-.*> in seat \d returned action .*, which is not legal; legal actions"
    with pytest.raises(IllegalPlayerAction, match=message):
        env.reset(seed=0)
    with pytest.raises(IllegalPlayerAction, match=message):
        rouba_env.evaluate([ReturnsAlways(rules, bad), "random"], games=2)


def test_moves_must_be_pairs_of_ints():
    state = engine.start_game(preset("standard"), 5)
    for bad in ((2.7, 0.4), (True, 0), ("2", 0), (1,), 3, None):
        with pytest.raises(ValueError, match="a move is a \\(kind, target\\) pair of ints"):
            engine.apply_move(state, bad)
    legal = engine.legal_moves(state)[0]
    assert engine.apply_move(state, (np.int64(legal.kind), np.int32(legal.target))).turn == 1


def test_numpy_integers_are_plain_integers():
    rules = RulesConfig(num_players=np.int64(3), table_cards=np.int32(4), dealer=np.int8(0), jokers=np.bool_(True))
    assert rules == RulesConfig(num_players=3, table_cards=4, dealer=0, jokers=True)
    assert type(rules.num_players) is int and type(rules.jokers) is bool
    env = SingleAgentEnv(seat=np.int64(1))
    env.reset(seed=0)
    assert env.learner == 1


def test_expert_search_budgets_are_bounded():
    rules = preset("standard")
    for spec in ("expert:samples=100000000", "expert:samples=0", "expert:max_scale=1000", "expert:endgame_nodes=-1"):
        with pytest.raises(ValueError, match=r"must be an int in \d+\.\.\d+"):
            make_policy(spec, rules)


@pytest.mark.parametrize("make", [rouba_env.env, rouba_env.raw_env, SingleAgentEnv])
def test_environment_arguments(make):
    with pytest.raises(ValueError, match="illegal_reward must be a finite number, got nan"):
        make(illegal_reward=float("nan"))
    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        make(illegal_reward="-1")
    with pytest.raises(ValueError, match="unknown illegal_action 'ignore'"):
        make(illegal_action="ignore")
    env = make()
    with pytest.raises(ValueError, match="seed must be None or an int >= 0, got Generator"):
        env.reset(seed=np.random.default_rng(0))
    with pytest.raises(ValueError, match="seed must be None or an int >= 0"):
        env.reset(seed=-3)


@pytest.mark.parametrize("make", [rouba_env.env, rouba_env.raw_env])
def test_aec_use_before_reset_and_after_the_end(make):
    env = make(render_mode="ansi")
    with pytest.raises((RuntimeError, AttributeError), match="reset"):
        env.observe("player_0")
    with pytest.raises((RuntimeError, AttributeError), match="reset"):
        env.render()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        env.observe("player_9")
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        env.step(None if terminated else int(np.flatnonzero(obs["action_mask"])[0]))
    if make is rouba_env.raw_env:
        with pytest.raises(RuntimeError, match="the game is over .* call reset"):
            env.step(0)  # the raw env: a step after the end is an error
    else:
        from pettingzoo.utils.env_logger import EnvLogger

        EnvLogger.flush()
        env.step(0)  # the wrapped env, as PettingZoo's wrapper: a logged warning, nothing played
        assert EnvLogger.mqueue and "step() called after all agents are terminated" in EnvLogger.mqueue[-1]
        EnvLogger.flush()


def test_single_agent_use_before_reset_and_after_the_end():
    env = SingleAgentEnv(render_mode="ansi")
    for call in (lambda: env.step(0), env.action_masks, env.render):
        with pytest.raises(RuntimeError, match="call reset"):
            call()
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(RuntimeError, match="the episode is over; call reset"):
        env.step(0)


@pytest.mark.parametrize("flag,target,reason", [
    ("--json", "/proc/nope.json", "files cannot be created in /proc"),
    ("--json", "FOLDER", "it is a folder"),
    ("--save-games", "FILE", "it is a file, not a folder"),
    ("--json", "FILE/x.json", "is not a folder"),
])
def test_evaluate_checks_its_output_paths_before_playing(flag, target, reason, tmp_path, capsys):
    from rouba_env.cli.evaluate import main

    (tmp_path / "FILE").write_text("x")
    (tmp_path / "FOLDER").mkdir()
    target = target.replace("FOLDER", str(tmp_path / "FOLDER")).replace("FILE", str(tmp_path / "FILE"))
    argv = ["--players", "random", "greedy", "--games", "2", "--no-progress", flag, target]
    if flag != "--json":
        argv += ["--json", str(tmp_path / "out.json")]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: cannot write") and reason in err and err.count("\n") == 1
    assert "win %" not in out, "no game is played before the paths are checked"


@pytest.mark.parametrize("flags, message", [
    (["--games", "-4"], "--games must be in 1..1,000,000, got -4"),
    (["--games", str(10**12)], "--games must be in 1..1,000,000, got 1000000000000"),
    (["--workers", "0"], "--workers must be in 1..256, got 0"),
    (["--workers", str(10**12)], "--workers must be in 1..256, got 1000000000000"),
    (["--seed", "-1"], "--seed must be in 0..9223372036854775807, got -1"),
    (["--seed", str(2**64 + 5)], f"--seed must be in 0..9223372036854775807, got {2**64 + 5}"),
])
def test_evaluate_names_a_bad_count_or_seed(flags, message, capsys):
    from rouba_env.cli.evaluate import main

    with pytest.raises(SystemExit):
        main(["--players", "random", "greedy", "--no-progress", *flags])
    assert message in capsys.readouterr().err


def test_a_seed_past_63_bits_is_refused_not_wrapped():
    # 5 and 2**64 + 5 would otherwise play the same deals
    with pytest.raises(ValueError, match="seed"):
        rouba_env.evaluate(["random", "random"], games=2, seed=2**64 + 5)
    assert rouba_env.evaluate(["random", "random"], games=2, seed=2**63 - 1).games == 2


@pytest.mark.parametrize("spec", ["random", "greedy", "heuristic", "checkpoint:2p", "expert:samples=2",
                                  "search:samples=1"])
def test_every_player_refuses_the_same_crafted_inputs_with_the_same_check(spec):
    rules = preset("standard")
    player = make_policy(spec, rules)
    env = SingleAgentEnv(seat=0)
    obs, info = env.reset(seed=0)
    mask = info["action_mask"]
    rng = np.random.default_rng(0)
    nan_mask = mask.astype(np.float64)
    nan_mask[np.flatnonzero(mask == 0)[0]] = np.nan
    half_mask = mask.astype(np.float64)
    half_mask[np.flatnonzero(mask == 0)[0]] = 0.5
    negative = obs.copy()
    negative[0] = -3  # -3 cards of a rank in hand
    too_many = obs.copy()
    too_many[0] = 5  # five aces from one deck
    assert mask[player.act(obs, mask, rng)]
    cases = ((obs[:-1], mask, f"observations must have {obs.size} entries"),
             (obs, np.append(mask, 0), "masks must have 130 entries"),
             (np.full_like(obs, np.nan), mask, "must be finite"),
             (obs, nan_mask, "holds only 0 and 1"), (obs, half_mask, "holds only 0 and 1"),
             (obs, mask.astype(str), "holds only 0 and 1"),
             (negative, mask, r"entry 0 \(hand\) holds -3.0"), (too_many, mask, r"entry 0 \(hand\) holds 5.0"),
             (np.array(1.0), mask, "1-d"), (obs, np.array(1), "1-d"))
    for bad_obs, bad_mask, message in cases:
        with pytest.raises(ValueError, match=message):
            player.act(bad_obs, bad_mask, rng)
    assert mask[player.act(obs.tolist(), mask.tolist(), rng)], "lists are read as arrays, by every player"
    assert mask[player.act(obs, mask.astype(np.float32), rng)], "a float mask of exact 0 and 1 is fine"


def test_a_network_whose_logits_overflow_still_plays_legally(tmp_path):
    from rouba_env.players.checkpoint import write_checkpoint
    from tests.players.helpers import random_tensors

    rules = preset("standard")
    tensors = random_tensors(rules, 2, (8,))
    tensors["policy_head.bias"][:] = -3e38  # finite weights; the logits become -inf
    write_checkpoint(tmp_path / "overflow", tensors, rules, max_players=2, hidden_sizes=(8,))
    for deterministic in ("true", "false"):
        player = make_policy(f"checkpoint:{tmp_path / 'overflow'},deterministic={deterministic}", rules)
        env = SingleAgentEnv(seat=0)
        obs, info = env.reset(seed=3)
        mask = info["action_mask"]
        assert mask[0] == 0 and mask[player.act(obs, mask, np.random.default_rng(0))] == 1


def test_the_batched_engine_refuses_a_state_with_a_card_too_many():
    from rouba_env.batched.game import VectorGame

    rules = preset("standard")
    state = engine.start_game(rules, 1)
    state.deck.append(state.deck[0])
    with pytest.raises(ValueError, match="holds 53 cards in 2 hands, 1 of them more than the decks have"):
        VectorGame.from_states(rules, [state])


@pytest.mark.parametrize("content", ["huge", "device", "folder"])
def test_checkpoint_metadata_errors_name_the_file(tmp_path, content):
    import json

    from rouba_env.players.checkpoint import CheckpointError, shipped_dir

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes((shipped_dir() / "2p-0.3" / "model.safetensors").read_bytes())
    meta = folder / "metadata.json"
    if content == "huge":
        data = json.loads((shipped_dir() / "2p-0.3" / "metadata.json").read_text())
        meta.write_text(json.dumps(data).replace('"obs_size": 100', '"obs_size": ' + "9" * 5000))
    elif content == "device":
        meta.symlink_to("/dev/zero")
    else:
        meta.mkdir()
    with pytest.raises(CheckpointError, match="metadata.json"):
        rouba_env.load_policy(folder)


def test_shipped_checkpoints_carry_no_machine_paths():
    from rouba_env.players.checkpoint import shipped_dir

    for folder in shipped_dir().iterdir():
        text = (folder / "metadata.json").read_text()
        assert "/work/" not in text and '"/' not in text and "checkpoint:/" not in text, folder.name


def test_steps_after_the_game_raise_in_the_raw_env_and_warn_in_the_wrapped_one():
    from pettingzoo.utils.env_logger import EnvLogger

    for make in (rouba_env.env, rouba_env.raw_env):
        env = make()
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in env.agent_iter():
            obs, _, terminated, _, _ = env.last()
            env.step(None if terminated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        rewards = dict(env.rewards)
        for action in (0, None):
            EnvLogger.flush()
            if make is rouba_env.raw_env:
                with pytest.raises(RuntimeError, match="the game is over"):
                    env.step(action)
            else:
                env.step(action)
                assert len(EnvLogger.mqueue) == 1
            assert dict(env.rewards) == rewards and env.agents == []
        EnvLogger.flush()


def test_evaluate_says_how_many_games_a_request_means_and_refuses_what_cannot_fit(capsys):
    from rouba_env.cli.evaluate import main

    assert main(["--players", *["random"] * 14, "--num-players", "8", "--games", "1", "--no-progress"]) == 2
    assert "3003 lineups, so one deal alone is 24024 games" in capsys.readouterr().err
    assert main(["--players", *["random"] * 40, "--num-players", "8", "--games", "1", "--no-progress"]) == 2
    assert "76904685 lineups" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["--seed", "-1"], "--seed: must be a whole number"),
    (["--seed", "9" * 5000], "--seed: must be a whole number"),
    (["--web", "--host", "256.1.1.1", "--port", "0"], "cannot listen on 256.1.1.1"),
    (["--web", "--save-games", "/proc/x"], "--save-games: cannot write /proc/x"),
    (["--seat", "5"], "--seat must be in 0..1, got 5"),
    (["--opponents", *["random"] * 8], "a table seats at most 8, so at most 7 opponents"),
])
def test_play_refuses_bad_options_with_one_line_and_status_2(argv, message, capsys):
    from rouba_env.cli.play import main

    try:
        status = main(argv)
    except SystemExit as stop:  # argparse's usage errors
        status = stop.code
    assert status == 2 and message in capsys.readouterr().err


def test_terminal_play_survives_a_million_digit_answer(monkeypatch, capsys):
    from rouba_env.cli import play

    answers = iter(["9" * 1_000_000, "q"])
    monkeypatch.setattr(play, "ask", lambda prompt: next(answers))
    assert play.main(["--seed", "1"]) == 0
    assert "please type a number" in capsys.readouterr().out


@pytest.mark.parametrize("opponents", [None, 3, b"heuristic"])
def test_an_environment_names_opponents_it_cannot_seat(opponents):
    with pytest.raises(ValueError, match="opponents must be a player spec, a Policy, a list of them"):
        SingleAgentEnv(opponents=opponents)


def test_a_preset_names_a_misspelt_field_as_the_environments_do():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'.*num_players, decks"):
        preset("standard", bogus=1)


@pytest.mark.parametrize("spec", ["random", "heuristic", "checkpoint:2p", "expert:samples=2", "search:samples=1"])
def test_act_wants_a_generator(spec):
    player = make_policy(spec, preset("standard"))
    obs, info = SingleAgentEnv(seat=0).reset(seed=0)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator .* got NoneType"):
        player.act(obs, info["action_mask"], None)


def test_an_illegal_joker_move_says_the_rules_have_no_jokers():
    from rouba_env.table import IllegalActionWarning

    env = SingleAgentEnv(seat=0, illegal_action="terminate")
    env.reset(seed=0)
    joker_steal = 129  # a joker standing for a king, onto the other seat's pile: an index of every table's encoding
    with pytest.warns(IllegalActionWarning, match=r"these rules have no jokers \(jokers=False\)"):
        env.step(joker_steal)
