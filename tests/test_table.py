"""The table: seated players, open seats, and the one place that decides what happens to an action."""

import numpy as np
import pytest

from rouba_env.players.base import BasePolicy, RandomPolicy
from rouba_env.rules import engine
from rouba_env.rules.config import preset
from rouba_env.table import IllegalActionWarning, IllegalPlayerAction
from rouba_env.single_game import SingleGame


class Always(BasePolicy):
    name = "always"

    def __init__(self, rules, action):
        super().__init__(rules)
        self.action = action

    def act(self, obs, mask, rng):
        return self.action


def test_seated_players_move_until_an_open_seat_must_act():
    rules = preset("standard", num_players=3)
    table = SingleGame(rules, seats=[RandomPolicy(rules), None, RandomPolicy(rules)])
    rng = np.random.default_rng(0)
    table.start(rng)
    while not table.over:
        table.play_seated(rng)
        if table.over:
            break
        assert table.current == 1, "play_seated returns only when the open seat is to act"
        table.play(table.legal_actions()[0], who="caller")
    assert engine.is_terminal(table.state)


def test_every_move_is_reported_before_and_after_it_is_played():
    rules = preset("standard")
    events = []
    table = SingleGame(rules, seats=[RandomPolicy(rules), None],
                  before_move=lambda seat, action: events.append(("before", seat, action, table.state.turn)),
                  after_move=lambda seat, action: events.append(("after", seat, action, table.state.turn)))
    rng = np.random.default_rng(1)
    table.start(rng)
    table.play_seated(rng)
    table.play(table.legal_actions()[0], who="caller")
    assert [e[0] for e in events] == ["before", "after"] * (len(events) // 2) and len(events) >= 2
    for before, after in zip(events[::2], events[1::2]):
        assert before[1:3] == after[1:3] and after[3] == before[3] + 1
    assert events[-1][1] == 1, "the caller's move is reported too"


@pytest.mark.parametrize("bad", [10_000, -1, 2.5, "3", None, True])
def test_a_seated_player_returning_an_illegal_action_is_named_and_nothing_is_played(bad):
    rules = preset("standard")
    table = SingleGame(rules, seats=[Always(rules, bad), None])
    table.start_deal(3)
    turn = table.state.turn
    with pytest.raises(IllegalPlayerAction, match=r"player <Always always> in seat 0 returned action .* legal actions"):
        table.play_seated(np.random.default_rng(0))
    assert table.state.turn == turn and not table.over


def test_an_outside_callers_illegal_action_follows_the_tables_rule():
    rules = preset("standard")
    strict = SingleGame(rules, illegal_action="raise")
    strict.start_deal(3)
    with pytest.raises(ValueError, match=r"illegal action 10000 for me \(out of range"):
        strict.play(10_000, who="me")
    assert not strict.over
    lenient = SingleGame(rules, illegal_action="terminate", illegal_reward=-2.0)
    lenient.start_deal(3)
    offender = lenient.current
    with pytest.warns(IllegalActionWarning):
        assert lenient.play(10_000, who="me") is False
    assert lenient.over and lenient.final_rewards()[offender] == -2.0


@pytest.mark.parametrize("hooked", [False, True])
def test_move_answers_the_seat_to_act_next_as_play_and_current_would(hooked):
    """`SingleGame.move` is `play` then `current` in one call, with or without hooks, to the end of the game and
    through an illegal action's end."""
    rules = preset("standard", num_players=3)
    hook = (lambda seat, action: None) if hooked else None
    by_move, by_play = SingleGame(rules, before_move=hook), SingleGame(rules)
    by_move.start_deal(5)
    by_play.start_deal(5)
    while not by_play.over:
        action = by_play.legal_actions()[0]
        assert by_play.play(action, who="me")
        assert by_move.move(action, who="me") == by_play.current
    assert by_move.current == engine.NO_SEAT and by_move.scores() == by_play.scores()
    lenient = SingleGame(rules)
    lenient.start_deal(5)
    offender = lenient.current
    with pytest.warns(IllegalActionWarning):
        assert lenient.move(10_000, who="me") == engine.NO_SEAT
    assert lenient.offender == offender and lenient.over


def test_hooks_set_or_removed_mid_game_and_a_new_deal_after_an_illegal_end_take_effect_at_once():
    """The one-move fast path is taken only while no hook listens and no illegal action ended the game: a hook
    set mid-game hears the next move, a removed one no more, and a new deal after an illegal end plays on."""
    rules = preset("standard")
    table, heard = SingleGame(rules), []
    table.start_deal(7)
    table.play(table.legal_actions()[0], who="me")
    table.after_move = lambda seat, action: heard.append(action)
    first = table.legal_actions()[-1]
    assert table.play(first, who="me") and heard == [first]
    table.after_move = None
    table.play(table.legal_actions()[0], who="me")
    assert heard == [first]
    with pytest.warns(IllegalActionWarning):
        assert table.move(2**70, who="me") == engine.NO_SEAT
    assert table.over and table.legal_actions() == [] and table.view(0)[1].sum() == 0
    table.start_deal(7)
    assert table.offender is None and table.move(table.legal_actions()[0], who="me") == table.current
    assert table.state.turn == 1

def test_seats_must_match_the_table_size():
    rules = preset("standard", num_players=3)
    with pytest.raises(ValueError, match="3-player table needs 3 seats"):
        SingleGame(rules, seats=[None, None])


def test_each_role_takes_its_reward_from_one_named_default():
    import inspect

    from rouba_env.batched.game import VectorGame
    from rouba_env.envs.aec import raw_env
    from rouba_env.envs.single_agent import SingleAgentEnv
    from rouba_env.envs.vector_env import RoubaVectorEnv
    from rouba_env.players.network import DEFAULT_VALUE_REWARD
    from rouba_env.rules.scoring import ENVIRONMENT_REWARD, TRAINING_REWARD
    from rouba_env.table import Table

    for made in (SingleGame, Table, VectorGame, raw_env, SingleAgentEnv, RoubaVectorEnv):
        assert inspect.signature(made).parameters["reward"].default is ENVIRONMENT_REWARD, made
    assert DEFAULT_VALUE_REWARD is TRAINING_REWARD
    training = pytest.importorskip("rouba_training.config")
    assert training.TrainConfig().run.reward is TRAINING_REWARD


def test_a_pickled_table_plays_on_as_the_original():
    """The table's views into its game are bound again after pickling (copies would freeze the game)."""
    import pickle

    table = SingleGame(preset("jokers", num_players=3))
    table.start(np.random.default_rng(4))
    rng = np.random.default_rng(5)
    for _ in range(3):
        table.play(int(rng.choice(table.legal_actions())), "caller")
    copy = pickle.loads(pickle.dumps(table))
    while not table.over:
        action = int(rng.choice(table.legal_actions()))
        assert table.play(action, "caller") and copy.play(action, "caller")
        assert copy.state == table.state
        assert np.array_equal(copy.observation(1), table.observation(1))
        assert np.array_equal(copy.mask(table.current), table.mask(table.current))
    assert copy.over and copy.final_rewards() == table.final_rewards()


def test_one_game_table_and_slot_zero_of_a_batch_play_the_same_game():
    """A table's game is slot 0 of a batch: the same deal and moves give the same positions."""
    from rouba_env.batched.game import VectorGame

    rules = preset("take_all", num_players=4)
    table, batch = SingleGame(rules, max_players=5), VectorGame(rules, 3, max_players=5, auto_reset=False)
    seeds = np.array([77, 78, 79], dtype=np.uint64)
    table.start_deal(77)
    batch.deal(np.arange(3), seeds)
    rng = np.random.default_rng(6)
    while not table.over:
        assert np.array_equal(table.observation(table.current), batch.obs[0])
        assert np.array_equal(table.mask(table.current), batch.mask[0])
        actions = batch.random_actions(rng)
        assert table.play(int(actions[0]), "caller")
        batch.step(actions)
    assert batch.done[0] and table.scores() == batch.final_scores[0].tolist()


def test_an_illegal_steps_warning_points_at_the_caller_of_step():
    """The one-game view's `play` and `move` share one path; the warning names the line that stepped."""
    import gymnasium

    import rouba_env

    for env in (gymnasium.make("RoubaMonte-v0").unwrapped, rouba_env.raw_env()):
        env.reset(seed=0)
        with pytest.warns(IllegalActionWarning) as caught:
            env.step(10**6)
        assert caught[0].filename == __file__, (type(env).__name__, caught[0].filename)
