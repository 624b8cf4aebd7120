"""``search``: determinized look-ahead with a trained network's policy and value, batched on `VectorGame`.

Where ``expert`` judges a move by rolling the game out with ``heuristic`` for
every seat, ``search`` lets the network play the lines out: after each
candidate move every seat plays the network's most likely move to the end of
the game, or, with ``depth`` > 0, until the searching seat is to act again
``depth`` times, where the network's value head scores the position. Lines
are judged by the player the search improves on, not by a weaker one.
"""

from __future__ import annotations

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.checks import check_int, check_number
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.players.base import BasePolicy
from rouba_env.beliefs import HiddenCardSampler
from rouba_env.players.expert import EXPERT_ENDGAME_NODES, EXPERT_MARGIN_WEIGHT, anchored_choice, solve_endgame
from rouba_env.players.move_values import unseen_counts
from rouba_env.players.checkpoint import CheckpointTableMismatch
from rouba_env.players.network import NetworkPolicy, hand_distribution, load_policy
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import GameState, rank_counts

SEARCH_DEFAULT_POLICY = "2p"
"""The network searched with when the spec names none: the shipped two-player policy."""
SEARCH_DEFAULT_SAMPLES = 32
"""Determinizations per decision."""
SEARCH_TO_THE_END = 0
"""``depth=0``: no value head, every line is played to the end of the game by the network."""
SEARCH_DEFAULT_DEPTH = SEARCH_TO_THE_END
"""Times the searching seat is to act again before a leaf is scored by the value head (0: to the end).

Played-out lines judged better than value-head leaves in every setting measured (scripts/results/SEARCH.md)."""
SEARCH_DEFAULT_MAX_MOVES = 6
"""Candidate moves per decision: the network's most likely legal ones."""
SEARCH_DEFAULT_Z = 1.0
"""A candidate replaces the network's favourite only if its mean paired advantage exceeds this many standard errors."""
SEARCH_MAX_SAMPLES = 1024
SEARCH_MAX_DEPTH = 64
SEARCH_MAX_MOVES = 1024
"""Upper bounds of the search budgets a spec may ask for."""
SEARCH_NETWORK_OPPONENT = "policy"
SEARCH_OPPONENT_MODELS = {SEARCH_NETWORK_OPPONENT: None, "heuristic": HeuristicPolicy, "greedy": GreedyPolicy}
"""Who plays the other seats in the look-ahead: the searched network (default) or a scripted player."""
SEARCH_PRIOR_WEIGHT = 1e-6
"""The network's logit only breaks ties between equal search values."""
SEARCH_BELIEFS = ("uniform", "hand")
"""How determinizations are drawn: uniformly over the unseen cards, or kept in proportion to the checkpoint's
hand head's likelihood of the opponents' hands (`SEARCH_BELIEF_POOL` uniform draws per kept one)."""
SEARCH_BELIEF_POOL = 4
SEARCH_VALUES = ("head", "privileged")
"""What scores a leaf (``depth`` > 0): the network's value head, which sees what the seat sees, or the
checkpoint's privileged critic, which also sees the determinization's hidden cards (every hand, the deck)."""


def check_search_options(*, policy: object, samples: int, depth: int, max_moves: int, z: float, endgame_nodes: int,
                         passed_steal: float) -> None:
    """ValueError naming the first of a search spec's options out of its range, before any checkpoint is read."""
    counts = (("samples", samples, 1, SEARCH_MAX_SAMPLES), ("depth", depth, 0, SEARCH_MAX_DEPTH),
              ("max_moves", max_moves, 1, SEARCH_MAX_MOVES), ("endgame_nodes", endgame_nodes, 0, 10_000_000))
    for option, count, minimum, maximum in counts:
        check_int(f"search {option}", count, minimum, maximum)
    check_number("search z", z, 0)
    if not 0 <= check_number("search passed_steal", passed_steal, 0) <= 1:
        raise ValueError(f"search passed_steal must be a probability in 0..1, got {passed_steal!r}")
    if not isinstance(policy, str) or not policy.strip():
        raise ValueError(f"search policy must name a checkpoint (e.g. 2p), got {policy!r}")


