"""Game records: written by evaluation, replayed exactly, bad ones refused."""

import json

import pytest

from rouba_env.evaluation.duplicate import evaluate
from rouba_env.evaluation.records import (
    ReplayRecord,
    load_record,
    record_files,
    replay_states,
    save_game_records,
    write_record,
)
from rouba_env.rules import scoring



def test_recording_moves_changes_no_result():
    plain = evaluate(["heuristic", "random"], games=4, seed=2)
    recorded = evaluate(["heuristic", "random"], games=4, seed=2, record_moves=True)
    assert [(r.key, r.seats, r.scores) for r in plain.records] == [(r.key, r.seats, r.scores) for r in recorded.records]
    assert all(r.moves is None for r in plain.records) and all(r.moves for r in recorded.records)
    assert plain.to_dict(include_timing=False) == recorded.to_dict(include_timing=False)


def test_saved_evaluation_games_replay_exactly(tmp_path):
    result = evaluate(["greedy", "random", "heuristic"], games=3, num_players=3, rules="take_all", seed=4,
                      record_moves=True)
    paths = save_game_records(result, tmp_path)
    assert [p.name for p in paths] == record_files(tmp_path) and len(paths) == 3
    assert not list(tmp_path.glob("*.tmp"))
    for path, game in zip(paths, result.records):
        record = load_record(path)
        assert record.rules == result.rules and record.deal_seed == game.deal_seed
        assert record.players == [result.player_specs[p] for p in game.seats]
        states = replay_states(record)
        assert scoring.scores(states[-1]) == list(game.scores) == record.scores
        assert len(states) == len(record.moves) + 1


def test_records_without_moves_cannot_be_saved(tmp_path):
    result = evaluate(["greedy", "random"], games=2, seed=0)
    with pytest.raises(ValueError, match="record_moves=True"):
        save_game_records(result, tmp_path)
    with pytest.raises(ValueError, match="ReplayRecord"):
        save_game_records([{"not": "a record"}], tmp_path)


def test_round_trip_and_tampering_is_caught(tmp_path):
    result = evaluate(["greedy", "random"], games=2, seed=1, record_moves=True)
    record = load_record(save_game_records(result, tmp_path)[0])
    again = load_record(write_record(record, tmp_path / "again.json"))
    assert again == record
    data = record.to_dict()
    wrong_seat = json.loads(json.dumps(data))
    wrong_seat["moves"][0][0] = 1 - wrong_seat["moves"][0][0]
    with pytest.raises(ValueError, match="move 0 is by seat"):
        replay_states(ReplayRecord.from_dict(wrong_seat))
    wrong_scores = json.loads(json.dumps(data))
    wrong_scores["scores"][0] += 1
    with pytest.raises(ValueError, match="differ from the replayed"):
        replay_states(ReplayRecord.from_dict(wrong_scores))
    illegal = json.loads(json.dumps(data))
    illegal["moves"][0][1] = 10 ** 6
    with pytest.raises(ValueError, match="move 0"):
        replay_states(ReplayRecord.from_dict(illegal))
    for field, value, words in (("format", "other", "format/version"), ("deal_seed", -1, "deal_seed"),
                                ("players", ["a"], "players"), ("moves", [[0]], "moves"),
                                ("scores", [1], "scores"), ("rules", {"colour": 1}, "colour")):
        with pytest.raises(ValueError, match=words):
            ReplayRecord.from_dict({**data, field: value})


def test_the_evaluate_command_saves_games(tmp_path, capsys):
    from rouba_env.cli.evaluate import main as evaluate_main

    folder = tmp_path / "games"
    code = evaluate_main(["--players", "greedy", "random", "--games", "2", "--seed", "3", "--no-progress",
                        "--json", str(tmp_path / "result.json"), "--save-games", str(folder)])
    assert code == 0
    assert f"wrote 2 game records to {folder}" in capsys.readouterr().out
    names = record_files(folder)
    assert len(names) == 2
    scores = json.loads((tmp_path / "result.json").read_text())["game_records"]
    for name, row in zip(names, scores):
        assert replay_states(load_record(folder / name)) and load_record(folder / name).scores == row[4]


def test_evaluate_writes_no_file_unless_asked(tmp_path, monkeypatch, capsys):
    """Without --json or --save-games the results go to the terminal only: nothing lands in the folder."""
    from rouba_env.cli.evaluate import main

    monkeypatch.chdir(tmp_path)
    assert main(["--players", "greedy", "random", "--games", "2", "--no-progress"]) == 0
    assert "greedy" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
