"""Every compiled kernel of the package, built (or loaded from numba's cache) in two stages: `WARM_UP_STAGES`.

numba compiles a function at its first call. Left to itself, a fresh installation would compile the engine
in one process, the network players in the next and the solver in a third, each stopping a command in
the middle of its work. Each stage calls its public paths once on tiny games, so that they are compiled
together before a first game and every later process loads them from the one cache: `warm_up_tables`
(what a table and the environments play with, scripted opponents included) and `warm_up_rest` (the
card-level engine, the players that search or read a network, the exact solver).
`rouba_env.compiled.ensure_compiled` runs each once per installation (and again after the source changes).
"""

from __future__ import annotations

import warnings

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.compiled import EVERYTHING, TABLE_STAGE_PLAYERS, TABLES
from rouba_env.envs.aec import env as aec_env
from rouba_env.envs.single_agent import SingleAgentEnv
from rouba_env.envs.vector_env import make_vector_env
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.evaluation.local_best_response import local_best_response
from rouba_env.rules import engine
from rouba_env.rules.config import preset
from rouba_env.solve import (
    CFRPlus, GameTree, MagneticMirrorDescent, counterfactual_action_values, head_to_head, nash_conv,
    policy_strategy,
)
from rouba_env.solve.game_tree import RowNumbering, estimate_histories
from rouba_env.players.registry import make_policy

WARM_UP_DECK = "mini"
"""The deck of the warm-up's games: the kernels take any deck's rules as arrays, so the smallest serves all."""
WARM_UP_PLAYERS = ("random", "greedy", "heuristic", "expert:samples=2", "search:samples=2", "checkpoint:2p",
                   "checkpoint:mixed")
"""One player of each kind that runs compiled code (the scripted rules, the searchers, each network shape), on
the deck the shipped networks were trained for."""


def warm_up_tables() -> None:
    """The first stage: the batched engine, the encoders and the environments with scripted opponents."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an illegal move below is on purpose
        _batched_engine()
        _environments()


def warm_up_rest() -> None:
    """The last stage: the card-level engine, the network and search players, the exact solver."""
    _card_level_engine()
    _players()
    _solver()


def warm_up() -> None:
    """Call every compiled path of the package once, on tiny games (seconds from a warm cache)."""
    warm_up_tables()
    warm_up_rest()


WARM_UP_STAGES = {TABLES: warm_up_tables, EVERYTHING: warm_up_rest}
"""`rouba_env.compiled.register_warm_up`'s stages, in the order they run."""


def _card_level_engine() -> None:
    state = engine.start_game(preset(WARM_UP_DECK), 3)
    while not engine.is_terminal(state):
        state = engine.apply_move(state, engine.legal_moves(state)[-1])
    engine.new_game(preset("standard", num_players=3), np.random.default_rng(0))


def _batched_engine() -> None:
    rules = preset(WARM_UP_DECK)
    rng = np.random.default_rng(0)
    for track_cards in (False, True):
        game = VectorGame(rules, 2, track_cards=track_cards)
        game.reset(seed=1)
        for _ in range(3):
            game.step(game.random_actions(rng))
        game.observe(0)
        game.observe_slots([0, 1], [0, 1])
        game.hidden([0, 1], [1, 0])
        game.scores()
        game.copies([1])
        game.step_slots([0], game.random_actions(rng)[:1])
        game.play_checked(np.array([0]), game.random_actions(rng)[:1])
        if not track_cards:
            counts = game.hidden_cards([0], [0])[0]
            game.with_hidden([0], [0], np.repeat(np.arange(len(counts)), counts)[None])
        else:
            game.position(0)
            game.observe_one(0, 1)
            game.children(np.array([0]), game.random_actions(rng)[:1])
            play, deal = game.slot_player(0), game.slot_dealer(1)
            deal(5)
            play(int(np.flatnonzero(game.mask[0])[0]))
        VectorGame.from_states(rules, [engine.start_game(rules, 4)])


def _environments() -> None:
    env = aec_env(rules=WARM_UP_DECK)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        observation, _reward, over, cut, _info = env.last()
        if over or cut:
            env.step(None)
        else:
            assert observation is not None
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    env.reset(seed=1)
    env.observe(env.possible_agents[1])
    env.state()
    env.step(10**30)  # the illegal-action path
    single = SingleAgentEnv(rules=WARM_UP_DECK, opponents=["heuristic"])
    single.reset(seed=0)
    ended = False
    while not ended:
        ended = bool(single.step(int(np.flatnonzero(single.action_masks())[0]))[2])
    for opponent in TABLE_STAGE_PLAYERS:
        vector = make_vector_env(2, rules=WARM_UP_DECK, opponents=[opponent])
        vector.reset(seed=0)
        for _ in range(3):
            vector.step(np.array([int(np.flatnonzero(row)[0]) for row in vector.action_masks()]))
        vector.close()


def _players() -> None:
    for player in WARM_UP_PLAYERS:
        evaluate([player, "heuristic"], "standard", games=2)
    evaluate(["checkpoint:mixed", "heuristic", "random"], "standard", games=3)
    local_best_response("checkpoint:2p", preset("standard"), games=2, worlds=2)


def _solver() -> None:
    rules = preset(WARM_UP_DECK)
    tree = GameTree(rules)
    strategy, _exact = policy_strategy(tree, make_policy("heuristic", rules))
    nash_conv(tree, strategy)
    head_to_head(tree, strategy, strategy)
    counterfactual_action_values(tree, strategy)
    cfr, mmd = CFRPlus(tree), MagneticMirrorDescent(tree)
    for _ in range(2):
        cfr.iterate()
        mmd.iterate()
    nash_conv(tree, cfr.average_strategy())
    estimate_histories(preset("small"), games=4)
    RowNumbering(2)(np.arange(4096).reshape(-1, 2))  # more rows than its first table: it grows