class SearchPolicy(BasePolicy):
    """Determinized network look-ahead: candidates from the policy head, leaves scored by the value head.

    Decision procedure (a single legal move is played without search):

    1. Two players, empty deck: the exact endgame search of ``expert``
       (`solve_endgame`), which knows every card that matters.
    2. Otherwise the network's ``max_moves`` most likely legal moves are the
       candidates. ``samples`` determinizations of the hidden cards
       (`HiddenCardSampler`) are drawn; each candidate is played on each of
       them, all ``samples x candidates`` games at once on `VectorGame`
       (common random numbers). The searching seat then plays the network's
       most likely move (the other seats too, or the scripted ``opponent``)
       until the game ends, scored by its final reward (the network's training
       reward); with ``depth`` > 0, a line stops earlier, when the searching
       seat is to act for the ``depth``-th time, and the network's value of its
       observation scores it (the same scale).
    3. The candidate with the best mean value is played if its mean paired
       advantage over the network's favourite exceeds ``z`` standard errors;
       otherwise the favourite is.

    Spec options: ``policy`` (a checkpoint: shipped name or path; default
    ``2p``), ``samples``, ``max_moves`` (ints >= 1), ``depth`` (int >= 0; 0:
    to the end), ``z`` (float >= 0), ``opponent`` (policy | heuristic |
    greedy: who plays the other seats in the look-ahead), ``endgame_nodes``
    (int >= 0, 0 disables the exact search), ``value`` (head | privileged:
    what scores a leaf, see `SEARCH_VALUES`; privileged needs a checkpoint
    trained with ``--critic privileged`` and ``depth`` >= 1), ``beliefs``
    (uniform | hand: how determinizations are drawn, see `SEARCH_BELIEFS`;
    hand needs a checkpoint trained with ``--hand-coef``).
    """

    name = "search"

    def __init__(self, rules: RulesConfig, max_players: int | None = None, *, policy: str = SEARCH_DEFAULT_POLICY,
                 samples: int = SEARCH_DEFAULT_SAMPLES, depth: int = SEARCH_DEFAULT_DEPTH,
                 max_moves: int = SEARCH_DEFAULT_MAX_MOVES, z: float = SEARCH_DEFAULT_Z,
                 endgame_nodes: int = EXPERT_ENDGAME_NODES, opponent: str = "policy",
                 passed_steal: float = 1.0, value: str = "head", beliefs: str = "uniform"):
        super().__init__(rules, max_players)
        check_search_options(policy=policy, samples=samples, depth=depth, max_moves=max_moves, z=z,
                             endgame_nodes=endgame_nodes, passed_steal=passed_steal)
        self.samples, self.depth, self.max_moves = int(samples), int(depth), int(max_moves)
        self.z, self.endgame_nodes = float(z), int(endgame_nodes)
        self.passed_steal = float(passed_steal)
        checkpoint = policy.removeprefix("checkpoint:")
        try:
            self.network: NetworkPolicy = load_policy(checkpoint, rules, max_players)
        except CheckpointTableMismatch as error:
            default = ", the default" if policy == SEARCH_DEFAULT_POLICY else ""
            raise CheckpointTableMismatch(f"search's network (policy={policy}{default}) cannot play here: {error}; "
                                          f"name one trained for these rules with search:policy=PATH") from None
        """Proposes the candidates (at the table's padding)."""
        self.inner: NetworkPolicy = load_policy(checkpoint, rules)
        """The same network on the batched engine's unpadded observations: plays the look-ahead, scores leaves."""
        self.reward = self.network.reward
        if opponent not in SEARCH_OPPONENT_MODELS:
            raise ValueError(f"search opponent must be one of {sorted(SEARCH_OPPONENT_MODELS)}, got {opponent!r}")
        self.opponent = opponent
        model = SEARCH_OPPONENT_MODELS[opponent]
        self._opponent_model = self.inner if model is None else model(rules)
        """Plays the other seats in the look-ahead: the network itself, or a scripted player."""
        self.policy = policy
        self.inner_actions = ActionEncoding(rules)
        if beliefs not in SEARCH_BELIEFS:
            raise ValueError(f"search beliefs must be one of {list(SEARCH_BELIEFS)}, got {beliefs!r}")
        if beliefs == "hand" and self.network.hand_head is None:
            raise ValueError(f"search beliefs=hand: checkpoint {checkpoint!r} has no hand head (train it with "
                             f"rouba-train --hand-coef, rank architecture)")
        self.beliefs = beliefs
        self._choose_leaf_value(value, checkpoint=checkpoint)

    def _choose_leaf_value(self, value: str, *, checkpoint: str) -> None:
        """Set what scores a leaf (`SEARCH_VALUES`); ValueError where the checkpoint or ``depth`` cannot give it."""
        if value not in SEARCH_VALUES:
            raise ValueError(f"search value must be one of {list(SEARCH_VALUES)}, got {value!r}")
        self.value = value
        self.critic = self.inner.privileged_value if value == "privileged" else None
        """Scores the leaves with ``value=privileged``."""
        if value == "head" and self.depth != SEARCH_TO_THE_END and not self.inner.value_head_trained:
            raise ValueError(f"search depth={self.depth} scores leaves with the value head, but checkpoint "
                             f"{checkpoint!r} was trained with a privileged critic, which took the head's place: "
                             f"use value=privileged (or depth=0, play-outs)")
        if value == "privileged":
            if self.critic is None:
                raise ValueError(f"search value=privileged: checkpoint {checkpoint!r} has no privileged value "
                                 f"(train it with rouba-train --critic privileged)")
            if self.depth == SEARCH_TO_THE_END:
                raise ValueError("search value=privileged scores leaves: give depth=1 or more (depth=0 plays "
                                 "every line to the end)")
            needed = self.inner.encoder.size + self.inner.encoder.hidden_size
            if self.critic.input_size != needed:
                raise ValueError(f"search value=privileged: the checkpoint's critic reads {self.critic.input_size} "
                                 f"values, a {self.rules.num_players}-seat table gives {needed} (it was trained at "
                                 f"another padding)")

    def move_values(self, obs: np.ndarray, candidates: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """float[S, M]: each candidate's (column) leaf value for the searching seat on each determinization (row)."""
        rules = self.rules
        sampler = HiddenCardSampler(rules, obs, self.encoder, passed_steal=self.passed_steal)
        sampler.require_playable(candidates, self.actions, self.name)
        seat = sampler.seat
        states = self.determinizations(sampler, obs, rng)
        count = len(candidates)
        game = VectorGame.from_states(rules, [state for state in states for _ in range(count)], reward=self.reward)
        moves = [self.actions.decode(int(action)) for action in candidates]
        first = np.array([self.inner_actions.encode(move) for move in moves], dtype=np.int64)
        game.step(np.tile(first, len(states)))
        values = np.zeros(game.batch_size)
        ended = game.done.copy()
        values[ended] = game.rewards[ended, seat]
        turns_left = np.full(game.batch_size, self.depth)
        live = ~ended
        actions = np.zeros(game.batch_size, dtype=np.int64)
        while live.any():
            at_seat = live & (game.current == seat)
            turns_left[at_seat] -= 1
            leaf = at_seat & (turns_left == 0) & (self.depth != SEARCH_TO_THE_END)
            if leaf.any():
                if self.critic is not None:
                    rows = np.flatnonzero(leaf)
                    values[leaf] = self.critic.forward(game.obs[leaf], game.hidden(rows, np.full(len(rows), seat)))
                else:
                    values[leaf] = self.inner.forward(game.obs[leaf])[1]
                live &= ~leaf
            if not live.any():
                break
            actions[:] = 0
            own = live & (game.current == seat)
            others = live & ~own
            if own.any():
                actions[own] = self.inner.act_batch(game.obs[own], game.mask[own], rng)
            if others.any():
                actions[others] = self._opponent_model.act_batch(game.obs[others], game.mask[others], rng)
            game.step(actions)
            finished = live & game.done
            values[finished] = game.rewards[finished, seat]
            live &= ~finished
        return values.reshape(len(states), count)

    def determinizations(self, sampler: HiddenCardSampler, obs: np.ndarray,
                         rng: np.random.Generator) -> list[GameState]:
        """``samples`` full positions consistent with ``obs``: uniform draws, or with ``beliefs=hand`` uniform
        draws resampled in proportion to the hand head's likelihood of every opponent's hand."""
        if self.beliefs == "uniform":
            return [sampler.sample(rng) for _ in range(self.samples)]
        pool = [sampler.sample(rng) for _ in range(SEARCH_BELIEF_POOL * self.samples)]
        predicted = self.network.predicted_hidden(obs[None, :])[0]
        natural, jokers = unseen_counts(self.encoder.decode(obs[None, :]), self.rules)
        unseen = np.append(natural[0], jokers[0])
        n, log_weight = self.rules.num_players, np.zeros(len(pool))
        for offset in range(1, n):
            likely = hand_distribution(predicted[offset], unseen)
            counts = np.array([rank_counts(state.hands[(sampler.seat + offset) % n]) for state in pool])
            log_weight += (counts * np.log(np.where(counts > 0, likely, 1.0))).sum(axis=1)
        weight = np.exp(log_weight - log_weight.max())
        picks = rng.choice(len(pool), size=self.samples, p=weight / weight.sum())
        return [pool[index] for index in picks]

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """The move the search values most for this observation (see the class docstring)."""
        self.check_generator(rng)
        obs, legal = self.checked(obs, mask)
        obs, legal = obs[0], np.flatnonzero(legal[0])
        if legal.size == 1:
            return int(legal[0])
        prior = self.network.action_values(np.asarray(obs)[None, :])[0, legal]
        exact = solve_endgame(self.rules, self.encoder, self.actions, obs=obs, legal=legal, rng=rng,
                              margin_weight=EXPERT_MARGIN_WEIGHT, node_limit=self.endgame_nodes)
        if exact is not None:
            return int(legal[np.argmax(exact + SEARCH_PRIOR_WEIGHT * prior)])
        order = np.argsort(-prior, kind="stable")[: self.max_moves]
        candidates, prior = legal[order], prior[order]
        if candidates.size == 1:
            return int(candidates[0])
        return anchored_choice(candidates, self.move_values(obs, candidates, rng), prior, z=self.z,
                               prior_weight=SEARCH_PRIOR_WEIGHT)
