"""The batched vector environment: the same games as N `SingleAgentEnv`s, Gymnasium's autoreset modes, bad input."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import rouba_env  # noqa: F401  (registers RoubaMonte-v0)
from rouba_env import SingleAgentEnv
from rouba_env.envs.vector_env import RoubaVectorEnv, make_vector_env
from rouba_env.table import IllegalActionWarning

STEPS = 120


def masked_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask.astype(bool)])


def draw_lineup(rng):
    """A sampler: a new opponent line-up every episode, drawn from the game's own Generator."""
    return [["random", "greedy", "heuristic"][int(rng.integers(3))]] * 2


@pytest.mark.parametrize("kwargs", [
    {"opponents": "random"},
    {"opponents": "heuristic", "seat": 1},
    {"opponents": "checkpoint:2p"},
    {"opponents": "checkpoint:2p,deterministic=false", "reward": "margin"},
    {"opponents": ["greedy", "random"], "rules": "standard", "num_players": 3, "dict_observation": True},
    {"opponents": draw_lineup, "num_players": 3},
    {"opponents": "heuristic", "rules": "jokers", "num_players": 4, "max_players": 4},
    {"opponents": "expert:samples=4", "rules": "small"},  # a player that decides row by row sits here too
])
def test_the_same_games_as_single_agent_envs_move_for_move(kwargs):
    num_envs, seed = 5, 40
    vector = gymnasium.make_vec("RoubaMonte-v0", num_envs=num_envs, **kwargs)
    assert isinstance(vector, RoubaVectorEnv)
    singles = [SingleAgentEnv(**kwargs) for _ in range(num_envs)]
    moves = [[] for _ in range(num_envs)], [[] for _ in range(num_envs)]  # every move, both ways

    def record_batched(slots, seats, actions):
        for slot, seat, action in zip(slots.tolist(), seats.tolist(), actions.tolist()):
            moves[0][slot].append((seat, action))

    vector.unwrapped.table.before_move = record_batched
    for i, env in enumerate(singles):
        env.single_game.before_move = lambda seat, action, i=i: moves[1][i].append((seat, action))
    obs, info = vector.reset(seed=seed)
    single = [env.reset(seed=seed + i) for i, env in enumerate(singles)]
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(STEPS):
        for i, (single_obs, single_info) in enumerate(single):
            np.testing.assert_array_equal(row(obs, i), row(single_obs))
            np.testing.assert_array_equal(info["action_mask"][i], single_info["action_mask"])
            assert info["seat"][i] == single_info["seat"]
        actions = masked_actions(info["action_mask"], rng)
        obs, rewards, terminated, truncated, info = vector.step(actions)
        assert not truncated.any()
        for i, env in enumerate(singles):
            single_obs, reward, done, _, single_info = env.step(int(actions[i]))
            assert (rewards[i], terminated[i]) == (reward, done)
            if done:
                finished += 1
                assert info["_final_obs"][i] and info["_final_info"][i]
                np.testing.assert_array_equal(row(info["final_obs"][i]), row(single_obs))
                assert info["final_info"]["scores"][i].tolist() == single_info["scores"]
                assert info["final_info"]["seat"][i] == single_info["seat"]
                single_obs, single_info = env.reset()
            single[i] = (single_obs, single_info)
    assert finished >= num_envs * 2
    assert moves[0] == moves[1], "the same moves, the opponents' included"
    assert sum(map(len, moves[0])) > 2 * STEPS * num_envs * 0.9


def row(obs, i=None):
    """Row ``i`` of a batch (or the whole of one observation) as one array, dict observations flattened."""
    if isinstance(obs, dict):
        return np.concatenate([row(obs["observation"], i), row(obs["action_mask"], i).astype(np.float32)])
    return obs if i is None else obs[i]


def test_same_step_autoreset_always_leaves_a_legal_action_and_reports_the_finished_game():
    envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=4, opponents="greedy")
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = envs.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(STEPS):
        assert info["action_mask"].any(axis=1).all()
        np.testing.assert_array_equal(envs.action_masks(), info["action_mask"].astype(bool))
        obs, rewards, terminated, _, info = envs.step(masked_actions(info["action_mask"], rng))
        if terminated.any():
            ended += int(terminated.sum())
            np.testing.assert_array_equal(info["_final_obs"], terminated)
            assert all((info["final_obs"][i] is None) != terminated[i] for i in range(4))
            for i in np.flatnonzero(terminated):
                scores = info["final_info"]["scores"][i].tolist()
                own = scores.pop(info["final_info"]["seat"][i])
                assert rewards[i] == (1.0 if own > max(scores) else -1.0 if own < max(scores) else 0.0)
        assert (rewards[~terminated] == 0).all()
    assert ended >= 8


