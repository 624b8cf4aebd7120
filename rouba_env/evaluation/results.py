"""What an evaluation found: statistics per player, per lineup and per group, ratings, tables and JSON."""

from __future__ import annotations

from dataclasses import dataclass

from rouba_env.evaluation.play import GameRecord
from rouba_env.evaluation.stats import RATINGS_NEED, PlayerStats, group_stats, player_stats, rating_table
from rouba_env.rules.config import RulesConfig

@dataclass
class EvaluationResult:
    """Everything an evaluation produced; `to_dict` is JSON-ready."""

    rules: RulesConfig
    labels: list[str]
    player_specs: list[str]
    lineups: list[tuple[int, ...]]
    seed: int
    deals: int
    records: list[GameRecord]
    players: list[PlayerStats]
    ratings: list[dict] | None
    lineup_results: list[dict] | None = None
    """For a pool: per lineup, each member's win rate and mean margin in that lineup's games."""
    groups: list[dict] | None = None
    """For a spec at several seats of one lineup (the field of ``A B B B``): their results as one row."""

    @property
    def games(self) -> int:
        return len(self.records)

    def to_dict(self, include_timing: bool = True) -> dict:
        """Everything as JSON-ready data; ``include_timing=False`` leaves out the wall-clock ``ms_per_decision``
        (the only part that differs between two runs of the same evaluation)."""
        results = [vars(stats) | {"per_seat": {str(k): v for k, v in stats.per_seat.items()}}
                   for stats in self.players]
        if not include_timing:
            results = [{k: v for k, v in row.items() if k != "ms_per_decision"} for row in results]
        return {
            "rules": self.rules.to_dict(),
            "num_players": self.rules.num_players,
            "players": self.labels,
            "player_specs": self.player_specs,
            "lineups": [[self.labels[p] for p in lineup] for lineup in self.lineups],
            "seed": self.seed,
            "deals": self.deals,
            "games": self.games,
            "tie_rule": "a k-way tie for the top score counts 1/k win to each tied player",
            "intervals": "win rate: Wilson 95%; mean score and margin: normal approximation 95%",
            "results": results,
            "ratings": self.ratings,
            "lineup_results": self.lineup_results,
            "groups": self.groups,
            "game_records": [[r.deal, r.lineup, r.rotation, list(r.seats), list(r.scores)] for r in self.records],
        }

    def format_table(self) -> str:
        """A plain-text table of the results (and ratings when present)."""
        width = max(len("player"), *(len(label) for label in self.labels))

        def interval(low, high, digits=1, scale=1.0):
            if low is None:
                return "n/a"
            return f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"

        lines = [
            f"{self.games} games ({self.deals} deals, each in every rotation of the seats"
            f"{f' for each of {len(self.lineups)} lineups' if len(self.lineups) > 1 else ''}), "
            f"{self.rules.num_players} players, seed {self.seed}",
            f"{'player':<{width}}  {'games':>6}  {'win %':>6}  {'95% CI':>14}  {'score':>6}  {'95% CI':>14}  "
            f"{'margin':>7}  {'95% CI':>14}  {'ms/move':>8}  per-seat win %",
        ]
        for s in self.players:
            seats = " ".join(f"s{seat}:{row['win_rate'] * 100:.1f}" for seat, row in s.per_seat.items())
            lines.append(
                f"{s.label:<{width}}  {s.games:>6}  {s.win_rate * 100:>6.1f}  {interval(s.win_low, s.win_high, 1, 100):>14}"
                f"  {s.mean_score:>6.2f}  {interval(s.score_low, s.score_high, 2):>14}"
                f"  {s.mean_margin:>+7.2f}  {interval(s.margin_low, s.margin_high, 2):>14}"
                f"  {'n/a' if s.ms_per_decision is None else f'{s.ms_per_decision:.2f}':>8}  {seats}"
            )
        if self.groups:
            lines.append("")
            lines.append("together (the share of games one of them won):")
            for row in self.groups:
                lines.append(f"{row['label']:<{width}}  {row['games']:>6}  {row['win_rate'] * 100:>6.1f}  "
                             f"{interval(row['win_low'], row['win_high'], 1, 100):>14}  "
                             f"{row['mean_score']:>6.2f}  (mean score per seat)")
        if self.lineup_results:
            lines.append("")
            lines.append("per lineup (win %, mean margin):")
            for row in self.lineup_results:
                members = ", ".join(f"{m['player']} {m['win_rate'] * 100:.1f}% {m['mean_margin']:+.2f}"
                                    for m in row["members"])
                lines.append(f"  {members}  ({row['games']} games)")
        if self.ratings is None and (self.rules.num_players >= 3 or len(self.lineups) > 1):
            lines.append("")
            lines.append(f"(no rating table: it needs {RATINGS_NEED})")
        if self.ratings:
            lines.append("")
            lines.append(f"{'rating (openskill PlackettLuce)':<{width + 20}}  {'mu':>7}  {'sigma':>6}  {'ordinal':>7}")
            if any("#" in row["player"] for row in self.ratings):
                lines.append("(NAME#k is another copy of NAME, rated apart: how far copies differ is the ratings' noise)")
            for row in self.ratings:
                lines.append(f"{row['player']:<{width + 20}}  {row['mu']:>7.2f}  {row['sigma']:>6.2f}  {row['ordinal']:>7.2f}")
        return "\n".join(lines)


def summarize(
    config: RulesConfig,
    labels: list[str],
    *,
    player_specs: list[str],
    lineups: list[tuple[int, ...]],
    seed: int,
    deals: int,
    records: list[GameRecord],
) -> EvaluationResult:
    """Statistics, per-lineup results and (3+ seats or a pool) ratings from game records."""
    stats = [player_stats(label, spec, i, records) for i, (label, spec) in enumerate(zip(labels, player_specs))]
    is_pool = len(lineups) > 1
    ratings = rating_table(labels, records) if config.num_players >= 3 or is_pool else None
    lineup_results = None
    if is_pool:
        lineup_results = []
        for index, lineup in enumerate(lineups):
            subset = [r for r in records if r.lineup == index]
            members = []
            for player in lineup:
                s = player_stats(labels[player], player_specs[player], player, subset)
                members.append({"player": s.label, "win_rate": s.win_rate, "win_low": s.win_low,
                                "win_high": s.win_high, "mean_margin": s.mean_margin})
            lineup_results.append({"games": len(subset), "members": members})
    groups = None
    if not is_pool:
        by_spec: dict[str, list[int]] = {}
        for player, spec in enumerate(player_specs):
            by_spec.setdefault(spec, []).append(player)
        groups = [group_stats(spec, players, records) for spec, players in by_spec.items() if len(players) > 1] or None
    return EvaluationResult(config, labels, player_specs, lineups, seed, deals, records, stats, ratings, lineup_results,
                            groups)
