"""The browser server's JSON API: validation, isolation, expiry, replays and whole games."""

import http.client
import json
import os

import pytest

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.evaluation.records import load_record, replay_states, save_game_records
from rouba_env.rules import engine, scoring
from rouba_env.rules.cards import JOKER_RANK
from rouba_env.web.games import GameStore
from rouba_env.evaluation.duplicate import evaluate

NEW_GAME = {"num_players": 2, "opponents": ["greedy"], "seed": 7}


def first_legal(view) -> int:
    return view["legal"][0]["moves"][0]["action"]


def all_legal(view) -> list[int]:
    return sorted(move["action"] for group in view["legal"] for move in group["moves"])


def play_out(client, view) -> dict:
    """Play the first legal move until the game is over; the last view."""
    while not view["finished"]:
        status, view = client.post(f"/api/games/{view['game_id']}/moves", {"action": first_legal(view)})
        assert status == 200, view
    return view


# ---------------------------------------------------------------- creating games


@pytest.mark.parametrize("body, words", [
    ({"num_players": 1, "opponents": []}, "num_players must be an int in 2..8"),
    ({"num_players": 9, "opponents": ["random"] * 8}, "num_players must be an int in 2..8"),
    ({"num_players": True, "opponents": ["random"]}, "num_players"),
    ({"num_players": 3, "opponents": ["random"]}, "opponents must be a list of 2"),
    ({"num_players": 2, "opponents": ["wizard"]}, "unknown player 'wizard'"),
    ({"num_players": 2, "opponents": ["checkpoint:/etc/passwd"]}, "loads checkpoints by name only"),
    ({"num_players": 2, "opponents": ["checkpoint:../2p"]}, "loads checkpoints by name only"),
    ({"num_players": 2, "opponents": ["checkpoint:no-such-name"]}, "no-such-name"),
    ({"num_players": 2, "opponents": ["expert:bogus=1"]}, "bogus"),
    ({"num_players": 2, "opponents": ["random"], "rules": "poker"}, "rules must be the name of a preset"),
    ({"num_players": 2, "opponents": ["random"], "rules": ["standard"]}, "rules must be the name of a preset"),
    ({"num_players": 2, "opponents": ["random"], "rules": {"num_players": 2}}, "rules must be the name of a preset"),
    ({"num_players": 2, "opponents": ["random"], "seed": 2**64}, "seed must be null or an int in 0.."),
    ({"num_players": 2, "opponents": ["expert:policy=/etc/passwd"]}, "loads checkpoints by name only"),
    ({"num_players": 2, "opponents": ["expert:policy=checkpoint:/tmp/x"]}, "loads checkpoints by name only"),
    ({"num_players": 2, "opponents": ["search:policy=../2p"]}, "loads checkpoints by name only"),
    ({"num_players": 2, "opponents": ["belief_search:opponent=/etc/passwd"]}, "loads checkpoints by name only"),
    ({"num_players": 2, "opponents": ["belief_search:worlds=1000"]}, "worlds may be at most 64"),
    ({"num_players": 2, "opponents": ["expert:samples=4096"]}, "samples may be at most 256"),
    ({"num_players": 2, "opponents": ["search:samples=99999999999"]}, "samples may be at most 256"),
    ({"num_players": 2, "opponents": ["random"], "seat": 2}, "seat must be an int in 0..1"),
    ({"num_players": 2, "opponents": ["random"], "colour": "red"}, "unknown field(s) ['colour']"),
    ({"num_players": 8, "opponents": ["random"] * 7, "rules": "mini"}, "rules 'mini' at 8 players: invalid"),
    ([1, 2], "needs a JSON object"),
])
def test_bad_new_game_is_400_with_a_message(live_server, body, words):
    _, client = live_server()
    status, answer = client.post("/api/games", body)
    assert status == 400
    assert words in answer["error"]


