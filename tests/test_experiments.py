"""The experiments are a record: each script of scripts/runs/ is named by what it makes, every row of it runs on
today's code (and gives the settings its kept run was trained with), scripts/results/RUNS.md lists every result
once, with the row or page that makes it and the commit it came from, and every measurement script in scripts/
is one a page or a run script cites, none a copy of a console command."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_SCRIPTS = ROOT / "scripts" / "runs"
RESULTS = ROOT / "scripts" / "results"
INDEX = RESULTS / "RUNS.md"
OTHER_WORLDS = {"local_best_responses.sh": "8"}
"""Scripts whose rows also write elsewhere at another WORLDS (``scripts/results/lbr_8worlds/``)."""
RUNTIME_SETTINGS = {"run_dir", "device", "torch_threads", "progress", "ray"}
"""Settings that belong to the machine or the folder a run is made in, not to its recipe."""
FROM_THE_START = {"max_players", "critic", "architecture", "hidden_sizes"}
"""Settings a run started from a checkpoint (``--start-from``) takes from that checkpoint's network."""


def scripts() -> list[str]:
    return sorted(path.name for path in RUN_SCRIPTS.glob("*.sh"))


@cache
def rows(script: str, worlds: str = "") -> dict[str, list[str]]:
    """Row name -> the command it runs, as the script prints them with ``ROWS_ONLY=1`` (running nothing).

    A script that does not read ROWS_ONLY is not started (it would run its rows), and none finds this
    environment's commands on its PATH (a row started by mistake ends at once)."""
    assert "ROWS_ONLY" in (RUN_SCRIPTS / script).read_text(), f"{script}: ROWS_ONLY=1 lists its rows"
    commands = str(Path(sys.executable).parent)
    path = os.pathsep.join(folder for folder in os.environ.get("PATH", "").split(os.pathsep) if folder != commands)
    environment = {**os.environ, "PATH": path, "ROWS_ONLY": "1", **({"WORLDS": worlds} if worlds else {})}
    listing = subprocess.run(["bash", str(RUN_SCRIPTS / script)], capture_output=True, text=True, timeout=60,
                             env=environment)
    assert listing.returncode == 0, f"{script}: {listing.stderr}"
    found = {}
    for line in listing.stdout.splitlines():
        name, _, command = line.partition("\t")
        assert name not in found and command, f"{script}: {line!r}"
        found[name] = command.split()
    assert found, f"{script} prints no rows"
    return found


def output_of(command: list[str]) -> str:
    """Where a row's command leaves its result: its run folder or its JSON file, relative to the repository."""
    flag = "--run-dir" if "--run-dir" in command else "--json"
    return command[command.index(flag) + 1]


def made_by_rows() -> dict[str, str]:
    """Result path -> the row that makes it (``SCRIPT ROW``, ``WORLDS=8 SCRIPT ROW`` for the other worlds)."""
    made = {}
    for script in scripts():
        for worlds in ("",) + ((OTHER_WORLDS[script],) if script in OTHER_WORLDS else ()):
            for name, command in rows(script, worlds).items():
                output = output_of(command)
                assert output not in made, f"{made.get(output)} and {script} {name} both write {output}"
                made[output] = f"{'WORLDS=' + worlds + ' ' if worlds else ''}{script} {name}"
    return made


def test_run_scripts_are_named_by_what_they_make_and_say_how_to_list_their_rows():
    for script in scripts():
        assert not re.search(r"issue|queue|\d{2,}", script), f"{script}: name it by what it makes"
        text = (RUN_SCRIPTS / script).read_text()
        assert "Usage: " in text and f"scripts/runs/{script}" in text, f"{script}: its usage names it"
        assert "ROWS_ONLY=1" in text, f"{script}: ROWS_ONLY=1 lists its rows"


def missing_policy_of_a_row(error: str, made: dict[str, str]) -> bool:
    """True when ``error`` is a checkpoint spec naming a run folder's policy that another row makes (a run whose
    policy git does not keep: that row runs first)."""
    found = re.search(r"no checkpoint at '([^']+)/policy'", error)
    return bool(found) and found.group(1) in made and not (ROOT / found.group(1) / "policy").exists()


