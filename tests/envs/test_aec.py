import re

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import rouba_env
from rouba_env.table import IllegalActionWarning
from rouba_env.rules.config import PRESET_FIELDS

TABLES = [dict(num_players=n) for n in (2, 3, 4, 8)] + [dict(rules=name) for name in sorted(PRESET_FIELDS)]


@pytest.mark.parametrize("kwargs", TABLES, ids=[str(k) for k in TABLES])
def test_pettingzoo_api_and_seed(kwargs):
    api_test(rouba_env.env(**kwargs), num_cycles=120)
    seed_test(lambda: rouba_env.env(**kwargs), num_cycles=60)


@pytest.mark.parametrize("name", ["draw_from_deck", "jokers"])
@pytest.mark.parametrize("num_players", [3, 8])
def test_variants_with_more_players(name, num_players):
    api_test(rouba_env.env(rules=name, num_players=num_players), num_cycles=60)


def play_random(env, seed):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        trace.append((agent, reward, obs["observation"].tobytes(), info.get("scores")))
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
    return trace


def test_rewards_only_at_the_end_and_scores_in_infos():
    env = rouba_env.env(num_players=3)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated:
            break
        assert reward == 0
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    raw = env.unwrapped
    points = raw.infos["player_0"]["scores"]
    best = max(points)
    for seat, agent in enumerate(raw.possible_agents):
        expected = (1.0 if points.count(best) == 1 else 0.0) if points[seat] == best else -1.0
        assert raw._cumulative_rewards[agent] == expected


def test_margin_reward():
    trace = play_random(rouba_env.env(reward="margin"), 4)
    final = {agent: (reward, scores) for agent, reward, _, scores in trace if scores is not None}
    reward, points = final["player_0"]
    assert reward == pytest.approx((points[0] - points[1]) / 52)
    assert final["player_1"][0] == pytest.approx(-reward)


def test_reset_with_seed_reproduces_the_whole_game():
    assert play_random(rouba_env.env(num_players=4), 11) == play_random(rouba_env.env(num_players=4), 11)
    assert play_random(rouba_env.env(num_players=4), 11) != play_random(rouba_env.env(num_players=4), 12)


def test_observe_works_for_every_agent_with_zero_mask_off_turn():
    env = rouba_env.env(num_players=3)
    env.reset(seed=0)
    for agent in env.possible_agents:
        obs = env.observe(agent)
        assert obs["observation"].shape == env.observation_space(agent)["observation"].shape
        assert obs["action_mask"].any() == (agent == env.agent_selection)


def test_strict_mode_raises_clear_errors_and_changes_nothing():
    env = rouba_env.env(illegal_action="raise")
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    before = env.observe(env.agent_selection)["observation"].copy()
    illegal = int(np.flatnonzero(mask == 0)[0])
    for bad in (illegal, 9999, -1, "3", 2.0, True, None):
        with pytest.raises(ValueError, match=rf"illegal action {re.escape(repr(bad))} for player_\d \(.*\); legal actions: \["):
            env.step(bad)
    assert np.array_equal(env.observe(env.agent_selection)["observation"], before)
    assert not any(env.terminations.values())


@pytest.mark.parametrize("bad", ["illegal", 9999, -1, "3", 2.5, True, np.float64(1.0)])
def test_by_default_a_bad_action_ends_the_game_and_penalises_the_offender(bad):
    env = rouba_env.env(illegal_reward=-2.0)
    env.reset(seed=0)
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    action = int(np.flatnonzero(mask == 0)[0]) if bad == "illegal" else bad
    with pytest.warns(IllegalActionWarning, match="illegal action"):
        env.step(action)
    assert all(env.terminations.values())
    rewards = env.unwrapped._cumulative_rewards
    assert rewards[offender] == -2.0 and all(r == 0.0 for a, r in rewards.items() if a != offender)
    assert env.infos[offender]["illegal_action"] is True
    for agent in env.agent_iter():  # every agent steps out; the game stays over
        assert env.last()[2]
        env.step(None)
    assert env.agents == []


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="unknown reward 'score'"):
        rouba_env.env(reward="score")
    with pytest.raises(ValueError, match="unknown render_mode"):
        rouba_env.env(render_mode="video")
    with pytest.raises(ValueError, match="num_players=9"):
        rouba_env.env(num_players=9)
    with pytest.raises(ValueError, match="unknown illegal_action"):
        rouba_env.env(illegal_action="ignore")


