"""Evaluating the learner against scripted players with the duplicate-deal evaluator."""

from __future__ import annotations

import numpy as np

from rouba_env.rules.config import RulesConfig
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.evaluation.stats import margins, mean_interval
from rouba_env.solve.exploitability import head_to_head, nash_conv, policy_strategy
from rouba_env.solve.game_tree import GameTree
from rouba_training.network import TrainerNetwork, numpy_policy

EVAL_SEED = 12345
"""Fixed deals for every evaluation, so that curves compare like with like."""


def evaluate_network(network: TrainerNetwork, rules: RulesConfig, max_players: int, *, opponents: tuple[str, ...],
                     games: int, seed: int = EVAL_SEED, tree: GameTree | None = None,
                     target: np.ndarray | None = None) -> list[dict]:
    """Win rate (Wilson 95% interval), mean score and margin of the learner against each opponent; the margin's
    normal 95% interval is over deals, each deal's seatings averaged (`deal_margins`).

    The learner plays its most likely legal action (argmax), heads-up against
    each opponent spec at a table of ``rules.num_players`` seats (the opponent
    fills every other seat), over the same duplicate deals. With the game's ``tree``
    (rules small enough to solve) every row also holds ``nash_conv``: the exact NashConv of the
    policy the trainer learns (sampling from its action probabilities); given the strategy of a best
    response's ``target`` (its one opponent) as well, ``exact_value`` instead: the learner's exact expected
    reward against it, the mean over the seats.
    """
    learner = numpy_policy(network, rules, max_players)
    measured = {}
    if tree is not None and target is not None:
        measured["exact_value"] = float(np.mean(head_to_head(tree, policy_strategy(tree, learner)[0], target)))
    elif tree is not None:
        sampling = numpy_policy(network, rules, max_players, deterministic=False)
        measured["nash_conv"] = nash_conv(tree, policy_strategy(tree, sampling)[0])
    rows = []
    for opponent in opponents:
        lineup = [learner] + [opponent] * (rules.num_players - 1)
        result = evaluate(lineup, rules=rules, games=games, seed=seed)
        stats = result.players[0]
        deal_margin = mean_interval(deal_margins(result.records, 0))
        rows.append({
            "opponent": opponent,
            "games": stats.games,
            "win_rate": stats.win_rate,
            "win_low": stats.win_low,
            "win_high": stats.win_high,
            "mean_margin": stats.mean_margin,
            "margin_low": deal_margin[1],
            "margin_high": deal_margin[2],
            "mean_score": stats.mean_score,
            **measured,
        })
    return rows


def deal_margins(records, player: int) -> list[float]:
    """``player``'s margin on each deal, averaged over the deal's seatings: the duplicate games of a deal share
    its luck, so the interval of their mean over deals is the tight one."""
    per_deal: dict[int, list[float]] = {}
    for record in records:
        if player in record.seats:
            per_deal.setdefault(record.deal, []).append(margins(record.scores)[record.seats.index(player)])
    return [float(np.mean(values)) for values in per_deal.values()]
