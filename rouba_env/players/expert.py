"""``expert``: determinized Monte Carlo search anchored on the heuristic, with an exact two-player endgame."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from rouba_env.batched.game import VectorGame
from rouba_env.checks import check_int, check_number
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder, ObservationView
from rouba_env.players.base import PROBABILITIES_METHOD, BasePolicy, ProbabilitiesOutOfReach
from rouba_env.beliefs import HiddenCardSampler, WorldsOutOfReach, determinize
from rouba_env.players.scripted import GreedyPolicy, HeuristicPolicy
from rouba_env.rules import engine
from rouba_env.rules.config import RulesConfig
from rouba_env.rules.engine import GameState, Move, Position
from rouba_env.rules.scoring import margin_rewards, outcome_rewards

if TYPE_CHECKING:  # loaded lazily: only a spec that names a checkpoint needs the network code
    from rouba_env.players.network import NetworkPolicy

EXPERT_DEFAULT_SAMPLES = 64
EXPERT_MAX_SAMPLES = 4096
"""Most determinizations per decision a spec may ask for (more would take minutes per move)."""
EXPERT_MAX_SCALE_LIMIT = 64
EXPERT_MAX_MOVES_LIMIT = 1024
EXPERT_MAX_ENDGAME_NODES = 10_000_000
"""Upper bounds of the other search budgets, for the same reason."""
"""Determinizations per decision at the start of a game (see `ExpertPolicy.sample_count`).

The strength and cost of this default are measured in scripts/results/LADDER.md."""
EXPERT_MARGIN_WEIGHT = 0.5
"""Weight of the final margin (over the total cards) next to the outcome (+1 win, 0 tie, -1 loss)."""
PRIOR_WEIGHT = 1e-6
"""The anchor player's value (heuristic value or network logit) only breaks ties between equal search results."""
TIE_TOLERANCE = 1e-9
"""A mean advantage within this of ``z`` standard errors is a tie, which keeps the anchor: with few samples
of a small deck's few outcomes exact ties are common, and rounding must not decide them."""
EXPERT_MAX_SCALE = 4
"""Late in a game rollouts are short: up to this many times ``samples`` determinizations."""
ROLLOUT_FIXED_COST = 24
"""Setting up one rollout (sampling, loading it in the batched engine), counted in plies of play."""
EXPERT_Z = 1.0
"""Another move replaces the heuristic's only if its mean advantage exceeds this many standard errors."""
EXPERT_MAX_MOVES = 12
"""Moves searched per decision: the heuristic's best ones (jokers can offer dozens of legal moves)."""
EXPERT_ENDGAME_NODES = 20000
"""Positions the exact two-player endgame search may visit before falling back to sampling."""
ROLLOUT_PLAYERS = {"greedy": GreedyPolicy, "heuristic": HeuristicPolicy}
"""Scripted players the rollouts can use for every seat."""
ROLLOUT_POLICY = "policy"
"""``rollout=policy``: the rollouts play the ``policy`` network (a network forward pass per ply: much slower)."""
EXACT_ROLLOUT_POSITIONS = 1_000_000
"""Most positions `ExpertPolicy.action_probabilities` walks to follow the rollout player's lines exactly."""
EXACT_SPLITS = 2_000_000
"""Most ways of splitting a decision's samples among kinds of sample that exact probabilities sum over."""
EXPERT_DEFAULT_ROLLOUT = "heuristic"
"""Rollouts with greedy play misjudge positions too much to beat the heuristic."""


def seat_value(points: Sequence[int], seat: int, margin_weight: float, total_cards: int) -> float:
    """What the expert maximizes: ``seat``'s outcome reward plus ``margin_weight`` x its margin reward."""
    return outcome_rewards(points)[seat] + margin_weight * margin_rewards(points, total_cards)[seat]


class SearchBudgetExceeded(Exception):
    """The endgame search visited more positions than it may."""


