"""Game records of one folder, stepped through from any seat's view or the full state.

Only names listed from that folder (regular ``*.json`` files, no links) can be
opened: a name is looked up in the listing, never joined to the folder as
given, so ``../`` or absolute paths cannot reach anything else.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from rouba_env.encoding.actions import ActionEncoding, describe_move
from rouba_env.evaluation.records import load_record, record_files, replay_states
from rouba_env.web.games import ApiError, bad_request
from rouba_env.web.views import state_view

FULL_VIEW = "full"
MAX_LISTED = 2000
"""Most records the replay list describes (each is read to say who played and who won)."""
NUMBER_PATTERN = re.compile(r"[0-9]{1,9}")


class ReplayLibrary:
    """The records in ``folder`` (listed afresh on each request, so new games show up)."""

    def __init__(self, folder: "str | Path"):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ValueError(f"replay folder {str(self.folder)!r} is not a folder")

    def names(self) -> list[str]:
        return record_files(self.folder)

    def summaries(self) -> list[dict]:
        """What the page lists for each record: players, result and date (newest records first).

        A record that cannot be read is listed with its error, so that the folder's problems show.
        """
        listed = []
        for name in self.names()[:MAX_LISTED]:
            path = self.folder / name
            entry = {"file": name, "date": datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")}
            try:
                record = load_record(path)
            except (ValueError, OSError) as error:
                listed.append({**entry, "players": [], "result": f"unreadable: {error}"})
                continue
            if record.scores is None:
                result = "unfinished"
            else:
                top = [seat for seat, points in enumerate(record.scores) if points == max(record.scores)]
                scores = "-".join(map(str, record.scores))
                result = (f"{record.players[top[0]]} (player {top[0]}) won {scores}" if len(top) == 1
                          else f"tie {scores}")
            listed.append({**entry, "players": list(record.players), "result": result})
        return sorted(listed, key=lambda entry: entry["date"], reverse=True)

    def step(self, name: str, step: str | None, view: str | None) -> dict:
        """The view after ``step`` moves of record ``name`` from seat ``view`` (a number) or ``full``."""
        listed = self.names()
        if name not in listed:
            raise ApiError(404, f"no game record named {name!r} in the replay folder")
        try:
            record = load_record(self.folder / listed[listed.index(name)])
            states = replay_states(record)
        except (ValueError, OSError) as error:
            raise ApiError(422, f"record {name!r} cannot be replayed: {error}") from None
        steps = len(record.moves)
        number = _parse_int("step", step if step is not None else "0", 0, steps)
        viewer = None
        if view not in (None, FULL_VIEW):
            viewer = _parse_int("view", view, 0, record.rules.num_players - 1)
        names = [f"{player} (player {seat})" for seat, player in enumerate(record.players)]
        result = state_view(states[number], names, viewer)
        encoding = ActionEncoding(record.rules)

        def words(index: int) -> dict | None:
            if not 0 <= index < steps:
                return None
            seat, action = record.moves[index]
            return {"seat": seat, "name": names[seat], "action": action,
                    "description": describe_move(states[index], encoding.decode(action), seat)}

        result.update({
            "name": name,
            "players": record.players,
            "rules": record.rules.to_dict(),
            "step": number,
            "steps": steps,
            "previous_move": words(number - 1),
            "next_move": words(number),
            "final_scores": record.scores,
            "info": record.info,
        })
        return result


def _parse_int(field: str, text: str, low: int, high: int) -> int:
    if not isinstance(text, str) or not NUMBER_PATTERN.fullmatch(text) or not low <= int(text) <= high:
        allowed = f"{low}..{high}" + (" or 'full'" if field == "view" else "")
        raise bad_request(f"{field} must be in {allowed}, got {text!r}")
    return int(text)
