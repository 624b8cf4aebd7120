"""OpenSpiel's MCTS and information-set MCTS bots as project players (specs ``openspiel:mcts``, ``openspiel:ismcts``).

They search the OpenSpiel game of `rouba_env.openspiel` (the openspiel extra), from a world drawn
consistently with the player's observation.
"""

from __future__ import annotations

import numpy as np

from rouba_env.checks import check_int, check_number
from rouba_env.beliefs import HiddenCardSampler
from rouba_env.openspiel import GAME_NAME, RoubaMonteState, pyspiel
from rouba_env.players.base import BasePolicy
from rouba_env.rules.config import PRESET_FIELDS, RulesConfig, make_rules

OPENSPIEL_BOTS = ("mcts", "ismcts")
DEFAULT_SIMULATIONS = 50
"""Simulations per decision: each is one rollout of random play (a few milliseconds here)."""
MAX_SIMULATIONS = 100_000
DEFAULT_UCT_C = 2.0


class OpenSpielPolicy(BasePolicy):
    """OpenSpiel's MCTS or information-set MCTS bot as a project player (specs ``openspiel:mcts``, ``openspiel:ismcts``).

    The bot sees a `RoubaMonteState` built from the player's observation: the hidden cards drawn
    consistently with it (`HiddenCardSampler`). IS-MCTS then resamples the hidden cards itself on every
    simulation; MCTS searches that one drawn world as if it were the true one. Leaves are scored by
    random rollouts (OpenSpiel's `RandomRolloutEvaluator`); both bots draw their randomness from the
    caller's generator. Options: ``simulations`` (int, 1..100000), ``uct_c`` (float > 0).
    """

    def __init__(self, rules: RulesConfig, max_players: int | None = None, *, argument: str | None = None,
                 simulations: int = DEFAULT_SIMULATIONS, uct_c: float = DEFAULT_UCT_C):
        super().__init__(rules, max_players)
        if argument not in OPENSPIEL_BOTS:
            raise ValueError(f"openspiel players are {', '.join('openspiel:' + b for b in OPENSPIEL_BOTS)}; "
                             f"got {argument!r}")
        if self.encoder.max_players != rules.num_players:
            raise ValueError("openspiel players play unpadded tables (max_players equal to num_players)")
        preset = next((name for name in PRESET_FIELDS if make_rules(name, num_players=rules.num_players) == rules),
                      None)
        if preset is None:
            raise ValueError("openspiel players play the rules presets; these rules are none of them")
        self.bot_name, self.name = argument, f"openspiel:{argument}"
        self.simulations = check_int("openspiel simulations", simulations, 1, MAX_SIMULATIONS)
        self.uct_c = check_number("openspiel uct_c", uct_c, 0)
        self.game = pyspiel.load_game(GAME_NAME, {"num_players": rules.num_players, "rules": preset})

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """The move OpenSpiel's search picks for this observation (see the class docstring)."""
        from open_spiel.python.algorithms import ismcts, mcts

        self.check_generator(rng)
        obs, legal = self.checked(obs, mask)
        legal_actions = np.flatnonzero(legal[0])
        if legal_actions.size == 1:
            return int(legal_actions[0])
        random_state = np.random.RandomState(int(rng.integers(2**31)))
        world = HiddenCardSampler(self.rules, obs[0], self.encoder).sample(rng)
        state = RoubaMonteState(self.game, world)
        evaluator = mcts.RandomRolloutEvaluator(1, random_state)
        if self.bot_name == "ismcts":
            bot = ismcts.ISMCTSBot(game=self.game, evaluator=evaluator, uct_c=self.uct_c,
                                   max_simulations=self.simulations, random_state=random_state)
        else:
            bot = mcts.MCTSBot(self.game, self.uct_c, self.simulations, evaluator, random_state=random_state)
        return int(bot.step(state))  # an illegal answer is the table's IllegalPlayerAction, as for every player
