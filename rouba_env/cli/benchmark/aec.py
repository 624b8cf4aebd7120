"""Sections ``aec_wrapped``, ``aec_raw`` and ``aec_vs_openspiel``: the PettingZoo AEC env under random legal play."""

from __future__ import annotations

import time

import numpy as np

import rouba_env
from rouba_env.cli.benchmark.report import repeat, summarize
from rouba_env.rules.config import preset


def aec_random_play(make_env, rules, rng: np.random.Generator, *, env_steps: int, time_limit: float) -> dict:
    """Steps/s of a PettingZoo AEC env under random legal play: ``agent_iter``, ``last``, a random legal
    action from the mask, ``step``, a new game at the end of each."""
    env = make_env(rules=rules)
    env.reset(seed=int(rng.integers(2**31)))
    steps = games = 0
    start = time.perf_counter()
    while True:
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
                steps += 1
            env.step(action)
        games += 1
        elapsed = time.perf_counter() - start
        if steps >= env_steps or elapsed >= time_limit:
            break
        env.reset()
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "seconds": elapsed}


def _aec_rows(args, make_env, name: str) -> list[dict]:
    rules = preset(args.rules, num_players=args.players)
    rng = np.random.default_rng(args.seed)
    measure = lambda: aec_random_play(make_env, rules, rng, env_steps=args.env_steps,
                                      time_limit=args.time_limit)  # noqa: E731
    return [{"variant": f"{name} {args.rules} {args.players}p", **repeat(args, measure)}]


def bench_aec_wrapped(args) -> list[dict]:
    return _aec_rows(args, rouba_env.env, "env()")


def bench_aec_raw(args) -> list[dict]:
    return _aec_rows(args, rouba_env.raw_env, "raw_env()")


IDLE_GAME_LENGTH = 40
"""Moves of a do-nothing AEC env's game (about a game of rouba-monte at 2 players)."""
IDLE_LEGAL_ACTIONS = 3
"""Legal actions in a do-nothing AEC env's mask (about as many as a rouba-monte position has)."""


def idle_env(rules):
    """A PettingZoo AEC env that does nothing: fixed observation and mask, the turn passes, a game lasts
    `IDLE_GAME_LENGTH` moves; under our order-enforcing wrapper. Under the same loop it shows the loop's
    own cost, the limit of any AEC env."""
    from gymnasium import spaces
    from pettingzoo import AECEnv

    from rouba_env.envs.aec import OrderEnforcing

    size, actions = rouba_env.ObservationEncoder(rules).size, rouba_env.ActionEncoding(rules).size

    class IdleEnv(AECEnv):
        metadata = {"name": "idle_v0", "render_modes": []}

        def __init__(self):
            super().__init__()
            self.possible_agents = [f"player_{seat}" for seat in range(rules.num_players)]
            self.observation = np.zeros(size, dtype=np.float32)
            self.action_mask = np.zeros(actions, dtype=np.int8)
            self.action_mask[:IDLE_LEGAL_ACTIONS] = 1
            self.action_spaces = {agent: spaces.Discrete(actions) for agent in self.possible_agents}

        def reset(self, seed=None, options=None):
            self.agents = list(self.possible_agents)
            self.rewards = {agent: 0.0 for agent in self.agents}
            self._cumulative_rewards = dict(self.rewards)
            self.terminations = {agent: False for agent in self.agents}
            self.truncations = dict(self.terminations)
            self.infos = {agent: {} for agent in self.agents}
            self.agent_selection, self.moves = self.agents[0], 0

        def observe(self, agent):
            return {"observation": self.observation.copy(), "action_mask": self.action_mask.copy()}

        def step(self, action):
            if self.terminations[self.agent_selection]:
                self._was_dead_step(action)
                return
            self.moves += 1
            self._cumulative_rewards[self.agent_selection] = 0.0
            if self.moves == IDLE_GAME_LENGTH:
                self.terminations = {agent: True for agent in self.agents}
            else:
                seat = self.possible_agents.index(self.agent_selection)
                self.agent_selection = self.possible_agents[(seat + 1) % len(self.possible_agents)]

    return OrderEnforcing(IdleEnv())


def openspiel_random_play(game_name: str, rng: np.random.Generator, env_steps: int, time_limit: float) -> dict:
    """Decisions/s of an OpenSpiel game (C++) driven from Python as the AEC loop drives ours, in the cheapest
    faithful way: at every decision the mover's observation tensor (as OpenSpiel returns it, a list) and
    its legal actions (the mask's content), then a random legal action; chance outcomes are sampled by
    their probabilities with one uniform draw (not counted as steps)."""
    import pyspiel

    game = pyspiel.load_game(game_name)
    steps = games = 0
    start = time.perf_counter()
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                threshold, total = rng.random(), 0.0
                for outcome, probability in state.chance_outcomes():
                    total += probability
                    if threshold < total:
                        break
                state.apply_action(outcome)
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            steps += 1
        games += 1
        elapsed = time.perf_counter() - start
        if steps >= env_steps or elapsed >= time_limit:
            break
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "seconds": elapsed}


OPENSPIEL_REFERENCE_GAME = "go_fish"
"""The OpenSpiel card game whose C++ implementation, with observations, our AEC env is measured against."""


def bench_aec_vs_openspiel(args) -> list[dict]:
    """``rouba_env.env()``, a do-nothing AEC env and (when installed) OpenSpiel's go_fish, interleaved
    run by run under the same loop; the ratios are ours over go_fish's and over the do-nothing env's."""
    rules = preset(args.rules, num_players=args.players)
    rng = np.random.default_rng(args.seed)
    try:
        import pyspiel  # noqa: F401
        have_openspiel = True
    except ImportError:
        have_openspiel = False
    runs: dict[str, list[dict]] = {"ours": [], "idle": [], "openspiel": []}
    for _ in range(args.repeats):
        runs["ours"].append(aec_random_play(rouba_env.env, rules, rng, env_steps=args.env_steps,
                                            time_limit=args.time_limit))
        runs["idle"].append(aec_random_play(lambda rules: idle_env(rules), rules, rng, env_steps=args.env_steps,
                                            time_limit=args.time_limit))
        if have_openspiel:
            runs["openspiel"].append(openspiel_random_play(OPENSPIEL_REFERENCE_GAME, rng, args.env_steps,
                                                           args.time_limit))
    ours, idle = summarize(runs["ours"]), summarize(runs["idle"])
    rows = [{"variant": f"env() {args.rules} {args.players}p", **ours},
            {"variant": "do-nothing AEC env (the loop's limit)", **idle,
             "baseline_steps_per_s": idle["steps_per_s"], "ratio": ours["steps_per_s"] / idle["steps_per_s"]}]
    if have_openspiel:
        theirs = summarize(runs["openspiel"])
        rows.append({"variant": f"OpenSpiel {OPENSPIEL_REFERENCE_GAME} (C++, observation + mask)", **theirs,
                     "baseline_steps_per_s": theirs["steps_per_s"],
                     "ratio": ours["steps_per_s"] / theirs["steps_per_s"]})
    else:
        rows.append({"variant": f"OpenSpiel {OPENSPIEL_REFERENCE_GAME}: not installed (pip install open_spiel)",
                     "steps_per_s": None, "games_per_s": None})
    return rows
