"""The standard checkers pass on the defaults, with no extra arguments."""

import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from pettingzoo.test import api_test, seed_test

import rouba_env
from rouba_env.table import IllegalActionWarning


def test_gymnasium_check_env_on_the_registered_default(capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gymnasium_check_env(gymnasium.make("RoubaMonte-v0").unwrapped)
    # It steps an action drawn before a reset to another deal (so illegal there), and renders "human".
    assert {type(w.message) for w in caught} <= {IllegalActionWarning}, [str(w.message) for w in caught]
    assert capsys.readouterr().out.count("player 0: pile") == 2, "the two human renders it asks for, no more"
    with warnings.catch_warnings():  # the quiet form docs/gymnasium.md gives
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", IllegalActionWarning)
        gymnasium_check_env(gymnasium.make("RoubaMonte-v0").unwrapped, skip_render_check=True)
    assert capsys.readouterr().out == ""


def test_stable_baselines3_check_env_on_the_default():
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning of sb3's about our spaces either
        warnings.simplefilter("ignore", IllegalActionWarning)
        check_env(rouba_env.SingleAgentEnv())


def test_pettingzoo_api_test_and_seed_test_on_the_default():
    api_test(rouba_env.env(), num_cycles=200)
    seed_test(rouba_env.env, num_cycles=200)


def test_the_default_illegal_move_convention_is_documented_and_strict_mode_raises():
    env = rouba_env.env()
    assert env.unwrapped.illegal_action == "terminate"
    assert "terminate" in rouba_env.raw_env.__doc__ and "raise" in rouba_env.raw_env.__doc__
    strict = rouba_env.env(illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(10_000)


def test_the_checkers_pass_with_frames_as_well():
    import gymnasium
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import api_test, render_test

    check_env(gymnasium.make("RoubaMonte-v0", render_mode="rgb_array").unwrapped, skip_render_check=False)
    api_test(rouba_env.env(render_mode="rgb_array"), num_cycles=30)
    render_test(lambda render_mode=None: rouba_env.env(render_mode=render_mode))