def refusal(command: list[str], made: dict[str, str]) -> str | None:
    """Why today's code refuses a row's command (None when it takes it); nothing is trained or measured."""
    from rouba_env.players.registry import make_policy
    from rouba_env.rules.config import make_rules

    program, *argv = command
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            if program == "rouba-train":
                from rouba_training.cli import config_from_args

                config_from_args(argv)
            elif program == "rouba-exploitability":
                from rouba_env.cli.exploitability import parse_args

                args = parse_args(argv)
                rules = make_rules(args.rules)
                for spec in args.players:
                    make_policy(spec, rules)
            elif program == "python" and argv[0] == "scripts/solver_scale.py":
                spec = importlib.util.spec_from_file_location("solver_scale", ROOT / argv[0])
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                module.parse_args(argv[1:])
            else:
                return f"no check for the program {program!r}: teach tests/test_experiments.py its parser"
    except SystemExit as error:  # argparse and tyro: their message went to standard error
        return f"exit {error.code}: {said.getvalue().strip()[-500:]}"
    except (ValueError, OSError) as error:
        return None if missing_policy_of_a_row(str(error), made) else str(error)
    return None


@pytest.mark.parametrize("script", scripts())
def test_every_row_is_a_command_todays_code_takes(script, monkeypatch):
    """Rows that only differ in their seed or folder are parsed once (tyro takes a tenth of a second a row)."""
    monkeypatch.chdir(ROOT)  # run folders and checkpoints are named from the repository's root
    made = made_by_rows()
    checked: set[tuple[str, ...]] = set()
    refused = {}
    for name, command in rows(script).items():
        key = tuple(re.sub(r"(--run-dir|--seed) \S+", r"\1", " ".join(command)).split())
        if key in checked:
            continue
        checked.add(key)
        why = refusal(command, made)
        if why:
            refused[name] = why
    assert refused == {}, f"{script}: rows today's code refuses (remove them; their results are kept, marked " \
                          f"in scripts/results/RUNS.md): {refused}"


def test_rows_give_the_settings_saved_with_their_runs(monkeypatch):
    """Where a row's run folder keeps its policy, the settings it was trained with are saved beside it: today's
    trainer, given the row, makes those settings (a changed default or a changed row would show here)."""
    from rouba_training.cli import config_from_args

    monkeypatch.chdir(ROOT)
    compared = 0
    for script in scripts():
        for name, (program, *argv) in rows(script).items():
            metadata = ROOT / output_of([program, *argv]) / "policy" / "metadata.json"
            if program != "rouba-train" or not metadata.is_file():
                continue
            saved = json.loads(metadata.read_text()).get("train_config")
            if not saved:
                continue
            with contextlib.redirect_stderr(io.StringIO()):
                now = config_from_args(argv)[0].to_dict()
            ignored = RUNTIME_SETTINGS | (FROM_THE_START if "--start-from" in argv else set())
            differ = {key: (saved[key], now[key]) for key in saved.keys() & now.keys() - ignored
                      if json.loads(json.dumps(now[key])) != saved[key]}
            assert differ == {}, f"{script} {name}: (saved, today's) {differ}"
            compared += 1
    assert compared >= 10


def index_rows() -> list[list[str]]:
    """The cells of RUNS.md's table, one list per result."""
    table = [line for line in INDEX.read_text().splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table]


def results_on_disk() -> set[str]:
    """Every result the index must list, relative to scripts/results/."""
    found = {f"{folder}/{path.name}" for folder in ("runs", "abr") for path in (RESULTS / folder).iterdir()
             if path.is_dir()}
    found |= {f"{folder}/{path.name}" for folder in ("lbr", "lbr_8worlds") for path in (RESULTS / folder).iterdir()}
    found |= {str(Path(output).relative_to("scripts/results")) for output in made_by_rows()
              if output.endswith(".json") and (ROOT / output).exists()}
    return found


def test_the_results_index_lists_every_result_once_and_nothing_else():
    listed = [cells[0].strip("`") for cells in index_rows()]
    assert len(listed) == len(set(listed)), "a result listed twice"
    on_disk = results_on_disk()
    assert sorted(on_disk - set(listed)) == [], "results missing from scripts/results/RUNS.md"
    assert sorted(set(listed) - on_disk) == [], "results in scripts/results/RUNS.md that are not there"


def test_each_listed_result_names_what_makes_it_and_a_commit():
    made = made_by_rows()
    history = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], capture_output=True, text=True,
                             cwd=ROOT)
    full_history = history.returncode == 0 and history.stdout.strip() == "false"
    for result, by, commit, note in index_rows():
        path = f"scripts/results/{result.strip('`')}"
        if path in made:
            assert by == f"`{made[path]}`", f"{result}: made by the row `{made[path]}`"
        else:
            page = re.fullmatch(r"the command in `([^`]+)`.*", by)
            assert page and (ROOT / page.group(1)).is_file(), f"{result}: name a script row or the page of its command"
            stem = re.sub(r"_seed\d+$", "", Path(path).name)
            assert stem in (ROOT / page.group(1)).read_text(), f"{result}: {page.group(1)} does not name it"
        assert re.fullmatch(r"[0-9a-f]{7,40}", commit), f"{result}: commit {commit!r}"
        if note:
            assert path not in made, f"{result}: a result of today's rows is not from an earlier version"
            assert re.fullmatch(r"earlier version: today's trainer refuses `--[a-z-]+`", note), note
    if full_history:  # every commit named is one of this repository's
        commits = sorted({cells[2] for cells in index_rows()})
        kinds = subprocess.run(["git", "cat-file", "--batch-check=%(objecttype)"], input="\n".join(commits) + "\n",
                               capture_output=True, text=True, cwd=ROOT, check=True).stdout.split()
        assert dict(zip(commits, kinds)) == dict.fromkeys(commits, "commit")


