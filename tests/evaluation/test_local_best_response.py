"""The local best response: its posterior against exact Bayes over every deal of ``mini``, its bound against the
exact solver, the worlds it deals, and bad input."""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from rouba_env import preset
from rouba_env.batched.game import VectorGame
from rouba_env.beliefs import DeckByRank
from rouba_env.evaluation.local_best_response import (
    LocalBestResponse, TargetRecorder, local_best_response, possible_hands,
)
from rouba_env.players.registry import make_policy
from rouba_env.rules.cards import rank_orders
from rouba_env.solve.exploitability import best_response, policy_strategy
from rouba_env.solve.game_tree import GameTree
from rouba_env.table import OPEN_SEAT, Table

ROOT = Path(__file__).resolve().parents[2]
MINI_NETWORK = f"checkpoint:{ROOT / 'scripts/results/runs/mini/policy'}"
"""A network trained on ``mini``: its sampling policy spreads over several moves, so the target's choices tell
something of its hand."""


def a_game_to_an_lbr_decision(rules, target, seed: int):
    """Play a game (LBR seat 0 moving at random, the target in every other seat) until the LBR seat is to act
    after the target has moved in the current hands; (table, recorder, every move so far as (seat, action))."""
    table = Table(rules, 1, [target], reward="margin", illegal_action="raise")
    recorder = TargetRecorder(table.game, np.array([0]))
    moves: list[tuple[int, int]] = []

    def hook(slots, seats, actions):
        recorder(slots, seats, actions)
        moves.extend(zip(seats.tolist(), actions.tolist()))

    table.before_move = hook
    table.seat([0], [[OPEN_SEAT] + [0] * (rules.num_players - 1)])
    table.start([0], [seed])
    rng = np.random.default_rng(seed)
    while True:
        table.play_seated(rng)
        if table.over[0]:
            return None
        if any(recorder.this_hand(table.game, 0)):
            return table, recorder, moves
        table.play([0], [rng.choice(np.flatnonzero(table.mask[0]))])


def exact_posterior(rules, target, moves, observed, observer: int = 0) -> dict[tuple, float]:
    """The other seats' current hands (from ``observer``'s left), weighed over every deal of the deck by Bayes: the
    deal's chance times the probability the target gave each of those seats' moves, for the deals in which every
    move was legal and ``observer`` sees what it saw."""
    deck = DeckByRank(rules)
    orders = rank_orders({slot: int(copies) for slot, copies in enumerate(deck.copies) if copies})
    weights: dict[tuple[int, ...], float] = {}
    for order in orders:
        game = VectorGame(rules, 1, auto_reset=False, reward="margin")
        game.deal_decks([0], [deck.cards_for(np.array(order))])
        weight = 1.0
        for seat, action in moves:
            if int(game.current[0]) != seat or not game.mask[0, action]:
                weight = 0.0
                break
            if seat != observer:
                weight *= float(target.action_probabilities(game.obs[:1], game.mask[:1])[0, action])
            game.play_checked(np.array([0]), np.array([action]))
        if weight == 0.0 or not np.array_equal(game.observe_slots([0], [observer])[0], observed):
            continue
        n = rules.num_players
        hands = tuple(tuple(int(c) for c in game.arrays.hands[0, (observer + j) % n]) for j in range(1, n))
        weights[hands] = weights.get(hands, 0.0) + weight  # every rank order is equally likely
    total = sum(weights.values())
    return {hand: weight / total for hand, weight in weights.items()}


def posteriors_and_bayes(rules, target, seeds):
    """For each game of ``seeds`` that reaches an LBR decision (`a_game_to_an_lbr_decision`): the evidence (the
    other seats' decisions), the LBR's posterior (`assignments`) and exact Bayes (`exact_posterior`)."""
    for seed in seeds:
        found = a_game_to_an_lbr_decision(rules, target, seed)
        if found is None:
            continue
        table, recorder, moves = found
        evidence = recorder.this_hand(table.game, 0)
        hands, weights = LocalBestResponse(target, target, rules).hands(table.game, 0, 0, decisions=evidence,
                                                                         rng=np.random.default_rng(0))
        assert hands.shape[1:] == (rules.num_players - 1, 14)
        yield evidence, assignments(hands, weights), exact_posterior(rules, target, moves,
                                                                     table.game.observe_slots([0], [0])[0])


