"""Rollout collection on the batched table: scripted players and snapshots seated there, only learner turns kept."""

import numpy as np
import torch

from rouba_env.players.registry import make_policy
from rouba_env.rules.config import preset
from rouba_env.table import OPEN_SEAT, Table
from rouba_training.network import ActorCritic
from rouba_training.opponents import CURRENT_SELF, OpponentPool, SnapshotPolicy
from rouba_training.rollout import SelfPlayGames, seat_advantages


def make_games(weights, num_players=2, num_envs=32, every_seat=False):
    rules = preset("standard", num_players=num_players)
    scripted = {"heuristic": [make_policy("heuristic", rules)], "greedy": [make_policy("greedy", rules)]}
    pool = OpponentPool(scripted, weights, pool_size=2)
    from rouba_env.encoding.actions import ActionEncoding
    from rouba_env.encoding.observation import ObservationEncoder

    network = ActorCritic(ObservationEncoder(rules).size, ActionEncoding(rules).size, (32,))
    pool.add_snapshot(network, 0)
    games = SelfPlayGames(rules, 0, num_envs, seed=3, max_players=num_players, reward="margin", pool=pool,
                          rng=np.random.default_rng(0), every_seat=every_seat)
    return games, network


def test_the_opponents_sit_at_the_batched_table_and_the_network_plays_the_open_seats():
    games, network = make_games((0.3, 0.3, 0.4), num_players=3)
    assert isinstance(games.table, Table)
    batch = games.collect(network, torch.device("cpu"), generator=torch.Generator().manual_seed(0), rollout_steps=12,
                          gamma=1.0, gae_lambda=0.95)
    seated = games.table.seats
    for slot in range(len(seated)):
        learner = games.learner_seat[slot]
        assert seated[slot, learner] == OPEN_SEAT
        others = np.delete(seated[slot], learner)
        if games.opponent[slot] == CURRENT_SELF:
            assert (others == OPEN_SEAT).all(), "the current self is played by the network at open seats"
        else:
            assert (others >= 0).all() and len(set(others.tolist())) == 1, "one opponent holds every other seat"
    kinds = {type(player).__name__ for player in games.table.players}
    assert kinds <= {"HeuristicPolicy", "GreedyPolicy", "SnapshotPolicy"} and "SnapshotPolicy" in kinds
    assert len(batch.actions) == len(batch.obs) == len(batch.values) > 0
    assert batch.engine_steps > len(batch.actions), "the opponents' moves are counted too"
    assert batch.games_finished >= 32 and set(np.sign(batch.learner_rewards)) <= {-1.0, 0.0, 1.0}
    assert batch.mask[np.arange(len(batch.actions)), batch.actions].all(), "every recorded action was legal"


def test_every_recorded_turn_is_the_learners_own():
    games, network = make_games((0.0, 0.0, 1.0))
    seen = []
    games.table.before_move = lambda slots, seats, actions: seen.append(
        (slots.copy(), seats.copy(), games.learner_seat[slots].copy()))
    batch = games.collect(network, torch.device("cpu"), generator=torch.Generator().manual_seed(1), rollout_steps=6,
                          gamma=1.0, gae_lambda=0.95)
    learner_moves = sum(int((seats == learner).sum()) for _, seats, learner in seen)
    assert len(batch.actions) <= learner_moves and len(batch.actions) > 0


def test_a_snapshot_player_samples_legal_actions_from_the_tables_generator():
    games, network = make_games((0.0, 1.0, 0.0))
    snapshot = SnapshotPolicy(games.pool, len(games.pool.scripted_names))
    table = games.table
    live = np.flatnonzero(~table.over)
    first = snapshot.act_batch(table.obs[live], table.mask[live], np.random.default_rng(5))
    again = snapshot.act_batch(table.obs[live], table.mask[live], np.random.default_rng(5))
    np.testing.assert_array_equal(first, again)
    assert table.mask[live, first].all()


def test_in_self_play_every_seat_is_recorded_when_asked():
    rounds, envs = 6, 32
    counts = {}
    for every_seat in (False, True):
        games, network = make_games((1.0, 0.0, 0.0), num_envs=envs, every_seat=every_seat)
        batch = games.collect(network, torch.device("cpu"), generator=torch.Generator().manual_seed(1),
                              rollout_steps=rounds,
                              gamma=1.0, gae_lambda=1.0)
        counts[every_seat] = len(batch.actions)
        assert batch.mask[np.arange(len(batch.actions)), batch.actions].all()
        # gamma = lambda = 1: a turn's return is its seat's final margin, the learner's or (zero-sum) its negative
        results = {round(float(sign * r), 4) for r in batch.learner_rewards for sign in (1, -1)}
        assert {round(float(r), 4) for r in batch.returns} <= results
    assert counts[True] >= rounds * envs, "every round of phase 1 is a recorded decision in every game"
    assert 1.6 * counts[False] < counts[True] < 2.4 * counts[False], counts


def test_each_seat_is_credited_with_its_own_result():
    # one game of two seats taking turns 0, 1, 0, 1; it ends on the last round with seat 0 ahead
    steps = [{"recorded": np.array([True]), "acting": np.array([seat]), "values": np.array([0.25], np.float32),
              "rewards": np.zeros((1, 2), np.float32), "dones": np.array([False])} for seat in (0, 1, 0, 1)]
    steps[-1]["rewards"] = np.array([[0.5, -0.5]], np.float32)
    steps[-1]["dones"] = np.array([True])
    advantages, values, flat = seat_advantages(steps, num_players=2, gamma=1.0, gae_lambda=1.0)
    returns = (advantages + values)[flat]
    assert returns.tolist() == [0.5, -0.5, 0.5, -0.5]
    only_seat_zero = [dict(step, recorded=np.array([step["acting"][0] == 0])) for step in steps]
    advantages, values, flat = seat_advantages(only_seat_zero, num_players=2, gamma=1.0, gae_lambda=1.0)
    assert (advantages + values)[flat].tolist() == [0.5, 0.5] and flat[0].tolist() == [0, 2]