def test_malformed_bodies_are_refused(live_server):
    server, client = live_server(max_body=256)
    status, answer = client.post("/api/games", raw=b"{not json")
    assert status == 400 and "not valid JSON" in answer["error"]
    status, answer = client.post("/api/games", raw=b'{"num_players": 2, "opponents": ["random"], "seed": 1}' + b" " * 300)
    assert status == 413 and "over the limit of 256" in answer["error"]
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.putrequest("POST", "/api/games")
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 411 and "Content-Length" in json.loads(response.read())["error"]
    connection.close()
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.putrequest("POST", "/api/games")
    connection.putheader("Content-Length", "9" * 5000)
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 413 and "over the limit of 256" in json.loads(response.read())["error"]
    connection.close()
    assert not server.store.games


def test_other_host_names_are_refused(live_server):
    _, client = live_server()
    status, answer = client.call("GET", "/api/options", headers={"Host": "attacker.example:80"})
    assert status == 421 and "attacker.example" in answer["error"]
    assert client.call("GET", "/api/options", headers={"Host": "localhost:1"})[0] == 200


def test_static_files_only_from_the_list(live_server):
    server, client = live_server()
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    for path, expected in (("/", 200), ("/static/cards.js", 200), ("/static/server.py", 404),
                           ("/static/..%2Fserver.py", 404), ("/static/../server.py", 404), ("/nothing", 404)):
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        assert response.status == expected, path
        if expected == 200:
            assert b"def " not in body and response.getheader("X-Content-Type-Options") == "nosniff"
    connection.close()


# ---------------------------------------------------------------- moves


def test_unknown_game_is_404(live_server):
    _, client = live_server()
    for game_id in ("0" * 32, "not-an-id", "..%2F..%2Fetc"):
        status, answer = client.get(f"/api/games/{game_id}")
        assert status == 404 and "no game" in answer["error"]
        status, answer = client.post(f"/api/games/{game_id}/moves", {"action": 0})
        assert status == 404


@pytest.mark.parametrize("body, words", [
    ({"action": "7"}, "action must be an integer"),
    ({"action": True}, "action must be an integer"),
    ({"action": 1.0}, "action must be an integer"),
    ({}, '{"action": INT}'),
    ({"action": 1, "also": 2}, '{"action": INT}'),
    (["action", 1], '{"action": INT}'),
])
def test_malformed_move_is_400(live_server, body, words):
    _, client = live_server()
    _, view = client.post("/api/games", NEW_GAME)
    status, answer = client.post(f"/api/games/{view['game_id']}/moves", body)
    assert status == 400 and words in answer["error"]


def test_illegal_move_is_400_and_changes_nothing(live_server):
    server, client = live_server()
    _, view = client.post("/api/games", NEW_GAME)
    game = server.store.games[view["game_id"]]
    legal = all_legal(view)
    assert legal == sorted(ActionEncoding(game.rules).legal_actions(game.state)), "the page is offered every legal move"
    illegal = next(a for a in range(ActionEncoding(game.rules).size) if a not in legal)
    for action in (illegal, -1, 10 ** 9, 10 ** 30, -2 ** 63):
        status, answer = client.post(f"/api/games/{view['game_id']}/moves", {"action": action})
        assert status == 400 and f"illegal action {action} for you" in answer["error"]
        assert ("not a legal move now" if action == illegal else "out of range") in answer["error"]
    _, again = client.get(f"/api/games/{view['game_id']}?since=0")
    assert again["turn"] == view["turn"] and again["seats"] == view["seats"]


def test_view_hides_other_hands_and_groups_moves_by_card(live_server):
    _, client = live_server()
    _, view = client.post("/api/games", {"num_players": 3, "opponents": ["random", "greedy"], "seat": 1, "seed": 3})
    assert [seat["hand"] is None for seat in view["seats"]] == [True, False, True]
    assert all(seat["hand_size"] > 0 for seat in view["seats"][1:])
    assert view["current"] == 1 and view["human_seat"] == 1
    assert [event["seat"] for event in view["events"]] == [0], "seat 0 moved before the human"
    hand_ranks = {card["rank"] for card in view["seats"][1]["hand"]}
    assert {group["rank"] for group in view["legal"]} <= hand_ranks
    assert len(all_legal(view)) == len(set(all_legal(view)))
    # polling: nothing new since the creation answer, everything with since=0
    _, polled = client.get(f"/api/games/{view['game_id']}")
    assert polled["events"] == []
    _, everything = client.get(f"/api/games/{view['game_id']}?since=0")
    assert everything["events"] == view["events"]
    assert client.get(f"/api/games/{view['game_id']}?since=99")[0] == 400
    assert client.get(f"/api/games/{view['game_id']}?since=-1")[0] == 400
    status, answer = client.get(f"/api/games/{view['game_id']}?since={'9' * 5000}")  # past int()'s digit limit
    assert status == 400 and "at most 18 digits" in answer["error"]