def solve_two_player(
    state: GameState, seat: int, margin_weight: float, node_limit: int
) -> dict[Move, float] | None:
    """Exact values (`seat_value` for ``seat``) of every legal move in ``state``, by alpha-beta minimax.

    Plays on the rules core (`engine.Position`: each child a copy and one compiled move), trying moves
    in `engine.legal_moves` order. Meant for a two-player game with nothing hidden that matters (deck
    empty: the opponent holds exactly the unseen cards). None when the search would visit more than
    ``node_limit`` positions (the root's children count, the root does not).
    """
    total = state.config.total_cards
    visited = 0

    def minimax(position: Position, alpha: float, beta: float) -> float:
        nonlocal visited
        visited += 1
        if visited > node_limit:
            raise SearchBudgetExceeded
        if engine.is_terminal(position):
            return seat_value(position.points(), seat, margin_weight, total)
        maximizing = position.current == seat
        best = -np.inf if maximizing else np.inf
        for move in position.legal_moves():
            value = minimax(position.child(move), alpha, beta)
            if maximizing:
                best = max(best, value)
                alpha = max(alpha, value)
            else:
                best = min(best, value)
                beta = min(beta, value)
            if alpha >= beta:
                break
        return best

    values = {}
    root = Position.of(state)
    try:
        for move in root.legal_moves():
            values[move] = minimax(root.child(move), -np.inf, np.inf)
    except SearchBudgetExceeded:
        return None
    return values


def solve_endgame(rules: RulesConfig, encoder: ObservationEncoder, actions: ActionEncoding, *, obs: np.ndarray,
                  legal: np.ndarray, rng: np.random.Generator, margin_weight: float,
                  node_limit: int) -> np.ndarray | None:
    """Exact `seat_value` of each action in ``legal`` when nothing relevant is hidden, else None.

    Two players, cards in hand and an empty deck: the opponent's hand is
    exactly the unseen cards, so one determinization is the true position
    (only the last capturer is guessed; it matters with the leftovers rule).
    None as well when ``node_limit`` is 0 or the search would exceed it.
    """
    if not endgame_is_open(rules, encoder.decode(obs), node_limit):
        return None
    return endgame_values(determinize(rules, obs, rng, encoder), actions, legal, margin_weight=margin_weight,
                          node_limit=node_limit)


def endgame_is_open(rules: RulesConfig, view: ObservationView, node_limit: int) -> bool:
    """Whether `solve_endgame` searches this position: two players, no deck left, a search budget."""
    return not (rules.num_players != 2 or rules.draw_from_deck or view.deck_size[0] != 0 or node_limit <= 0)


def endgame_values(state: GameState, actions: ActionEncoding, legal: np.ndarray, *, margin_weight: float,
                   node_limit: int) -> np.ndarray | None:
    """`solve_endgame` on one full position: each legal action's exact value, or None past ``node_limit``."""
    solved = solve_two_player(state, state.current, margin_weight, node_limit)
    if solved is None:
        return None
    return np.array([solved[actions.decode(int(action))] for action in legal])


def anchored_choice(candidates: np.ndarray, values: np.ndarray, prior: np.ndarray, *, z: float,
                    prior_weight: float) -> int:
    """The searches' decision: the anchor (``candidates[0]``) unless another candidate beats it.

    ``values[s, m]`` is candidate ``m``'s value on sample ``s`` (common samples for every candidate). A
    candidate replaces the anchor only if its mean paired advantage exceeds ``z`` standard errors (by more
    than rounding: an exact tie keeps the anchor); among such candidates the best mean wins,
    ``prior_weight`` x ``prior`` breaking exact ties.
    """
    difference = values - values[:, :1]
    mean = difference.mean(axis=0)
    stderr = difference.std(axis=0, ddof=1) / np.sqrt(values.shape[0]) if values.shape[0] > 1 else 0.0
    return int(candidates[anchored_columns(mean[None, :], np.broadcast_to(stderr, mean.shape)[None, :], prior, z=z,
                                           prior_weight=prior_weight)[0]])


