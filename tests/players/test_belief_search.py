"""``belief_search``: worlds from the posterior of an opponent model, read from the table's histories; it never
reads a hidden card, repeats itself given a seed, and refuses bad settings in one line."""

import numpy as np
import pytest

from rouba_env import preset
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.players.checkpoint import write_checkpoint
from rouba_env.players.registry import make_policy
from rouba_env.table import OPEN_SEAT, Table
from tests.players.helpers import random_tensors

RULES = preset("mini")


@pytest.fixture(scope="module")
def mini_network(tmp_path_factory):
    """A small random network for mini (its action probabilities are far from uniform: the posterior moves)."""
    folder = tmp_path_factory.mktemp("mini_network") / "net"
    rng = np.random.default_rng(3)
    tensors = {name: value * 8 if name.endswith("weight") else value
               for name, value in random_tensors(RULES, 2, (16,)).items()}
    tensors = {name: value + 0.1 * rng.standard_normal(value.shape).astype(value.dtype)
               for name, value in tensors.items()}
    write_checkpoint(folder, tensors, RULES, max_players=2, hidden_sizes=(16,))
    return str(folder)


def searcher(network: str, **options) -> object:
    spec = ",".join([f"policy={network}", *(f"{key}={value}" for key, value in options.items())])
    return make_policy(f"belief_search:{spec}", RULES)


def mid_game_table(network: str, *, games: int, moves: int) -> tuple[Table, np.ndarray]:
    """A table of ``games`` mini games, each played ``moves`` moves by the network with a belief_search seated
    (so the table keeps the histories); the games and the seats now to act."""
    player = searcher(network, worlds=8)
    walker = make_policy(f"checkpoint:{network},deterministic=false", RULES)
    table = Table(RULES, games, [walker, player], illegal_action="raise")
    slots = np.arange(games)
    table.seat(slots, np.full((games, 2), OPEN_SEAT))
    table.start(slots, np.arange(games) + 100)
    rng = np.random.default_rng(0)
    for _ in range(moves):
        live = slots[~table.over[slots]]
        table.play(live, walker.act_batch(table.obs[live], table.mask[live], rng))
    live = slots[~table.over[slots]]
    return table, live


def test_the_move_never_depends_on_a_hidden_card(mini_network):
    """The same public history with the other hand and the deck dealt anew: the same move, with the same seed."""
    table, live = mid_game_table(mini_network, games=24, moves=2)
    seats = table.current[live]
    player = searcher(mini_network, worlds=8)
    moves = player.act_at_table(table, live, seats, np.random.default_rng(5))
    unseen = table.game.hidden_cards(live, seats)
    rng = np.random.default_rng(9)
    rows = np.full((len(live), int(unseen.sum(axis=1).max())), -1)
    for i, counts in enumerate(unseen):
        cards = rng.permutation(np.repeat(np.arange(len(counts)), counts))
        rows[i, : len(cards)] = cards
    redealt = Table(RULES, len(live), game=table.game.with_hidden(live, seats, rows), illegal_action="raise")
    redealt.history = table.history
    assert not np.array_equal(redealt.game.hidden(np.arange(len(live)), seats), table.game.hidden(live, seats))
    # the re-dealt copies sit at rows 0..n-1: the history is read by slot, so map it there
    redealt.history = type(table.history)(redealt.game)
    redealt.history.decisions = {row: table.history.decisions.get(int(slot), [])
                                 for row, slot in enumerate(live.tolist())}
    again = player.act_at_table(redealt, np.arange(len(live)), seats, np.random.default_rng(5))
    np.testing.assert_array_equal(moves, again)


def test_the_posterior_moves_with_the_history(mini_network):
    """The model's action probabilities weigh the other seat's hands (its moves since its hand was dealt, from
    the table's history); a scripted model gives none, so only the deal's prior."""
    table, live = mid_game_table(mini_network, games=16, moves=2)
    weighed, prior = searcher(mini_network), searcher(mini_network, opponent="heuristic")
    moved = 0
    for slot in live.tolist():
        seat = int(table.current[slot])
        decisions = table.history.others_decisions(slot, seat, int(table.game.arrays.deck_len[slot]))
        assert len(decisions) == 1 and len(decisions[0]) == 1  # the other seat has played one card of its hand
        hands, weights = weighed.search.hands(table.game, slot, seat, decisions=decisions,
                                              rng=np.random.default_rng(0))
        same_hands, prior_weights = prior.search.hands(table.game, slot, seat, decisions=decisions,
                                                       rng=np.random.default_rng(0))
        np.testing.assert_array_equal(hands, same_hands)
        assert weights.sum() == pytest.approx(1) and prior_weights.sum() == pytest.approx(1)
        moved += not np.allclose(weights, prior_weights)
    assert moved > 0


def test_a_game_repeats_given_its_seed(mini_network):
    spec = f"belief_search:policy={mini_network},worlds=4,temperature=0.5"
    first, second = (evaluate([spec, "heuristic"], RULES, games=8, seed=3) for _ in range(2))
    assert first.players[0].mean_margin == second.players[0].mean_margin
    assert first.players[0].win_rate == second.players[0].win_rate