def test_full_game_reaches_final_scores_and_is_saved(live_server, tmp_path):
    server, client = live_server(save_games=tmp_path / "saved")
    status, view = client.post("/api/games", {"num_players": 3, "opponents": ["heuristic", "random"], "seed": 11})
    assert status == 201
    game = server.store.games[view["game_id"]]
    last = play_out(client, view)
    assert last["finished"] and last["current"] is None and last["legal"] == []
    assert last["scores"] == scoring.scores(game.state)
    assert last["winners"] == scoring.top_seats(last["scores"])
    assert all(seat["hand"] is not None for seat in last["seats"][:1])
    files = os.listdir(tmp_path / "saved")
    assert files == [last["saved"]]
    record = load_record(tmp_path / "saved" / files[0])
    assert record.players == ["human", "heuristic", "random"] and record.info["source"] == "web"
    states = replay_states(record)
    assert scoring.scores(states[-1]) == last["scores"]
    assert len(record.moves) == last["turn"]
    status, answer = client.post(f"/api/games/{view['game_id']}/moves", {"action": 0})
    assert status == 400 and "the game is over" in answer["error"]


def test_games_are_isolated(live_server):
    server, client = live_server()
    _, first = client.post("/api/games", NEW_GAME)
    _, second = client.post("/api/games", NEW_GAME)
    assert first["game_id"] != second["game_id"]
    assert first["seats"] == second["seats"], "the same seed deals the same cards"
    _, moved = client.post(f"/api/games/{first['game_id']}/moves", {"action": first_legal(first)})
    assert moved["turn"] > first["turn"]
    _, untouched = client.get(f"/api/games/{second['game_id']}?since=0")
    assert untouched["turn"] == second["turn"] and untouched["seats"] == second["seats"]
    assert server.store.games[first["game_id"]].state is not server.store.games[second["game_id"]].state


def test_idle_games_expire_and_the_cap_holds(live_server):
    now = [1000.0]
    store = GameStore(ttl_s=60, max_games=2, clock=lambda: now[0])
    _, client = live_server(store=store)
    _, kept = client.post("/api/games", NEW_GAME)
    _, idle = client.post("/api/games", NEW_GAME)
    status, answer = client.post("/api/games", NEW_GAME)
    assert status == 503 and "too many games" in answer["error"]
    now[0] += 50
    assert client.get(f"/api/games/{kept['game_id']}")[0] == 200, "a poll restarts the idle clock"
    now[0] += 20
    status, answer = client.get(f"/api/games/{idle['game_id']}")
    assert status == 404 and "expired" in answer["error"]
    assert client.get(f"/api/games/{kept['game_id']}")[0] == 200
    assert client.post("/api/games", NEW_GAME)[0] == 201, "room again once the idle game is gone"


# ---------------------------------------------------------------- replays


@pytest.fixture
def replay_folder(tmp_path):
    result = evaluate(["heuristic", "random", "greedy"], games=3, num_players=3, seed=5, record_moves=True)
    folder = tmp_path / "replays"
    save_game_records(result, folder)
    (tmp_path / "secret.json").write_text(json.dumps({"format": "rouba-monte-game"}))
    os.symlink(tmp_path / "secret.json", folder / "linked.json")
    (folder / "broken.json").write_text("{")
    return folder