@pytest.mark.parametrize("spec", ["random", f"{MINI_NETWORK},deterministic=false"])
def test_the_posterior_is_exact_bayes_over_every_deal_of_mini(spec):
    rules = preset("mini")
    checked = 0
    for _, ours, exact in posteriors_and_bayes(rules, make_policy(spec, rules), range(40)):
        assert ours.keys() == exact.keys()
        for hand, weight in exact.items():
            assert ours[hand] == pytest.approx(weight, abs=1e-9)
        checked += len(exact) > 1
    assert checked >= 5  # positions where the posterior had more than one hand to weigh


def assignments(hands, weights) -> dict[tuple, float]:
    """The posterior's assignments of hands to the other seats with a weight, as `exact_posterior` keys them."""
    return {tuple(tuple(int(c) for c in hand) for hand in seats): float(w) for seats, w in zip(hands, weights) if w > 0}


def test_the_joint_posterior_is_exact_bayes_at_three_seats(tmp_path):
    """Both other seats' hands at once, each weighed by its own moves (a random network whose probabilities
    depend on the hand), against Bayes over every deal of ``mini3``."""
    from rouba_env.players.checkpoint import write_checkpoint
    from tests.players.helpers import random_tensors

    rules = preset("mini3")
    write_checkpoint(tmp_path, random_tensors(rules, 3, (16,), seed=5), rules, max_players=3, hidden_sizes=(16,))
    target = make_policy(f"checkpoint:{tmp_path},deterministic=false", rules)
    checked = both = 0
    for evidence, ours, exact in posteriors_and_bayes(rules, target, range(16)):
        assert ours.keys() == exact.keys()
        for key, weight in exact.items():
            assert ours[key] == pytest.approx(weight, rel=1e-5)  # the network's float32 probabilities
        checked += len(exact) > 1
        both += all(evidence)
    assert checked >= 5 and both >= 3  # several assignments weighed, both other seats' moves counted


def test_possible_hands_list_every_hand_with_its_ways():
    unseen = np.array([4, 3, 4, 2, 2, 3, 4, 3, 4, 4, 2, 2, 4, 0])
    hands, ways = possible_hands(unseen, 4)
    listed = {tuple(np.bincount(combo, minlength=14)) for combo in itertools.combinations_with_replacement(range(14), 4)}
    assert {tuple(h) for h in hands.tolist()} == {h for h in listed if (np.array(h) <= unseen).all()}
    assert len(hands) == len({tuple(h) for h in hands.tolist()})
    assert (hands.sum(axis=1) == 4).all() and (hands <= unseen).all()
    assert ways.sum() == math.comb(int(unseen.sum()), 4)  # every hand the deal gives, each once


def test_the_lbr_bound_on_mini_stays_below_the_exact_exploitability():
    rules = preset("mini")
    tree = GameTree(rules)
    for spec in ("heuristic", "random"):
        strategy, _ = policy_strategy(tree, make_policy(spec, rules))
        exact = float(np.mean([best_response(tree, strategy, seat)[0] for seat in range(2)]))
        result = local_best_response(spec, rules, games=600, seed=1, worlds=8)
        assert result.bound_low <= exact, (spec, result.describe(), exact)
        assert result.games == 600 and result.decisions > 0


def test_the_lbr_bound_at_three_seats_stays_below_the_exact_exploitability_and_reaches_most_of_it():
    """On ``mini3`` against ``heuristic``: the seat-averaged bound at or below the exact NashConv / 3 within its
    interval and at least 70% of it; each seat's at most that seat's exact best-response value within noise."""
    rules = preset("mini3")
    tree = GameTree(rules)
    strategy, _ = policy_strategy(tree, make_policy("heuristic", rules))
    best = [best_response(tree, strategy, seat)[0] for seat in range(3)]
    exact = float(np.mean(best))  # the margin reward sums to zero over the seats: NashConv / 3
    result = local_best_response("heuristic", "mini3", games=600, seed=1, worlds=8)  # a preset's name will do
    assert result.bound_low <= exact and result.bound >= 0.7 * exact, (result.describe(), exact)
    assert result.nash_conv_bound == pytest.approx(3 * result.bound) and sorted(result.per_seat) == [0, 1, 2]
    for seat, (low, high) in result.per_seat_interval.items():  # each seat's bound on its own best response
        assert low <= best[seat] and low <= result.per_seat[seat] <= high
    assert result.games == 600 and result.deals == 200