def test_next_step_autoreset_returns_the_last_position_then_ignores_one_action():
    envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=3, opponents="random", autoreset_mode="next_step")
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = envs.reset(seed=2)
    rng = np.random.default_rng(2)
    previous = np.zeros(3, dtype=bool)
    restarts = 0
    for _ in range(STEPS):
        empty = ~info["action_mask"].any(axis=1)
        np.testing.assert_array_equal(empty, previous)
        actions = masked_actions(info["action_mask"], rng)
        actions[previous] = 10**6  # ignored: those rows only start their next game
        obs, rewards, terminated, _, info = envs.step(actions)
        assert (rewards[previous] == 0).all() and not terminated[previous].any()
        restarts += int(previous.sum())
        if terminated.any():
            assert info["_scores"][terminated].all() and "final_obs" not in info
        previous = terminated
    assert restarts >= 4


def test_next_step_mode_matches_gymnasiums_sync_vector_env():
    kwargs = {"opponents": "heuristic"}
    ours = gymnasium.make_vec("RoubaMonte-v0", num_envs=3, autoreset_mode=AutoresetMode.NEXT_STEP, **kwargs)
    sync = gymnasium.make_vec("RoubaMonte-v0", num_envs=3, vectorization_mode="sync", **kwargs)
    assert isinstance(sync, gymnasium.vector.SyncVectorEnv)
    (obs, info), (sync_obs, sync_info) = ours.reset(seed=9), sync.reset(seed=9)
    rng = np.random.default_rng(3)
    for _ in range(STEPS):
        np.testing.assert_array_equal(obs, sync_obs)
        np.testing.assert_array_equal(info["action_mask"], sync_info["action_mask"])
        actions = masked_actions(info["action_mask"], rng)
        obs, rewards, terminated, _, info = ours.step(actions)
        sync_obs, sync_rewards, sync_terminated, _, sync_info = sync.step(actions)
        np.testing.assert_array_equal(rewards, sync_rewards)
        np.testing.assert_array_equal(terminated, sync_terminated)


def test_reset_mask_and_per_game_seeds():
    envs = RoubaVectorEnv(3, opponents="greedy")
    first, _ = envs.reset(seed=[5, None, 7])
    again, _ = envs.reset(seed=[5, 6, 7])
    np.testing.assert_array_equal(first[[0, 2]], again[[0, 2]])
    single, _ = SingleAgentEnv(opponents="greedy").reset(seed=7)
    np.testing.assert_array_equal(again[2], single)
    before = envs.reset(seed=3)[0]
    after, _ = envs.reset(options={"reset_mask": np.array([False, True, False])})
    np.testing.assert_array_equal(before[[0, 2]], after[[0, 2]])
    with pytest.raises(ValueError, match="seed must be an int >= 0, None, or 3 of them"):
        envs.reset(seed={1, 2, 3})  # a set has no order: which game gets which seed?


def test_an_illegal_action_ends_only_its_game_or_raises():
    envs = RoubaVectorEnv(3, opponents="random")
    obs, info = envs.reset(seed=4)
    actions = masked_actions(info["action_mask"], np.random.default_rng(0))
    illegal = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    actions[1] = illegal
    with pytest.warns(IllegalActionWarning, match=f"illegal action {illegal} for the learner in seat .* of game slot 1"):
        obs, rewards, terminated, _, info = envs.step(actions)
    assert terminated.tolist() == [False, True, False] and rewards[1] == -1.0
    assert info["final_info"]["illegal_action"].tolist() == [False, True, False]
    strict = RoubaVectorEnv(2, opponents="random", illegal_action="raise")
    _, info = strict.reset(seed=4)
    before = strict.table.game.turns.copy()
    legal = masked_actions(info["action_mask"], np.random.default_rng(0))
    with pytest.raises(ValueError, match="game slot 1 .out of range 0..129"):
        strict.step(np.array([legal[0], 10**6]))
    np.testing.assert_array_equal(strict.table.game.turns, before)