BAD_SETTINGS = [
    ("worlds=0", "belief_search worlds must be"),
    ("worlds=1025", "belief_search worlds must be"),
    ("temperature=-1", "belief_search temperature"),
    ("temperature=nan", "belief_search temperature"),
    ("value=score", "unknown belief_search value 'score'"),
    ("cut=-1", "belief_search cut must be"),
    ("cut=4", "estimates the margin: give value=margin"),
    ("cut=4,value=margin", "ships no privileged critic"),
]


@pytest.mark.parametrize("option,message", BAD_SETTINGS)
def test_bad_settings_are_refused_in_one_line(mini_network, option, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        make_policy(f"belief_search:policy={mini_network},{option}", RULES)


def test_at_three_seats_it_weighs_both_other_hands_and_refuses_an_observation_without_a_table(mini_network):
    """At three seats it plays (with a network made for three, the shipped ``mixed``), drawing both other hands
    from their joint posterior; its default network plays two seats only, and says so."""
    from rouba_env.evaluation.duplicate import evaluate

    with pytest.raises(ValueError, match="plays at most 2 players, not 3"):
        make_policy("belief_search", preset("standard", num_players=3))
    three = preset("standard", num_players=3)
    result = evaluate(["belief_search:policy=mixed,worlds=2", "heuristic", "heuristic"], rules=three, games=3, seed=0)
    assert result.players[0].games == 3
    player = searcher(mini_network)
    with pytest.raises(ValueError, match="seat it at a Table"):
        player.act_batch(np.zeros((1, player.encoder.size), np.float32), np.ones((1, player.actions.size), bool),
                         np.random.default_rng(0))


def test_a_cut_ends_the_playouts_with_the_privileged_critic(monkeypatch):
    """With cut=D the shipped 2p's privileged critic scores the worlds still on after D moves (in margin)."""
    from rouba_env.players.belief_search import BeliefSearchPolicy

    calls = []
    original = BeliefSearchPolicy.critic_values

    def counted(self, game, slots, seats):
        values = original(self, game, slots, seats)
        calls.append(len(values))
        assert np.isfinite(values).all()
        return values

    monkeypatch.setattr(BeliefSearchPolicy, "critic_values", counted)
    result = evaluate(["belief_search:cut=2,value=margin,worlds=2", "random"], preset("standard"), games=2, seed=1)
    assert result.players[0].games == 2 and calls and sum(calls) > 0


def test_it_plays_as_an_environments_opponent_reading_the_learners_moves(mini_network):
    """An environment's table names its cards; the search's worlds drop the names, and the learner's own moves
    (an outside caller's) reach the history the search weighs them by."""
    from rouba_env.envs.single_agent import SingleAgentEnv

    env = SingleAgentEnv(rules="mini", opponents=[f"belief_search:policy={mini_network},worlds=4"])
    env.reset(seed=0)
    table = env.single_game.table
    assert table.history is not None and table.game.track_cards
    ended, learner_moves = False, 0
    while not ended:
        seat = env.single_game.current
        env.step(int(np.flatnonzero(env.action_masks())[0]))
        learner_moves += 1
        ended = env.single_game.over
        if not ended:
            assert any(who == seat for who, _ in table.history.decisions.get(0, []))
    assert learner_moves >= 2


def test_it_plays_at_a_table_with_openspiels_bots(mini_network):
    """Seated with OpenSpiel's MCTS bot (whose own search reads states drawn from its observation), it reads
    the bot's moves from the table's history, and the games are played to their end."""
    pytest.importorskip("pyspiel")
    spec = f"belief_search:policy={mini_network},worlds=4"
    result = evaluate([spec, "openspiel:mcts,simulations=4"], RULES, games=4, seed=1)
    assert result.players[0].games == result.players[1].games == 4
    assert result.players[0].mean_margin == pytest.approx(-result.players[1].mean_margin)
    assert 0 < sum(player.mean_score for player in result.players) <= RULES.total_cards


def test_with_its_model_equal_to_the_opponent_it_takes_what_the_local_best_response_takes(mini_network):
    """Judged by margin with its network as the opponent's model, belief_search is the local best response to
    that network (the same posterior, worlds and playouts): their mean margins against it agree within their
    intervals."""
    from rouba_env.evaluation.local_best_response import local_best_response

    opponent = f"checkpoint:{mini_network}"
    lbr = local_best_response(opponent, RULES, games=200, seed=4, worlds=4)
    result = evaluate([f"belief_search:policy={mini_network},value=margin,worlds=4", opponent], rules=RULES,
                      games=200, seed=5)
    searched = result.players[0]
    assert searched.games == lbr.games == 200
    lbr_cards = (lbr.bound_low * RULES.total_cards, lbr.bound_high * RULES.total_cards)
    search_cards = margin_interval(result.records, 0)
    assert search_cards[0] <= lbr_cards[1] and lbr_cards[0] <= search_cards[1], (search_cards, lbr_cards)
    assert lbr.bound > 0, "the network is exploitable: the comparison is not of two zeros"


def margin_interval(records, player: int) -> tuple[float, float]:
    """The 95% interval of ``player``'s mean margin in cards over deals (each deal's seatings averaged)."""
    from rouba_env.evaluation.stats import margins, mean_interval

    per_deal: dict[int, list[float]] = {}
    for record in records:
        per_deal.setdefault(record.deal, []).append(margins(record.scores)[record.seats.index(player)])
    _, low, high = mean_interval([float(np.mean(values)) for values in per_deal.values()])
    return low, high