def test_worlds_keep_every_public_fact_and_refuse_other_cards():
    rules = preset("standard", num_players=2)
    game = VectorGame(rules, 2, seed=3, auto_reset=False, reward="margin")
    game.reset()
    rng = np.random.default_rng(0)
    for _ in range(5):
        game.step(game.random_actions(rng))
    seat = int(game.current[0])
    hidden = game.hidden_cards([0], seat)[0]
    shuffled = rng.permutation(np.repeat(np.arange(14), hidden))
    world = game.with_hidden([0, 0], seat, np.stack([shuffled, shuffled]))
    assert np.array_equal(world.obs[0], game.obs[0]) and np.array_equal(world.mask[0], game.mask[0])
    assert np.array_equal(world.hidden_cards([0, 1], seat), np.stack([hidden, hidden]))
    with pytest.raises(ValueError, match="other cards than the ones seat"):
        game.with_hidden([0], seat, np.roll(np.sort(np.concatenate([shuffled[:-1], [13]])), 1)[None])
    with pytest.raises(ValueError, match="hidden cards, then -1s"):
        game.with_hidden([0], seat, np.concatenate([shuffled, [0]])[None])


@pytest.mark.parametrize("rules,kwargs,message", [
    (preset("mini3"), dict(games=10), "games must be a multiple of the 3 seats"),
    (preset("mini"), dict(games=11), "games must be a multiple of the 2 seats"),
    (preset("mini"), dict(games=0), "games must be"),
    (preset("mini"), dict(games=10, worlds=0), "worlds must be"),
    (preset("draw_from_deck", num_players=2), dict(games=10), "draw_from_deck"),
])
def test_bad_input_is_refused_before_any_game(rules, kwargs, message):
    with pytest.raises(ValueError, match=message):
        local_best_response("random", rules, **kwargs)


def test_the_command_plays_it_beside_the_exact_value_and_on_the_full_game(tmp_path, capsys):
    from rouba_env.cli import exploitability as command

    out = tmp_path / "mini.json"
    assert command.main(["--rules", "mini", "--players", "random", "--lbr", "40", "--lbr-worlds", "2", "--json",
                         str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "local best response to random (2 worlds a move" in printed and "exact exploitability" in printed
    row = json.loads(out.read_text())["lbr"][0]
    assert row["games"] == 40 and row["exact_exploitability"] == pytest.approx(0.0741, abs=1e-4)
    full = tmp_path / "full.json"
    assert command.main(["--rules", "standard", "--players", "greedy", "--lbr", "2", "--lbr-worlds", "1",
                         "--lbr-rollout", "random", "--json", str(full), "--no-progress"]) == 0
    data = json.loads(full.read_text())
    assert "tree" not in data and data["lbr"][0]["rollout"] == "random" and data["lbr"][0]["decisions"] > 0


@pytest.mark.parametrize("argv, message", [
    (["--players", "random", "--lbr", "3"], "--lbr must be a number of games in 2..1000000 that the 2 seats divide"),
    (["--rules", "mini3", "--players", "random", "--lbr", "10"], "that the 3 seats divide"),
    (["--players", "random", "--lbr", "-2"], "--lbr must be"),
    (["--cfr", "5", "--lbr", "10"], "--lbr answers the players named by --players"),
    (["--players", "random", "--lbr", "10", "--lbr-worlds", "0"], "--lbr-worlds must be in 1..1024"),
])
def test_the_command_refuses_bad_lbr_options(argv, message, capsys):
    from rouba_env.cli import exploitability as command

    with pytest.raises(SystemExit):
        command.main(argv + ["--no-progress"])
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--rules", "standard", "--players", "random", "--lbr", "10", "--cfr", "5"], "distinct deck orders"),
    (["--rules", "mini", "--players", "random", "--lbr", "10", "--lbr-rollout", "nobody"], "nobody"),
])
def test_the_command_refuses_what_it_cannot_do_in_one_line(argv, message, capsys):
    from rouba_env.cli import exploitability as command

    assert command.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_a_model_stands_in_for_a_search_that_gives_no_probabilities(tmp_path, capsys):
    """Against belief_search (no action probabilities, a search in every playout move otherwise), its network
    weighs the hands and plays its seats in the playouts; the games are played against the search itself."""
    from rouba_env.cli import exploitability as command

    network = str(ROOT / "scripts/results/runs/mini/policy")
    out = tmp_path / "search.json"
    assert command.main(["--rules", "mini", "--players", f"belief_search:policy={network},worlds=2", "--samples", "1",
                         "--lbr", "20", "--lbr-worlds", "2", "--lbr-model", f"checkpoint:{network}", "--json",
                         str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert f"model checkpoint:{network}" in printed and "estimated exploitability (NashConv / 2)" in printed
    row = json.loads(out.read_text())["lbr"][0]
    assert row["model"] == f"checkpoint:{network}" and row["rollout"] == f"checkpoint:{network}"
    assert row["posterior"].startswith(f"by checkpoint:{network}'s action probabilities") and row["games"] == 20