def test_replay_listing_and_traversal_refused(live_server, replay_folder):
    _, client = live_server(replays=replay_folder)
    status, listing = client.get("/api/replays")
    assert status == 200
    assert "linked.json" not in listing["files"] and "broken.json" in listing["files"]
    assert len(listing["files"]) == 4
    for name in ("..%2Fsecret.json", "../secret.json", "%2E%2E%2Fsecret.json", "linked.json",
                 "%2Fetc%2Fpasswd", "..", "replays%2F..%2Fsecret.json"):
        status, answer = client.get(f"/api/replays/{name}")
        assert status == 404, name
        assert "error" in answer
    status, answer = client.get("/api/replays/broken.json")
    assert status == 422 and "cannot be replayed" in answer["error"]


def test_replay_steps_and_views(live_server, replay_folder):
    _, client = live_server(replays=replay_folder)
    name = next(n for n in client.get("/api/replays")[1]["files"] if n.startswith("deal"))
    record = load_record(replay_folder / name)
    states = replay_states(record)
    status, start = client.get(f"/api/replays/{name}")
    assert status == 200 and start["step"] == 0 and start["steps"] == len(record.moves)
    assert start["previous_move"] is None and start["next_move"]["seat"] == record.moves[0][0]
    for step in (1, 5, len(record.moves)):
        _, view = client.get(f"/api/replays/{name}?step={step}&view=full")
        state = states[step]
        assert view["deck_count"] == len(state.deck)
        assert [c["code"] for c in view["table"]] == state.table_cards
        assert [s["pile_size"] for s in view["seats"]] == [len(p) for p in state.piles]
        assert [[c["code"] for c in s["hand"]] for s in view["seats"]] == state.hands
    _, last = client.get(f"/api/replays/{name}?step={len(record.moves)}")
    assert last["finished"] and last["scores"] == record.scores and last["next_move"] is None
    _, seat_view = client.get(f"/api/replays/{name}?step=2&view=1")
    assert [s["hand"] is None for s in seat_view["seats"]] == [True, False, True]
    for query in (f"step={len(record.moves) + 1}", "step=-1", "step=x", "view=3", "view=everyone", "step=%C2%B2"):
        status, answer = client.get(f"/api/replays/{name}?{query}")
        assert status == 400, query


def test_no_replay_folder_is_404(live_server):
    _, client = live_server()
    status, answer = client.get("/api/replays")
    assert status == 404 and "--replays" in answer["error"]


def test_engine_legal_moves_match_grouping_for_jokers(live_server):
    """With jokers, a joker's moves are grouped under the joker rank, every named rank included."""
    server, client = live_server()
    for seed in range(40):
        _, view = client.post("/api/games", {"num_players": 2, "opponents": ["random"], "rules": "jokers", "seed": seed})
        game = server.store.games[view["game_id"]]
        assert all_legal(view) == sorted(ActionEncoding(game.rules).legal_actions(game.state))
        jokers = [g for g in view["legal"] if g["rank"] == JOKER_RANK]
        if jokers:
            kinds = {move["kind"] for move in jokers[0]["moves"]}
            assert all(kind >= engine.JOKER_KIND_OFFSET for kind in kinds)
            return
    pytest.fail("no deal in 40 gave the human a joker")


def test_checkpoints_from_a_given_folder_by_name_only(live_server, tmp_path):
    from rouba_env import preset
    from rouba_env.players.checkpoint import write_checkpoint
    from tests.players.test_checkpoint import random_tensors

    rules = preset("standard")
    write_checkpoint(tmp_path / "mine", random_tensors(rules, 2, (8,)), rules, max_players=2, hidden_sizes=(8,))
    (tmp_path / "not-a-checkpoint").mkdir()
    _, client = live_server(checkpoints=tmp_path)
    status, options = client.get("/api/options")
    assert status == 200 and "mine" in options["checkpoints"] and "2p" in options["checkpoints"]
    assert "not-a-checkpoint" not in options["checkpoints"]
    status, view = client.post("/api/games", {"num_players": 2, "opponents": ["checkpoint:mine"], "seed": 1})
    assert status == 201, view
    assert play_out(client, view)["finished"]
    for spec in ("checkpoint:not-a-checkpoint", f"checkpoint:{tmp_path / 'mine'}"):
        status, answer = client.post("/api/games", {"num_players": 2, "opponents": [spec]})
        assert status == 400 and "by name only" in answer["error"], answer