@pytest.mark.parametrize("kwargs, message", [
    ({"num_envs": 0}, "num_envs"),
    ({"num_envs": 10**9}, "num_envs"),
    ({"num_envs": 2, "opponents": "nobody"}, "nobody"),
    ({"num_envs": 2, "seat": 5}, "seat"),
    ({"num_envs": 2, "reward": "score"}, "unknown reward"),
    ({"num_envs": 2, "autoreset_mode": "sometimes"}, "autoreset_mode"),
])
def test_bad_arguments_are_refused_before_any_game(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gymnasium.make_vec("RoubaMonte-v0", **kwargs)


def test_bad_calls_name_what_is_wrong():
    envs = RoubaVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, dtype=np.int64))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.zeros(3, dtype=np.int64))
    with pytest.warns(IllegalActionWarning, match=r"illegal action 0.0 .*not an integer action index"):
        envs.step(np.zeros(2))  # non-integer actions are illegal actions, as at every table
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=-1)
    with pytest.raises(ValueError, match=r"seed must be an int >= 0, None, or 2 of them .* got 1.5"):
        envs.reset(seed=1.5)
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": [1, 0]})
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['foo'\]; .* takes \['reset_mask'\]"):
        envs.reset(options={"foo": 1})


def test_the_gymnasium_environment_refuses_reset_options_it_does_not_know():
    # (The PettingZoo environment takes any: PettingZoo's api_test resets it with made-up options.)
    env = SingleAgentEnv()
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['foo'\]; .* takes none"):
        env.reset(options={"foo": 1})
    with pytest.raises(ValueError, match="options must be a dict or None"):
        env.reset(options=["foo"])
    env.reset(seed=0, options={})  # an empty dict asks for nothing