def anchored_columns(mean: np.ndarray, stderr: np.ndarray, prior: np.ndarray, *, z: float,
                     prior_weight: float) -> np.ndarray:
    """int64[N]: `anchored_choice`'s column for each of N sample sets, from their paired advantages' moments.

    ``mean[n, m]`` and ``stderr[n, m]`` are candidate ``m``'s mean advantage over the anchor (column 0) and
    its standard error in sample set ``n``.
    """
    beats_anchor = mean > z * stderr + TIE_TOLERANCE
    score = np.where(beats_anchor, mean, -np.inf) + prior_weight * prior
    return np.where(beats_anchor.any(axis=1), np.argmax(score, axis=1), 0)


class ExpertPolicy(BasePolicy):
    """Determinized Monte Carlo search anchored on the heuristic, with an exact two-player endgame.

    Decision procedure (a single legal move is played without search):

    1. Two players, empty deck: nothing that matters is hidden (the opponent
       holds exactly the unseen cards), so an alpha-beta search to the end of
       the game on the reference engine gives every move's exact `seat_value`
       (`solve_two_player`).
    2. Otherwise sample ``S`` determinizations (`HiddenCardSampler`: hidden
       cards drawn consistently with the observation). On each, every legal
       move is applied and the game is rolled out to the end with the
       ``rollout`` player for every seat (heuristic by default) on the batched
       engine `rouba_env.batched.game.VectorGame`. All moves share the same
       determinizations (common random numbers).
    3. The heuristic's choice is the anchor. Another move is played only if its
       mean paired advantage over the anchor exceeds ``z`` standard errors;
       among such moves the best mean wins. Outcomes are very noisy early in
       a game, so the expert then mostly keeps the heuristic's move and lets
       the search overrule it where the rollouts agree.

    ``S`` is ``samples`` at the start of a game and grows as fewer plies
    remain (`sample_count`), keeping the work per decision roughly flat.

    With ``policy`` (a trained network: ``checkpoint:2p``, a shipped name or
    a path), the network takes the heuristic's two jobs: its most likely move
    is the anchor and its logits rank the candidates, so the search improves
    on the network's play rather than on the heuristic's. The rollouts stay
    with the heuristic unless ``rollout=policy`` lets the network play them
    (much slower per decision).

    Spec options: ``samples`` (int >= 1), ``rollout`` (greedy | heuristic |
    policy), ``policy`` (a checkpoint), ``z`` (float >= 0),
    ``margin_weight`` (float >= 0), ``max_scale`` (int >= 1), ``max_moves``
    (int >= 1: only the anchor player's best moves are searched),
    ``endgame_nodes`` (int >= 0, 0 disables the exact search).
    """

    name = "expert"

    def __init__(self, rules: RulesConfig, max_players: int | None = None,
                 *,
                 samples: int = EXPERT_DEFAULT_SAMPLES, margin_weight: float = EXPERT_MARGIN_WEIGHT,
                 rollout: str | None = None, max_scale: int = EXPERT_MAX_SCALE,
                 z: float = EXPERT_Z, endgame_nodes: int = EXPERT_ENDGAME_NODES,
                 max_moves: int = EXPERT_MAX_MOVES, policy: str | None = None):
        super().__init__(rules, max_players)
        counts = (("samples", samples, 1, EXPERT_MAX_SAMPLES), ("max_scale", max_scale, 1, EXPERT_MAX_SCALE_LIMIT),
                  ("max_moves", max_moves, 1, EXPERT_MAX_MOVES_LIMIT),
                  ("endgame_nodes", endgame_nodes, 0, EXPERT_MAX_ENDGAME_NODES))
        for name, value, minimum, maximum in counts:
            check_int(f"expert {name}", value, minimum, maximum)
        for name, number in (("margin_weight", margin_weight), ("z", z)):
            check_number(f"expert {name}", number, 0)
        if rollout is None:
            rollout = EXPERT_DEFAULT_ROLLOUT
        rollouts = sorted(ROLLOUT_PLAYERS) + ([ROLLOUT_POLICY] if policy is not None else [])
        if rollout not in rollouts:
            raise ValueError(f"expert rollout must be one of {rollouts}, got {rollout!r}"
                             + ("" if policy is not None else " (rollout=policy needs a policy= network)"))
        self.samples, self.max_scale, self.endgame_nodes = int(samples), int(max_scale), int(endgame_nodes)
        self.max_moves = int(max_moves)
        self.margin_weight, self.z = float(margin_weight), float(z)
        self.rollout = rollout
        self.policy = policy
        self.prior: HeuristicPolicy | NetworkPolicy
        if policy is None:
            self.prior = HeuristicPolicy(rules, max_players)
        else:
            from rouba_env.players.network import load_policy

            if not isinstance(policy, str) or not policy.strip():
                raise ValueError(f"expert policy must name a checkpoint (e.g. checkpoint:2p), got {policy!r}")
            checkpoint = policy.removeprefix("checkpoint:")
            self.prior = load_policy(checkpoint, rules, max_players)
        """Anchors the search and ranks its candidates (`action_values`): the heuristic, or the network."""
        self.rollout_policy: BasePolicy
        if rollout == ROLLOUT_POLICY:
            self.rollout_policy = load_policy(checkpoint, rules)
        else:
            self.rollout_policy = ROLLOUT_PLAYERS[rollout](rules)
        """Plays every seat in the rollouts, on the batched engine's unpadded observations."""
        self._rollout_actions = ActionEncoding(rules)
        """The batched engine's (unpadded) action encoding."""

    def sample_count(self, view: ObservationView) -> int:
        """Determinizations for this decision: ``samples`` at the start, more as fewer plies remain.

        A rollout costs about (ROLLOUT_FIXED_COST + plies left) plies of work,
        so scaling ``samples`` by the ratio of that cost at the start to its
        value now keeps the work per decision flat, up to ``max_scale`` times.
        """
        remaining = int(view.hand_sizes[0].sum() + view.deck_size[0])
        full_game = self.rules.total_cards - self.rules.table_cards
        scale = (full_game + ROLLOUT_FIXED_COST) / (remaining + ROLLOUT_FIXED_COST)
        return int(round(self.samples * min(self.max_scale, max(1.0, scale))))

    def sample_values(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator,
                      samples: int | None = None) -> np.ndarray:
        """float[S, M]: `seat_value` of each action in ``legal`` (columns) on each determinization (rows)."""
        rules = self.rules
        view = self.encoder.decode(obs)
        seat = int(view.seat[0])
        moves = [self.actions.decode(int(action)) for action in legal]
        samples = self.sample_count(view) if samples is None else samples
        sampler = HiddenCardSampler(rules, obs, self.encoder)
        sampler.require_playable(legal, self.actions, self.name)
        states = [sampler.sample(rng) for _ in range(samples)]
        final_scores = self.rollout_scores(states, moves, rng)
        values = np.zeros((samples, len(moves)))
        for row in range(samples):
            for column in range(len(moves)):
                values[row, column] = seat_value(final_scores[row][column], seat, self.margin_weight,
                                                 rules.total_cards)
        return values

    def rollout_scores(self, states: list[GameState], moves: list[Move],
                       rng: np.random.Generator) -> list[list[list[int]]]:
        """Final scores ``[state][move][seat]`` of playing each move on each state, then the rollout player to the end.

        All ``S * M`` games run together on `VectorGame` (game ``s * M + m``).
        """
        rules, count = self.rules, len(moves)
        game = VectorGame.from_states(rules, [state for state in states for _ in range(count)])
        first = np.array([self._rollout_actions.encode(move) for move in moves], dtype=np.int64)
        game.step(np.tile(first, len(states)))
        actions = np.zeros(game.batch_size, dtype=np.int64)
        live = game.current >= 0
        while live.any():
            actions[:] = 0
            actions[live] = self.rollout_policy.act_batch(game.obs[live], game.mask[live], rng)
            game.step(actions)
            live = game.current >= 0
        return game.scores().reshape(len(states), count, rules.num_players).tolist()

    def solve_endgame(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
        """Exact values of the legal actions when nothing relevant is hidden, else None (`solve_endgame`)."""
        return solve_endgame(self.rules, self.encoder, self.actions, obs=obs, legal=legal, rng=rng,
                             margin_weight=self.margin_weight, node_limit=self.endgame_nodes)

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """The move the search values most for this observation (see the class docstring)."""
        self.check_generator(rng)
        obs, legal = self.checked(obs, mask)
        obs, legal = obs[0], np.flatnonzero(legal[0])
        if legal.size == 1:
            return int(legal[0])
        prior = self.prior.action_values(np.asarray(obs)[None, :])[0, legal]
        exact = self.solve_endgame(obs, legal, rng)
        if exact is not None:
            return int(legal[np.argmax(exact + PRIOR_WEIGHT * prior)])
        candidates, prior = self.candidates(legal, prior)
        if candidates.size == 1:
            return int(candidates[0])
        return anchored_choice(candidates, self.sample_values(obs, candidates, rng), prior, z=self.z,
                               prior_weight=PRIOR_WEIGHT)

    def candidates(self, legal: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(candidates, their prior): the anchor player's best `max_moves` moves, best first (the anchor first)."""
        order = np.argsort(-prior, kind="stable")[: self.max_moves]
        return legal[order], prior[order]

    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float64[B, A]: the chance `act` plays each action, computed exactly; for small decks only.

        Sums over everything `act` draws at random: every position consistent with the observation
        (`HiddenCardSampler.worlds`), every line the rollout player can play from each candidate, and
        every way the decision's samples can fall among the kinds of sample these give (a multinomial),
        each decided by `anchored_choice`'s rule. Raises `ProbabilitiesOutOfReach` when one of these is too
        large to enumerate (the standard deck): estimate the distribution from moves instead.
        """
        obs, legal = self.checked(obs, mask)
        out = np.zeros(legal.shape, dtype=np.float64)
        for row in range(obs.shape[0]):
            for action, chance in self._choice_distribution(obs[row], np.flatnonzero(legal[row])).items():
                out[row, action] += chance
        return out

    def _choice_distribution(self, obs: np.ndarray, legal: np.ndarray) -> dict[int, float]:
        """{action: chance `act` plays it} for one observation (see `action_probabilities`)."""
        if legal.size == 1:
            return {int(legal[0]): 1.0}
        prior = self.prior.action_values(obs[None, :])[0, legal]
        sampled: dict[int, float] = {}
        if endgame_is_open(self.rules, self.encoder.decode(obs), self.endgame_nodes):
            # act determinizes once (only the last capturer is unknown) and searches that position exactly.
            chances: dict[int, float] = {}
            for chance, world in self._worlds(obs):
                values = endgame_values(world, self.actions, legal, margin_weight=self.margin_weight,
                                        node_limit=self.endgame_nodes)
                if values is None:  # the search ran out of budget: act falls back to sampling
                    sampled = sampled or self._sampled_distribution(obs, legal, prior)
                    for action, share in sampled.items():
                        chances[action] = chances.get(action, 0.0) + chance * share
                else:
                    action = int(legal[np.argmax(values + PRIOR_WEIGHT * prior)])
                    chances[action] = chances.get(action, 0.0) + chance
            return chances
        return self._sampled_distribution(obs, legal, prior)

    def _sampled_distribution(self, obs: np.ndarray, legal: np.ndarray, prior: np.ndarray) -> dict[int, float]:
        """{action: chance} of `act`'s sampled search: `sample_count` independent samples of (position,
        rollout lines), decided by `anchored_choice`."""
        candidates, prior = self.candidates(legal, prior)
        if candidates.size == 1:
            return {int(candidates[0]): 1.0}
        seat = int(self.encoder.decode(obs).seat[0])
        moves = [self.actions.decode(int(action)) for action in candidates]
        kinds: dict[tuple[float, ...], float] = {}
        for chance, world in self._worlds(obs):
            # The candidates' rollouts are independent games: every combination of their lines is a kind.
            joint: dict[tuple[float, ...], float] = {(): chance}
            root = Position.of(world)
            for move in moves:
                lines = self._rollout_values(root.child(move), seat)
                joint = {(*values, value): share * line for values, share in joint.items()
                         for value, line in lines.items()}
            for values, share in joint.items():
                # The decision reads only the advantages over the anchor: samples equal in those are one kind.
                advantages = tuple(value - values[0] for value in values)
                kinds[advantages] = kinds.get(advantages, 0.0) + share
        samples = self.sample_count(self.encoder.decode(obs))
        difference = np.array(list(kinds), dtype=np.float64)
        counts = compositions(samples, len(kinds))
        log_factorial = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, samples + 1)))])
        log_chance = (log_factorial[samples] - log_factorial[counts].sum(axis=1)
                      + counts @ np.log(np.fromiter(kinds.values(), dtype=np.float64)))
        mean = counts @ difference / samples
        if samples > 1:
            spread = np.maximum(counts @ difference**2 - samples * mean**2, 0.0)
            stderr = np.sqrt(spread / (samples - 1) / samples)
        else:
            stderr = np.zeros_like(mean)
        columns = anchored_columns(mean, stderr, prior, z=self.z, prior_weight=PRIOR_WEIGHT)
        chances = np.bincount(columns, weights=np.exp(log_chance), minlength=candidates.size)
        return {int(candidates[column]): float(chance) for column, chance in enumerate(chances) if chance > 0}

    def _worlds(self, obs: np.ndarray) -> list[tuple[float, GameState]]:
        try:
            return HiddenCardSampler(self.rules, obs, self.encoder).worlds()
        except WorldsOutOfReach as error:
            raise ProbabilitiesOutOfReach(f"expert: {error}") from None

    def _rollout_values(self, state: Position, seat: int) -> dict[float, float]:
        """{`seat_value` for ``seat``: chance} of the rollout player's play from ``state`` to the end."""
        probabilities_of = getattr(self.rollout_policy, PROBABILITIES_METHOD, None)
        if probabilities_of is None:
            raise ProbabilitiesOutOfReach(f"expert: the rollout player {self.rollout_policy.name} has no "
                                          f"action_probabilities")
        lines: dict[float, float] = {}
        stack = [(state, 1.0)]
        visited = 0
        while stack:
            position, chance = stack.pop()
            visited += 1
            if visited > EXACT_ROLLOUT_POSITIONS:
                raise ProbabilitiesOutOfReach(f"expert: the rollouts reach more than {EXACT_ROLLOUT_POSITIONS:,} "
                                              f"positions, more than exact enumeration takes")
            if engine.is_terminal(position):
                value = seat_value(position.points(), seat, self.margin_weight, self.rules.total_cards)
                lines[value] = lines.get(value, 0.0) + chance
                continue
            obs = self.rollout_policy.encoder.encode(position, position.current)
            mask = self._rollout_actions.mask(position)
            probabilities = probabilities_of(obs[None, :], mask[None, :])[0]
            for action in np.flatnonzero(probabilities):
                child = position.child(self._rollout_actions.decode(int(action)))
                stack.append((child, chance * float(probabilities[action])))
        return lines


def compositions(total: int, parts: int) -> np.ndarray:
    """int64[N, parts]: every way to split ``total`` samples among ``parts`` kinds (N = C(total+parts-1, parts-1)).

    Raises `ProbabilitiesOutOfReach` past `EXACT_SPLITS`.
    """
    count = math.comb(total + parts - 1, parts - 1)
    if count > EXACT_SPLITS:
        raise ProbabilitiesOutOfReach(f"expert: {count:,} ways to split {total} samples among {parts} kinds of "
                                      f"sample, more than the {EXACT_SPLITS:,} that exact enumeration takes")
    if parts == 1:
        return np.full((1, 1), total, dtype=np.int64)
    rows = [np.concatenate([np.full((len(rest), 1), first), rest], axis=1)
            for first in range(total, -1, -1) for rest in [compositions(total - first, parts - 1)]]
    return np.concatenate(rows)