def test_results_from_an_earlier_version_name_a_setting_that_is_refused():
    from rouba_training.cli import refuse_removed_flags

    marked = [note.split("`")[1] for *_, note in index_rows() if note]
    assert marked, "the runs of removed settings are marked"
    for flag in marked:
        with pytest.raises(ValueError, match="was removed"):
            refuse_removed_flags([flag])


CITING = ("README.md", "docs/**/*.md", "scripts/results/*.md", "scripts/runs/*.sh", "scripts/*.py")
"""Where a measurement script is cited for what it measured: the pages, the results' pages and the scripts (its
own test, which runs it, and the changelog's history do not count)."""


def test_every_measurement_script_is_cited_by_a_page_or_another_script():
    texts = {path: path.read_text() for pattern in CITING for path in ROOT.glob(pattern)}
    uncited = [script.name for script in sorted((ROOT / "scripts").glob("*.py"))
               if not any(f"scripts/{script.name}" in text for path, text in texts.items() if path != script)]
    assert uncited == [], f"scripts no page cites (delete them; git keeps them, scripts/results/ their figures): {uncited}"


def test_no_script_is_a_copy_of_a_console_command():
    """A script that only calls a console command's function repeats the command: use the command."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    commands = {tuple(target.split(":")): name for name, target in pyproject["project"]["scripts"].items()}
    wrappers = {}
    for script in sorted((ROOT / "scripts").glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text())):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (node.module, alias.name) in commands:
                        wrappers[script.name] = commands[node.module, alias.name]
    assert wrappers == {}, f"scripts that repeat a console command: {wrappers}"


PAGES = ("README.md", "docs/**/*.md", "scripts/results/*.md", "scripts/*.py", "tests/*.py")
"""Where the run scripts are cited with the rows to run."""


def cited_rows(text: str):
    """(script, row) for each row name a page gives after ``scripts/runs/SCRIPT`` in one code span or line."""
    spans = re.findall(r"`([^`]*scripts/runs/[^`]*)`", text)
    spans += [line.split("#")[0] for line in text.splitlines()
              if line.lstrip().startswith(("scripts/runs/", "bash scripts/runs/", "WORLDS="))]
    for span in spans:
        for script, after in re.findall(r"scripts/runs/([a-z_]+\.sh)((?:\s+[^\s`]+)*)", span):
            yield script, [token for token in after.split() if re.fullmatch(r"[a-z][a-z0-9.-]*_[a-z0-9_.-]+", token)]


def test_the_rows_the_pages_name_are_rows_of_their_scripts():
    named = 0
    for pattern in PAGES:
        for page in ROOT.glob(pattern):
            for script, names in cited_rows(page.read_text()):
                assert (RUN_SCRIPTS / script).is_file(), f"{page.name} names scripts/runs/{script}, which is not there"
                missing = [name for name in names if name not in rows(script)]
                assert missing == [], f"{page.name}: rows of {script} that are not there: {missing}"
                named += len(names)
    assert named > 20


def test_the_row_check_refuses_what_todays_code_refuses(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert refusal(["rouba-train", "--rules", "mini", "--seed", "2"], {}) is None
    assert "was removed" in refusal(["rouba-train", "--rules", "mini", "--play-average"], {})
    assert "given 2 times" in refusal(["rouba-train", "--config", "pool_2p", "--config", "rank_mixed"], {})
    assert refusal(["rouba-train", "--no-such-flag", "1"], {}).startswith("exit 2")
    assert "unknown player" in refusal(["rouba-train", "--best-response", "wizard"], {})
    made = made_by_rows()  # a policy git does not keep, which another row makes, is no refusal; another is
    assert missing_policy_of_a_row("no checkpoint at 'scripts/results/runs/full_pool_2p/policy': not a folder", made)
    assert not missing_policy_of_a_row("no checkpoint at 'scripts/results/runs/none/policy': not a folder", made)
    assert refusal(["rouba-exploitability", "--rules", "mini", "--players", "wizard"], {})
    assert refusal(["python", "scripts/solver_scale.py", "--cfr", "-1"], {}).startswith("exit 2")