def test_the_hardest_opponent_is_offered_first_and_every_opponent_move_shows_its_think_time(live_server):
    _, client = live_server()
    _, options = client.get("/api/options")
    assert options["players"][0] == "belief_search" and "hardest" in options["player_notes"]["belief_search"]
    _, view = client.post("/api/games", {"num_players": 2, "opponents": ["belief_search:worlds=2"], "seat": 1,
                                         "seed": 3})
    last = play_out(client, view)
    _, everything = client.get(f"/api/games/{view['game_id']}?since=0")
    thinking = [event["think_seconds"] for event in everything["events"] if event["seat"] == 0]
    assert last["finished"] and thinking and all(seconds >= 0 for seconds in thinking)
    assert any(seconds > 0 for seconds in thinking), "a search takes time to choose"
    assert all(event["think_seconds"] is None for event in everything["events"] if event["seat"] == 1)


def test_the_page_calls_the_viewer_you_in_seats_and_move_texts(live_server):
    server, client = live_server()
    _, view = client.post("/api/games", {"num_players": 2, "opponents": ["greedy"], "seat": 1, "seed": 3})
    game = server.store.games[view["game_id"]]
    assert view["seats"][1]["name"] == "you" and "player 1" not in view["seats"][1]["name"]
    last = play_out(client, view)
    _, everything = client.get(f"/api/games/{view['game_id']}?since=0")
    names = {event["seat"]: event["name"] for event in everything["events"]}
    assert names[1] == "you" and names[0] == "greedy (player 0)"
    texts = " ".join(event["description"] for event in everything["events"])
    assert "player 1's" not in texts, "the viewer's pile is 'your pile'"
    steals_from_you = [event for event in everything["events"] if event["seat"] == 0 and "steals" in event["description"]]
    assert all("your pile" in event["description"] for event in steals_from_you)
    assert last["finished"] and game.record().players[1] == "human", "records keep the seat's spec"


def test_the_icon_is_served_where_browsers_look(live_server):
    server, _ = live_server()
    connection = http.client.HTTPConnection(server.server_address[0], server.server_address[1], timeout=10)
    for path in ("/favicon.ico", "/static/favicon.svg"):
        connection.request("GET", path)
        answer = connection.getresponse()
        body = answer.read()
        assert answer.status == 200 and answer.getheader("Content-Type") == "image/svg+xml" and body.startswith(b"<svg")


def test_the_replay_list_says_who_played_and_who_won(live_server, tmp_path):
    result = evaluate(["heuristic", "greedy"], games=2, seed=1, record_moves=True)
    save_game_records(result, tmp_path / "replays")
    (tmp_path / "replays" / "broken.json").write_text("{")
    _, client = live_server(replays=tmp_path / "replays")
    status, listing = client.get("/api/replays")
    assert status == 200 and len(listing["games"]) == 3 and sorted(listing["files"]) == sorted(g["file"] for g in listing["games"])
    games = {game["file"]: game for game in listing["games"]}
    assert games["broken.json"]["result"].startswith("unreadable")
    finished = [g for g in games.values() if g["players"]]
    assert len(finished) == 2 and all(g["players"] in (["heuristic", "greedy"], ["greedy", "heuristic"]) for g in finished)
    assert all(g["result"].startswith(("heuristic (player", "greedy (player", "tie")) for g in finished)
    assert all(len(g["date"]) == 16 for g in finished)


def test_huge_numbers_and_deep_nesting_are_400s(live_server):
    _, client = live_server()
    body = b'{"num_players": 2, "opponents": ["random"], "seed": ' + b"9" * 5000 + b"}"
    status, answer = client.post("/api/games", raw=body)
    assert status == 400 and "not valid JSON" in answer["error"]
    status, answer = client.post("/api/games", raw=b"[" * 100_000 + b"]" * 100_000)
    assert status in (400, 413) and "error" in answer


