"""Statistics of finished games: win shares, Wilson intervals, means with intervals, ratings.

Wins: a sole top score counts 1; a k-way tie for the top score counts 1/k to
each tied player. Margins: own score minus the mean of the other seats.
Ratings: openskill's Plackett-Luce model, updated game by game in a fixed order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

Z_95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal."""


def wilson_interval(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a win rate (``wins`` may be fractional: ties count 1/k)."""
    if games <= 0:
        raise ValueError(f"games must be positive for a Wilson interval, got {games}")
    if not 0 <= wins <= games:
        raise ValueError(f"wins={wins} must lie between 0 and games={games}")
    p = wins / games
    z2 = z * z
    denominator = 1.0 + z2 / games
    center = (p + z2 / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z2 / (4 * games * games)) / denominator
    return max(0.0, center - half), min(1.0, center + half)


def mean_interval(values: Sequence[float], z: float = Z_95) -> tuple[float, float | None, float | None]:
    """(mean, low, high): normal-approximation 95% interval of the mean; no bounds for fewer than 2 values."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no values to average")
    mean = float(data.mean())
    if data.size < 2:
        return mean, None, None
    half = z * float(data.std(ddof=1)) / math.sqrt(data.size)
    return mean, mean - half, mean + half


def win_shares(scores: Sequence[int]) -> list[float]:
    """Win share per seat: 1 to a sole top score, 1/k to each of k seats tied for the top, else 0."""
    best = max(scores)
    top = [seat for seat, points in enumerate(scores) if points == best]
    return [1.0 / len(top) if seat in top else 0.0 for seat in range(len(scores))]


def margins(scores: Sequence[int]) -> list[float]:
    """Own score minus the mean of the other seats' scores, per seat."""
    total, others = sum(scores), len(scores) - 1
    return [points - (total - points) / others for points in scores]



@dataclass
class PlayerStats:
    """Aggregate results of one player."""

    label: str
    spec: str
    games: int
    wins: float
    win_rate: float
    win_low: float
    win_high: float
    mean_score: float
    score_low: float | None
    score_high: float | None
    mean_margin: float
    margin_low: float | None
    margin_high: float | None
    per_seat: dict[int, dict] = field(default_factory=dict)
    """Seat -> {games, wins, win_rate, mean_score, mean_margin}."""
    decisions: int = 0
    """Moves the player chose (0 when the records carry no timing)."""
    ms_per_decision: float | None = None
    """Mean wall-clock milliseconds per move chosen (the machine's and the worker count's figure)."""


def group_stats(spec: str, players: Sequence[int], records: Sequence) -> dict:
    """One row for several seats of the same spec (the field of ``A B B B``): the share of games one of them won.

    Over the games where any of ``players`` sits: the win share of those seats together (Wilson 95%
    interval) and their mean score per seat.
    """
    members = set(players)
    shares: list[float] = []
    points: list[int] = []
    for record in records:
        seats = [seat for seat, player in enumerate(record.seats) if player in members]
        if not seats:
            continue
        game_shares = win_shares(record.scores)
        shares.append(sum(game_shares[seat] for seat in seats))
        points.extend(record.scores[seat] for seat in seats)
    games, wins = len(shares), float(sum(shares))
    low, high = wilson_interval(wins, games)
    return {"label": f"{spec} x{len(members)}", "spec": spec, "seats": len(members), "games": games,
            "win_rate": wins / games if games else 0.0, "win_low": low, "win_high": high,
            "mean_score": float(np.mean(points)) if points else 0.0}


def player_stats(label: str, spec: str, player: int, records: Sequence) -> PlayerStats:
    """Statistics of ``player`` over the games it played among ``records`` (each with ``seats`` and ``scores``)."""
    shares: list[float] = []
    points: list[int] = []
    margin_values: list[float] = []
    seat_rows: dict[int, list[tuple[float, int, float]]] = {}
    decisions, seconds = 0, 0.0
    for record in records:
        if player not in record.seats:
            continue
        seat = record.seats.index(player)
        if getattr(record, "decisions", None) is not None:
            decisions += record.decisions[seat]
            seconds += record.seconds[seat]
        share = win_shares(record.scores)[seat]
        margin = margins(record.scores)[seat]
        shares.append(share)
        points.append(record.scores[seat])
        margin_values.append(margin)
        seat_rows.setdefault(seat, []).append((share, record.scores[seat], margin))
    if not shares:
        raise ValueError(f"player {label!r} played no games")
    games, wins = len(shares), float(sum(shares))
    low, high = wilson_interval(wins, games)
    score = mean_interval(points)
    margin = mean_interval(margin_values)
    per_seat = {}
    for seat in sorted(seat_rows):
        rows = np.array(seat_rows[seat], dtype=np.float64)
        per_seat[seat] = {
            "games": int(rows.shape[0]),
            "wins": float(rows[:, 0].sum()),
            "win_rate": float(rows[:, 0].mean()),
            "mean_score": float(rows[:, 1].mean()),
            "mean_margin": float(rows[:, 2].mean()),
        }
    return PlayerStats(label, spec, games, wins, wins / games, low, high, *score, *margin, per_seat, decisions,
                       1000 * seconds / decisions if decisions else None)


RATINGS_NEED = "openskill (pip install openskill)"
"""What the rating table needs; the core install plays and evaluates without it."""


def ratings_available() -> bool:
    """True when openskill can be imported (a core dependency; a hand-made install may lack it)."""
    import importlib.util

    return importlib.util.find_spec("openskill") is not None


def rating_table(labels: Sequence[str], records: Sequence) -> list[dict] | None:
    """Openskill Plackett-Luce ratings from every game in record order, best ordinal first; None without openskill.

    A game's ranks follow its scores (equal scores share a rank).
    """
    if not ratings_available():
        return None
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=label) for label in labels]
    for record in records:
        teams = [[ratings[player]] for player in record.seats]
        distinct = sorted(set(record.scores), reverse=True)
        ranks = [float(distinct.index(points) + 1) for points in record.scores]
        updated = model.rate(teams, ranks=ranks)
        for player, team in zip(record.seats, updated):
            ratings[player] = team[0]
    table = [
        {"player": label, "mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())}
        for label, r in zip(labels, ratings)
    ]
    return sorted(table, key=lambda row: -row["ordinal"])