def test_the_gymnasium_vector_checks_of_spaces_hold():
    envs = gymnasium.make_vec("RoubaMonte-v0", num_envs=4, opponents="heuristic", dict_observation=True)
    obs, info = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    assert envs.single_observation_space.contains({key: value[0] for key, value in obs.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(30):
            obs, *_ = envs.step(masked_actions(info["action_mask"], np.random.default_rng(0)))
            info = _[-1]
            assert envs.observation_space.contains(obs)


def test_what_a_new_user_mistypes_gets_a_clear_error():
    from rouba_env.envs.sb3 import RoubaSB3VecEnv
    from rouba_env.rules.config import preset
    from rouba_env.table import Table

    with pytest.raises(TypeError, match=r"unexpected keyword argument 'foo': neither an option of this call nor a rules"):
        gymnasium.make_vec("RoubaMonte-v0", num_envs=2, foo=1)
    with pytest.raises(ValueError, match="vector_kwargs"):
        gymnasium.make_vec("RoubaMonte-v0", num_envs=2, vectorization_mode="sync", autoreset_mode="next_step")
    with pytest.raises(ValueError, match="not spec strings: make_policy"):
        Table(preset("standard"), 2, ["heuristic"])
    with pytest.raises(ValueError, match="same step"):
        RoubaSB3VecEnv(2, autoreset_mode="next_step")
    env = RoubaSB3VecEnv(3, opponents="random", seat="random")
    env.reset()
    assert env.get_attr("seat") == env.vector.learner.tolist()
    with pytest.raises(AttributeError, match="per game: 'seat'"):
        env.get_attr("nothing_like_this")
    table = Table(preset("standard"), 2)
    with pytest.raises(ValueError, match="holds no game yet"):
        table.play([0, 1], [0, 0])


def test_the_batched_info_has_the_keys_and_masks_of_gymnasiums_sync_env():
    batched = gymnasium.make_vec("RoubaMonte-v0", num_envs=3, opponents="random")
    sync = gymnasium.make_vec("RoubaMonte-v0", num_envs=3, opponents="random", vectorization_mode="sync")
    (_, fast), (_, slow) = batched.reset(seed=4), sync.reset(seed=4)
    assert sorted(fast) == sorted(slow) == ["_action_mask", "_seat", "action_mask", "seat"]
    for key in fast:
        np.testing.assert_array_equal(fast[key], slow[key])


def test_a_sampler_of_new_player_objects_holds_only_the_players_in_play():
    """A sampler that makes new players every episode: the table lets go of those no game seats."""
    from rouba_env.players.registry import make_policy

    num_envs = 16
    vector = RoubaVectorEnv(num_envs=num_envs, rules="mini",
                            opponents=lambda rng: [make_policy("random", "mini")])
    obs, info = vector.reset(seed=3)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(400):
        obs, rewards, terminated, truncated, info = vector.step(masked_actions(info["action_mask"], rng))
        episodes += int(terminated.sum())
    held = [player for player in vector.table.players if player is not None]
    assert episodes > 4 * num_envs, "enough episodes that an unbounded list would show"
    assert len(held) <= num_envs and len(vector.table.players) <= 2 * num_envs
    seated = {int(i) for i in vector.table.seats[vector.table.seats >= 0]}
    assert seated == {i for i, player in enumerate(vector.table.players) if player is not None}


def test_a_released_player_id_cannot_be_seated():
    from rouba_env.players.registry import make_policy
    from rouba_env.table import Table

    table = Table(rouba_env.make_rules("mini"), 2, players=[make_policy("random", "mini")])
    assert table.release_unseated() == 1
    with pytest.raises(ValueError, match=r"player ids must be the ids of added players \(\[\]\)"):
        table.seat([0, 1], [[0, -1], [0, -1]])
    assert table.add_player(make_policy("greedy", "mini")) == 0, "a released id is reused"


def test_rendered_frames_are_each_single_games_frames():
    """render() gives the frames of the chosen games, each the frame its own SingleAgentEnv shows."""
    kwargs = dict(rules="mini", opponents="random")
    vector = gymnasium.make_vec("RoubaMonte-v0", num_envs=3, render_mode="rgb_array", render_games=[2, 0], **kwargs)
    singles = [SingleAgentEnv(render_mode="rgb_array", **kwargs) for _ in range(3)]
    obs, info = vector.reset(seed=8)
    for i, env in enumerate(singles):
        env.reset(seed=8 + i)
    rng = np.random.default_rng(1)
    compared = 0
    while True:  # until the first game ends (after that the games are dealt from different seeds)
        frames = vector.render()
        assert isinstance(frames, tuple) and len(frames) == 2
        for frame, game in zip(frames, (2, 0)):
            assert frame.dtype == np.uint8 and frame.ndim == 3
            np.testing.assert_array_equal(frame, singles[game].render())
            compared += 1
        actions = masked_actions(info["action_mask"], rng)
        obs, rewards, terminated, truncated, info = vector.step(actions)
        if terminated.any():
            break
        for env, action in zip(singles, actions):
            env.step(action)
    assert compared >= 4


def test_ansi_rendering_and_the_first_games():
    vector = RoubaVectorEnv(num_envs=4, rules="mini", render_mode="ansi", render_games=2)
    vector.reset(seed=3)
    texts = vector.render()
    assert len(texts) == 2 and all("deck" in text and "hand" in text for text in texts)


@pytest.mark.parametrize("kwargs, error", [
    ({"render_mode": "human"}, r"render_mode 'human' opens no window per game.*vectorization_mode='sync'"),
    ({"render_mode": "rgb", }, r"render_mode"),
    ({"render_mode": "ansi", "render_games": 5}, r"render_games must be an int in 1\.\.4, got 5"),
    ({"render_mode": "ansi", "render_games": [0, 4]}, r"render_games must list distinct game indices in 0\.\.3"),
    ({"render_mode": "ansi", "render_games": [1, 1]}, r"render_games must list distinct game indices"),
    ({"render_games": 2}, r"render_games picks the games render\(\) shows: it needs a render_mode"),
    ({"render_mode": "ansi", "render_games": "all"}, r"render_games must be None, a count or a list"),
])
def test_bad_render_settings_are_refused(kwargs, error):
    with pytest.raises(ValueError, match=error):
        RoubaVectorEnv(num_envs=4, rules="mini", **kwargs)


def test_gymnasiums_vector_video_recorder_records_the_batched_env(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers.vector import RecordVideo

    vector = RecordVideo(gymnasium.make_vec("RoubaMonte-v0", num_envs=2, rules="mini", render_mode="rgb_array",
                                            autoreset_mode="next_step"), str(tmp_path), episode_trigger=lambda e: e == 0)
    obs, info = vector.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs, rewards, terminated, truncated, info = vector.step(masked_actions(info["action_mask"], rng))
    vector.close()
    assert [path.suffix for path in tmp_path.iterdir()] == [".mp4"]


def test_a_vector_env_pickled_after_reset_plays_on_as_the_original():
    """Its per-game random streams pickle as their Generators (not as one process's addresses)."""
    import pickle

    env = make_vector_env(3, opponents="random", rules="small")
    _, info = env.reset(seed=5)
    copy = pickle.loads(pickle.dumps(env))
    rng = np.random.default_rng(0)
    for _ in range(12):
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in info["action_mask"]])
        obs, rewards, _, _, info = env.step(actions)
        copied_obs, copied_rewards, _, _, copied_info = copy.step(actions)
        assert np.array_equal(obs, copied_obs) and np.array_equal(rewards, copied_rewards)
        assert np.array_equal(info["action_mask"], copied_info["action_mask"])