def test_cross_site_and_non_json_writes_are_refused(live_server):
    server, client = live_server()
    status, answer = client.post("/api/games", NEW_GAME, headers={"Origin": "https://elsewhere.example"})
    assert status == 403 and "another site" in answer["error"]
    status, answer = client.post("/api/games", raw=json.dumps(NEW_GAME).encode(), headers={"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in answer["error"]
    status, _ = client.post("/api/games", NEW_GAME, headers={"Origin": server.url.rstrip("/")})
    assert status == 201, "the server's own page may write"
    assert not server.store.games or len(server.store.games) == 1


def test_finished_games_make_room_under_the_cap(live_server):
    server, client = live_server(store=GameStore(max_games=1))
    _, first = client.post("/api/games", NEW_GAME)
    assert client.post("/api/games", NEW_GAME)[0] == 503, "the cap holds while the game is in play"
    play_out(client, first)
    status, second = client.post("/api/games", NEW_GAME)
    assert status == 201 and list(server.store.games) == [second["game_id"]]


def test_idle_and_half_sent_connections_are_closed(live_server, monkeypatch):
    import socket

    from rouba_env.web.server import RequestHandler

    monkeypatch.setattr(RequestHandler, "timeout", 1)  # the same mechanism, a shorter wait
    server, _ = live_server()
    for start in (b"", b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"):
        connection = socket.create_connection(server.server_address[:2], timeout=30)
        connection.sendall(start)
        assert connection.recv(1024) == b"", "the server closes the connection (a recv timeout of 30 s fails here)"
        connection.close()


def test_an_opponent_that_plays_illegally_is_named_and_the_save_folder_may_fail(live_server, tmp_path):
    from rouba_env.players.checkpoint import write_checkpoint
    from rouba_env.rules.config import preset
    from tests.players.helpers import random_tensors

    rules = preset("standard")
    tensors = random_tensors(rules, 2, (8,))
    tensors["policy_head.bias"][:] = -3e38  # finite weights whose logits overflow: must still play legally
    folder = tmp_path / "nets"
    write_checkpoint(folder / "overflow", tensors, rules, max_players=2, hidden_sizes=(8,))
    blocked = tmp_path / "saved"
    blocked.write_text("a file where the folder should be")
    server, client = live_server(store=GameStore(save_folder=blocked, checkpoint_folder=folder))
    status, view = client.post("/api/games", {"num_players": 2, "opponents": ["checkpoint:overflow"], "seed": 1})
    assert status == 201, view
    last = play_out(client, view)
    assert last["finished"] and last["saved"] is None and "cannot write" in last["save_error"]


def test_a_deeply_nested_replay_file_is_a_clear_error_not_a_500(live_server, tmp_path):
    folder = tmp_path / "replays"
    folder.mkdir()
    (folder / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    _, client = live_server(replays=folder)
    status, listing = client.get("/api/replays")
    assert status == 200 and listing["games"][0]["result"].startswith("unreadable: deep.json is nested too deeply")
    status, answer = client.get("/api/replays/deep.json?step=0")
    assert status == 422 and "nested too deeply" in answer["error"]


def test_openspiel_opponents_are_capped_like_the_searchers(live_server):
    pytest.importorskip("pyspiel")
    from rouba_env.web.games import WEB_BUDGETS

    _, client = live_server()
    status, answer = client.post("/api/games", {"num_players": 2, "opponents": ["openspiel:mcts,simulations=100000"]})
    assert status == 400 and f"simulations may be at most {WEB_BUDGETS['simulations']}" in answer["error"]
    status, view = client.post("/api/games", {"num_players": 2, "seed": 3,
                                              "opponents": [f"openspiel:ismcts,simulations={WEB_BUDGETS['simulations']}"]})
    assert status == 201, view


def test_the_limits_page_lists_the_browser_budgets_as_the_code_has_them():
    from pathlib import Path

    from rouba_env.web.games import WEB_BUDGETS

    text = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| an opponent's search budgets"))
    assert row == "| an opponent's search budgets | " + ", ".join(
        f"`{name}` <= {value}" for name, value in WEB_BUDGETS.items()) + " |"


def test_a_burst_of_clients_gets_http_answers_not_resets(live_server):
    import concurrent.futures

    _, client = live_server(store=GameStore(max_games=8))

    def create(_):
        return client.post("/api/games", {"num_players": 2, "opponents": ["greedy"]})[0]

    with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:
        statuses = list(pool.map(create, range(64)))
    assert set(statuses) <= {201, 503} and statuses.count(201) >= 1, statuses
    status, view = client.post("/api/games", {"num_players": 2, "opponents": ["greedy"], "seed": 2})
    if status == 503:  # the store is full of unfinished games: the cap holds
        return
    action = first_legal(view)

    def move(_):
        return client.post(f"/api/games/{view['game_id']}/moves", {"action": action})[0]

    with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:
        statuses = list(pool.map(move, range(64)))
    assert set(statuses) <= {200, 400} and statuses.count(200) == 1, statuses


def test_a_timed_out_connection_is_one_line_and_no_traceback(live_server, monkeypatch, capfd):
    import socket

    from rouba_env.web.server import RequestHandler

    monkeypatch.setattr(RequestHandler, "timeout", 0.5)
    server, _ = live_server(quiet=False)
    connection = socket.create_connection(server.server_address[:2], timeout=30)
    connection.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Content-Length: 100\r\n\r\n{")
    assert connection.recv(1024) == b""
    connection.close()
    import time

    time.sleep(0.3)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "closed connection from 127.0.0.1: TimeoutError" in err


def test_errors_name_the_checkpoint_the_page_sent_not_where_the_server_keeps_it(live_server):
    _, client = live_server()
    status, answer = client.post("/api/games", {"num_players": 3, "opponents": ["checkpoint:2p", "random"]})
    assert status == 400 and "checkpoint '2p' plays at most 2 players" in answer["error"], answer
    assert "/checkpoints" not in answer["error"]
    status, answer = client.post("/api/games", {"num_players": 2, "opponents": ["checkpoint:2p,bogus=1"]})
    assert status == 400 and "['bogus']" in answer["error"] and "/checkpoints" not in answer["error"], answer


def test_replay_records_have_a_size_limit_and_an_integer_version(live_server, tmp_path):
    from rouba_env.evaluation.records import MAX_RECORD_BYTES

    folder = tmp_path / "replays"
    folder.mkdir()
    with (folder / "huge.json").open("wb") as file:
        file.truncate(MAX_RECORD_BYTES + 1)
    result = evaluate(["random", "greedy"], games=2, seed=0, record_moves=True)
    save_game_records(result, folder)
    good = sorted(p for p in folder.iterdir() if p.name != "huge.json")[0]
    data = json.loads(good.read_text())
    data["version"] = True
    (folder / "bool_version.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=f"at most {MAX_RECORD_BYTES}"):
        load_record(folder / "huge.json")
    with pytest.raises(ValueError, match="format/version"):
        load_record(folder / "bool_version.json")
    _, client = live_server(replays=folder)
    status, listing = client.get("/api/replays")
    unreadable = {game["file"] for game in listing["games"] if game["result"].startswith("unreadable")}
    assert status == 200 and unreadable == {"huge.json", "bool_version.json"}


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS"])
def test_other_methods_get_a_json_405(live_server, method):
    _, client = live_server()
    status, answer = client.call(method, "/api/games")
    assert status == 405 and f"method {method} is not served here" in answer["error"]


def test_the_server_plays_a_throwaway_game_before_it_answers_and_keeps_nothing_of_it(monkeypatch):
    """make_server warms the engine up with one whole game (so no request waits on the compiler); the game
    is neither stored nor saved."""
    from rouba_env.web import games
    from rouba_env.web.server import make_server

    played = []
    original = games.WebGame.play_human
    monkeypatch.setattr(games.WebGame, "play_human", lambda self, body: played.append(self.single_game.over)
                        or original(self, body))
    server = make_server(port=0, quiet=True)
    try:
        assert played and server.store.games == {}
    finally:
        server.server_close()