def test_render_shows_faces_piles_and_deck(capsys):
    env = rouba_env.env(render_mode="ansi", num_players=3)
    env.reset(seed=2)
    text = env.render()
    assert "deck: 36 cards" in text
    assert "table: " in text and "player 2: pile empty" in text
    assert any(suit in text for suit in "♠♥♦♣")
    assert "player 0's hand:" in text
    human = rouba_env.env(render_mode="human")
    human.reset(seed=2)
    human.render()
    assert "table:" in capsys.readouterr().out


def test_state_vector_for_centralized_critics():
    env = rouba_env.env(num_players=3)
    env.reset(seed=1)
    state = env.state()
    assert state.shape == env.unwrapped.state_space.shape and state.dtype == np.float32
    assert state[-14:].sum() == 52 - 12 - 4, "the deck's ranks are in the full state"


@pytest.mark.slow
def test_import_does_not_pull_torch():
    import subprocess
    import sys

    code = "import sys, rouba_env, rouba_env.envs.aec, rouba_env.players.base; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_scripted_players_do_not_pull_torch():
    import subprocess
    import sys

    code = ("import sys; from rouba_env import preset; from rouba_env.players.registry import make_policy; "
            "[make_policy(s, preset('standard')) for s in ('random', 'greedy', 'heuristic', 'expert')]; "
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_versioned_module_is_the_aec_environment():
    from pettingzoo.test import api_test

    from rouba_env import rouba_monte_v0
    from rouba_env.envs import aec

    assert rouba_monte_v0.env is aec.env and rouba_monte_v0.raw_env is aec.raw_env
    api_test(rouba_monte_v0.env(num_players=3), num_cycles=50)


@pytest.mark.parametrize("call, error", [
    (lambda env: env.step(0), r"call reset\(\) before step\(\)"),
    (lambda env: env.observe("player_0"), r"call reset\(\) before observe\(\)"),
    (lambda env: env.render(), r"call reset\(\) before render\(\)"),
    (lambda env: env.agent_iter(), r"call reset\(\) before agent_iter\(\)"),
])
def test_calls_before_reset_are_refused(call, error):
    with pytest.raises(RuntimeError, match=error):
        call(rouba_env.env())


@pytest.mark.parametrize("field", ["agents", "agent_selection", "rewards", "infos", "num_agents"])
def test_fields_cannot_be_read_before_reset(field):
    env = rouba_env.env()
    with pytest.raises(AttributeError, match=f"{field} cannot be accessed before reset"):
        getattr(env, field)
    env.reset(seed=0)
    getattr(env, field)


def test_agent_iter_needs_a_step_between_agents_and_keeps_its_own_state():
    env = rouba_env.env()
    env.reset(seed=0)
    agents = env.agent_iter()
    next(agents)
    with pytest.raises(RuntimeError, match="need to call step"):
        next(agents)
    assert {"dealt", "moved"} <= set(vars(env)), "the order checks live on the wrapper's own flags"
    assert not {"_has_reset", "_has_updated"} & set(vars(env)), "no state of PettingZoo's private wrapper"


def test_a_step_after_the_end_warns_and_plays_nothing_as_pettingzoos_wrapper_does():
    """Our order enforcement against PettingZoo's own `OrderEnforcingWrapper` around the same raw env: the same
    game, then a step once every agent is done, which both answer with PettingZoo's warning alone."""
    from pettingzoo.utils.env_logger import EnvLogger
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    from rouba_env.envs.aec import raw_env

    outcomes = []
    for env in (rouba_env.env(), OrderEnforcingWrapper(raw_env())):
        env.reset(seed=3)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else int(np.flatnonzero(observation["action_mask"])[0]))
        rewards = dict(env.rewards)
        EnvLogger.flush()
        env.step(0)  # every agent is done
        outcomes.append((list(EnvLogger.mqueue), env.agents, rewards))
        EnvLogger.flush()
    ours, upstream = outcomes
    assert ours == upstream
    assert ours[0] == ["[WARNING]: step() called after all agents are terminated or truncated. Should reset() first."]
