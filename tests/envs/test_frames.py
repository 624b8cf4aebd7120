"""``render_mode="rgb_array"``: legible frames that show only what the viewer may see, and videos of games."""

import copy

import numpy as np
import pytest

import rouba_env
from rouba_env.envs.frames import frame_size, render_frame
from rouba_env.rules import engine
from rouba_env.rules.config import preset


@pytest.mark.parametrize("num_players", [2, 4, 8])
def test_frames_have_the_tables_size_and_change_with_play(num_players):
    env = rouba_env.SingleAgentEnv(opponents="random", seat=0, num_players=num_players, render_mode="rgb_array")
    obs, info = env.reset(seed=1)
    first = env.render()
    assert first.dtype == np.uint8 and first.shape == (*frame_size(num_players), 3)
    assert len(np.unique(first.reshape(-1, 3), axis=0)) > 20, "cards, text and the felt, not a blank image"
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.render().shape == first.shape and not np.array_equal(env.render(), first)


def test_a_viewers_frame_shows_nothing_hidden():
    """Swapping an opponent's hand card with a deck card changes the full view, not the viewer's."""
    state = engine.start_game(preset("standard"), 11)
    other = copy.deepcopy(state)
    other.hands[1][0], other.deck[0] = other.deck[0], other.hands[1][0]
    assert other.hands[1][0] != state.hands[1][0], "two different cards were swapped"
    assert np.array_equal(render_frame(state, viewer=0), render_frame(other, viewer=0))
    assert not np.array_equal(render_frame(state, viewer=1), render_frame(other, viewer=1))
    assert not np.array_equal(render_frame(state), render_frame(other)), "no viewer: every hand face up"


def test_the_aec_env_renders_frames_too():
    env = rouba_env.env(render_mode="rgb_array", num_players=3)
    env.reset(seed=2)
    frame = env.render()
    assert frame.shape == (*frame_size(3), 3)
    assert "rgb_array" in env.metadata["render_modes"]


@pytest.mark.slow
def test_record_video_records_an_episode(tmp_path):
    pytest.importorskip("moviepy")
    import gymnasium

    env = gymnasium.make("RoubaMonte-v0", opponents="greedy", render_mode="rgb_array")
    env = gymnasium.wrappers.RecordVideo(env, str(tmp_path), episode_trigger=lambda episode: True,
                                         disable_logger=True)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 10_000
